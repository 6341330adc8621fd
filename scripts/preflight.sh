#!/usr/bin/env bash
# The first step of the README's test command: checks that the machine has what the tests
# need, and says in one line per missing thing what it is for and how to get it, before
# anything is built. What the tests can install themselves (Mosquitto from Debian when run as
# root, pinned npm and PyPI peers into target/peers/) is installed on first use.
set -euo pipefail

missing=()
need() { # need <command> <why> <how to get it>
    command -v "$1" >/dev/null 2>&1 || missing+=("$1 (needed for $2): $3")
}
need cargo "everything" "install Rust 1.95 with rustup (https://rustup.rs)"
if command -v cargo >/dev/null 2>&1; then
    cargo fmt --version >/dev/null 2>&1 ||
        missing+=("rustfmt (needed for scripts/lint.sh's format check): rustup component add rustfmt")
    cargo clippy --version >/dev/null 2>&1 ||
        missing+=("clippy (needed for scripts/lint.sh): rustup component add clippy")
fi
need python3 "the fake MCP servers and the Python SDK peers" "apt-get install python3 python3-venv"
need node "the TypeScript SDK peers (server-everything, inspector)" "apt-get install nodejs"
need npm "installing the TypeScript SDK peers" "apt-get install npm"
need openssl "the TLS broker tests' certificates" "apt-get install openssl"
need setpriv "servers that die with a killed host (util-linux)" "apt-get install util-linux"
need g++ "compiling llama.cpp (llama-cpp-python) for the real model-server tests, once per machine" "apt-get install g++"
if command -v python3 >/dev/null 2>&1 && ! python3 -c 'import venv, ensurepip' 2>/dev/null; then
    missing+=("python3 venv/ensurepip (needed for the Python SDK peers): apt-get install python3-venv")
fi
if ! command -v mosquitto >/dev/null 2>&1 && ! [ -x /usr/sbin/mosquitto ]; then
    if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null 2>&1; then
        missing+=("mosquitto (needed for the real-broker tests; installed automatically only as root on Debian): sudo apt-get install mosquitto")
    fi
fi
if ! [ -x /usr/bin/chromium ] || ! [ -x /usr/bin/chromedriver ]; then
    if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null 2>&1; then
        missing+=("chromium and chromedriver (needed for the OAuth pages' browser tests; installed automatically only as root on Debian): sudo apt-get install chromium chromium-driver")
    fi
fi
if [ ${#missing[@]} -gt 0 ]; then
    echo "scripts/preflight.sh: the tests cannot run on this machine yet; missing:" >&2
    for line in "${missing[@]}"; do
        echo "  - $line" >&2
    done
    exit 1
fi

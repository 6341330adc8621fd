#!/usr/bin/env bash
# The second step of the README's test command: formatting, clippy and the docs, each with
# warnings as errors, so CI holds them as it holds the tests.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo fmt --all --check
cargo clippy --workspace --all-targets --locked -- -D warnings
RUSTDOCFLAGS=-Dwarnings cargo doc --workspace --no-deps --locked
# The library a host embeds, alone and with its opt-in layers: each builds without warnings
# (an import only the CLI uses shows here, not in the workspace build above).
cargo clippy -p mcp-client --no-default-features --lib --examples --locked -- -D warnings
cargo clippy -p mcp-client --no-default-features --features providers,history --lib --locked -- -D warnings

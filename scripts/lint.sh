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
cargo clippy -p mcp-client --no-default-features --features http --lib --locked -- -D warnings
cargo clippy -p mcp-client --no-default-features --features oauth --lib --locked -- -D warnings
# The shape the sources keep: no import circle between files, no source file past 600 lines
# (tests aside); clippy's too_many_lines (clippy.toml) holds functions to 120.
python3 scripts/import-circles.py common/src zwave-mcp-server/src mcp-client/src protocol-tests/src test-support/src
long=$(find common zwave-mcp-server mcp-client protocol-tests test-support -name '*.rs' \
    -not -path '*/tests/*' -not -path '*/target/*' -exec wc -l {} + | awk '$2 != "total" && $1 > 600')
if [ -n "$long" ]; then
    echo "source files over 600 lines (cut them along their concerns):"
    echo "$long"
    exit 1
fi

#!/usr/bin/env bash
# Runs every fuzz target (fuzz/fuzz_targets/) under libFuzzer for a bounded time each:
#   bash scripts/fuzz.sh            60 s per target
#   bash scripts/fuzz.sh 600        10 minutes per target
#   bash scripts/fuzz.sh 30 math_eval   one target
# Seeds come from the fixtures (gateway captures, MCP tool lists, demo names); the corpus
# grows in target/fuzz-corpus/<target>/, crashes land in fuzz/artifacts/<target>/.
# cargo fuzz needs nightly-only compiler flags: the stable toolchain accepts them with
# RUSTC_BOOTSTRAP=1, so no second toolchain is needed.
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=${1:-60}
shift || true
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
    targets=(stdout_line normalizer math_eval get_nodes payloads device_name)
fi

if ! cargo fuzz --version >/dev/null 2>&1; then
    echo "scripts/fuzz.sh: installing cargo-fuzz" >&2
    cargo install cargo-fuzz --locked
fi
export RUSTC_BOOTSTRAP=1

seed() { # seed <target> <file>...
    local dir="target/fuzz-corpus/$1"
    shift
    mkdir -p "$dir"
    for file in "$@"; do
        [ -f "$file" ] && cp "$file" "$dir/seed-$(basename "$file")"
    done
    return 0
}
seed_text() { # seed_text <target> <name> <text>
    mkdir -p "target/fuzz-corpus/$1"
    printf '%s' "$3" > "target/fuzz-corpus/$1/seed-$2"
}

captures=fixtures/zwave-js-ui/captures
seed stdout_line fixtures/mcp/zwave-tools.json fixtures/llm/*/*.json
seed_text stdout_line initialize '{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{"listChanged":true}},"serverInfo":{"name":"fake","version":"1.0"}}}
{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":2,"total":3,"message":"step 2"}}
'
seed get_nodes "$captures"/*getNodes*.response.raw.json
seed payloads "$captures"/*
seed_text device_name exact 'Living Room Light'
seed_text device_name located 'Kitchen Switch One'
seed_text device_name node 'Node 3'
seed_text normalizer zwave '[{"type":"object","properties":{"deviceName":{},"action":{},"level":{}}},{"device_name":"Switch One","command":"on","brightness":40}]'
seed_text math_eval functions 'sqrt(16) * tan(pi / 4) + 2^10 % 7'

for target in "${targets[@]}"; do
    echo "== $target: ${seconds}s" >&2
    cargo fuzz run --fuzz-dir fuzz "$target" "target/fuzz-corpus/$target" -- \
        -max_total_time="$seconds" -max_len=65536 -timeout=10 -rss_limit_mb=2048
done
echo "scripts/fuzz.sh: no crash in ${#targets[@]} target(s), ${seconds}s each" >&2

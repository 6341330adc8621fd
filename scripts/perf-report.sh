#!/usr/bin/env bash
# Regenerates the performance figures in README.md (the block between the perf-report
# markers) on this machine, and names the machine in it. Runs, in order: the peer comparison
# pinned to one CPU and on every CPU (cargo bench --bench peers), the scale table
# (scripts/scale.py), the backends table (scripts/backends.py), the storm table
# (scripts/storm.py), the latency of resource updates (cargo bench --bench resource_updates)
# and the cache micro benchmarks
# (divan). Takes about 10 minutes; needs what the test command installs (Mosquitto, the peers).
#   bash scripts/perf-report.sh            # rewrite README.md's block
#   bash scripts/perf-report.sh --print    # only print the block
set -euo pipefail
cd "$(dirname "$0")/.."
mode=${1:-}
cargo build --release -q --workspace --bins
mkdir -p target/perf
block=target/perf/report.md

machine() {
    local cpu mem
    cpu=$(awk -F': ' '/^model name/ {print $2; exit}' /proc/cpuinfo)
    mem=$(awk '/^MemTotal/ {printf "%.0f GiB", $2 / 1048576}' /proc/meminfo)
    echo "${cpu:-unknown CPU}, $(nproc) CPUs, $mem, Linux $(uname -r), $(rustc --version | cut -d' ' -f1-2)"
}

peers() { # peers [taskset prefix...]: the bench's tables without its CPU line
    "$@" cargo bench -q -p protocol-tests --bench peers 2>/dev/null | sed '/^CPUs:/{N;d}'
}

{
    echo "<!-- perf-report:start: written by scripts/perf-report.sh; change the script, not this block -->"
    echo "Measured on $(date -u +%F): $(machine)."
    echo
    echo "**On one CPU** (\`taskset -c 0\`: the driver and every server or client share CPU 0, so"
    echo "a figure is the software's own cost, repeatable to a few per cent):"
    echo
    peers taskset -c 0
    echo
    echo "**On every CPU** (as a host runs them; on a virtual machine a round trip between two"
    echo "CPUs waits for the sleeping one to wake, often 40–80 µs, so these are bimodal from run"
    echo "to run: compare rows of one run only):"
    echo
    peers
    echo
    echo "**Home size** (\`python3 scripts/scale.py 10 50 232\`: a default Mosquitto, the simulated"
    echo "gateway with N nodes in its own process, 500 sequential calls of each tool through"
    echo "\`mcp-client\`; \"first call\" includes loading the node list):"
    echo
    python3 scripts/scale.py 10 50 232 | sed -n '/^|/p'
    echo
    echo "**The two backends** (\`python3 scripts/backends.py\`: 500 sequential \`get_device_status\`"
    echo "and 50 dims answered at the acknowledgement, \`--confirm-timeout 0s\`; over zwave-js-server a"
    echo "dim is two round trips, the node's name checked with \`node.get_state\` before \`node.set_value\`;"
    echo "the real driver's dim includes the mock controller's ACK of the Set):"
    echo
    python3 scripts/backends.py | sed -n '/^|/p'
    echo
    echo "**A busy network** (\`python3 scripts/storm.py\`: the 232-node home, quiet and during"
    echo "5,000 reports/s; the server's CPU per report read from \`/proc\`):"
    echo
    python3 scripts/storm.py | sed -n '/^|/p'
    echo
    echo "**Resource updates** (\`cargo bench -p zwave-mcp-server --bench resource_updates\`: the"
    echo "server subscribed with \`resources/subscribe\` to one resource of the demo home; from the"
    echo "simulator in the bench's process being handed a report of node 2's switch to the"
    echo "\`notifications/resources/updated\` line read from the server's stdout; 200 reports per row,"
    echo "each 550 ms after that home's last change, so the 250 ms coalescing interval is not in it):"
    echo
    cargo bench -q -p zwave-mcp-server --bench resource_updates 2>/dev/null | sed -n '/^|/p'
    echo
    echo "**The cache alone** (\`cargo bench -p zwave-mcp-server --bench cache\`, 232 nodes):"
    echo
    echo '```text'
    cargo bench -q -p zwave-mcp-server --bench cache 2>/dev/null | sed -n '/^cache/,$p' | sed '/^$/d'
    echo '```'
    echo "<!-- perf-report:end -->"
} > "$block"

if [ "$mode" = "--print" ]; then
    cat "$block"
    exit 0
fi
python3 - "$block" <<'EOF'
import re, sys
block = open(sys.argv[1]).read().rstrip("\n")
readme = open("README.md").read()
pattern = re.compile(r"<!-- perf-report:start.*?<!-- perf-report:end -->", re.S)
if not pattern.search(readme):
    sys.exit("README.md has no perf-report markers: add them where the figures belong")
open("README.md", "w").write(pattern.sub(lambda _: block, readme, count=1))
print("README.md: performance figures rewritten from " + sys.argv[1])
EOF

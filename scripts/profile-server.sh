#!/usr/bin/env bash
# Instructions per tools/call of the Z-Wave server in --demo, counted by callgrind (repeatable
# on any machine, unlike wall-clock round trips): one run with a single warm-up call (it loads
# the node list) and one with N more calls, one at a time; the difference over N is the
# per-call cost. Profiles are left in
# target/profile/ for callgrind_annotate.
#   bash scripts/profile-server.sh [N] [tool] [arguments JSON] [more server flags...]
# e.g. a full network: bash scripts/profile-server.sh 200 list_zwave_devices '{}' --demo-nodes 232
set -euo pipefail
cd "$(dirname "$0")/.."
calls=${1:-1000}
tool=${2:-get_device_status}
args=${3:-'{"deviceName":"Switch One"}'}
shift $(( $# < 3 ? $# : 3 ))
cargo build --release -q -p zwave-mcp-server --bins
mkdir -p target/profile
total() { callgrind_annotate "$1" 2>/dev/null | awk '/PROGRAM TOTALS/ {gsub(",", "", $1); print $1}'; }
for n in 1 $((calls + 1)); do
    python3 scripts/drive_server.py "$n" "$tool" "$args" \
        valgrind --tool=callgrind --callgrind-out-file="target/profile/$tool.$n.callgrind" \
        target/release/zwave-mcp-server --demo "$@"
done
base=$(total "target/profile/$tool.1.callgrind")
loaded=$(total "target/profile/$tool.$((calls + 1)).callgrind")
echo "$tool: $(( (loaded - base) / calls )) instructions per call ($calls calls; start-up and one call $base)"
echo "where they go: callgrind_annotate --inclusive=yes target/profile/$tool.$((calls + 1)).callgrind | head -60"

#!/usr/bin/env bash
# Writes zwave-mcp-server/symbol-order.txt, the functions the release server runs, hottest first,
# for the linker to lay out together (see zwave-mcp-server/build.rs): callgrind records the
# instructions run by --demo and, when mosquitto is installed, by the MQTT backend against the
# simulator, each over a session of tools/list, list_zwave_devices and N get_device_status calls.
# Both ways the README builds the binary are recorded, `-p zwave-mcp-server` and a workspace-wide
# build (whose unified features give many functions other mangled names): the list is the union.
# Re-run it after a toolchain or dependency update (names it no longer finds are skipped).
#   bash scripts/symbol-order.sh [N]
set -euo pipefail
cd "$(dirname "$0")/.."
calls=${1:-100}
target=${CARGO_TARGET_DIR:-target}
out=$target/symbol-order
rm -rf "$out"; mkdir -p "$out"
record() { # record NAME SERVER-ARGS...
    local name=$1; shift
    python3 - "$calls" valgrind --tool=callgrind --dump-instr=yes --compress-pos=no \
        --callgrind-out-file="$out/$name.callgrind" "$bin" "$@" <<'PY'
import json, subprocess, sys
n = int(sys.argv[1]); p = subprocess.Popen(sys.argv[2:], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
def call(i, method, params):
    p.stdin.write((json.dumps({"jsonrpc": "2.0", "id": i, "method": method, "params": params}) + "\n").encode()); p.stdin.flush()
    while True:
        m = json.loads(p.stdout.readline())
        if m.get("id") == i: assert "result" in m, m; return
call(0, "initialize", {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "order", "version": "0"}})
p.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
call(1, "tools/list", {})
call(2, "tools/call", {"name": "list_zwave_devices", "arguments": {}})
for i in range(3, 3 + n):
    call(i, "tools/call", {"name": "get_device_status", "arguments": {"deviceName": "Switch One"}})
p.stdin.close(); p.wait()
PY
}
profile() { # profile BUILD: records the binary just built, kept as $out/BUILD.bin
    bin=$out/$1.bin
    cp "$target/release/zwave-mcp-server" "$bin"
    record "$1-demo" --demo
    if command -v mosquitto >/dev/null; then
        port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
        mosquitto -p "$port" >/dev/null 2>&1 & broker=$!
        sleep 0.3
        "$bin" --mqtt-url "mqtt://127.0.0.1:$port" simulate >/dev/null 2>&1 & sim=$!
        sleep 1.5
        record "$1-mqtt" --mqtt-url "mqtt://127.0.0.1:$port" || true
        kill "$sim" "$broker"; wait "$sim" "$broker" 2>/dev/null || true
    fi
}
cargo build --release -q -p zwave-mcp-server --bin zwave-mcp-server
profile package
cargo build --release -q --workspace --bins
profile workspace
python3 - zwave-mcp-server/symbol-order.txt "$out" package workspace <<'PY'
import bisect, collections, glob, re, subprocess, sys
dest, out, builds = sys.argv[1], sys.argv[2], sys.argv[3:]
runs = collections.Counter()
for build in builds:
    binp = f"{out}/{build}.bin"; name = binp.rsplit("/", 1)[-1]
    syms = []
    for line in subprocess.run(["nm", "-S", binp], capture_output=True, text=True, check=True).stdout.splitlines():
        p = line.split()
        if len(p) == 4 and p[2] in "tTwW" and int(p[1], 16) > 0:
            syms.append((int(p[0], 16), int(p[1], 16), p[3]))
    syms.sort(); starts = [s[0] for s in syms]
    counted = collections.Counter()
    for f in glob.glob(f"{out}/{build}-*.callgrind"):
        objects = {}; current = ""
        for line in open(f):
            m = re.match(r"(c?)ob=\((\d+)\)(?: (.*))?", line.strip())
            if m:
                if m.group(3): objects[m.group(2)] = m.group(3)
                if not m.group(1): current = objects.get(m.group(2), "")
            elif line.startswith("0x") and current.endswith(name):
                parts = line.split(); addr = int(parts[0], 16)
                i = bisect.bisect_right(starts, addr) - 1
                if i >= 0 and addr < syms[i][0] + syms[i][1]:
                    counted[syms[i][2]] += int(parts[2]) if len(parts) > 2 else 1
    size = {s[2]: s[1] for s in syms}
    print(f"{build}: {len(counted)} functions run, {sum(size[n] for n in counted) // 1024} KiB of {sum(s[1] for s in syms) // 1024} KiB of code")
    runs.update(counted)
names = [n for n, _ in runs.most_common()]
open(dest, "w").write("".join(n + "\n" for n in names))
print(f"{dest}: {len(names)} names (the union)")
PY

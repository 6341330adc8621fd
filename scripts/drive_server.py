"""Drives an MCP stdio server with N sequential tools/call requests, one at a time, for
profilers (used by scripts/profile-server.sh).

Usage: drive_server.py N TOOL ARGS_JSON COMMAND...
"""
import json, subprocess, sys
n = int(sys.argv[1]); tool = sys.argv[2]; args = json.loads(sys.argv[3]); cmd = sys.argv[4:]
p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
def send(m): p.stdin.write((json.dumps(m) + "\n").encode()); p.stdin.flush()
def wait(i):
    while True:
        line = p.stdout.readline()
        if not line: raise SystemExit("eof")
        m = json.loads(line)
        if m.get("id") == i: return m
send({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"d","version":"0"}}})
wait(0)
send({"jsonrpc":"2.0","method":"notifications/initialized"})
for i in range(1, n + 1):
    send({"jsonrpc":"2.0","id":i,"method":"tools/call","params":{"name":tool,"arguments":args}})
    r = wait(i)
    assert "result" in r, r
p.stdin.close(); p.wait()

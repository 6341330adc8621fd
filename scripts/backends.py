"""The server's two backends side by side, each against a peer on loopback.

Rows: the MQTT backend against the simulated Z-Wave JS UI gateway (`simulate`, the demo home,
in its own process) through Mosquitto as installed (Nagle's algorithm on: `set_tcp_nodelay`
is off by default) and with `set_tcp_nodelay true`; the WebSocket backend against the simulated
zwave-js-server (`simulate --zwave-js-server`); and the WebSocket backend against the real zwave-js-server
3.10.2 with the real zwave-js 15.29.0 driver on zwave-js's mock controller (what the tests
install into target/peers/zwave-js; run the test command once first). For each: time to
`initialize`, CALLS sequential `get_device_status` calls and CALLS/10 dim round trips (a
write answered once the server acknowledged it: --confirm-timeout 0s), medians and p99, and
the server's peak RSS. The real driver's dim waits for the mock controller's ACK of the Set.

Usage: python3 scripts/backends.py   (build with cargo build --release first)
"""
import json, os, socket, subprocess, sys, tempfile, time

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
BIN = os.path.join(ROOT, "target", "release", "zwave-mcp-server")
PEERS = os.path.join(ROOT, "target", "peers", "zwave-js")
CALLS = int(os.environ.get("CALLS", "500"))


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_port(port, what, deadline=120.0):
    end = time.time() + deadline
    while time.time() < end:
        try:
            socket.create_connection(("127.0.0.1", port), 0.2).close()
            return
        except OSError:
            time.sleep(0.05)
    raise SystemExit(f"{what} did not listen on {port}")


class Server:
    def __init__(self, args):
        self.started = time.perf_counter()
        self.p = subprocess.Popen([BIN, *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.DEVNULL)
        self.next = 0

    def request(self, method, params):
        self.next += 1
        message = {"jsonrpc": "2.0", "id": self.next, "method": method, "params": params}
        self.p.stdin.write((json.dumps(message) + "\n").encode())
        self.p.stdin.flush()
        while True:
            reply = json.loads(self.p.stdout.readline())
            if reply.get("id") == self.next:
                return reply

    def call(self, tool, args):
        reply = self.request("tools/call", {"name": tool, "arguments": args})
        result = reply.get("result", {})
        if result.get("isError"):
            raise RuntimeError(result["content"][0]["text"])
        return result

    def peak_rss_mib(self):
        with open(f"/proc/{self.p.pid}/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024

    def close(self):
        self.p.stdin.close()
        self.p.wait()


def until_ok(server, tool, args, deadline=180.0):
    """Calls until the home answers (a real driver interviews its nodes first)."""
    end = time.time() + deadline
    while True:
        try:
            return server.call(tool, args)
        except RuntimeError as error:
            if time.time() > end:
                raise SystemExit(f"{tool} {args} never answered: {error}")
            time.sleep(0.2)


def timed(server, calls, tool, args_of):
    times = []
    for i in range(calls):
        start = time.perf_counter()
        server.call(tool, args_of(i))
        times.append(time.perf_counter() - start)
    times.sort()
    return times[len(times) // 2] * 1e6, times[int(len(times) * 0.99)] * 1e6


def row(name, args, status_of, dim_of):
    server = Server([*args, "--confirm-timeout", "0s"])
    server.request("initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                  "clientInfo": {"name": "backends", "version": "1"}})
    init_ms = (time.perf_counter() - server.started) * 1e3
    until_ok(server, "get_device_status", status_of)
    until_ok(server, "control_zwave_device", dim_of(0))
    status = timed(server, CALLS, "get_device_status", lambda _: status_of)
    dim = timed(server, max(CALLS // 10, 10), "control_zwave_device", dim_of)
    rss = server.peak_rss_mib()
    server.close()
    return (f"| {name} | {init_ms:.1f} ms | {status[0]:,.0f} µs | {status[1]:,.0f} µs "
            f"| {dim[0]:,.0f} µs | {dim[1]:,.0f} µs | {rss:.1f} MiB |")


def stop(*processes):
    for process in processes:
        if process:
            process.kill()
            process.wait()


def demo_dim(i):
    return {"deviceName": "Living Room Light", "action": "dim", "level": 20 + i % 50}


DEMO_STATUS = {"deviceName": "Living Room Light"}


def simulated_mqtt(nodelay):
    port = free_port()
    conf = os.path.join(tempfile.mkdtemp(prefix="mosquitto-"), "mosquitto.conf")
    with open(conf, "w") as out:
        out.write(f"listener {port} 127.0.0.1\nallow_anonymous true\n")
        if nodelay:
            out.write("set_tcp_nodelay true\n")
    broker = subprocess.Popen(["mosquitto", "-c", conf], stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
    sim = None
    try:
        wait_port(port, "mosquitto")
        url = f"mqtt://127.0.0.1:{port}"
        sim = subprocess.Popen([BIN, "--mqtt-url", url, "simulate"], stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
        name = "MQTT → simulated Z-Wave JS UI (Mosquitto, " + (
            "set_tcp_nodelay true)" if nodelay else "default settings)")
        return row(name, ["--mqtt-url", url], DEMO_STATUS, demo_dim)
    finally:
        stop(sim, broker)


def simulated_zwave_js_server():
    port = free_port()
    sim = subprocess.Popen([BIN, "simulate", "--zwave-js-server", f"127.0.0.1:{port}"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_port(port, "simulate --zwave-js-server")
        return row("WebSocket → simulated zwave-js-server", ["--zwave-js-url", f"ws://127.0.0.1:{port}"],
                   DEMO_STATUS, demo_dim)
    finally:
        stop(sim)


def real_zwave_js_server():
    server_bin = os.path.join(PEERS, "node_modules", ".bin", "zwave-server")
    if not os.path.exists(server_bin):
        raise SystemExit(f"{server_bin} is missing: run the README's test command once (it installs it)")
    serial, control, ws = free_port(), free_port(), free_port()
    mock = subprocess.Popen(["node", os.path.join(ROOT, "fixtures", "zwave-js-mock", "run-mock-server.cjs"),
                             "--zui-src", PEERS, "--config",
                             os.path.join(ROOT, "fixtures", "zwave-js-mock", "mock-config.cjs"),
                             "--host", "127.0.0.1", "--port", str(serial), "--ctl-port", str(control)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    server = None
    try:
        time.sleep(3)  # the mock takes any connection on its port for the driver's serial line
        storage = tempfile.mkdtemp(prefix="zwave-js-")
        config = os.path.join(storage, "driver.cjs")
        with open(config, "w") as out:
            out.write("module.exports = { storage: { cacheDir: %s }, securityKeys: "
                      "{ S0_Legacy: \"0102030405060708090a0b0c0d0e0f10\" } };\n"
                      % json.dumps(os.path.join(storage, "cache")))
        server = subprocess.Popen([server_bin, f"tcp://127.0.0.1:{serial}", "--host", "127.0.0.1",
                                   "--disable-dns-sd", "--port", str(ws), "--config", config],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_port(ws, "zwave-js-server")
        return row("WebSocket → real zwave-js-server 3.10.2 (zwave-js 15.29.0, mock controller)",
                   ["--zwave-js-url", f"ws://127.0.0.1:{ws}"], {"deviceName": "Node 3"},
                   lambda i: {"deviceName": "Node 3", "action": "dim", "level": 20 + i % 50})
    finally:
        stop(server, mock)


if __name__ == "__main__":
    print("| backend → peer | start → initialize | status p50 | status p99 | dim p50 | dim p99 | peak RSS |")
    print("|---|---|---|---|---|---|---|")
    for measure in (lambda: simulated_mqtt(False), lambda: simulated_mqtt(True), simulated_zwave_js_server,
                    real_zwave_js_server):
        print(measure(), flush=True)
    sys.exit(0)

"""How the Z-Wave server's costs grow with the size of the home, on a real Mosquitto.

For each node count N: a fresh Mosquitto (default settings), `zwave-mcp-server simulate --nodes N`
in its own process (everything retained before the server starts), then the server itself,
driven over stdio: time to `initialize`, the first call (which loads the node list with
getNodes), then CALLS sequential calls of list_zwave_devices and get_device_status each;
prints a Markdown table with medians, p99 and the server's peak RSS.

Usage: python3 scripts/scale.py [N ...]   (default 10 50 232; build with cargo build --release)
"""
import json, os, socket, subprocess, sys, time

BIN = os.path.join(os.path.dirname(__file__), "..", "target", "release", "zwave-mcp-server")
CALLS = int(os.environ.get("CALLS", "500"))


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_port(port, deadline=5.0):
    end = time.time() + deadline
    while time.time() < end:
        try:
            socket.create_connection(("127.0.0.1", port), 0.2).close()
            return
        except OSError:
            time.sleep(0.02)
    raise SystemExit(f"mosquitto did not listen on {port}")


class Server:
    def __init__(self, url):
        self.started = time.perf_counter()
        self.p = subprocess.Popen([BIN, "--mqtt-url", url], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        self.next = 0

    def request(self, method, params):
        self.next += 1
        message = {"jsonrpc": "2.0", "id": self.next, "method": method, "params": params}
        self.p.stdin.write((json.dumps(message) + "\n").encode())
        self.p.stdin.flush()
        while True:
            reply = json.loads(self.p.stdout.readline())
            if reply.get("id") == self.next:
                if "result" not in reply or reply["result"].get("isError"):
                    raise SystemExit(f"{method} failed: {reply}")
                return reply

    def call(self, tool, args):
        return self.request("tools/call", {"name": tool, "arguments": args})

    def peak_rss_mib(self):
        with open(f"/proc/{self.p.pid}/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024

    def close(self):
        self.p.stdin.close()
        self.p.wait()


def stop(*processes):
    for process in processes:
        if process:
            process.kill()
            process.wait()


def timed(server, tool, args):
    times = []
    for _ in range(CALLS):
        start = time.perf_counter()
        server.call(tool, args)
        times.append(time.perf_counter() - start)
    times.sort()
    return times[len(times) // 2] * 1e6, times[int(len(times) * 0.99)] * 1e6


def measure(nodes):
    port = free_port()
    broker = subprocess.Popen(["mosquitto", "-p", str(port)], stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
    sim = None
    try:
        wait_port(port)
        url = f"mqtt://127.0.0.1:{port}"
        sim = subprocess.Popen([BIN, "--mqtt-url", url, "simulate", "--nodes", str(nodes)],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(1.5)  # the simulator publishes and the broker retains the whole home
        server = Server(url)
        server.request("initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                      "clientInfo": {"name": "scale", "version": "1"}})
        init_ms = (time.perf_counter() - server.started) * 1e3
        first = time.perf_counter()
        server.call("list_zwave_devices", {})
        first_ms = (time.perf_counter() - first) * 1e3
        list_p50, list_p99 = timed(server, "list_zwave_devices", {})
        status_p50, status_p99 = timed(server, "get_device_status", {"deviceName": "Kitchen Plug 2"})
        rss = server.peak_rss_mib()
        server.close()
        return (f"| {nodes} | {init_ms:.1f} ms | {first_ms:.0f} ms | {list_p50:.0f} µs | {list_p99:.0f} µs "
                f"| {status_p50:.0f} µs | {status_p99:.0f} µs | {rss:.1f} MiB |")
    finally:
        stop(sim, broker)


if __name__ == "__main__":
    counts = [int(n) for n in sys.argv[1:]] or [10, 50, 232]
    print("| nodes | start → initialize | first call (getNodes) | list p50 | list p99 "
          "| status p50 | status p99 | peak RSS |")
    print("|---|---|---|---|---|---|---|---|")
    for n in counts:
        print(measure(n), flush=True)

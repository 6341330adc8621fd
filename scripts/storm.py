"""What a storm of value reports costs the Z-Wave server, on a real Mosquitto.

For a home of NODES nodes (default 232) and each storm rate (default 0 = quiet, 5000/s):
a fresh Mosquitto, `zwave-mcp-server simulate --nodes NODES --storm RATE` in its own process,
then
- `mcp-client bench` times CALLS sequential calls of get_device_status and of
  list_zwave_devices against a server it starts (p50, p99);
- a server started here, idle but for the storm, is watched for WINDOW seconds: its CPU time
  per report received, and so how many reports per second one core could absorb.
Prints a Markdown table. Build first: cargo build --release --workspace --bins

Usage: python3 scripts/storm.py [RATE ...]   (env NODES, CALLS, WINDOW)
"""
import json, os, re, subprocess, sys, time

sys.path.insert(0, os.path.dirname(__file__))
from scale import BIN, Server, free_port, stop, wait_port  # noqa: E402

CLIENT = os.path.join(os.path.dirname(BIN), "mcp-client")
NODES = int(os.environ.get("NODES", "232"))
CALLS = int(os.environ.get("CALLS", "2000"))
WINDOW = float(os.environ.get("WINDOW", "10"))
TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


def bench(url, tool, args):
    out = subprocess.run(
        [CLIENT, "bench", "--json", "--tool", tool, "--args", json.dumps(args),
         "--calls", str(CALLS), "--concurrency", "1", "--", BIN, "--mqtt-url", url,
         "--log-level", "warn"],
        check=True, capture_output=True, text=True).stdout
    phase = json.loads(out)["phases"][0]
    return phase["p50_us"], phase["p99_us"]


def published(log_path):
    """The storm's last logged count of published reports, or 0."""
    with open(log_path, errors="replace") as log:
        counts = re.findall(r"published=(\d+)", log.read())
    return int(counts[-1]) if counts else 0


def wait_for(log_path, text, deadline=60.0):
    end = time.time() + deadline
    while time.time() < end:
        with open(log_path, errors="replace") as log:
            if text in log.read():
                return
        time.sleep(0.05)
    raise SystemExit(f"the simulator never logged {text!r}; see {log_path}")


def measure(rate):
    port = free_port()
    broker = subprocess.Popen(["mosquitto", "-p", str(port)], stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
    sim = None
    log_path = f"/tmp/storm-sim-{port}.log"
    try:
        wait_port(port)
        url = f"mqtt://127.0.0.1:{port}"
        command = [BIN, "--mqtt-url", url, "simulate", "--nodes", str(NODES)]
        if rate:
            command += ["--storm", str(rate)]
        with open(log_path, "w") as log:
            sim = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=log)
        wait_for(log_path, "storm of value reports started" if rate else "simulated gateway connected")
        time.sleep(1.5)  # the broker retains the whole home
        status = bench(url, "get_device_status", {"deviceName": "Kitchen Plug 2"})
        listing = bench(url, "list_zwave_devices", {})
        cpu = "–"
        if rate:
            server = Server(url)
            server.request("initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                          "clientInfo": {"name": "storm", "version": "1"}})
            server.call("list_zwave_devices", {})
            time.sleep(1)
            before, started = cpu_seconds(server.p.pid), time.perf_counter()
            time.sleep(WINDOW)
            used, took = cpu_seconds(server.p.pid) - before, time.perf_counter() - started
            server.close()
            per_report = used / (rate * took)
            cpu = (f"{used * 1e3:.0f} ms in {took:.0f} s: {per_report * 1e6:.1f} µs per report, "
                   f"{1 / per_report / 1e3:.0f}k reports/s per core" if used else "under one tick")
        sent = published(log_path)
        count = f"sim published {sent:,}" if sent else "the sim logs its count every 5 s"
        label = f"{rate:,}/s ({count})" if rate else "quiet"
        return (f"| {label} | {status[0]:.0f} µs | {status[1]:.0f} µs | {listing[0]:.0f} µs "
                f"| {listing[1]:.0f} µs | {cpu} |")
    finally:
        stop(sim, broker)


if __name__ == "__main__":
    rates = [int(r) for r in sys.argv[1:]] or [0, 5000]
    print(f"{NODES} nodes, {CALLS} sequential calls per tool (mcp-client bench)\n")
    print("| storm | status p50 | status p99 | list p50 | list p99 | server CPU during the storm |")
    print("|---|---|---|---|---|---|")
    for rate in rates:
        print(measure(rate), flush=True)

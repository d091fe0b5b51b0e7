#!/usr/bin/env python3
"""The load generator's CPU per request against the server's, in one run.

For each protocol, starts `greet-hyper --workers 1` (or the server named) pinned to CPU 0,
over TLS with --tls-self-signed, then runs each client in turn pinned to CPU 1 against its
/health for DURATION seconds: greet-agent's closed loop, its open loop at each rate given,
and, where they are installed, wrk (HTTP/1.1, https) and h2load (h2c, h2) at full speed. Per run it prints the requests answered a second, each side's CPU time
per request (the client's from its own rusage, the server's from /proc), and their ratio:
under 1, the client spends less on a request than the server it measures.

    cargo build --release -p greet-hyper -p greet-load
    apt-get install -y wrk nghttp2-client      # optional: wrk and h2load rows
    python3 benches/scripts/client-cost.py [--server greet-hyper] [--duration 3]
        [--rates 60k,100k,130k] [--protocols http1,h2c,https,h2] [--connections 64]
        [--streams 10] [--agent target/release/greet-agent]

HTTP/2 runs put --streams of the --connections in flight on each connection (h2load's -m),
so --connections 64 --streams 10 is 7 connections; --streams 1 is one stream a connection.
"""
import argparse, json, os, re, resource, shutil, signal, subprocess, sys, time

TICK = os.sysconf("SC_CLK_TCK")


def cpu_s(pid):
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def rate(text):
    text = text.strip().lower()
    mult = 1000 if text.endswith("k") else 1
    return float(text.rstrip("k")) * mult


def run_client(cmd):
    """Runs `cmd` pinned to CPU 1: its stdout and the CPU seconds it used."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    out = subprocess.run(["taskset", "-c", "1", *cmd], capture_output=True, text=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    used = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if out.returncode != 0:
        sys.exit(f"client-cost: {cmd[0]} failed: {out.stderr.strip()[:300]}")
    return out.stdout, used


def agent_answered(stdout):
    """Requests a greet-agent report counts as answered validly."""
    line = next(l for l in stdout.splitlines() if l.startswith("greet-load-report "))
    counted = json.loads(line.split(" ", 1)[1])["counted"]
    tally = counted["paced"]["corrected"] if "paced" in counted else counted["closed"]
    return tally["ok"]


def wrk_answered(stdout):
    n = int(re.search(r"(\d+) requests in", stdout).group(1))
    bad = re.search(r"Non-2xx or 3xx responses: (\d+)", stdout)
    return n - (int(bad.group(1)) if bad else 0)


def h2load_answered(stdout):
    return int(re.search(r"requests: .* (\d+) succeeded", stdout).group(1))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--server", default="greet-hyper")
    ap.add_argument("--bin", default="target/release", help="where the binaries are")
    ap.add_argument("--port", type=int, default=18080)
    ap.add_argument("--duration", type=float, default=3.0)
    ap.add_argument("--rates", default="60k,100k,130k")
    ap.add_argument("--protocols", default="http1,h2c")
    ap.add_argument("--agent", help="another greet-agent binary to measure (an older build)")
    ap.add_argument("--connections", type=int, default=64)
    ap.add_argument("--streams", type=int, default=10)
    a = ap.parse_args()

    agent = a.agent or os.path.join(a.bin, "greet-agent")
    server_bin = os.path.join(a.bin, a.server)
    for b in (agent, server_bin):
        if not os.access(b, os.X_OK):
            sys.exit(f"client-cost: {b} is missing: cargo build --release -p {a.server} -p greet-load")
    d = f"{a.duration:g}s"
    for proto in a.protocols.split(","):
        tls = proto in ("https", "h2")
        server = subprocess.Popen(
            ["taskset", "-c", "0", server_bin, "--port", str(a.port), "--workers", "1"]
            + (["--tls-self-signed"] if tls else []),
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        url = f"{'https' if tls else 'http'}://127.0.0.1:{a.port}/health"
        try:
            measure(a, agent, server, proto, url, d)
        finally:
            server.send_signal(signal.SIGTERM)
            server.wait()


def measure(a, agent, server, proto, url, d):
    """Every client's run on `proto` against `server` at `url`, one line each."""
    for _ in range(100):
        if subprocess.run(["curl", "-skf", url], capture_output=True).returncode == 0:
            break
        time.sleep(0.05)
    else:
        sys.exit("client-cost: the server did not answer /health")
    streams = a.streams if proto in ("h2c", "h2") else 1
    base = [agent, "--url", url, "--protocol", proto, "--expect", "any",
            "--streams", str(streams)]
    runs = [(f"greet-agent closed loop, {a.connections} users",
             base + ["--keep-alive", str(a.connections), "--duration", d], agent_answered)]
    for r in a.rates.split(","):
        runs.append((f"greet-agent open loop at {r}/s",
                     base + ["--rate", str(rate(r)), "--duration", d,
                             "--connections", str(a.connections)], agent_answered))
    if proto in ("http1", "https") and shutil.which("wrk"):
        runs.append((f"wrk -t1 -c{a.connections}",
                     ["wrk", "-t1", f"-c{a.connections}", f"-d{d}", url], wrk_answered))
    if proto in ("h2c", "h2") and shutil.which("h2load"):
        conns = -(-a.connections // streams)
        runs.append((f"h2load -t1 -c{conns} -m{streams}",
                     ["h2load", "-t1", f"-c{conns}", f"-m{streams}",
                      f"-D{a.duration:g}", url], h2load_answered))
    for name, cmd, answered in runs:
        s0, t0 = cpu_s(server.pid), time.monotonic()
        out, client = run_client(cmd)
        s1, t1 = cpu_s(server.pid), time.monotonic()
        # Over the client's whole run (its start-up too): an open loop past the
        # server's capacity takes longer than its schedule to have every answer.
        n, wall = max(answered(out), 1), t1 - t0
        srv, cli = (s1 - s0) / n * 1e6, client / n * 1e6
        print(f"{proto:6} {name:36} {n / wall:8.0f}/s  client {cli:5.1f} µs "
              f"({client / wall * 100:3.0f}%)  server {srv:5.1f} µs "
              f"({(s1 - s0) / wall * 100:3.0f}%)  client/server {cli / srv:.2f}",
              flush=True)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""One `nse serve` against a fleet of three on one PostgreSQL behind HAProxy (issue #38 §3), on the same machine.

  python3 bench/fleet_bench.py [--devices N] [--pushes P] [--rounds R]

Three setups get the same load: P pushes (default 3000), a mutable-content alert to each of N devices (default 300)
in turn, one extension process per push (the reference extension: the push carries no `enc`, so it shows the
alert's own text), sent by h2load with 4 connections × 32 streams:
- `one node`: one `nse serve` without a database, h2load straight to it (the baseline);
- `one node + PostgreSQL`: one node on the fleet's database, h2load straight to it: what the shared request log,
  fault rules and result copies cost a push, with nothing forwarded;
- `three nodes`: examples/fleet/run.sh as written (three nodes, HAProxy round robin): two pushes in three reach a
  node that does not serve their device and are forwarded;
- `three, routed by token`: the same nodes behind a second HAProxy with the map of tokens to nodes (run.sh's
  `FLEET_ROUTE=token`): each push straight to its device's node, none forwarded.
For each: pushes recorded per second (from h2load's start to the last `nse_notifications_total` increment) and the
CPU each part spent per push (from /proc: the nodes themselves, their extensions, PostgreSQL's processes, HAProxy,
h2load, and the whole machine). On one 2-core machine three nodes cannot be faster than one: what matters is the
efficiency (pushes per CPU second, the whole machine's) and the coordination cost (CPU per push above the baseline's),
the figures a paper model of several machines is built from (docs/serve.md, "How many nodes"). Setups alternate;
each figure is the median of R rounds (default 2).

Knobs: NSE_BIN_DIR (binaries, default .build/release). Needs h2load, haproxy, initdb/pg_ctl (make deps).
"""
import argparse
import glob
import json
import os
import resource
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request

BIN = os.path.abspath(os.environ.get("NSE_BIN_DIR", ".build/release"))
NSE = os.path.join(BIN, "nse")
HERE = os.path.dirname(os.path.abspath(__file__))
RUN = os.path.join(HERE, "..", "examples", "fleet", "run.sh")
TICK = os.sysconf("SC_CLK_TCK")
PAYLOAD = b'{"aps":{"alert":{"title":"Fleet","body":"a push"},"mutable-content":1}}'


def process_cpu(pid):
    """User+system jiffies of `pid` and of its reaped children (the extensions a node ran)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            text = stat.read()
    except (FileNotFoundError, ProcessLookupError):
        return 0
    fields = text[text.rindex(")") + 2:].split()
    return sum(int(x) for x in fields[11:15])


def own_cpu(pid):
    with open(f"/proc/{pid}/stat") as stat:
        text = stat.read()
    fields = text[text.rindex(")") + 2:].split()
    return int(fields[11]) + int(fields[12])


def postgres_cpu():
    """Every PostgreSQL process's jiffies, ended backends included (reaped by the postmaster)."""
    total = 0
    for comm in glob.glob("/proc/[0-9]*/comm"):
        try:
            if open(comm).read().strip() == "postgres":
                total += process_cpu(int(comm.split("/")[2]))
        except (OSError, ValueError):
            continue
    return total


def machine_busy():
    with open("/proc/stat") as stat:
        fields = [int(x) for x in stat.readline().split()[1:]]
    return sum(fields[:8]) - fields[3] - fields[4]


def notifications(url):
    """`nse_notifications_total` summed over its labels, from the node's /metrics."""
    with urllib.request.urlopen(url + "/metrics", timeout=10) as answer:
        text = answer.read().decode()
    return sum(float(line.rsplit(" ", 1)[1]) for line in text.splitlines()
               if line.startswith("nse_notifications_total"))


def tokens_in(folder):
    return [json.load(open(path))["tokens"]["remote"]
            for path in sorted(glob.glob(os.path.join(folder, "*", "device.json")))]


def start_node(folder, extra):
    # As the fleet's nodes: a queue that takes every push (the default's 429s would measure refusals).
    process = subprocess.Popen([NSE, "serve", "--listen", "127.0.0.1:0", "--devices", folder, "--queue", "100000"]
                               + extra,
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                               env=dict(os.environ, NSE_LOG_LEVEL="warning"))
    line = process.stdout.readline()
    if not line:
        raise SystemExit(f"fleet_bench: nse serve {extra} did not start")
    return process, json.loads(line)["listening"]


def start_routed_balancer(fleet, work):
    """HAProxy from examples/fleet/haproxy.cfg with a token map: each push straight to its device's node."""
    path = os.path.join(work, "tokens.map")
    with open(path, "w") as file:
        for index, node in enumerate(fleet["nodes"], start=1):
            for token in tokens_in(node["devices"]):
                file.write(f"{token.lower()} node{index}\n")
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    env = dict(os.environ, NSE_FLEET_LISTEN=f"127.0.0.1:{port}", NSE_FLEET_STATS=os.path.join(work, "routed.sock"),
               NSE_FLEET_TOKENS=path)
    for index, node in enumerate(fleet["nodes"], start=1):
        env[f"NSE_FLEET_NODE{index}"] = node["url"].split("//")[1]
    haproxy = shutil.which("haproxy") or "/usr/sbin/haproxy"
    process = subprocess.Popen([haproxy, "-db", "-f", os.path.join(HERE, "..", "examples", "fleet", "haproxy.cfg")],
                               env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(100):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            break
        except OSError:
            time.sleep(0.1)
    time.sleep(1)  # the first health checks
    return process, f"http://127.0.0.1:{port}"


class Setup:
    def __init__(self, name, target, tokens, node_pids, node_urls, haproxy_pid=None):
        self.name, self.target, self.tokens = name, target, tokens
        self.node_pids, self.node_urls, self.haproxy_pid = node_pids, node_urls, haproxy_pid


def snapshot(setup):
    """Jiffies so far, by part."""
    return {
        "nodes": sum(own_cpu(pid) for pid in setup.node_pids),
        "nodes+extensions": sum(process_cpu(pid) for pid in setup.node_pids),
        "postgres": postgres_cpu(),
        "haproxy": process_cpu(setup.haproxy_pid) if setup.haproxy_pid else 0,
        "machine": machine_busy(),
    }


def measure(setup, pushes, work):
    uris = os.path.join(work, f"uris-{setup.name.replace(' ', '-')}")
    with open(uris, "w") as file:
        for index in range(pushes):
            file.write(f"{setup.target}/3/device/{setup.tokens[index % len(setup.tokens)]}\n")
    payload = os.path.join(work, "payload.json")
    with open(payload, "wb") as file:
        file.write(PAYLOAD)
    before_count = sum(notifications(url) for url in setup.node_urls)
    before = snapshot(setup)
    children_before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.monotonic()
    output = subprocess.run(
        ["h2load", "-n", str(pushes), "-c", "4", "-m", "32", "-i", uris, "-d", payload,
         "-H", "apns-topic: org.example.app", "-H", "apns-push-type: alert"],
        capture_output=True, text=True, timeout=600).stdout
    children_after = resource.getrusage(resource.RUSAGE_CHILDREN)
    ok = next((line for line in output.splitlines() if line.strip().startswith("status codes:")), "")
    # Only what was answered 200 is recorded.
    answered = int(ok.split(":", 1)[1].split()[0]) if ok else 0
    deadline = time.monotonic() + 120
    last_change, count = time.monotonic(), before_count
    while time.monotonic() < deadline:
        now = sum(notifications(url) for url in setup.node_urls)
        if now != count:
            count, last_change = now, time.monotonic()
        if count - before_count >= answered:
            break
        time.sleep(0.05)
    elapsed = last_change - started
    after = snapshot(setup)
    recorded = count - before_count
    per_push = {key: (after[key] - before[key]) * 1000 / TICK / max(recorded, 1) for key in before}
    per_push["extensions"] = per_push.pop("nodes+extensions") - per_push["nodes"]
    per_push["h2load"] = ((children_after.ru_utime + children_after.ru_stime)
                          - (children_before.ru_utime + children_before.ru_stime)) * 1000 / max(recorded, 1)
    return {"rate": recorded / elapsed, "recorded": recorded, "answers": ok.split(":", 1)[-1].strip(),
            "cpu": per_push}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--devices", type=int, default=300)
    parser.add_argument("--pushes", type=int, default=3000)
    parser.add_argument("--rounds", type=int, default=2)
    options = parser.parse_args()
    work = tempfile.mkdtemp(prefix="nse-fleet-bench.")
    os.chmod(work, 0o755)  # PostgreSQL runs as its own user when this runs as root: it must reach its folder
    fleet_process = subprocess.Popen(
        ["bash", RUN, os.path.join(work, "fleet")],
        env=dict(os.environ, NSE=NSE, FLEET_DEVICES=str(options.devices), FLEET_PORT="0", NSE_LOG_LEVEL="warning",
                 FLEET_SERVE_ARGS="--queue 100000"),
        stdout=subprocess.PIPE, text=True)
    started = []
    try:
        line = fleet_process.stdout.readline()
        if not line:
            print("fleet_bench: examples/fleet/run.sh did not start the fleet")
            return 1
        fleet = json.loads(line)
        fleet_tokens = [t for node in fleet["nodes"] for t in tokens_in(node["devices"])]
        for name in ("solo", "solo-db"):
            subprocess.run([NSE, "device", "init-many", os.path.join(work, name), "--count", str(options.devices)],
                           check=True, stdout=subprocess.DEVNULL)
        solo, solo_url = start_node(os.path.join(work, "solo"), [])
        started.append(solo)
        # Its own database on the fleet's server: a node alone, not a fourth member of the fleet.
        psql = (glob.glob("/usr/lib/postgresql/*/bin/psql") or ["psql"])[-1]
        subprocess.run([psql, fleet["database"], "-qc", "CREATE DATABASE solo"], check=True)
        solo_db, solo_db_url = start_node(
            os.path.join(work, "solo-db"),
            ["--database", fleet["database"].rsplit("/", 1)[0] + "/solo", "--node-name", "solo-db"])
        started.append(solo_db)
        # A second HAProxy on the same nodes, with the map of tokens to nodes (as run.sh's FLEET_ROUTE=token).
        routed, routed_url = start_routed_balancer(fleet, work)
        started.append(routed)
        setups = [
            Setup("one node", solo_url, tokens_in(os.path.join(work, "solo")), [solo.pid], [solo_url]),
            Setup("one node + PostgreSQL", solo_db_url, tokens_in(os.path.join(work, "solo-db")), [solo_db.pid],
                  [solo_db_url]),
            Setup("three nodes", fleet["balancer"], fleet_tokens, [n["pid"] for n in fleet["nodes"]],
                  [n["url"] for n in fleet["nodes"]], fleet["haproxy_pid"]),
            Setup("three, routed by token", routed_url, fleet_tokens, [n["pid"] for n in fleet["nodes"]],
                  [n["url"] for n in fleet["nodes"]], routed.pid),
        ]
        # One unmeasured push to every device first: the results databases are made then, not in a measured run.
        for setup in setups:
            measure(setup, len(setup.tokens), work)
        runs = {setup.name: [] for setup in setups}
        for _ in range(options.rounds):
            for setup in setups:
                runs[setup.name].append(measure(setup, options.pushes, work))
        report(runs, options)
    finally:
        for process in started:
            process.send_signal(signal.SIGTERM)
            process.wait(30)
        fleet_process.send_signal(signal.SIGTERM)
        fleet_process.wait(60)
        # 1.2 GB of devices, results and a PostgreSQL cluster a run: left behind, a few runs filled a disk.
        shutil.rmtree(work, ignore_errors=True)
    return 0


def report(runs, options):
    print(f"fleet bench: {options.pushes} pushes to {options.devices} devices per run, h2load -c 4 -m 32, "
          f"median of {options.rounds} rounds (CPU in ms per push)")
    parts = ["nodes", "extensions", "postgres", "haproxy", "h2load", "machine"]
    print(f"{'setup':24} {'pushes/s':>9} " + " ".join(f"{part:>10}" for part in parts) + f" {'per CPU-s':>10}")
    baseline = None
    for name, measured in runs.items():
        rate = statistics.median(m["rate"] for m in measured)
        cpu = {part: statistics.median(m["cpu"][part] for m in measured) for part in parts}
        efficiency = 1000 / cpu["machine"] if cpu["machine"] else 0
        print(f"{name:24} {rate:9.0f} " + " ".join(f"{cpu[part]:10.2f}" for part in parts) + f" {efficiency:10.0f}")
        for m in measured:
            if m["recorded"] < options.pushes:
                print(f"  {name}: only {m['recorded']:.0f} of {options.pushes} recorded (answers: {m['answers']})")
        if baseline is None:
            baseline = cpu
        else:
            extra = cpu["machine"] - baseline["machine"]
            print(f"  coordination: +{extra:.2f} ms of the machine's CPU per push over one node "
                  f"(nodes +{cpu['nodes'] - baseline['nodes']:.2f}, PostgreSQL +{cpu['postgres']:.2f}, "
                  f"HAProxy +{cpu['haproxy']:.2f}); efficiency {baseline['machine'] / cpu['machine']:.2f} of one node's")


if __name__ == "__main__":
    sys.exit(main())

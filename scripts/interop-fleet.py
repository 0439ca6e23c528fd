#!/usr/bin/env python3
"""Fleet test: examples/fleet/run.sh as written (a throw-away PostgreSQL cluster, three `nse serve` nodes on it,
Debian's HAProxy in front), with 10,000 devices split between the nodes.

One push to each device goes through the balancer (HTTP/1.1 keep-alive, 24 clients, an extension run per push),
and a third of the way in node-2 is killed with SIGKILL: its devices, the pushes it answered 200 and had not run,
and the results it had not copied are taken over by a live node, and pushes for its devices wait for that. A push
answered otherwise (HAProxy's 502/503 for a stream node-2 took down with it, a 500 for a forward it never answered,
a 503 after the takeover window) is sent again with its apns-id, as a provider retries. Then:
- every push was answered 200 in the end;
- every 200 (its apns-unique-id) is recorded exactly once, and read so from each live node
  (`GET /v1/devices/{token}/notifications`, the device's own store on its node and the fleet's copies elsewhere);
- every 200 is in the fleet's request log, read on any node;
- run.sh stops everything on SIGTERM, the live nodes with exit 0.

usage: NSE_BIN_DIR=.build/debug python3 scripts/interop-fleet.py [--devices N]
       (exit 0: passed; 1: a failure; 77: PostgreSQL or HAProxy missing and not installable: skipped)
"""
import argparse
import glob
import http.client
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import uuid

BIN = os.path.abspath(os.environ.get("NSE_BIN_DIR", ".build/debug"))
HERE = os.path.dirname(os.path.abspath(__file__))
RUN = os.path.join(HERE, "..", "examples", "fleet", "run.sh")
CLIENTS = 24


def say(text):
    print(f"interop-fleet: {text}", flush=True)


def have_tools():
    pg = shutil.which("initdb") or glob.glob("/usr/lib/postgresql/*/bin/initdb")
    return bool(pg) and bool(shutil.which("haproxy") or os.path.exists("/usr/sbin/haproxy"))


class Client:
    """One keep-alive HTTP/1.1 connection, opened again after an error."""

    def __init__(self, url):
        self.host, self.port = url.split("//")[1].split(":")
        self.connection = None

    def request(self, method, path, body=None, headers=None):
        for attempt in range(2):
            if self.connection is None:
                self.connection = http.client.HTTPConnection(self.host, int(self.port), timeout=60)
            try:
                self.connection.request(method, path, body=body, headers=headers or {})
                answer = self.connection.getresponse()
                return answer.status, dict((k.lower(), v) for k, v in answer.getheaders()), answer.read()
            except (OSError, http.client.HTTPException) as error:
                self.connection.close()
                self.connection = None
                if method != "GET" or attempt == 1:
                    return None, {}, str(error).encode()
        return None, {}, b""


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--devices", type=int, default=10_000)
    options = parser.parse_args()
    if not have_tools():
        say("skipped: initdb/pg_ctl (postgresql) or haproxy not installed (make deps installs them)")
        return 77
    work = tempfile.mkdtemp(prefix="nse-interop-fleet.")
    env = dict(os.environ, NSE=os.path.join(BIN, "nse"), FLEET_DEVICES=str(options.devices), FLEET_PORT="0",
               FLEET_LEASE="4")
    started = time.monotonic()
    fleet_process = subprocess.Popen(["bash", RUN, work], env=env, stdout=subprocess.PIPE, text=True)
    failures = []
    try:
        line = fleet_process.stdout.readline()
        if not line:
            say(f"run.sh did not start the fleet (status {fleet_process.wait(30)})")
            return 1
        fleet = json.loads(line)
        say(f"fleet up in {time.monotonic() - started:.0f} s: {len(fleet['nodes'])} nodes, {options.devices} devices")
        failures += push_and_check(fleet, options.devices)
    finally:
        if fleet_process.poll() is None:
            fleet_process.send_signal(signal.SIGTERM)
            try:
                fleet_process.wait(60)
            except subprocess.TimeoutExpired:
                fleet_process.kill()
                failures.append("run.sh did not stop within 60 s of SIGTERM")
    for node in (1, 3):
        status_file = os.path.join(work, f"node-{node}.status")
        status = open(status_file).read().strip() if os.path.exists(status_file) else "missing"
        if status != "0":
            failures.append(f"node-{node} exited {status} after SIGTERM: {tail(os.path.join(work, f'node-{node}.log'))}")
    if failures:
        for failure in failures[:20]:
            say("FAIL " + failure)
        say(f"{len(failures)} failures; logs in {work}")
        return 1
    say(f"all passed in {time.monotonic() - started:.0f} s")
    shutil.rmtree(work, ignore_errors=True)
    return 0


def tail(path, lines=3):
    try:
        return " | ".join(open(path).read().splitlines()[-lines:])
    except OSError:
        return ""


def push_and_check(fleet, count):
    tokens = []
    for node in fleet["nodes"]:
        for config in sorted(glob.glob(os.path.join(node["devices"], "*", "device.json"))):
            tokens.append(json.load(open(config))["tokens"]["remote"])
    if len(tokens) != count:
        return [f"{len(tokens)} devices made, {count} asked"]
    # Interleaved, so every node's devices are pushed to all along, before and after the kill.
    tokens = [tokens[i] for k in range(3) for i in range(k, len(tokens), 3)]
    tokens = tokens[0::2] + tokens[1::2]
    victim = fleet["nodes"][1]
    lock = threading.Lock()
    state = {"next": 0, "answered": 0, "killed_at": None, "retries": 0, "statuses": {}}
    accepted = {}  # token -> (apns-id, apns-unique-id)
    started = time.monotonic()

    def worker():
        client = Client(fleet["balancer"])
        while True:
            with lock:
                if state["next"] >= len(tokens):
                    return
                token = tokens[state["next"]]
                state["next"] += 1
            apns_id = str(uuid.uuid4())
            body = json.dumps({"aps": {"alert": {"title": "Fleet", "body": "a push"}, "mutable-content": 1}})
            for attempt in range(40):
                status, headers, _ = client.request(
                    "POST", f"/3/device/{token}", body=body,
                    headers={"apns-topic": "org.example.app", "apns-push-type": "alert", "apns-id": apns_id,
                             "content-type": "application/json"})
                with lock:
                    state["statuses"][status] = state["statuses"].get(status, 0) + 1
                if status == 200:
                    with lock:
                        accepted[token] = (apns_id, headers.get("apns-unique-id"))
                        state["answered"] += 1
                        if state["killed_at"] is None and state["answered"] >= len(tokens) // 3:
                            os.kill(victim["pid"], signal.SIGKILL)
                            state["killed_at"] = state["answered"]
                    break
                with lock:
                    state["retries"] += 1
                time.sleep(0.5)

    threads = [threading.Thread(target=worker) for _ in range(CLIENTS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    seconds = time.monotonic() - started
    say(f"{len(accepted)} of {len(tokens)} pushes answered 200 in {seconds:.0f} s ({len(accepted) / seconds:.0f}/s); "
        f"{victim['name']} killed after {state['killed_at']}; answers {state['statuses']}; retries {state['retries']}")
    failures = []
    if state["killed_at"] is None:
        failures.append("the node was never killed")
    missing = [token for token in tokens if token not in accepted or accepted[token][1] is None]
    if missing:
        failures.append(f"{len(missing)} pushes never answered 200 with an apns-unique-id, e.g. {missing[:3]}")

    # Every 200 recorded exactly once, read from each live node.
    live = [node for node in fleet["nodes"] if node is not victim]
    for node in live:
        failures += check_results(node, accepted)
    failures += check_request_log(live[0], accepted)
    return failures


def check_results(node, accepted):
    """Each device's results on `node`: every 200's unique id exactly once (copies may lag: read again up to 3 min)."""
    pending = dict(accepted)
    problems = {}
    deadline = time.monotonic() + 180
    lock = threading.Lock()
    while pending and time.monotonic() < deadline:
        queue = list(pending.items())
        done = []

        def reader():
            client = Client(node["url"])
            while True:
                with lock:
                    if not queue:
                        return
                    token, (_, unique) = queue.pop()
                status, _, body = client.request("GET", f"/v1/devices/{token}/notifications?limit=1000")
                if status != 200:
                    continue
                ids = [result.get("apns_unique_id") for result in json.loads(body)]
                with lock:
                    if len(ids) != len(set(ids)):
                        problems[token] = f"a unique id recorded twice on {token}: {sorted(ids)}"
                    if ids.count(unique) == 1:
                        done.append(token)

        threads = [threading.Thread(target=reader) for _ in range(16)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        for token in done:
            pending.pop(token, None)
        if pending:
            time.sleep(1)
    failures = list(problems.values())[:5]
    if pending:
        token = next(iter(pending))
        failures.append(f"{node['name']}: {len(pending)} accepted pushes not read back once, e.g. {token} "
                        f"{pending[token]}")
    say(f"{node['name']}: {len(accepted) - len(pending)} of {len(accepted)} results read back exactly once")
    return failures


def check_request_log(node, accepted):
    client = Client(node["url"])
    status, _, body = client.request("GET", "/v1/requests?limit=1000000")
    if status != 200:
        return [f"{node['name']}: GET /v1/requests answered {status}"]
    logged = {}
    for entry in json.loads(body):
        if entry.get("status") == 200 and entry.get("apns_unique_id"):
            logged[entry["apns_unique_id"]] = logged.get(entry["apns_unique_id"], 0) + 1
    wrong = [unique for _, unique in accepted.values() if logged.get(unique) != 1]
    say(f"request log on {node['name']}: {sum(logged.values())} answers 200 logged, "
        f"{len(accepted) - len(wrong)} of the client's 200s once each")
    return [f"{len(wrong)} of the client's 200s not in the fleet's request log once"] if wrong else []


if __name__ == "__main__":
    sys.exit(main())

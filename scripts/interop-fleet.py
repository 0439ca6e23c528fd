#!/usr/bin/env python3
"""Fleet test: examples/fleet/run.sh as written (a throw-away PostgreSQL cluster, three `nse serve` nodes on it,
Debian's HAProxy in front), with 10,000 devices split between the nodes.

One push to each device goes through the balancer (HTTP/1.1 keep-alive, 24 clients, an extension process forked
per push), and a third of the way in node-2 is killed with SIGKILL: its devices, the pushes it answered 200 and had
not run, and the results it had not copied are taken over by a live node, and pushes for its devices wait for that.
A push answered otherwise (HAProxy's 502/503 for a stream node-2 took down with it, a 500 for a forward it never
answered, a 503 after the takeover window, a 429 from a node whose queue is full: all of the second round goes to one
node) is sent again with its apns-id, as a provider retries. Then:
- node-2 is started again, as run.sh started it, while a second push to each of 1,200 of its devices goes through
  the balancer: the node that took its devices over gives them back (docs/serve.md, "Coming back"), what it had
  answered 200 and not run is run by node-2;
- every push was answered 200 in the end;
- every 200 (its apns-unique-id) is recorded exactly once, and read so from each node
  (`GET /v1/devices/{token}/notifications`, the device's own store on its node and the fleet's copies elsewhere);
- every 200 is in the fleet's request log, read on any node;
- a broadcast channel made through the balancer is read through each node, and one broadcast through the balancer
  reaches, once each, Live Activities listening to it on devices of all three nodes (node-2's given back);
- run.sh stops everything on SIGTERM, and node-2 its own, each with exit 0.

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
SECOND_ROUND = 1200
# Each push's extension process forked by its node's fork server (docs/protocol.md, "Launching by fork"): what is
# tested is the fleet, and a debug build's exec spent a third of the machine on dynamic linking. A fork server's node
# killed with SIGKILL takes its fork server with it (the socket's end), which this run also shows.
SERVE_ARGS = ["--extension-launch", "fork"]


STARTED = time.monotonic()


def say(text):
    """A line of progress, stamped with the seconds since the test began (CI's time budget is read from them)."""
    print(f"interop-fleet [{time.monotonic() - STARTED:4.0f} s]: {text}", flush=True)


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
               FLEET_LEASE="4", FLEET_SERVE_ARGS=" ".join(SERVE_ARGS))
    fleet_process = subprocess.Popen(["bash", RUN, work], env=env, stdout=subprocess.PIPE, text=True)
    failures = []
    try:
        line = fleet_process.stdout.readline()
        if not line:
            say(f"run.sh did not start the fleet (status {fleet_process.wait(30)})")
            return 1
        fleet = json.loads(line)
        say(f"fleet up in {time.monotonic() - STARTED:.0f} s: {len(fleet['nodes'])} nodes, {options.devices} devices")
        failures += push_and_check(fleet, options.devices, work)
    finally:
        failures += stop_restarted()
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
    say(f"all passed in {time.monotonic() - STARTED:.0f} s")
    shutil.rmtree(work, ignore_errors=True)
    return 0


def tail(path, lines=3):
    try:
        return " | ".join(open(path).read().splitlines()[-lines:])
    except OSError:
        return ""


RESTARTED = {}


def restart(node, fleet, work):
    """Starts `node` again as run.sh started it (same port, folder, name and lease); returns once it listens."""
    log = open(os.path.join(work, f"{node['name']}.again.log"), "w")
    process = subprocess.Popen(
        [os.path.join(BIN, "nse"), "serve", "--listen", node["url"].split("//", 1)[1], "--devices", node["devices"],
         "--database", fleet["database"], "--node-name", node["name"], "--node-lease", "4", *SERVE_ARGS],
        stdout=subprocess.PIPE, stderr=log, text=True)
    RESTARTED["process"], RESTARTED["log"] = process, log.name
    line = process.stdout.readline()
    if not line:
        raise SystemExit(f"{node['name']} did not start again (status {process.wait(30)}): {tail(log.name)}")


def stop_restarted():
    process = RESTARTED.get("process")
    if process is None or process.poll() is not None:
        return [] if process is None else [f"node-2 started again exited {process.returncode} before SIGTERM"]
    started = time.monotonic()
    process.send_signal(signal.SIGTERM)
    try:
        status = process.wait(10)
    except subprocess.TimeoutExpired:
        process.kill()
        return ["node-2 started again did not stop within 10 s of SIGTERM"]
    seconds = time.monotonic() - started
    if status != 0 or seconds > 5:
        return [f"node-2 started again exited {status} {seconds:.1f} s after SIGTERM: {tail(RESTARTED['log'])}"]
    return []


def push_round(fleet, tokens, accepted, on_answered):
    """One push to each of `tokens` through the balancer, retried until answered 200; each 200's (apns-id,
    apns-unique-id) appended to `accepted[token]`. `on_answered(count)` runs under the lock after each 200."""
    lock = threading.Lock()
    state = {"next": 0, "answered": 0, "retries": 0, "statuses": {}}

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
            deadline = time.monotonic() + 90
            while time.monotonic() < deadline:
                status, headers, _ = client.request(
                    "POST", f"/3/device/{token}", body=body,
                    headers={"apns-topic": "org.example.app", "apns-push-type": "alert", "apns-id": apns_id,
                             "content-type": "application/json"})
                with lock:
                    state["statuses"][status] = state["statuses"].get(status, 0) + 1
                if status == 200:
                    with lock:
                        accepted.setdefault(token, []).append((apns_id, headers.get("apns-unique-id")))
                        state["answered"] += 1
                        on_answered(state["answered"])
                    break
                with lock:
                    state["retries"] += 1
                time.sleep(0.5)

    threads = [threading.Thread(target=worker) for _ in range(CLIENTS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return state


def push_and_check(fleet, count, work):
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
    killed = {"at": None}
    accepted = {}  # token -> [(apns-id, apns-unique-id)], one per push answered 200
    started = time.monotonic()

    def kill_a_third_in(answered):
        if killed["at"] is None and answered >= len(tokens) // 3:
            os.kill(victim["pid"], signal.SIGKILL)
            killed["at"] = answered

    first = state = push_round(fleet, tokens, accepted, kill_a_third_in)
    seconds = time.monotonic() - started
    say(f"{len(accepted)} of {len(tokens)} pushes answered 200 in {seconds:.0f} s ({len(accepted) / seconds:.0f}/s); "
        f"{victim['name']} killed after {killed['at']}; answers {state['statuses']}; retries {state['retries']}")
    failures = []
    if killed["at"] is None:
        failures.append("the node was never killed")

    # The victim's devices again, and the victim started again a third of the way in: its devices come back to it.
    own = {json.load(open(config))["tokens"]["remote"]
           for config in glob.glob(os.path.join(victim["devices"], "*", "device.json"))}
    # At most SECOND_ROUND of them: enough to have pushes for its devices arrive at every node before, during and
    # after the handback, without a second full round's minutes in CI.
    again = [token for token in tokens if token in own][:SECOND_ROUND]
    pushed_again = set(again)
    restarted = {"at": None, "thread": threading.Thread(target=restart, args=(victim, fleet, work))}

    def restart_a_third_in(answered):
        if restarted["at"] is None and answered >= len(again) // 3:
            restarted["at"] = answered
            restarted["thread"].start()

    started = time.monotonic()
    state = push_round(fleet, again, accepted, restart_a_third_in)
    # The node says its devices were given back before it listens, and the thread returns once it listens.
    if restarted["at"] is not None:
        restarted["thread"].join(30)
    given = "log" in RESTARTED and "devices given back by the fleet" in open(RESTARTED["log"]).read()
    say(f"second round: {len(again)} pushes to {victim['name']}'s devices in {time.monotonic() - started:.0f} s, "
        f"{victim['name']} started again after {restarted['at']}; answers {state['statuses']}; "
        f"retries {state['retries']}; devices given back: {given}")
    if not given:
        failures.append(f"{victim['name']} started again without its devices given back: {tail(RESTARTED.get('log', ''))}")
    # A push is refused for a reason of its own never: every refusal on the way is one a provider retries. 429
    # (a node's queue full: the pushes a node runs again when it starts, or takes over, take their slots past
    # `--queue`, docs/serve.md) is one too, as APNs's is.
    refused = {status: n for status, n in (*first["statuses"].items(), *state["statuses"].items())
               if status is not None and 400 <= status < 500 and status != 429}
    if refused:
        failures.append(f"pushes refused with 4xx while devices moved: {refused}")
    missing = [token for token in tokens
               if len(accepted.get(token, [])) != (2 if token in pushed_again else 1)
               or any(unique is None for _, unique in accepted[token])]
    if missing:
        failures.append(f"{len(missing)} devices without every push answered 200 with an apns-unique-id, "
                        f"e.g. {missing[:3]}")

    # Every 200 recorded exactly once, read from each node (the victim's own store, for its devices, again).
    for node in fleet["nodes"]:
        failures += check_results(node, accepted)
    failures += check_request_log(fleet["nodes"][0], accepted)
    failures += check_broadcast(fleet)
    return failures


def check_broadcast(fleet, per_node=3):
    """A channel made through the balancer, read through every node; activities on `per_node` devices of each node
    listening to it; one broadcast through the balancer: each activity's device records it once (read back through
    the balancer, within 60 s)."""
    balancer = Client(fleet["balancer"])
    app = "/1/apps/org.example.app"
    status, headers, _ = balancer.request(
        "POST", f"{app}/channels", body=json.dumps({"message-storage-policy": 1, "push-type": "LiveActivity"}),
        headers={"content-type": "application/json"})
    channel = headers.get("apns-channel-id")
    if status != 201 or not channel:
        return [f"channel not made through the balancer: {status}"]
    failures = []
    for node in fleet["nodes"]:
        status, _, _ = Client(node["url"]).request("GET", f"{app}/channels", headers={"apns-channel-id": channel})
        if status != 200:
            failures.append(f"{node['name']}: the channel made through the balancer read {status}")
    listening = {}
    for node in fleet["nodes"]:
        for config in sorted(glob.glob(os.path.join(node["devices"], "*", "device.json")))[:per_node]:
            folder = os.path.dirname(config)
            started = subprocess.run(
                [os.path.join(BIN, "nse"), "device", "activity", "start", folder, "--attributes-type", "Score",
                 "--content-state", '{"home":0}', "--channel", channel], capture_output=True, text=True, timeout=60)
            if started.returncode != 0:
                return failures + [f"activity not started on {folder}: {started.stderr.strip()}"]
            listening[json.load(open(config))["tokens"]["remote"]] = node["name"]
    payload = {"aps": {"timestamp": int(time.time()), "event": "update", "content-state": {"home": 1}}}
    status, _, body = balancer.request(
        "POST", "/4/broadcasts/apps/org.example.app", body=json.dumps(payload),
        headers={"apns-push-type": "liveactivity", "apns-channel-id": channel, "apns-expiration": "0",
                 "content-type": "application/json"})
    if status != 200:
        return failures + [f"broadcast through the balancer answered {status}: {body[:200]!r}"]
    pending = dict(listening)
    deadline = time.monotonic() + 60
    while pending and time.monotonic() < deadline:
        for token in list(pending):
            status, _, body = balancer.request("GET", f"/v1/devices/{token}/notifications?limit=1000")
            got = [result for result in (json.loads(body) if status == 200 else [])
                   if (result.get("live_activity") or {}).get("channel_id") == channel]
            if len(got) > 1:
                failures.append(f"{token} ({listening[token]}) recorded the broadcast {len(got)} times")
            if got:
                pending.pop(token)
        if pending:
            time.sleep(0.5)
    say(f"broadcast through the balancer: {len(listening) - len(pending)} of {len(listening)} listening activities "
        f"on {len(fleet['nodes'])} nodes had it")
    if pending:
        failures.append(f"{len(pending)} listening activities never had the broadcast: "
                        f"{sorted(set(pending.values()))}")
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
                    token, pushes = queue.pop()
                status, _, body = client.request("GET", f"/v1/devices/{token}/notifications?limit=1000")
                if status != 200:
                    continue
                ids = [result.get("apns_unique_id") for result in json.loads(body)]
                with lock:
                    if len(ids) != len(set(ids)):
                        problems[token] = f"a unique id recorded twice on {token}: {sorted(ids)}"
                    if all(ids.count(unique) == 1 for _, unique in pushes):
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
    say(f"{node['name']}: the results of {len(accepted) - len(pending)} of {len(accepted)} devices read back exactly "
        f"once")
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
    uniques = [unique for pushes in accepted.values() for _, unique in pushes]
    wrong = [unique for unique in uniques if logged.get(unique) != 1]
    say(f"request log on {node['name']}: {sum(logged.values())} answers 200 logged, "
        f"{len(uniques) - len(wrong)} of the client's {len(uniques)} 200s once each")
    return [f"{len(wrong)} of the client's 200s not in the fleet's request log once"] if wrong else []


if __name__ == "__main__":
    sys.exit(main())

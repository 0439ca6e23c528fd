#!/usr/bin/env python3
"""make soak: `nse serve` and `nse sip-server` under mixed load for N minutes, with faults injected, then the
promise checked: every push answered 200 is recorded exactly once, every MESSAGE the SIP server accepted is shown
once or still held (by the server, or in the device's App Group store), descriptors and memory flat, and both
servers exit 0 within 5 s of SIGTERM.

Load: sealed alert pushes over HTTP/1.1 keep-alive to `nse serve`; sealed MESSAGEs through `nse send` to
`nse sip-server`, which holds them and pushes their Call-ID to `nse serve`, whose extension fetches them over SIP.
Faults: bursts of TCP probes (connect, close), stalled clients (a partial HTTP/2 preface, or nothing, held open),
extension processes killed with SIGKILL, `nse serve` killed with SIGKILL (a crash) and started again on the same
state (what it answered 200 and had not run, it runs then), `nse sip-server` restarted on the same database, and
(as root) the state's file system filled to the last byte for a few seconds.

Loopback only; every loop is bounded in time; only processes this script started are signalled.
"""
import argparse
import http.client
import json
import os
import random
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
import uuid

BIN = os.environ.get("NSE_BIN_DIR", ".build/release")
NSE = os.path.join(BIN, "nse")
DEVICES = 3


def run(argv, **kwargs):
    kwargs.setdefault("timeout", 60)
    return subprocess.run(argv, check=True, **kwargs)


def listening_line(process, what, timeout=30):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        line = process.stdout.readline()
        if line:
            return json.loads(line)
        if process.poll() is not None:
            break
    raise SystemExit(f"soak: {what} printed no listening line (exit {process.poll()})")


def descriptors(pid):
    try:
        return len(os.listdir(f"/proc/{pid}/fd"))
    except OSError:
        return -1


def rss_kb(pid):
    try:
        with open(f"/proc/{pid}/status") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return -1


def stop(process, what, report):
    """SIGTERM, then the exit status and how long it took (killed after 10 s: reported as a failure)."""
    start = time.monotonic()
    process.send_signal(signal.SIGTERM)
    try:
        code = process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
        code = "hung"
    seconds = time.monotonic() - start
    report.setdefault("sigterm", []).append({"server": what, "exit": code, "seconds": round(seconds, 2)})
    return code == 0 and seconds <= 5


class SmallDisk:
    """The servers' state on a tmpfs of its own (as root), so that the disk can be filled for real."""

    def __init__(self, path, megabytes):
        self.path = path
        self.mounted = False
        os.makedirs(path, exist_ok=True)
        if os.geteuid() == 0:
            result = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={megabytes}m", "tmpfs", path],
                                    capture_output=True)
            self.mounted = result.returncode == 0

    def fill_for(self, seconds):
        filler = os.path.join(self.path, f"filler-{uuid.uuid4().hex}")
        chunk = b"\0" * (1 << 20)
        try:
            with open(filler, "wb") as file:
                for _ in range(100_000):
                    file.write(chunk)
                    file.flush()
        except OSError:
            pass
        time.sleep(seconds)
        os.unlink(filler)

    def close(self):
        if self.mounted:
            subprocess.run(["umount", "-l", self.path], capture_output=True)


class Soak:
    def __init__(self, work, minutes, seed, serve_crashes=True):
        self.work = work
        self.serve_crashes = serve_crashes
        self.minutes = minutes
        self.random = random.Random(seed)
        self.stopping = threading.Event()
        self.lock = threading.Lock()
        self.accepted = []            # (apns_id, token) answered 200
        self.refused = {}             # status -> count
        self.push_errors = 0
        self.sent_messages = []       # (call_id, device index, text)
        self.send_failures = 0
        self.faults = {}
        self.report = {}
        self.disk = SmallDisk(os.path.join(work, "state"), 256)
        self.serve_lock = threading.Lock()     # held while nse serve is killed and started again
        self.serve_restarted_at = None
        self.state = self.disk.path

    # --- set-up ---------------------------------------------------------------------------------------------------
    def start(self):
        self.sip_db = os.path.join(self.state, "sip")
        self.sip_port = None
        self.devices = [os.path.join(self.state, f"bob{index}") for index in range(DEVICES)]
        for index, device in enumerate(self.devices):
            run([NSE, "device", "init", device, "--filtering"], stdout=subprocess.DEVNULL)
        self.start_serve(0)
        self.start_sip_server()
        self.tokens = []
        for index, device in enumerate(self.devices):
            run([NSE, "device", "set", device, "--sip-account", f"sip:bob{index}@example.org", "--sip-proxy", self.proxy],
                stdout=subprocess.DEVNULL)
            run([NSE, "device", "register", device], stdout=subprocess.DEVNULL)
            with open(os.path.join(device, "device.json")) as file:
                config = json.load(file)
            self.tokens.append(config["tokens"]["remote"])
            self.bundle_id = config["bundle_id"]
        self.payloads = []
        for index, device in enumerate(self.devices):
            plaintext = json.dumps({"type": "message", "from": "sip:alice@example.org", "display_name": "Alice",
                                    "text": f"soak push to bob{index}"})
            envelope = run([NSE, "seal", "--device", device], input=plaintext.encode(),
                           capture_output=True).stdout.decode().strip()
            self.payloads.append(json.dumps({"aps": {"alert": {"loc-key": "IM_MSG", "loc-args": ["Alice"]},
                                                     "mutable-content": 1}, "enc": envelope}).encode())

    def start_serve(self, port):
        """nse serve on `port` (0: any), on the soak's devices and state."""
        env = dict(os.environ, NSE_LOG_LEVEL="warning")
        argv = [NSE, "serve", "--listen", f"127.0.0.1:{port}", "--concurrency", "4", "--queue", "4096"]
        for device in self.devices:
            argv += ["--device", device]
        self.serve_err = open(os.path.join(self.work, "serve.err"), "ab")
        self.serve = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=self.serve_err, env=env)
        self.url = listening_line(self.serve, "nse serve")["listening"]
        self.host, self.port = self.url.split("//")[1].split(":")
        self.port = int(self.port)

    def start_sip_server(self):
        listen = f"tcp:127.0.0.1:{self.sip_port or 0}"
        self.sip_err = open(os.path.join(self.work, "sip-server.err"), "ab")
        self.sip = subprocess.Popen([NSE, "sip-server", "--listen", listen, "--db", self.sip_db, "--push-url", self.url,
                                     "--accept-timeout", "0.3"],
                                    stdout=subprocess.PIPE, stderr=self.sip_err)
        listening = listening_line(self.sip, "nse sip-server")["listening"][0]
        self.proxy = listening["uri"]
        self.sip_port = listening["port"]

    # --- load -----------------------------------------------------------------------------------------------------
    def pusher(self, rate):
        connection = None
        interval = 1.0 / rate
        next_at = time.monotonic()
        while not self.stopping.is_set():
            next_at += interval
            index = self.random.randrange(DEVICES)
            apns_id = str(uuid.uuid4())
            headers = {"apns-topic": self.bundle_id, "apns-push-type": "alert", "apns-id": apns_id,
                       "content-type": "application/json"}
            try:
                if connection is None:
                    connection = http.client.HTTPConnection(self.host, self.port, timeout=30)
                connection.request("POST", f"/3/device/{self.tokens[index]}", body=self.payloads[index], headers=headers)
                response = connection.getresponse()
                response.read()
                with self.lock:
                    if response.status == 200:
                        self.accepted.append((apns_id, self.tokens[index]))
                    else:
                        self.refused[response.status] = self.refused.get(response.status, 0) + 1
            except (OSError, http.client.HTTPException):
                # No answer: not accepted (a client would retry with the same apns-id; this one counts it lost to it).
                with self.lock:
                    self.push_errors += 1
                if connection is not None:
                    connection.close()
                connection = None
            delay = next_at - time.monotonic()
            if delay > 0:
                self.stopping.wait(delay)
            else:
                next_at = time.monotonic()
        if connection is not None:
            connection.close()

    def sender(self, rate):
        interval = 1.0 / rate
        count = 0
        while not self.stopping.is_set():
            index = self.random.randrange(DEVICES)
            text = f"soak message {count}"
            count += 1
            result = subprocess.run([NSE, "send", "--proxy", self.proxy, "--from", "sip:alice@example.org",
                                     "--to", f"sip:bob{index}@example.org", "--seal-to", self.devices[index],
                                     "--display-name", "Alice", "--text", text, "--timeout", "5"],
                                    capture_output=True, timeout=30)
            with self.lock:
                if result.returncode == 0:
                    self.sent_messages.append((json.loads(result.stdout)["call_id"], index, text))
                else:
                    self.send_failures += 1
            self.stopping.wait(interval)

    # --- faults ---------------------------------------------------------------------------------------------------
    def fault(self, name):
        with self.lock:
            self.faults[name] = self.faults.get(name, 0) + 1

    def probes(self):
        for _ in range(200):
            try:
                socket.create_connection((self.host, self.port), timeout=2).close()
            except OSError:
                pass
        self.fault("probes (200 connect/close)")

    def stalled(self):
        sockets = []
        for number in range(30):
            try:
                client = socket.create_connection((self.host, self.port), timeout=2)
                if number % 3 == 0:
                    client.sendall(b"PRI * HT")
                elif number % 3 == 1:
                    client.sendall(b"POST /3/device/")
                sockets.append(client)
            except OSError:
                pass
        self.stopping.wait(8)
        for client in sockets:
            client.close()
        self.fault("stalled clients (30, held 8 s)")

    def kill_extension(self):
        """SIGKILL one running extension process of nse serve (a child this script's server started)."""
        for _ in range(50):
            for pid in os.listdir("/proc"):
                if not pid.isdigit():
                    continue
                try:
                    with open(f"/proc/{pid}/stat") as stat:
                        parent = int(stat.read().rsplit(")", 1)[1].split()[1])
                    exe = os.readlink(f"/proc/{pid}/exe")
                except OSError:
                    continue
                if parent == self.serve.pid and exe.endswith("nse-extension"):
                    try:
                        os.kill(int(pid), signal.SIGKILL)
                        self.fault("extension killed")
                        return
                    except OSError:
                        pass
            time.sleep(0.02)

    def restart_sip_server(self):
        if not stop(self.sip, "nse sip-server (restart)", self.report):
            self.report.setdefault("failures", []).append("nse sip-server did not exit 0 within 5 s of SIGTERM")
        self.sip_err.close()
        self.start_sip_server()
        self.fault("sip-server restarted")

    def kill_serve(self):
        """A crash: SIGKILL nse serve, then start it again on the same port and state. What it answered 200 and had
        not run yet runs then; its memory baseline is taken again once the new process has warmed up."""
        with self.serve_lock:
            self.serve.kill()
            self.serve.wait()
            self.serve_err.close()
            # The port is free again at once (the listener sets SO_REUSEADDR); a few tries in case it is not.
            for attempt in range(20):
                try:
                    self.start_serve(self.port)
                    break
                except SystemExit:
                    if attempt == 19:
                        raise
                    time.sleep(0.25)
            self.serve_restarted_at = time.monotonic()
        self.fault("serve killed (SIGKILL) and restarted")

    def full_disk(self):
        if not self.disk.mounted:
            return
        self.disk.fill_for(3)
        self.fault("disk full for 3 s")

    def faults_loop(self):
        kinds = [self.probes, self.stalled, self.kill_extension, self.kill_extension, self.restart_sip_server,
                 self.full_disk] + ([self.kill_serve] if self.serve_crashes else [])
        while not self.stopping.wait(self.random.uniform(5, 12)):
            self.random.choice(kinds)()

    # --- the run --------------------------------------------------------------------------------------------------
    def sample(self):
        return {"serve": {"fds": descriptors(self.serve.pid), "rss_kb": rss_kb(self.serve.pid)},
                "sip-server": {"fds": descriptors(self.sip.pid), "rss_kb": rss_kb(self.sip.pid)}}

    def go(self):
        self.start()
        threads = [threading.Thread(target=self.pusher, args=(12,)), threading.Thread(target=self.sender, args=(2,)),
                   threading.Thread(target=self.faults_loop)]
        for thread in threads:
            thread.start()
        end = time.monotonic() + self.minutes * 60
        warm = min(60, self.minutes * 60 / 4)
        time.sleep(warm)
        baseline = self.sample()
        baseline_of = None
        while time.monotonic() < end:
            time.sleep(min(5, max(0, end - time.monotonic())))
            with self.serve_lock:
                exited = self.serve.poll()
                restarted = self.serve_restarted_at
            if exited is not None:
                self.report.setdefault("failures", []).append(f"nse serve exited during the soak ({exited})")
                break
            # A restarted nse serve (the crash fault) is a new process: its baseline is its own, once warmed up.
            if restarted is not None and restarted != baseline_of and time.monotonic() - restarted >= 30:
                with self.serve_lock:
                    baseline["serve"] = self.sample()["serve"]
                baseline_of = restarted
        self.stopping.set()
        for thread in threads:
            thread.join(timeout=120)
        self.settle()
        final = self.sample()
        self.check(baseline, final)

    def diagnose(self, call_ids):
        """Where each lost MESSAGE went: the server's delivery mark, each App Group's row, and the results of the
        pushes that named it (outcome, whether rerun after a serve crash, the reason's first words). No content."""
        pushes = {}
        for record in self.records():
            call_id = (record.get("notification") or {}).get("call-id")
            if call_id in call_ids:
                pushes.setdefault(call_id, []).append(
                    {"outcome": record.get("outcome"), "redelivered": record.get("redelivered", False),
                     "reason": " ".join((record.get("reason") or "").split()[:2])})
        server = sqlite3.connect(f"file:{os.path.join(self.sip_db, 'sip-server.db')}?mode=ro", uri=True, timeout=30)
        found = []
        for call_id in call_ids:
            row = server.execute("SELECT delivered_at IS NOT NULL, attempts FROM held_message WHERE call_id = ?",
                                 (call_id,)).fetchone()
            states = []
            for device in self.devices:
                path = os.path.join(device, "app-group.db")
                if os.path.exists(path):
                    device_db = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=30)
                    states += [r[0] for r in device_db.execute("SELECT state FROM messages WHERE call_id = ?",
                                                                (call_id,))]
                    device_db.close()
            found.append({"call_id": call_id, "delivered_by_server": bool(row and row[0]),
                          "attempts": row[1] if row else None, "app_group": states,
                          "pushes": pushes.get(call_id, [])})
        server.close()
        return found

    def records(self):
        """Every recorded result of every device, as nse serve's GET returns them."""
        for token in self.tokens:
            connection = http.client.HTTPConnection(self.host, self.port, timeout=60)
            connection.request("GET", f"/v1/devices/{token}/notifications?limit=100000")
            records = json.loads(connection.getresponse().read())
            connection.close()
            yield from records

    def results(self):
        seen = {}
        shown_call_ids = {}
        for record in self.records():
            apns_id = record.get("apns_id")
            seen[apns_id] = seen.get(apns_id, 0) + 1
            info = (record.get("extension") or {}).get("info") or {}
            if record.get("outcome") == "rewritten" and info.get("source") == "sip" and info.get("call_id"):
                shown_call_ids[info["call_id"]] = shown_call_ids.get(info["call_id"], 0) + 1
        return seen, shown_call_ids

    def settle(self, timeout=180):
        """Waits until every push answered 200 is recorded (the queue has drained)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            seen, _ = self.results()
            if all(apns_id in seen for apns_id, _ in self.accepted):
                break
            time.sleep(2)
        time.sleep(3)  # the SIP server's last pushes

    def held_by_server(self):
        path = os.path.join(self.sip_db, "sip-server.db")
        connection = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=30)
        try:
            return {row[0] for row in connection.execute("SELECT call_id FROM held_message WHERE delivered_at IS NULL")}
        finally:
            connection.close()

    def held_by_devices(self):
        held = set()
        for device in self.devices:
            path = os.path.join(device, "app-group.db")
            if not os.path.exists(path):
                continue
            connection = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=30)
            try:
                held |= {row[0] for row in connection.execute("SELECT call_id FROM messages WHERE state IN ('held', 'claimed', 'unnotified')")}
            finally:
                connection.close()
        return held

    def check(self, baseline, final):
        failures = self.report.setdefault("failures", [])
        seen, shown = self.results()
        missing = [apns_id for apns_id, _ in self.accepted if apns_id not in seen]
        duplicated = [apns_id for apns_id, _ in self.accepted if seen.get(apns_id, 0) > 1]
        held_server = self.held_by_server()
        held_device = self.held_by_devices()
        lost = [call_id for call_id, _, _ in self.sent_messages
                if call_id not in shown and call_id not in held_server and call_id not in held_device]
        shown_twice = [call_id for call_id, count in shown.items() if count > 1]
        if missing:
            failures.append(f"{len(missing)} pushes answered 200 were never recorded (first: {missing[0]})")
        if duplicated:
            failures.append(f"{len(duplicated)} pushes answered 200 were recorded more than once")
        if lost:
            failures.append(f"{len(lost)} MESSAGEs accepted by the SIP server are neither shown nor held (first: {lost[0]})")
            self.report["lost_messages"] = self.diagnose(lost[:20])
        if shown_twice:
            failures.append(f"{len(shown_twice)} MESSAGEs were shown more than once")
        for server in ("serve", "sip-server"):
            before, after = baseline[server], final[server]
            # The SIP server was restarted: its baseline is its own process's, so compare only serve's memory.
            if server == "serve" and after["fds"] > before["fds"] + 16:
                failures.append(f"nse serve's descriptors grew from {before['fds']} to {after['fds']}")
            if server == "serve" and after["rss_kb"] > max(before["rss_kb"] * 1.5, before["rss_kb"] + 32 * 1024):
                failures.append(f"nse serve's memory grew from {before['rss_kb']} KB to {after['rss_kb']} KB")
        serve_ok = stop(self.serve, "nse serve", self.report)
        sip_ok = stop(self.sip, "nse sip-server", self.report)
        if not serve_ok:
            failures.append("nse serve did not exit 0 within 5 s of SIGTERM")
        if not sip_ok:
            failures.append("nse sip-server did not exit 0 within 5 s of SIGTERM")
        self.report.update({
            "minutes": self.minutes,
            "pushes": {"answered_200": len(self.accepted), "refused": self.refused, "no_answer": self.push_errors,
                       "recorded_once": sum(1 for apns_id, _ in self.accepted if seen.get(apns_id) == 1),
                       "missing": len(missing), "duplicated": len(duplicated)},
            "messages": {"accepted_by_sip_server": len(self.sent_messages), "send_failures": self.send_failures,
                         "shown": sum(1 for call_id, _, _ in self.sent_messages if call_id in shown),
                         "held_by_server": sum(1 for call_id, _, _ in self.sent_messages if call_id in held_server),
                         "held_in_app_group": sum(1 for call_id, _, _ in self.sent_messages if call_id in held_device),
                         "lost": len(lost), "shown_twice": len(shown_twice)},
            "faults": self.faults,
            "resources": {"after_warm_up": baseline, "at_end": final},
            "full_disk_fault": "on" if self.disk.mounted else "off (needs root to mount a tmpfs)",
        })


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--minutes", type=float, default=float(os.environ.get("SOAK_MINUTES", "10")))
    parser.add_argument("--seed", type=int, default=int(time.time()))
    parser.add_argument("--keep", action="store_true", help="keep the work folder (logs, databases)")
    parser.add_argument("--no-serve-crashes", action="store_true",
                        help="leave out the fault that kills nse serve with SIGKILL and starts it again (to tell "
                             "a loss it causes from one the other faults cause)")
    args = parser.parse_args()
    if not os.access(NSE, os.X_OK):
        raise SystemExit(f"soak: {NSE} is not built (set NSE_BIN_DIR)")
    work = tempfile.mkdtemp(prefix="nse-soak-")
    soak = Soak(work, args.minutes, args.seed, serve_crashes=not args.no_serve_crashes)
    try:
        soak.go()
    finally:
        for process in (getattr(soak, "serve", None), getattr(soak, "sip", None)):
            if process is not None and process.poll() is None:
                process.kill()
                process.wait()
        if soak.report.get("failures") and soak.disk.mounted:
            # The state is on a tmpfs that is unmounted next: keep a copy to look into.
            shutil.copytree(soak.state, os.path.join(work, "state-at-end"), dirs_exist_ok=True,
                            ignore=shutil.ignore_patterns("filler-*"))
        soak.disk.close()
    report = soak.report
    report["seed"] = args.seed
    report["work"] = work
    print(json.dumps(report, indent=2))
    pushes, messages = report["pushes"], report["messages"]
    print(f"soak: {args.minutes:g} min; pushes answered 200: {pushes['answered_200']}, recorded exactly once: "
          f"{pushes['recorded_once']}; MESSAGEs accepted: {messages['accepted_by_sip_server']}, shown: "
          f"{messages['shown']}, still held: {messages['held_by_server'] + messages['held_in_app_group']}, lost: "
          f"{messages['lost']}; faults: {sum(report['faults'].values())}")
    if report["failures"]:
        for failure in report["failures"]:
            print(f"soak: FAILED: {failure}")
        print(f"soak: logs and databases kept in {work}")
        sys.exit(1)
    if not args.keep:
        subprocess.run(["rm", "-rf", work])
    print("soak: passed")


if __name__ == "__main__":
    main()

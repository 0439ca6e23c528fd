#!/usr/bin/env python3
"""make soak: `nse serve` and `nse sip-server` under mixed load for N minutes, with faults injected, then the
promise checked: every push answered 200 is recorded exactly once, every MESSAGE the SIP server accepted is shown
once or still held (by the server, or in the device's App Group store), descriptors and memory flat for both
servers, and both servers exit 0 within 5 s of SIGTERM.

Load: sealed alert pushes over HTTP/1.1 keep-alive to `nse serve`; sealed MESSAGEs through `nse send` to
`nse sip-server`, which holds them and pushes their Call-ID to `nse serve`, whose extension fetches them over SIP.
Faults: bursts of TCP probes (connect, close), stalled clients (a partial HTTP/2 preface, or nothing, held open),
extension processes killed with SIGKILL, `nse serve` killed with SIGKILL (a crash) and started again on the same
state (what it answered 200 and had not run, it runs then), `nse sip-server` restarted on the same database, and
the state's file system (a tmpfs of its own, mounted as root) filled to the last byte for a few seconds. Each
kind is dealt once, in a shuffled order, before any is dealt again.

What else fails the run (a soak that checked nothing must not pass):
- Volume. Fewer than PUSH_FLOOR_PER_MINUTE × minutes pushes answered 200, or recorded `rewritten` (the extension
  opened the sealed alert), or fewer than MESSAGE_FLOOR_PER_MINUTE × minutes MESSAGEs accepted by the SIP server,
  or shown. The floors are about a third of what a one-minute `make test` run achieves on a 2-core machine
  (measured, debug build: 676–713 pushes answered 200 of the 720 the rate allows; 75–102 MESSAGEs accepted, the
  lower figures with a build running beside it, nearly all of them shown), so a loaded machine passes and zero
  traffic, or a trickle, fails. The floors are printed beside the counts.
- Refusals. Every push not answered 200 (by status and reason, or the connection error when there was no answer)
  and every MESSAGE `nse send` did not get a 2xx for is counted. A refusal is expected when its request overlapped
  (give or take GRACE seconds) a fault that explains it: `nse serve` killed, for pushes; `nse sip-server`
  restarted, for MESSAGEs; the disk full, for both (500 InternalServerError, 500 Message Not Stored). The others
  are unexpected: more than UNEXPECTED_REFUSALS (2) of either kind fails the run, a slack for a loaded machine's
  stray time-out; a server that refuses or drops work with nothing to explain it shows up as many more than that.
- Resources, for each server alike: descriptors at the end, both servers idle again, more than 16 above what the
  same server had idle at the start (a restarted server opens the same ones); resident memory at the end more than
  1.5 × (and 32 MB above) what that process had once warmed up under load (a restarted process is measured again
  after its own warm-up; one restarted too late for that is held to its predecessor's figure).
- Faults that cannot be injected: no tmpfs (not root, or mount refused: pass --no-full-disk to leave that fault
  out knowingly), a disk that does not fill, no extension process to kill within 5 s, no probe or stalled client
  that connects, a server that does not start again, a load or fault thread that dies.

--zero-traffic runs it all without load (the run must fail on its floors); --self-check does that and passes only
if it did, showing that the floors bite.

SOAK_SERVE_ARGS adds options to `nse serve` (e.g. `--extension-launch fork`: each push's process forked by the
extension's fork server, which the crashes and SIGTERMs then take down with the server).

Loopback only; every loop is bounded in time; only processes this script started are signalled.
"""
import argparse
import errno
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
PUSH_RATE = 12                   # pushes a second, one keep-alive connection
SEND_RATE = 2                    # MESSAGEs a second at most (one `nse send` process each, in turn)
PUSH_FLOOR_PER_MINUTE = 240      # a one-minute run answers 676–713 (the rate allows 720)
MESSAGE_FLOOR_PER_MINUTE = 33    # a one-minute run gets 75–102 accepted (each `nse send` is a process start)
UNEXPECTED_REFUSALS = 2          # of each kind, refusals no injected fault explains
GRACE = 2.0                      # seconds after a fault's end that its refusals are still expected
FD_SLACK = 16
EXPLAINS = {                     # fault -> the kinds of request it may have refused
    "serve killed (SIGKILL) and restarted": {"push"},
    "sip-server restarted": {"message"},
    "disk full for 3 s": {"push", "message"},
}


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

    def __init__(self, path, megabytes, wanted=True):
        self.path = path
        self.mounted = False
        self.why_not = None
        os.makedirs(path, exist_ok=True)
        if not wanted:
            self.why_not = "left out (--no-full-disk)"
        elif os.geteuid() != 0:
            self.why_not = "mounting a tmpfs needs root"
        else:
            result = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={megabytes}m", "tmpfs", path],
                                    capture_output=True)
            self.mounted = result.returncode == 0
            if not self.mounted:
                self.why_not = f"mount -t tmpfs failed ({result.stderr.decode(errors='replace').strip()})"

    def fill_for(self, seconds):
        """Fills the file system to the last byte, holds it full for `seconds`, frees it. Returns None when it was
        full, else why it could not be filled."""
        filler = os.path.join(self.path, f"filler-{uuid.uuid4().hex}")
        chunk = b"\0" * (1 << 20)
        problem = "it never ran out of space"
        try:
            with open(filler, "wb") as file:
                for _ in range(100_000):
                    file.write(chunk)
                    file.flush()
        except OSError as error:
            problem = None if error.errno == errno.ENOSPC else f"writing the filler: {error}"
        try:
            if problem is None:
                free = os.statvfs(self.path)
                if free.f_bavail * free.f_frsize >= 64 * 1024:
                    problem = f"{free.f_bavail * free.f_frsize} bytes still free after ENOSPC"
            time.sleep(seconds)
        finally:
            try:
                os.unlink(filler)
            except FileNotFoundError:
                problem = problem or "the filler file was never created"
        return problem

    def close(self):
        if self.mounted:
            subprocess.run(["umount", "-l", self.path], capture_output=True)


class Soak:
    def __init__(self, work, minutes, seed, serve_crashes=True, full_disk=True, traffic=True):
        self.work = work
        self.serve_crashes = serve_crashes
        self.traffic = traffic
        self.minutes = minutes
        self.random = random.Random(seed)
        self.stopping = threading.Event()
        self.lock = threading.Lock()
        self.t0 = time.monotonic()
        self.accepted = []            # (apns_id, token) answered 200
        self.push_attempts = 0
        self.push_refusals = []       # (start, end, "429 TooManyRequests" | "no answer (ConnectionResetError)")
        self.sent_messages = []       # (call_id, device index, text)
        self.send_attempts = 0
        self.send_refusals = []       # (start, end, "500 Message Not Stored" | "no final answer (exit 74)" | …)
        self.faults = {}
        self.windows = []             # (fault, start, end): when an injected fault was disrupting
        self.connect_failures = {}    # fault -> connections to nse serve that failed while injecting it
        self.report = {"failures": []}
        self.disk = SmallDisk(os.path.join(work, "state"), 256, wanted=full_disk)
        self.serve_lock = threading.Lock()     # held while nse serve is killed and started again
        self.sip_lock = threading.Lock()       # held while nse sip-server is stopped and started again
        self.restarted_at = {"serve": None, "sip-server": None}
        self.state = self.disk.path

    def fail(self, line):
        with self.lock:
            self.report["failures"].append(line)

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
        argv += os.environ.get("SOAK_SERVE_ARGS", "").split()  # e.g. --extension-launch fork
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
            started = time.monotonic()
            try:
                if connection is None:
                    connection = http.client.HTTPConnection(self.host, self.port, timeout=30)
                connection.request("POST", f"/3/device/{self.tokens[index]}", body=self.payloads[index], headers=headers)
                response = connection.getresponse()
                body = response.read()
                with self.lock:
                    self.push_attempts += 1
                    if response.status == 200:
                        self.accepted.append((apns_id, self.tokens[index]))
                    else:
                        try:
                            reason = json.loads(body).get("reason", "")
                        except ValueError:
                            reason = ""
                        self.push_refusals.append((started, time.monotonic(), f"{response.status} {reason}".strip()))
            except (OSError, http.client.HTTPException) as error:
                # No answer: not accepted (a client would retry with the same apns-id; this one counts it lost to it).
                with self.lock:
                    self.push_attempts += 1
                    self.push_refusals.append((started, time.monotonic(), f"no answer ({type(error).__name__})"))
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
            started = time.monotonic()
            try:
                result = subprocess.run([NSE, "send", "--proxy", self.proxy, "--from", "sip:alice@example.org",
                                         "--to", f"sip:bob{index}@example.org", "--seal-to", self.devices[index],
                                         "--display-name", "Alice", "--text", text, "--timeout", "5"],
                                        capture_output=True, timeout=30)
                answer = None
                try:
                    answer = json.loads(result.stdout)
                except ValueError:
                    pass
                if not isinstance(answer, dict):
                    answer = None
                if result.returncode == 0 and answer and answer.get("call_id"):
                    outcome = None
                elif result.returncode == 1 and answer:
                    outcome = f"{answer.get('status')} {answer.get('reason', '')}".strip()
                else:
                    error = result.stderr.decode(errors="replace").strip().splitlines()
                    error = error[-1].split("send failed: ", 1)[-1] if error else ""
                    if result.returncode != 74:
                        outcome = f"exit {result.returncode} ({error[:80]})"
                    elif error.startswith("no final response"):
                        outcome = "no final answer within 5 s"
                    else:
                        outcome = f"no answer ({error[:80]})"
            except subprocess.TimeoutExpired:
                outcome = "nse send hung for 30 s"
            except OSError as error:      # e.g. ETXTBSY: the binary is being rebuilt under the soak
                outcome = f"could not start nse send ({error.strerror})"
            with self.lock:
                self.send_attempts += 1
                if outcome is None:
                    self.sent_messages.append((answer["call_id"], index, text))
                else:
                    self.send_refusals.append((started, time.monotonic(), outcome))
            self.stopping.wait(interval)

    # --- faults ---------------------------------------------------------------------------------------------------
    def fault(self, name, started=None):
        """Counts an injected fault; with `started`, also the window in which it may have refused requests."""
        with self.lock:
            self.faults[name] = self.faults.get(name, 0) + 1
            if started is not None:
                self.windows.append((name, started, time.monotonic()))

    def not_injected(self, name, why):
        self.fail(f"fault not injected: {name}: {why}")

    def connect_failed(self, name):
        with self.lock:
            self.connect_failures[name] = self.connect_failures.get(name, 0) + 1

    def probes(self):
        name = "probes (200 connect/close)"
        connected = 0
        for _ in range(200):
            try:
                socket.create_connection((self.host, self.port), timeout=2).close()
                connected += 1
            except OSError:
                self.connect_failed(name)
        if connected == 0:
            self.not_injected(name, "none of 200 connections to nse serve succeeded")
            return
        self.fault(name)

    def stalled(self):
        name = "stalled clients (30, held 8 s)"
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
                self.connect_failed(name)
        if not sockets:
            self.not_injected(name, "none of 30 connections to nse serve succeeded")
            return
        self.stopping.wait(8)
        for client in sockets:
            client.close()
        self.fault(name)

    def extension_pids(self):
        """The running extension processes of nse serve (children this script's server started)."""
        pids = []
        for pid in os.listdir("/proc"):
            if not pid.isdigit():
                continue
            try:
                with open(f"/proc/{pid}/stat") as stat:
                    parent = int(stat.read().rsplit(")", 1)[1].split()[1])
                exe = os.readlink(f"/proc/{pid}/exe")
            except (OSError, ValueError, IndexError):
                continue
            if parent == self.serve.pid and exe.endswith("nse-extension"):
                pids.append(int(pid))
        return pids

    def kill_extension(self):
        """SIGKILL one running extension process of nse serve; none within 5 s is a fault not injected."""
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and not self.stopping.is_set():
            for pid in self.extension_pids():
                try:
                    os.kill(pid, signal.SIGKILL)
                    self.fault("extension killed")
                    return
                except OSError:
                    pass
            time.sleep(0.01)
        if not self.stopping.is_set():
            self.not_injected("extension killed", "nse serve ran no extension process for 5 s")

    def restart_sip_server(self):
        started = time.monotonic()
        with self.sip_lock:
            if not stop(self.sip, "nse sip-server (restart)", self.report):
                self.fail("nse sip-server did not exit 0 within 5 s of SIGTERM")
            self.sip_err.close()
            try:
                self.start_sip_server()
            except SystemExit as error:
                self.not_injected("sip-server restarted", f"it did not start again: {error}")
                return
            self.restarted_at["sip-server"] = time.monotonic()
        self.fault("sip-server restarted", started)

    def kill_serve(self):
        """A crash: SIGKILL nse serve, then start it again on the same port and state. What it answered 200 and had
        not run yet runs then; its memory baseline is taken again once the new process has warmed up."""
        started = time.monotonic()
        with self.serve_lock:
            self.serve.kill()
            self.serve.wait()
            self.serve_err.close()
            # The port is free again at once (the listener sets SO_REUSEADDR); a few tries in case it is not.
            for attempt in range(20):
                try:
                    self.start_serve(self.port)
                    break
                except SystemExit as error:
                    if attempt == 19:
                        self.not_injected("serve killed (SIGKILL) and restarted",
                                          f"it did not start again on port {self.port}: {error}")
                        return
                    time.sleep(0.25)
            self.restarted_at["serve"] = time.monotonic()
        self.fault("serve killed (SIGKILL) and restarted", started)

    def full_disk(self):
        started = time.monotonic()
        problem = self.disk.fill_for(3)
        if problem:
            self.not_injected("disk full for 3 s", problem)
            return
        self.fault("disk full for 3 s", started)

    def faults_loop(self):
        kinds = [self.probes, self.stalled, self.kill_extension, self.restart_sip_server]
        kinds += [self.full_disk] if self.disk.mounted else []
        kinds += [self.kill_serve] if self.serve_crashes else []
        deck = []
        while not self.stopping.wait(self.random.uniform(5, 12)):
            if not deck:
                # Every kind once, in a shuffled order, then one more extension killed (the commonest crash).
                deck = self.random.sample(kinds, len(kinds)) + [self.kill_extension]
            deck.pop(0)()

    def guarded(self, name, target, *args):
        """A thread's body: an exception that ends it is a failure of the soak, not a line on stderr."""
        def body():
            try:
                target(*args)
            except BaseException as error:
                self.fail(f"the {name} thread stopped: {type(error).__name__}: {error}")
        return threading.Thread(target=body, name=name)

    # --- the run --------------------------------------------------------------------------------------------------
    def sample(self):
        with self.serve_lock, self.sip_lock:
            return {"serve": {"pid": self.serve.pid, "fds": descriptors(self.serve.pid),
                              "rss_kb": rss_kb(self.serve.pid)},
                    "sip-server": {"pid": self.sip.pid, "fds": descriptors(self.sip.pid),
                                   "rss_kb": rss_kb(self.sip.pid)}}

    def go(self):
        self.start()
        idle = self.sample()          # both servers started, devices registered, no load yet: the descriptor baseline
        threads = [self.guarded("faults", self.faults_loop)]
        if self.traffic:
            threads += [self.guarded("pusher", self.pusher, PUSH_RATE), self.guarded("sender", self.sender, SEND_RATE)]
        for thread in threads:
            thread.start()
        end = time.monotonic() + self.minutes * 60
        warm = min(60, self.minutes * 60 / 4)
        time.sleep(warm)
        baseline = self.sample()      # warmed up under load: the memory baseline (taken again for a restarted server)
        baseline_of = {"serve": None, "sip-server": None}
        while time.monotonic() < end:
            time.sleep(min(5, max(0, end - time.monotonic())))
            with self.serve_lock, self.sip_lock:
                exited = {"serve": self.serve.poll(), "sip-server": self.sip.poll()}
                restarted = dict(self.restarted_at)
            gone = [f"nse {server} exited during the soak ({code})"
                    for server, code in exited.items() if code is not None]
            if gone:
                for line in gone:
                    self.fail(line)
                break
            # A restarted server is a new process: its baseline is its own, once warmed up.
            for server, at in restarted.items():
                if at is not None and at != baseline_of[server] and time.monotonic() - at >= warm:
                    baseline[server] = self.sample()[server]
                    baseline_of[server] = at
        self.stopping.set()
        for thread in threads:
            thread.join(timeout=120)
            if thread.is_alive():
                self.fail(f"the {thread.name} thread did not end within 120 s of the soak's end")
        self.settle()
        final = self.sample()
        self.check(idle, baseline, final)

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
        """How often each apns-id was recorded, each one's outcome, and how often each SIP MESSAGE was shown."""
        seen = {}
        outcomes = {}
        shown_call_ids = {}
        for record in self.records():
            apns_id = record.get("apns_id")
            seen[apns_id] = seen.get(apns_id, 0) + 1
            outcomes[apns_id] = record.get("outcome")
            if record.get("outcome") != "rewritten":
                outcomes[apns_id] += f" ({' '.join((record.get('reason') or '').split()[:2])})"
            info = (record.get("extension") or {}).get("info") or {}
            if record.get("outcome") == "rewritten" and info.get("source") == "sip" and info.get("call_id"):
                shown_call_ids[info["call_id"]] = shown_call_ids.get(info["call_id"], 0) + 1
        return seen, outcomes, shown_call_ids

    def settle(self, timeout=180):
        """Waits until every push answered 200 is recorded (the queue has drained)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            seen, _, _ = self.results()
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

    def judge_refusals(self, refusals, kind):
        """Splits refusals into those an injected fault explains (the request overlapped its window, give or take
        GRACE seconds) and the others."""
        expected, unexpected = [], []
        for started, ended, what in refusals:
            cause = next((name for name, begin, end in self.windows if kind in EXPLAINS.get(name, ())
                          and started <= end + GRACE and ended >= begin - GRACE), None)
            (expected if cause else unexpected).append((started, ended, what, cause))
        tally = {}
        for _, _, what, _ in expected + unexpected:
            tally[what] = tally.get(what, 0) + 1
        return {"total": len(refusals), "by_answer": tally, "expected_from_faults": len(expected),
                "unexpected": len(unexpected), "unexpected_bound": UNEXPECTED_REFUSALS,
                "first_unexpected": [{"at_s": round(started - self.t0, 1), "took_s": round(ended - started, 2),
                                      "answer": what} for started, ended, what, _ in unexpected[:5]]}

    def check(self, idle, baseline, final):
        failures = self.report["failures"]
        seen, outcomes, shown = self.results()
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

        # Volume: a soak that carried (almost) nothing proved nothing.
        push_floor = max(1, int(PUSH_FLOOR_PER_MINUTE * self.minutes))
        message_floor = max(1, int(MESSAGE_FLOOR_PER_MINUTE * self.minutes))
        push_outcomes = {}
        for apns_id, _ in self.accepted:
            outcome = outcomes.get(apns_id, "not recorded")
            push_outcomes[outcome] = push_outcomes.get(outcome, 0) + 1
        shown_count = sum(1 for call_id, _, _ in self.sent_messages if call_id in shown)
        for count, floor, what in ((len(self.accepted), push_floor, "pushes answered 200"),
                                   (push_outcomes.get("rewritten", 0), push_floor, "pushes recorded rewritten"),
                                   (len(self.sent_messages), message_floor, "MESSAGEs accepted by the SIP server"),
                                   (shown_count, message_floor, "MESSAGEs shown")):
            if count < floor:
                failures.append(f"volume: {count} {what}, below the floor of {floor} "
                                f"({floor / self.minutes:g} a minute for {self.minutes:g} min)")

        # Refusals: those no injected fault explains are bounded.
        push_refusals = self.judge_refusals(self.push_refusals, "push")
        message_refusals = self.judge_refusals(self.send_refusals, "message")
        for judged, what in ((push_refusals, "pushes"), (message_refusals, "MESSAGEs")):
            if judged["unexpected"] > UNEXPECTED_REFUSALS:
                first = judged["first_unexpected"][0]
                failures.append(f"{judged['unexpected']} {what} refused with no injected fault to explain it (bound "
                                f"{UNEXPECTED_REFUSALS}; first: {first['answer']} at {first['at_s']} s)")

        # Resources, both servers alike: descriptors back near the idle start, memory near the warmed-up figure.
        resources = {}
        for server in ("serve", "sip-server"):
            start, warm, end = idle[server], baseline[server], final[server]
            resources[server] = {"idle_at_start": start, "after_warm_up": warm, "at_end": end,
                                 "memory_baseline_is_own": warm["pid"] == end["pid"]}
            if -1 in (start["fds"], warm["fds"], end["fds"], warm["rss_kb"], end["rss_kb"]):
                failures.append(f"nse {server}'s descriptors or memory could not be read ({start}, {warm}, {end})")
                continue
            if end["fds"] > start["fds"] + FD_SLACK:
                failures.append(f"nse {server}'s descriptors: {end['fds']} at the end, {start['fds']} idle at the "
                                f"start (slack {FD_SLACK})")
            if end["rss_kb"] > max(warm["rss_kb"] * 1.5, warm["rss_kb"] + 32 * 1024):
                failures.append(f"nse {server}'s memory grew from {warm['rss_kb']} KB to {end['rss_kb']} KB")

        serve_ok = stop(self.serve, "nse serve", self.report)
        sip_ok = stop(self.sip, "nse sip-server", self.report)
        if not serve_ok:
            failures.append("nse serve did not exit 0 within 5 s of SIGTERM")
        if not sip_ok:
            failures.append("nse sip-server did not exit 0 within 5 s of SIGTERM")
        self.report.update({
            "minutes": self.minutes,
            "traffic": "on" if self.traffic else "off (--zero-traffic)",
            "pushes": {"attempted": self.push_attempts, "answered_200": len(self.accepted), "floor": push_floor,
                       "outcomes": push_outcomes,
                       "recorded_once": sum(1 for apns_id, _ in self.accepted if seen.get(apns_id) == 1),
                       "missing": len(missing), "duplicated": len(duplicated),
                       "refused": {what: n for what, n in push_refusals["by_answer"].items()
                                   if not what.startswith("no answer")},
                       "no_answer": {what: n for what, n in push_refusals["by_answer"].items()
                                     if what.startswith("no answer")},
                       "refusals": push_refusals},
            "messages": {"attempted": self.send_attempts, "accepted_by_sip_server": len(self.sent_messages),
                         "floor": message_floor, "refusals": message_refusals,
                         "shown": shown_count,
                         "held_by_server": sum(1 for call_id, _, _ in self.sent_messages if call_id in held_server),
                         "held_in_app_group": sum(1 for call_id, _, _ in self.sent_messages if call_id in held_device),
                         "lost": len(lost), "shown_twice": len(shown_twice)},
            "faults": self.faults,
            "fault_windows": [{"fault": name, "from_s": round(begin - self.t0, 1), "to_s": round(end - self.t0, 1)}
                              for name, begin, end in self.windows],
            "connect_failures_while_injecting": self.connect_failures,
            "resources": resources,
            "full_disk_fault": "on" if self.disk.mounted else f"off: {self.disk.why_not}",
            "serve_crash_fault": "on" if self.serve_crashes else "off (--no-serve-crashes)",
        })


def summary(report, minutes):
    pushes, messages = report["pushes"], report["messages"]
    push_refusals, message_refusals = pushes["refusals"], messages["refusals"]
    return (f"soak: {minutes:g} min; pushes answered 200: {pushes['answered_200']} (floor {pushes['floor']}) of "
            f"{pushes['attempted']}, rewritten: {pushes['outcomes'].get('rewritten', 0)} (floor {pushes['floor']}), "
            f"recorded exactly once: {pushes['recorded_once']}, refused or unanswered: {push_refusals['total']} "
            f"({push_refusals['unexpected']} unexpected, bound {UNEXPECTED_REFUSALS}); MESSAGEs accepted: "
            f"{messages['accepted_by_sip_server']} (floor {messages['floor']}) of {messages['attempted']}, shown: "
            f"{messages['shown']} (floor {messages['floor']}), still held: "
            f"{messages['held_by_server'] + messages['held_in_app_group']}, lost: {messages['lost']}, refused: "
            f"{message_refusals['total']} ({message_refusals['unexpected']} unexpected, bound {UNEXPECTED_REFUSALS}); "
            f"faults: {sum(report['faults'].values())} "
            f"({', '.join(f'{n}× {name}' for name, n in report['faults'].items())})")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--minutes", type=float, default=float(os.environ.get("SOAK_MINUTES", "10")))
    parser.add_argument("--seed", type=int, default=int(time.time()))
    parser.add_argument("--keep", action="store_true", help="keep the work folder (logs, databases)")
    parser.add_argument("--no-serve-crashes", action="store_true",
                        help="leave out the fault that kills nse serve with SIGKILL and starts it again (to tell "
                             "a loss it causes from one the other faults cause)")
    parser.add_argument("--no-full-disk", action="store_true",
                        help="leave out the fault that fills the state's file system (it needs root to mount a "
                             "tmpfs; without this flag a run that cannot inject it fails)")
    parser.add_argument("--zero-traffic", action="store_true",
                        help="send no pushes and no MESSAGEs (faults only): the run must fail on its volume floors")
    parser.add_argument("--self-check", action="store_true",
                        help="run with --zero-traffic and pass only if the volume floors failed the run")
    args = parser.parse_args()
    if not os.access(NSE, os.X_OK):
        raise SystemExit(f"soak: {NSE} is not built (set NSE_BIN_DIR)")
    if args.minutes <= 0:
        raise SystemExit("soak: --minutes must be above 0")
    work = tempfile.mkdtemp(prefix="nse-soak-")
    soak = Soak(work, args.minutes, args.seed, serve_crashes=not args.no_serve_crashes,
                full_disk=not args.no_full_disk, traffic=not (args.zero_traffic or args.self_check))
    if not args.no_full_disk and not soak.disk.mounted:
        soak.disk.close()
        subprocess.run(["rm", "-rf", work])
        print(f"soak: FAILED: fault not injectable: disk full: {soak.disk.why_not} (run as root, or pass "
              f"--no-full-disk to leave this fault out)")
        sys.exit(1)
    try:
        soak.go()
    except Exception as error:
        soak.fail(f"the soak stopped: {type(error).__name__}: {error}")
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
    if "pushes" in report:
        print(summary(report, args.minutes))
    for failure in report["failures"]:
        print(f"soak: FAILED: {failure}")
    if args.self_check:
        floors = [failure for failure in report["failures"] if failure.startswith("volume: ")]
        print(f"soak: logs and databases kept in {work}")
        if len(floors) == 4:
            print("soak: self-check passed: with zero traffic the run failed on all four volume floors")
            return
        print(f"soak: self-check FAILED: with zero traffic {len(floors)} of the four volume floors failed the run")
        sys.exit(1)
    if report["failures"]:
        print(f"soak: logs and databases kept in {work}")
        sys.exit(1)
    if not args.keep:
        subprocess.run(["rm", "-rf", work])
    print("soak: passed")


if __name__ == "__main__":
    main()

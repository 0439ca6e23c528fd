#!/usr/bin/env python3
"""Interop test: nse behind a real Kamailio 5.6 (Debian's packages) started from examples/kamailio/kamailio.cfg.

On loopback ports of its own: an SQLite subscriber table (digest authentication for the devices and the sender),
a self-signed TLS certificate, `nse serve` with one device per transport, and Kamailio as registrar and holding
proxy. For each transport (UDP, TCP, TLS) and each kind of message (plain, sealed to the device), the device
registers with its push parameters (`nse device register`) and goes quiet; `nse send` sends a MESSAGE through
Kamailio, which holds it and POSTs an APNs-shaped push to nse serve; the extension nse serve runs registers again,
gets the held MESSAGE (its original Call-ID) and answers 200, which reaches the sender; the device's recorded
result must show the message rewritten. Then the push request nse serve received is checked (topic, push type,
Call-ID), and both servers must stop on SIGTERM (nse serve with exit 0).

usage: NSE_BIN_DIR=.build/debug python3 scripts/interop-kamailio.py    (exit 0: all passed; 1: a failure;
       77: Kamailio is not installed and could not be: skipped, with a line saying so)
"""
import json
import os
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time
import urllib.request

BIN = os.environ.get("NSE_BIN_DIR", ".build/debug")
NSE = os.path.join(BIN, "nse")
HERE = os.path.dirname(os.path.abspath(__file__))
CONFIG = os.path.join(HERE, "..", "examples", "kamailio", "kamailio.cfg")
SCHEMAS = "/usr/share/kamailio/db_sqlite"
PASSWORDS = {"alice": "alice-secret", "bobudp": "udp-secret", "bobtcp": "tcp-secret", "bobtls": "tls-secret"}
TEXT = {"plain": "Lunch at 1? (plain)", "sealed": "Lunch at 1? (sealed)"}


def free_port():
    """A port free for both UDP and TCP on 127.0.0.1 (bounded tries)."""
    for _ in range(50):
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as tcp:
            tcp.bind(("127.0.0.1", 0))
            port = tcp.getsockname()[1]
            try:
                with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as udp:
                    udp.bind(("127.0.0.1", port))
                return port
            except OSError:
                continue
    raise SystemExit("interop-kamailio: no free port for UDP and TCP")


def run(argv, timeout=60, **kwargs):
    return subprocess.run(argv, timeout=timeout, capture_output=True, text=True, **kwargs)


def get_json(url):
    with urllib.request.urlopen(url, timeout=10) as answer:
        return json.loads(answer.read())


class Rig:
    def __init__(self, work):
        self.work = work
        self.processes = []
        self.sip = free_port()
        self.tls = free_port()

    def database(self):
        path = os.path.join(self.work, "kamailio.sqlite")
        with sqlite3.connect(path) as db:
            for schema in ("standard-create.sql", "auth_db-create.sql"):
                with open(os.path.join(SCHEMAS, schema)) as file:
                    db.executescript(file.read())
            for user, password in PASSWORDS.items():
                db.execute("INSERT INTO subscriber (username, domain, password) VALUES (?, '127.0.0.1', ?)",
                           (user, password))
        return path

    def certificate(self):
        cert, key = os.path.join(self.work, "sip-cert.pem"), os.path.join(self.work, "sip-key.pem")
        done = run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                    "-days", "2", "-keyout", key, "-out", cert, "-subj", "/CN=127.0.0.1",
                    "-addext", "subjectAltName=IP:127.0.0.1"])
        if done.returncode != 0:
            raise SystemExit(f"interop-kamailio: openssl failed: {done.stderr.strip()[-300:]}")
        tls_cfg = os.path.join(self.work, "tls.cfg")
        with open(tls_cfg, "w") as file:
            file.write(f"[server:default]\nmethod = TLSv1.2+\nverify_certificate = no\nrequire_certificate = no\n"
                       f"private_key = {key}\ncertificate = {cert}\n")
        return cert, tls_cfg

    def devices(self, cert):
        self.device = {}
        for transport, port in (("udp", self.sip), ("tcp", self.sip), ("tls", self.tls)):
            user = "bob" + transport
            directory = os.path.join(self.work, user)
            argv = [NSE, "device", "init", directory, "--bundle-id", "org.example.app", "--filtering",
                    "--sip-account", f"sip:{user}@127.0.0.1", "--sip-proxy",
                    f"sip:127.0.0.1:{port};transport={transport}", "--sip-password", PASSWORDS[user]]
            if transport == "tls":
                argv += ["--sip-ca-file", cert]
            done = run(argv)
            if done.returncode != 0:
                raise SystemExit(f"interop-kamailio: nse device init failed: {done.stderr.strip()}")
            with open(os.path.join(directory, "device.json")) as file:
                self.device[transport] = (user, directory, json.load(file)["tokens"]["remote"])

    def start(self, argv, name, ready):
        log = open(os.path.join(self.work, name + ".log"), "w")
        process = subprocess.Popen(argv, stdout=subprocess.PIPE if name == "serve" else log, stderr=log, text=True)
        self.processes.append((name, process))
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if process.poll() is not None:
                raise SystemExit(f"interop-kamailio: {name} exited with {process.returncode}; see {log.name}")
            value = ready(process)
            if value:
                return process, value
            time.sleep(0.1)
        raise SystemExit(f"interop-kamailio: {name} not ready within 30 s; see {log.name}")

    def serve(self):
        # Every push recorded as a replay case: replayed below without Kamailio.
        argv = [NSE, "serve", "--listen", "127.0.0.1:0", "--record", os.path.join(self.work, "cases")]
        if os.path.basename(os.path.normpath(BIN)) == "debug":
            # A debug build's extension with TLS is within a megabyte of iOS's 24 MB (a release build is far below).
            argv += ["--memory-limit", "40"]
        for _, directory, _ in self.device.values():
            argv += ["--device", directory]
        _, url = self.start(argv, "serve", lambda process: json.loads(process.stdout.readline())["listening"])
        self.url = url

    def kamailio(self, db, tls_cfg):
        def listening(_):
            with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
                probe.settimeout(0.5)
                return probe.connect_ex(("127.0.0.1", self.tls)) == 0
        runtime = os.path.join(self.work, "run")
        os.makedirs(runtime, exist_ok=True)
        argv = ["kamailio", "-f", os.path.abspath(CONFIG), "-DD", "-E", "-Y", runtime, "-A", "WITH_AUTH",
                "-A", "WITH_TLS", "-A", f"LISTEN_UDP=udp:127.0.0.1:{self.sip}",
                "-A", f"LISTEN_TCP=tcp:127.0.0.1:{self.sip}", "-A", f"LISTEN_TLS=tls:127.0.0.1:{self.tls}",
                "-A", f'NSE_SERVE="{self.url}"', "-A", f'DBURL="sqlite:///{db}"', "-A", f'TLS_CFG="{tls_cfg}"',
                "-A", f'CTL_SOCKET="unix:{runtime}/ctl"', "-A", "HOLD_MS=25000"]
        self.start(argv, "kamailio", listening)

    def stop(self):
        codes = {}
        for name, process in reversed(self.processes):
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
            try:
                codes[name] = process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                codes[name] = process.wait()
                codes[name + " (killed)"] = True
        self.processes = []
        return codes


def case(rig, transport, kind, cert):
    user, directory, token = rig.device[transport]
    port = rig.tls if transport == "tls" else rig.sip
    registered = run([NSE, "device", "register", directory], timeout=30)
    if registered.returncode != 0:
        return f"nse device register failed: {registered.stderr.strip()[-300:]}"
    call_id = f"kamailio-{transport}-{kind}-{os.getpid()}@127.0.0.1"
    argv = [NSE, "send", "--proxy", f"sip:127.0.0.1:{port};transport={transport}", "--from",
            "sip:alice@127.0.0.1", "--to", f"sip:{user}@127.0.0.1", "--password", PASSWORDS["alice"],
            "--text", TEXT[kind], "--call-id", call_id, "--timeout", "25"]
    if kind == "sealed":
        argv += ["--seal-to", directory]
    if transport == "tls":
        argv += ["--ca-file", cert]
    started = time.monotonic()
    sent = run(argv, timeout=40)
    took = (time.monotonic() - started) * 1000
    if sent.returncode != 0:
        return f"nse send exit {sent.returncode} ({sent.stdout.strip()[-200:]} {sent.stderr.strip()[-200:]})"
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        results = get_json(f"{rig.url}/v1/devices/{token}/notifications?limit=20")
        mine = [r for r in results if (r.get("extension", {}).get("info") or {}).get("call_id") == call_id
                or call_id in json.dumps(r)]
        if mine:
            result = mine[0]
            body = (result.get("display") or {}).get("body")
            if result.get("outcome") != "rewritten" or body != TEXT[kind]:
                return f"recorded {result.get('outcome')} ({result.get('reason')}), body {body!r}"
            requests = [r for r in get_json(f"{rig.url}/v1/requests?token={token}&limit=5") if r["status"] == 200]
            headers = requests[0]["headers"] if requests else {}
            if headers.get("apns-topic") != "org.example.app" or headers.get("apns-push-type") != "alert":
                return f"the push came with headers {headers}"
            return f"200 to the sender after {took:.0f} ms, held and pushed, recorded rewritten"
        time.sleep(0.2)
    return "no result recorded for the push within 20 s"


def main():
    if not shutil.which("kamailio"):
        print("interop-kamailio: SKIP: kamailio is not installed (apt-get install kamailio kamailio-utils-modules "
              "kamailio-extra-modules kamailio-sqlite-modules kamailio-tls-modules)")
        return 77
    for schema in ("standard-create.sql", "auth_db-create.sql"):
        if not os.path.exists(os.path.join(SCHEMAS, schema)):
            print(f"interop-kamailio: SKIP: {SCHEMAS}/{schema} missing (apt-get install kamailio-sqlite-modules)")
            return 77
    work = tempfile.mkdtemp(prefix="nse-kamailio-", dir=os.path.abspath(".build") if os.path.isdir(".build") else None)
    rig = Rig(work)
    failed = 0
    try:
        db = rig.database()
        cert, tls_cfg = rig.certificate()
        rig.devices(cert)
        rig.serve()
        rig.kamailio(db, tls_cfg)
        print(f"interop-kamailio: {run(['kamailio', '-v']).stdout.splitlines()[0]} on udp/tcp {rig.sip}, tls {rig.tls}; "
              f"nse serve at {rig.url}")
        for transport in ("udp", "tcp", "tls"):
            for kind in ("plain", "sealed"):
                started = time.monotonic()
                outcome = case(rig, transport, kind, cert)
                ok = outcome.startswith("200")
                failed += not ok
                print(f"{'PASS' if ok else 'FAIL'} {transport} {kind}: {outcome} "
                      f"({(time.monotonic() - started) * 1000:.0f} ms)", flush=True)
        # Digest authentication is on: a sender with the wrong password is refused, never held or pushed.
        user, _, token = rig.device["tcp"]
        before = len(get_json(f"{rig.url}/v1/requests?token={token}"))
        refused = run([NSE, "send", "--proxy", f"sip:127.0.0.1:{rig.sip};transport=tcp", "--from",
                       "sip:alice@127.0.0.1", "--to", f"sip:{user}@127.0.0.1", "--password", "wrong",
                       "--text", "not for bob", "--timeout", "10"], timeout=30)
        pushed = len(get_json(f"{rig.url}/v1/requests?token={token}")) - before
        ok = refused.returncode != 0 and pushed == 0
        failed += not ok
        print(f"{'PASS' if ok else 'FAIL'} wrong password: nse send exit {refused.returncode} "
              f"({(refused.stdout or refused.stderr).strip()[-120:]}), {pushed} pushes", flush=True)
    finally:
        codes = rig.stop()
    if codes.get("serve") != 0:
        failed += 1
        print(f"FAIL nse serve exit status {codes.get('serve')} after SIGTERM, expected 0")
    # The pushes Kamailio caused, recorded by nse serve with the extension's SIP exchange, replay to the same
    # verdicts with Kamailio stopped: a scripted peer plays Kamailio's side back (docs/replay.md).
    recorded = os.path.join(work, "cases")
    count = len([name for name in os.listdir(recorded) if name.endswith(".json")]) if os.path.isdir(recorded) else 0
    scripted = 0
    for name in os.listdir(recorded) if count else []:
        with open(os.path.join(recorded, name)) as handle:
            scripted += "script" in (json.load(handle).get("sip") or {})
    replayed = run([NSE, "replay", recorded], timeout=300) if count else None
    ok = count >= 6 and scripted >= 6 and replayed is not None and replayed.returncode == 0
    failed += not ok
    tail = (replayed.stdout.strip().splitlines() or [""])[-1] if replayed else "nothing recorded"
    print(f"{'PASS' if ok else 'FAIL'} recorded without Kamailio: {count} cases, {scripted} with a SIP exchange, "
          f"nse replay: {tail}", flush=True)
    if replayed is not None and replayed.returncode != 0:
        print(replayed.stdout[-3000:], replayed.stderr[-1000:])
    if failed:
        print(f"interop-kamailio: {failed} failed; logs kept in {work}")
        return 1
    print("interop-kamailio: all passed")
    shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

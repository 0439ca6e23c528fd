#!/usr/bin/env python3
"""Interop test: pyapns_client and kalyke-apns, two APNs provider libraries from PyPI, against `nse serve`, directly
and through HAProxy.

Both libraries run as shipped, each signing its own ES256 provider token from a .p8 key:
- pyapns_client 2.0.6: sync, httpx with h2, `iat` a float (`time.time()`), one token per client for 45 minutes,
  one connection per push, `<Reason>Exception` classes. Pointed at nse the way its API allows: a subclass whose
  BASE_URLS has one more mode, and `root_cert_path`, which it hands to httpx's `verify=`, an ssl.SSLContext that
  trusts the test's certificate.
- kalyke-apns 1.5.0: async, httpx2 with h2, `iat` a string of digits, a new client, connection and token for every
  push, one exception class per reason in `kalyke.exceptions`. Pointed at nse by overriding its `_base_url`
  property (a frozen dataclass: nothing else to set) and trusting the certificate through SSL_CERT_FILE, which
  httpcore2 reads when it makes its TLS context.

Subcommands (scripts/interop-apns-clients.sh runs them; the paths and ids come in one JSON file, --setup):
- `cases LIBRARY`: run in that library's venv; an accepted push and the error cases against nse serve itself (one
  PASS/FAIL line each).
- `provider LIBRARY`: run in that library's venv; one provider process that sends --count pushes and writes what
  each got to --out (JSON). Waits for --go first, so that several start together.
- `haproxy`: run with python3 alone; starts provider processes through HAProxy's two frontends, reads nse's
  request log and results and HAProxy's statistics socket, and judges (PASS/FAIL/SKIP lines).
Exit status 0 only when no case failed.
"""
import argparse
import asyncio
import base64
import csv
import io
import json
import os
import signal
import socket
import ssl
import subprocess
import sys
import time
import urllib.error
import urllib.request
import uuid

LIBRARIES = ("pyapns_client", "kalyke")
DISTRIBUTIONS = {"pyapns_client": "pyapns_client", "kalyke": "kalyke-apns"}


class CaseFailure(Exception):
    pass


def one_line(error: BaseException, limit: int = 200) -> str:
    """An exception's text on one line (kalyke's is its class docstring, over several)."""
    return " ".join(str(error).split())[:limit]


class Skip(Exception):
    pass


def load_setup(path: str) -> dict:
    with open(path) as f:
        return json.load(f)


def dist_version(library: str) -> str:
    try:
        from importlib.metadata import version
        return version(DISTRIBUTIONS[library])
    except Exception:
        return "?"


def token_claims(jwt: str) -> tuple[dict, dict]:
    """The header and claims of a JWT, decoded without checking anything (to show what the library signs)."""
    def part(text: str) -> dict:
        return json.loads(base64.urlsafe_b64decode(text + "=" * (-len(text) % 4)))
    header, claims, _ = jwt.split(".")
    return part(header), part(claims)


def describe_iat(jwt: str) -> str:
    _, claims = token_claims(jwt)
    iat = claims.get("iat")
    return f"iat {type(iat).__name__} {iat!r}"


# --- nse's own endpoints (stdlib only) -----------------------------------------------------------------------------
class NSE:
    def __init__(self, url: str, ca: str) -> None:
        self.url = url.rstrip("/")
        self.context = ssl.create_default_context(cafile=ca)

    def get(self, path: str):
        request = urllib.request.Request(self.url + path, headers={"accept": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=10, context=self.context) as response:
                return response.status, json.loads(response.read() or b"null")
        except urllib.error.HTTPError as error:
            return error.code, error.read().decode(errors="replace")

    def notifications(self, token: str) -> list:
        status, body = self.get(f"/v1/devices/{token}/notifications?limit=1000")
        if status != 200 or not isinstance(body, list):
            raise CaseFailure(f"GET /v1/devices/{token[:8]}…/notifications answered {status}: {body!r}"[:300])
        return body

    def requests(self, since: int = 0) -> list:
        """The request log above `since`, oldest first."""
        status, body = self.get(f"/v1/requests?since={since}&limit=10000")
        if status != 200 or not isinstance(body, list):
            raise CaseFailure(f"GET /v1/requests answered {status}: {body!r}"[:300])
        return sorted(body, key=lambda e: e["id"])

    def last_request_id(self) -> int:
        entries = self.requests()
        return entries[-1]["id"] if entries else 0

    def recorded(self, token: str, apns_ids: set, timeout: float) -> dict:
        """apns-id -> the entries recorded with it, once every one of apns_ids has at least one (or the timeout)."""
        wanted = {i.lower() for i in apns_ids}
        deadline = time.monotonic() + timeout
        while True:
            found: dict = {}
            for entry in self.notifications(token):
                found.setdefault(str(entry.get("apns_id", "")).lower(), []).append(entry)
            if wanted <= found.keys() or time.monotonic() >= deadline:
                return found
            time.sleep(0.1)


# --- the two libraries, used as shipped -----------------------------------------------------------------------------
class PyapnsClient:
    name = "pyapns_client"

    def __init__(self, url: str, ca: str) -> None:
        import pyapns_client
        self.lib = pyapns_client
        self.exceptions = pyapns_client  # the exception classes are exported at the top level

        class LocalAPNSClient(pyapns_client.APNSClient):
            BASE_URLS = {**pyapns_client.APNSClient.BASE_URLS, "nse": url}

        self.client_class = LocalAPNSClient
        self.ca_context = ssl.create_default_context(cafile=ca)
        self.clients: list = []

    def client(self, key: dict):
        client = self.client_class(mode="nse", root_cert_path=self.ca_context, auth_key_path=key["file"],
                                   auth_key_id=key["key_id"], team_id=key["team_id"])
        self.clients.append(client)
        return client

    def error_class(self, reason: str) -> type:
        return getattr(self.lib, f"{reason}Exception")

    def payload(self, kind: str, envelope: str = "", text: str = ""):
        lib = self.lib
        if kind == "sealed":
            return lib.IOSPayload(alert=lib.IOSPayloadAlert(loc_key="IM_MSG"), mutable_content=True,
                                  custom={"enc": envelope})
        if kind == "large":  # pyapns_client shortens a long alert body to 2 KB itself, but not custom keys
            return lib.IOSPayload(alert=lib.IOSPayloadAlert(title="big"), custom={"pad": "x" * 4200})
        return lib.IOSPayload(alert=lib.IOSPayloadAlert(title="interop", body=text or "hello"))

    def push(self, client, token: str, topic: str, payload, apns_id: str) -> str:
        """Sends one push; returns the apns-id nse answered 200 for, or raises the library's exception."""
        notification = self.lib.IOSNotification(payload=payload, topic=topic, apns_id=apns_id, push_type="alert",
                                                priority="10")  # httpx takes header values as strings
        client.push(notification=notification, device_token=token)
        return apns_id  # push() returns nothing: a 200 is no exception; the apns-id is the one given

    def payload_size(self, payload) -> int:
        return len(payload.to_json())

    def token_of(self, client) -> str:
        return client._auth_token  # the token it signs (and caches): read only, to report the iat it sends

    def unregistered_timestamp(self, error) -> int:
        error.timestamp_datetime  # noqa: B018 - its own reading of the timestamp (Unix ms) must work too
        return error.timestamp

    def close(self) -> None:
        for client in self.clients:
            client.close()


class KalykeClient:
    name = "kalyke"

    def __init__(self, url: str, ca: str) -> None:
        os.environ["SSL_CERT_FILE"] = ca  # httpcore2's default TLS context trusts it (kalyke has no verify argument)
        import kalyke
        from kalyke import exceptions
        self.lib = kalyke
        self.exceptions = exceptions

        class LocalApnsClient(kalyke.ApnsClient):
            @property
            def _base_url(self) -> str:
                return url

        self.client_class = LocalApnsClient

    def client(self, key: dict):
        return self.client_class(use_sandbox=True, team_id=key["team_id"], auth_key_id=key["key_id"],
                                 auth_key_filepath=key["file"])

    def error_class(self, reason: str) -> type:
        return getattr(self.exceptions, reason)

    def payload(self, kind: str, envelope: str = "", text: str = ""):
        lib = self.lib
        if kind == "sealed":
            return lib.Payload(alert=lib.PayloadAlert(loc_key="IM_MSG"), mutable_content=True, custom={"enc": envelope})
        if kind == "large":
            return lib.Payload(alert=lib.PayloadAlert(title="big", body="x" * 4200))
        return lib.Payload(alert=lib.PayloadAlert(title="interop", body=text or "hello"))

    def push(self, client, token: str, topic: str, payload, apns_id: str) -> str:
        config = self.lib.ApnsConfig(topic=topic, identifier=apns_id)
        return asyncio.run(asyncio.wait_for(
            client.send_message(device_token=token, payload=payload, apns_config=config), 20))

    def payload_size(self, payload) -> int:
        return len(json.dumps(payload.dict(), separators=(",", ":")).encode())

    def token_of(self, client) -> str:
        return client._make_authorization()  # a fresh one, as each push makes: to report the iat it sends

    def unregistered_timestamp(self, error) -> int:
        return error.error["timestamp"]

    def close(self) -> None:
        pass


def library(name: str, url: str, ca: str):
    return {"pyapns_client": PyapnsClient, "kalyke": KalykeClient}[name](url, ca)


# --- `cases`: the library against nse serve directly ----------------------------------------------------------------
class Cases:
    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.setup = load_setup(args.setup)
        self.nse = NSE(self.setup["nse_url"], self.setup["ca"])
        self.lib = library(args.library, self.setup["nse_url"], self.setup["ca"])
        self.devices = self.setup["devices"]
        self.keys = self.setup["keys"]
        with open(self.setup["envelope"]) as f:
            self.envelope = f.read().strip()
        with open(self.setup["plaintext"]) as f:
            self.plaintext = json.load(f)

    def expect_error(self, reason: str, client, token: str, topic: str, payload, status: int) -> Exception:
        """Pushes, expecting the library to raise its own class for `reason`; returns the exception."""
        wanted = self.lib.error_class(reason)
        apns_id = str(uuid.uuid4())
        try:
            self.lib.push(client, token, topic, payload, apns_id)
        except Exception as error:  # judged below: any other class is the failure to report
            if type(error) is not wanted:
                raise CaseFailure(f"raised {type(error).__module__}.{type(error).__name__}: {one_line(error)}, "
                                  f"expected {wanted.__module__}.{wanted.__name__}")
            got = getattr(error, "status_code", None)  # pyapns_client keeps the status; kalyke does not
            if got is not None and got != status:
                raise CaseFailure(f"{type(error).__name__} with status {got}, expected {status}")
            self.not_delivered(token, apns_id)
            return error
        raise CaseFailure(f"accepted (200), expected {wanted.__name__}")

    def not_delivered(self, token: str, apns_id: str) -> None:
        if token not in {d["token"] for d in self.devices.values()}:
            return  # a token nse does not serve has no results to look in
        time.sleep(0.2)
        if apns_id.lower() in {str(e.get("apns_id", "")).lower() for e in self.nse.notifications(token)}:
            raise CaseFailure(f"refused push {apns_id} was delivered anyway")

    # Each case returns its detail line or raises CaseFailure.
    def case_accepted(self) -> str:
        device = self.devices["alpha"]
        client = self.lib.client(self.keys["alpha"])
        apns_id = str(uuid.uuid4())
        answered = self.lib.push(client, device["token"], device["topic"], self.lib.payload("sealed", self.envelope),
                                 apns_id)
        if str(answered).lower() != apns_id:
            raise CaseFailure(f"answered apns-id {answered}, sent {apns_id}")
        entries = self.nse.recorded(device["token"], {apns_id}, self.args.result_timeout).get(apns_id, [])
        if len(entries) != 1:
            raise CaseFailure(f"{len(entries)} results recorded for apns-id {apns_id}, expected 1")
        entry = entries[0]
        display = entry.get("display") or {}
        want_title = self.plaintext.get("display_name") or self.plaintext["from"]
        if entry.get("outcome") != "rewritten" or display.get("body") != self.plaintext["text"] \
                or display.get("title") != want_title:
            raise CaseFailure(f"recorded outcome={entry.get('outcome')!r} reason={entry.get('reason')!r} "
                              f"display={display!r}, expected rewritten {want_title!r}: {self.plaintext['text']!r}")
        return f"200, apns-id {apns_id}, recorded once, rewritten: {display['title']!r}: {display['body']!r}"

    def case_bad_token(self) -> str:
        client = self.lib.client(self.keys["alpha"])
        error = self.expect_error("BadDeviceToken", client, "0123456789abcdef" * 4, self.devices["alpha"]["topic"],
                                  self.lib.payload("plain"), 400)
        return f"{type(error).__name__} (400) for a well-formed token no device has"

    def case_wrong_topic(self) -> str:
        device = self.devices["alpha"]
        client = self.lib.client(self.keys["alpha"])
        error = self.expect_error("DeviceTokenNotForTopic", client, device["token"], "org.example.other",
                                  self.lib.payload("plain"), 400)
        return f"{type(error).__name__} (400) for topic org.example.other on {device['topic']}'s token, not delivered"

    def case_other_team(self) -> str:
        device = self.devices["beta"]  # team beta's app, pushed with team alpha's key
        client = self.lib.client(self.keys["alpha"])
        error = self.expect_error("TopicDisallowed", client, device["token"], device["topic"],
                                  self.lib.payload("plain"), 400)
        return (f"{type(error).__name__} (400) for {device['topic']} (team {device['team_id']}) with a token of "
                f"team {self.keys['alpha']['team_id']}, not delivered")

    def case_unregistered(self) -> str:
        device = self.devices["gone"]
        client = self.lib.client(self.keys["alpha"])
        error = self.expect_error("Unregistered", client, device["token"], device["topic"],
                                  self.lib.payload("plain"), 410)
        timestamp = self.lib.unregistered_timestamp(error)
        if timestamp != device["uninstalled_at"]:
            raise CaseFailure(f"{type(error).__name__} with timestamp {timestamp!r}, expected the uninstall time "
                              f"{device['uninstalled_at']} (Unix ms)")
        return f"{type(error).__name__} (410), its timestamp {timestamp} = the uninstall time (Unix ms)"

    def case_too_large(self) -> str:
        device = self.devices["alpha"]
        client = self.lib.client(self.keys["alpha"])
        payload = self.lib.payload("large")
        error = self.expect_error("PayloadTooLarge", client, device["token"], device["topic"], payload, 413)
        return f"{type(error).__name__} (413) for a {self.lib.payload_size(payload)}-byte payload, not delivered"

    def case_wrong_key(self) -> str:
        device = self.devices["alpha"]
        client = self.lib.client(self.keys["wrong"])  # alpha's key id and team, another private key
        error = self.expect_error("InvalidProviderToken", client, device["token"], device["topic"],
                                  self.lib.payload("plain"), 403)
        return (f"{type(error).__name__} (403) for a token signed by another key under key id "
                f"{self.keys['wrong']['key_id']}, not delivered")

    def run(self) -> int:
        probe = self.lib.client(self.keys["alpha"])
        print(f"{self.lib.name} {dist_version(self.args.library)} -> {self.setup['nse_url']}; signs "
              f"{describe_iat(self.lib.token_of(probe))}", flush=True)
        cases = [
            ("push accepted -> recorded rewritten", self.case_accepted),
            ("unknown device token -> BadDeviceToken", self.case_bad_token),
            ("another app's topic -> DeviceTokenNotForTopic", self.case_wrong_topic),
            ("another team's app -> TopicDisallowed", self.case_other_team),
            ("uninstalled app -> Unregistered with timestamp", self.case_unregistered),
            ("oversized payload -> PayloadTooLarge", self.case_too_large),
            ("token signed by a wrong key -> InvalidProviderToken", self.case_wrong_key),
        ]
        failed = 0
        for name, case in cases:
            started = time.monotonic()
            try:
                detail, status = case(), "PASS"
            except CaseFailure as failure:
                detail, status = str(failure), "FAIL"
            except Exception as error:  # a bug here or in the library: still one line, still a failure
                detail, status = f"unexpected {type(error).__qualname__}: {one_line(error, 300)}", "FAIL"
            failed += status == "FAIL"
            print(f"{status} {self.lib.name}: {name}: {detail} ({(time.monotonic() - started) * 1000:.0f} ms)",
                  flush=True)
        self.lib.close()
        return 1 if failed else 0


# --- `provider`: one provider process, for the HAProxy runs ---------------------------------------------------------
def run_provider(args: argparse.Namespace) -> int:
    key = {"file": args.key_file, "key_id": args.key_id, "team_id": args.team_id}
    lib = library(args.library, args.url, args.ca)
    client = lib.client(key)
    results = []
    # Ready (imports done, client made), then wait for the go: the processes of a run start together.
    with open(args.ready, "w") as f:
        f.write(str(os.getpid()))
    deadline = time.monotonic() + 30
    while args.go and not os.path.exists(args.go):
        if time.monotonic() > deadline:
            print(f"provider {args.name}: no go within 30 s", file=sys.stderr)
            return 2
        time.sleep(0.01)
    for number in range(args.count):
        apns_id = str(uuid.uuid4())
        started = time.time()
        try:
            text = f"{args.name} {number + 1}/{args.count}"
            lib.push(client, args.token, args.topic, lib.payload("plain", text=text), apns_id)
            outcome = "200"
        except Exception as error:
            outcome = type(error).__name__
        results.append({"apns_id": apns_id, "outcome": outcome, "started": started, "ended": time.time()})
        if args.pause:
            time.sleep(args.pause)
    token = lib.token_of(client) if args.library == "pyapns_client" else ""
    lib.close()
    with open(args.out, "w") as f:
        json.dump({"name": args.name, "library": args.library, "version": dist_version(args.library),
                   "iat": describe_iat(token) if token else "", "results": results}, f)
    return 0


# --- `haproxy`: providers through HAProxy to one nse serve ----------------------------------------------------------
class ThroughHAProxy:
    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.setup = load_setup(args.setup)
        self.nse = NSE(self.setup["nse_url"], self.setup["ca"])
        self.haproxy = self.setup["haproxy"]
        self.pythons = self.setup["pythons"]
        self.work = self.setup["work"]
        self.children: list[subprocess.Popen] = []
        self.run_number = 0

    # HAProxy's statistics: the nse server's counters.
    def stats(self) -> dict:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.settimeout(5)
            s.connect(self.haproxy["stats_socket"])
            s.sendall(b"show stat\n")
            data = b""
            while chunk := s.recv(65536):
                data += chunk
        rows = list(csv.DictReader(io.StringIO(data.decode().lstrip("# "))))
        for row in rows:
            if row.get("pxname") == "nse" and row.get("svname") == "nse1":
                counters = {k: int(row[k] or 0) for k in ("connect", "reuse", "stot")}
                # Backend connections open now: in use, or idle (either kind).
                counters["open"] = sum(int(row[k] or 0) for k in ("used_conn_cur", "idle_conn_cur", "safe_conn_cur"))
                return counters
        raise CaseFailure("HAProxy's statistics have no nse/nse1 row")

    def providers(self, specs: list[dict], timeout: float = 90) -> list[dict]:
        """Starts one process per spec, lets them go together, waits for all; their outputs."""
        self.run_number += 1
        run = os.path.join(self.work, f"run{self.run_number}")
        os.makedirs(run)
        go = os.path.join(run, "go")
        started = []
        for n, spec in enumerate(specs):
            files = {k: os.path.join(run, f"{n}.{k}") for k in ("ready", "out", "err")}
            command = [self.pythons[spec["library"]], os.path.abspath(__file__), "provider", spec["library"],
                       "--url", spec["url"], "--ca", self.setup["ca"], "--name", spec["name"],
                       "--key-file", spec["key"]["file"], "--key-id", spec["key"]["key_id"],
                       "--team-id", spec["key"]["team_id"], "--token", spec["device"]["token"],
                       "--topic", spec["device"]["topic"], "--count", str(spec["count"]),
                       "--pause", str(spec.get("pause", 0)), "--ready", files["ready"], "--out", files["out"],
                       "--go", go if spec.get("together", True) else ""]
            with open(files["err"], "w") as err:
                process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=err)
            self.children.append(process)
            started.append((spec, process, files))
        deadline = time.monotonic() + 30
        while not all(os.path.exists(f["ready"]) for _, _, f in started):
            dead = [s["name"] for s, p, f in started if p.poll() is not None and not os.path.exists(f["ready"])]
            if dead or time.monotonic() > deadline:
                raise CaseFailure(f"provider(s) {dead or 'some'} never got ready: "
                                  + " ".join(self.tail(f["err"]) for _, _, f in started))
            time.sleep(0.02)
        open(go, "w").close()
        outputs = []
        deadline = time.monotonic() + timeout
        for spec, process, files in started:
            try:
                process.wait(timeout=max(1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                raise CaseFailure(f"provider {spec['name']} still running after {timeout} s")
            if process.returncode != 0 or not os.path.exists(files["out"]):
                raise CaseFailure(f"provider {spec['name']} exited {process.returncode}: {self.tail(files['err'])}")
            with open(files["out"]) as f:
                outputs.append(json.load(f))
        return outputs

    @staticmethod
    def tail(path: str) -> str:
        try:
            with open(path) as f:
                return " | ".join(f.read().strip().splitlines()[-3:])[:400]
        except OSError:
            return ""

    def stop_children(self) -> None:
        for process in self.children:
            if process.poll() is None:
                process.kill()
                process.wait(timeout=5)

    def check_recorded(self, outputs: list[dict], specs: list[dict], since: int) -> tuple[list, str]:
        """Every push answered 200, sent once (the request log) and recorded once (the device's results)."""
        problems = []
        log = [e for e in self.nse.requests(since) if e.get("token")]
        by_id: dict = {}
        for entry in log:
            apns_id = str(entry.get("apns_id") or entry["headers"].get("apns-id", "")).lower()
            by_id.setdefault(apns_id, []).append(entry)
        total = 0
        for output, spec in zip(outputs, specs):
            results = output["results"]
            total += len(results)
            refused = [r["outcome"] for r in results if r["outcome"] != "200"]
            if refused:
                problems.append(f"{spec['name']}: {len(refused)} of {len(results)} refused ({sorted(set(refused))})")
            sent = {r["apns_id"] for r in results}
            twice = [i for i in sent if len(by_id.get(i, [])) != 1]
            if twice:
                problems.append(f"{spec['name']}: {len(twice)} apns-ids not in the request log exactly once "
                                f"(e.g. {twice[0]}: {[e.get('status') for e in by_id.get(twice[0], [])]})")
            recorded = self.nse.recorded(spec["device"]["token"], sent, self.args.result_timeout)
            counts = {i: len(recorded.get(i, [])) for i in sent}
            wrong = {i: n for i, n in counts.items() if n != 1}
            if wrong:
                problems.append(f"{spec['name']}: {len(wrong)} pushes recorded other than once "
                                f"({sorted(set(wrong.values()))} times)")
            outcomes = {e.get("outcome") for i in sent for e in recorded.get(i, [])}
            if outcomes - {"not-invoked"}:
                problems.append(f"{spec['name']}: recorded outcomes {sorted(map(str, outcomes))}, expected not-invoked")
        statuses = sorted({e.get("status") for e in log}, key=str)
        # Interleaving as nse saw it: how often the provider changes from one request to the next in its log.
        owner = {r["apns_id"]: o["name"] for o in outputs for r in o["results"]}
        names = [owner.get(str(e.get("apns_id") or e["headers"].get("apns-id", "")).lower()) for e in log]
        switches = sum(1 for a, b in zip(names, names[1:]) if a != b)
        versions = {e.get("http_version") for e in log}
        return problems, (f"{total} pushes, {len(log)} requests (statuses {statuses}, "
                          f"HTTP/{'/'.join(sorted(versions))}), interleaved: the provider changes {switches} times "
                          "in nse's log")

    @staticmethod
    def overlap(outputs: list[dict]) -> float:
        """Seconds during which every provider was pushing (they ran at the same time)."""
        start = max(min(r["started"] for r in o["results"]) for o in outputs)
        end = min(max(r["ended"] for r in o["results"]) for o in outputs)
        return max(0.0, end - start)

    # The runs ---------------------------------------------------------------------------------------------------
    def warm_up(self) -> str:
        """One request through HAProxy before the providers: it opens the backend connection they then share (two
        clients arriving together while none exists yet can race to open one each), and shows HAProxy reaches nse
        over TLS. nse's own GET /v1/devices: no provider token, so no provider state."""
        status, body = NSE(self.haproxy["plain_url"], self.setup["ca"]).get("/v1/devices")
        if status != 200:
            raise CaseFailure(f"GET /v1/devices through HAProxy answered {status}: {body!r}"[:300])
        stats = self.stats()
        return f"GET /v1/devices through HAProxy: 200; {stats['open']} backend connection(s) open"

    def run_own_keys(self) -> str:
        """Two providers, each with its own key and team, at once through the frontend that forwards nothing."""
        front = self.haproxy["plain_url"]
        specs = [
            {"name": "alpha", "library": "pyapns_client", "url": front, "key": self.setup["keys"]["alpha"],
             "device": self.setup["devices"]["alpha"], "count": self.args.count, "pause": 0.01},
            {"name": "beta", "library": "pyapns_client", "url": front, "key": self.setup["keys"]["beta"],
             "device": self.setup["devices"]["beta"], "count": self.args.count, "pause": 0.01},
        ]
        since, before = self.nse.last_request_id(), self.stats()
        outputs = self.providers(specs)
        after = self.stats()
        problems, summary = self.check_recorded(outputs, specs, since)
        self.own_keys_connections = (after["connect"] - before["connect"], after["reuse"] - before["reuse"],
                                     after["open"])
        overlap = self.overlap(outputs)
        if overlap <= 0:
            problems.append("the two providers' pushes did not overlap in time")
        if problems:
            raise CaseFailure("; ".join(problems) + f" [{summary}]")
        iat_type = outputs[0]["iat"].split(" ")[1] if outputs[0]["iat"] else "?"
        return (f"{summary}; both pushing for {overlap:.1f} s at once; all 200, each recorded once, no "
                f"TooManyProviderTokenUpdates (each reusing its one token, iat a {iat_type})")

    def run_shared_connection(self) -> str:
        new, reused, open_after = self.own_keys_connections
        pushes = 2 * self.args.count
        if new + reused < pushes:
            raise CaseFailure(f"HAProxy counted {new} new and {reused} reused backend connections for {pushes} pushes")
        if open_after >= pushes or reused == 0:
            raise CaseFailure(f"not shared: {new} backend connection(s) opened, {reused} reuses, {open_after} open "
                              f"for {pushes} pushes")
        return (f"{pushes} pushes from {pushes} client connections (pyapns_client opens one per push) went over "
                f"{open_after} backend connection(s) to nse: {new} opened during the run, {reused} reuses "
                f"(http-reuse always, nbthread 1)")

    def run_shared_key_refused(self) -> str:
        """Self-check: two processes sharing one key, one after the other on the shared backend connection, with no
        forwarded headers, are one provider changing its token within 20 minutes: the second gets 429."""
        front = self.haproxy["plain_url"]
        key, device = self.setup["keys"]["shared"], self.setup["devices"]["alpha"]
        spec = {"library": "pyapns_client", "url": front, "key": key, "device": device, "count": 1,
                "together": False}
        since, before = self.nse.last_request_id(), self.stats()
        if before["open"] != 1:
            # With two open, HAProxy may put each process on its own: then they are two providers, rightly.
            raise Skip(f"{before['open']} backend connections open, not one: which carries each process is "
                       "HAProxy's choice, nothing to check")
        first = self.providers([{**spec, "name": "shared-1"}])[0]
        second = self.providers([{**spec, "name": "shared-2"}])[0]
        after = self.stats()
        got = (first["results"][0]["outcome"], second["results"][0]["outcome"])
        statuses = [e.get("status") for e in self.nse.requests(since) if e.get("token")]
        if after["connect"] != before["connect"] or after["open"] != 1:
            raise Skip(f"HAProxy opened another backend connection ({got}, statuses {statuses}): the two processes "
                       "may not have shared one, nothing to check")
        if got != ("200", "TooManyProviderTokenUpdatesException"):
            raise CaseFailure(f"got {got} (statuses {statuses}) on one backend connection, expected 200 then "
                              "TooManyProviderTokenUpdatesException")
        return (f"first process 200, second {got[1]} (statuses in nse's log {statuses}: pyapns_client retried "
                f"it), on one backend connection: the test can fail")

    def run_shared_key_forwarded(self) -> str:
        """pyapns_client and kalyke at once, sharing one key, through the frontend that sets X-Forwarded-For/-Port:
        nse tells the clients apart, and kalyke's new token on every push is never a renewal."""
        front = self.haproxy["forwarded_url"]
        key, device = self.setup["keys"]["shared"], self.setup["devices"]["alpha"]
        count = max(1, self.args.count // 2)
        specs = [
            {"name": "shared-pyapns", "library": "pyapns_client", "url": front, "key": key, "device": device,
             "count": count, "pause": 0.01},
            {"name": "shared-kalyke", "library": "kalyke", "url": front, "key": key, "device": device,
             "count": count, "pause": 0.01},
        ]
        since, before = self.nse.last_request_id(), self.stats()
        outputs = self.providers(specs)
        after = self.stats()
        problems, summary = self.check_recorded(outputs, specs, since)
        log = [e for e in self.nse.requests(since) if e.get("token")]
        unforwarded = [e["id"] for e in log
                       if "x-forwarded-for" not in e["headers"] or "x-forwarded-port" not in e["headers"]]
        if unforwarded:
            problems.append(f"{len(unforwarded)} requests reached nse without X-Forwarded-For/-Port")
        if problems:
            raise CaseFailure("; ".join(problems) + f" [{summary}]")
        return (f"{summary}; both pushing for {self.overlap(outputs):.1f} s at once; all 200, each recorded once; "
                f"{after['connect'] - before['connect']} new backend connection(s), {after['reuse'] - before['reuse']} "
                f"reuses")

    def run(self) -> int:
        print(f"through HAProxy {self.haproxy['version']}: {self.haproxy['plain_url']} (forwards nothing), "
              f"{self.haproxy['forwarded_url']} (X-Forwarded-For/-Port) -> nse {self.setup['nse_url']}", flush=True)
        cases = [
            ("warm-up: HAProxy reaches nse", self.warm_up),
            ("two providers, own keys, at once", self.run_own_keys),
            ("their pushes shared the backend connection", self.run_shared_connection),
            ("self-check: one key shared, nothing forwarded -> 429 for the second", self.run_shared_key_refused),
            ("one key shared, X-Forwarded-For/-Port -> all 200", self.run_shared_key_forwarded),
        ]
        failed = 0
        self.own_keys_connections = (0, 0, 0)
        try:
            for name, case in cases:
                started = time.monotonic()
                try:
                    detail, status = case(), "PASS"
                except Skip as skip:
                    detail, status = str(skip), "SKIP"
                except CaseFailure as failure:
                    detail, status = str(failure), "FAIL"
                except Exception as error:
                    detail, status = f"unexpected {type(error).__qualname__}: {one_line(error, 300)}", "FAIL"
                failed += status == "FAIL"
                print(f"{status} haproxy: {name}: {detail} ({(time.monotonic() - started) * 1000:.0f} ms)", flush=True)
            total = self.stats()
            print(f"haproxy: over all runs, {total['connect']} backend connection(s) opened to nse, "
                  f"{total['reuse']} reuses, {total['stot']} requests", flush=True)
        finally:
            self.stop_children()
        return 1 if failed else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    cases = sub.add_parser("cases", help="the library's cases against nse serve")
    cases.add_argument("library", choices=LIBRARIES)
    cases.add_argument("--setup", required=True, help="the JSON file the script wrote")
    cases.add_argument("--result-timeout", type=float, default=30.0)
    provider = sub.add_parser("provider", help="one provider process (for the HAProxy runs)")
    provider.add_argument("library", choices=LIBRARIES)
    for name in ("url", "ca", "name", "key-file", "key-id", "team-id", "token", "topic", "ready", "out"):
        provider.add_argument(f"--{name}", required=True)
    provider.add_argument("--go", default="", help="a file to wait for before the first push")
    provider.add_argument("--count", type=int, default=20)
    provider.add_argument("--pause", type=float, default=0.0)
    haproxy = sub.add_parser("haproxy", help="providers through HAProxy (python3 alone)")
    haproxy.add_argument("--setup", required=True)
    haproxy.add_argument("--count", type=int, default=20, help="pushes per provider")
    haproxy.add_argument("--result-timeout", type=float, default=30.0)
    args = parser.parse_args()
    # SIGTERM (the script's trap) as an exception, so that the finally blocks stop the provider processes.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    if args.command == "cases":
        return Cases(args).run()
    if args.command == "provider":
        return run_provider(args)
    return ThroughHAProxy(args).run()


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Interop test: aioapns, a maintained APNs client from PyPI, against `nse serve` with token authentication (and
with client certificates, when given).

aioapns signs its own ES256 provider token (PyJWT) from the .p8 key, speaks HTTP/2 over TLS (the h2 library) and
reports each push as a NotificationResult (status, description = APNs's reason). Every accepted push is then read
back from nse's result endpoint, GET /v1/devices/{token}/notifications, by its apns-id.

aioapns has no host/port argument: its connection pools connect to `protocol_class.APNS_SERVER` and
`protocol_class.APNS_PORT` (class attributes, 'api.push.apple.com' / 'api.development.push.apple.com' and 443), and
send the same host in the `host` header. So the pool's protocol_class is replaced with a subclass of aioapns's own
TLS protocol whose two attributes name the local server; the ssl_context (an aioapns constructor argument) trusts
the test's self-signed certificate. Nothing else of aioapns is changed.

Two ways nse serve has differed from Apple's servers break aioapns outright, so each is probed on its own first:
- `alpn`: aioapns's TLS context offers no ALPN (Apple's servers speak HTTP/2 on TLS without it); a server that falls
  back to HTTP/1.1 closes the connection. The workaround offers ALPN h2 in the ssl_context aioapns is given.
- `empty-data`: aioapns parses every DATA frame of a response as JSON, so a response that ends with an empty DATA
  frame (END_STREAM) instead of ending the HEADERS (200) or the body's DATA frame (errors) raises in its protocol and
  tears the connection down, with every other push in flight on it. The workaround skips empty DATA frames.
`--workarounds alpn,empty-data` applies them to the other cases; a probe that then fails is reported XFAIL and not
counted, one that passes says its workaround can go. Without --workarounds, aioapns runs exactly as shipped.

Run by scripts/interop-aioapns.sh. One line per case (PASS, FAIL, XFAIL) with the detail; exit 0 only when none fail.
"""
import argparse
import asyncio
import json
import logging
import ssl
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid

from aioapns import APNs, NotificationRequest, PushType
from aioapns.connection import APNsTLSClientProtocol

try:
    from importlib.metadata import version as _dist_version

    AIOAPNS_VERSION = _dist_version("aioapns")
except Exception:  # pragma: no cover - only for the banner
    AIOAPNS_VERSION = "?"


class CaseFailure(Exception):
    pass


WORKAROUNDS = ("alpn", "empty-data")


def local_protocol(host: str, port: int, skip_empty_data: bool) -> type:
    """aioapns's TLS client protocol, aimed at host:port instead of Apple's servers."""
    attributes = {"APNS_SERVER": host, "APNS_PORT": port}
    if skip_empty_data:
        def on_data_received(self, raw_data: bytes, stream_id: int) -> None:
            if raw_data:
                APNsTLSClientProtocol.on_data_received(self, raw_data, stream_id)
        attributes["on_data_received"] = on_data_received
    return type("LocalAPNsProtocol", (APNsTLSClientProtocol,), attributes)


class Harness:
    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        url = urllib.parse.urlsplit(args.url)
        if url.scheme != "https" or not url.hostname or not url.port:
            raise SystemExit(f"aioapns_client: --url must be https://HOST:PORT, got {args.url!r}")
        self.host, self.port = url.hostname, url.port
        self.base_url = f"https://{url.netloc}"
        with open(args.device_json) as f:
            device = json.load(f)
        self.bundle_id = device["bundle_id"]
        self.remote_token = device["tokens"]["remote"]
        self.voip_token = device["tokens"]["voip"]
        with open(args.key_file) as f:
            self.key = f.read()
        with open(args.envelope) as f:
            self.envelope = f.read().strip()
        with open(args.plaintext) as f:
            self.plaintext = json.load(f)
        self.workarounds = {w for w in (args.workarounds or "").split(",") if w}
        unknown = self.workarounds - set(WORKAROUNDS)
        if unknown:
            raise SystemExit(f"aioapns_client: unknown workaround(s) {sorted(unknown)}; known: {', '.join(WORKAROUNDS)}")
        self.clients: list = []

    # --- TLS and clients ---------------------------------------------------------------------------------------
    def ssl_context(self, alpn: bool) -> ssl.SSLContext:
        ctx = ssl.create_default_context(cafile=self.args.ca)
        if alpn:
            ctx.set_alpn_protocols(["h2"])
        return ctx

    def client(self, team_id: str, alpn=None, skip_empty_data=None) -> APNs:
        """An aioapns client with its own JWT signing (key, key_id, team_id), aimed at nse serve."""
        alpn = "alpn" in self.workarounds if alpn is None else alpn
        skip_empty_data = "empty-data" in self.workarounds if skip_empty_data is None else skip_empty_data
        apns = APNs(
            key=self.key,
            key_id=self.args.key_id,
            team_id=team_id,
            topic=self.bundle_id,
            use_sandbox=True,
            ssl_context=self.ssl_context(alpn),
            max_connections=1,
            max_connection_attempts=1,  # a refused connection is a failure here, not something to retry for seconds
            err_func=self._quiet,  # aioapns logs every non-200 at ERROR; the cases report them instead
        )
        apns.pool.protocol_class = local_protocol(self.host, self.port, skip_empty_data)
        self.clients.append(apns)
        return apns

    def certificate_client(self, cert_file: str) -> APNs:
        """An aioapns client that authenticates with a client certificate (cert and key in one PEM), as Flexisip
        does; aioapns takes its topic from the certificate's subject UID."""
        apns = APNs(
            client_cert=cert_file,
            use_sandbox=True,
            ssl_context=self.ssl_context("alpn" in self.workarounds),
            max_connections=1,
            max_connection_attempts=1,
            err_func=self._quiet,
        )
        apns.pool.protocol_class = local_protocol(self.host, self.port, "empty-data" in self.workarounds)
        self.clients.append(apns)
        return apns

    @staticmethod
    async def _quiet(request, result) -> None:
        return None

    def close(self) -> None:
        for apns in self.clients:
            apns.pool.close()

    # --- helpers -------------------------------------------------------------------------------------------------
    async def send(self, apns: APNs, request: NotificationRequest):
        try:
            return await asyncio.wait_for(apns.send_notification(request), self.args.push_timeout)
        except asyncio.TimeoutError:
            raise CaseFailure(f"no response from nse serve within {self.args.push_timeout} s")
        except Exception as error:  # aioapns's ConnectionError / MaxAttemptsExceeded / ConnectionClosed …
            detail = str(error) or "the connection was closed or refused before an answer"
            raise CaseFailure(f"aioapns raised {type(error).__name__}: {detail}")

    def _get_json(self, path: str):
        request = urllib.request.Request(self.base_url + path, headers={"accept": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=5, context=self.ssl_context(alpn=False)) as response:
                return response.status, json.loads(response.read() or b"null")
        except urllib.error.HTTPError as error:
            body = error.read()
            try:
                return error.code, json.loads(body)
            except ValueError:
                return error.code, body.decode(errors="replace")

    def _send_json(self, method: str, path: str, body=None):
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(self.base_url + path, data=data, method=method,
                                         headers={"content-type": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=5, context=self.ssl_context(alpn=False)) as response:
                return response.status, json.loads(response.read() or b"null")
        except urllib.error.HTTPError as error:
            return error.code, error.read().decode(errors="replace")

    async def add_fault(self, rule: dict) -> None:
        status, body = await asyncio.to_thread(self._send_json, "POST", "/v1/control/faults", rule)
        if status != 201:
            raise CaseFailure(f"POST /v1/control/faults {rule} answered {status}: {body!r}"[:300])

    async def clear_faults(self) -> None:
        await asyncio.to_thread(self._send_json, "DELETE", "/v1/control/faults")

    async def notifications(self, token: str):
        status, body = await asyncio.to_thread(self._get_json, f"/v1/devices/{token}/notifications?limit=1000")
        if status != 200 or not isinstance(body, list):
            raise CaseFailure(f"GET /v1/devices/{token[:8]}…/notifications answered {status}: {body!r}"[:300])
        return body

    async def recorded(self, token: str, apns_id: str) -> dict:
        """The result recorded for apns_id, polled until --result-timeout."""
        deadline = time.monotonic() + self.args.result_timeout
        while True:
            for entry in await self.notifications(token):
                if str(entry.get("apns_id", "")).lower() == apns_id.lower():
                    return entry
            if time.monotonic() >= deadline:
                raise CaseFailure(f"no result recorded for apns-id {apns_id} within {self.args.result_timeout} s")
            await asyncio.sleep(0.1)

    async def not_recorded(self, token: str, apns_id: str) -> None:
        """A refused push must never be delivered: its apns-id is not among the device's results."""
        await asyncio.sleep(0.3)
        ids = {str(e.get("apns_id", "")).lower() for e in await self.notifications(token)}
        if apns_id.lower() in ids:
            raise CaseFailure(f"refused push {apns_id} was delivered anyway")

    @staticmethod
    def expect_status(result, status: str, reason) -> None:
        got = (result.status, result.description)
        if got != (status, reason):
            raise CaseFailure(f"aioapns reported status={result.status} reason={result.description!r}, "
                              f"expected status={status} reason={reason!r}")

    @staticmethod
    def expect_field(entry: dict, field: str, value) -> None:
        if entry.get(field) != value:
            raise CaseFailure(f"recorded {field}={entry.get(field)!r}, expected {value!r} "
                              f"(outcome={entry.get('outcome')!r}, reason={entry.get('reason')!r})")

    # --- probes of the known deviations ---------------------------------------------------------------------------
    def _probe_request(self) -> NotificationRequest:
        # Refused (unknown token), so a probe never delivers anything.
        return NotificationRequest(device_token="fedcba9876543210" * 4, message={"aps": {"alert": "probe"}},
                                   push_type=PushType.ALERT)

    async def probe_no_alpn(self) -> str:
        """aioapns's TLS as it connects to Apple: no ALPN offered, HTTP/2 straight away."""
        apns = self.client(self.args.team_id, alpn=False)
        result = await self.send(apns, self._probe_request())
        self.expect_status(result, "400", "BadDeviceToken")
        return "a TLS connection without ALPN speaks HTTP/2 (400 BadDeviceToken to a probe push)"

    async def probe_no_empty_data(self) -> str:
        """aioapns as shipped (every DATA frame is JSON): the connection must outlive a response, and serve another."""
        apns = self.client(self.args.team_id, alpn=True, skip_empty_data=False)
        first = await self.send(apns, self._probe_request())
        self.expect_status(first, "400", "BadDeviceToken")
        connection = apns.pool.connections[0] if apns.pool.connections else None
        await asyncio.sleep(0.3)
        transport = getattr(connection, "transport", None)
        if connection is None or connection not in apns.pool.connections or transport is None or transport.is_closing():
            raise CaseFailure("aioapns dropped its connection after the first response (a DATA frame it could not "
                              "parse as JSON: an empty DATA frame ending the stream?)")
        second = await self.send(apns, self._probe_request())
        self.expect_status(second, "400", "BadDeviceToken")
        if apns.pool.connections != [connection]:
            raise CaseFailure("the second push did not go on the same connection")
        return "two responses on one connection, each a HEADERS/DATA aioapns parses"

    # --- the cases ---------------------------------------------------------------------------------------------
    async def case_sealed_alert(self, apns: APNs) -> str:
        request = NotificationRequest(
            device_token=self.remote_token,
            message={"aps": {"alert": {"loc-key": "IM_MSG"}, "mutable-content": 1}, "enc": self.envelope},
            push_type=PushType.ALERT,
            priority=10,
        )
        result = await self.send(apns, request)
        self.expect_status(result, "200", None)
        if result.notification_id != request.notification_id:
            raise CaseFailure(f"apns-id {result.notification_id} != sent {request.notification_id}")
        entry = await self.recorded(self.remote_token, request.notification_id)
        self.expect_field(entry, "outcome", "rewritten")
        self.expect_field(entry, "push_type", "alert")
        display = entry.get("display") or {}
        want_title = self.plaintext.get("display_name") or self.plaintext["from"]
        if display.get("body") != self.plaintext["text"] or display.get("title") != want_title:
            raise CaseFailure(f"display {display!r} does not show the sealed message")
        return f"200, apns-id {request.notification_id}, recorded rewritten: {display.get('title')!r}: {display.get('body')!r}"

    async def case_voip(self, apns: APNs) -> str:
        call_uuid = str(uuid.uuid4()).upper()
        request = NotificationRequest(
            device_token=self.voip_token,
            message={"aps": {}, "call_uuid": call_uuid, "from": "sip:bob@example.org", "display_name": "Bob",
                     "handle_type": "generic", "video": False},
            push_type=PushType.VOIP,
            priority=10,
            apns_topic=f"{self.bundle_id}.voip",
        )
        result = await self.send(apns, request)
        self.expect_status(result, "200", None)
        entry = await self.recorded(self.voip_token, request.notification_id)
        self.expect_field(entry, "push_type", "voip")
        self.expect_field(entry, "outcome", "not-invoked")
        report = entry.get("call_report") or {}
        if str(report.get("uuid", "")).upper() != call_uuid:
            raise CaseFailure(f"call_report {report!r} is not the call {call_uuid} (reason={entry.get('reason')!r})")
        path = (entry.get("voip") or {}).get("path")
        if path != "pushkit":
            raise CaseFailure(f"voip.path={path!r}, expected 'pushkit'")
        return f"200, apns-id {request.notification_id}, recorded voip/not-invoked, call {call_uuid} reported via {path}"

    async def case_bad_token(self, apns: APNs) -> str:
        token = "0123456789abcdef" * 4  # well-formed, but no served device has it
        request = NotificationRequest(
            device_token=token,
            message={"aps": {"alert": {"title": "t", "body": "b"}}},
            push_type=PushType.ALERT,
        )
        result = await self.send(apns, request)
        self.expect_status(result, "400", "BadDeviceToken")
        return "400 BadDeviceToken"

    async def case_too_large(self, apns: APNs) -> str:
        message = {"aps": {"alert": {"title": "big", "body": "x" * 4200}}}
        size = len(json.dumps(message, ensure_ascii=False).encode())
        request = NotificationRequest(device_token=self.remote_token, message=message, push_type=PushType.ALERT)
        result = await self.send(apns, request)
        self.expect_status(result, "413", "PayloadTooLarge")
        await self.not_recorded(self.remote_token, request.notification_id)
        return f"413 PayloadTooLarge for a {size}-byte payload, not delivered"

    async def case_wrong_team(self, apns: APNs) -> str:
        request = NotificationRequest(
            device_token=self.remote_token,
            message={"aps": {"alert": {"title": "t", "body": "from another team"}}},
            push_type=PushType.ALERT,
        )
        result = await self.send(apns, request)
        self.expect_status(result, "403", "InvalidProviderToken")
        await self.not_recorded(self.remote_token, request.notification_id)
        return f"403 InvalidProviderToken for a token signed with team id {self.args.wrong_team_id}, not delivered"

    async def case_certificate(self, apns: APNs) -> str:
        request = NotificationRequest(
            device_token=self.remote_token,
            message={"aps": {"alert": {"loc-key": "IM_MSG"}, "mutable-content": 1}, "enc": self.envelope},
            push_type=PushType.ALERT,
        )
        result = await self.send(apns, request)
        self.expect_status(result, "200", None)
        entry = await self.recorded(self.remote_token, request.notification_id)
        self.expect_field(entry, "outcome", "rewritten")
        return f"200 with topic {apns.pool.apns_topic!r} from the certificate's UID, recorded rewritten"

    async def case_certificate_environment(self, apns: APNs) -> str:
        request = NotificationRequest(
            device_token=self.remote_token, message={"aps": {"alert": "x"}}, push_type=PushType.ALERT)
        result = await self.send(apns, request)
        self.expect_status(result, "403", "BadCertificateEnvironment")
        await self.not_recorded(self.remote_token, request.notification_id)
        return "403 BadCertificateEnvironment for a production certificate on the development server, not delivered"

    async def case_multiplexed(self, apns: APNs) -> str:
        """Several pushes at once on aioapns's one connection: concurrent HTTP/2 streams, each answered and recorded."""
        count = self.args.burst
        requests = [
            NotificationRequest(
                device_token=self.remote_token,
                message={"aps": {"alert": {"loc-key": "IM_MSG"}, "mutable-content": 1}, "enc": self.envelope},
                push_type=PushType.ALERT,
            )
            for _ in range(count)
        ]
        results = await asyncio.gather(*(self.send(apns, r) for r in requests))
        bad = [(r.status, r.description) for r in results if r.status != "200"]
        if bad:
            raise CaseFailure(f"{len(bad)} of {count} not accepted: {bad[:3]}")
        if {r.notification_id for r in results} != {r.notification_id for r in requests}:
            raise CaseFailure("the answers' apns-ids are not the requests'")
        deadline = time.monotonic() + self.args.result_timeout
        wanted = {r.notification_id.lower() for r in requests}
        while True:
            entries = {str(e.get("apns_id", "")).lower(): e for e in await self.notifications(self.remote_token)}
            if wanted <= entries.keys():
                break
            if time.monotonic() >= deadline:
                raise CaseFailure(f"{len(wanted - entries.keys())} of {count} accepted pushes never recorded")
            await asyncio.sleep(0.1)
        others = [entries[i] for i in sorted(wanted) if entries[i].get("outcome") != "rewritten"]
        if others:
            raise CaseFailure(f"{len(others)} of {count} not rewritten: " + "; ".join(
                f"{e.get('outcome')} ({e.get('reason')})" for e in others[:3]))
        return f"{count} concurrent streams on {len(apns.pool.connections)} connection(s): all 200, all recorded rewritten"

    def _alert(self) -> NotificationRequest:
        return NotificationRequest(
            device_token=self.remote_token,
            message={"aps": {"alert": {"loc-key": "IM_MSG"}, "mutable-content": 1}, "enc": self.envelope},
            push_type=PushType.ALERT,
        )

    async def case_settings_delay(self, apns: APNs) -> str:
        """A `settings_delay` fault: the next connection's SETTINGS come 1.5 s late; aioapns waits, then its push is
        answered 200 and recorded (a client must not give up on a slow handshake)."""
        await self.add_fault({"settings_delay": 1.5})
        try:
            late = self.client(self.args.team_id)
            request = self._alert()
            started = time.monotonic()
            result = await self.send(late, request)
            took = time.monotonic() - started
        finally:
            await self.clear_faults()
        self.expect_status(result, "200", None)
        if took < 1.4:
            raise CaseFailure(f"answered after {took:.2f} s: the SETTINGS frame was not held back")
        await self.recorded(self.remote_token, request.notification_id)
        return f"200 after {took:.1f} s on a connection whose SETTINGS came 1.5 s late, recorded"

    async def case_connection_cap(self, apns: APNs) -> str:
        """A `max_connections: 1` fault: the provider's connection in use keeps working; a second aioapns client of
        the same team is turned away (GOAWAY ENHANCE_YOUR_CALM) and its push is neither answered 200 nor recorded;
        with the rule removed, a new connection is served."""
        await self.add_fault({"max_connections": 1})
        try:
            first = self._alert()
            self.expect_status(await self.send(apns, first), "200", None)
            second_client = self.client(self.args.team_id)
            turned_away = self._alert()
            try:
                result = await asyncio.wait_for(second_client.send_notification(turned_away), self.args.push_timeout)
                outcome = f"status {result.status} {result.description!r}"
                if result.status == "200":
                    raise CaseFailure("a connection past the cap got its push answered 200")
            except CaseFailure:
                raise
            except asyncio.TimeoutError:
                raise CaseFailure(f"no answer and no close within {self.args.push_timeout} s past the cap")
            except Exception as error:  # aioapns reports the GOAWAY as a closed connection
                outcome = f"aioapns raised {type(error).__name__}"
            await self.not_recorded(self.remote_token, turned_away.notification_id)
        finally:
            await self.clear_faults()
        again = self._alert()
        self.expect_status(await self.send(self.client(self.args.team_id), again), "200", None)
        return f"in use: 200; second connection: {outcome}, not recorded; rule removed: 200"

    async def run(self) -> int:
        applied = ", ".join(sorted(self.workarounds)) or "none (aioapns as shipped)"
        print(f"aioapns {AIOAPNS_VERSION} -> {self.base_url}, topic {self.bundle_id}; workarounds: {applied}",
              flush=True)
        probes = [
            ("alpn", "h2 over TLS without ALPN, as aioapns connects to Apple", self.probe_no_alpn),
            ("empty-data", "responses aioapns can parse, connection kept", self.probe_no_empty_data),
        ]
        passed = failed = 0
        for workaround, name, probe in probes:
            started = time.monotonic()
            try:
                detail, ok = await probe(), True
            except CaseFailure as failure:
                detail, ok = str(failure), False
            except Exception as error:
                detail, ok = f"unexpected {type(error).__name__}: {error}", False
            took = f"({(time.monotonic() - started) * 1000:.0f} ms)"
            if ok:
                passed += 1
                note = f"; the '{workaround}' workaround is no longer needed" if workaround in self.workarounds else ""
                print(f"PASS {name}: {detail}{note} {took}", flush=True)
            elif workaround in self.workarounds:
                print(f"XFAIL {name}: {detail} (known deviation; '{workaround}' workaround on for the other cases) {took}",
                      flush=True)
            else:
                failed += 1
                print(f"FAIL {name}: {detail} {took}", flush=True)

        good = self.client(self.args.team_id)
        wrong = self.client(self.args.wrong_team_id)
        cases = [
            ("sealed alert push -> rewritten", self.case_sealed_alert, good),
            ("voip push -> recorded as voip", self.case_voip, good),
            ("unknown device token -> BadDeviceToken", self.case_bad_token, good),
            ("oversized payload -> PayloadTooLarge", self.case_too_large, good),
            ("token of another team -> InvalidProviderToken", self.case_wrong_team, wrong),
            ("multiplexed burst -> all rewritten", self.case_multiplexed, good),
            ("late SETTINGS (settings_delay fault) -> 200 after the delay", self.case_settings_delay, good),
            ("connection cap (max_connections fault) -> second connection turned away", self.case_connection_cap,
             good),
        ]
        if self.args.client_cert:
            cases.append(("client certificate -> rewritten", self.case_certificate,
                          self.certificate_client(self.args.client_cert)))
        if self.args.production_cert:
            cases.append(("production certificate -> BadCertificateEnvironment", self.case_certificate_environment,
                          self.certificate_client(self.args.production_cert)))
        for name, case, apns in cases:
            started = time.monotonic()
            try:
                detail = await case(apns)
                passed += 1
                status = "PASS"
            except CaseFailure as failure:
                detail, status = str(failure), "FAIL"
            except Exception as error:  # a bug in this script or in a library: still one line, still a failure
                detail, status = f"unexpected {type(error).__name__}: {error}", "FAIL"
            failed += status == "FAIL"
            print(f"{status} {name}: {detail} ({(time.monotonic() - started) * 1000:.0f} ms)", flush=True)
        self.close()
        print(f"aioapns: {passed} passed, {failed} failed", flush=True)
        return 0 if failed == 0 else 1


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", required=True, help="nse serve's listening URL, https://127.0.0.1:PORT")
    parser.add_argument("--ca", required=True, help="PEM certificate to trust (the server's self-signed one)")
    parser.add_argument("--device-json", required=True, help="the device's device.json (tokens, bundle id)")
    parser.add_argument("--key-file", required=True, help="the provider key, AuthKey_KEYID.p8")
    parser.add_argument("--key-id", required=True)
    parser.add_argument("--team-id", required=True)
    parser.add_argument("--wrong-team-id", default="WRONGTEAM9")
    parser.add_argument("--envelope", required=True, help="file holding the sealed envelope of --plaintext")
    parser.add_argument("--plaintext", required=True, help="the message plaintext that was sealed")
    parser.add_argument("--workarounds", default="",
                        help=f"comma-separated, of {', '.join(WORKAROUNDS)}: known nse deviations to work around")
    parser.add_argument("--client-cert", help="a development client certificate and its key (one PEM) for nse serve's --client-ca")
    parser.add_argument("--production-cert", help="a production client certificate and its key (one PEM)")
    parser.add_argument("--verbose", action="store_true", help="show aioapns's and asyncio's own log lines")
    parser.add_argument("--burst", type=int, default=8, help="pushes sent at once in the multiplexing case")
    parser.add_argument("--push-timeout", type=float, default=15.0, help="seconds to wait for one push's answer")
    parser.add_argument("--result-timeout", type=float, default=30.0, help="seconds to wait for a recorded result")
    parser.add_argument("--total-timeout", type=float, default=180.0, help="seconds for the whole run")
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr, format="log: %(name)s %(levelname)s %(message)s")
    if not args.verbose:
        # aioapns logs each dropped connection and failed send, asyncio each protocol exception with its traceback;
        # the case lines carry what went wrong.
        logging.getLogger("aioapns").setLevel(logging.CRITICAL)
        logging.getLogger("asyncio").setLevel(logging.CRITICAL)

    async def run() -> int:
        return await Harness(args).run()

    try:
        return asyncio.run(asyncio.wait_for(run(), args.total_timeout))
    except asyncio.TimeoutError:
        print(f"FAIL the run did not finish within {args.total_timeout} s", flush=True)
        return 1


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Interop test: Live Activity pushes from two APNs provider libraries from PyPI to `nse serve` (h2 over TLS, token
authentication), each library building its own payloads and signing its own ES256 provider tokens:

- aioapns 4.0: `NotificationRequest(push_type=PushType.LIVEACTIVITY, apns_topic=BUNDLE.push-type.liveactivity)`
  with the payload as a dict (aioapns has no Live Activity payload type); aimed at nse as
  Tests/interop/aioapns_client.py explains (its protocol class names the server; its ssl_context trusts the
  test's certificate and offers ALPN h2).
- kalyke-apns 1.5.0: `LiveActivityClient`, `LiveActivityApnsConfig` and `LiveActivityPayload` (event, timestamp,
  content-state, attributes-type and attributes, stale and dismissal dates), aimed at nse as
  Tests/interop/apns_clients.py explains (`_base_url` overridden, SSL_CERT_FILE). Its start payload requires
  `attributes-type` and `attributes` and then leaves both out of the JSON it sends (1.5.0), so ActivityKit cannot
  start that activity: nse records it `activity-ignored` (`activity-payload-invalid`), which the case checks. Its
  payload type has no `input-push-token` either; its updates go to an activity the app started
  (`nse device activity start`).

Neither library, nor pyapns_client, has a path for the channel-management API or for broadcasts (each sends to
`/3/device/{token}` only): scripts/interop-live-activities.sh checks those with curl.

Cases, one PASS/FAIL line each: a start to a push-to-start token (read back `activity-started`), an update (read
back `activity-updated`, the device's state changed), an update older than the content shown (`activity-ignored`),
the bundle id alone as topic (400 BadTopic, through the library's own error), an end (`activity-ended`).

    python live_activity_clients.py LIBRARY --setup setup.json
Exit status 0 only when no case failed.
"""
import argparse
import asyncio
import json
import os
import ssl
import subprocess
import sys
import time
import urllib.parse
import urllib.request
import uuid


class CaseFailure(Exception):
    pass


class Setup:
    def __init__(self, path: str) -> None:
        with open(path) as f:
            data = json.load(f)
        self.url, self.ca, self.nse_path, self.device = data["url"], data["ca"], data["nse"], data["device"]
        self.key = {"file": data["key_file"], "key_id": data["key_id"], "team_id": data["team_id"]}
        with open(os.path.join(self.device, "device.json")) as f:
            self.bundle_id = json.load(f)["bundle_id"]
        self.topic = self.bundle_id + ".push-type.liveactivity"

    def nse(self, *arguments: str) -> dict:
        output = subprocess.run([self.nse_path, *arguments], capture_output=True, text=True, timeout=30)
        if output.returncode != 0:
            raise CaseFailure(f"nse {' '.join(arguments)}: exit {output.returncode}: {output.stderr.strip()}")
        return json.loads(output.stdout)

    def results(self, token: str, apns_id: str, timeout: float = 15) -> dict:
        """The result recorded for apns_id, read from nse's result endpoint (bounded wait)."""
        context = ssl.create_default_context(cafile=self.ca)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            url = f"{self.url}/v1/devices/{token}/notifications?limit=100"
            with urllib.request.urlopen(url, timeout=5, context=context) as response:
                for result in json.load(response):
                    if result.get("apns_id") == apns_id:
                        return result
            time.sleep(0.05)
        raise CaseFailure(f"no result recorded for {apns_id}")


class Aioapns:
    name = "aioapns"

    def __init__(self, setup: Setup) -> None:
        from aioapns import APNs, NotificationRequest, PushType
        from aioapns.connection import APNsTLSClientProtocol
        self.request, self.push_type = NotificationRequest, PushType
        url = urllib.parse.urlsplit(setup.url)
        context = ssl.create_default_context(cafile=setup.ca)
        context.set_alpn_protocols(["h2"])
        with open(setup.key["file"]) as f:
            key = f.read()
        # aioapns's pool binds to the loop current when it is made: the one its pushes then run on.
        self.loop = asyncio.new_event_loop()
        asyncio.set_event_loop(self.loop)
        self.apns = APNs(key=key, key_id=setup.key["key_id"], team_id=setup.key["team_id"], topic=setup.bundle_id,
                         use_sandbox=True, ssl_context=context, max_connections=1, max_connection_attempts=1,
                         err_func=self._quiet)
        self.apns.pool.protocol_class = type(
            "LocalAPNsProtocol", (APNsTLSClientProtocol,), {"APNS_SERVER": url.hostname, "APNS_PORT": url.port})

    @staticmethod
    async def _quiet(request, result) -> None:
        return None

    def send(self, token: str, aps: dict, topic: str, priority: int = 10) -> str:
        """Sends the push; its apns-id, or CaseFailure naming APNs's reason."""
        apns_id = str(uuid.uuid4())
        request = self.request(device_token=token, message={"aps": aps}, notification_id=apns_id,
                               priority=priority, push_type=self.push_type.LIVEACTIVITY, apns_topic=topic)
        result = self.loop.run_until_complete(asyncio.wait_for(self.apns.send_notification(request), 20))
        if not result.is_successful:
            raise CaseFailure(f"refused: {result.status} {result.description}")
        return apns_id

    def close(self) -> None:
        self.apns.pool.close()
        self.loop.close()


class Kalyke:
    name = "kalyke"

    def __init__(self, setup: Setup) -> None:
        os.environ["SSL_CERT_FILE"] = setup.ca
        import kalyke
        self.lib = kalyke
        url = setup.url

        class LocalClient(kalyke.LiveActivityClient):
            @property
            def _base_url(self) -> str:
                return url

        class LocalPlainClient(kalyke.ApnsClient):
            @property
            def _base_url(self) -> str:
                return url

        credentials = {"use_sandbox": True, "team_id": setup.key["team_id"], "auth_key_id": setup.key["key_id"],
                       "auth_key_filepath": setup.key["file"]}
        self.client = LocalClient(**credentials)
        # kalyke's Live Activity config refuses a topic without .push-type.liveactivity itself; its plain client
        # sends such a push, so the server's answer to it can be seen.
        self.plain = LocalPlainClient(**credentials)

    def payload(self, aps: dict):
        """kalyke's own payload type for what it can say; a dict for what it cannot (input-push-token)."""
        from datetime import datetime
        lib = self.lib
        event = {"start": lib.LiveActivityEvent.START, "update": lib.LiveActivityEvent.UPDATE,
                 "end": lib.LiveActivityEvent.END}[aps["event"]]
        alert = aps.get("alert")
        return lib.LiveActivityPayload(
            alert=lib.PayloadAlert(title=alert["title"], body=alert["body"]) if alert else None,
            timestamp=datetime.fromtimestamp(aps["timestamp"]), event=event,
            content_state=aps.get("content-state", {}),
            dismissal_date=datetime.fromtimestamp(aps["dismissal-date"]) if "dismissal-date" in aps else None,
            attributes_type=aps.get("attributes-type"), attributes=aps.get("attributes"))

    def send(self, token: str, aps: dict, topic: str, priority: int = 10) -> str:
        apns_id = str(uuid.uuid4())
        lib = self.lib
        try:
            config = lib.LiveActivityApnsConfig(
                topic=topic, identifier=apns_id,
                priority=lib.ApnsPriority.IMMEDIATELY if priority == 10 else lib.ApnsPriority.BASED_ON_POWER)
        except ValueError:
            config = lib.ApnsConfig(topic=topic, push_type=lib.ApnsPushType.LIVEACTIVITY, identifier=apns_id)
            return self._run(self.plain, token, {"aps": aps}, config, apns_id)
        return self._run(self.client, token, self.payload(aps), config, apns_id)

    def _run(self, client, token, payload, config, apns_id) -> str:
        try:
            asyncio.run(asyncio.wait_for(
                client.send_message(device_token=token, payload=payload, apns_config=config), 20))
        except Exception as error:  # kalyke raises one class per APNs reason
            raise CaseFailure(f"refused: {type(error).__name__}")
        return apns_id

    def close(self) -> None:
        pass


def run(library, setup: Setup) -> int:
    failures = 0
    now = int(time.time())
    start_token = setup.nse("device", "activity", "push-to-start-token", setup.device,
                            "--attributes-type", "Delivery")["push_to_start_token"]
    activity = setup.nse("device", "activity", "start", setup.device, "--attributes-type", "Delivery",
                         "--attributes", '{"order":"7"}', "--content-state", '{"eta":"20 min"}')
    token = activity["push_token"]

    def case(name: str, check) -> None:
        nonlocal failures
        try:
            detail = check()
            print(f"PASS {library.name}: {name}: {detail}")
        except Exception as failure:  # a case that raises anything else fails too, and the others still run
            failures += 1
            print(f"FAIL {library.name}: {name}: {type(failure).__name__}: {failure}")

    def expect(result: dict, outcome: str) -> str:
        if result.get("outcome") != outcome:
            raise CaseFailure(f"recorded {result.get('outcome')} ({result.get('reason')}), expected {outcome}")
        return result["reason"].split(":")[0]

    def start() -> str:
        aps = {"timestamp": now, "event": "start", "content-state": {"eta": "15 min"}, "attributes-type": "Delivery",
               "attributes": {"order": "42"}, "alert": {"title": "Order 42", "body": "On its way"}}
        apns_id = library.send(start_token, aps, setup.topic)
        result = setup.results(start_token, apns_id)
        if library.name == "kalyke":
            # kalyke 1.5.0 requires attributes-type and attributes for a start, then leaves both out of the JSON
            # it sends (LiveActivityPayload.dict): ActivityKit cannot start such an activity, and nse says so.
            word = expect(result, "activity-ignored")
            if word != "activity-payload-invalid":
                raise CaseFailure(f"ignored as {word}, expected activity-payload-invalid")
            return "kalyke sends no attributes-type: ignored as activity-payload-invalid, as ActivityKit would"
        return expect(result, "activity-started") + f", {result['live_activity']['attributes_type']} started"

    def update() -> str:
        apns_id = library.send(token, {"timestamp": now + 5, "event": "update", "content-state": {"eta": "4 min"}},
                               setup.topic, priority=5)
        word = expect(setup.results(token, apns_id), "activity-updated")
        shown = setup.nse("device", "activity", "list", setup.device)["activities"]
        mine = [a for a in shown if a["push_token"] == token]
        if not mine or mine[0]["content_state"] != {"eta": "4 min"}:
            raise CaseFailure(f"the device shows {mine[0]['content_state'] if mine else 'no activity'}")
        return word + ", the device shows the new content"

    def older() -> str:
        apns_id = library.send(token, {"timestamp": now + 1, "event": "update", "content-state": {"eta": "old"}},
                               setup.topic, priority=5)
        return expect(setup.results(token, apns_id), "activity-ignored")

    def bad_topic() -> str:
        try:
            library.send(token, {"timestamp": now + 6, "event": "update", "content-state": {}}, setup.bundle_id)
        except CaseFailure as refusal:
            if "BadTopic" not in str(refusal):
                raise CaseFailure(f"{refusal}, expected BadTopic")
            return str(refusal)
        raise CaseFailure("accepted with the bundle id as topic")

    def end() -> str:
        aps = {"timestamp": now + 10, "event": "end", "content-state": {"eta": "arrived"}, "dismissal-date": now + 60}
        apns_id = library.send(token, aps, setup.topic)
        result = setup.results(token, apns_id)
        word = expect(result, "activity-ended")
        return word + f", on the lock screen until {result['live_activity']['dismissed_at']}"

    for name, check in [("start with a push-to-start token", start), ("update an activity", update),
                        ("an older update is ignored", older), ("the bundle id as topic", bad_topic),
                        ("end with a dismissal date", end)]:
        case(name, check)
    library.close()
    return failures


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("library", choices=["aioapns", "kalyke"])
    parser.add_argument("--setup", required=True)
    args = parser.parse_args()
    setup = Setup(args.setup)
    library = Aioapns(setup) if args.library == "aioapns" else Kalyke(setup)
    failures = run(library, setup)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

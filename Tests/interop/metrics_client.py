#!/usr/bin/env python3
"""Interop test: prometheus-client's own parser (`prometheus_client.parser.text_string_to_metric_families`, what
Python exporters and many scrapers are tested against) reads `nse serve`'s and `nse sip-server`'s /metrics before
and after the full path runs, and the counters must have moved by exactly what was done:

- two plain alerts pushed with `nse push` (200, not-invoked) and one to a token nse does not serve (400
  BadDeviceToken);
- the device's app registers with `nse sip-server` (`nse device register`), and `nse send` sends it a sealed MESSAGE:
  the SIP server holds it, pushes to `nse serve` (200), the extension registers, fetches and decrypts it
  (rewritten), the message is delivered.

Every family must parse with the type nse declares (counter, gauge, histogram), and no label may carry a device
token, an address of record or a Call-ID. Run by scripts/interop-metrics.sh; one line per check, exit 0 only when
none fail.
"""
import argparse
import json
import subprocess
import sys
import time
import urllib.request

from prometheus_client.parser import text_string_to_metric_families

SERVE_TYPES = {
    "nse_apns_pushes": "counter",
    "nse_notifications": "counter",
    "nse_extension_wall_seconds": "histogram",
    "nse_extension_peak_footprint_bytes": "histogram",
    "nse_delivery_queue_depth": "gauge",
    "nse_http_connections_open": "gauge",
}
SIP_TYPES = {
    "nse_sip_registrations": "gauge",
    "nse_sip_held_messages": "gauge",
    "nse_sip_calls": "gauge",
    "nse_sip_responses": "counter",
    "nse_sip_messages_held": "counter",
    "nse_sip_messages_delivered": "counter",
    "nse_sip_messages_expired": "counter",
    "nse_sip_pushes": "counter",
}

failures = []


def check(ok, what, detail=""):
    print(f"{'PASS' if ok else 'FAIL'} {what}" + (f": {detail}" if detail and not ok else ""))
    if not ok:
        failures.append(what)


class Scrape:
    """One /metrics answer, parsed by prometheus-client: the families' types and every sample's value."""

    def __init__(self, url):
        with urllib.request.urlopen(url, timeout=10) as response:
            self.content_type = response.headers.get("Content-Type", "")
            self.text = response.read().decode("utf-8")
        self.types = {}
        self.samples = {}
        for family in text_string_to_metric_families(self.text):
            self.types[family.name] = family.type
            for sample in family.samples:
                self.samples[(sample.name, frozenset(sample.labels.items()))] = sample.value

    def value(self, name, **labels):
        return self.samples.get((name, frozenset(labels.items())), 0.0)

    def sum(self, name, **labels):
        wanted = set(labels.items())
        return sum(v for (n, ls), v in self.samples.items() if n == name and wanted <= ls)


def run(*args, expect=0):
    done = subprocess.run(args, capture_output=True, text=True, timeout=60)
    if done.returncode != expect:
        sys.exit(f"metrics_client: {' '.join(args[:3])} exited {done.returncode}, expected {expect}: {done.stderr}")
    return done.stdout


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--nse", required=True)
    parser.add_argument("--serve", required=True, help="nse serve's base URL")
    parser.add_argument("--sip-metrics", required=True, help="nse sip-server's /metrics URL")
    parser.add_argument("--proxy", required=True, help="nse sip-server's SIP URI (TCP)")
    parser.add_argument("--device", required=True)
    parser.add_argument("--work", required=True)
    args = parser.parse_args()
    serve_metrics = args.serve + "/metrics"
    device = json.load(open(args.device + "/device.json"))
    token = device["tokens"]["remote"].lower()

    serve0, sip0 = Scrape(serve_metrics), Scrape(args.sip_metrics)
    for scrape, name in ((serve0, "nse serve"), (sip0, "nse sip-server")):
        check(
            scrape.content_type.startswith("text/plain; version=0.0.4"),
            f"{name} answers /metrics in the text format 0.0.4", scrape.content_type)

    payload = args.work + "/plain.json"
    with open(payload, "w") as file:
        file.write('{"aps":{"alert":"Hello"}}')
    for _ in range(2):
        run(args.nse, "push", "--url", args.serve, "--device", args.device, payload)
    run(args.nse, "push", "--url", args.serve, "--device-token", "00ff", "--topic", device["bundle_id"], payload,
        expect=65)
    run(args.nse, "device", "set", args.device, "--sip-account", "sip:bob@example.org", "--sip-proxy", args.proxy)
    run(args.nse, "device", "register", args.device)
    sent = json.loads(run(
        args.nse, "send", "--proxy", args.proxy, "--from", "sip:alice@example.org", "--to", "sip:bob@example.org",
        "--text", "Lunch at 1?", "--seal-to", args.device, "--display-name", "Alice", "--timeout", "10"))
    call_id = sent["call_id"]

    # The pushes run after their 200: wait (bounded) until all three are recorded, their queue slots given back and
    # the message delivered. A push's result is counted before its slot is given back, so a scrape between the two
    # sees it recorded and still queued.
    deadline = time.monotonic() + 60
    while True:
        serve1, sip1 = Scrape(serve_metrics), Scrape(args.sip_metrics)
        recorded = serve1.sum("nse_notifications_total") - serve0.sum("nse_notifications_total")
        queued = serve1.value("nse_delivery_queue_depth")
        delivered = sip1.value("nse_sip_messages_delivered_total") - sip0.value("nse_sip_messages_delivered_total")
        if (recorded >= 3 and queued == 0 and delivered >= 1) or time.monotonic() > deadline:
            break
        time.sleep(0.2)

    for scrape, expected, name in ((serve1, SERVE_TYPES, "nse serve"), (sip1, SIP_TYPES, "nse sip-server")):
        for family, kind in expected.items():
            check(scrape.types.get(family) == kind, f"{name}: {family} is a {kind}", scrape.types.get(family))

    def delta(after, before, name, **labels):
        return after.value(name, **labels) - before.value(name, **labels)

    pushes = "nse_apns_pushes_total"
    accepted = dict(push_type="alert", priority="10", status="200", reason="")
    check(delta(serve1, serve0, pushes, **accepted) == 3, "serve: 3 alerts answered 200 (2 nse push, 1 SIP server)",
          delta(serve1, serve0, pushes, **accepted))
    refused = dict(push_type="alert", priority="10", status="400", reason="BadDeviceToken")
    check(delta(serve1, serve0, pushes, **refused) == 1, "serve: 1 push answered 400 BadDeviceToken",
          delta(serve1, serve0, pushes, **refused))
    check(serve1.sum(pushes) - serve0.sum(pushes) == 4, "serve: 4 pushes answered in all")
    notifications = "nse_notifications_total"
    check(delta(serve1, serve0, notifications, push_type="alert", outcome="not-invoked") == 2,
          "serve: 2 notifications not-invoked")
    check(delta(serve1, serve0, notifications, push_type="alert", outcome="rewritten") == 1,
          "serve: the SIP message's notification rewritten",
          [(dict(ls), v) for (n, ls), v in serve1.samples.items() if n == notifications])
    for histogram in ("nse_extension_wall_seconds", "nse_extension_peak_footprint_bytes"):
        count = delta(serve1, serve0, histogram + "_count")
        check(count == 1, f"serve: {histogram} observed the one extension that ran", count)
        check(delta(serve1, serve0, histogram + "_sum") > 0, f"serve: {histogram}'s sum grew")
        check(serve1.value(histogram + "_bucket", le="+Inf") == serve1.value(histogram + "_count"),
              f"serve: {histogram}'s +Inf bucket is its count")
    check(serve1.value("nse_delivery_queue_depth") == 0, "serve: the queue is empty once all is recorded (within 60 s)")
    check(serve1.value("nse_http_connections_open") >= 1, "serve: the scraping connection is open")

    check(sip1.value("nse_sip_registrations") == 1, "sip: one binding (the extension's REGISTER replaced the app's)",
          sip1.value("nse_sip_registrations"))
    check(delta(sip1, sip0, "nse_sip_responses_total", method="REGISTER", status="200") >= 2,
          "sip: the app's and the extension's REGISTERs answered 200")
    check(delta(sip1, sip0, "nse_sip_messages_held_total") == 1, "sip: 1 message held")
    check(delta(sip1, sip0, "nse_sip_messages_delivered_total") == 1, "sip: 1 message delivered")
    check(sip1.value("nse_sip_held_messages") == 0, "sip: nothing held once delivered")
    check(delta(sip1, sip0, "nse_sip_pushes_total", status="200") == 1, "sip: 1 push answered 200 by nse serve")
    answered = sum(delta(sip1, sip0, "nse_sip_responses_total", method="MESSAGE", status=s) for s in ("200", "202"))
    check(answered == 1, "sip: the sender's MESSAGE answered once (200, or 202 if held past the accept timeout)")
    check(sip1.sum("nse_sip_calls") == 0, "sip: no call")

    for scrape, name in ((serve1, "serve"), (sip1, "sip")):
        values = {v.lower() for (_, labels), _ in scrape.samples.items() for _, v in labels}
        leaked = [v for v in values if token in v or "bob" in v or "alice" in v or call_id.lower() in v]
        check(not leaked, f"{name}: no label names a token, an address of record or a Call-ID", leaked)

    print(f"metrics_client: {len(failures)} failed" if failures else "metrics_client: all passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

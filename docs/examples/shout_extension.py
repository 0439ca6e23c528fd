#!/usr/bin/env python3
"""An example Notification Service Extension for `nse run --extension`, in any language: this one in Python.

Protocol (docs/protocol.md): the host writes one JSON object per line on stdin, the extension answers on stdout.
1. Read the request: {"type":"request", "payload": {...}, "container": DIR, "budget_ms": ..., ...}
2. Deliver content once: {"type":"content", "content": {"aps": {...}, ...}}
3. If {"type":"time-will-expire"} arrives first, deliver a best attempt at once.
This one rewrites the alert body in capitals and tags the thread.
"""
import json
import sys

request = json.loads(sys.stdin.readline())
assert request["type"] == "request"
content = dict(request["payload"])
aps = dict(content.get("aps", {}))
alert = aps.get("alert", {})
if isinstance(alert, str):
    alert = {"body": alert}
alert = dict(alert)
alert["body"] = alert.get("body", "").upper()
aps["alert"] = alert
aps["thread-id"] = "shouted"
content["aps"] = aps
print(json.dumps({"type": "content", "content": content, "reason": "shouted"}), flush=True)

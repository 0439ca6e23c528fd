#!/usr/bin/env python3
"""An extension that leaks on purpose, to show what a warm process does to a leak (`--extension-process warm`).

It speaks protocol version 2 (docs/protocol.md): it says `hello` with "requests": "many", so a host that keeps
extension processes warm sends it the next push's request after its `ready`. Every request keeps 6 MB it never
frees (LEAK_MB in the environment changes that), as Element X's extension leaked 6-9 MB a push. With a fresh process
per push nothing is lost; with a warm one the process grows push after push until the 24 MB limit kills it, as jetsam
does, on a later push: about the third, from Python's own footprint of about 7 MB (dirty memory: the limit does not
count the interpreter's clean code pages, as iOS does not).
"""
import json
import os
import sys

LEAK_BYTES = int(float(os.environ.get("LEAK_MB", "6")) * 1024 * 1024)
kept = []  # what every request leaves behind


def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


send({"type": "hello", "protocol": 2, "requests": "many"})
served = 0
for line in sys.stdin:
    message = json.loads(line)
    if message["type"] != "request":
        continue  # content-accepted and anything else between requests
    served += 1
    leak = bytearray(LEAK_BYTES)
    leak[::4096] = b"\x01" * len(range(0, LEAK_BYTES, 4096))  # every page touched, so it is resident
    kept.append(leak)
    content = dict(message["payload"])
    aps = dict(content.get("aps", {}))
    aps["alert"] = {"title": "Leaky", "body": "push %d served by process %d" % (served, os.getpid())}
    content["aps"] = aps
    send({"type": "content", "content": content, "reason": "leaked: %d MB kept" % (len(kept) * LEAK_BYTES >> 20)})
    # Wait for the host's answer, then say this instance is gone; end of file ends the process.
    for answer in sys.stdin:
        if json.loads(answer)["type"] == "content-accepted":
            break
    send({"type": "ready"})

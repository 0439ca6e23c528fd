#!/usr/bin/env python3
"""An APNs-shaped endpoint for tests that records what it receives: accepts POST /3/device/<token> (HTTP/1.1),
answers 200 with an apns-id, and prints one JSON line per push: the token, the apns-* headers and the payload.

usage: push-recorder.py -- prints its port on the first line, then a line per push; stops on SIGTERM.
"""
import http.server
import json
import sys
import uuid


class Recorder(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        if not self.path.startswith("/3/device/"):
            self.send_response(404)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        self.send_response(200)
        self.send_header("apns-id", self.headers.get("apns-id") or str(uuid.uuid4()))
        self.send_header("Content-Length", "0")
        self.end_headers()
        try:
            payload = json.loads(body)
        except ValueError:
            payload = None
        headers = {k.lower(): v for k, v in self.headers.items() if k.lower().startswith("apns-")}
        record = {"token": self.path[len("/3/device/"):], "headers": headers, "payload": payload}
        sys.stdout.write(json.dumps(record, sort_keys=True) + "\n")
        sys.stdout.flush()

    def log_message(self, *args):
        pass


server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Recorder)
print(server.server_address[1], flush=True)
server.serve_forever()

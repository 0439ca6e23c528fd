#!/usr/bin/env python3
"""A minimal APNs-shaped push receiver for the demo and tests: accepts POST /3/device/<token> (HTTP/1.1),
answers 200 with an apns-id like APNs, and hands each payload to `nse run` on the device, printing the result.

usage: push-receiver.py NSE_BINARY DEVICE_DIR [--text] -- prints its port on the first line
"""
import http.server
import json
import subprocess
import sys
import threading
import uuid

nse, device = sys.argv[1], sys.argv[2]
fmt = "text" if "--text" in sys.argv else "json"
lock = threading.Lock()


class Receiver(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        if not self.path.startswith("/3/device/"):
            self.send_response(404)
            self.end_headers()
            return
        apns_id = self.headers.get("apns-id") or str(uuid.uuid4())
        self.send_response(200)
        self.send_header("apns-id", apns_id)
        self.send_header("Content-Length", "0")
        self.end_headers()
        push_type = self.headers.get("apns-push-type", "alert")
        # Like APNs: accepted first, delivered after. One extension process per notification.
        result = subprocess.run([nse, "run", "--device", device, "--push-type", push_type, "--format", fmt],
                                input=body, capture_output=True)
        with lock:
            sys.stdout.write(result.stdout.decode())
            sys.stdout.flush()

    def log_message(self, *args):
        pass


server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Receiver)
print(server.server_address[1], flush=True)
server.serve_forever()

#!/usr/bin/env python3
"""The walkthrough's media server: serves media/ (beside this file) on a loopback address, as an app's CDN serves
the pictures its pushes name in `media-url`. A path under /slow/ is answered only after a minute: a download that
outlasts the extension's time (serviceExtensionTimeWillExpire).

    python3 examples/notification-service/media-server.py 127.0.0.1:9000

Prints its URL on its first line, then serves until SIGTERM or Ctrl-C. Loopback addresses only.
"""
import functools
import http.server
import os
import sys
import time


class Handler(http.server.SimpleHTTPRequestHandler):
    def do_GET(self):
        if self.path.startswith("/slow/"):
            time.sleep(60)
            self.path = self.path[len("/slow"):]
        super().do_GET()

    def log_message(self, format, *args):
        pass


def main():
    host, _, port = (sys.argv[1] if len(sys.argv) > 1 else "127.0.0.1:0").rpartition(":")
    if host not in ("127.0.0.1", "::1", "localhost"):
        sys.exit("media-server: serves on a loopback address only (127.0.0.1:PORT)")
    media = os.path.join(os.path.dirname(os.path.abspath(__file__)), "media")
    server = http.server.ThreadingHTTPServer((host, int(port)), functools.partial(Handler, directory=media))
    print(f"http://{host}:{server.server_port}/", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()

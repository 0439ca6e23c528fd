#!/usr/bin/env python3
"""Fan-out of one MESSAGE to a person's devices through `nse sip-server` (issue #36 §2): server time and memory per
device, against one device in the same run.

  python3 bench/fanout_bench.py [--devices N] [--rounds R]

N devices (default 100) register to one AOR, each with its own `+sip.instance` and push token, over TCP from this
script (a minimal SIP user agent per device, all on one selector thread, answering every MESSAGE 200 at once). Then
one MESSAGE, sent by Alice over its own connection, is held for the N devices and delivered to each:

- live: every device stays connected; the copies go out at once over the N connections.
- push-woken: every device closes its connection after registering (the app in the background); the server pushes
  each token (to an APNs-shaped endpoint in this script), and each push makes its device connect and REGISTER
  again, which delivers the message.

Server time: from Alice's MESSAGE written to the server's `delivered` event with `remaining: 0` (its `--events`
line), per device; for the push-woken run also when the last push reached the endpoint (the rest is the devices
connecting, registering and answering). Memory: the server's VmRSS (/proc) once idle after start, and after the last delivery; the
delta per device is (delta with N devices - delta with one device) / (N - 1). Each figure is the median of R rounds
(default 3), the baseline run (one device) interleaved with the N-device run. Runs in well under a minute.

Knobs: NSE_BIN_DIR (binaries, default .build/release).
"""
import argparse
import http.server
import json
import os
import secrets
import selectors
import socket
import statistics
import subprocess
import sys
import threading
import time

BIN = os.environ.get("NSE_BIN_DIR", ".build/release")
NSE = os.path.join(BIN, "nse")
AOR = "sip:bob@example.org"


def rss_kb(pid):
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return -1


class PushEndpoint:
    """POST /3/device/<token> answered 200; each push calls `on_push(token)`."""

    def __init__(self, on_push):
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self):
                self.rfile.read(int(self.headers.get("Content-Length", "0")))
                self.send_response(200)
                self.send_header("apns-id", self.headers.get("apns-id") or "00000000-0000-0000-0000-000000000000")
                self.send_header("Content-Length", "0")
                self.end_headers()
                outer.last = time.perf_counter()
                outer.on_push(self.path.rsplit("/", 1)[-1])

            def log_message(self, *args):
                pass

        class Listener(http.server.ThreadingHTTPServer):
            # The server opens a connection per push at once: the default backlog (5) would drop SYNs for 1 s.
            request_queue_size = 1024

        self.on_push = on_push
        self.last = None
        self.server = Listener(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


class Server:
    """`nse sip-server --events` on a free TCP port; its event lines read on a thread."""

    def __init__(self, push_url):
        self.process = subprocess.Popen(
            [NSE, "sip-server", "--listen", "tcp:127.0.0.1:0", "--events", "--push-url", push_url,
             "--accept-timeout", "30"],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env={**os.environ, "NSE_LOG_LEVEL": "warning"})
        first = json.loads(self.process.stdout.readline())
        self.port = first["listening"][0]["port"]
        self.done = {}
        self.lock = threading.Condition()
        threading.Thread(target=self.read, daemon=True).start()

    def read(self):
        for line in self.process.stdout:
            event = json.loads(line)
            if event.get("event") == "delivered" and event.get("remaining") == 0:
                with self.lock:
                    self.done[event["call_id"]] = time.perf_counter()
                    self.lock.notify_all()

    def wait_done(self, call_id, timeout=30):
        end = time.perf_counter() + timeout
        with self.lock:
            while call_id not in self.done:
                left = end - time.perf_counter()
                if left <= 0:
                    raise RuntimeError(f"{call_id}: not delivered to every device within {timeout} s")
                self.lock.wait(left)
            return self.done[call_id]

    def stop(self):
        self.process.terminate()
        self.process.wait(timeout=10)


class Device:
    """One of Bob's phones: a TCP connection that REGISTERs and answers every MESSAGE 200."""

    def __init__(self, number, port):
        self.number, self.port = number, port
        self.instance = f"urn:uuid:00000000-0000-4000-8000-{number:012d}"
        self.token = f"{number:08x}" + "ab" * 28
        self.sock = None
        self.buffer = b""
        self.registered = threading.Event()
        self.messages = 0

    def connect(self, selector):
        self.sock = socket.create_connection(("127.0.0.1", self.port))
        self.sock.setblocking(False)
        self.buffer = b""
        self.registered.clear()
        selector.register(self.sock, selectors.EVENT_READ, self)
        local = self.sock.getsockname()[1]
        branch, tag, call = secrets.token_hex(8), secrets.token_hex(4), secrets.token_hex(8)
        contact = (f"<sip:bob@127.0.0.1:{local};transport=tcp;pn-provider=apns.dev;pn-prid={self.token}:remote;"
                   f"pn-param=ABCD1234.org.example.nse.remote>;+sip.instance=\"<{self.instance}>\"")
        self.send(f"REGISTER sip:example.org SIP/2.0\r\nVia: SIP/2.0/TCP 127.0.0.1:{local};branch=z9hG4bK{branch};rport\r\n"
                  f"Max-Forwards: 70\r\nFrom: <{AOR}>;tag={tag}\r\nTo: <{AOR}>\r\nCall-ID: {call}\r\n"
                  f"CSeq: 1 REGISTER\r\nContact: {contact}\r\nExpires: 600\r\nContent-Length: 0\r\n\r\n")

    def send(self, text):
        data = text.encode()
        while data:
            try:
                sent = self.sock.send(data)
                data = data[sent:]
            except BlockingIOError:
                time.sleep(0.001)

    def close(self, selector):
        if self.sock:
            selector.unregister(self.sock)
            self.sock.close()
            self.sock = None

    def readable(self):
        chunk = self.sock.recv(65536)
        if not chunk:
            return False
        self.buffer += chunk
        while b"\r\n\r\n" in self.buffer:
            head, rest = self.buffer.split(b"\r\n\r\n", 1)
            lines = head.decode("utf-8", "replace").split("\r\n")
            length = 0
            for line in lines[1:]:
                name, _, value = line.partition(":")
                if name.strip().lower() in ("content-length", "l"):
                    length = int(value.strip())
            if len(rest) < length:
                break
            self.buffer = rest[length:]
            self.handle(lines)
        return True

    def handle(self, lines):
        if lines[0].startswith("SIP/2.0"):
            if " REGISTER" in next((l for l in lines if l.lower().startswith("cseq:")), ""):
                self.registered.set()
            return
        if lines[0].startswith("MESSAGE "):
            self.messages += 1
            keep = [l for l in lines[1:] if l.split(":", 1)[0].strip().lower()
                    in ("via", "v", "from", "f", "call-id", "i", "cseq")]
            to = next(l for l in lines[1:] if l.split(":", 1)[0].strip().lower() in ("to", "t"))
            self.send("SIP/2.0 200 OK\r\n" + "\r\n".join(keep) + f"\r\n{to};tag={secrets.token_hex(4)}\r\n"
                      "Content-Length: 0\r\n\r\n")


class Fleet:
    """N devices on one selector thread."""

    def __init__(self, count, port):
        self.selector = selectors.DefaultSelector()
        self.devices = [Device(n + 1, port) for n in range(count)]
        self.by_token = {d.token: d for d in self.devices}
        self.lock = threading.Lock()
        self.running = True
        self.wakes = []
        self.thread = threading.Thread(target=self.loop, daemon=True)
        self.thread.start()

    def loop(self):
        while self.running:
            with self.lock:
                wakes, self.wakes = self.wakes, []
                for device in wakes:
                    if device.sock is None:
                        device.connect(self.selector)
            if not self.selector.get_map():
                time.sleep(0.001)
                continue
            for key, _ in self.selector.select(timeout=0.01):
                device = key.data
                with self.lock:
                    if device.sock is not None and not device.readable():
                        device.close(self.selector)

    def connect_all(self):
        with self.lock:
            self.wakes.extend(self.devices)
        for device in self.devices:
            if not device.registered.wait(10):
                raise RuntimeError("a device was not registered within 10 s")

    def sleep_all(self):
        with self.lock:
            for device in self.devices:
                device.close(self.selector)

    def wake(self, token):
        device = self.by_token.get(token)
        if device:
            with self.lock:
                self.wakes.append(device)

    def stop(self):
        self.running = False
        self.thread.join(timeout=5)
        for device in self.devices:
            if device.sock:
                device.sock.close()


def send_from_alice(port, call_id):
    sock = socket.create_connection(("127.0.0.1", port))
    local = sock.getsockname()[1]
    body = b"nse3.xchacha20poly1305-sealedbox-ed25519." + b"A" * 11800 + b"." + b"B" * 300
    started = time.perf_counter()
    sock.sendall(f"MESSAGE {AOR} SIP/2.0\r\nVia: SIP/2.0/TCP 127.0.0.1:{local};branch=z9hG4bK{secrets.token_hex(8)}\r\n"
                 f"Max-Forwards: 70\r\nFrom: <sip:alice@example.org>;tag={secrets.token_hex(4)}\r\nTo: <{AOR}>\r\n"
                 f"Call-ID: {call_id}\r\nCSeq: 1 MESSAGE\r\nContent-Type: application/vnd.nse.envelope\r\n"
                 f"Content-Length: {len(body)}\r\n\r\n".encode() + body)
    return sock, started


def run(count, woken):
    """One server, `count` devices, one message: (seconds to the last delivery, RSS delta in KB, seconds to the
    last push received)."""
    fleet = None
    endpoint = PushEndpoint(lambda token: fleet and fleet.wake(token))
    server = Server(endpoint.url)
    try:
        time.sleep(0.2)
        idle = rss_kb(server.process.pid)
        fleet = Fleet(count, server.port)
        fleet.connect_all()
        if woken:
            fleet.sleep_all()
            time.sleep(0.2)
        call_id = f"fanout-{count}-{secrets.token_hex(4)}"
        alice, started = send_from_alice(server.port, call_id)
        finished = server.wait_done(call_id)
        alice.close()
        if any(d.messages != 1 for d in fleet.devices):
            raise RuntimeError("a device did not get the message exactly once")
        pushed = (endpoint.last - started) if woken and endpoint.last else 0.0
        return finished - started, rss_kb(server.process.pid) - idle, pushed
    finally:
        if fleet:
            fleet.stop()
        server.stop()
        endpoint.close()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--devices", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    started = time.perf_counter()
    print(f"fan-out: one MESSAGE to {args.devices} devices of one AOR against one device, "
          f"{args.rounds} rounds, medians (nse sip-server, loopback TCP)")
    print(f"{'':11} {'1 device':>10} {f'{args.devices} devices':>12} {'per device':>11} {'RSS delta':>10} "
          f"{'per device':>11} {'last push':>10}")
    for woken in (False, True):
        one, many = [], []
        for _ in range(args.rounds):
            one.append(run(1, woken))
            many.append(run(args.devices, woken))
        t1 = statistics.median(t for t, _, _ in one)
        tn = statistics.median(t for t, _, _ in many)
        m1 = statistics.median(m for _, m, _ in one)
        mn = statistics.median(m for _, m, _ in many)
        pushed = statistics.median(p for _, _, p in many)
        per_time = tn / args.devices
        per_memory = (mn - m1) / max(1, args.devices - 1)
        label = "push-woken" if woken else "live"
        print(f"{label:11} {t1 * 1000:8.1f}ms {tn * 1000:10.1f}ms {per_time * 1000:9.2f}ms {mn - m1:8d}KB "
              f"{per_memory:9.1f}KB {pushed * 1000 if woken else 0:8.1f}ms")
    print(f"fan-out bench took {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    sys.exit(main())

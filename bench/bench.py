#!/usr/bin/env python3
"""nse benchmarks: `nse run` end to end against C floors and the real peer, measured in the same run.

  python3 bench/bench.py [--quick]

Every figure is a median over N rounds, interleaved round by round so machine noise hits every side alike; the
headlines are ratios. Floors: a C fork+exec+wait4 (bench/floor.c) and a C fork+exec *pair* (bench/pair.c, a C
program that fork-execs the floor: the least host + extension can cost). The peer: Debian's linphone-daemon
(liblinphone 5.1) started per push and fetching a MESSAGE held by the same `nse sip-server` as `nse run`
(bench/peer.py). Peak RSS: GNU time's %M (wait4's ru_maxrss) for linphone-daemon and, in the SIP warm-up rounds,
for `nse run` (the larger of host and extension), and the extension's VmHWM as the host reports it. Not ru_maxrss
of a process this script spawns: posix_spawn (vfork) hands the child the spawner's high-water mark, Python's own.

--quick is the smoke `make test` runs: one or two rounds of everything, the peer only if linphone-daemon is
installed, no targets judged, no `nse serve` benchmark.
"""
import argparse
import base64
import ctypes
import ctypes.util
import hashlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import peer  # noqa: E402

BIN = os.environ.get("NSE_BIN_DIR", ".build/release")
NSE = os.path.join(BIN, "nse")
TEXT = "Lunch at 1? " + "x" * 600


def spawn_wait(argv, stdin_bytes):
    """fork+exec+wait4 with stdin from a pipe; returns (wall ms, ru_maxrss KB, stdout). The ru_maxrss is at least
    this Python's own (posix_spawn's vfork gives the child the parent's high-water mark): not a figure to report."""
    read_end, write_end = os.pipe()
    out_read, out_write = os.pipe()
    start = time.perf_counter()
    pid = os.posix_spawn(argv[0], argv, os.environ,
                         file_actions=[(os.POSIX_SPAWN_DUP2, read_end, 0), (os.POSIX_SPAWN_DUP2, out_write, 1),
                                       (os.POSIX_SPAWN_CLOSE, write_end), (os.POSIX_SPAWN_CLOSE, out_read)])
    os.close(read_end)
    os.close(out_write)
    os.write(write_end, stdin_bytes)
    os.close(write_end)
    chunks = []
    while True:
        chunk = os.read(out_read, 65536)
        if not chunk:
            break
        chunks.append(chunk)
    os.close(out_read)
    _, status, usage = os.wait4(pid, 0)
    wall = (time.perf_counter() - start) * 1000
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{argv[0]} exited with {os.waitstatus_to_exitcode(status)}")
    return wall, usage.ru_maxrss, b"".join(chunks)


def stop(server):
    """Ends a server this script started: SIGTERM, then SIGKILL if it is still there after 10 s."""
    server.terminate()
    try:
        server.wait(timeout=10)
    except subprocess.TimeoutExpired:
        server.kill()
        server.wait()


def q(values, fraction):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


class Floors:
    """The two C floors, measured once each per round alongside whatever the round measures."""

    def __init__(self, work):
        self.floor = os.path.join(work, "floor")
        self.pair = os.path.join(work, "pair")
        here = os.path.dirname(os.path.abspath(__file__))
        subprocess.run(["cc", "-O2", "-o", self.floor, os.path.join(here, "floor.c")], check=True)
        subprocess.run(["cc", "-O2", "-o", self.pair, os.path.join(here, "pair.c")], check=True)
        self.singles, self.pairs = [], []

    def measure(self, payload, keep=True):
        single = spawn_wait([self.floor], payload)[0]
        pair = spawn_wait([self.pair, self.floor], payload)[0]
        if keep:
            self.singles.append(single)
            self.pairs.append(pair)


def bench_enc(work, floors, rounds, warmups):
    """`nse run` on the enc path (a sealed 700-byte message in the payload), interleaved with the floors."""
    device = os.path.join(work, "bob")
    subprocess.run([NSE, "device", "init", device, "--filtering"], check=True, stdout=subprocess.DEVNULL)
    plaintext = json.dumps({"type": "message", "from": "sip:alice@example.org", "display_name": "Alice",
                            "text": TEXT, "subject": "Plans"})
    envelope = subprocess.run([NSE, "seal", "--device", device], input=plaintext.encode(), check=True,
                              capture_output=True).stdout.decode().strip()
    payload = json.dumps({"aps": {"alert": {"loc-key": "IM_MSG", "loc-args": ["Alice"]}, "sound": "msg.caf",
                                  "mutable-content": 1, "badge": 1},
                          "from-uri": "sip:alice@example.org", "display-name": "Alice",
                          "call-id": "bench@example.org", "pn_ttl": 2592000, "enc": envelope}).encode()
    run_argv = [NSE, "run", "--device", device]
    for _ in range(warmups):  # warm the page cache
        floors.measure(payload, keep=False)
        spawn_wait(run_argv, payload)
    runs, extension_walls, peaks = [], [], []
    for _ in range(rounds):
        floors.measure(payload)
        wall, _, out = spawn_wait(run_argv, payload)
        result = json.loads(out)
        if result["outcome"] != "rewritten":
            raise SystemExit(f"enc round: unexpected outcome {result['outcome']}: {result['reason']}")
        runs.append(wall)
        extension_walls.append(result["extension"]["wall_ms"])
        peaks.append(result["extension"]["peak_rss_kb"])
    return payload, runs, extension_walls, peaks


def bench_warm(work, pushes, rounds):
    """A sequence of `pushes` enc pushes to one device through one `nse run`: fresh (a process per push) against warm
    (`--extension-process warm`, one process serving them all). Per push: the host's time from intake to verdict
    (the result's `timings_ms.total`), the warm process's pushes after its first; and how much the warm process's
    peak grows from its first push to its last (a leak would show here)."""
    device = os.path.join(work, "warmbob")
    subprocess.run([NSE, "device", "init", device, "--filtering"], check=True, stdout=subprocess.DEVNULL)
    paths = []
    for index in range(pushes):
        plaintext = json.dumps({"type": "message", "from": "sip:alice@example.org", "display_name": "Alice",
                                "text": f"{TEXT} {index}"})
        envelope = subprocess.run([NSE, "seal", "--device", device], input=plaintext.encode(), check=True,
                                  capture_output=True).stdout.decode().strip()
        path = os.path.join(work, f"warm-{index}.json")
        with open(path, "w") as payload:
            json.dump({"aps": {"alert": {"loc-key": "IM_MSG"}, "mutable-content": 1}, "enc": envelope}, payload)
        paths.append(path)
    figures = {"fresh": [], "warm": [], "growth": []}
    for index in range(rounds):
        for mode in (("fresh", "warm") if index % 2 else ("warm", "fresh")):
            out = subprocess.run([NSE, "run", "--device", device, "--extension-process", mode, *paths],
                                 check=True, capture_output=True).stdout
            results = [json.loads(line) for line in out.splitlines()]
            if any(r["outcome"] != "rewritten" for r in results):
                raise SystemExit(f"warm round: unexpected outcome in {mode} mode")
            totals = [r["timings_ms"]["total"] for r in results]
            if mode == "warm":
                if [r["extension"]["process_pushes"] for r in results] != list(range(1, pushes + 1)):
                    raise SystemExit("warm round: the pushes were not served by one process")
                figures["warm"] += totals[1:]
                figures["growth"].append(results[-1]["extension"]["peak_rss_kb"] - results[0]["extension"]["peak_rss_kb"])
            else:
                figures["fresh"] += totals
    return figures


def build_sdk_extension(source, configuration):
    """`nse extension build` of an extension's sources (cached by content); the executable's path."""
    out = subprocess.run([NSE, "extension", "build", "--configuration", configuration, source], check=True,
                         capture_output=True).stdout.decode().strip()
    return out.splitlines()[-1]


def bench_sdk(work, reference_payload, rounds, pushes):
    """A developer's own extension built with the SDK (fixtures/sdk-extensions/template, Xcode's template: it edits
    the title) against the reference extension opening its sealed payload, in the same rounds: the extension
    process's wall time from spawn to exit when started fresh, the host's time per push from a warm process (the
    pushes after its first), and the footprint iOS would charge (private dirty + swap, `peak_footprint_kb`)."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    executable = build_sdk_extension(os.path.join(root, "fixtures", "sdk-extensions", "template"), "release")
    device = os.path.join(work, "sdkbob")
    subprocess.run([NSE, "device", "init", device, "--filtering"], check=True, stdout=subprocess.DEVNULL)
    alert = json.dumps({"aps": {"alert": {"title": "Alice", "body": TEXT}, "mutable-content": 1}}).encode()
    sdk_path, reference_path = os.path.join(work, "sdk.json"), os.path.join(work, "reference.json")
    with open(sdk_path, "wb") as handle:
        handle.write(alert)
    with open(reference_path, "wb") as handle:
        handle.write(reference_payload)
    # The reference payload is sealed to bench_enc's device: run both on that device's copy of the keys.
    reference_device = os.path.join(work, "bob")
    sides = {"sdk": ([NSE, "run", "--device", device, "--extension", executable], sdk_path),
             "reference": ([NSE, "run", "--device", reference_device], reference_path)}
    figures = {f"{side}_{kind}": [] for side in sides for kind in ("cold", "warm", "footprint")}
    for index in range(rounds):
        for side in (("sdk", "reference") if index % 2 else ("reference", "sdk")):
            argv, path = sides[side]
            result = json.loads(subprocess.run(argv + [path], check=True, capture_output=True).stdout)
            if result["outcome"] != "rewritten":
                raise SystemExit(f"sdk round ({side}): unexpected outcome {result['outcome']}: {result['reason']}")
            figures[f"{side}_cold"].append(result["extension"]["wall_ms"])
            figures[f"{side}_footprint"].append(result["extension"]["peak_footprint_kb"])
            out = subprocess.run(argv + ["--extension-process", "warm"] + [path] * pushes, check=True,
                                 capture_output=True).stdout
            results = [json.loads(line) for line in out.splitlines()]
            if [r["extension"]["process_pushes"] for r in results] != list(range(1, pushes + 1)):
                raise SystemExit(f"sdk round ({side}): the pushes were not served by one warm process")
            figures[f"{side}_warm"] += [r["timings_ms"]["total"] for r in results[1:]]
    figures.update(bench_example(work, root, rounds))
    return figures


def bench_example(work, root, rounds):
    """examples/notification-service, the whole E2EE extension (CryptoKit's HPKE, an inline picture attached, a
    communication notification donated, os.log), fresh on a sealed message: its process's wall time and footprint."""
    example = os.path.join(root, "examples", "notification-service")
    executable = build_sdk_extension(example, "release")
    device = os.path.join(work, "phone")
    subprocess.run([NSE, "device", "init", device], check=True, stdout=subprocess.DEVNULL)
    subprocess.run([NSE, "device", "set", device, "--entitlements",
                    os.path.join(example, "NotificationService.entitlements")], check=True, stdout=subprocess.DEVNULL)
    subprocess.run([NSE, "device", "keychain", "add", device, "--service", "org.example.app.e2ee", "--account",
                    "device-key", "--access-group", "ABCDE12345.org.example.shared", "--accessible", "cku",
                    "--data-file", os.path.join(device, "keys", "private.key")], check=True, stdout=subprocess.DEVNULL)
    with open(os.path.join(example, "media", "lunch.png"), "rb") as picture:
        image = base64.b64encode(picture.read()).decode()
    plaintext = json.dumps({"type": "message", "from": "sip:alice@example.org", "display_name": "Alice",
                            "text": TEXT, "image": image})
    envelope = subprocess.run([NSE, "seal", "--device", device, "--hpke"], input=plaintext.encode(), check=True,
                              capture_output=True).stdout.decode().strip()
    path = os.path.join(work, "example.json")
    with open(path, "w") as handle:
        json.dump({"aps": {"alert": {"title": "New message", "body": "(encrypted)"}, "mutable-content": 1},
                   "enc": envelope}, handle)
    figures = {"example_cold": [], "example_footprint": []}
    for _ in range(rounds):
        result = json.loads(subprocess.run([NSE, "run", "--device", device, "--extension", executable, path],
                                           check=True, capture_output=True).stdout)
        if result["outcome"] != "rewritten" or not result.get("attachments") or not result.get("communication"):
            raise SystemExit(f"example round: unexpected result {result['outcome']}: {result['reason']}")
        figures["example_cold"].append(result["extension"]["wall_ms"])
        figures["example_footprint"].append(result["extension"]["peak_footprint_kb"])
    return figures


def seal_media(path, blob_path):
    """Encrypts `path` as `nse seal --attach` does (docs/envelope.md, "Attachments": secretstream over 64 KiB chunks),
    with libsodium through ctypes, so the bench knows the key the C floor needs; returns (key, sha256 hex)."""
    sodium = ctypes.CDLL(ctypes.util.find_library("sodium"))
    if sodium.sodium_init() < 0:
        raise SystemExit("libsodium did not initialise")
    key = ctypes.create_string_buffer(32)
    sodium.crypto_secretstream_xchacha20poly1305_keygen(key)
    state = ctypes.create_string_buffer(sodium.crypto_secretstream_xchacha20poly1305_statebytes())
    header = ctypes.create_string_buffer(24)
    sodium.crypto_secretstream_xchacha20poly1305_init_push(state, header, key)
    data = open(path, "rb").read()
    chunks = [data[offset:offset + 65536] for offset in range(0, len(data), 65536)] or [b""]
    blob = bytearray(header.raw)
    for index, chunk in enumerate(chunks):
        out = ctypes.create_string_buffer(len(chunk) + 17)
        tag = 3 if index == len(chunks) - 1 else 0
        sodium.crypto_secretstream_xchacha20poly1305_push(state, out, None, chunk, ctypes.c_ulonglong(len(chunk)),
                                                          None, ctypes.c_ulonglong(0), ctypes.c_ubyte(tag))
        blob += out.raw
    with open(blob_path, "wb") as handle:
        handle.write(blob)
    return key.raw, hashlib.sha256(blob).hexdigest()


def bench_media(work, rounds):
    """A 10 MB photo (docs/media.md): the reference extension downloads it from `nse files` over loopback, hashes and
    decrypts it chunk by chunk into an attachment, fresh for each push (the extension process's wall time and
    footprint); against bench/media_floor.c doing the same hash and decryption from the file on disk (fork+exec to
    exit)."""
    here = os.path.dirname(os.path.abspath(__file__))
    floor = os.path.join(work, "media_floor")
    subprocess.run(["cc", "-O2", "-o", floor, os.path.join(here, "media_floor.c"), "-lsodium"], check=True)
    photo, blob = os.path.join(work, "photo.jpg"), os.path.join(work, "photo.blob")
    with open(photo, "wb") as handle:
        handle.write(os.urandom(10 * 1024 * 1024))
    key, sha256 = seal_media(photo, blob)
    server = subprocess.Popen([NSE, "files", "--listen", "127.0.0.1:0", "--storage", os.path.join(work, "files")],
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    try:
        base = json.loads(server.stdout.readline())["listening"]
        request = urllib.request.Request(base + "/files", data=open(blob, "rb").read(), method="POST",
                                         headers={"Content-Type": "application/octet-stream"})
        url = json.loads(urllib.request.urlopen(request, timeout=60).read())["url"]
        device = os.path.join(work, "mediaphone")
        subprocess.run([NSE, "device", "init", device], check=True, stdout=subprocess.DEVNULL)
        plaintext = json.dumps({"type": "message", "from": "sip:alice@example.org", "text": TEXT, "attachments": [
            {"content_type": "image/jpeg", "name": "photo.jpg", "size": 10 * 1024 * 1024, "url": url,
             "key": base64.b64encode(key).decode(), "sha256": sha256}]})
        envelope = subprocess.run([NSE, "seal", "--device", device], input=plaintext.encode(), check=True,
                                  capture_output=True).stdout.decode().strip()
        path = os.path.join(work, "media.json")
        with open(path, "w") as handle:
            json.dump({"aps": {"alert": {"title": "New message", "body": "(encrypted)"}, "mutable-content": 1},
                       "enc": envelope}, handle)
        figures = {"media_cold": [], "media_footprint": [], "media_floor": []}
        plain_out = os.path.join(work, "photo.out")
        for _ in range(rounds):
            floor_ms = spawn_wait([floor, blob, base64.b64encode(key).decode(), plain_out, sha256], b"")[0]
            figures["media_floor"].append(floor_ms)
            result = json.loads(subprocess.run([NSE, "run", "--device", device, path], check=True,
                                               capture_output=True).stdout)
            if result["outcome"] != "rewritten" or len(result.get("attachments") or []) != 1:
                raise SystemExit(f"media round: unexpected result {result['outcome']}: {result['reason']}")
            figures["media_cold"].append(result["extension"]["wall_ms"])
            figures["media_footprint"].append(result["extension"]["peak_footprint_kb"])
            shutil.rmtree(os.path.join(device, "attachments"), ignore_errors=True)
        return figures
    finally:
        stop(server)


def bench_sip(work, floors, payload, rounds, warmups, linphone):
    """Rounds on one `nse sip-server` over TCP: a sealed CPIM MESSAGE held for an nse device, then `nse run` on its
    Call-ID; and (with `linphone`) a plain-text MESSAGE held for the peer's AOR, then linphone-daemon fetching it."""
    server = subprocess.Popen([NSE, "sip-server", "--listen", "tcp:127.0.0.1:0", "--no-push", "--accept-timeout", "0.05"],
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    try:
        listening = json.loads(server.stdout.readline())["listening"][0]
        proxy = listening["uri"]
        device = os.path.join(work, "sipbob")
        subprocess.run([NSE, "device", "init", device, "--filtering", "--sip-account", "sip:bob@example.org",
                        "--sip-proxy", proxy], check=True, stdout=subprocess.DEVNULL)
        subprocess.run([NSE, "device", "register", device], check=True, stdout=subprocess.DEVNULL)
        carol = None
        if linphone:
            carol = peer.LinphonePeer(os.path.join(work, "linphone"), listening["port"])
            carol.register()

        def hold(to, call_id, extra):
            sent = subprocess.run([NSE, "send", "--proxy", proxy, "--from", "sip:alice@example.org", "--to", to,
                                   "--text", TEXT, "--call-id", call_id, "--timeout", "2", *extra],
                                  stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
            status = json.loads(sent.stdout or b"{}").get("status")
            if status not in (200, 202):
                raise SystemExit(f"the SIP server did not take the MESSAGE for {to} (status {status})")

        figures = {"runs": [], "walls": [], "peaks": [], "maxrss": [], "registers": [], "peer": [], "peer_kb": []}
        for index in range(rounds + warmups):
            keep = index >= warmups
            call_id = f"bench-{index}@example.org"

            def peer_round():
                peer_call_id = f"peer-{index}@example.org"
                hold(carol.aor, peer_call_id, ["--no-cpim"])
                return carol.fetch(peer_call_id)

            # The peer goes first in odd rounds, so neither side always runs in the other's wake.
            if carol is not None and index % 2:
                peer_ms, peer_kb = peer_round()
            hold("sip:bob@example.org", call_id, ["--seal-to", device])
            push = json.dumps({"aps": {"alert": {"loc-key": "IM_MSG"}, "mutable-content": 1}, "call-id": call_id}).encode()
            floors.measure(payload, keep)
            run_argv = [NSE, "run", "--device", device]
            measure_memory = not keep and os.access(peer.GNU_TIME, os.X_OK)
            if measure_memory:
                # Warm-up rounds, not timed: under GNU time, whose fork-based start gives nse run a clean count.
                memory_report = os.path.join(work, "nse-run.time")
                run_argv = [peer.GNU_TIME, "-f", "%M", "-o", memory_report] + run_argv
            wall, _, out = spawn_wait(run_argv, push)
            if measure_memory:
                with open(memory_report) as report:
                    figures["maxrss"].append(int(report.read().split()[-1]))
            result = json.loads(out)
            if result["outcome"] != "rewritten":
                raise SystemExit(f"SIP round {index}: {result['outcome']}: {result['reason']}")
            if carol is not None and not index % 2:
                peer_ms, peer_kb = peer_round()
            if not keep:
                continue
            figures["runs"].append(wall)
            figures["walls"].append(result["extension"]["wall_ms"])
            figures["peaks"].append(result["extension"]["peak_rss_kb"])
            figures["registers"].append(result["extension"]["info"]["sip_timings"].get("register_ms", 0))
            if carol is not None:
                figures["peer"].append(peer_ms)
                figures["peer_kb"].append(peer_kb)
        return figures
    finally:
        stop(server)


def bench_call(work, floors, payload, rounds, warmups):
    """Rounds of the whole incoming call on one `nse sip-server` over TCP (no pushes sent: the bench is the push):
    `nse call` places a call the server holds for an nse device; `nse run --push-type voip` on the push that names
    it; the app re-REGISTERs, takes the INVITE, and the user answers at once and hangs up at once. The figures are
    the phone's timeline from the push (the host's clock), and the whole `nse run`."""
    server = subprocess.Popen([NSE, "sip-server", "--listen", "tcp:127.0.0.1:0", "--no-push", "--events"],
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        proxy = json.loads(server.stdout.readline())["listening"][0]["uri"]
        device = os.path.join(work, "callbob")
        subprocess.run([NSE, "device", "init", device, "--sip-account", "sip:bob@example.org", "--sip-proxy", proxy],
                       check=True, stdout=subprocess.DEVNULL)
        subprocess.run([NSE, "device", "set", device, "--answer-after", "0", "--hangup-after", "0"], check=True,
                       stdout=subprocess.DEVNULL)
        subprocess.run([NSE, "device", "register", device], check=True, stdout=subprocess.DEVNULL)
        figures = {"runs": [], "invite": [], "answered": [], "ended": []}

        def wait_held(call_id):
            for line in server.stdout:
                event = json.loads(line)
                if event.get("event") == "call" and event.get("call_id") == call_id and event.get("step") == "held":
                    return
            raise SystemExit("the SIP server ended before it held the call")

        for index in range(rounds + warmups):
            call_id = f"call-{index}@example.org"
            caller = subprocess.Popen([NSE, "call", "--proxy", proxy, "--from", "sip:alice@example.org", "--to",
                                       "sip:bob@example.org", "--call-id", call_id, "--hangup-after", "30",
                                       "--timeout", "10"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
            wait_held(call_id)
            push = json.dumps({"aps": {"sound": "", "loc-key": "IC_MSG", "loc-args": ["Alice"], "call-id": call_id},
                               "from-uri": "sip:alice@example.org", "display-name": "Alice"}).encode()
            floors.measure(payload, index >= warmups)
            wall, _, out = spawn_wait([NSE, "run", "--push-type", "voip", "--device", device], push)
            caller_line, _ = caller.communicate(timeout=30)
            call = json.loads(out).get("call") or {}
            if call.get("end_reason") != "hungUp" or json.loads(caller_line or b"{}").get("final_status") != 200:
                raise SystemExit(f"call round {index}: {call.get('end_reason')}, {call.get('failure')}")
            if index < warmups:
                continue
            timeline = call["timeline_ms"]
            figures["runs"].append(wall)
            figures["invite"].append(timeline["invite_received"])
            figures["answered"].append(timeline["answered"])
            figures["ended"].append(timeline["ended"])
        return figures
    finally:
        stop(server)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smoke of the harness: two rounds, no targets judged")
    options = parser.parse_args()
    quick = options.quick
    rounds = 2 if quick else int(os.environ.get("NSE_BENCH_ROUNDS", "200"))
    sip_rounds = 2 if quick else int(os.environ.get("NSE_BENCH_SIP_ROUNDS", str(max(rounds // 4, 20))))
    missing = peer.missing_tools()
    if missing and not quick:
        raise SystemExit(f"bench: missing {', '.join(missing)} (make bench installs them)")

    work = tempfile.mkdtemp(prefix="nse-bench-")
    try:
        report(work, quick, rounds, sip_rounds, missing)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def report(work, quick, rounds, sip_rounds, missing):
    floors = Floors(work)
    payload, runs, extension_walls, peaks = bench_enc(work, floors, rounds, 1 if quick else 10)
    enc_floor, enc_pair = floors.singles, floors.pairs
    floors.singles, floors.pairs = [], []
    sip = bench_sip(work, floors, payload, sip_rounds, 1 if quick else 5, linphone=not missing)

    sip_floor, sip_pair = floors.singles, floors.pairs
    floors.singles, floors.pairs = [], []
    call_rounds = 2 if quick else max(sip_rounds // 2, 10)
    call = bench_call(work, floors, payload, call_rounds, 1 if quick else 3)
    warm_pushes = 5 if quick else 20
    warm = bench_warm(work, warm_pushes, 1 if quick else max(rounds // 40, 3))
    sdk = bench_sdk(work, payload, 2 if quick else max(rounds // 4, 20), 3 if quick else 10)
    media = bench_media(work, 2 if quick else max(rounds // 8, 10))

    mode = "quick smoke, figures meaningless" if quick else "medians of interleaved rounds"
    print(f"nse bench ({mode}): {rounds} enc rounds, {sip_rounds} SIP rounds, binaries in {BIN}")
    # The best round too: on a loaded machine the medians of the short runs (the floors above all: two processes
    # handing a pipe to each other) stretch with every scheduler wait; the best is what the code costs.
    print(f"{'measure':48} {'median':>9} {'p90':>9} {'best':>9} {'x floor':>8}")

    def row(label, values, base=None, unit_format="9.3f"):
        median = statistics.median(values)
        ratio = f"{median / base:8.2f}" if base else ""
        print(f"{label:48} {median:{unit_format}} {q(values, .9):{unit_format}} {min(values):{unit_format}} {ratio}")
        return median

    single = row("C fork+exec+wait4 floor (ms)", enc_floor)
    pair = row("C fork+exec pair floor (ms)", enc_pair, single)
    enc = row("nse run, enc path, end to end (ms)", runs, single)
    print(f"{'  x the C pair floor (medians; best rounds)':48} {enc / pair:9.2f} {'':9} {min(runs) / min(enc_pair):9.2f}")
    row("  of which the extension process (ms)", extension_walls, single)
    row("  extension peak RSS (KB, VmHWM)", peaks, unit_format="9.0f")
    sip_single = row("C fork+exec+wait4 floor, SIP rounds (ms)", sip_floor)
    row("C fork+exec pair floor, SIP rounds (ms)", sip_pair, sip_single)
    sip_median = row("nse run, SIP fetch over TCP, end to end (ms)", sip["runs"], sip_single)
    row("  of which the REGISTER round trip (ms)", sip["registers"])
    sip_rss = row("  nse run peak RSS (KB, GNU time %M, warm-ups)", sip["maxrss"], unit_format="9.0f") if sip["maxrss"] else None
    sip_peak = row("  extension peak RSS (KB, VmHWM)", sip["peaks"], unit_format="9.0f")
    if sip["peer"]:
        peer_ms = row("linphone-daemon, spawn -> message-received (ms)", sip["peer"], sip_single)
        peer_kb = row("  peak RSS (KB, GNU time %M)", sip["peer_kb"], unit_format="9.0f")
        print(f"peer ratios: time {peer_ms / sip_median:.1f}x (linphone-daemon / nse run), "
              f"memory {peer_kb / sip_peak:.1f}x (/ extension VmHWM), {peer_kb / sip_rss:.1f}x (/ nse run %M)")
    else:
        print(f"peer: skipped, {' and '.join(missing)} not installed (make bench installs it)")
    call_single = row(f"C fork+exec+wait4 floor, call rounds (ms, {call_rounds})", floors.singles)
    row("nse run --push-type voip, the whole call (ms)", call["runs"], call_single)
    row("  push -> INVITE received by the app (ms)", call["invite"], call_single)
    row("  push -> answered (200 OK sent) (ms)", call["answered"], call_single)
    row("  push -> call ended (BYE answered) (ms)", call["ended"], call_single)
    fresh_push = row(f"nse run, {warm_pushes} enc pushes: a fresh process each (ms/push)", warm["fresh"])
    warm_push = row("  one warm process, pushes after its first (ms/push)", warm["warm"])
    print(f"{'  fresh / warm':48} {fresh_push / warm_push:9.2f}")
    row(f"  warm process peak growth over {warm_pushes} pushes (KB)", warm["growth"], unit_format="9.0f")
    reference_cold = row("reference extension, enc, fresh process (ms)", sdk["reference_cold"])
    sdk_cold = row("SDK extension (template), fresh process (ms)", sdk["sdk_cold"], reference_cold)
    reference_warm = row("reference extension, warm (ms/push)", sdk["reference_warm"])
    sdk_warm = row("SDK extension, warm (ms/push)", sdk["sdk_warm"], reference_warm)
    reference_footprint = row("reference extension footprint (KB)", sdk["reference_footprint"],
                              unit_format="9.0f")
    sdk_footprint = row("SDK extension footprint (KB)", sdk["sdk_footprint"],
                        unit_format="9.0f")
    row("the E2EE example, fresh process (ms)", sdk["example_cold"], reference_cold)
    example_footprint = row("the E2EE example's footprint (KB)", sdk["example_footprint"], unit_format="9.0f")
    media_floor = row("C: hash + decrypt a 10 MB photo from disk (ms)", media["media_floor"])
    media_cold = row("nse run: download, hash, decrypt it (extension, ms)", media["media_cold"], media_floor)
    media_footprint = row("  the extension's footprint meanwhile (KB)", media["media_footprint"], unit_format="9.0f")
    if quick:
        print("quick smoke: harness ran end to end; no targets judged")
        return
    met = sdk_cold <= 3 * reference_cold and sdk_warm <= 1.5 * reference_warm and example_footprint < 8192
    print(f"target (SDK): fresh <= 3x the reference extension's, warm <= 1.5x, the example's footprint < 8 MB -> "
          f"{'meets' if met else 'MISSES'} ({sdk_cold / reference_cold:.2f}x, {sdk_warm / reference_warm:.2f}x, "
          f"{example_footprint / 1024:.1f} MB; the template's {sdk_footprint / 1024:.1f} MB, the reference's "
          f"{reference_footprint / 1024:.1f} MB)")
    met = media_footprint < 12 * 1024 and media_cold <= 1.5 * media_floor
    print(f"target (media): a 10 MB photo within 12 MB of footprint and 1.5x the C floor's time -> "
          f"{'meets' if met else 'MISSES'} ({media_footprint / 1024:.1f} MB, {media_cold / media_floor:.2f}x)")
    print(f"target (enc): nse run <= 3x the C pair floor -> {'meets' if enc <= 3 * pair else 'MISSES'} ({enc / pair:.2f}x)")
    if sip["peer"]:
        faster, smaller = peer_ms / sip_median, peer_kb / sip_peak
        verdict = "meets" if faster >= 15 and smaller >= 8 else "MISSES"
        print(f"target (SIP): >= 15x faster and extension peak RSS <= 1/8 of linphone-daemon's -> {verdict} "
              f"({faster:.1f}x, 1/{smaller:.1f})")


if __name__ == "__main__":
    quick_run = "--quick" in sys.argv[1:]
    main()
    # A person's several devices: one MESSAGE fanned out to 100 of them by nse sip-server (time and memory per device).
    if not quick_run and os.environ.get("NSE_BENCH_FANOUT", "1") != "0":
        print(flush=True)
        fanout_bench = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fanout_bench.py")
        if subprocess.run([sys.executable, fanout_bench]).returncode != 0:
            sys.exit(1)
    # One node against a fleet of three on PostgreSQL behind HAProxy (examples/fleet): pushes per CPU-second.
    if not quick_run and os.environ.get("NSE_BENCH_FLEET", "1") != "0":
        print(flush=True)
        fleet_bench = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fleet_bench.py")
        if subprocess.run([sys.executable, fleet_bench]).returncode != 0:
            sys.exit(1)
    # Then nse serve under HTTP/2 load (h2load): notifications/s and latency against the same floor.
    if not quick_run and os.environ.get("NSE_BENCH_SERVE", "1") != "0":
        print(flush=True)
        serve_bench = os.path.join(os.path.dirname(os.path.abspath(__file__)), "serve_bench.py")
        sys.exit(subprocess.run([sys.executable, serve_bench]).returncode)

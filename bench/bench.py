#!/usr/bin/env python3
"""nse benchmarks: end-to-end `nse run` against a C fork+exec floor measured in the same run.

Every figure is a median over N rounds, interleaved with the floor so machine noise hits both alike; the
headline is the ratio to the floor. Peak RSS is the extension's VmHWM as the host reports it.
"""
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

BIN = os.environ.get("NSE_BIN_DIR", ".build/release")
NSE = os.path.join(BIN, "nse")
ROUNDS = int(os.environ.get("NSE_BENCH_ROUNDS", "200"))


def spawn_wait(argv, stdin_bytes):
    """fork+exec+wait4 with stdin from a pipe; returns (wall ms, ru_maxrss KB, stdout)."""
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


def bench_sip_fetch(work, floor, floor_payload):
    """Rounds of: a sealed MESSAGE held by the embedded SIP server (not timed), then `nse run` on its Call-ID."""
    server = subprocess.Popen([NSE, "sip-server", "--listen", "tcp:127.0.0.1:0", "--no-push", "--accept-timeout", "0.05"],
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    try:
        proxy = json.loads(server.stdout.readline())["listening"][0]["uri"]
        device = os.path.join(work, "sipbob")
        subprocess.run([NSE, "device", "init", device, "--filtering", "--sip-account", "sip:bob@example.org",
                        "--sip-proxy", proxy], check=True, stdout=subprocess.DEVNULL)
        subprocess.run([NSE, "device", "register", device], check=True, stdout=subprocess.DEVNULL)
        rounds = max(ROUNDS // 4, 20)
        floors, runs, walls, peaks, registers = [], [], [], [], []
        for index in range(rounds + 5):
            call_id = f"bench-{index}@example.org"
            subprocess.run([NSE, "send", "--proxy", proxy, "--from", "sip:alice@example.org", "--to", "sip:bob@example.org",
                            "--seal-to", device, "--text", "Lunch at 1? " + "x" * 600, "--call-id", call_id, "--timeout", "2"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            payload = json.dumps({"aps": {"alert": {"loc-key": "IM_MSG"}, "mutable-content": 1}, "call-id": call_id}).encode()
            floor_wall = spawn_wait([floor], floor_payload)[0]
            wall, _, out = spawn_wait([NSE, "run", "--device", device], payload)
            result = json.loads(out)
            if result["outcome"] != "rewritten":
                raise SystemExit(f"SIP round {index}: {result['outcome']}: {result['reason']}")
            if index < 5:
                continue  # warm-up
            floors.append(floor_wall)
            runs.append(wall)
            walls.append(result["extension"]["wall_ms"])
            peaks.append(result["extension"]["peak_rss_kb"])
            registers.append(result["extension"]["info"]["sip_timings"].get("register_ms", 0))
        return floors, runs, walls, peaks, registers
    finally:
        server.terminate()
        server.wait()


def main():
    work = tempfile.mkdtemp(prefix="nse-bench-")
    floor = os.path.join(work, "floor")
    subprocess.run(["cc", "-O2", "-o", floor, "bench/floor.c"], check=True)
    device = os.path.join(work, "bob")
    subprocess.run([NSE, "device", "init", device, "--filtering"], check=True, stdout=subprocess.DEVNULL)
    plaintext = json.dumps({"type": "message", "from": "sip:alice@example.org", "display_name": "Alice",
                            "text": "Lunch at 1? " + "x" * 600, "subject": "Plans"})
    envelope = subprocess.run([NSE, "seal", "--device", device], input=plaintext.encode(), check=True,
                              capture_output=True).stdout.decode().strip()
    payload = json.dumps({"aps": {"alert": {"loc-key": "IM_MSG", "loc-args": ["Alice"]}, "sound": "msg.caf",
                                  "mutable-content": 1, "badge": 1},
                          "from-uri": "sip:alice@example.org", "display-name": "Alice",
                          "call-id": "bench@example.org", "pn_ttl": 2592000, "enc": envelope}).encode()
    run_argv = [NSE, "run", "--device", device]

    for _ in range(10):  # warm the page cache
        spawn_wait([floor], payload)
        spawn_wait(run_argv, payload)

    floors, runs, extension_walls, peaks, intakes = [], [], [], [], []
    for _ in range(ROUNDS):
        floors.append(spawn_wait([floor], payload)[0])
        wall, _, out = spawn_wait(run_argv, payload)
        result = json.loads(out)
        if result["outcome"] != "rewritten":
            raise SystemExit(f"unexpected outcome {result['outcome']}: {result['reason']}")
        runs.append(wall)
        extension_walls.append(result["extension"]["wall_ms"])
        peaks.append(result["extension"]["peak_rss_kb"])
        intakes.append(result["timings_ms"]["intake"])

    sip = bench_sip_fetch(work, floor, payload)

    def q(values, fraction):
        ordered = sorted(values)
        return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]

    floor_median = statistics.median(floors)
    run_median = statistics.median(runs)
    print(f"nse bench: {ROUNDS} rounds, payload {len(payload)} bytes (enc path), binaries in {BIN}")
    print(f"{'measure':44} {'median':>9} {'p90':>9} {'x floor':>8}")
    print(f"{'C fork+exec+wait4 floor (ms)':44} {floor_median:9.3f} {q(floors, .9):9.3f} {1:8.2f}")
    print(f"{'nse run, enc path, end to end (ms)':44} {run_median:9.3f} {q(runs, .9):9.3f} {run_median / floor_median:8.2f}")
    ext = statistics.median(extension_walls)
    print(f"{'  of which the extension process (ms)':44} {ext:9.3f} {q(extension_walls, .9):9.3f} {ext / floor_median:8.2f}")
    print(f"{'extension peak RSS (KB, VmHWM)':44} {statistics.median(peaks):9.0f} {max(peaks):9.0f}")
    target_ms, target_kb = 10.0, 10 * 1024
    verdict = "meets" if run_median <= target_ms and statistics.median(peaks) <= target_kb else "MISSES"
    print(f"target (enc): median <= {target_ms} ms and extension peak RSS <= {target_kb} KB -> {verdict}")
    sip_floor, sip_runs, sip_walls, sip_peaks, sip_register = sip
    sip_median = statistics.median(sip_runs)
    print(f"{'C floor, interleaved with the SIP rounds (ms)':44} {statistics.median(sip_floor):9.3f} {q(sip_floor, .9):9.3f} {1:8.2f}")
    print(f"{'nse run, SIP fetch over TCP, end to end (ms)':44} {sip_median:9.3f} {q(sip_runs, .9):9.3f} {sip_median / statistics.median(sip_floor):8.2f}")
    print(f"{'  of which REGISTER round trip (ms)':44} {statistics.median(sip_register):9.3f} {q(sip_register, .9):9.3f}")
    print(f"{'  extension peak RSS, SIP path (KB)':44} {statistics.median(sip_peaks):9.0f} {max(sip_peaks):9.0f}")
    verdict = "meets" if sip_median <= 15.0 and statistics.median(sip_peaks) <= 12 * 1024 else "MISSES"
    print(f"target (SIP): median <= 15 ms and extension peak RSS <= {12 * 1024} KB -> {verdict}")


if __name__ == "__main__":
    main()
    # Then nse serve under HTTP/2 load (h2load): notifications/s and latency against the same floor.
    if os.environ.get("NSE_BENCH_SERVE", "1") != "0":
        print(flush=True)
        serve_bench = os.path.join(os.path.dirname(os.path.abspath(__file__)), "serve_bench.py")
        sys.exit(subprocess.run([sys.executable, serve_bench]).returncode)

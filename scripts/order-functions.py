#!/usr/bin/env python3
"""make order-functions: writes the lists of functions a notification runs, which the release linker places first.

Both per-notification executables (`nse` and `nse-extension`) are static, and their resident memory is mostly the
pages of their own code that a run touches: the kernel maps 64 KB around every page a process faults in, so a run
that calls a few thousand functions scattered over 12 MB of code maps most of it. Linked in the order these lists
give (lld's --symbol-ordering-file, Package.swift), the functions a notification runs sit next to each other.

How: build release binaries, then run the paths a notification takes through valgrind's callgrind (a copy of each
binary without its DWARF, which valgrind cannot read, and with its symbols): the enc path, an envelope the device
cannot open, the SIP fetch over TCP with another message held beside the awaited one, and a message taken from the
store. Every function callgrind saw that the binary defines goes into Sources/<target>/hot-functions.order, sorted
by name so a regenerated list diffs cleanly. Symbols that later disappear are ignored by the linker; functions added
later are placed after the listed ones, so a stale list costs memory, never correctness. Needs valgrind
(Debian package `valgrind`). See docs/performance.md.
"""
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TARGETS = ("nse", "nse-extension")


# `make build`'s flags: the same build folder, so that neither rebuilds everything after the other (6 min here).
RELEASE = ["-c", "release", "--static-swift-stdlib"]


def build():
    for product in ("nse-tool",) + TARGETS:
        subprocess.run(["swift", "build", *RELEASE, "--product", product], cwd=ROOT, check=True)
    return subprocess.run(["swift", "build", *RELEASE, "--show-bin-path"], cwd=ROOT, check=True,
                          stdout=subprocess.PIPE, text=True).stdout.strip()


def undebugged_copy(binary, work):
    """A copy without DWARF (valgrind's reader gives up on this toolchain's), symbols kept."""
    copy = os.path.join(work, os.path.basename(binary))
    shutil.copy(binary, copy)
    subprocess.run(["strip", "--strip-debug", copy], check=True)
    return copy


def under_callgrind(binary, out_dir, name):
    """A wrapper script that runs `binary` under callgrind, one profile per process."""
    wrapper = os.path.join(out_dir, f"{name}-under-callgrind")
    with open(wrapper, "w") as script:
        script.write("#!/bin/sh\nexec valgrind -q --tool=callgrind --demangle=no --dump-instr=no "
                     f"--callgrind-out-file={out_dir}/{name}.%p.cg {binary} \"$@\"\n")
    os.chmod(wrapper, 0o755)
    return wrapper


def run_paths(bin_dir, nse_wrapper, extension_wrapper, work):
    nse = os.path.join(bin_dir, "nse")
    server = subprocess.Popen([nse, "sip-server", "--listen", "tcp:127.0.0.1:0", "--no-push", "--accept-timeout", "0.05", "--db",
                               tempfile.mkdtemp(dir=work)],
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    try:
        proxy = json.loads(server.stdout.readline())["listening"][0]["uri"]
        device = os.path.join(tempfile.mkdtemp(dir=work), "device")
        subprocess.run([nse, "device", "init", device, "--filtering", "--sip-account", "sip:bob@example.org",
                        "--sip-proxy", proxy], check=True, stdout=subprocess.DEVNULL)
        subprocess.run([nse, "device", "register", device], check=True, stdout=subprocess.DEVNULL)
        plaintext = {"v": 1, "type": "message", "from": "sip:alice@example.org", "text": "hello"}
        sealed = subprocess.run([nse, "seal", "--device", device], input=json.dumps(plaintext).encode(),
                                stdout=subprocess.PIPE, check=True).stdout.decode().strip()
        stranger = subprocess.run([nse, "seal", "--to", "B6N8vBQgk8i3VdwbEOhstCY3StFqqFPtC9/AsrhtHHw="],
                                  input=json.dumps(plaintext).encode(), stdout=subprocess.PIPE,
                                  check=True).stdout.decode().strip()

        def hold(call_id):
            subprocess.run([nse, "send", "--proxy", proxy, "--from", "sip:alice@example.org", "--to",
                            "sip:bob@example.org", "--text", "hello", "--call-id", call_id, "--timeout", "2",
                            "--seal-to", device], check=True, stdout=subprocess.DEVNULL)

        def push(body):
            payload = json.dumps({"aps": {"alert": {"loc-key": "IM_MSG"}, "mutable-content": 1}, **body}).encode()
            argv = [nse_wrapper, "run", "--device", device, "--extension", extension_wrapper, "--memory-limit", "4000",
                    "--budget", "30"]
            result = json.loads(subprocess.run(argv, input=payload, stdout=subprocess.PIPE, check=True).stdout)
            print(f"  {list(body)[0]}: {result['outcome']} ({result.get('reason')})", file=sys.stderr)

        push({"enc": sealed})
        push({"enc": stranger})
        hold("other@example.org")
        hold("wanted@example.org")
        push({"call-id": "wanted@example.org"})
        push({"call-id": "other@example.org"})
    finally:
        server.terminate()
        server.wait(timeout=10)


def functions_seen(profiles, binary):
    seen = set()
    for profile in profiles:
        names = {}
        with open(profile, errors="replace") as text:
            for line in text:
                match = re.match(r"^c?fn=\((\d+)\)(?: (.*))?$", line.rstrip("\n"))
                if match and match.group(2):
                    names[match.group(1)] = match.group(2)
        seen.update(names.values())
    symbols = subprocess.run(["nm", "--defined-only", binary], stdout=subprocess.PIPE, text=True, check=True).stdout
    defined = {parts[2] for parts in (line.split() for line in symbols.splitlines())
               if len(parts) >= 3 and parts[1] in "tTwW"}
    return sorted(seen & defined)


def main():
    if shutil.which("valgrind") is None:
        raise SystemExit("order-functions: valgrind is not installed (Debian package valgrind)")
    bin_dir = build()
    work = tempfile.mkdtemp(prefix="nse-order-")
    try:
        copies = {target: undebugged_copy(os.path.join(bin_dir, target), work) for target in TARGETS}
        wrappers = {target: under_callgrind(copies[target], work, target) for target in TARGETS}
        # One executable under callgrind per pass, the other at full speed: the host watches its child's memory
        # through /proc, and a host 50 times slower than usual would only blur the extension's timing rules.
        run_paths(bin_dir, os.path.join(bin_dir, "nse"), wrappers["nse-extension"], work)
        run_paths(bin_dir, wrappers["nse"], os.path.join(bin_dir, "nse-extension"), work)
        for target in TARGETS:
            profiles = glob.glob(os.path.join(work, f"{target}.*.cg"))
            functions = functions_seen(profiles, copies[target])
            path = os.path.join(ROOT, "Sources", target, "hot-functions.order")
            with open(path, "w") as order:
                order.write("\n".join(functions) + "\n")
            print(f"order-functions: {len(functions)} functions from {len(profiles)} runs -> "
                  f"{os.path.relpath(path, ROOT)}")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    # Linked again with the new lists.
    build()


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Runs the shell examples of README.md and docs/*.md as a user would type them, so docs and program cannot drift.

Every ```sh block must say what it is, in an HTML comment on the line above its fence (invisible once rendered):
  <!-- example: NAME -->     run as written, in a fresh folder; more comment lines may follow the marker:
                             <!-- expect: TEXT -->  TEXT must appear in what the commands print (stdout)
                             <!-- retry -->         the last command is run again (0.2 s apart, 20 s at most) until
                                                    every expectation holds: it reads what a server does meanwhile
  <!-- synopsis -->          usage lines (placeholders, [optional] parts): not run, but every `--option` on an
                             `nse …` line must be one that command's --help lists
  <!-- not run: REASON -->   neither (make targets, other programs' installation): says why

An example runs in one bash process (set -euo pipefail) in a new folder, with the built binaries first on PATH:
`/tmp/` becomes that folder, the ports 8443, 5060, 5061 and 9000 free ones; a command ending in `&` runs in the
background and the example goes on once it has printed its first line (nse's servers print their addresses first);
a command whose comment says `# exit status N` must exit N. Everything the example started is stopped at its end.
Also checked: the number of replay cases the docs give is the number in fixtures/cases.

    NSE_BIN_DIR=.build/debug python3 scripts/doc-examples.py [--only NAME] [--list]
Exit status 0 when every block passes, 1 otherwise.
"""

import argparse
import glob
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PORTS = ("8443", "5060", "5061", "9000")
MARKER = re.compile(
    r"^<!--\s*(example:\s*(?P<name>[\w.-]+)(;\s*after:\s*(?P<after>[\w.-]+))?|synopsis|not run:\s*(?P<why>.+?)"
    r"|expect:\s*(?P<expect>.+?)|retry)\s*-->\s*$")


class Block:
    def __init__(self, path, line, text, kind, name=None, expects=(), retry=False, why=None, after=None):
        self.path, self.line, self.text, self.kind = path, line, text, kind
        self.name, self.expects, self.retry, self.why, self.after = name, list(expects), retry, why, after

    @property
    def where(self):
        return f"{os.path.relpath(self.path, ROOT)}:{self.line}"


def blocks(paths):
    """Every ```sh block of the files, with what its markers say (kind None: unmarked)."""
    found = []
    for path in paths:
        lines = open(path, encoding="utf-8").read().split("\n")
        index = 0
        while index < len(lines):
            if lines[index].strip() != "```sh":
                index += 1
                continue
            start = index
            markers = []
            back = start - 1
            while back >= 0 and MARKER.match(lines[back].strip()):
                markers.insert(0, MARKER.match(lines[back].strip()))
                back -= 1
            end = start + 1
            while end < len(lines) and lines[end].strip() != "```":
                end += 1
            text = "\n".join(lines[start + 1:end])
            kind, name, why, expects, retry, after = None, None, None, [], False, None
            for marker in markers:
                body = marker.group(1)
                if marker.group("name"):
                    kind, name, after = "example", marker.group("name"), marker.group("after")
                elif body == "synopsis":
                    kind = "synopsis"
                elif marker.group("why"):
                    kind, why = "not-run", marker.group("why")
                elif marker.group("expect") is not None:
                    expects.append(marker.group("expect"))
                elif body == "retry":
                    retry = True
            found.append(Block(path, start + 1, text, kind, name, expects, retry, why, after))
            index = end + 1
    return found


def commands(text):
    """The block's commands: continuation lines joined, comment-only lines (shown output) dropped."""
    result, current = [], ""
    for raw in text.split("\n"):
        line = raw.rstrip()
        if not current and (not line.strip() or line.lstrip().startswith("#") or line.lstrip().startswith("{")):
            continue
        if line.endswith("\\"):
            current += line[:-1] + " "
            continue
        result.append(current + line)
        current = ""
    if current:
        result.append(current)
    return result


def split_comment(command):
    """(the command, its trailing comment): the first ` #` outside quotes."""
    quote = None
    for index, char in enumerate(command):
        if quote:
            if char == quote:
                quote = None
        elif char in "'\"":
            quote = char
        elif char == "#" and index > 0 and command[index - 1] in " \t":
            return command[:index].rstrip(), command[index + 1:]
    return command, ""


def free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return str(sock.getsockname()[1])


def script(chain, work, ports):
    """The bash script an example becomes: the examples it goes on from first (`after:`), then its own commands."""
    lines = [
        "set -euo pipefail",
        # A background command is ready once it printed a line; it must not have exited before.
        'ready() { for _ in $(seq 300); do [ -s "$1" ] && return 0; kill -0 "$2" 2>/dev/null || '
        '{ echo "doc-examples: background command exited: $(cat "$1.err")" >&2; return 1; }; sleep 0.05; done; '
        'echo "doc-examples: background command printed nothing in 15 s" >&2; return 1; }',
    ]
    number = 0
    for position, block in enumerate(chain):
        own = position == len(chain) - 1
        all_commands = commands(substitute(block.text, work, ports))
        for index, command in enumerate(all_commands):
            number += 1
            command, comment = split_comment(command)
            wanted = re.search(r"exit status (\d+)", comment)
            last = index == len(all_commands) - 1
            if command.endswith("&"):
                out = f"{work}/.background-{number}"
                lines.append(f"{{ {command[:-1].rstrip()} ; }} >{out} 2>{out}.err & ready {out} $!")
            elif wanted:
                lines.append(f"set +e; {{ {command} ; }}; status=$?; set -e")
                lines.append(f'[ "$status" = {wanted.group(1)} ] || {{ echo "doc-examples: exit status $status, '
                             f'the docs say {wanted.group(1)}: {command[:60]}" >&2; exit 1; }}')
            elif last and block.retry:
                # Read again until the expectations hold: what a server does after the command before returns.
                checks = " && ".join(f"grep -qF -- {shell_quote(e)} {work}/.last" for e in block.expects) or "true"
                lines.append(f"for _ in $(seq 100); do {{ {command} ; }} >{work}/.last || true; "
                             f"if {checks}; then break; fi; sleep 0.2; done; cat {work}/.last")
            else:
                lines.append(command)
        if not own:
            # What the earlier example printed is not this one's to check.
            lines.append(f"echo '--- {block.name} done ---' >&2")
    return "\n".join(lines) + "\n"


def shell_quote(text):
    return "'" + text.replace("'", "'\\''") + "'"


def substitute(text, work, ports):
    text = text.replace("/tmp/", work + "/")
    for port, free in ports.items():
        text = re.sub(rf"(?<=[:/]){port}(?!\d)", free, text)
    return text


def run_example(block, binaries, named):
    chain = [block]
    while chain[0].after:
        if chain[0].after not in named or len(chain) > 10:
            return [f"after: {chain[0].after}: no such example"]
        chain.insert(0, named[chain[0].after])
    work = tempfile.mkdtemp(prefix=f"nse-doc-{block.name}-")
    ports = {port: free_port() for port in PORTS}
    body = script(chain, work, ports)
    env = dict(os.environ)
    env.update(PATH=binaries + os.pathsep + env.get("PATH", ""), HOME=work, XDG_DATA_HOME=work + "/data",
               NSE_LOG_LEVEL="warning")
    # The repository's files the docs name (fixtures/, examples/) are where a user's checkout has them.
    for name in ("fixtures", "examples", "docs"):
        os.symlink(os.path.join(ROOT, name), os.path.join(work, name))
    process = subprocess.Popen(["bash", "-c", body], cwd=work, env=env, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        out, err = process.communicate(timeout=180)
    except subprocess.TimeoutExpired:
        out, err = "", "timed out after 180 s"
    finally:
        # Everything the example started, background servers included, is in its process group.
        for sig in (signal.SIGTERM, signal.SIGKILL):
            try:
                os.killpg(process.pid, sig)
            except ProcessLookupError:
                break
            time.sleep(0.5 if sig == signal.SIGTERM else 0)
        process.wait()
    problems = []
    if process.returncode != 0:
        problems.append(f"exit status {process.returncode}: {err.strip()[-600:]}")
    for expected in block.expects:
        if expected not in out:
            problems.append(f"does not print {expected!r}; printed: {out.strip()[-400:]!r}")
    if not problems and not os.environ.get("NSE_KEEP_TEST_DIRS"):
        shutil.rmtree(work, ignore_errors=True)
    elif problems:
        problems.append(f"its folder: {work}")
    return problems


def help_text(binaries, words, cache):
    key = tuple(words)
    if key not in cache:
        result = subprocess.run([os.path.join(binaries, "nse")] + words + ["--help"], capture_output=True, text=True,
                                timeout=30)
        cache[key] = result.stdout if result.returncode == 0 else None
    return cache[key]


def check_synopsis(block, binaries, cache):
    problems = []
    for command in commands(block.text):
        command, _ = split_comment(command)
        words = command.split()
        if not words or words[0] != "nse":
            continue
        # The subcommand: the words before the first option or argument that is not a subcommand.
        path = []
        for word in words[1:]:
            if word.startswith("-") or not re.fullmatch(r"[a-z][a-z-]*", word):
                break
            if help_text(binaries, path + [word], cache) is None:
                break
            path.append(word)
        usage = help_text(binaries, path, cache) or ""
        for option in re.findall(r"(?<![\w-])--[a-z][a-z0-9-]*", command):
            if option not in usage:
                problems.append(f"`nse {' '.join(path)}` has no option {option}")
    return problems


def check_case_counts():
    count = len(glob.glob(os.path.join(ROOT, "fixtures", "cases", "**", "*.json"), recursive=True))
    problems = []
    for path in [os.path.join(ROOT, "README.md")] + sorted(glob.glob(os.path.join(ROOT, "docs", "*.md"))):
        text = open(path, encoding="utf-8").read()
        for match in re.finditer(r"(\d+) cases", text):
            context = text[max(0, match.start() - 200):match.end() + 100]
            line_text = text[text.rfind("\n", 0, match.start()) + 1:text.find("\n", match.end())]
            if "when measured" in line_text:  # a measurement's own count, of its day
                continue
            if "fixtures/cases" in context or "corpus" in context or "nse replay" in context:
                if int(match.group(1)) != count:
                    line = text.count("\n", 0, match.start()) + 1
                    problems.append(f"{os.path.relpath(path, ROOT)}:{line}: says {match.group(1)} cases, "
                                    f"fixtures/cases has {count}")
    return problems


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--only", help="run only the example with this name")
    parser.add_argument("--list", action="store_true", help="list the blocks and what they are")
    arguments = parser.parse_args()
    binaries = os.path.abspath(os.environ.get("NSE_BIN_DIR", os.path.join(ROOT, ".build", "debug")))
    if not os.access(os.path.join(binaries, "nse"), os.X_OK):
        sys.exit(f"doc-examples: no nse in {binaries} (build first, or set NSE_BIN_DIR)")
    files = [os.path.join(ROOT, "README.md")] + sorted(glob.glob(os.path.join(ROOT, "docs", "*.md"))) \
        + sorted(glob.glob(os.path.join(ROOT, "examples", "*", "README.md")))
    found = blocks(files)
    if arguments.list:
        for block in found:
            print(f"{block.where}  {block.kind or 'UNMARKED'}  {block.name or block.why or ''}")
        return 0
    failures = 0
    cache = {}
    named = {block.name: block for block in found if block.name}
    started = time.time()
    for block in found:
        if arguments.only and block.name != arguments.only:
            continue
        if block.kind is None:
            problems = ["a ```sh block with no marker: <!-- example: NAME -->, <!-- synopsis --> or <!-- not run: why -->"]
        elif block.kind == "example":
            problems = run_example(block, binaries, named)
        elif block.kind == "synopsis":
            problems = check_synopsis(block, binaries, cache)
        else:
            problems = []
        label = block.name or block.kind
        print(f"{'FAIL' if problems else 'PASS'}  {block.where}  {label}")
        for problem in problems:
            print(f"      {problem}")
        failures += bool(problems)
    if not arguments.only:
        for problem in check_case_counts():
            print(f"FAIL  {problem}")
            failures += 1
    print(f"doc examples: {len(found) if not arguments.only else 1} blocks, {failures} failed "
          f"({time.time() - started:.0f} s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

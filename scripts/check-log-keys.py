#!/usr/bin/env python3
"""`make lint`: swift-log's metadata keys follow one convention, and only executables make a `Logger`
(docs/architecture.md, "Logging").

A key is lowercase: a namespace, a dot, then a snake_case name (`sip.call_id`, `apns.id`, `store.error`); an
interpolated part (`push.\\(name)_ms`) stands for a name. Keys are read from `metadata: [...]` and
`Logger.Metadata = [...]` literals, `logger[metadataKey: "..."]` and a `Logger.Metadata` variable's `name["..."]`,
in Sources and Tests. `Logger(label:)` is allowed in the executable targets (Package.swift's `.executableTarget`s)
and in Tests: a library takes its logger from its caller.

    python3 scripts/check-log-keys.py
"""
import glob
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
KEY = re.compile(r"^[a-z][a-z0-9]*\.[a-z][a-z0-9_]*$")


def string_end(text, start):
    """The index just past the string literal opening at `start` (`"`), interpolations included."""
    i = start + 1
    while i < len(text):
        char = text[i]
        if char == "\\":
            if text.startswith("\\(", i):
                i = balanced_end(text, i + 1)
                continue
            i += 2
            continue
        if char == '"':
            return i + 1
        i += 1
    return i


def balanced_end(text, start):
    """The index just past the bracket or parenthesis opening at `start`, strings skipped."""
    depth, i = 0, start
    while i < len(text):
        char = text[i]
        if char == '"':
            i = string_end(text, i)
            continue
        if char in "([":
            depth += 1
        elif char in ")]":
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    return i


def literal_keys(text, start):
    """The keys of the dictionary literal opening at `start` (`[`), with their offsets."""
    keys, i, depth, previous = [], start, 0, ""
    end = balanced_end(text, start)
    while i < end:
        char = text[i]
        if char == '"':
            close = string_end(text, i)
            if depth == 1 and previous in "[,":
                after = text[close:end].lstrip()
                if after.startswith(":"):
                    keys.append((i + 1, text[i + 1 : close - 1]))
            previous = '"'
            i = close
            continue
        if char in "([":
            depth += 1
        elif char in ")]":
            depth -= 1
        if not char.isspace():
            previous = char
        i += 1
    return keys


def metadata_keys(text):
    for match in re.finditer(r"\[\s*metadataKey:\s*\"", text):
        start = match.end() - 1
        yield start + 1, text[start + 1 : string_end(text, start) - 1]
    for name in set(re.findall(r"\b(?:var|let)\s+(\w+)\s*:\s*Logger\.Metadata\b", text)):
        for match in re.finditer(r"\b" + name + r"\[\s*\"", text):
            start = match.end() - 1
            yield start + 1, text[start + 1 : string_end(text, start) - 1]
    for match in re.finditer(r"(?:\bmetadata:\s*|Logger\.Metadata\s*=\s*)\[", text):
        yield from literal_keys(text, match.end() - 1)


def executable_targets():
    text = open(os.path.join(ROOT, "Package.swift"), encoding="utf-8").read()
    return set(re.findall(r"\.executableTarget\(\s*name:\s*\"([^\"]+)\"", text))


def main():
    problems = []
    executables = executable_targets()
    for folder in ("Sources", "Tests"):
        for path in sorted(glob.glob(os.path.join(ROOT, folder, "**/*.swift"), recursive=True)):
            relative = os.path.relpath(path, ROOT)
            text = open(path, encoding="utf-8").read()
            for offset, key in sorted(set(metadata_keys(text))):
                line = text.count("\n", 0, offset) + 1
                if not KEY.match(re.sub(r"\\\(.*?\)", "x", key)):
                    problems.append(f"{relative}:{line}: log metadata key {key!r} is not namespace.snake_case_name")
            parts = relative.split(os.sep)
            if folder == "Sources" and parts[1] not in executables:
                for match in re.finditer(r"\bLogger\(\s*label:", text):
                    line = text.count("\n", 0, match.start()) + 1
                    problems.append(f"{relative}:{line}: a library makes a Logger; take the caller's instead")
    for problem in problems:
        print(problem, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())

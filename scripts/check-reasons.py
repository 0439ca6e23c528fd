#!/usr/bin/env python3
"""`make lint`: docs/result.md's table of reason codes and the ReasonCode enum list the same codes, and every
``symbol`` a doc comment names in double backticks is declared somewhere in Sources (a link left behind by a rename
fails here instead of going stale).

    python3 scripts/check-reasons.py
"""
import glob
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def reason_codes():
    text = open(os.path.join(ROOT, "Sources/NSEPayload/Result/ReasonCode.swift"), encoding="utf-8").read()
    return {m.group(2) or m.group(1) for m in re.finditer(r"^\s*case (\w+)(?: = \"([^\"]+)\")?\s*$", text, re.M)}


def documented_codes():
    text = open(os.path.join(ROOT, "docs/result.md"), encoding="utf-8").read()
    table = re.search(r"<!-- reason-codes:.*?-->(.*?)<!-- reason-codes: end -->", text, re.S)
    if not table:
        return None
    return set(re.findall(r"^\| `([^`]+)` \|", table.group(1), re.M))


def doc_links():
    """Every ``name`` or ``name(label:)`` in a `///` comment, with where it is."""
    links = []
    for path in glob.glob(os.path.join(ROOT, "Sources/**/*.swift"), recursive=True):
        for number, line in enumerate(open(path, encoding="utf-8"), 1):
            if line.lstrip().startswith("///"):
                for link in re.findall(r"``([^`]+)``", line):
                    links.append((os.path.relpath(path, ROOT), number, link))
    return links


def declared_names():
    """Every declared name (and each module's), and every function's full name with its labels (`take(callID:now:)`)."""
    names = {os.path.basename(path) for path in glob.glob(os.path.join(ROOT, "Sources/*"))}
    signatures = set()
    pattern = re.compile(r"\b(?:func|var|let|case|class|struct|enum|protocol|actor|typealias)\s+`?([A-Za-z_]\w*)")
    for path in glob.glob(os.path.join(ROOT, "Sources/**/*.swift"), recursive=True):
        text = open(path, encoding="utf-8").read()
        names.update(pattern.findall(text))
        names.update(re.findall(r"\bcase\s+(?:\w+\s*,\s*)*(\w+)", text))
        for match in re.finditer(r"\b(?:func\s+([A-Za-z_]\w*)|(init)[?!]?)\s*(?:<[^>{]*>)?\s*\(", text):
            name = match.group(1) or match.group(2)
            names.add(name)
            signatures.add(name + "(" + "".join(label + ":" for label in labels(text, match.end())) + ")")
    return names, signatures


def labels(text, start):
    """The argument labels of a parameter list that opens just before `start`."""
    depth, current, params = 1, "", []
    for char in text[start:]:
        if char in "([<":
            depth += 1
        elif char in ")]>":
            depth -= 1
            if depth == 0:
                break
        if char == "," and depth == 1:
            params.append(current)
            current = ""
        else:
            current += char
    if current.strip():
        params.append(current)
    result = []
    for param in params:
        words = param.split(":")[0].split()
        words = [w for w in words if not w.startswith("@")]
        if words:
            result.append(words[0])
    return result


def main():
    problems = []
    codes, documented = reason_codes(), documented_codes()
    if documented is None:
        problems.append("docs/result.md: no <!-- reason-codes: … --> table")
    else:
        for code in sorted(codes - documented):
            problems.append(f"docs/result.md does not list the reason code {code!r} (ReasonCode has it)")
        for code in sorted(documented - codes):
            problems.append(f"docs/result.md lists {code!r}, which ReasonCode does not have")
    names, signatures = declared_names()
    for path, number, link in doc_links():
        # ``Module/Type/member(label:)`` names each part; every part must be declared somewhere, and a function
        # named with its labels must have a declaration with those labels.
        for part in link.split("/"):
            base = re.sub(r"\(.*", "", part).split(".")[-1]
            if base and re.fullmatch(r"[A-Za-z_]\w*", base) and base not in names:
                problems.append(f"{path}:{number}: ``{link}`` names {base}, which nothing in Sources declares")
            elif "(" in part and part.split(".")[-1] not in signatures:
                problems.append(f"{path}:{number}: ``{link}``: no function is declared with those labels")
    for problem in problems:
        print(f"check-reasons: {problem}", file=sys.stderr)
    print(f"check-reasons: {len(codes)} reason codes, {len(doc_links())} doc links, {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Counts the tests a `swift test` run skipped, from its output, and fails when one was skipped for want of a tool
that `make deps` installs (its reason names the package: "make test installs …", "apt-get install …"): in CI that
is a broken setup, not a reason to pass without the test.

    swift test … 2>&1 | tee .build/test-output.log; python3 scripts/check-skips.py .build/test-output.log
"""
import re
import sys

SKIPPED = re.compile(r"^\S*\s*Test (?P<name>.+?) skipped(?:: \"?(?P<why>.*?)\"?)?\.?\s*$")
# XCTest's form, for the suites still on it.
XCTEST_SKIPPED = re.compile(r"^Test Case '(?P<name>[^']+)' skipped")
INSTALLED_BY_DEPS = re.compile(r"make test installs|make deps|apt-get install", re.IGNORECASE)


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: check-skips.py TEST-OUTPUT-LOG")
    skipped, forbidden = [], []
    with open(sys.argv[1], encoding="utf-8", errors="replace") as log:
        for line in log:
            match = SKIPPED.match(line.strip()) or XCTEST_SKIPPED.match(line.strip())
            if not match:
                continue
            why = match.groupdict().get("why") or ""
            skipped.append((match.group("name"), why))
            if INSTALLED_BY_DEPS.search(why):
                forbidden.append((match.group("name"), why))
    print(f"tests skipped: {len(skipped)}")
    for name, why in skipped:
        print(f"  {name}: {why or '(no reason given)'}")
    for name, why in forbidden:
        print(f"check-skips: {name} was skipped for a tool make deps installs: {why}", file=sys.stderr)
    return 1 if forbidden else 0


if __name__ == "__main__":
    sys.exit(main())

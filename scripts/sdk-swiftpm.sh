#!/usr/bin/env bash
# The SDK's SwiftPM route, as a team with a package of its own takes it: examples/swiftpm-extension depends on nse's
# package by path and on its products (UserNotifications, Intents, NSEOSLog); `swift build` builds the extension,
# `swift test` runs its unit tests (Apple's types constructed in a test, no iPhone), and `nse run --extension` runs
# the executable SwiftPM made under iOS's rules: twice on one device, the App Group's count shared between the
# processes, a communication notification made. Then `nse extension build` builds the same target folder.
#
#   NSE_BIN_DIR=.build/debug bash scripts/sdk-swiftpm.sh
#
# Builds in .build/swiftpm-extension (kept: a second run is incremental). NSE_SDK_KEEP=1 keeps the temporary folder.
set -euo pipefail
abspath() { case "$1" in /*) printf '%s' "$1" ;; *) printf '%s/%s' "$PWD" "$1" ;; esac; }
[ -n "${NSE_BIN_DIR:-}" ] && NSE_BIN_DIR="$(abspath "$NSE_BIN_DIR")"
cd "$(dirname "${BASH_SOURCE[0]}")/.."
ROOT="$PWD"
BIN="${NSE_BIN_DIR:-$ROOT/.build/debug}"
PACKAGE=examples/swiftpm-extension
SCRATCH="$ROOT/.build/swiftpm-extension"
started=$(date +%s)

die() { echo "sdk-swiftpm: $*" >&2; exit 1; }
say() { echo "sdk-swiftpm: $*"; }

nse="$BIN/nse"
[ -x "$nse" ] || die "no nse binary at $nse (build first, or set NSE_BIN_DIR)"
work=$(mktemp -d /tmp/nse-sdk-swiftpm.XXXXXX)
cleanup() { [ "${NSE_SDK_KEEP:-0}" = 1 ] && echo "sdk-swiftpm: kept $work" || rm -rf "$work"; }
trap cleanup EXIT
# UserDefaults on Linux lives under XDG_CONFIG_HOME: the unit tests' App Group suite goes here, not into ~/.config.
export XDG_CONFIG_HOME="$work/config"

say "swift build --build-tests (package $PACKAGE)"
swift build --build-tests --package-path "$PACKAGE" --scratch-path "$SCRATCH" >"$work/build.log" 2>&1 \
  || { tail -40 "$work/build.log" >&2; die "the package did not build (log above)"; }
say "swift test"
swift test --skip-build --package-path "$PACKAGE" --scratch-path "$SCRATCH" >"$work/test.log" 2>&1 \
  || { tail -40 "$work/test.log" >&2; die "its unit tests failed (log above)"; }
grep -q "Test run with 4 tests in 1 suite passed" "$work/test.log" \
  || { tail -20 "$work/test.log" >&2; die "expected its 4 unit tests to run and pass"; }

executable="$SCRATCH/debug/NotificationServiceExtension"
[ -x "$executable" ] || die "swift build made no $executable"
device="$work/bob"
"$nse" device init "$device" --bundle-id org.example.app >/dev/null
"$nse" device set "$device" --entitlements fixtures/sdk-extensions/App.entitlements >/dev/null
payload="$work/payload.json"
printf '%s' '{"aps":{"alert":{"title":"New message","body":"Lunch at 1?"},"mutable-content":1},"from":"sip:alice@example.org","name":"Alice","room":"lunch","room-name":"Lunch"}' >"$payload"

check() {  # check RESULTS-FILE LINE JQ-FILTER WHAT
  local got
  got=$(sed -n "$2p" "$1" | jq -r "$3")
  [ "$got" = true ] || { sed -n "$2p" "$1" >&2; die "push $2: $4"; }
}
say "nse run --extension (SwiftPM's executable), two pushes, each in a process of its own"
"$nse" run --device "$device" --extension "$executable" "$payload" "$payload" | jq -c . >"$work/fresh.jsonl"
check "$work/fresh.jsonl" 1 '.outcome == "rewritten" and .notification.aps.alert.title == "Alice"
  and .notification.aps.alert.subtitle == "Lunch" and .notification.aps["thread-id"] == "lunch"' "not rewritten"
check "$work/fresh.jsonl" 1 '.notification.aps.badge == 1' "badge is not the App Group's first count"
check "$work/fresh.jsonl" 2 '.notification.aps.badge == 2' "the second process did not see the first one's count"
check "$work/fresh.jsonl" 1 '.communication.sender_name == "Alice" and .communication.group_name == "Lunch"' \
  "no communication notification"
check "$work/fresh.jsonl" 1 '(.extension.stderr // "") | contains("Lunch at 1?") | not' "the log quotes the message"

say "nse run --extension-process warm: three pushes, one process"
"$nse" run --device "$device" --extension "$executable" --extension-process warm "$payload" "$payload" "$payload" \
  | jq -c . >"$work/warm.jsonl"
check "$work/warm.jsonl" 3 '.extension.process == "warm" and .extension.process_pushes == 3
  and .notification.aps.badge == 5' "the warm process did not serve three pushes in turn"

say "nse extension build of the same target folder (it has its own main.swift)"
built=$("$nse" extension build "$PACKAGE/Sources/NotificationServiceExtension" --principal-class NotificationService \
  2>"$work/extension-build.log" | tail -1) || { cat "$work/extension-build.log" >&2; die "nse extension build failed"; }
"$nse" run --device "$device" --extension "$built" "$payload" | jq -c . >"$work/built.jsonl"
check "$work/built.jsonl" 1 '.outcome == "rewritten" and .notification.aps.badge == 6' \
  "the target built by nse extension build did not run as SwiftPM's did"
say "passed in $(( $(date +%s) - started )) s"

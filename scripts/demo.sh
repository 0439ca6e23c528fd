#!/usr/bin/env bash
# The main job, end to end on the embedded default: a fresh device, a sealed message, one extension process.
set -euo pipefail
BIN="${NSE_BIN_DIR:-.build/release}"
nse="$BIN/nse"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

step "1. A device: org.example.app with the filtering entitlement (its App Group container is $work/bob)"
"$nse" device init "$work/bob" --bundle-id org.example.app --team-id ABCDE12345 --filtering >/dev/null
"$nse" device show "$work/bob" | grep -E '"(bundle_id|key_id|remote)"'

step "2. Alice's app seals a message to Bob's public key"
envelope=$(printf '%s' '{"type":"message","from":"sip:alice@example.org","display_name":"Alice","text":"Lunch at 1?","subject":"Plans"}' \
  | "$nse" seal --device "$work/bob")
echo "envelope: ${envelope:0:72}…"

step "3. The push server sends a Flexisip-style alert push carrying the envelope"
cat >"$work/push.json" <<JSON
{"aps":{"alert":{"loc-key":"IM_MSG","loc-args":["Alice"]},"sound":"msg.caf","mutable-content":1,"badge":1},
 "from-uri":"sip:alice@example.org","display-name":"Alice","call-id":"demo-1@example.org","pn_ttl":2592000,
 "enc":"$envelope"}
JSON
"$nse" run --device "$work/bob" --format text "$work/push.json"

step "4. A push whose content can't be opened (sealed to another device): the loc-key fallback"
"$nse" device init "$work/eve" >/dev/null
other=$(printf '%s' '{"type":"message","from":"sip:alice@example.org","text":"not for Bob"}' | "$nse" seal --device "$work/eve")
sed "s|$envelope|$other|" "$work/push.json" >"$work/push-other.json"
"$nse" run --device "$work/bob" --format text "$work/push-other.json"

#!/usr/bin/env bash
# Interop test: Live Activity pushes from APNs provider libraries on PyPI, aioapns 4.0 and kalyke-apns 1.5.0, to
# `nse serve` over h2/TLS with token authentication (each signs its own ES256 provider token): a start to a
# push-to-start token, an update, an older update ignored, the bundle id as topic refused, an end
# (Tests/interop/live_activity_clients.py). Neither library (nor pyapns_client) can reach the channel-management
# or broadcast paths, so curl, with a provider token signed by PyJWT from aioapns's venv, creates a channel,
# broadcasts on it to an activity subscribed with `nse device activity start --channel`, reads the result back,
# lists and deletes the channel.
#
#   NSE_BIN_DIR=.build/debug bash scripts/interop-live-activities.sh
#
# Needs python3 with venv (Debian: python3-venv), openssl, curl with HTTP/2, and PyPI the first time: the venvs of
# scripts/interop-aioapns.sh ($NSE_INTEROP_VENV, default .build/interop-venv) and scripts/interop-apns-clients.sh
# ($NSE_INTEROP_VENV_KALYKE, default .build/interop-venv-kalyke), made here when missing and reused.
# NSE_INTEROP_KEEP=1 keeps the temporary folder.
set -euo pipefail
# shellcheck source=lib/serve-listening.sh
. "$(dirname "$0")/lib/serve-listening.sh"
# shellcheck source=lib/interop-venv.sh
. "$(dirname "$0")/lib/interop-venv.sh"
abspath() { case "$1" in /*) printf '%s' "$1" ;; *) printf '%s/%s' "$PWD" "$1" ;; esac; }
[ -n "${NSE_BIN_DIR:-}" ] && NSE_BIN_DIR="$(abspath "$NSE_BIN_DIR")"
[ -n "${NSE_INTEROP_VENV:-}" ] && NSE_INTEROP_VENV="$(abspath "$NSE_INTEROP_VENV")"
[ -n "${NSE_INTEROP_VENV_KALYKE:-}" ] && NSE_INTEROP_VENV_KALYKE="$(abspath "$NSE_INTEROP_VENV_KALYKE")"
cd "$(dirname "${BASH_SOURCE[0]}")/.."

AIOAPNS_VERSION=4.0
KALYKE_VERSION=1.5.0
BIN="${NSE_BIN_DIR:-.build/debug}"
VENV_AIOAPNS="${NSE_INTEROP_VENV:-.build/interop-venv}"
VENV_KALYKE="${NSE_INTEROP_VENV_KALYKE:-.build/interop-venv-kalyke}"
KEY_ID=ABC123DEFG
TEAM_ID=ABCDE12345
BUNDLE_ID=org.example.app
DRIVER=Tests/interop/live_activity_clients.py
started=$(date +%s.%N)

die() { echo "interop-live-activities: $*" >&2; exit 1; }
say() { echo "interop-live-activities: $*"; }
elapsed() { python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.1f}')" "$started" "$(date +%s.%N)"; }

nse="$BIN/nse"
[ -x "$nse" ] || die "no nse binary at $nse (build first, or set NSE_BIN_DIR)"
for tool in python3 openssl curl; do command -v "$tool" >/dev/null || die "$tool not found"; done

# --- the venvs, pinned, reused when the pinned version is there -----------------------------------------------------
venv_ensure "$VENV_AIOAPNS" aioapns "$AIOAPNS_VERSION" aioapns,h2,jwt,cryptography
venv_ensure "$VENV_KALYKE" kalyke-apns "$KALYKE_VERSION" kalyke

# --- the temporary folder and the server, stopped by PID on exit ---------------------------------------------------
work="$(mktemp -d "${TMPDIR:-/tmp}/nse-interop-live.XXXXXX")"
server_pid=""
cleanup() {
  if [ -n "$server_pid" ] && kill -0 "$server_pid" 2>/dev/null; then
    kill -TERM "$server_pid" 2>/dev/null || true
    for _ in $(seq 100); do kill -0 "$server_pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
  fi
  if [ "${NSE_INTEROP_KEEP:-0}" = 1 ]; then echo "interop-live-activities: kept $work" >&2; else rm -rf "$work"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

quiet() { local log; log=$("$@" 2>&1) || die "$1 ${2:-} failed: $(echo "$log" | tail -2 | tr '\n' ' ')"; }
quiet openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 \
  -keyout "$work/tls-key.pem" -out "$work/tls-cert.pem" -subj /CN=127.0.0.1 \
  -addext "subjectAltName=IP:127.0.0.1,DNS:localhost"
p8="$work/AuthKey_$KEY_ID.p8"
quiet sh -c "openssl ecparam -name prime256v1 -genkey -noout | openssl pkcs8 -topk8 -nocrypt -out '$p8'"
device="$work/device"
quiet "$nse" device init "$device" --bundle-id "$BUNDLE_ID" --team-id "$TEAM_ID"

NSE_LOG_LEVEL="${NSE_LOG_LEVEL:-info}" "$nse" serve --listen 127.0.0.1:0 \
  --tls-cert "$work/tls-cert.pem" --tls-key "$work/tls-key.pem" --device "$device" \
  --auth-key-file "$p8" --key-id "$KEY_ID" --team-id "$TEAM_ID" >"$work/serve.out" 2>"$work/serve.err" &
server_pid=$!
wait_serve_listening "$work/serve.out" "$work/serve.err" "$server_pid"
say "nse serve at $url, $BIN"

python3 - "$work/setup.json" <<EOF
import json, sys
json.dump({"url": "$url", "ca": "$work/tls-cert.pem", "nse": "$(abspath "$nse")", "device": "$device",
           "key_file": "$p8", "key_id": "$KEY_ID", "team_id": "$TEAM_ID"}, open(sys.argv[1], "w"))
EOF

failed=0
for library in aioapns kalyke; do
  venv="$VENV_AIOAPNS"; [ "$library" = kalyke ] && venv="$VENV_KALYKE"
  timeout -k 5 120 "$venv/bin/python" "$DRIVER" "$library" --setup "$work/setup.json" || failed=1
done

# --- channels and a broadcast with curl, a provider token signed by PyJWT -----------------------------------------
bearer=$("$VENV_AIOAPNS/bin/python" -c '
import jwt, sys, time
print(jwt.encode({"iss": sys.argv[2], "iat": int(time.time())}, open(sys.argv[1]).read(), algorithm="ES256",
                 headers={"kid": sys.argv[3]}))' "$p8" "$TEAM_ID" "$KEY_ID")
h2() { curl -sS --http2 --cacert "$work/tls-cert.pem" --max-time 20 -H "authorization: bearer $bearer" "$@"; }
check() {  # name, detail, test…: PASS when the test holds
  local name="$1" detail="$2"; shift 2
  if "$@"; then echo "PASS curl: $name: $detail"; else echo "FAIL curl: $name: $detail"; failed=1; fi
}
made=$(h2 -D - -o /dev/null -d '{"message-storage-policy":1,"push-type":"LiveActivity"}' \
  "$url/1/apps/$BUNDLE_ID/channels" | tr -d '\r')
channel=$(printf '%s\n' "$made" | sed -n 's/^apns-channel-id: //p')
check "create a channel" "$(printf '%s' "$made" | head -1) $channel" [ -n "$channel" ]
quiet "$nse" device activity start "$device" --attributes-type Score --content-state '{"home":0}' \
  --channel "$channel"
sent=$(h2 -o /dev/null -w '%{http_code}' -H 'apns-push-type: liveactivity' -H "apns-channel-id: $channel" \
  -H "apns-expiration: $(( $(date +%s) + 600 ))" -H 'apns-priority: 10' \
  -d "{\"aps\":{\"timestamp\":$(date +%s),\"event\":\"update\",\"content-state\":{\"home\":1}}}" \
  "$url/4/broadcasts/apps/$BUNDLE_ID")
check "broadcast on it" "$sent" [ "$sent" = 200 ]
remote=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["tokens"]["remote"])' "$device/device.json")
outcome=""
for _ in $(seq 100); do
  outcome=$(curl -sS --cacert "$work/tls-cert.pem" --max-time 10 "$url/v1/devices/$remote/notifications?limit=1" \
    | python3 -c 'import json,sys; r=json.load(sys.stdin); print(r[0]["outcome"] if r and r[0].get("live_activity",{}).get("channel_id") else "")')
  [ -n "$outcome" ] && break
  sleep 0.1
done
check "the subscribed activity got it" "${outcome:-nothing recorded}" [ "$outcome" = activity-updated ]
listed=$(h2 "$url/1/apps/$BUNDLE_ID/all-channels")
check "list the app's channels" "$listed" grep -qF -- "$channel" <<<"$listed"
deleted=$(h2 -o /dev/null -w '%{http_code}' -X DELETE -H "apns-channel-id: $channel" "$url/1/apps/$BUNDLE_ID/channels")
check "delete it" "$deleted" [ "$deleted" = 204 ]

# --- SIGTERM: nse serve exits 0 -------------------------------------------------------------------------------------
kill -TERM "$server_pid"
server_rc=""
for _ in $(seq 50); do
  if ! kill -0 "$server_pid" 2>/dev/null; then set +e; wait "$server_pid"; server_rc=$?; set -e; break; fi
  sleep 0.1
done
[ "$server_rc" = 0 ] && server_pid="" || { failed=1; echo "interop-live-activities: nse serve exit ${server_rc:-none} after SIGTERM" >&2; }
if [ "$failed" = 0 ]; then
  say "PASS (aioapns $AIOAPNS_VERSION, kalyke-apns $KALYKE_VERSION, curl; nse serve exited 0 on SIGTERM) in $(elapsed) s"
else
  tail -n 15 "$work/serve.err" | sed 's/^/  serve: /' >&2
  say "FAIL in $(elapsed) s" >&2
fi
exit "$failed"

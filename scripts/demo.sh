#!/usr/bin/env bash
# The main job, end to end on the embedded default (no outside server): a device, the embedded SIP server,
# a sealed MESSAGE held for the offline device, the server's push, one extension process that registers,
# fetches by Call-ID, decrypts and rewrites; then a message answered from the shared store, a fallback, and an
# encrypted call that rings; the app in the foreground receiving a message itself; a warm extension process; a
# verified sender beside a forged one; an extension of your own (examples/notification-service: CryptoKit opens an
# HPKE envelope, URLSession fetches the picture, a communication notification, the best attempt at expiry); and the
# lock-screen page of nse serve (NSE_DEMO_KEEP=1 keeps it serving).
set -euo pipefail
BIN="${NSE_BIN_DIR:-.build/release}"
nse="$BIN/nse"
work="$(mktemp -d)"
pids=()
cleanup() { for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done; rm -rf "$work"; }
trap cleanup EXIT

step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
wait_line() { for _ in $(seq 100); do [ -s "$1" ] && return 0; sleep 0.05; done; echo "timed out waiting for $1" >&2; exit 1; }

step "1. Bob's phone: org.example.app with the filtering entitlement (App Group container $work/bob)"
"$nse" device init "$work/bob" --bundle-id org.example.app --team-id ABCDE12345 --filtering >/dev/null

step "2. The push path: 'nse serve', APNs's provider API, running every push it accepts on Bob's phone"
NSE_LOG_LEVEL=warning "$nse" serve --listen 127.0.0.1:0 --device "$work/bob" >"$work/serve.out" 2>"$work/serve.err" &
pids+=($!)
wait_line "$work/serve.out"
push_url=$(python3 -c 'import json,sys; print(json.load(sys.stdin)["listening"])' <"$work/serve.out")
token=$(python3 -c 'import json,sys; print(json.load(sys.stdin)["tokens"]["remote"])' <"$work/bob/device.json")
echo "push URL: $push_url"

step "3. The embedded SIP server (registrar + store-and-forward, Flexisip's fork-late), pushing there"
"$nse" sip-server --listen tcp:127.0.0.1:0 --db "$work/sip-db" --push-url "$push_url" \
  --accept-timeout 0.5 --events >"$work/sip.log" 2>"$work/sip.err" &
pids+=($!)
wait_line "$work/sip.log"
proxy=$(python3 -c 'import json,sys; print([l["uri"] for l in json.loads(sys.stdin.readline())["listening"]][0])' <"$work/sip.log")
echo "proxy: $proxy"

step "4. Bob's app registers (RFC 8599 push parameters in its Contact), then goes to the background"
"$nse" device set "$work/bob" --sip-account sip:bob@example.org --sip-proxy "$proxy" >/dev/null
"$nse" device register "$work/bob" | grep -E '"status"'

step "5. Alice sends Bob a sealed MESSAGE; the server holds it and pushes its Call-ID; the extension fetches it"
"$nse" send --proxy "$proxy" --from sip:alice@example.org --to sip:bob@example.org --display-name Alice \
  --seal-to "$work/bob" --text "Lunch at 1?"
results="[]"
for _ in $(seq 100); do
  results=$(curl -s "$push_url/v1/devices/$token/notifications?limit=1" || echo "[]")
  [ -n "$results" ] && [ "$results" != "[]" ] && break
  sleep 0.1
done
echo "--- what Bob's lock screen shows (GET $push_url/v1/devices/<token>/notifications):"
printf '%s' "$results" | python3 -c '
import json, sys
r = json.load(sys.stdin)[0]; e = r["extension"] or {}; d = r["display"] or {}
print("outcome: ", r["outcome"]); print("reason:  ", r["reason"])
print("title:   ", d.get("title", "")); print("body:    ", d.get("body", ""))
print("apns-id: ", r["apns_id"], "| accepted to recorded:", r["latency_ms"], "ms | extension:", e.get("wall_ms"), "ms")'

step "6. Bob's phone is out of reach of pushes; two messages are held; then one push arrives for the first"
kill "${pids[0]}"; wait "${pids[0]}" 2>/dev/null || true
call_id() { python3 -c 'import json,sys; print(json.load(sys.stdin)["call_id"])'; }
first=$("$nse" send --proxy "$proxy" --from sip:alice@example.org --to sip:bob@example.org --display-name Alice \
  --seal-to "$work/bob" --text "Are you there?" | call_id)
second=$("$nse" send --proxy "$proxy" --from sip:alice@example.org --to sip:bob@example.org --display-name Alice \
  --seal-to "$work/bob" --text "Call me when you land" | call_id)
echo "held: $first, $second (both answered 202 Accepted by the server)"
printf '{"aps":{"alert":{"loc-key":"IM_MSG","loc-args":["Alice"]},"mutable-content":1},"call-id":"%s"}' "$first" \
  | "$nse" run --device "$work/bob" | python3 -c '
import json, sys
r = json.load(sys.stdin); i = r["extension"]["info"]
print("outcome:", r["outcome"], "| body:", r["display"]["body"])
print("Call-IDs received on one REGISTER:", len(i["call_ids_received"]), "| kept in the App Group store:", i["stored_for_later"])'
kill "${pids[1]}"; wait "${pids[1]}" 2>/dev/null || true
echo "(SIP server stopped: the push for the second message can only be answered from the shared store)"
printf '{"aps":{"alert":{"loc-key":"IM_MSG","loc-args":["Alice"]},"mutable-content":1},"call-id":"%s"}' "$second" \
  | "$nse" run --device "$work/bob" --format text

step "7. A push whose content can't be opened (sealed to another phone): the loc-key fallback"
"$nse" device init "$work/eve" >/dev/null
other=$(printf '%s' '{"type":"message","from":"sip:alice@example.org","text":"not for Bob"}' | "$nse" seal --device "$work/eve")
printf '{"aps":{"alert":{"loc-key":"IM_MSG","loc-args":["Alice"]},"mutable-content":1},"enc":"%s"}' "$other" \
  | "$nse" run --device "$work/bob" --format text

step "8. An encrypted call offer: the extension reports it to CallKit, the app reports the call, the alert is silenced"
call=$(printf '%s' '{"type":"call","call_uuid":"6F1C6D3A-3F0B-4C59-9E55-0B7D4E0E8A11","from":"sip:alice@example.org","display_name":"Alice","video":true}' \
  | "$nse" seal --device "$work/bob")
printf '{"aps":{"alert":{"loc-key":"IC_MSG","loc-args":["Alice"]},"mutable-content":1},"enc":"%s"}' "$call" \
  | "$nse" run --device "$work/bob" --format text

step "9. The whole call: Alice calls Bob; the server holds the INVITE and pushes the sealed offer; the phone rings"
NSE_LOG_LEVEL=warning "$nse" serve --listen 127.0.0.1:0 --device "$work/bob" >"$work/serve2.out" 2>"$work/serve2.err" &
serve2_pid=$!
pids+=($serve2_pid)
wait_line "$work/serve2.out"
push_url=$(python3 -c 'import json,sys; print(json.load(sys.stdin)["listening"])' <"$work/serve2.out")
"$nse" sip-server --listen tcp:127.0.0.1:0 --db "$work/sip-db2" --push-url "$push_url" --e2ee-calls \
  --events >"$work/sip2.log" 2>"$work/sip2.err" &
pids+=($!)
wait_line "$work/sip2.log"
proxy=$(python3 -c 'import json,sys; print([l["uri"] for l in json.loads(sys.stdin.readline())["listening"]][0])' <"$work/sip2.log")
"$nse" device set "$work/bob" --sip-proxy "$proxy" --call-action answer --answer-after 1 --hangup-after 30 >/dev/null
"$nse" device register "$work/bob" >/dev/null
echo "Bob's phone rings; Bob answers after 1 s; Alice hangs up 2 s into the call"
"$nse" call --proxy "$proxy" --from sip:alice@example.org --to sip:bob@example.org --display-name Alice \
  --seal-to "$work/bob" --hangup-after 2 | python3 -c '
import json, sys
r = json.load(sys.stdin)
print("Alice: final status", r["final_status"], "| answered:", r["answered"], "| ended by:", r["ended_by"])
print("       timeline (ms from the INVITE):", ", ".join("%s %.0f" % kv for kv in r["timeline_ms"].items()))'
results="[]"
for _ in $(seq 100); do
  results=$(curl -s "$push_url/v1/devices/$token/notifications?limit=1" || echo "[]")
  case "$results" in *'"call"'*'"end_reason"'*) break ;; esac
  sleep 0.1
done
printf '%s' "$results" | python3 -c '
import json, sys
r = json.load(sys.stdin)[0]; c = r.get("call") or {}
print("Bob:   ", r["outcome"], "(the extension escalated the call) | route:", c.get("route"), "| end:", c.get("end_reason"))
print("       timeline (ms from the push):", ", ".join("%s %.0f" % kv for kv in (c.get("timeline_ms") or {}).items()))'

step "10. Bob opens the app: it takes the shared core and receives Alice's next message itself, in the app"
"$nse" app "$work/bob" >"$work/app.out" 2>"$work/app.err" &
app_pid=$!
pids+=($app_pid)
for _ in $(seq 100); do grep -q '"registered"' "$work/app.out" && break; sleep 0.05; done
"$nse" send --proxy "$proxy" --from sip:alice@example.org --to sip:bob@example.org --display-name Alice \
  --seal-to "$work/bob" --text "Are you there?" >/dev/null
for _ in $(seq 100); do grep -q '"message"' "$work/app.out" && break; sleep 0.05; done
kill -TERM "$app_pid"; wait "$app_pid"
python3 -c '
import json, sys
for line in open(sys.argv[1]):
    e = json.loads(line)
    if e["event"] == "foreground": print("app:    foreground, shared core", e["shared_core"])
    elif e["event"] == "message": print("app:    shows in the app:", e["display"]["title"], "-", e["display"]["body"], "(" + e["source"] + ")")
    elif e["event"] == "background": print("app:    to the background (re-REGISTER with push parameters:", e["register_status"], ")")' "$work/app.out"
echo "Bob closed the app; Alice writes again: this one comes by push"
"$nse" send --proxy "$proxy" --from sip:alice@example.org --to sip:bob@example.org --display-name Alice \
  --seal-to "$work/bob" --text "Call me later" >/dev/null
for _ in $(seq 100); do
  results=$(curl -s "$push_url/v1/devices/$token/notifications?limit=3" || echo "[]")
  case "$results" in *'Call me later'*) break ;; esac
  sleep 0.1
done
printf '%s' "$results" | python3 -c '
import json, sys
for r in reversed(json.load(sys.stdin)[:2]):
    d = r["display"] or {}; info = (r["extension"] or {}).get("info") or {}
    why = "the app had shown it" if info.get("already_shown") else "fetched by the extension (shared core: %s)" % info.get("shared_core")
    print("push:  ", r["outcome"], "|", d.get("body", "") or "(nothing shown)", "|", why)'

step "11. A warm extension process: one process serves three pushes in a row (--extension-process warm)"
for n in 1 2 3; do
  printf '{"type":"message","from":"sip:alice@example.org","display_name":"Alice","text":"note %s"}' "$n" \
    | "$nse" seal --device "$work/bob" \
    | python3 -c 'import json,sys; print(json.dumps({"aps":{"alert":{"loc-key":"IM_MSG"},"mutable-content":1},"enc":sys.stdin.read().strip()}))' \
    >"$work/warm-$n.json"
done
"$nse" run --device "$work/bob" --extension-process warm "$work"/warm-{1,2,3}.json | python3 -c '
import json, sys
for line in sys.stdin:
    r = json.loads(line); e = r["extension"]
    print("push:  ", r["display"]["body"], "| process:", e["process"], "| its push", e["process_pushes"], "| peak", e["peak_rss_kb"], "KB |", e["wall_ms"], "ms")'

step "12. Who sent it? Bob trusts Alice's signing key; Mallory signs a message claiming to be Alice"
"$nse" keys init "$work/alice.key" >/dev/null
"$nse" keys init "$work/mallory.key" >/dev/null
"$nse" device trust "$work/bob" --contact sip:alice@example.org --key "$work/alice.key" >/dev/null
for signer in alice mallory; do
  printf '{"type":"message","from":"sip:alice@example.org","display_name":"Alice","text":"Please wire the money"}' \
    | "$nse" seal --device "$work/bob" --sign-with "$work/$signer.key" \
    | python3 -c 'import json,sys; print(json.dumps({"aps":{"alert":{"loc-key":"IM_MSG"},"mutable-content":1},"enc":sys.stdin.read().strip()}))' \
    >"$work/signed-$signer.json"
done
"$nse" run --device "$work/bob" "$work/signed-alice.json" "$work/signed-mallory.json" | python3 -c '
import json, sys
for who, line in zip(("signed by Alice:  ", "signed by Mallory:"), sys.stdin):
    r = json.loads(line); d = r["display"]
    print(who, r["outcome"], "|", d["title"], "-", d["body"], "| sender", r.get("sender"), "|", r["reason"].split(":")[0])'

step "13. An extension of your own (examples/notification-service): CryptoKit opens the HPKE envelope, the picture is downloaded"
example="$(dirname "$0")/../examples/notification-service"
# The app's new version: its own extension, a keychain group it shares with it and the communication entitlement; at
# sign-in it keeps the device's key in that keychain group, where its extension reads it (SecItemCopyMatching).
"$nse" device set "$work/bob" --entitlements "$example/NotificationService.entitlements" >/dev/null
"$nse" device keychain add "$work/bob" --service org.example.app.e2ee --account device-key \
  --access-group ABCDE12345.org.example.shared --accessible after-first-unlock-this-device-only \
  --data-file "$work/bob/keys/private.key" >/dev/null
extension=$("$nse" extension build "$example" 2>"$work/build.err" | tail -n 1) || { cat "$work/build.err" >&2; exit 1; }
echo "built: $extension"
python3 "$example/media-server.py" 127.0.0.1:0 >"$work/media.out" 2>"$work/media.err" &
media_pid=$!
pids+=($media_pid)
wait_line "$work/media.out"
media=$(head -n 1 "$work/media.out")
python3 -c '
import base64, json, sys
print(json.dumps({"type": "message", "from": "sip:alice@example.org", "display_name": "Alice",
                  "text": "Look where I am", "image": base64.b64encode(open(sys.argv[1], "rb").read()).decode()}))' \
  "$example/media/lunch.png" | "$nse" seal --device "$work/bob" --hpke >"$work/hpke.txt"
echo "sealed with HPKE: $(cut -c1-60 "$work/hpke.txt")…"
for picture in beach.png slow/beach.png; do
  python3 -c 'import json,sys; print(json.dumps({"aps":{"alert":{"title":"New message","body":"(encrypted)"},"mutable-content":1},"enc":open(sys.argv[1]).read().strip(),"media-url":sys.argv[2]}))' \
    "$work/hpke.txt" "$media$picture" >"$work/hpke-push.json"
  "$nse" run --device "$work/bob" --extension "$extension" --budget 2 "$work/hpke-push.json" | python3 -c '
import json, sys
r = json.load(sys.stdin); d = r["display"]; c = r.get("communication") or {}; a = r.get("attachments") or []
print("push (media-url %s):" % sys.argv[1], r["outcome"], "|", d["title"], "-", d["body"], "| from", c.get("sender_name"),
      "(communication) |", ", ".join("%s %d bytes" % (x["type"], x["size"]) for x in a), "|", r["extension"]["wall_ms"], "ms")
if r["extension"].get("time_will_expire_sent"): print("       time ran out (2 s): the best attempt went out, with the picture carried inline")' "$picture"
done
kill "$media_pid"; wait "$media_pid" 2>/dev/null || true

step "14. See the phone: nse serve draws Bob's lock screen at / (live over /v1/events)"
# One nse serve runs a device's pushes at a time: step 9's server makes way for this one.
kill "$serve2_pid"; wait "$serve2_pid" 2>/dev/null || true
NSE_LOG_LEVEL=warning "$nse" serve --listen 127.0.0.1:0 --device "$work/bob" >"$work/serve3.out" 2>"$work/serve3.err" &
page_pid=$!
pids+=($page_pid)
wait_line "$work/serve3.out"
page_url=$(python3 -c 'import json,sys; print(json.load(sys.stdin)["listening"])' <"$work/serve3.out")
notifications=$(curl -s "$page_url/" | grep -o 'class="card ' | wc -l)
echo "lock screen: $page_url/ ($notifications notifications drawn)"
if [ "${NSE_DEMO_KEEP:-0}" = 1 ]; then
  echo "serving until Ctrl-C (NSE_DEMO_KEEP=1): open the URL, or push with: nse push --url $page_url --device $work/bob payload.json"
  wait "$page_pid" || true
fi

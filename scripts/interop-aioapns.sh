#!/usr/bin/env bash
# Interop test: aioapns (a maintained APNs client from PyPI) pushes to `nse serve` over h2/TLS with token
# authentication (aioapns signs its own ES256 provider token) and with client certificates (Flexisip's way), then
# reads the recorded results back.
#
#   NSE_BIN_DIR=.build/debug bash scripts/interop-aioapns.sh
#
# Needs python3 with venv/ensurepip (Debian: python3-venv), openssl, and PyPI the first time (the venv, with
# aioapns pinned, is kept in $NSE_INTEROP_VENV, default .build/interop-venv, and reused).
# aioapns runs as shipped. Two differences from Apple's servers once broke it (h2 over TLS without ALPN, and an
# empty DATA frame ending each response); nse serve fixed both, and the client still probes each first.
# NSE_INTEROP_WORKAROUNDS=alpn,empty-data would shield aioapns from them again (reported as XFAIL if they return).
# NSE_INTEROP_SERVER_TEAM_ID gives the server another team id than the client's: every accepted-push case must
# then fail (a self-check that the test can fail). NSE_INTEROP_KEEP=1 keeps the temporary folder.
set -euo pipefail
# shellcheck source=lib/serve-listening.sh
. "$(dirname "$0")/lib/serve-listening.sh"
# shellcheck source=lib/interop-venv.sh
. "$(dirname "$0")/lib/interop-venv.sh"
# Paths given relative to where the script is called from; everything else relative to the repository.
abspath() { case "$1" in /*) printf '%s' "$1" ;; *) printf '%s/%s' "$PWD" "$1" ;; esac; }
[ -n "${NSE_BIN_DIR:-}" ] && NSE_BIN_DIR="$(abspath "$NSE_BIN_DIR")"
[ -n "${NSE_INTEROP_VENV:-}" ] && NSE_INTEROP_VENV="$(abspath "$NSE_INTEROP_VENV")"
cd "$(dirname "${BASH_SOURCE[0]}")/.."

AIOAPNS_VERSION=4.0
BIN="${NSE_BIN_DIR:-.build/debug}"
VENV="${NSE_INTEROP_VENV:-.build/interop-venv}"
KEY_ID=ABC123DEFG
TEAM_ID=ABCDE12345
SERVER_TEAM_ID="${NSE_INTEROP_SERVER_TEAM_ID:-$TEAM_ID}"
BUNDLE_ID=org.example.app
started=$(date +%s.%N)

die() { echo "interop-aioapns: $*" >&2; exit 1; }
elapsed() { python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.1f}')" "$started" "$(date +%s.%N)"; }

nse="$BIN/nse"
[ -x "$nse" ] || die "no nse binary at $nse (build first, or set NSE_BIN_DIR)"
[ -x "$BIN/nse-extension" ] || die "no nse-extension beside it at $BIN/nse-extension"
command -v python3 >/dev/null || die "python3 not found (Debian: python3)"
command -v openssl >/dev/null || die "openssl not found (Debian: openssl)"

# --- the venv with aioapns ------------------------------------------------------------------------------------
venv_ensure "$VENV" aioapns "$AIOAPNS_VERSION" aioapns,h2,jwt,cryptography  # its JWT signing: PyJWT + cryptography

# --- a device, a certificate, a provider key ------------------------------------------------------------------
work="$(mktemp -d "${TMPDIR:-/tmp}/nse-interop.XXXXXX")"
server_pid=""
client_pid=""
cleanup() {
  if [ -n "$client_pid" ] && kill -0 "$client_pid" 2>/dev/null; then
    kill -TERM "$client_pid" 2>/dev/null || true
    wait "$client_pid" 2>/dev/null || true
  fi
  if [ -n "$server_pid" ] && kill -0 "$server_pid" 2>/dev/null; then
    kill -KILL "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
  fi
  if [ "${NSE_INTEROP_KEEP:-0}" = 1 ]; then echo "interop-aioapns: kept $work" >&2; else rm -rf "$work"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

quiet() { local log; log=$("$@" 2>&1) || die "$1 ${2:-} failed: $(echo "$log" | tail -2 | tr '\n' ' ')"; }

quiet openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 \
  -keyout "$work/tls-key.pem" -out "$work/tls-cert.pem" -subj /CN=127.0.0.1 \
  -addext "subjectAltName=IP:127.0.0.1,DNS:localhost"
# An APNs provider key as Apple hands it out: PKCS#8 PEM, P-256, in AuthKey_<key id>.p8.
p8="$work/AuthKey_$KEY_ID.p8"
quiet sh -c "openssl ecparam -name prime256v1 -genkey -noout | openssl pkcs8 -topk8 -nocrypt -out '$p8'"

# Certificate-based authentication (Flexisip's): a CA, and client certificates as Apple issues them (bundle id in
# the subject's UID, the environment in the common name), each with its key in one PEM as aioapns takes it.
quiet openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 \
  -keyout "$work/ca.key" -out "$work/ca.pem" -subj "/CN=Push Test CA"
client_certificate() {  # name, common name prefix
  quiet openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout "$work/$1.key" \
    -out "$work/$1.csr" -subj "/UID=$BUNDLE_ID/CN=$2: $BUNDLE_ID"
  quiet openssl x509 -req -in "$work/$1.csr" -CA "$work/ca.pem" -CAkey "$work/ca.key" -CAcreateserial \
    -out "$work/$1.crt" -days 2
  cat "$work/$1.crt" "$work/$1.key" >"$work/$1.pem"
}
client_certificate dev-push "Apple Development IOS Push Services"
client_certificate prod-push "Apple Production IOS Push Services"

device="$work/device"
quiet "$nse" device init "$device" --bundle-id "$BUNDLE_ID" --team-id "$TEAM_ID" --filtering
quiet "$nse" device set "$device" --app-handler builtin   # the app reports every call (the default, said explicitly)
plaintext=fixtures/plaintexts/alice-lunch.json
"$nse" seal --device "$device" <"$plaintext" >"$work/envelope.txt" 2>"$work/seal.err" \
  || die "nse seal failed: $(tail -1 "$work/seal.err")"

# --- nse serve, h2 over TLS, token auth -----------------------------------------------------------------------
NSE_LOG_LEVEL="${NSE_LOG_LEVEL:-info}" "$nse" serve --listen 127.0.0.1:0 \
  --tls-cert "$work/tls-cert.pem" --tls-key "$work/tls-key.pem" --device "$device" \
  --auth-key-file "$p8" --key-id "$KEY_ID" --team-id "$SERVER_TEAM_ID" --client-ca "$work/ca.pem" \
  >"$work/serve.out" 2>"$work/serve.err" &
server_pid=$!
wait_serve_listening "$work/serve.out" "$work/serve.err" "$server_pid"
echo "interop-aioapns: nse serve at $url (key $KEY_ID, team $SERVER_TEAM_ID), $BIN"

# --- the client ------------------------------------------------------------------------------------------------
# In the background and waited for, so that a signal to this script is handled at once (the trap), not after it.
set +e
timeout -k 5 240 "$VENV/bin/python" Tests/interop/aioapns_client.py --url "$url" --ca "$work/tls-cert.pem" \
  --device-json "$device/device.json" --key-file "$p8" --key-id "$KEY_ID" --team-id "$TEAM_ID" \
  --envelope "$work/envelope.txt" --plaintext "$plaintext" \
  --client-cert "$work/dev-push.pem" --production-cert "$work/prod-push.pem" --workarounds "${NSE_INTEROP_WORKAROUNDS:-}" ${NSE_INTEROP_CLIENT_ARGS:-} &
client_pid=$!
wait "$client_pid"
client_rc=$?
client_pid=""
set -e
[ "$client_rc" = 124 ] && echo "interop-aioapns: the client was killed after 240 s" >&2

# --- SIGTERM: nse serve finishes what it accepted and exits 0 ---------------------------------------------------
kill -TERM "$server_pid"
server_rc=""
for _ in $(seq 300); do
  if ! kill -0 "$server_pid" 2>/dev/null; then
    set +e; wait "$server_pid"; server_rc=$?; set -e
    break
  fi
  sleep 0.1
done
server_pid_left="$server_pid"
if [ -z "$server_rc" ]; then
  echo "interop-aioapns: nse serve did not exit within 30 s of SIGTERM" >&2
else
  server_pid=""
fi

failed=0
if [ "$client_rc" != 0 ]; then
  failed=1
  echo "interop-aioapns: client exit status $client_rc; nse serve's log ends:" >&2
  tail -n 15 "$work/serve.err" | sed 's/^/  serve: /' >&2
fi
if [ "$server_rc" != 0 ]; then
  failed=1
  echo "interop-aioapns: nse serve (pid $server_pid_left) exit status ${server_rc:-none} after SIGTERM, expected 0; its log ends:" >&2
  tail -n 15 "$work/serve.err" | sed 's/^/  serve: /' >&2
fi
if [ "$failed" = 0 ]; then
  echo "interop-aioapns: PASS (aioapns $AIOAPNS_VERSION, nse serve exited 0 on SIGTERM) in $(elapsed) s"
else
  echo "interop-aioapns: FAIL in $(elapsed) s" >&2
fi
exit "$failed"

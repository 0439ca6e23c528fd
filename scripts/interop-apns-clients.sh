#!/usr/bin/env bash
# Interop test: two more APNs provider libraries from PyPI, pyapns_client (sync, signs iat as a float) and
# kalyke-apns (async, signs iat as a string of digits), push to `nse serve` over h2/TLS with token authentication,
# each signing its own tokens; then providers push at the same time through HAProxy (examples/haproxy/haproxy.cfg)
# onto one shared backend connection to the same server.
#
#   NSE_BIN_DIR=.build/debug bash scripts/interop-apns-clients.sh
#
# Needs python3 with venv (Debian: python3-venv), openssl, haproxy (installed with apt-get if missing, as
# `make deps` installs packages), and PyPI the first time: each library gets its own venv, pinned, kept in
# $NSE_INTEROP_VENV_PYAPNS (default .build/interop-venv-pyapns-client) and $NSE_INTEROP_VENV_KALYKE (default
# .build/interop-venv-kalyke) and reused. The libraries run unchanged (Tests/interop/apns_clients.py says how each
# is pointed at nse). NSE_INTEROP_KEEP=1 keeps the temporary folder; NSE_INTEROP_PUSHES sets the pushes per
# provider through HAProxy (default 20).
set -euo pipefail
# shellcheck source=lib/serve-listening.sh
. "$(dirname "$0")/lib/serve-listening.sh"
# shellcheck source=lib/interop-venv.sh
. "$(dirname "$0")/lib/interop-venv.sh"
abspath() { case "$1" in /*) printf '%s' "$1" ;; *) printf '%s/%s' "$PWD" "$1" ;; esac; }
[ -n "${NSE_BIN_DIR:-}" ] && NSE_BIN_DIR="$(abspath "$NSE_BIN_DIR")"
[ -n "${NSE_INTEROP_VENV_PYAPNS:-}" ] && NSE_INTEROP_VENV_PYAPNS="$(abspath "$NSE_INTEROP_VENV_PYAPNS")"
[ -n "${NSE_INTEROP_VENV_KALYKE:-}" ] && NSE_INTEROP_VENV_KALYKE="$(abspath "$NSE_INTEROP_VENV_KALYKE")"
cd "$(dirname "${BASH_SOURCE[0]}")/.."

PYAPNS_VERSION=2.0.6
KALYKE_VERSION=1.5.0
BIN="${NSE_BIN_DIR:-.build/debug}"
VENV_PYAPNS="${NSE_INTEROP_VENV_PYAPNS:-.build/interop-venv-pyapns-client}"
VENV_KALYKE="${NSE_INTEROP_VENV_KALYKE:-.build/interop-venv-kalyke}"
PUSHES="${NSE_INTEROP_PUSHES:-20}"
DRIVER=Tests/interop/apns_clients.py
HAPROXY_CFG=examples/haproxy/haproxy.cfg
started=$(date +%s.%N)

die() { echo "interop-apns-clients: $*" >&2; exit 1; }
say() { echo "interop-apns-clients: $*"; }
elapsed() { python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.1f}')" "$1" "$(date +%s.%N)"; }

nse="$BIN/nse"
[ -x "$nse" ] || die "no nse binary at $nse (build first, or set NSE_BIN_DIR)"
[ -x "$BIN/nse-extension" ] || die "no nse-extension beside it at $BIN/nse-extension"
command -v python3 >/dev/null || die "python3 not found (Debian: python3)"
command -v openssl >/dev/null || die "openssl not found (Debian: openssl)"

# --- HAProxy: the Debian package, installed only if missing ---------------------------------------------------------
if ! dpkg -s haproxy >/dev/null 2>&1; then
  say "installing haproxy (apt-get)" >&2
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
  { timeout 300 $SUDO apt-get update -qq \
      && timeout 600 $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq haproxy >/dev/null; } \
    || die "apt-get install haproxy failed"
fi
HAPROXY="$(command -v haproxy || echo /usr/sbin/haproxy)"
[ -x "$HAPROXY" ] || die "haproxy not found after installing it"

# --- one venv per library, pinned, reused when the pinned version is there ------------------------------------------
venv_ensure "$VENV_PYAPNS" pyapns_client "$PYAPNS_VERSION" pyapns_client
venv_ensure "$VENV_KALYKE" kalyke-apns "$KALYKE_VERSION" kalyke

# --- the temporary folder and every process started, stopped by PID on exit -----------------------------------------
work="$(mktemp -d "${TMPDIR:-/tmp}/nse-interop-clients.XXXXXX")"
server_pid=""
haproxy_pid=""
client_pid=""
stop() {  # pid, signal: signal it, wait up to 10 s, then SIGKILL
  local pid="$1"
  [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null || return 0
  kill "-$2" "$pid" 2>/dev/null || true
  for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  kill -KILL "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
}
cleanup() {
  stop "$client_pid" TERM
  stop "$haproxy_pid" TERM
  stop "$server_pid" TERM  # it exits within seconds of SIGTERM (SIGKILL after 10 s)
  if [ "${NSE_INTEROP_KEEP:-0}" = 1 ]; then echo "interop-apns-clients: kept $work" >&2; else rm -rf "$work"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

quiet() { local log; log=$("$@" 2>&1) || die "$1 ${2:-} failed: $(echo "$log" | tail -2 | tr '\n' ' ')"; }

# --- certificates, keys, devices ------------------------------------------------------------------------------------
quiet openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 \
  -keyout "$work/tls-key.pem" -out "$work/tls-cert.pem" -subj /CN=127.0.0.1 \
  -addext "subjectAltName=IP:127.0.0.1,DNS:localhost"
cat "$work/tls-cert.pem" "$work/tls-key.pem" >"$work/haproxy.pem"  # HAProxy's crt: certificate and key in one file

# Three keys nse serve accepts (alpha and beta: a team each; shared: team alpha's second key, for the providers
# that share one) and one it does not: alpha's key id and team on another private key.
p8() { quiet sh -c "openssl ecparam -name prime256v1 -genkey -noout | openssl pkcs8 -topk8 -nocrypt -out '$1'"; }
TEAM_A=TEAMALPHA1; KEY_A=KEYALPHA01
TEAM_B=TEAMBETA02; KEY_B=KEYBETA002
KEY_S=KEYSHARED3
p8 "$work/AuthKey_$KEY_A.p8"; p8 "$work/AuthKey_$KEY_B.p8"; p8 "$work/AuthKey_$KEY_S.p8"
mkdir "$work/wrong"; p8 "$work/wrong/AuthKey_$KEY_A.p8"

# An app per team (TopicDisallowed is the app of another team than the token's), and an uninstalled one.
quiet "$nse" device init "$work/alpha" --bundle-id org.example.alpha --team-id "$TEAM_A" --filtering
quiet "$nse" device init "$work/beta" --bundle-id org.example.beta --team-id "$TEAM_B"
quiet "$nse" device init "$work/gone" --bundle-id org.example.gone --team-id "$TEAM_A"
quiet "$nse" device set "$work/gone" --uninstalled
plaintext=fixtures/plaintexts/alice-lunch.json
"$nse" seal --device "$work/alpha" <"$plaintext" >"$work/envelope.txt" 2>"$work/seal.err" \
  || die "nse seal failed: $(tail -1 "$work/seal.err")"

# --- nse serve: TLS, three keys -------------------------------------------------------------------------------------
NSE_LOG_LEVEL="${NSE_LOG_LEVEL:-info}" "$nse" serve --listen 127.0.0.1:0 \
  --tls-cert "$work/tls-cert.pem" --tls-key "$work/tls-key.pem" \
  --device "$work/alpha" --device "$work/beta" --device "$work/gone" \
  --auth-key-file "$work/AuthKey_$KEY_A.p8" --key-id "$KEY_A" --team-id "$TEAM_A" \
  --auth-key-file "$work/AuthKey_$KEY_B.p8" --key-id "$KEY_B" --team-id "$TEAM_B" \
  --auth-key-file "$work/AuthKey_$KEY_S.p8" --key-id "$KEY_S" --team-id "$TEAM_A" \
  >"$work/serve.out" 2>"$work/serve.err" &
server_pid=$!
wait_serve_listening "$work/serve.out" "$work/serve.err" "$server_pid"
say "nse serve at $url (keys $KEY_A/$TEAM_A, $KEY_B/$TEAM_B, $KEY_S/$TEAM_A), $BIN"

# --- HAProxy on two free loopback ports -----------------------------------------------------------------------------
free_ports() { python3 -c '
import socket
socks = [socket.socket() for _ in range(2)]
for s in socks: s.bind(("127.0.0.1", 0))
print(" ".join(str(s.getsockname()[1]) for s in socks))'; }
start_haproxy() {
  read -r port_plain port_forwarded < <(free_ports)
  export NSE_HAPROXY_CERT="$work/haproxy.pem" NSE_BACKEND="${url#https://}" NSE_BACKEND_CA="$work/tls-cert.pem" \
    NSE_HAPROXY_LISTEN="127.0.0.1:$port_plain" NSE_HAPROXY_LISTEN_FORWARDED="127.0.0.1:$port_forwarded" \
    NSE_HAPROXY_STATS="$work/haproxy.sock"
  quiet "$HAPROXY" -c -q -f "$HAPROXY_CFG"
  "$HAPROXY" -db -f "$HAPROXY_CFG" >"$work/haproxy.log" 2>&1 &  # -db: foreground, so $! is HAProxy itself
  haproxy_pid=$!
  for _ in $(seq 100); do  # 10 s
    kill -0 "$haproxy_pid" 2>/dev/null || { wait "$haproxy_pid" 2>/dev/null || true; haproxy_pid=""; return 1; }
    # HAProxy binds every listener before it serves its statistics socket (and exits if one fails).
    [ -S "$work/haproxy.sock" ] && python3 -c '
import socket, sys
with socket.socket(socket.AF_UNIX) as s:
    s.settimeout(2); s.connect(sys.argv[1]); s.sendall(b"show info\n")
    sys.exit(0 if b"Pid:" in s.recv(65536) else 1)' "$work/haproxy.sock" 2>/dev/null && return 0
    sleep 0.1
  done
  return 1
}
for attempt in 1 2 3; do  # a free port can be taken between choosing it and HAProxy binding it
  start_haproxy && break
  stop "$haproxy_pid" TERM; haproxy_pid=""
  [ "$attempt" = 3 ] && die "haproxy did not start: $(tail -3 "$work/haproxy.log" | tr '\n' ' ')"
done
haproxy_version=$("$HAPROXY" -v | awk 'NR==1 {print $3}')
say "haproxy $haproxy_version at https://127.0.0.1:$port_plain and https://127.0.0.1:$port_forwarded (pid $haproxy_pid)"

# --- what the driver needs, in one file -----------------------------------------------------------------------------
python3 - "$work" "$url" "$VENV_PYAPNS" "$VENV_KALYKE" "$port_plain" "$port_forwarded" "$haproxy_version" "$plaintext" \
  "$KEY_A" "$TEAM_A" "$KEY_B" "$TEAM_B" "$KEY_S" <<'EOF' >"$work/setup.json"
import json, os, sys
work, url, venv_pyapns, venv_kalyke, plain, forwarded, version, plaintext, key_a, team_a, key_b, team_b, key_s = sys.argv[1:]
def device(name):
    with open(f"{work}/{name}/device.json") as f:
        d = json.load(f)
    return {"token": d["tokens"]["remote"], "topic": d["bundle_id"], "team_id": d["team_id"],
            "uninstalled_at": (d.get("apns") or {}).get("uninstalled_at")}
def key(path, kid, team):
    return {"file": path, "key_id": kid, "team_id": team}
print(json.dumps({
    "work": work, "nse_url": url, "ca": f"{work}/tls-cert.pem",
    "envelope": f"{work}/envelope.txt", "plaintext": os.path.abspath(plaintext),
    "devices": {n: device(n) for n in ("alpha", "beta", "gone")},
    "keys": {"alpha": key(f"{work}/AuthKey_{key_a}.p8", key_a, team_a),
             "beta": key(f"{work}/AuthKey_{key_b}.p8", key_b, team_b),
             "shared": key(f"{work}/AuthKey_{key_s}.p8", key_s, team_a),
             "wrong": key(f"{work}/wrong/AuthKey_{key_a}.p8", key_a, team_a)},
    "pythons": {"pyapns_client": f"{venv_pyapns}/bin/python", "kalyke": f"{venv_kalyke}/bin/python"},
    "haproxy": {"version": version, "plain_url": f"https://127.0.0.1:{plain}",
                "forwarded_url": f"https://127.0.0.1:{forwarded}", "stats_socket": f"{work}/haproxy.sock"},
}, indent=1))
EOF

# --- the runs: each in the background and waited for, so that a signal reaches the trap at once -----------------------
run_driver() {  # seconds, python, args...: the driver's lines go to the terminal and to $work/results.txt
  local limit="$1"; shift
  set +e
  timeout -k 5 "$limit" "$@" > >(tee -a "$work/results.txt") 2>"$work/driver.err" &
  client_pid=$!
  wait "$client_pid"
  local rc=$?
  client_pid=""
  set -e
  [ "$rc" = 124 ] && echo "FAIL $* killed after $limit s" | tee -a "$work/results.txt"
  if [ "$rc" != 0 ] && [ -s "$work/driver.err" ]; then sed 's/^/  driver: /' "$work/driver.err" | tail -8 >&2; fi
  return 0
}
: >"$work/results.txt"
t0=$(date +%s.%N)
run_driver 90 "$VENV_PYAPNS/bin/python" "$DRIVER" cases pyapns_client --setup "$work/setup.json"
run_driver 90 "$VENV_KALYKE/bin/python" "$DRIVER" cases kalyke --setup "$work/setup.json"
t_cases=$(elapsed "$t0")
t0=$(date +%s.%N)
run_driver 150 python3 "$DRIVER" haproxy --setup "$work/setup.json" --count "$PUSHES"
t_haproxy=$(elapsed "$t0")

# --- stop HAProxy, then nse serve with SIGTERM: it finishes what it accepted and exits 0 ------------------------------
stop "$haproxy_pid" TERM; haproxy_pid=""
kill -TERM "$server_pid"
server_rc=""
for _ in $(seq 300); do
  if ! kill -0 "$server_pid" 2>/dev/null; then
    set +e; wait "$server_pid"; server_rc=$?; set -e
    server_pid=""
    break
  fi
  sleep 0.1
done
if [ "$server_rc" = 0 ]; then
  echo "PASS nse serve exited 0 on SIGTERM" | tee -a "$work/results.txt"
else
  echo "FAIL nse serve exit status ${server_rc:-none (still running 30 s after SIGTERM)}, expected 0" \
    | tee -a "$work/results.txt"
fi

passed=$(grep -c '^PASS ' "$work/results.txt" || true)
failed=$(grep -c '^FAIL ' "$work/results.txt" || true)
skipped=$(grep -c '^SKIP ' "$work/results.txt" || true)
# Each driver prints one line per case; fewer lines than cases means one died early.
expected=$((7 + 7 + 5 + 1))
if [ $((passed + failed + skipped)) != "$expected" ]; then
  echo "FAIL $((passed + failed + skipped)) case lines, expected $expected (a driver stopped early)" \
    | tee -a "$work/results.txt"
  failed=$((failed + 1))
fi
if [ "$failed" != 0 ]; then
  echo "interop-apns-clients: nse serve's log ends:" >&2
  tail -n 15 "$work/serve.err" | sed 's/^/  serve: /' >&2
fi
summary="$passed passed, $failed failed, $skipped skipped (pyapns_client $PYAPNS_VERSION, kalyke-apns $KALYKE_VERSION,"
summary+=" haproxy $haproxy_version; cases ${t_cases} s, haproxy ${t_haproxy} s, total $(elapsed "$started") s)"
if [ "$failed" = 0 ]; then say "PASS: $summary"; else say "FAIL: $summary" >&2; fi
[ "$failed" = 0 ]

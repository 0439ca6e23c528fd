#!/usr/bin/env bash
# Interop test: `nse serve`'s and `nse sip-server`'s /metrics read by a real Prometheus client parser
# (prometheus-client from PyPI, `text_string_to_metric_families`) while the full path runs: pushes with `nse push`,
# a sealed MESSAGE with `nse send` held by the SIP server, pushed to nse serve and fetched by the extension. The
# counters must move by exactly that (Tests/interop/metrics_client.py), then both servers exit 0 within 5 s of
# SIGTERM.
#
#   NSE_BIN_DIR=.build/debug bash scripts/interop-metrics.sh
#
# Needs python3 with venv/ensurepip (Debian: python3-venv), and PyPI the first time (the venv, with prometheus-client
# pinned, is kept in $NSE_INTEROP_METRICS_VENV, default .build/interop-metrics-venv, and reused).
# NSE_INTEROP_KEEP=1 keeps the temporary folder.
set -euo pipefail
# shellcheck source=lib/interop-venv.sh
. "$(dirname "$0")/lib/interop-venv.sh"
# Paths given relative to where the script is called from; everything else relative to the repository.
abspath() { case "$1" in /*) printf '%s' "$1" ;; *) printf '%s/%s' "$PWD" "$1" ;; esac; }
[ -n "${NSE_BIN_DIR:-}" ] && NSE_BIN_DIR="$(abspath "$NSE_BIN_DIR")"
[ -n "${NSE_INTEROP_METRICS_VENV:-}" ] && NSE_INTEROP_METRICS_VENV="$(abspath "$NSE_INTEROP_METRICS_VENV")"
cd "$(dirname "${BASH_SOURCE[0]}")/.."

PROMETHEUS_CLIENT_VERSION=0.26.0
BIN="${NSE_BIN_DIR:-.build/debug}"
VENV="${NSE_INTEROP_METRICS_VENV:-.build/interop-metrics-venv}"
started=$(date +%s.%N)

die() { echo "interop-metrics: $*" >&2; exit 1; }
elapsed() { python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.1f}')" "$1" "$(date +%s.%N)"; }

nse="$BIN/nse"
[ -x "$nse" ] || die "no nse binary at $nse (build first, or set NSE_BIN_DIR)"
[ -x "$BIN/nse-extension" ] || die "no nse-extension beside it at $BIN/nse-extension"
command -v python3 >/dev/null || die "python3 not found (Debian: python3)"

# --- the venv with prometheus-client ---------------------------------------------------------------------------
venv_ensure "$VENV" prometheus-client "$PROMETHEUS_CLIENT_VERSION" prometheus_client.parser

# --- the servers -----------------------------------------------------------------------------------------------
work="$(mktemp -d "${TMPDIR:-/tmp}/nse-interop-metrics.XXXXXX")"
serve_pid=""
sip_pid=""
client_pid=""
cleanup() {
  for pid in "$client_pid" "$sip_pid" "$serve_pid"; do
    if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
      kill -KILL "$pid" 2>/dev/null || true
      wait "$pid" 2>/dev/null || true
    fi
  done
  if [ "${NSE_INTEROP_KEEP:-0}" = 1 ]; then echo "interop-metrics: kept $work" >&2; else rm -rf "$work"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# The first line a server printed, once it has one, read as JSON by `expression` (30 s: a debug binary on a busy
# machine); dies if the server exits first.
first_line() {  # out err pid name expression
  local value=""
  for _ in $(seq 300); do
    if [ -s "$1" ]; then
      value=$(python3 -c "import json,sys; d=json.loads(sys.stdin.readline()); print($5)" <"$1" 2>/dev/null) && break
    fi
    kill -0 "$3" 2>/dev/null || die "$4 exited before listening: $(tail -2 "$2" | tr '\n' ' ')"
    sleep 0.1
  done
  [ -n "$value" ] || die "$4 printed no listening line within 30 s: $(head -c 300 "$1")"
  printf '%s' "$value"
}

device="$work/bob"
"$nse" device init "$device" --bundle-id org.example.app --filtering >/dev/null 2>"$work/init.err" \
  || die "nse device init failed: $(tail -1 "$work/init.err")"

"$nse" serve --listen 127.0.0.1:0 --device "$device" >"$work/serve.out" 2>"$work/serve.err" &
serve_pid=$!
serve_url=$(first_line "$work/serve.out" "$work/serve.err" "$serve_pid" "nse serve" 'd["listening"]')
"$nse" sip-server --listen tcp:127.0.0.1:0 --db "$work/sip" --push-url "$serve_url" \
  --metrics-listen 127.0.0.1:0 >"$work/sip.out" 2>"$work/sip.err" &
sip_pid=$!
sip_metrics=$(first_line "$work/sip.out" "$work/sip.err" "$sip_pid" "nse sip-server" 'd["metrics"]')
proxy=$(python3 -c 'import json,sys; print(json.loads(sys.stdin.readline())["listening"][0]["uri"])' <"$work/sip.out")
echo "interop-metrics: nse serve at $serve_url/metrics, nse sip-server at $sip_metrics ($proxy), $BIN"

# --- the client ------------------------------------------------------------------------------------------------
# In the background and waited for, so that a signal to this script is handled at once (the trap), not after it.
set +e
timeout -k 5 180 "$VENV/bin/python" Tests/interop/metrics_client.py --nse "$nse" --serve "$serve_url" \
  --sip-metrics "$sip_metrics" --proxy "$proxy" --device "$device" --work "$work" &
client_pid=$!
wait "$client_pid"
client_rc=$?
client_pid=""
set -e
[ "$client_rc" = 124 ] && echo "interop-metrics: the client was killed after 180 s" >&2

# --- SIGTERM: each server exits 0 within 5 s --------------------------------------------------------------------
failed=0
stop() {  # pid name log; clears the pid once reaped
  local pid="$1" rc="" since
  since=$(date +%s.%N)
  kill -TERM "$pid"
  for _ in $(seq 100); do
    if ! kill -0 "$pid" 2>/dev/null; then
      set +e; wait "$pid"; rc=$?; set -e
      break
    fi
    sleep 0.05
  done
  local took
  took=$(elapsed "$since")
  if [ -z "$rc" ]; then
    failed=1
    echo "interop-metrics: $2 (pid $pid) still running 5 s after SIGTERM; its log ends:" >&2
    tail -n 10 "$3" | sed "s/^/  $2: /" >&2
    return
  fi
  [ "$2" = "nse serve" ] && serve_pid="" || sip_pid=""
  if [ "$rc" != 0 ]; then
    failed=1
    echo "interop-metrics: $2 exit status $rc after SIGTERM, expected 0; its log ends:" >&2
    tail -n 10 "$3" | sed "s/^/  $2: /" >&2
  else
    echo "interop-metrics: $2 exited 0 ${took} s after SIGTERM"
  fi
}
stop "$sip_pid" "nse sip-server" "$work/sip.err"
stop "$serve_pid" "nse serve" "$work/serve.err"

if [ "$client_rc" != 0 ]; then
  failed=1
  echo "interop-metrics: client exit status $client_rc; the servers' logs end:" >&2
  tail -n 10 "$work/serve.err" | sed 's/^/  serve: /' >&2
  tail -n 10 "$work/sip.err" | sed 's/^/  sip-server: /' >&2
fi
if [ "$failed" = 0 ]; then
  echo "interop-metrics: PASS (prometheus-client $PROMETHEUS_CLIENT_VERSION) in $(elapsed "$started") s"
else
  echo "interop-metrics: FAIL in $(elapsed "$started") s" >&2
fi
exit "$failed"

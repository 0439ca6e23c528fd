# Sourced by the interop scripts: waits for `nse serve` (started in the background, its stdout and stderr in files)
# to print its listening line, and sets `url` to it. Needs `die` from the caller.
#   wait_serve_listening OUT ERR PID
wait_serve_listening() {
  local out="$1" err="$2" pid="$3"
  url=""
  for _ in $(seq 300); do  # 30 s: a debug binary on a busy machine
    if [ -s "$out" ]; then
      url=$(python3 -c 'import json,sys; print(json.loads(sys.stdin.readline())["listening"])' <"$out" 2>/dev/null) && break
    fi
    kill -0 "$pid" 2>/dev/null || die "nse serve exited before listening: $(tail -2 "$err" | tr '\n' ' ')"
    sleep 0.1
  done
  [ -n "$url" ] || die "nse serve printed no listening line within 30 s: $(head -c 300 "$out")"
  case "$url" in https://127.0.0.1:*) ;; *) die "nse serve listens on $url, expected https://127.0.0.1:PORT" ;; esac
}

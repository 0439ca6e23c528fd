#!/usr/bin/env bash
# A fleet on one machine, on loopback: a throw-away PostgreSQL cluster, three `nse serve` nodes sharing it (each with
# its own device folder), and HAProxy in front of them (haproxy.cfg). Prints one JSON line when everything is up
# (also written to DIR/fleet.json), then runs until SIGINT or SIGTERM, which stops it all (nodes first, each
# given 10 s; their exit statuses in DIR/node-N.status) and removes nothing: DIR keeps the logs and the devices.
#
#   examples/fleet/run.sh [DIR]     DIR: where the cluster, devices and logs go (default: a new temporary folder)
#
# Environment: NSE (the nse binary; default `nse` on PATH), FLEET_DEVICES (devices in all, split between the nodes;
# default 300), FLEET_PORT (the balancer's port, the nodes on the next three, PostgreSQL on the fourth; default 8443;
# 0 picks free ports), FLEET_LEASE (seconds without a heartbeat before a node is taken over; default 3),
# FLEET_SERVE_ARGS (more `nse serve` arguments for every node, e.g. "--queue 100000"), FLEET_ROUTE (`round`, the
# default: HAProxy hands pushes to the nodes in turn and a node sends on those for another's device; `token`:
# HAProxy sends each push to the node serving its token, from a map of the devices' tokens written at start).
# Needs initdb and pg_ctl (Debian: postgresql), haproxy, python3 (for free ports). As root, PostgreSQL runs as the
# `postgres` user.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
nse="${NSE:-nse}"
devices="${FLEET_DEVICES:-300}"
lease="${FLEET_LEASE:-3}"
dir="${1:-$(mktemp -d /tmp/nse-fleet.XXXXXX)}"
mkdir -p "$dir"
dir="$(cd "$dir" && pwd)"

die() { echo "fleet: $*" >&2; exit 1; }
command -v "$nse" >/dev/null || die "nse not found (set NSE=/path/to/nse)"
pgbin="$(dirname "$(command -v pg_ctl 2>/dev/null || ls -d /usr/lib/postgresql/*/bin/pg_ctl 2>/dev/null | sort -V | tail -1)")"
[ -x "$pgbin/initdb" ] || die "initdb and pg_ctl not found (Debian: apt-get install postgresql)"
haproxy="$(command -v haproxy || echo /usr/sbin/haproxy)"
[ -x "$haproxy" ] || die "haproxy not found (Debian: apt-get install haproxy)"

# --- ports ------------------------------------------------------------------------------------------------------------
port="${FLEET_PORT:-8443}"
if [ "$port" = 0 ]; then
  read -r -a ports < <(python3 -c '
import socket
held = [socket.socket() for _ in range(5)]
for s in held: s.bind(("127.0.0.1", 0))
print(" ".join(str(s.getsockname()[1]) for s in held))')
else
  ports=("$port" $((port + 1)) $((port + 2)) $((port + 3)) $((port + 4)))
fi
balancer_port="${ports[0]}"; pg_port="${ports[4]}"

# --- stopping everything, however the script ends -----------------------------------------------------------------------
node_pids=(); haproxy_pid=""; pg_started=""
as_postgres() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }
stop_all() {
  trap - INT TERM EXIT
  [ -n "$haproxy_pid" ] && kill "$haproxy_pid" 2>/dev/null || true
  for i in "${!node_pids[@]}"; do kill -TERM "${node_pids[$i]}" 2>/dev/null || true; done
  for i in "${!node_pids[@]}"; do
    pid="${node_pids[$i]}"
    for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null || true
    status=0; wait "$pid" 2>/dev/null || status=$?
    echo "$status" >"$dir/node-$((i + 1)).status"
  done
  [ -n "$haproxy_pid" ] && { wait "$haproxy_pid" 2>/dev/null || true; }
  [ -n "$pg_started" ] && as_postgres "$pgbin/pg_ctl" stop -D "$dir/postgres" -m fast >/dev/null 2>&1 || true
}
trap 'stop_all; exit 0' INT TERM
trap 'stop_all' EXIT

# --- PostgreSQL: a throw-away cluster, trust authentication, loopback only -------------------------------------------------
mkdir -p "$dir/postgres"
if [ "$(id -u)" = 0 ]; then
  chown postgres "$dir/postgres"
  chmod a+x "$dir"  # the postgres user reaches its folder through DIR (mktemp makes it 0700)
  runuser -u postgres -- test -x "$dir/postgres" \
    || die "the postgres user cannot reach $dir/postgres: make the folders above DIR searchable (chmod a+x)"
fi
as_postgres "$pgbin/initdb" -D "$dir/postgres" -A trust -U nse >"$dir/initdb.log" 2>&1 || die "initdb failed: $dir/initdb.log"
as_postgres "$pgbin/pg_ctl" start -w -D "$dir/postgres" -l "$dir/postgres/server.log" \
  -o "-c listen_addresses=127.0.0.1 -p $pg_port -k $dir/postgres" >/dev/null || die "PostgreSQL did not start"
pg_started=1
database="postgres://nse@127.0.0.1:$pg_port/postgres"

# --- three nodes, each with its share of the devices -------------------------------------------------------------------------
# The three shares are made at once: making a device mostly waits for the disk's syncs.
init_pids=()
for n in 1 2 3; do
  share=$(( devices / 3 + (n <= devices % 3 ? 1 : 0) ))
  if [ ! -d "$dir/devices-$n" ]; then
    "$nse" device init-many "$dir/devices-$n" --count "$share" >/dev/null &
    init_pids+=("$n:$!")
  fi
done
for entry in ${init_pids[@]+"${init_pids[@]}"}; do
  if ! wait "${entry#*:}"; then
    for other in "${init_pids[@]}"; do kill "${other#*:}" 2>/dev/null || true; done
    die "nse device init-many failed for node-${entry%%:*}"
  fi
done
urls=()
for n in 1 2 3; do
  "$nse" serve --listen "127.0.0.1:${ports[$n]}" --devices "$dir/devices-$n" --database "$database" \
    --node-name "node-$n" --node-lease "$lease" ${FLEET_SERVE_ARGS:-} >"$dir/node-$n.out" 2>"$dir/node-$n.log" &
  node_pids+=($!)
done
for n in 1 2 3; do
  for _ in $(seq 300); do [ -s "$dir/node-$n.out" ] && break; kill -0 "${node_pids[$((n - 1))]}" 2>/dev/null || break; sleep 0.1; done
  [ -s "$dir/node-$n.out" ] || die "node-$n did not start: $(tail -3 "$dir/node-$n.log")"
  urls+=("http://127.0.0.1:${ports[$n]}")
done

# --- HAProxy in front ----------------------------------------------------------------------------------------------------
: >"$dir/tokens.map"
if [ "${FLEET_ROUTE:-round}" = token ]; then
  python3 - "$dir" >"$dir/tokens.map" <<'MAP'
import glob, json, sys
for n in (1, 2, 3):
    for config in glob.glob(f"{sys.argv[1]}/devices-{n}/*/device.json"):
        tokens = json.load(open(config))["tokens"]
        for token in (tokens["remote"], tokens.get("voip")):
            if token:
                print(token.lower(), f"node{n}")
MAP
fi
export NSE_FLEET_TOKENS="$dir/tokens.map"
export NSE_FLEET_LISTEN="127.0.0.1:$balancer_port" NSE_FLEET_STATS="$dir/haproxy.sock" \
  NSE_FLEET_NODE1="127.0.0.1:${ports[1]}" NSE_FLEET_NODE2="127.0.0.1:${ports[2]}" NSE_FLEET_NODE3="127.0.0.1:${ports[3]}"
"$haproxy" -db -f "$here/haproxy.cfg" >"$dir/haproxy.log" 2>&1 &
haproxy_pid=$!
for _ in $(seq 100); do
  (exec 3<>"/dev/tcp/127.0.0.1/$balancer_port") 2>/dev/null && break
  kill -0 "$haproxy_pid" 2>/dev/null || die "haproxy did not start: $(tail -3 "$dir/haproxy.log")"
  sleep 0.1
done

line=$(printf '{"balancer":"http://127.0.0.1:%s","database":"%s","dir":"%s","haproxy_pid":%s,"nodes":[%s]}' \
  "$balancer_port" "$database" "$dir" "$haproxy_pid" \
  "$(for n in 1 2 3; do printf '%s{"name":"node-%s","url":"%s","pid":%s,"devices":"%s/devices-%s"}' \
      "$([ $n = 1 ] || echo ,)" "$n" "${urls[$((n - 1))]}" "${node_pids[$((n - 1))]}" "$dir" "$n"; done)")
echo "$line" >"$dir/fleet.json"
echo "$line"

# Until told to stop (the trap), or HAProxy ends.
wait "$haproxy_pid" || true

#!/usr/bin/env bash
# Runs a command against a fresh mqgate: starts BIN serve on 127.0.0.1:0
# over a new temporary data directory, waits (at most 30 s) for its
# "listening" log line, runs the command with MQGATE_URL=http://ADDR, then
# stops the server by its PID (SIGTERM, SIGKILL after 10 s) and removes the
# directory. Exits with the command's status.
# Usage: clients/with-server.sh BIN COMMAND [ARGS...]  (make sdk-test)
set -euo pipefail
bin=$1; shift
dir=$(mktemp -d)
log="$dir/server.log"
"$bin" serve --addr 127.0.0.1:0 --data "$dir/data" --log-format json --log-level info --access-log=false 2>"$log" &
pid=$!
stop() {
  kill -TERM "$pid" 2>/dev/null || true
  for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  kill -KILL "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  rm -rf "$dir"
}
trap stop EXIT
addr=
for _ in $(seq 300); do # the "listening" line, within 30 s
  addr=$(sed -n 's/.*"addr":"\([^"]*\)".*"message":"listening".*/\1/p' "$log" | head -1)
  [ -n "$addr" ] && break
  kill -0 "$pid" 2>/dev/null || { cat "$log" >&2; echo "mqgate exited before listening" >&2; exit 1; }
  sleep 0.1
done
[ -n "$addr" ] || { cat "$log" >&2; echo "mqgate did not listen within 30 s" >&2; exit 1; }
echo "mqgate (pid $pid) on http://$addr"
MQGATE_URL="http://$addr" "$@"

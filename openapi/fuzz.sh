#!/usr/bin/env bash
# Runs Schemathesis (all checks, every phase, fixed seed; exclusions with
# their reasons in openapi/schemathesis.toml) against the real binary on
# 127.0.0.1 over a fresh data directory. Usage: openapi/fuzz.sh BIN SCHEMATHESIS
# (`make api-fuzz` builds both). Fails on any failure or error.
set -euo pipefail
bin=$1 st=$2
dir=$(mktemp -d)
log="$dir/server.log"
"$bin" serve --addr 127.0.0.1:0 --data "$dir/data" --log-format json --log-level info --access-log=false 2>"$log" &
pid=$!
trap 'kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; rm -rf "$dir"' EXIT
addr=
for _ in $(seq 300); do # the "listening" line, within 30 s
  addr=$(sed -n 's/.*"addr":"\([^"]*\)".*"message":"listening".*/\1/p' "$log" | head -1)
  [ -n "$addr" ] && break
  kill -0 "$pid" 2>/dev/null || { cat "$log" >&2; echo "mqgate exited before listening" >&2; exit 1; }
  sleep 0.1
done
[ -n "$addr" ] || { cat "$log" >&2; echo "mqgate did not listen within 30 s" >&2; exit 1; }
"$st" --config-file openapi/schemathesis.toml run openapi/openapi.json --url "http://$addr" --no-color

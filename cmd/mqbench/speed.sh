#!/usr/bin/env bash
# speed.sh: issue 10's speed figures in one session, medians of RUNS runs,
# each against a baseline measured in the same run where there is one:
#   1. single 1 KiB publish, 64 clients: gateway vs the bare net/http
#      baseline (mqbench compare, alternating which goes first);
#   2. batch-of-100 publish, same comparison;
#   3. receive+ack, 8 consumers, 32 per receive, one ack per receive;
#   4. the same with one ack request per message (--ack-batch 1);
#   5. publish->receive latency at 1,000 msgs/s (open loop), after the
#      disk's own fdatasync latency at that rate (mqbench disk).
# 3-5 run against one gateway on a fresh data dir.
#
#   make build && cmd/mqbench/speed.sh            # about 4 minutes
#   RUNS=5 DURATION=10s cmd/mqbench/speed.sh
#
# Knobs (env): BIN (default bin), RUNS (3), DURATION (5s), WARMUP (1s),
# COUNT (50000, messages per consume run), WORK (data dir; default a temp
# dir, removed unless KEEP=1), GATEWAY_ARGS (extra serve flags).
set -euo pipefail

BIN=${BIN:-bin}
RUNS=${RUNS:-3}
DURATION=${DURATION:-5s}
WARMUP=${WARMUP:-1s}
COUNT=${COUNT:-50000}
WORK=${WORK:-$(mktemp -d /tmp/mqgate-speed.XXXXXX)}
GATEWAY_ARGS=${GATEWAY_ARGS:-}

pid=
cleanup() {
	[ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null || true
	[ "${KEEP:-0}" = 1 ] || rm -rf "$WORK"
}
trap cleanup EXIT

echo "# mqgate $("$BIN/mqgate" version 2>/dev/null || true); $(nproc) CPUs; load $(cut -d' ' -f1-3 /proc/loadavg)"

for batch in 1 100; do
	echo "## publish, 1 KiB, 64 clients, batch $batch: gateway vs bare net/http"
	# shellcheck disable=SC2086
	"$BIN/mqbench" compare --url "" --gateway-bin "$BIN/mqgate" --gateway-args "--access-log=false $GATEWAY_ARGS" \
		--size 1024 --concurrency 64 --batch "$batch" --duration "$DURATION" --warmup "$WARMUP" --runs "$RUNS" |
		grep -E 'msgs/s  |median|gateway/baseline'
done

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
url=http://127.0.0.1:$port
# shellcheck disable=SC2086
"$BIN/mqgate" serve --addr "127.0.0.1:$port" --data "$WORK/data" --access-log=false $GATEWAY_ARGS >"$WORK/gateway.log" 2>&1 &
pid=$!
for _ in $(seq 1 100); do
	curl -fsS "$url/readyz" >/dev/null 2>&1 && break
	sleep 0.1
done

echo "## receive+ack, 8 consumers, 32 per receive, one ack per receive"
"$BIN/mqbench" consume --url "$url" --count "$COUNT" --consumers 8 --max-messages 32 --runs "$RUNS" | grep -E 'acked/s|median'
echo "## receive+ack, 8 consumers, 32 per receive, one ack request per message"
"$BIN/mqbench" consume --url "$url" --count "$COUNT" --consumers 8 --max-messages 32 --ack-batch 1 --runs "$RUNS" | grep -E 'acked/s|median'
echo "## the disk's own fdatasync at 1,000/s, in the data dir (the floor under the latency below)"
"$BIN/mqbench" disk --dir "$WORK" --rate 1000 --duration "$DURATION" --runs "$RUNS" | grep -E 'p99|median'
echo "## publish->receive latency at 1,000 msgs/s"
"$BIN/mqbench" latency --url "$url" --rate 1000 --duration "$DURATION" --runs "$RUNS" | grep -E 'p99|median'

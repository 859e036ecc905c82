#!/usr/bin/env bash
# timeline-ab.sh: issue 13's cost figure — what message timelines (and
# nack reasons) take from publish and consume+ack throughput, same run.
# Starts two gateways from the same binary: A with timelines on (the
# default, --timeline-events 4096) and B with them off (--timeline-events
# 0), then alternates A/B, B/A per round so machine drift favours neither:
#   - publish: mqbench publish, batch BATCH, CONCURRENCY clients, DURATION;
#   - consume: mqbench consume, COUNT messages pre-published, then
#     CONSUMERS receive+ack loops (32 per receive), each run on a fresh
#     topic and group.
# Reports each side's median msgs/s and the ratio on/off (the issue asks
# for on/off >= 0.90). Publishing records no timeline event (PUBLISHED is
# read from the stored message) and nack reasons are only written by
# nacks, so publish should show no difference beyond noise; consume+ack
# records DELIVERED and ACKED for every message.
#
#   go build -o bin/mqbench ./cmd/mqbench && go build -o bin/mqgate ./cmd/mqgate
#   cmd/mqbench/timeline-ab.sh                        # 5 rounds, ~3 minutes
#   ROUNDS=1 DURATION=3s COUNT=5000 cmd/mqbench/timeline-ab.sh   # a quick check
#
# Knobs (env): BIN (default bin), ROUNDS (5), DURATION (10s), WARMUP (2s),
# SIZE (1024), BATCH (1), CONCURRENCY (64), COUNT (20000), CONSUMERS (8),
# WORK (data dirs and logs; default a temp dir, removed unless KEEP=1).
set -euo pipefail

BIN=${BIN:-bin}
ROUNDS=${ROUNDS:-5}
DURATION=${DURATION:-10s}
WARMUP=${WARMUP:-2s}
SIZE=${SIZE:-1024}
BATCH=${BATCH:-1}
CONCURRENCY=${CONCURRENCY:-64}
COUNT=${COUNT:-20000}
CONSUMERS=${CONSUMERS:-8}
WORK=${WORK:-$(mktemp -d /tmp/mqgate-timeline-ab.XXXXXX)}
mkdir -p "$WORK/on" "$WORK/off"

pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	if [[ ${KEEP:-0} != 1 ]]; then rm -rf "$WORK"; else echo "kept $WORK"; fi
}
trap cleanup EXIT

# start NAME ARGS...: starts mqgate on a free port with data in
# $WORK/NAME and sets ADDR from its "listening" log line (read as it is
# written, no polling).
start() {
	local name=$1
	shift
	"$BIN/mqgate" serve --addr 127.0.0.1:0 --data "$WORK/$name" --log-format json --log-level info \
		--access-log=false "$@" 2>"$WORK/$name.log" &
	pids+=($!)
	local fd tpid line
	exec {fd}< <(timeout 60 tail -n +1 -F "$WORK/$name.log" 2>/dev/null)
	tpid=$!
	ADDR=
	while IFS= read -r -u "$fd" line; do
		if [[ $line == *'"listening"'* ]]; then
			ADDR=$(jq -r .addr <<<"$line")
			break
		fi
	done
	kill "$tpid" 2>/dev/null || true
	exec {fd}<&-
	[[ -n $ADDR ]] || { echo "mqgate $name did not start:"; cat "$WORK/$name.log"; exit 1; }
}

start on
ON=$ADDR
start off --timeline-events 0
OFF=$ADDR
echo "timelines on: $ON   off: $OFF   work: $WORK"

pub() {
	"$BIN/mqbench" publish --url "http://$1" --batch "$BATCH" --concurrency "$CONCURRENCY" --size "$SIZE" \
		--duration "$DURATION" --warmup "$WARMUP" --runs 1 --json | jq -r .median.msgsPerSec
}
con() {
	"$BIN/mqbench" consume --url "http://$1" --count "$COUNT" --consumers "$CONSUMERS" --size "$SIZE" \
		--runs 1 --json | jq -r 'if .median.missing > 0 or .median.timedOut then error("consume run incomplete") else .median.ackedPerSec end'
}

declare -A res
for ((r = 1; r <= ROUNDS; r++)); do
	order=(on off)
	((r % 2 == 0)) && order=(off on)
	for side in "${order[@]}"; do
		addr=$ON
		[[ $side == off ]] && addr=$OFF
		p=$(pub "$addr")
		c=$(con "$addr")
		res[$side.pub]+="$p "
		res[$side.con]+="$c "
		printf 'round %d/%d  timelines %-3s  publish %8.0f msgs/s  consume+ack %8.0f msgs/s\n' "$r" "$ROUNDS" "$side" "$p" "$c"
	done
done

median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }
echo
printf '%-12s %14s %14s %8s\n' "" "on (msgs/s)" "off (msgs/s)" "on/off"
for k in pub con; do
	on=$(median <<<"${res[on.$k]}")
	off=$(median <<<"${res[off.$k]}")
	name=publish
	[[ $k == con ]] && name=consume+ack
	awk -v n="$name" -v a="$on" -v b="$off" 'BEGIN {printf "%-12s %14.0f %14.0f %8.3f\n", n, a, b, a / b}'
done
echo "medians of $ROUNDS rounds; publish batch $BATCH x $CONCURRENCY clients for $DURATION, consume $COUNT messages with $CONSUMERS receive+ack loops"

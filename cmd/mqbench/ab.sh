#!/usr/bin/env bash
# ab.sh: two gateway builds on the consume loads, in paired rounds. Each
# round measures A and B back to back (alternating which goes first),
# each on a fresh data dir, with the same mqbench; it prints every
# measurement and, per load, the median of the rounds' B/A ratios — the
# figure that survives a noisy host, since both halves of a round see
# about the same load.
#
#   cmd/mqbench/ab.sh OLD_BIN NEW_BIN          # dirs holding mqgate
#   MODES="ack1 ack32 lat" ROUNDS=6 cmd/mqbench/ab.sh /tmp/old bin
#
# Loads (MODES): pub1 and pub100 (publish, 1 KiB, 64 clients, 5 s, one
# message or a batch of 100 per request; the figure is msgs/s), ack1 (receive+ack, one ack request per message, 16
# consumers, COUNT1 messages), ack32 (8 consumers, 32 per receive, one
# ack per receive, COUNT32 messages), lat (publish->receive at 1,000
# msgs/s for 5 s; its figure is the e2e p99, lower is better).
# Knobs (env): MODES (ack1 ack32), ROUNDS (6), COUNT1 (60000),
# COUNT32 (200000), MQBENCH (default NEW_BIN/mqbench), PORT (18700),
# WORKROOT (/tmp: where the data dirs go; /dev/shm takes the disk out,
# leaving what the builds do with the CPU), TRACE (A, B or AB: that side's
# gateway runs with OpenTelemetry tracing on, exporting to an
# `mqbench otlp-sink` on 127.0.0.1:TRACE_PORT (18799) that discards spans;
# the other side has every OTEL_* variable cleared, so tracing is off).
# TRACE_ENV adds variables to the traced side (e.g.
# "OTEL_TRACES_SAMPLER=parentbased_traceidratio OTEL_TRACES_SAMPLER_ARG=0.1").
# Tracing cost, one build:  TRACE=B MODES="pub1 ack1" ROUNDS=3 cmd/mqbench/ab.sh bin bin
set -euo pipefail

[ $# -eq 2 ] || { echo "usage: $0 A_BIN_DIR B_BIN_DIR" >&2; exit 2; }
A=$1 B=$2
MODES=${MODES:-"ack1 ack32"}
ROUNDS=${ROUNDS:-6}
COUNT1=${COUNT1:-60000}
COUNT32=${COUNT32:-200000}
MQBENCH=${MQBENCH:-$B/mqbench}
PORT=${PORT:-18700}
WORKROOT=${WORKROOT:-/tmp}
TRACE=${TRACE:-}
TRACE_PORT=${TRACE_PORT:-18799}
sinkpid=
url=http://127.0.0.1:$PORT
out=$(mktemp)
pid=
dir=
cleanup() {
	[ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null || true
	[ -n "$dir" ] && rm -rf "$dir"
	[ -n "$sinkpid" ] && kill "$sinkpid" 2>/dev/null && wait "$sinkpid" 2>/dev/null || true
	# the sink's log is "$out.sink": remove it with the result file
	rm -f "$out" "$out.sink"
}
trap cleanup EXIT

# measure LABEL BIN_DIR ROUND: one gateway, every load, one line each:
# "ROUND LOAD LABEL FIGURE".
measure() {
	local label=$1 bin=$2 round=$3 line
	dir=$(mktemp -d "$WORKROOT/mqgate-ab.XXXXXX")
	local otel=()
	# shellcheck disable=SC2206 # TRACE_ENV is a list of NAME=VALUE words
	case $TRACE in *"$label"*) otel=("OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:$TRACE_PORT" ${TRACE_ENV:-}) ;; esac
	env $(env | awk -F= '/^OTEL_/ { printf "-u %s ", $1 }') "${otel[@]}" \
		"$bin/mqgate" serve --addr "127.0.0.1:$PORT" --data "$dir/data" --access-log=false >"$dir/log" 2>&1 &
	pid=$!
	for _ in $(seq 1 100); do
		curl -fsS "$url/readyz" >/dev/null 2>&1 && break
		sleep 0.1
	done
	for m in $MODES; do
		case $m in
		pub1) line=$("$MQBENCH" publish --url "$url" --size 1024 --concurrency 64 --duration 5s --warmup 1s --server-pid "$pid" --json) ;;
		pub100) line=$("$MQBENCH" publish --url "$url" --size 1024 --concurrency 64 --batch 100 --duration 5s --warmup 1s --server-pid "$pid" --json) ;;
		ack1) line=$("$MQBENCH" consume --url "$url" --count "$COUNT1" --consumers 16 --max-messages 32 --ack-batch 1 --server-pid "$pid" --json) ;;
		ack32) line=$("$MQBENCH" consume --url "$url" --count "$COUNT32" --consumers 8 --max-messages 32 --server-pid "$pid" --json) ;;
		lat) line=$("$MQBENCH" latency --url "$url" --rate 1000 --duration 5s --warmup 1s --json) ;;
		*) echo "unknown load $m" >&2; exit 2 ;;
		esac
		case $m in
		lat) fig=$(jq -r '.median.endToEnd.p99Ms' <<<"$line") ;;
		pub*) fig=$(jq -r '.median.msgsPerSec | floor' <<<"$line") ;;
		*) fig=$(jq -r '.median.ackedPerSec | floor' <<<"$line") ;;
		esac
		echo "$round $m $label $fig" | tee -a "$out"
		# The consume and publish loads also give the server's CPU per
		# message (µs), recorded as load "<mode>-cpu"; lower is better.
		case $m in
		ack*)
			fig=$(jq -r '.median.serverCpuPerMsgUs // 0' <<<"$line")
			echo "$round $m-cpu $label $fig" | tee -a "$out"
			;;
		pub*)
			fig=$(jq -r '(.median.serverCpuCores // 0) as $c | (.median.msgsPerSec // 0) as $r | if $r > 0 then $c / $r * 1e6 else 0 end' <<<"$line")
			echo "$round $m-cpu $label $fig" | tee -a "$out"
			;;
		esac
	done
	kill "$pid"
	wait "$pid" 2>/dev/null || true
	pid=
	rm -rf "$dir"
	dir=
}

if [ -n "$TRACE" ]; then
	"$MQBENCH" otlp-sink --addr "127.0.0.1:$TRACE_PORT" >"$out.sink" &
	sinkpid=$!
	echo "tracing on for side(s) $TRACE, OTLP sink on 127.0.0.1:$TRACE_PORT"
fi

for r in $(seq 1 "$ROUNDS"); do
	if ((r % 2)); then
		measure A "$A" "$r"
		measure B "$B" "$r"
	else
		measure B "$B" "$r"
		measure A "$A" "$r"
	fi
done

echo "## medians of the rounds' B/A ratios (lat: e2e p99 and *-cpu: server CPU per message, lower is better)"
cpumodes=
for m in $MODES; do
	case $m in ack* | pub*) cpumodes="$cpumodes $m-cpu" ;; esac
done
for m in $MODES $cpumodes; do
	awk -v m="$m" '$2 == m { v[$1, $3] = $4; r[$1] = 1 }
		END { for (k in r) if (v[k, "A"] > 0) printf "%.3f\n", v[k, "B"] / v[k, "A"] }' "$out" |
		sort -n | awk -v m="$m" '{ x[++n] = $1 }
		END {
			if (n == 0) { print m ": no rounds"; exit }
			med = n % 2 ? x[(n + 1) / 2] : (x[n / 2] + x[n / 2 + 1]) / 2
			printf "%s: median B/A %.2f over %d rounds (", m, med, n
			for (i = 1; i <= n; i++) printf "%s%.2f", (i > 1 ? " " : ""), x[i]
			print ")"
		}'
done

#!/usr/bin/env bash
# pending.sh: issue 5's last figure on the real binary. Publishing into a
# gateway holding 1,000,000 pending delayed messages (A) against a fresh
# one (B), alternating A/B in the same session, with RSS and Go heap of A
# before/after loading and after a restart on the loaded data dir.
#
#   go build -o bin/mqbench ./cmd/mqbench && go build -o bin/mqgate ./cmd/mqgate
#   cmd/mqbench/pending.sh                     # PENDING=1000000 ROUNDS=3
#   PENDING=100000 ROUNDS=1 DURATION=3s cmd/mqbench/pending.sh   # quick look
#
# Knobs (env): BIN (dir of mqgate and mqbench, default bin), PENDING,
# ROUNDS, DURATION, WARMUP, CONCURRENCY, SIZE, WORK (data dirs and logs;
# default a temp dir, removed at the end unless KEEP=1), PPROF_A (pprof
# address of A, e.g. 127.0.0.1:6061), B_BACKLOG=plain (B gets PENDING
# ordinary messages on topic "pending" first: same file size as A, so the
# ratio isolates the pending delayed messages from the size of the file).
set -euo pipefail

BIN=${BIN:-bin}
PENDING=${PENDING:-1000000}
ROUNDS=${ROUNDS:-3}
DURATION=${DURATION:-10s}
WARMUP=${WARMUP:-2s}
CONCURRENCY=${CONCURRENCY:-64}
SIZE=${SIZE:-1024}
WORK=${WORK:-$(mktemp -d /tmp/mqgate-pending.XXXXXX)}
PORT_A=${PORT_A:-18481}
PORT_B=${PORT_B:-18482}
mkdir -p "$WORK/a" "$WORK/b"

pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	[[ ${KEEP:-0} == 1 ]] || rm -rf "$WORK"
}
trap cleanup EXIT

# start NAME PORT DIR [extra flags]: starts mqgate, waits for /readyz
# (curl's --retry-connrefused with its own back-off, no sleep loop here).
start() {
	local name=$1 port=$2 dir=$3
	shift 3
	"$BIN/mqgate" serve --addr "127.0.0.1:$port" --data "$dir" --log-level warn "$@" \
		>>"$WORK/$name.log" 2>&1 &
	local pid=$!
	pids+=("$pid")
	eval "PID_$name=$pid"
	curl -fs --retry 50 --retry-connrefused --retry-delay 0 --retry-max-time 30 \
		-o /dev/null "http://127.0.0.1:$port/readyz"
}

stop() { # stop NAME: SIGTERM and wait for the process
	local pid_var="PID_$1"
	kill "${!pid_var}"
	wait "${!pid_var}" 2>/dev/null || true
}

mem() { # mem LABEL NAME PORT: VmRSS, VmHWM, Go heap in use, data dir size
	local label=$1 pid_var="PID_$2" port=$3
	local heap
	heap=$(curl -fsS "http://127.0.0.1:$port/metrics" | awk '/^go_memstats_heap_inuse_bytes/ {print $2}')
	awk -v label="$label" -v heap="$heap" -v data="$(du -sk "$WORK/$2" | cut -f1)" '
		/^VmRSS/ {rss = $2} /^VmHWM/ {hwm = $2} /^RssAnon/ {anon = $2} /^RssFile/ {file = $2}
		END {printf "%-24s VmRSS %6.1f MiB (anon %6.1f, file %6.1f)  VmHWM %6.1f MiB  heap_inuse %6.1f MiB  data dir %7.1f MiB\n",
			label, rss / 1024, anon / 1024, file / 1024, hwm / 1024, heap / 1048576, data / 1024}' "/proc/${!pid_var}/status"
}

# --- A: load the backlog --------------------------------------------------
start a "$PORT_A" "$WORK/a" ${PPROF_A:+--pprof-addr "$PPROF_A"}
echo "== memory of A (pending=$PENDING)"
mem "A before loading" a "$PORT_A"
# A quarter each: delay levels 17 and 18 (1h, 2h) on SCHEDULE_TOPIC_XXXX,
# timers 3 days and 30 days away in the time index. They target topic
# "pending", so the measured topic "mqbench" is new on both servers.
q=$((PENDING / 4))
load() { # load [PORT] flags...
	local port=$PORT_A
	if [[ $1 != -* ]]; then port=$1; shift; fi
	"$BIN/mqbench" publish --url "http://127.0.0.1:$port" --topic pending --batch 100 \
		--concurrency 16 --size "$SIZE" --count "$q" --warmup 0 --json "$@" |
		jq -r '"  loaded \(.median.messages) msgs at \(.median.msgsPerSec|floor) msgs/s (\(.config))"'
}
load --delay-level 17
load --delay-level 18
load --delay-seconds $((3 * 86400))
load --delay-seconds $((30 * 86400))
mem "A after loading" a "$PORT_A"
stop a
start a "$PORT_A" "$WORK/a" ${PPROF_A:+--pprof-addr "$PPROF_A"}
mem "A after restart" a "$PORT_A"

# --- B: fresh ---------------------------------------------------------------
start b "$PORT_B" "$WORK/b"
if [[ ${B_BACKLOG:-} == plain ]]; then
	echo "== B: $PENDING ordinary messages on topic pending (B_BACKLOG=plain)"
	load "$PORT_B" --count "$PENDING"
fi
mem "B before the benchmark" b "$PORT_B"

# --- alternate A/B ------------------------------------------------------------
bench() { # bench NAME PORT BATCH -> "msgs/s server-CPU-us/msg"
	local pid_var="PID_$1"
	"$BIN/mqbench" publish --url "http://127.0.0.1:$2" --batch "$3" --concurrency "$CONCURRENCY" \
		--size "$SIZE" --duration "$DURATION" --warmup "$WARMUP" --server-pid "${!pid_var}" --json |
		jq -r '.median | "\(.msgsPerSec) \(.serverCpuCores * .elapsedSec / .messages * 1e6)"'
}
# The machine may be shared: throughput swings with others' fsyncs and
# CPU. So each round's A and B run back to back and the report gives the
# median of the per-round ratios beside the ratio of medians, and the
# server's CPU per message, which others' load disturbs far less.
declare -A thr cpu ratio cratio
for r in $(seq 1 "$ROUNDS"); do
	for batch in 1 100; do
		# Alternate which server goes first, so drift favours neither.
		if ((r % 2)); then order="a b"; else order="b a"; fi
		for s in $order; do
			port_var="PORT_${s^^}"
			read -r v c < <(bench "$s" "${!port_var}" "$batch")
			thr[$s,$batch]+="$v " cpu[$s,$batch]+="$c "
			eval "last_$s=\"$v $c\""
			printf 'round %d batch %3d %s: %10.0f msgs/s  server %6.1f CPU-us/msg\n' "$r" "$batch" "${s^^}" "$v" "$c"
		done
		ratio[$batch]+="$(awk -v a="$last_a" -v b="$last_b" 'BEGIN {split(a, x, " "); split(b, y, " "); print y[1] / x[1]}') "
		cratio[$batch]+="$(awk -v a="$last_a" -v b="$last_b" 'BEGIN {split(a, x, " "); split(b, y, " "); print x[2] / y[2]}') "
	done
done

median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{v[NR]=$1} END {print (NR%2) ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2}'; }
echo "== medians of $ROUNDS rounds (A: $PENDING pending delayed, B: ${B_BACKLOG:-none}); slowdown > 1 means A is slower"
for batch in 1 100; do
	printf 'batch %3d  msgs/s A %8.0f B %8.0f  slowdown B/A %.3f (median per round %.3f)  CPU-us/msg A %6.1f B %6.1f  A/B %.3f (median per round %.3f)\n' "$batch" \
		"$(echo "${thr[a,$batch]}" | median)" "$(echo "${thr[b,$batch]}" | median)" \
		"$(awk -v a="$(echo "${thr[a,$batch]}" | median)" -v b="$(echo "${thr[b,$batch]}" | median)" 'BEGIN {print b / a}')" \
		"$(echo "${ratio[$batch]}" | median)" \
		"$(echo "${cpu[a,$batch]}" | median)" "$(echo "${cpu[b,$batch]}" | median)" \
		"$(awk -v a="$(echo "${cpu[a,$batch]}" | median)" -v b="$(echo "${cpu[b,$batch]}" | median)" 'BEGIN {print a / b}')" \
		"$(echo "${cratio[$batch]}" | median)"
done
mem "A after the benchmark" a "$PORT_A"
mem "B after the benchmark" b "$PORT_B"

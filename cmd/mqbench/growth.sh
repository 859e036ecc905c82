#!/usr/bin/env bash
# growth.sh: issue 10's figures for a store laid out for growth, on the
# real binary. Fills server A with GB gigabytes of SIZE-byte messages in
# TOPICS topics, then reports:
#   - the fill rate and the file's figures (size, live bytes, free pages);
#   - start-up time of the filled store (pre-check, self check, freelist
#     rebuild) against an empty one;
#   - publish throughput into the filled store (A) against an empty one
#     (B), alternating A/B per round, batch 1 and 100;
#   - the free rate: every fill topic deleted, timed from each DELETE to
#     the trash loop's "store segments dropped" line (the segment drop
#     retention uses too: whole segments, nothing decoded); RSS after it;
#   - compaction: mqgate compact's time and the file before/after against
#     the live bytes; start-up time after it.
#
#   go build -o bin/mqbench ./cmd/mqbench && go build -o bin/mqgate ./cmd/mqgate
#   GB=1 cmd/mqbench/growth.sh                       # what the note quotes
#   GB=20 ROUNDS=3 DURATION=10s cmd/mqbench/growth.sh  # the full run: ~45 GB free disk, an hour or more
#
# Knobs (env): BIN (default bin), GB (default 1; or MB), TOPICS (default 4),
# SIZE (default 1024), ROUNDS (default 2), DURATION (default 5s), WARMUP
# (default 1s), CONCURRENCY (default 64), COLD (default 1: drop the store
# file's pages from the page cache before the deletions), WORK (data dirs and logs;
# default a temp dir, removed at the end unless KEEP=1).
set -euo pipefail

BIN=${BIN:-bin}
GB=${GB:-1}
MB=${MB:-$((GB * 1024))}
TOPICS=${TOPICS:-4}
SIZE=${SIZE:-1024}
ROUNDS=${ROUNDS:-2}
DURATION=${DURATION:-5s}
WARMUP=${WARMUP:-1s}
CONCURRENCY=${CONCURRENCY:-64}
WORK=${WORK:-$(mktemp -d /tmp/mqgate-growth.XXXXXX)}
PORT_A=${PORT_A:-18491}
PORT_B=${PORT_B:-18492}
mkdir -p "$WORK/a" "$WORK/b"

pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	[[ ${KEEP:-0} == 1 ]] || rm -rf "$WORK"
}
trap cleanup EXIT

now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN {printf "%.2f", b - a}'; }

# waitlog NAME TEXT N: waits until the log holds N lines with TEXT
# (tail -f follows the file; no sleep loop here) and sets AT to the
# matching line's own time stamp, so figures do not depend on how soon
# tail noticed it.
waitlog() {
	local file=$WORK/$1.log n=0 line fd tpid
	touch "$file"
	exec {fd}< <(exec tail -s 0.1 -n +1 -f "$file")
	tpid=$!
	while IFS= read -r -u "$fd" line; do
		if [[ $line == *"$2"* ]] && ((++n >= $3)); then break; fi
	done
	kill "$tpid" 2>/dev/null || true
	exec {fd}<&-
	line_seen=$line
	AT=$(date -d "$(jq -r .time <<<"$line")" +%s.%N)
}
secs() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.2f", b - a}'; }
count() { grep -c -- "$2" "$WORK/$1.log" 2>/dev/null || true; }

# start NAME PORT DIR: starts mqgate, waits for its "listening" line and
# sets STARTUP to the seconds that took (open, checks, freelist rebuild).
start() {
	local name=$1 port=$2 dir=$3 t0 n
	n=$(count "$name" '"message":"listening"')
	t0=$(now)
	"$BIN/mqgate" serve --addr "127.0.0.1:$port" --data "$dir" --log-level info --log-format json \
		>>"$WORK/$name.log" 2>&1 &
	local pid=$!
	pids+=("$pid")
	eval "PID_$name=$pid"
	waitlog "$name" '"message":"listening"' $((n + 1))
	STARTUP=$(secs "$t0" "$AT")
	STARTUP+="s ($(grep '"message":"store opened' "$WORK/$name.log" | tail -1 |
		jq -r '"pre-check \(.precheck|floor) ms, bbolt open and freelist rebuild \(.open|floor) ms, self check \(.check|floor) ms"'))"
}

# rss NAME: the server's resident memory, split into its own (anonymous:
# heap, stacks) and the mapped file's pages it has touched (page cache,
# clean and reclaimable: bbolt reads through its mmap).
rss() {
	local pid_var="PID_$1"
	awk '/^(VmRSS|RssAnon|RssFile):/ {printf "%s %.0f MiB  ", $1, $2 / 1024} END {print ""}' "/proc/${!pid_var}/status" |
		sed 's/^/RSS of '"$1"': /'
}

stop() { # stop NAME: SIGTERM and wait for the process
	local pid_var="PID_$1"
	kill "${!pid_var}"
	wait "${!pid_var}" 2>/dev/null || true
}

metric() { curl -fsS "http://127.0.0.1:$1/metrics" | awk -v m="$2" '$1 == m {printf "%.0f", $2}'; }
disk() { # disk LABEL PORT
	printf '%-28s file %8.1f MiB  live %8.1f MiB  free pages %8d\n' "$1" \
		"$(awk -v v="$(metric "$2" mqgate_store_file_bytes)" 'BEGIN {print v / 1048576}')" \
		"$(awk -v v="$(metric "$2" mqgate_store_live_bytes)" 'BEGIN {print v / 1048576}')" \
		"$(metric "$2" mqgate_store_free_pages)"
}

echo "== machine: $(nproc) cores, $(uname -r); figures are indicative when the machine is shared"
start b "$PORT_B" "$WORK/b"
echo "start-up, empty store: ${STARTUP}"
start a "$PORT_A" "$WORK/a"

# --- fill A -----------------------------------------------------------------
per=$((MB * 1024 * 1024 / SIZE / TOPICS))
echo "== filling A: $TOPICS topics x $per messages of $SIZE bytes"
t0=$(now)
for i in $(seq 0 $((TOPICS - 1))); do
	"$BIN/mqbench" publish --url "http://127.0.0.1:$PORT_A" --topic "fill$i" --batch 100 \
		--concurrency 16 --size "$SIZE" --count "$per" --warmup 0 --json |
		jq -r '"  fill'"$i"': \(.median.messages) msgs at \(.median.msgsPerSec|floor) msgs/s"'
done
echo "filled in $(since "$t0")s"
disk "A filled" "$PORT_A"
rss a
stop a
start a "$PORT_A" "$WORK/a"
echo "start-up, filled store: ${STARTUP}"

# --- publish into A (filled) and B (empty), alternating ------------------
# The machine may be shared: throughput swings with others' load, the
# server's CPU per message much less, so both are printed.
bench() { # bench PORT PID BATCH -> "msgs/s server-CPU-us/msg"
	"$BIN/mqbench" publish --url "http://127.0.0.1:$1" --batch "$3" --concurrency "$CONCURRENCY" \
		--size "$SIZE" --duration "$DURATION" --warmup "$WARMUP" --server-pid "$2" --json |
		jq -r '.median | "\(.msgsPerSec) \(.serverCpuCores * .elapsedSec / .messages * 1e6)"'
}
for r in $(seq 1 "$ROUNDS"); do
	for batch in 1 100; do
		if ((r % 2)); then order="A B"; else order="B A"; fi
		for s in $order; do
			port_var="PORT_$s" pid_var="PID_${s,,}"
			read -r v c < <(bench "${!port_var}" "${!pid_var}" "$batch")
			printf 'round %d batch %3d %s (%s): %10.0f msgs/s  server %6.1f CPU-us/msg\n' "$r" "$batch" "$s" \
				"$([[ $s == A ]] && echo filled || echo empty)" "$v" "$c"
		done
	done
done

# --- free: expire all of the filled data ------------------------------------
# Every fill topic is deleted, one at a time; each DELETE wakes the trash
# loop, which drops the store segments left without a visible message
# (store.DropSegment: bbolt DeleteBucket of the whole segment, nothing
# decoded) and logs "store segments dropped" with their bytes. Retention
# frees the same way (queue min offsets move, then the same segment drop),
# so this is its free rate, measured from each DELETE to the log line of
# its own drop pass.
freed=$((TOPICS * per))
if [[ ${COLD:-1} == 1 ]] && command -v python3 >/dev/null; then
	# Evict the file's pages from the page cache (this file only), so the
	# drop reads from disk as it would on a store larger than memory.
	python3 -c 'import os, sys; fd = os.open(sys.argv[1], os.O_RDONLY); os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)' "$WORK/a/mqgate.db"
	echo "(page cache of the store file dropped: a cold start for the drop)"
fi
echo "== deleting fill0..fill$((TOPICS - 1)) ($freed messages)"
secs=0 bytes=0
for i in $(seq 0 $((TOPICS - 1))); do
	n=$(count a "store segments dropped")
	t0=$(now)
	curl -fsS -X DELETE -o /dev/null "http://127.0.0.1:$PORT_A/v1/topics/fill$i"
	waitlog a "store segments dropped" $((n + 1))
	d=$(secs "$t0" "$AT")
	b=$(jq -r .bytes <<<"$line_seen")
	printf '  fill%d: %s bytes of records in %d segments dropped in %ss\n' "$i" "$b" "$(jq -r .segments <<<"$line_seen")" "$d"
	secs=$(awk -v s="$secs" -v d="$d" 'BEGIN {print s + d}')
	bytes=$(awk -v s="$bytes" -v b="$b" 'BEGIN {print s + b}')
done
echo "freed $(awk -v b="$bytes" 'BEGIN {printf "%.0f MB", b / 1e6}') of records in ${secs}s: $(awk -v b="$bytes" -v s="$secs" 'BEGIN {printf "%.1f MB/s", b / s / 1e6}')"
disk "A after deleting" "$PORT_A"
live=$(metric "$PORT_A" mqgate_store_live_bytes)
rss a
stop a

# --- compact ----------------------------------------------------------------
t0=$(now)
"$BIN/mqgate" compact --data "$WORK/a"
echo "compacted in $(since "$t0")s; file now $(stat -c %s "$WORK/a/mqgate.db") bytes, live before $live bytes"
start a "$PORT_A" "$WORK/a"
echo "start-up, compacted store: ${STARTUP}"
disk "A compacted" "$PORT_A"
stop a

#!/usr/bin/env bash
# growth.sh: issue 10's figures for a store laid out for growth, on the
# real binary. Fills server A with GB gigabytes of SIZE-byte messages in
# TOPICS topics, then reports:
#   - the fill rate and the file's figures (size, live bytes, free pages);
#   - start-up time of the filled store (pre-check, self check, freelist
#     rebuild) against an empty one, after a clean stop and after a
#     kill -9 under load with the file's page cache dropped;
#   - publish throughput into the filled store (A) against an empty one
#     (B), alternating A/B per round, batch 1 and 100;
#   - the free rate (FREE=expire, the default): A restarted with
#     --retention-unit 1ms, so its topics' 72 h retention has run out and
#     the retention cleaner's first pass expires everything: the time is
#     the server's own, from its log lines (queue heads moved, then
#     "store segments dropped": whole segments, nothing decoded); RSS after
#     it. FREE=delete deletes the fill topics instead, timed from each
#     DELETE to the trash loop's drop line (the same segment drop);
#   - compaction: mqgate compact's time and the file before/after against
#     the live bytes; start-up time after it.
#
#   go build -o bin/mqbench ./cmd/mqbench && go build -o bin/mqgate ./cmd/mqgate
#   GB=1 cmd/mqbench/growth.sh                       # what the note quotes
#   GB=20 TOPICS=8 ROUNDS=5 DURATION=10s WARMUP=2s cmd/mqbench/growth.sh  # the full run: ~55 GB free disk, ~17 min
#
# Knobs (env): BIN (default bin), GB (default 1; or MB), TOPICS (default 4),
# SIZE (default 1024), ROUNDS (default 2), DURATION (default 5s), WARMUP
# (default 1s), CONCURRENCY (default 64), COLD (default 1: drop the store
# file's pages from the page cache before freeing), FREE (expire|delete),
# SETTLE (default 1: `sync` before every A/B measurement, A and B alike, so
# neither pays for the other's or the fill's dirty pages; 0 to skip),
# PROFDIR (if set: a CPU profile of the server during each A/B
# measurement, written there), WORK (data dirs and logs; default a temp
# dir, removed at the end unless KEEP=1).
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
FREE=${FREE:-expire}
SETTLE=${SETTLE:-1}
PROFDIR=${PROFDIR:-}
PPROF_A=${PPROF_A:-18493}
PPROF_B=${PPROF_B:-18494}
mkdir -p "$WORK/a" "$WORK/b"
[[ -z $PROFDIR ]] || mkdir -p "$PROFDIR"

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
# (tail -f follows the file, grep passes on only the lines with TEXT; no
# sleep loop here) and sets AT to the matching line's own time stamp, so
# figures do not depend on how soon tail noticed it.
waitlog() {
	local file=$WORK/$1.log n=0 line fd tpid
	touch "$file"
	exec {fd}< <(exec tail -s 0.1 -n +1 -f "$file" | grep --line-buffered -F -- "$2")
	tpid=$!
	while IFS= read -r -u "$fd" line; do
		if ((++n >= $3)); then break; fi
	done
	# The reader's tail and grep end with it (tail at its next write to the
	# closed pipe; the script's cleanup ends any left).
	pkill -P "$tpid" 2>/dev/null || true
	kill "$tpid" 2>/dev/null || true
	exec {fd}<&-
	line_seen=$line
	AT=$(date -d "$(jq -r .time <<<"$line")" +%s.%N)
}
secs() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.2f", b - a}'; }
count() { grep -c -- "$2" "$WORK/$1.log" 2>/dev/null || true; }

# start NAME PORT DIR [FLAG...]: starts mqgate, waits for its "listening"
# line and sets STARTUP to the seconds that took (open, checks, freelist
# rebuild).
start() {
	local name=$1 port=$2 dir=$3 t0 n pprof_var="PPROF_${1^^}"
	shift 3
	n=$(count "$name" '"message":"listening"')
	t0=$(now)
	"$BIN/mqgate" serve --addr "127.0.0.1:$port" --data "$dir" --log-level info --log-format json --access-log=false \
		--pprof-addr "127.0.0.1:${!pprof_var}" "$@" >>"$WORK/$name.log" 2>&1 &
	local pid=$!
	pids+=("$pid")
	eval "PID_$name=$pid"
	waitlog "$name" '"message":"listening"' $((n + 1))
	STARTUP=$(secs "$t0" "$AT")
	STARTUP+="s ($(grep '"message":"store opened' "$WORK/$name.log" | tail -1 |
		jq -r '"pre-check \(.precheck|floor) ms\(if .quickPrecheck then " (meta pages and freelist)" else " (every page)" end), bbolt open \(.open|floor) ms, self check \(.check|floor) ms"'))"
}

# rss NAME: the server's resident memory, split into its own (anonymous:
# heap, stacks) and the mapped file's pages it has touched (page cache,
# clean and reclaimable: bbolt reads through its mmap).
rss() { # rss NAME STAGE
	local pid_var="PID_$1"
	awk '/^(VmRSS|VmHWM|RssAnon|RssFile):/ {printf "%s %.0f MiB  ", $1, $2 / 1024} END {print ""}' "/proc/${!pid_var}/status" |
		sed 's/^/RSS of '"$1"' '"${2:-}"': /'
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
rss a "filled"
rss b "empty"
stop a
start a "$PORT_A" "$WORK/a"
echo "start-up, filled store: ${STARTUP}"
rss a "filled, restarted"

# --- publish into A (filled) and B (empty), alternating ------------------
# The machine may be shared: throughput swings with others' load, the
# server's CPU per message much less, so both are printed, with what each
# measurement cost the server in I/O: major page faults (pages it had to
# read from disk through the map) and bytes read and written per message
# (/proc/PID/io). With SETTLE=1 each measurement, A or B, starts after a
# `sync` (the dirty pages the system holds, the fill's included, written
# out first; Dirty/Writeback before it are printed).
dirty() { awk '/^(Dirty|Writeback):/ {printf "%s %.0f MiB ", $1, $2 / 1024}' /proc/meminfo; }
ioof() { # ioof PID -> "majflt read_bytes write_bytes"
	printf '%s %s %s\n' "$(awk '{print $12}' "/proc/$1/stat")" \
		"$(awk '$1 == "read_bytes:" {print $2}' "/proc/$1/io")" "$(awk '$1 == "write_bytes:" {print $2}' "/proc/$1/io")"
}
bench() { # bench NAME BATCH ROUND -> "msgs/s server-CPU-us/msg messages"
	local port_var="PORT_${1^^}" pid_var="PID_$1" pprof_var="PPROF_${1^^}" ppid=
	if [[ -n $PROFDIR ]]; then
		curl -fsS -o "$PROFDIR/$1-batch$2-round$3.pprof" \
			"http://127.0.0.1:${!pprof_var}/debug/pprof/profile?seconds=${DURATION%s}" &
		ppid=$!
	fi
	"$BIN/mqbench" publish --url "http://127.0.0.1:${!port_var}" --batch "$2" --concurrency "$CONCURRENCY" \
		--size "$SIZE" --duration "$DURATION" --warmup "$WARMUP" --server-pid "${!pid_var}" --json |
		jq -r '.median | "\(.msgsPerSec) \(.serverCpuCores * .elapsedSec / .messages * 1e6) \(.messages)"'
	[[ -z $ppid ]] || wait "$ppid" || true
}
declare -A results last ratios
for r in $(seq 1 "$ROUNDS"); do
	for batch in 1 100; do
		if ((r % 2)); then order="a b"; else order="b a"; fi
		for s in $order; do
			pid_var="PID_$s" settle=
			if [[ $SETTLE == 1 ]]; then
				settle="$(dirty)→ sync"
				t1=$(now)
				sync
				settle+=" $(since "$t1")s"
			fi
			read -r f0 rb0 wb0 < <(ioof "${!pid_var}")
			read -r v c m < <(bench "$s" "$batch" "$r")
			read -r f1 rb1 wb1 < <(ioof "${!pid_var}")
			results[$batch,$s]+="$v "
			last[$s]=$v
			printf 'round %d batch %3d %s (%s): %8.0f msgs/s  server %5.1f CPU-us/msg  majflt %d  read %.0f B/msg  written %.0f B/msg  [%s]\n' \
				"$r" "$batch" "${s^^}" "$([[ $s == a ]] && echo filled || echo empty)" "$v" "$c" $((f1 - f0)) \
				"$(awk -v a="$rb0" -v b="$rb1" -v m="$m" 'BEGIN {print (b - a) / m}')" \
				"$(awk -v a="$wb0" -v b="$wb1" -v m="$m" 'BEGIN {print (b - a) / m}')" "$settle"
		done
		ratios[$batch]+="$(awk -v a="${last[a]}" -v b="${last[b]}" 'BEGIN {print a / b}') "
	done
done
median() { tr ' ' '\n' | grep . | sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
for batch in 1 100; do
	ma=$(median <<<"${results[$batch,a]}") mb=$(median <<<"${results[$batch,b]}")
	# Both: the ratio of the medians, and the median of each round's
	# filled/empty ratio (its two measurements ran back to back, so under
	# the same load from the rest of the machine).
	printf 'batch %3d medians: filled %.0f, empty %.0f msgs/s: %.1f%%; per round %s→ median %.1f%%\n' "$batch" "$ma" "$mb" \
		"$(awk -v a="$ma" -v b="$mb" 'BEGIN {print 100 * a / b}')" \
		"$(for x in ${ratios[$batch]}; do awk -v x="$x" 'BEGIN {printf "%.1f%% ", 100 * x}'; done)" \
		"$(awk -v x="$(median <<<"${ratios[$batch]}")" 'BEGIN {print 100 * x}')"
done
rss a "filled, after the publish rounds"
rss b "empty, after the publish rounds"

# --- crash: kill -9 A under load, then start it -----------------------------
# A single-message publish load runs against A, A is killed (SIGKILL) in
# the middle of it, the store file's page cache is dropped (as a power cut
# or a VM restart leaves it) and A starts again: recovery puts the file
# back to its last checkpoint and redoes the log-ahead's records after it.
# The start-up is quick when that checkpoint wrote the freelist (the
# pre-check reads the meta pages and the freelist, bbolt loads it);
# otherwise every page is read twice (pre-check, then bbolt's walk).
dropcache() { # the store file's pages only
	python3 -c 'import os, sys; fd = os.open(sys.argv[1], os.O_RDONLY); os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)' "$WORK/a/mqgate.db"
}
if command -v python3 >/dev/null; then
	"$BIN/mqbench" publish --url "http://127.0.0.1:$PORT_A" --topic crash --batch 1 --concurrency 16 \
		--size "$SIZE" --duration 60s --warmup 0 >/dev/null 2>&1 &
	load=$!
	sleep 3
	kill -9 "$PID_a"
	wait "$PID_a" 2>/dev/null || true
	kill "$load" 2>/dev/null || true
	wait "$load" 2>/dev/null || true
	dropcache
	start a "$PORT_A" "$WORK/a"
	echo "start-up after kill -9 under load, page cache dropped: ${STARTUP}; $(grep '"message":"log-ahead: redid' "$WORK/a.log" |
		tail -1 | jq -r '"redid \(.groups) group commits since the checkpoint"')"
	rss a "after the crash, restarted"
fi
disk "A before freeing" "$PORT_A"

# --- free: expire all of the filled data ------------------------------------
# FREE=expire: A restarts with --retention-unit 1ms (an "hour" of
# retentionHours lasts 1 ms), so every message, filled at 72 h retention,
# is past it, and the retention cleaner's first pass (at start) expires
# them all: queue min offsets move (a binary search by store time per
# queue), then the segments left without a visible message are dropped
# whole (store.DropSegment: bbolt DeleteBucket, nothing decoded). Its own
# log lines time both steps. --retention-check-interval 1h keeps it to that
# one pass. FREE=delete deletes every fill topic instead, one at a time,
# timed from each DELETE to the trash loop's drop line (the same drop).
if [[ ${COLD:-1} == 1 ]] && command -v python3 >/dev/null; then
	stop a
	# Evict the file's pages from the page cache (this file only), so the
	# drop reads from disk as it would on a store larger than memory.
	dropcache
	echo "(page cache of the store file dropped: a cold start for the drop)"
	[[ $FREE == expire ]] || start a "$PORT_A" "$WORK/a"
elif [[ $FREE == expire ]]; then
	stop a
fi
if [[ $FREE == expire ]]; then
	n_trim=$(count a '"message":"retention moved queue min offsets')
	n_drop=$(count a '"message":"store segments dropped"')
	t0=$(now)
	start a "$PORT_A" "$WORK/a" --retention-unit 1ms --retention-check-interval 1h
	echo "== expiring: A restarted with --retention-unit 1ms (start-up ${STARTUP})"
	waitlog a '"message":"retention moved queue min offsets' $((n_trim + 1))
	trim_line=$line_seen trim_at=$AT
	waitlog a '"message":"store segments dropped"' $((n_drop + 1))
	drop_line=$line_seen
	trim_took=$(jq -r '.took / 1000' <<<"$trim_line")
	bytes=$(jq -r .bytes <<<"$drop_line")
	# From the pass's start (the trim line's time less its took) to the drop line.
	secs=$(awk -v a="$trim_at" -v t="$trim_took" -v b="$AT" 'BEGIN {printf "%.2f", b - (a - t)}')
	printf '  queue heads moved past %s messages in %s transactions, %.2fs\n' "$(jq -r .messages <<<"$trim_line")" \
		"$(jq -r .transactions <<<"$trim_line")" "$trim_took"
	printf '  %s segments dropped: %s messages, %s bytes of records, in %.2fs (%.1f MB/s, the server'"'"'s figure)\n' \
		"$(jq -r .segments <<<"$drop_line")" "$(jq -r .messages <<<"$drop_line")" "$bytes" \
		"$(jq -r '.took / 1000' <<<"$drop_line")" "$(jq -r .MBps <<<"$drop_line")"
	echo "expired $(awk -v b="$bytes" 'BEGIN {printf "%.0f MB", b / 1e6}') of records in ${secs}s, pass start to last drop: $(awk -v b="$bytes" -v s="$secs" 'BEGIN {printf "%.1f MB/s", b / s / 1e6}')"
else
	freed=$((TOPICS * per))
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
fi
disk "A after freeing" "$PORT_A"
rss a "after freeing"
# Expiry leaves (almost) nothing live, so that compaction has live data to
# keep, REFILL_MB (default a tenth of the fill) of new messages go in first,
# into the freed pages (the pass above was the only one: they stay).
refill=${REFILL_MB:-$((MB / 10))}
if ((refill > 0)); then
	t0=$(now)
	"$BIN/mqbench" publish --url "http://127.0.0.1:$PORT_A" --topic refill --batch 100 \
		--concurrency 16 --size "$SIZE" --count $((refill * 1024 * 1024 / SIZE)) --warmup 0 --json |
		jq -r '"refill into the freed pages: \(.median.messages) msgs at \(.median.msgsPerSec|floor) msgs/s"'
	disk "A refilled" "$PORT_A"
	rss a "refilled"
fi
live=$(metric "$PORT_A" mqgate_store_live_bytes)
stop a

# --- compact ----------------------------------------------------------------
before=$(stat -c %s "$WORK/a/mqgate.db")
t0=$(now)
"$BIN/mqgate" compact --data "$WORK/a"
echo "compacted in $(since "$t0")s: file $before → $(stat -c %s "$WORK/a/mqgate.db") bytes, live before $live bytes"
start a "$PORT_A" "$WORK/a"
echo "start-up, compacted store: ${STARTUP}"
disk "A compacted" "$PORT_A"
rss a "compacted, restarted"
stop a

#!/usr/bin/env bash
# Issue 22's figures in one session: ../shared/peers (its own harness,
# read-only) runs RabbitMQ quorum, Redis appendfsync always and NATS
# JetStream sync always, RUNS times each, then `mqbench streams --runs RUNS
# --peers` runs the stream and REST cases on a fresh gateway and prints the
# issue's ratios to those peers' medians. The peers' servers must be
# installed as their README says (apt redis-server rabbitmq-server,
# nats-server in /tmp/peers/bin); each is started and stopped by its PID.
#
# Env: PEERS (default <repo>/../shared/peers), RUNS (3), OUT (/tmp/mqbench-streams:
# binaries, peers.jsonl, streams.txt), VARIANTS ("rabbitmq-quorum redis-always
# nats-always"), N (messages per peer publish phase, 30000). Extra arguments go
# to mqbench streams, e.g. --json.
#   cmd/mqbench/streams-peers.sh                                   # about 10 minutes on 2 cores
#   VARIANTS=redis-always RUNS=1 N=2000 cmd/mqbench/streams-peers.sh --count 2000 --latency-duration 2s   # a quick look
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
PEERS=${PEERS:-$repo/../shared/peers}
if [ ! -d "$PEERS" ]; then
  # In a git worktree the repo's neighbours are the main checkout's.
  common=$(git -C "$repo" rev-parse --path-format=absolute --git-common-dir 2>/dev/null || true)
  [ -n "$common" ] && PEERS=$(dirname "$common")/../shared/peers
fi
[ -d "$PEERS" ] || { echo "streams-peers.sh: no peers harness at $PEERS (set PEERS)" >&2; exit 2; }
RUNS=${RUNS:-3}
OUT=${OUT:-/tmp/mqbench-streams}
VARIANTS=${VARIANTS:-"rabbitmq-quorum redis-always nats-always"}
mkdir -p "$OUT/bin"
(cd "$repo" && go build -o "$OUT/bin/mqgate" ./cmd/mqgate && go build -o "$OUT/bin/mqbench" ./cmd/mqbench)
: > "$OUT/peers.jsonl"
for v in $VARIANTS; do
  # run-peer.sh appends one line per run to $RESULTS/peers.jsonl
  RUNS=$RUNS RESULTS=$OUT N=${N:-30000} bash "$PEERS/scripts/run-peer.sh" "$v"
done
"$OUT/bin/mqbench" streams --gateway-bin "$OUT/bin/mqgate" --gateway-args "--log-level warn" \
  --runs "$RUNS" --peers "$OUT/peers.jsonl" "$@" | tee "$OUT/streams.txt"

#!/usr/bin/env bash
# Issue 3's list and watch benchmarks (keelson-watchbench), release build:
#  - LIST of 10,000 ~1 KiB ConfigMaps at once and in pages of 500 (latency,
#    bytes, peak server RSS growth), embedded and distributed;
#  - watch fan-out: 1,000 watchers on one collection while 500 writes/s land
#    (delivered events/s, p50/p99 delivery latency, RSS, memory per idle
#    watcher), embedded and distributed with two watch replicas;
#  - watch-cache memory per object relative to its JSON size (a keelson-watch
#    replica filling from the store's change stream).
# Usage: bash bench/watch.sh [fan-out duration]   (default 20s)
set -euo pipefail
cd "$(dirname "$0")/.."
DUR=${1:-20s}
cargo build --release --bins -q
source bench/lib.sh
WB=$BIN/keelson-watchbench

echo "== embedded"
start_embedded "$WORK/emb"
"$WB" --data-dir "$WORK/emb" --pid "$EMBEDDED_PID" --namespace list list --objects 10000 --page 500
"$WB" --data-dir "$WORK/emb" --pid "$EMBEDDED_PID" --namespace fanout fanout --watchers 1000 --rate 500 --duration "$DUR"
kill "$EMBEDDED_PID"

echo "== distributed, one watch replica: cache memory, then LIST (RSS of the watch replica)"
start_distributed "$WORK/dist1" 1
"$WB" --data-dir "$WORK/dist1" --pid "${WATCH_PIDS[0]}" --namespace cache cache-memory --objects 10000
"$WB" --data-dir "$WORK/dist1" --pid "${WATCH_PIDS[0]}" --namespace list list --objects 10000 --page 500
echo "gateway RSS: $(ps -o rss= -p "$GATEWAY_PID") KiB"
for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
PIDS=()

echo "== distributed, two watch replicas: fan-out (RSS of the gateway)"
start_distributed "$WORK/dist2" 2
"$WB" --data-dir "$WORK/dist2" --pid "$GATEWAY_PID" --namespace fanout fanout --watchers 1000 --rate 500 --duration "$DUR"
for p in "${WATCH_PIDS[@]}"; do echo "watch replica $p RSS: $(ps -o rss= -p "$p") KiB"; done

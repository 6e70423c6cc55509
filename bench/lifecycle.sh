#!/usr/bin/env bash
# Issue 14's lifecycle benchmarks (keelson-lifecycle), release build,
# embedded: namespace deletion time against the number of objects inside
# (10, 100, 1,000, 10,000 ConfigMaps, then the same mixed), and garbage
# collection of 1,000 ConfigMaps owned by a ReplicaSet deleted with
# propagationPolicy Background and Foreground.
# Usage: bash bench/lifecycle.sh
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release -q -p keelson -p keelson-bench
source bench/lib.sh
LC=$BIN/keelson-lifecycle

echo "== embedded"
start_embedded "$WORK/emb"
"$LC" --data-dir "$WORK/emb" namespace --objects 10,100,1000,10000
"$LC" --data-dir "$WORK/emb" namespace --objects 10,100,1000,10000 --mixed
"$LC" --data-dir "$WORK/emb" gc --dependents 1000
echo "embedded server RSS: $(ps -o rss= -p "$EMBEDDED_PID") KiB"

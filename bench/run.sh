#!/usr/bin/env bash
# Measure create / get / list of ConfigMaps over HTTPS (keep-alive) at 1 and
# 64 concurrent clients, in embedded and distributed mode. Release build.
# Usage: bash bench/run.sh [duration]   (default 10s per run)
set -euo pipefail
cd "$(dirname "$0")/.."
DUR=${1:-10s}
cargo build --release --bins -q
source bench/lib.sh

run_suite() { # mode data-dir
    for op in create get list; do
        for c in 1 64; do
            printf '%-12s ' "$1"
            "$BIN/keelson-loadgen" --data-dir "$2" --op "$op" --clients "$c" --duration "$DUR" --namespace "bench-$op-$c"
        done
    done
}

make_namespaces() { # data-dir
    for op in create get list; do for c in 1 64; do
        KUBECONFIG="$1/kubeconfig" kubectl create namespace "bench-$op-$c" >/dev/null
    done; done
}

echo "== embedded"
start_embedded "$WORK/emb"
make_namespaces "$WORK/emb"
run_suite embedded "$WORK/emb"
echo "embedded server RSS: $(ps -o rss= -p "$EMBEDDED_PID") KiB"
kill "$EMBEDDED_PID"

echo "== distributed"
start_distributed "$WORK/dist"
make_namespaces "$WORK/dist"
run_suite distributed "$WORK/dist"

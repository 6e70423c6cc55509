#!/usr/bin/env bash
# Measure create / get / list of ConfigMaps over HTTPS (keep-alive) at 1 and
# 64 concurrent clients, in embedded and distributed mode. Release build.
# Usage: bash bench/run.sh [duration]   (default 10s per run)
set -euo pipefail
cd "$(dirname "$0")/.."
DUR=${1:-10s}
cargo build --release --bins -q
BIN=target/release
WORK=$(mktemp -d)
PIDS=()
cleanup() { for p in "${PIDS[@]:-}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$WORK"; }
trap cleanup EXIT

wait_line() { # file prefix
    for _ in $(seq 1 300); do
        if grep -q "^$2" "$1" 2>/dev/null; then grep -m1 "^$2" "$1" | sed "s/^$2//"; return 0; fi
        sleep 0.1
    done
    echo "timed out waiting for '$2' in $1" >&2; return 1
}

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
"$BIN/keelson" --data-dir "$WORK/emb" --secure-port 0 >"$WORK/emb.out" 2>"$WORK/emb.err" &
PIDS+=($!)
wait_line "$WORK/emb.out" "serving on " >/dev/null
make_namespaces "$WORK/emb"
run_suite embedded "$WORK/emb"
echo "embedded server RSS: $(ps -o rss= -p "${PIDS[0]}") KiB"
kill "${PIDS[0]}"

echo "== distributed"
mkdir -p "$WORK/dist"
"$BIN/keelson-store" --data-dir "$WORK/dist/store" --listen 127.0.0.1:0 >"$WORK/store.out" 2>"$WORK/store.err" &
PIDS+=($!)
STORE=$(wait_line "$WORK/store.out" "listening on ")
"$BIN/keelson-admission" --listen 127.0.0.1:0 --store-endpoint "http://$STORE" >"$WORK/adm.out" 2>"$WORK/adm.err" &
PIDS+=($!)
ADM=$(wait_line "$WORK/adm.out" "listening on ")
"$BIN/keelson-merge" --listen 127.0.0.1:0 >"$WORK/merge.out" 2>"$WORK/merge.err" &
PIDS+=($!)
MERGE=$(wait_line "$WORK/merge.out" "listening on ")
"$BIN/keelson-gateway" --data-dir "$WORK/dist" --secure-port 0 --store-endpoint "http://$STORE" \
    --admission-endpoint "http://$ADM" --merge-endpoint "http://$MERGE" >"$WORK/gw.out" 2>"$WORK/gw.err" &
PIDS+=($!)
wait_line "$WORK/gw.out" "serving on " >/dev/null
make_namespaces "$WORK/dist"
run_suite distributed "$WORK/dist"

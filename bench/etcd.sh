#!/usr/bin/env bash
# Issue 12's etcd benchmark in one run, release build, embedded `keelson`:
#  - etcd's own write rate at 1 and 64 concurrent clients (the anchor: plain
#    puts, Keelson's create transaction and kube-apiserver's) from the
#    put_rate example;
#  - create / get / list of ConfigMaps (keelson-loadgen) at 1 and 64 clients
#    on etcd with Keelson's JSON values, on etcd with kube's values
#    (--etcd-layout=kube) and on sled;
#  - watch fan-out (keelson-watchbench: 500 watchers, 200 writes/s) on etcd
#    and on sled;
# then one table, and the floor: Keelson's create rate on etcd at 64 clients
# against etcd's own put rate at 64.
# etcd: the `etcd` on PATH (Debian 12's 3.4.23), one member on loopback,
# --experimental-watch-progress-notify-interval=100ms.
# Usage: bash bench/etcd.sh [duration]   (default 5s per row)
set -euo pipefail
cd "$(dirname "$0")/.."
DUR=${1:-5s}
SECS=${DUR%s}
cargo build --release -q -p keelson --bin keelson -p keelson-bench
cargo build --release -q -p keelson-kv-etcd --example put_rate
source bench/lib.sh
OUT=$WORK/results
mkdir -p "$OUT"

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# start_etcd NAME: a fresh one-member etcd; sets ETCD_URL.
start_etcd() {
    local c p
    c=$(free_port); p=$(free_port)
    ETCD_URL=http://127.0.0.1:$c
    etcd --name "$1" --data-dir "$WORK/etcd-$1" --listen-client-urls "$ETCD_URL" \
        --advertise-client-urls "$ETCD_URL" --listen-peer-urls "http://127.0.0.1:$p" \
        --initial-advertise-peer-urls "http://127.0.0.1:$p" \
        --initial-cluster "$1=http://127.0.0.1:$p" \
        --experimental-watch-progress-notify-interval=100ms --log-level warn \
        >"$WORK/etcd-$1.log" 2>&1 &
    ETCD_PID=$!
    PIDS+=("$ETCD_PID")
    for _ in $(seq 1 100); do
        curl -fs "$ETCD_URL/health" 2>/dev/null | grep -q '"health":"true"' && return 0
        sleep 0.1
    done
    echo "etcd did not start" >&2; return 1
}

# suite LABEL DATA-DIR PID: create/get/list x {1, 64} clients, then fan-out.
suite() {
    for op in create get list; do for c in 1 64; do
        KUBECONFIG="$2/kubeconfig" kubectl create namespace "bench-$op-$c" >/dev/null
    done; done
    for op in create get list; do for c in 1 64; do
        "$BIN/keelson-loadgen" --data-dir "$2" --op "$op" --clients "$c" --duration "$DUR" \
            --namespace "bench-$op-$c" | tee "$OUT/$1-$op-$c"
    done; done
    "$BIN/keelson-watchbench" --data-dir "$2" --pid "$3" --namespace fanout \
        fanout --watchers 500 --rate 200 --duration "$((SECS * 2))s" | tee "$OUT/$1-fanout"
}

echo "== etcd's own write rate"
start_etcd anchor
for c in 1 64; do
    "$BIN/examples/put_rate" "$ETCD_URL" "$c" "$SECS" 400 | tee "$OUT/anchor-put-$c"
    "$BIN/examples/put_rate" "$ETCD_URL" "$c" "$SECS" 400 create | tee "$OUT/anchor-create-$c"
    "$BIN/examples/put_rate" "$ETCD_URL" "$c" "$SECS" 400 kube | tee "$OUT/anchor-kube-$c"
done
kill "$ETCD_PID"; wait "$ETCD_PID" 2>/dev/null || true

for layout in keelson kube; do
    echo "== keelson on etcd, --etcd-layout=$layout"
    start_etcd "$layout"
    "$BIN/keelson" --data-dir "$WORK/emb-$layout" --secure-port 0 --storage-backend etcd3 \
        --etcd-servers "$ETCD_URL" --etcd-layout "$layout" \
        >"$WORK/emb-$layout.out" 2>"$WORK/emb-$layout.err" &
    EMBEDDED_PID=$!; PIDS+=("$EMBEDDED_PID")
    wait_line "$WORK/emb-$layout.out" "serving on " >/dev/null
    suite "etcd-$layout" "$WORK/emb-$layout" "$EMBEDDED_PID"
    kill "$EMBEDDED_PID" "$ETCD_PID"; wait "$EMBEDDED_PID" "$ETCD_PID" 2>/dev/null || true
done

echo "== keelson on sled"
start_embedded "$WORK/emb-sled"
suite sled "$WORK/emb-sled" "$EMBEDDED_PID"
kill "$EMBEDDED_PID"

field() { grep -o "$2=[^ ]*" "$OUT/$1" 2>/dev/null | head -1 | cut -d= -f2; }
cell() { # file: "N/s (p50 X)"
    [ -f "$OUT/$1" ] || { echo "-"; return; }
    echo "$(field "$1" throughput) (p50 $(field "$1" p50), p99 $(field "$1" p99))"
}
echo
echo "| op | clients | etcd (keelson JSON) | etcd (--etcd-layout=kube) | sled |"
echo "|---|---:|---:|---:|---:|"
for op in create get list; do for c in 1 64; do
    echo "| $op | $c | $(cell "etcd-keelson-$op-$c") | $(cell "etcd-kube-$op-$c") | $(cell "sled-$op-$c") |"
done; done
for c in 1 64; do
    echo "| etcd put (anchor) | $c | $(cell "anchor-put-$c") | | |"
    echo "| etcd create txn, Keelson's (anchor) | $c | $(cell "anchor-create-$c") | | |"
    echo "| etcd create txn, kube-apiserver's (anchor) | $c | $(cell "anchor-kube-$c") | | |"
done
echo
for l in etcd-keelson etcd-kube sled; do echo "fan-out $l: $(tail -n +1 "$OUT/$l-fanout" | tr '\n' ' ')"; done
put=$(field anchor-put-64 throughput | tr -d '/s')
for l in etcd-keelson etcd-kube; do
    create=$(field "$l-create-64" throughput | tr -d '/s')
    echo "floor ($l): create@64 ${create}/s vs etcd put@64 ${put}/s = $(python3 -c "print(f'{100*$create/$put:.0f}%')")  (floor 60%)"
done

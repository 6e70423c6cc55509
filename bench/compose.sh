#!/usr/bin/env bash
# Issue 13's compose benchmark: the fleet of docker-compose.yml (image
# keelson:dev, `make image`), with 1 and then 3 watch replicas:
#  - watch fan-out (keelson-watchbench): 1,000 watchers × 500 writes/s
#    through the published port: delivered events/s, p50/p99 delivery, and
#    every container's CPU and memory from `docker stats --no-stream`
#    (sampled every 5 s during the run: mean CPU, peak memory);
#  - create / get / list of ConfigMaps (keelson-loadgen, as bench/run.sh)
#    at 1 and 64 clients through the compose gateway.
# Builds nothing: needs the image and the release load generators
# (`cargo build --release -p keelson-bench`; CARGO_TARGET_DIR is honoured).
# Usage: bash bench/compose.sh [fan-out duration] [load duration] [replica counts]
#        (defaults: 20s 10s "1 3"); BENCH_DIRECT=1 sends to the gateway
#        container's address instead of the published port on loopback
#        (which Docker's userland proxy copies through).
set -euo pipefail
cd "$(dirname "$0")/.."
DUR=${1:-20s}
LOAD=${2:-10s}
SCALES=${3:-1 3}
BIN=${CARGO_TARGET_DIR:-target}/release
IMAGE=${KEELSON_IMAGE:-keelson:dev}
for b in keelson-watchbench keelson-loadgen; do
    [ -x "$BIN/$b" ] || { echo "$BIN/$b missing: cargo build --release -p keelson-bench" >&2; exit 1; }
done
docker image inspect "$IMAGE" >/dev/null 2>&1 || { echo "image $IMAGE missing: make image" >&2; exit 1; }

PROJECT=keelson-bench-$$
DATA=$(mktemp -d)
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
compose() {
    KEELSON_DATA=$DATA KEELSON_PORT=$PORT KEELSON_UID=$(id -u) KEELSON_GID=$(id -g) KEELSON_IMAGE=$IMAGE \
        docker-compose -f docker-compose.yml -p "$PROJECT" "$@"
}
cleanup() { compose down -v >/dev/null 2>&1 || true; rm -rf "$DATA"; }
trap cleanup EXIT

# stats FILE: sample every container of the project every 5 s until killed.
stats() {
    while true; do
        docker stats --no-stream --format '{{.Name}} {{.CPUPerc}} {{.MemUsage}}' \
            $(docker ps -q --filter "label=com.docker.compose.project=$PROJECT") >>"$1" 2>/dev/null || true
        sleep 5
    done
}

# summary FILE: per container, mean CPU % and peak memory over the samples.
summary() {
    awk '{ cpu=$2; sub("%","",cpu); mem=$3; v=mem+0;
           if (mem ~ /GiB/) v*=1024; else if (mem ~ /KiB/) v/=1024; else if (mem ~ /B$/ && mem !~ /iB/) v/=1048576;
           n[$1]++; c[$1]+=cpu; if (v>m[$1]) m[$1]=v }
         END { for (k in n) printf "  %-40s CPU %6.1f %% (mean of %d samples)  memory peak %7.1f MiB\n", k, c[k]/n[k], n[k], m[k] }' "$1" | sort
}

for n in $SCALES; do
    echo "== compose, $n watch replica(s)"
    compose up -d --scale "watch=$n" >/dev/null 2>&1
    for _ in $(seq 1 600); do
        [ -f "$DATA/kubeconfig" ] && kubectl --kubeconfig "$DATA/kubeconfig" get ns default >/dev/null 2>&1 && break
        sleep 0.2
    done
    kubectl --kubeconfig "$DATA/kubeconfig" get ns default >/dev/null
    if [ "${BENCH_DIRECT:-0}" = 1 ]; then
        # Past Docker's userland proxy: the gateway container's own address
        # (bench/src/connect.rs), as a client on another machine reaches it.
        ip=$(docker inspect -f '{{range .NetworkSettings.Networks}}{{.IPAddress}}{{end}}' \
            "$(compose ps -q gateway)")
        export KEELSON_BENCH_CONNECT=$ip:6443
        echo "connecting to the gateway container at $KEELSON_BENCH_CONNECT"
    fi
    samples=$(mktemp)
    stats "$samples" &
    STATS=$!
    "$BIN/keelson-watchbench" --data-dir "$DATA" --namespace "fanout-$n" fanout --watchers 1000 --rate 500 --duration "$DUR"
    kill "$STATS"; wait "$STATS" 2>/dev/null || true
    echo "docker stats during the fan-out:"
    summary "$samples"
    rm -f "$samples"
    for op in create get list; do for c in 1 64; do
        kubectl --kubeconfig "$DATA/kubeconfig" create namespace "bench-$op-$c-$n" >/dev/null
        printf '%-12s ' "compose/$n"
        "$BIN/keelson-loadgen" --data-dir "$DATA" --op "$op" --clients "$c" --duration "$LOAD" --namespace "bench-$op-$c-$n"
    done; done
    compose down -v >/dev/null 2>&1
    rm -rf "${DATA:?}"/*
done

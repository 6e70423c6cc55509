#!/usr/bin/env bash
# Apply against update, end to end over HTTPS: PUT vs Server-Side Apply of a
# Deployment with 1 and 200 containers (a changed image every request), one
# client, embedded and distributed; then a steady `kubectl apply` loop
# (client-side and server-side). Release build.
# Usage: bash bench/apply.sh [duration] [kubectl-iterations]
set -euo pipefail
cd "$(dirname "$0")/.."
DUR=${1:-10s}
N=${2:-30}
cargo build --release --bins -q
source bench/lib.sh

run_suite() { # mode data-dir
    for containers in 1 200; do
        for op in update apply; do
            printf '%-12s containers=%-4s ' "$1" "$containers"
            "$BIN/keelson-loadgen" --data-dir "$2" --op "$op" --clients 1 \
                --containers "$containers" --duration "$DUR" --namespace default
        done
    done
}

manifest() { # image
    cat <<YAML
apiVersion: apps/v1
kind: Deployment
metadata: {name: loop, labels: {app: loop}}
spec:
  replicas: 2
  selector: {matchLabels: {app: loop}}
  template:
    metadata: {labels: {app: loop}}
    spec:
      containers:
      - {name: app, image: "$1", ports: [{containerPort: 80}]}
YAML
}

kubectl_loop() { # data-dir extra-flags...
    local dir=$1; shift
    local start end
    start=$(date +%s.%N)
    for i in $(seq 1 "$N"); do
        manifest "registry.example/app:v$i" | KUBECONFIG="$dir/kubeconfig" kubectl apply "$@" -f - >/dev/null
    done
    end=$(date +%s.%N)
    KUBECONFIG="$dir/kubeconfig" kubectl delete deploy loop >/dev/null
    awk -v n="$N" -v s="$start" -v e="$end" -v f="$*" \
        'BEGIN { printf "kubectl apply %-16s %d applies in %.1fs: %.1f/s (%.0f ms each, kubectl start-up included)\n", f, n, e-s, n/(e-s), 1000*(e-s)/n }'
}

echo "== embedded"
start_embedded "$WORK/emb"
run_suite embedded "$WORK/emb"
kubectl_loop "$WORK/emb"
kubectl_loop "$WORK/emb" --server-side
kill "$EMBEDDED_PID"

echo "== distributed"
start_distributed "$WORK/dist"
run_suite distributed "$WORK/dist"
kubectl_loop "$WORK/dist"
kubectl_loop "$WORK/dist" --server-side

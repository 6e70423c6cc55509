#!/usr/bin/env bash
# Create throughput of a custom resource against a ConfigMap of the same
# size: POSTs of a Widget (a CRD with a structural schema of four fields and
# two CEL rules) and of a ConfigMap whose JSON body has the same byte
# length, at 1 and 64 concurrent clients, embedded. Release build.
# Usage: bash bench/custom.sh [duration]   (default 10s per run)
set -euo pipefail
cd "$(dirname "$0")/.."
DUR=${1:-10s}
cargo build --release -q -p keelson --bin keelson -p keelson-bench --bin keelson-loadgen
source bench/lib.sh

CRD='apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.bench.keelson.dev}
spec:
  group: bench.keelson.dev
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget, listKind: WidgetList}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            required: [image, replicas]
            x-kubernetes-validations:
            - {rule: "self.replicas <= 100", message: "at most 100 replicas"}
            - {rule: "self.image.startsWith(\"registry.\")", message: "image from a registry"}
            properties:
              image: {type: string, maxLength: 256}
              replicas: {type: integer, minimum: 0}
              mode: {type: string, enum: [a, b]}
              note: {type: string, maxLength: 4096}'

start_embedded "$WORK/emb"
export KUBECONFIG="$WORK/emb/kubeconfig"
echo "$CRD" | kubectl apply -f - >/dev/null
kubectl wait --for=condition=Established crd/widgets.bench.keelson.dev --timeout=30s >/dev/null
for c in 1 64; do
    for op in create create-custom; do
        kubectl create namespace "bench-$op-$c" >/dev/null
        printf 'embedded     '
        "$BIN/keelson-loadgen" --data-dir "$WORK/emb" --op "$op" --clients "$c" --duration "$DUR" --namespace "bench-$op-$c"
    done
done
echo "embedded server RSS: $(ps -o rss= -p "$EMBEDDED_PID") KiB"

#!/usr/bin/env bash
# Issue 25's admission benchmark, release build, embedded `keelson`:
# ConfigMap creates at 1 and 64 clients (keelson-loadgen, with the server's
# CPU per create) in three namespaces of one server, the runs alternating for
# ROUNDS rounds so that drift hits each alike:
#  - adm-none: nothing configured matches (the default plugin chain only);
#  - adm-webhook: one ValidatingWebhookConfiguration calls a loopback HTTPS
#    webhook (keelson-webhook-echo, allowed: true) on every create;
#  - adm-vap: ten ValidatingAdmissionPolicies, each with its binding
#    (Deny), evaluate one CEL validation on every create.
# Then the same creates on a second server started with every default
# plugin disabled but NamespaceLifecycle, for what the plugin chain costs.
# Usage: bash bench/admission.sh [duration] [rounds]   (default 10s, 3)
set -euo pipefail
cd "$(dirname "$0")/.."
DUR=${1:-10s}
ROUNDS=${2:-3}
cargo build --release -q -p keelson --bin keelson -p keelson-bench
source bench/lib.sh

start_embedded "$WORK/emb"
export KUBECONFIG="$WORK/emb/kubeconfig"
"$BIN/keelson-webhook-echo" --ca-out "$WORK/webhook-ca.pem" >"$WORK/webhook.out" 2>&1 &
PIDS+=($!)
HOOK=$(wait_line "$WORK/webhook.out" "listening on ")
CA=$(base64 -w0 <"$WORK/webhook-ca.pem")
for ns in adm-none adm-webhook adm-vap; do kubectl create namespace "$ns" >/dev/null; done

# selects NS: a namespaceSelector for one namespace.
selects() { echo "{\"matchLabels\": {\"kubernetes.io/metadata.name\": \"$1\"}}"; }

kubectl apply -f - >/dev/null <<YAML
{"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingWebhookConfiguration",
 "metadata": {"name": "bench-echo"},
 "webhooks": [{"name": "echo.bench.keelson.dev",
   "clientConfig": {"url": "https://$HOOK/validate", "caBundle": "$CA"},
   "rules": [{"operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"], "resources": ["configmaps"]}],
   "namespaceSelector": $(selects adm-webhook),
   "failurePolicy": "Fail", "sideEffects": "None", "admissionReviewVersions": ["v1"]}]}
YAML
for i in $(seq 1 10); do
    kubectl apply -f - >/dev/null <<YAML
{"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicy",
 "metadata": {"name": "bench-$i"},
 "spec": {"failurePolicy": "Fail",
   "matchConstraints": {"resourceRules": [{"operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"], "resources": ["configmaps"]}]},
   "validations": [{"expression": "object.metadata.name.size() < 200 && !has(object.data.forbidden$i)"}]}}
YAML
    kubectl apply -f - >/dev/null <<YAML
{"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicyBinding",
 "metadata": {"name": "bench-$i"},
 "spec": {"policyName": "bench-$i", "validationActions": ["Deny"],
   "matchResources": {"namespaceSelector": $(selects adm-vap)}}}
YAML
done
# Give admission's list + watch of the policies, bindings and webhook
# configurations time to see them before the timed runs.
sleep 2

for r in $(seq 1 "$ROUNDS"); do
    for c in 1 64; do
        for ns in adm-none adm-webhook adm-vap; do
            printf '%-12s round %s  ' "$ns" "$r"
            "$BIN/keelson-loadgen" --data-dir "$WORK/emb" --op create --clients "$c" \
                --duration "$DUR" --namespace "$ns" --pid "$EMBEDDED_PID"
        done
    done
done
kill "$EMBEDDED_PID"; wait "$EMBEDDED_PID" 2>/dev/null || true

echo "== the default plugins disabled (NamespaceLifecycle only)"
"$BIN/keelson" --data-dir "$WORK/bare" --secure-port 0 \
    --disable-admission-plugins="LimitRanger,ServiceAccount,TaintNodesByCondition,PodSecurity,Priority,DefaultTolerationSeconds,DefaultStorageClass,StorageObjectInUseProtection,PersistentVolumeClaimResize,RuntimeClass,DefaultIngressClass,MutatingAdmissionWebhook,ValidatingAdmissionPolicy,ValidatingAdmissionWebhook,ResourceQuota" \
    >"$WORK/bare.out" 2>"$WORK/bare.err" &
BARE_PID=$!; PIDS+=("$BARE_PID")
wait_line "$WORK/bare.out" "serving on " >/dev/null
KUBECONFIG="$WORK/bare/kubeconfig" kubectl create namespace adm-bare >/dev/null
for r in $(seq 1 "$ROUNDS"); do
    printf '%-12s round %s  ' adm-bare "$r"
    "$BIN/keelson-loadgen" --data-dir "$WORK/bare" --op create --clients 64 \
        --duration "$DUR" --namespace adm-bare --pid "$BARE_PID"
done

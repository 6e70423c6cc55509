#!/usr/bin/env bash
# What authorization costs end to end: embedded keelson with
# --authorization-mode=RBAC against AlwaysAllow, create and get of
# ConfigMaps at 64 clients, as a token user whose rights come from a
# RoleBinding (so every request is an RBAC decision; the admin's
# system:masters group would be allowed before RBAC is consulted).
# The modes alternate for ROUNDS rounds so that drift hits both alike.
# Usage: bash bench/rbac.sh [duration] [rounds]   (default 10s, 3)
set -euo pipefail
cd "$(dirname "$0")/.."
DUR=${1:-10s}
ROUNDS=${2:-3}
cargo build --release -q -p keelson --bin keelson -p keelson-bench --bin keelson-loadgen
source bench/lib.sh

TOKEN=bench-token-0123456789
printf '%s,bench,bench-uid\n' "$TOKEN" >"$WORK/tokens.csv"

run_mode() { # mode round
    local dir="$WORK/$1-$2"
    "$BIN/keelson" --data-dir "$dir" --secure-port 0 --authorization-mode "$1" \
        --token-auth-file "$WORK/tokens.csv" >"$dir.out" 2>"$dir.err" &
    local pid=$!
    PIDS+=("$pid")
    wait_line "$dir.out" "serving on " >/dev/null
    for op in create get; do
        KUBECONFIG="$dir/kubeconfig" kubectl create namespace "rbac-$op" >/dev/null
        KUBECONFIG="$dir/kubeconfig" kubectl create rolebinding bench --clusterrole=edit \
            --user=bench -n "rbac-$op" >/dev/null
    done
    for op in create get; do
        printf '%-12s round %s  ' "$1" "$2"
        "$BIN/keelson-loadgen" --data-dir "$dir" --op "$op" --clients 64 --duration "$DUR" \
            --namespace "rbac-$op" --token "$TOKEN"
    done
    kill "$pid"
    wait "$pid" 2>/dev/null || true
}

for r in $(seq 1 "$ROUNDS"); do
    run_mode RBAC "$r"
    run_mode AlwaysAllow "$r"
done

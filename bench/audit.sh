#!/usr/bin/env bash
# What audit logging costs end to end: embedded keelson without a policy
# (auditing off), with a policy that logs nothing (`level: None`: every
# request is evaluated and gets an Audit-Id), and with one that logs every
# request at Metadata to a file; get and create of ConfigMaps at 64
# clients. The modes alternate for ROUNDS rounds so that drift hits all.
# Usage: bash bench/audit.sh [duration] [rounds]   (default 10s, 2)
set -euo pipefail
cd "$(dirname "$0")/.."
DUR=${1:-10s}
ROUNDS=${2:-2}
cargo build --release -q -p keelson --bin keelson -p keelson-bench --bin keelson-loadgen
source bench/lib.sh

printf 'apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: None\n' >"$WORK/none.yaml"
printf 'apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Metadata\n' >"$WORK/metadata.yaml"

run_mode() { # mode round
    local dir="$WORK/$1-$2" args=()
    if [ "$1" != off ]; then
        args=(--audit-policy-file "$WORK/$1.yaml" --audit-log-path "$dir-audit.log")
    fi
    "$BIN/keelson" --data-dir "$dir" --secure-port 0 "${args[@]}" >"$dir.out" 2>"$dir.err" &
    local pid=$!
    PIDS+=("$pid")
    wait_line "$dir.out" "serving on " >/dev/null
    for op in create get; do
        KUBECONFIG="$dir/kubeconfig" kubectl create namespace "audit-$op" >/dev/null
    done
    for op in create get; do
        printf '%-9s round %s  ' "$1" "$2"
        "$BIN/keelson-loadgen" --data-dir "$dir" --op "$op" --clients 64 --duration "$DUR" \
            --namespace "audit-$op"
    done
    # The log and its rotated backups (every 100 MB).
    local logs=("$dir-audit"*.log)
    if [ -e "${logs[0]}" ]; then
        echo "  audit log: $(cat "${logs[@]}" | wc -l) events in ${#logs[@]} file(s), $(du -ck "${logs[@]}" | tail -1 | cut -f1) KiB"
    fi
    kill "$pid"
    wait "$pid" 2>/dev/null || true
}

for r in $(seq 1 "$ROUNDS"); do
    run_mode off "$r"
    run_mode none "$r"
    run_mode metadata "$r"
done

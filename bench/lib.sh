# Shared by bench/*.sh: start Keelson embedded or distributed from a release
# build, wait for readiness, and clean up on exit. Source it after `cd` to
# the repository root; it sets BIN, WORK and PIDS.
BIN=${CARGO_TARGET_DIR:-target}/release
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

# start_embedded DIR: one keelson process; sets EMBEDDED_PID.
start_embedded() {
    "$BIN/keelson" --data-dir "$1" --secure-port 0 >"$1.out" 2>"$1.err" &
    EMBEDDED_PID=$!
    PIDS+=("$EMBEDDED_PID")
    wait_line "$1.out" "serving on " >/dev/null
}

# start_distributed DIR [WATCH_REPLICAS]: store, admission, merge, N watch
# replicas (default 1) and the gateway; sets GATEWAY_PID and WATCH_PIDS.
start_distributed() {
    local dir=$1 replicas=${2:-1}
    mkdir -p "$dir"
    "$BIN/keelson-store" --data-dir "$dir/store" --listen 127.0.0.1:0 >"$dir/store.out" 2>"$dir/store.err" &
    PIDS+=($!)
    local store adm merge eps=()
    store=$(wait_line "$dir/store.out" "listening on ")
    "$BIN/keelson-admission" --listen 127.0.0.1:0 --store-endpoint "http://$store" >"$dir/adm.out" 2>"$dir/adm.err" &
    PIDS+=($!)
    adm=$(wait_line "$dir/adm.out" "listening on ")
    "$BIN/keelson-merge" --listen 127.0.0.1:0 >"$dir/merge.out" 2>"$dir/merge.err" &
    PIDS+=($!)
    merge=$(wait_line "$dir/merge.out" "listening on ")
    WATCH_PIDS=()
    for i in $(seq 1 "$replicas"); do
        "$BIN/keelson-watch" --listen 127.0.0.1:0 --store-endpoint "http://$store" >"$dir/watch$i.out" 2>"$dir/watch$i.err" &
        PIDS+=($!)
        WATCH_PIDS+=($!)
        eps+=("http://$(wait_line "$dir/watch$i.out" "listening on ")")
    done
    "$BIN/keelson-gateway" --data-dir "$dir" --secure-port 0 --store-endpoint "http://$store" \
        --admission-endpoint "http://$adm" --merge-endpoint "http://$merge" \
        --watch-endpoints "$(IFS=,; echo "${eps[*]}")" >"$dir/gw.out" 2>"$dir/gw.err" &
    GATEWAY_PID=$!
    PIDS+=("$GATEWAY_PID")
    wait_line "$dir/gw.out" "serving on " >/dev/null
}

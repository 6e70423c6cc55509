#!/usr/bin/env bash
# Build the `keelson:dev` image (override with IMAGE=name:tag) from the
# workspace's release binaries, FROM scratch: the binaries, exactly the
# shared libraries `ldd` says they load, /etc/passwd with the non-root user
# 65532 and its home. Needs only a Docker Engine; nothing is pulled.
set -euo pipefail
cd "$(dirname "$0")/.."
IMAGE=${IMAGE:-keelson:dev}
BINS=(keelson keelson-gateway keelson-store keelson-admission keelson-merge keelson-watch keelson-controllers keelson-probe)

cargo build --release -p keelson --bins -q
# Where cargo put them (CARGO_TARGET_DIR, else ./target).
RELEASE="${CARGO_TARGET_DIR:-target}/release"

ROOT=$(mktemp -d)
trap 'rm -rf "$ROOT"' EXIT
mkdir -p "$ROOT/usr/local/bin" "$ROOT/etc" "$ROOT/tmp" \
    "$ROOT/var/lib/keelson/data" "$ROOT/var/lib/keelson/store"
for b in "${BINS[@]}"; do
    install -m 0755 "$RELEASE/$b" "$ROOT/usr/local/bin/$b"
    strip --strip-unneeded "$ROOT/usr/local/bin/$b" 2>/dev/null || true
done
# The dynamic loader and every library the binaries load, at their paths.
for lib in $(for b in "${BINS[@]}"; do ldd "$RELEASE/$b"; done \
        | awk '/=> \// {print $3} /^[ \t]*\/[^ ]*ld-linux/ {print $1}' | sort -u); do
    mkdir -p "$ROOT$(dirname "$lib")"
    cp -L "$lib" "$ROOT$lib"
done
printf 'root:x:0:0:root:/root:/sbin/nologin\nkeelson:x:65532:65532:keelson:/var/lib/keelson:/sbin/nologin\n' >"$ROOT/etc/passwd"
printf 'root:x:0:\nkeelson:x:65532:\n' >"$ROOT/etc/group"
chmod 1777 "$ROOT/tmp"

docker build -q -t "$IMAGE" -f docker/Dockerfile "$ROOT" >/dev/null
echo "built $IMAGE ($(docker image inspect -f '{{.Size}}' "$IMAGE" | awk '{printf "%.1f MiB", $1/1048576}'))"

# The etcd image of the Compose etcd variant (docker-compose.etcd.yml):
# Debian's etcd (apt-get install etcd-server), FROM scratch the same way.
ETCD_IMAGE=${ETCD_IMAGE:-keelson-etcd:dev}
if command -v etcd >/dev/null 2>&1; then
    EROOT=$(mktemp -d)
    mkdir -p "$EROOT/usr/local/bin" "$EROOT/etc" "$EROOT/tmp" "$EROOT/var/lib/keelson/etcd"
    chmod 0700 "$EROOT/var/lib/keelson/etcd"
    install -m 0755 "$(command -v etcd)" "$EROOT/usr/local/bin/etcd"
    for lib in $(ldd "$(command -v etcd)" | awk '/=> \// {print $3} /^[ \t]*\/[^ ]*ld-linux/ {print $1}' | sort -u); do
        mkdir -p "$EROOT$(dirname "$lib")"
        cp -L "$lib" "$EROOT$lib"
    done
    cp "$ROOT/etc/passwd" "$ROOT/etc/group" "$EROOT/etc/"
    chmod 1777 "$EROOT/tmp"
    printf 'FROM scratch\nCOPY . /\nCOPY --chown=65532:65532 var/lib/keelson /var/lib/keelson\nUSER 65532:65532\nENTRYPOINT ["/usr/local/bin/etcd"]\n' >"$EROOT/Dockerfile"
    docker build -q -t "$ETCD_IMAGE" "$EROOT" >/dev/null
    rm -rf "$EROOT"
    echo "built $ETCD_IMAGE ($(etcd --version | head -1))"
else
    echo "etcd not installed: $ETCD_IMAGE (the Compose etcd variant) not built"
fi

#!/usr/bin/env bash
# Regenerate crates/registry/data/catalog.json from kubernetes-validate 1.37.0
# (Kubernetes v1.34.0 schemas) and xtask/resources.yaml. See xtask/README.md.
set -euo pipefail
cd "$(dirname "$0")/.."
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
python3 -m pip download --quiet --no-deps kubernetes-validate==1.37.0 -d "$WORK/wheel"
unzip -q -o "$WORK"/wheel/kubernetes_validate-1.37.0-*.whl \
    'kubernetes_validate/kubernetes-json-schema/v1.34.0-local/_definitions.json' -d "$WORK"
cargo run -q -p xtask -- gen-catalog \
    --definitions "$WORK/kubernetes_validate/kubernetes-json-schema/v1.34.0-local/_definitions.json"
git diff --stat -- crates/registry/data/catalog.json

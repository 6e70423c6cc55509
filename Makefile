# Keelson — common commands. `make run` starts the embedded server;
# `make test` builds the image and runs the whole suite (what CI runs).

CARGO ?= cargo

.PHONY: run build image test lint fmt bench bench-watch bench-apply bench-compose bench-rbac bench-etcd catalog protobuf

# The etcd client's build (etcd-client) compiles etcd's protos with protoc:
# install Debian's protobuf-compiler when it is missing.
PROTOC_CHECK = command -v protoc >/dev/null 2>&1 || { \
	echo "protoc missing: installing Debian's protobuf-compiler (the etcd client's build needs it)"; \
	if [ "$$(id -u)" = 0 ]; then apt-get update -qq && apt-get install -y -qq protobuf-compiler; \
	else sudo apt-get update -qq && sudo apt-get install -y -qq protobuf-compiler; fi; }

run:
	@$(PROTOC_CHECK)
	$(CARGO) run --release --bin keelson

build:
	@$(PROTOC_CHECK)
	$(CARGO) build --workspace --bins

# The container image (keelson:dev, FROM scratch) from the release binaries;
# docker-compose.yml and the compose suite (tests/e2e/compose.rs) run it.
image:
	@$(PROTOC_CHECK)
	bash docker/build-image.sh

test: image
	@if $(CARGO) nextest --version >/dev/null 2>&1; then \
		$(CARGO) nextest run --workspace --no-fail-fast; \
	else \
		$(CARGO) test --workspace --no-fail-fast; \
	fi

lint:
	$(CARGO) fmt --all -- --check
	$(CARGO) clippy --workspace --all-targets -- -D warnings

fmt:
	$(CARGO) fmt --all

# Load generator figures for BENCHMARKS.md (release build, both modes).
bench:
	bash bench/run.sh

bench-watch:
	bash bench/watch.sh

bench-apply:
	bash bench/apply.sh
	$(CARGO) bench -p keelson-merge --bench apply

# Issue 13's compose fleet figures (needs `make image` and the release load
# generators; builds nothing).
bench-compose:
	bash bench/compose.sh

bench-rbac:
	bash bench/rbac.sh

bench-etcd:
	bash bench/etcd.sh

# Regenerate crates/registry/data/catalog.json from kubernetes-validate.
catalog:
	bash xtask/gen-catalog.sh

# Regenerate crates/codec/data/protobuf.json (k8s-pb, the catalog, kubectl 1.33).
protobuf:
	$(CARGO) run -q -p xtask -- gen-protobuf

# Keelson — common commands. `make run` starts the embedded server;
# `make test` runs the whole suite (what CI runs).

CARGO ?= cargo

.PHONY: run build test lint fmt bench bench-watch bench-apply catalog protobuf

run:
	$(CARGO) run --release --bin keelson

build:
	$(CARGO) build --workspace --bins

test:
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

# Regenerate crates/registry/data/catalog.json from kubernetes-validate.
catalog:
	bash xtask/gen-catalog.sh

# Regenerate crates/codec/data/protobuf.json (k8s-pb, the catalog, kubectl 1.33).
protobuf:
	$(CARGO) run -q -p xtask -- gen-protobuf

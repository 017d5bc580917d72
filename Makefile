# devtools-mcp-edge: build, run, test and measure the worker. Every target installs what it needs
# first (scripts/tools.sh), so a fresh clone needs only rustup, Node 20 and npm.

SHELL := bash
.SHELLFLAGS := -euo pipefail -c
.DEFAULT_GOAL := help

export PATH := $(CURDIR)/.tools/cargo/bin:$(PATH)
# Wrangler: no telemetry, no login prompts, no probe of Cloudflare's network for request.cf.
export WRANGLER_SEND_METRICS := false
export CLOUDFLARE_CF_FETCH_ENABLED := false

NODE_TEST := node --test --test-force-exit --test-timeout=600000
# $(call bounded,SECONDS,COMMAND): COMMAND, killed and failed (saying so) after SECONDS.
bounded = timeout -k 10 $(1) $(2) || { s=$$?; [ $$s -ne 124 ] || echo "$(2): still running after $(1) s, stopped" >&2; exit $$s; }
ORACLE_TESTS := $(wildcard tests/oracle/*.test.mjs tests/parity/*.test.mjs)
E2E_TESTS := $(wildcard tests/e2e/*.test.mjs)
BENCHES := $(wildcard bench/*.mjs)
PORT ?= 8787

.PHONY: help tools build build-probe dev test test-host test-oracle test-e2e test-fuzz test-layers layers fuzz deploy size bench load soak example conformance fmt lint

help: ## list the targets
	@grep -E '^[a-z0-9-]+:.*## ' $(MAKEFILE_LIST) | sed -E 's/^([a-z0-9-]+):.*## /  make \1\t/' | expand -t 22

# scripts/python.sh installs the MCP Python client for the e2e spec into .tools/py; its exit status
# 3 means PyPI is unreachable, which is no failure here (the spec then skips, loudly).
tools: ## install missing tools (wasm32 target, worker-build, wasm-bindgen-cli, node_modules, .tools/py)
	@scripts/tools.sh build
	@scripts/python.sh >/dev/null || [ $$? -eq 3 ]

build: tools ## build build/index.js + build/index_bg.wasm (skips when nothing changed)
	@scripts/build.sh

build-probe: tools ## the e2e-only build with the panic_probe tool, in build-probe/ (never deployed)
	@BUILD_FEATURES=panic-probe BUILD_OUT=build-probe scripts/build.sh

dev: build ## run the worker on http://127.0.0.1:8787 (PORT=... to change) with local KV and R2 (wrangler dev)
	@[ -f .dev.vars ] || { cp .dev.vars.example .dev.vars; echo "created .dev.vars from .dev.vars.example"; }
	npx wrangler dev --ip 127.0.0.1 --port $(PORT)

test: tools test-host test-layers test-oracle test-e2e size conformance test-fuzz ## everything: host, layer checker, oracle, end-to-end, the size budget, conformance and a short fuzz run

# A hung host test fails the run instead of holding it (decision 0091): under cargo-nextest, when
# installed, each test is killed after 3 minutes (.config/nextest.toml) and the doc tests run
# apart; otherwise `cargo test` runs after its build under HOST_TEST_SECONDS in all. `timeout`
# signals its whole process group, test binaries included.
HOST_TEST_SECONDS ?= 600
test-host: ## cargo test (the core, on the host); nextest when installed; a hung test fails
	@if cargo nextest --version >/dev/null 2>&1; then \
		echo "cargo nextest run (each test at most 180 s), then cargo test --doc"; \
		cargo nextest run; \
		$(call bounded,$(HOST_TEST_SECONDS),cargo test --doc); \
	else \
		echo "cargo test (no cargo-nextest): at most $(HOST_TEST_SECONDS) s once built"; \
		cargo test --no-run; \
		$(call bounded,$(HOST_TEST_SECONDS),cargo test); \
	fi

test-layers: ## the layer checker (scripts/check-layers.mjs) on its fixture crates in tests/layers
	$(NODE_TEST) tests/layers/*.test.mjs

layers: ## print the import cycles between top-level modules of src/ (fails on one) and between files of one module (fails on either)
	node scripts/check-layers.mjs src

# Fuzzing (fuzz/, cargo-fuzz on nightly; scripts/fuzz.sh installs what is missing). test-fuzz is
# the bounded run CI does; fuzz runs longer. FUZZ_SECONDS is per target, FUZZ_TARGETS a subset.
FUZZ_TARGETS ?=
test-fuzz: ## every fuzz target for FUZZ_SECONDS (default 20) from the committed corpus
	scripts/fuzz.sh $(or $(FUZZ_SECONDS),20) $(FUZZ_TARGETS)

fuzz: ## every fuzz target for FUZZ_SECONDS (default 300), then the renderer corpora against the reference encoders
	scripts/fuzz.sh $(or $(FUZZ_SECONDS),300) $(FUZZ_TARGETS)
	node fuzz/replay-renderers.mjs

test-oracle: ## node oracle tests (tests/oracle) and reference-parity golden checks (tests/parity)
ifneq ($(ORACLE_TESTS),)
	$(NODE_TEST) $(ORACLE_TESTS)
else
	@echo "no oracle tests; skipped"
endif

test-e2e: build build-probe ## the built worker in workerd, driven by the MCP SDK client and raw HTTP
	$(NODE_TEST) $(E2E_TESTS)

deploy: tools ## wrangler deploy with a release build (LTO, opt-level z)
	BUILD_PROFILE=release npx wrangler deploy

size: build ## the gzipped upload size, as wrangler deploy --dry-run reports it; fails past the 1 MiB budget
	@node bench/size.mjs

bench: build ## run every bench/*.mjs (upload size, endpoint latency against a trivial worker, ...)
	@failed=""; for b in $(BENCHES); do echo "== $$b"; node $$b || failed="$$failed $$b"; done; \
	if [ -n "$$failed" ]; then echo "failed:$$failed"; exit 1; fi

load: build ## throughput, p50/p99, errors and CPU per request at 1, 8, 32, 128 connections (LOAD_SECONDS=10 per level)
	node bench/load/run.mjs $(or $(LOAD_SECONDS),10)

soak: build ## 10 minutes of mixed calls at 25 req/s; workerd RSS/VmHWM and wasm memory every 30 s (MINUTES=10)
	node bench/load/soak.mjs $(or $(MINUTES),10)

example: build ## the code-mode example (examples/code-mode) against the local worker and the fake upstream
	node examples/code-mode/local.mjs

# The suite's own runs are bounded (600 s per requirement set, 120 s for sign-in); this bounds
# the rest (starting workers, the headless browser).
conformance: build ## the official MCP conformance suite (server scenarios) against the built worker
	$(call bounded,1800,node tests/e2e/conformance.mjs)

fmt: ## rustfmt the crate
	cargo fmt

lint: ## rustfmt check, the layer checker (no import cycle in src/), clippy on host and wasm32
	cargo fmt --check
	node scripts/check-layers.mjs src
	cargo clippy --all-targets -- -D warnings
	cargo clippy --target wasm32-unknown-unknown --release -- -D warnings

#!/usr/bin/env bash
# Builds the worker bundle (build/index.js + build/index_bg.wasm) with worker-build, offline.
#
# It is wrangler's [build] command, and `wrangler dev` runs it twice at start, so it does nothing
# when the inputs (files under src/, manifests, lockfile, build settings) hash to the last build's stamp.
# Concurrent runs queue on a lock instead of racing on build/.
#
# Environment: BUILD_PROFILE=release (default: LTO; Cargo.toml gives worker-build's wasm-opt only
# passes that drop code, decisions 0069 and 0110) or dev (debug wasm; faster to compile, much larger). CARGO_TARGET_DIR is honoured.
# BUILD_FEATURES (cargo features, comma-separated) and BUILD_OUT (default build) make a test build
# beside the release one: `make build-probe` is BUILD_FEATURES=panic-probe BUILD_OUT=build-probe.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
export PATH="$root/.tools/cargo/bin:$PATH"
profile=${BUILD_PROFILE:-release}
features=${BUILD_FEATURES:-}
out=${BUILD_OUT:-build}

case "$profile" in
    release) flags=(--release) ;;
    dev) flags=(--dev --no-opt) ;;
    *) echo "[build] BUILD_PROFILE must be release or dev, not $profile" >&2; exit 2 ;;
esac

mkdir -p "$out"
exec 9>"$out/.lock"
flock 9

stamp() {
    {
        echo "profile=$profile"
        echo "features=$features"
        # Every file under src, not only .rs: include_str!/include_bytes! data is an input too.
        find src -type f -print0 | sort -z | xargs -0 sha256sum
        sha256sum Cargo.toml Cargo.lock
        [ ! -f .cargo/config.toml ] || sha256sum .cargo/config.toml
        worker-build --version 2>/dev/null || true
    } | sha256sum | cut -d' ' -f1
}

want=$(stamp)
if [ -f "$out/.stamp" ] && [ "$(cat "$out/.stamp")" = "$want" ] && [ -f "$out/index.js" ] && [ -f "$out/index_bg.wasm" ]; then
    echo "[build] up to date ($profile)" >&2
    exit 0
fi

# worker-build would otherwise download wasm-bindgen, wasm-opt and esbuild from GitHub.
WASM_BINDGEN_BIN=$(command -v wasm-bindgen) || { echo "[build] wasm-bindgen missing: run scripts/tools.sh" >&2; exit 1; }
export WASM_BINDGEN_BIN
export ESBUILD_BIN="$root/node_modules/.bin/esbuild"
export WASM_OPT_BIN="$root/node_modules/.bin/wasm-opt"
rm -f "$out/.stamp"
# Cargo options go after `--`; worker-build hands them to cargo build.
worker-build "${flags[@]}" --out-dir "$out" ${features:+-- --features "$features"}
echo "$want" > "$out/.stamp"

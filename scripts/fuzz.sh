#!/usr/bin/env bash
# Runs the cargo-fuzz targets in fuzz/ for a bounded time each and prints the executions.
#
#   scripts/fuzz.sh [SECONDS_PER_TARGET] [TARGET...]
#
# Seeds come from fuzz/corpus/<target> (committed, read only here); new inputs go to a scratch
# corpus under target/fuzz-corpus, so a run never grows the repository. A crash leaves its input
# in fuzz/artifacts/<target>/ and fails the script; reproduce it with
#   cargo +nightly fuzz run -s none -a <target> fuzz/artifacts/<target>/<file>
# FUZZ_JOBS=N runs N targets at once (default 1); FUZZ_ARGS adds libFuzzer flags.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
export PATH="$root/.tools/cargo/bin:$PATH"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$root/target/fuzz}"

cargo_fuzz_version=0.13.1
seconds=${1:-30}
shift || true
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
    targets=(mcp_request api_path render_json render_toon projection builtins policy outbound_url)
fi

say() { printf '[fuzz] %s\n' "$*" >&2; }

if ! cargo +nightly --version >/dev/null 2>&1; then
    if command -v rustup >/dev/null 2>&1; then
        say "installing the nightly toolchain (libFuzzer needs -Z flags)"
        rustup toolchain install nightly --profile minimal
    else
        say "cargo fuzz needs a nightly toolchain and there is no rustup"; exit 1
    fi
fi
if ! cargo fuzz --version 2>/dev/null | grep -qw "$cargo_fuzz_version"; then
    say "installing cargo-fuzz $cargo_fuzz_version into .tools/cargo"
    cargo install cargo-fuzz --version "$cargo_fuzz_version" --root "$root/.tools/cargo"
fi

# No sanitizer: the code under test is safe Rust, where ASan finds nothing libFuzzer's own crash
# detection misses, and it would slow every execution; debug assertions (-a) add overflow checks.
fuzz_flags=(-s none -a -O)
(cd fuzz && cargo +nightly fuzz build "${fuzz_flags[@]}")
bin_dir="$CARGO_TARGET_DIR/$(rustc +nightly -vV | sed -n 's/^host: //p')/release"

run_one() {
    local target=$1 scratch="$root/target/fuzz-corpus/$1" log="$root/target/fuzz-logs/$1.log"
    mkdir -p "$scratch" "$(dirname "$log")" "fuzz/artifacts/$target"
    # -timeout: a unit slower than 10 s is a hang; -rss_limit_mb: a projection or render that
    # blows memory up is a crash, as it would be in a 128 MB isolate.
    # The binary runs directly: `cargo fuzz run` would rebuild whenever the tree changed meanwhile.
    # libFuzzer stops itself after -max_total_time; the outer timeout bounds a run it cannot stop.
    if (cd fuzz && timeout -k 10 "$((seconds + 120))" "$bin_dir/$target" "$scratch" "corpus/$target" -artifact_prefix="artifacts/$target/" \
        -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=16384 \
        -print_final_stats=1 ${FUZZ_ARGS:-}) >"$log" 2>&1; then
        local runs
        runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo "?")
        printf '%-12s ok     %10s executions in %ss\n' "$target" "$runs" "$seconds"
    else
        printf '%-12s FAILED (log: %s)\n' "$target" "$log"
        grep -E 'panicked|ERROR|SUMMARY|Test unit written' "$log" | head -8 >&2 || true
        return 1
    fi
}

failed=0
jobs=${FUZZ_JOBS:-1}
pids=()
for target in "${targets[@]}"; do
    if [ "$jobs" -le 1 ]; then
        run_one "$target" || failed=1
    else
        run_one "$target" & pids+=($!)
        if [ ${#pids[@]} -ge "$jobs" ]; then
            wait "${pids[0]}" || failed=1
            pids=("${pids[@]:1}")
        fi
    fi
done
for pid in "${pids[@]}"; do wait "$pid" || failed=1; done
exit $failed

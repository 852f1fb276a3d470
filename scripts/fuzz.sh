#!/usr/bin/env bash
# Runs the fuzz targets of fuzz/ (libFuzzer, coverage-guided) for SECONDS each, one after another.
# Usage: scripts/fuzz.sh [SECONDS] [TARGET...]        (default: an hour per target, every target; 0 seconds
# replays each target's regressions and explores nothing)
#
# No nightly toolchain and no cargo-fuzz needed: the targets link libFuzzer through the libfuzzer-sys crate
# (built from its C++ sources with the machine's g++), and the stable compiler instruments them for
# coverage with the same LLVM SanitizerCoverage passes cargo-fuzz asks for (`-Cpasses=sancov-module` and
# its `-Cllvm-args`; no AddressSanitizer, which needs nightly: Rust's own bounds and overflow checks stand in
# for it). Debug assertions and overflow checks are on. The build lives in target/fuzz.
#
# Each target's corpus grows in $FUZZ_CORPUS_ROOT/<target> (default target/fuzz/corpus; never committed),
# seeded from fuzz/seeds/<target> and, for the scenario target, from every library scenario; a crash or hang
# lands in target/fuzz/artifacts/<target>/ and stops the run with libFuzzer's report (reproduce it with
# `target/fuzz/<host>/release/<target> <artifact>`); once fixed, it moves to fuzz/regressions/<target>/,
# which every run replays first. Extra libFuzzer flags come from FUZZ_FLAGS
# (scripts/test-all.sh passes a fixed -seed and fresh corpora, so its bounded run is the same every time).
#
# FUZZ_BUILD=quick (what scripts/test-all.sh sets) builds kubesim's own crates and the large dependencies
# that inputs barely reach (k8s-openapi's types, the CEL interpreter) unoptimised, in target/fuzz-quick:
# optimising instrumented code is most of a build's time (opt-level 1 costs as much as 3; 0 takes a third),
# and a 20-second run needs compiled code sooner more than it needs each input faster (it runs about half
# as many inputs). The hour-long runs build everything optimised, in target/fuzz.
set -euo pipefail
cd "$(dirname "$0")/.."

seconds="${1:-3600}"
shift || true
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  targets=(etcd_raw etcd_ops peer_frames data_dir scenario http_api)
fi

host="$(rustc -vV | sed -n 's/^host: //p')"
coverage=(
  --cfg fuzzing
  -Cpasses=sancov-module
  -Cllvm-args=-sanitizer-coverage-level=4
  -Cllvm-args=-sanitizer-coverage-inline-8bit-counters
  -Cllvm-args=-sanitizer-coverage-pc-table
  -Cllvm-args=-sanitizer-coverage-trace-compares
  -Cdebug-assertions
  -Coverflow-checks
)
build_dir=target/fuzz
quick=()
if [ "${FUZZ_BUILD:-}" = quick ]; then
  build_dir=target/fuzz-quick
  for package in kubesim-fuzz apiserver fake-etcd sim k8s-openapi cel antlr4rust chrono-tz; do
    quick+=(--config "profile.release.package.$package.opt-level=0")
  done
fi
echo "== fuzz: building the targets (coverage-instrumented, assertions on, $build_dir)"
# --target keeps the instrumentation off build scripts and proc-macros, as cargo-fuzz does. The scenario
# target reads the scenario language, which lives in the simulation build: it is built with `--cfg madsim`
# in a target dir of its own; the others drive real tokio.
build() {
  RUSTFLAGS="${coverage[*]} $1" cargo build "${quick[@]}" --release --locked --manifest-path fuzz/Cargo.toml \
    --target "$host" --target-dir "$2" "${@:3}"
}
real=() sim=()
for target in "${targets[@]}"; do
  if [ "$target" = scenario ]; then sim+=(--bin "$target"); else real+=(--bin "$target"); fi
done
[ ${#real[@]} -gt 0 ] && build "" "$build_dir" "${real[@]}"
[ ${#sim[@]} -gt 0 ] && build "--cfg madsim" "$build_dir/sim" --features scenario "${sim[@]}"

bin_of() {
  if [ "$1" = scenario ]; then echo "$build_dir/sim/$host/release/$1"; else echo "$build_dir/$host/release/$1"; fi
}
corpus_root="${FUZZ_CORPUS_ROOT:-target/fuzz/corpus}"
for target in "${targets[@]}"; do
  corpus="$corpus_root/$target"
  artifacts="target/fuzz/artifacts/$target"
  mkdir -p "$corpus" "$artifacts"
  seeds=()
  [ -d "fuzz/seeds/$target" ] && seeds+=("fuzz/seeds/$target")
  [ "$target" = scenario ] && seeds+=(scenarios scenarios/zoo scenarios/regressions)
  # Every input that once crashed or hung a target is kept under fuzz/regressions/<target> and must now pass.
  if [ -d "fuzz/regressions/$target" ]; then
    echo "== fuzz: $target replays its regressions"
    "$(bin_of "$target")" fuzz/regressions/"$target"/* -timeout=30 -rss_limit_mb=4096
  fi
  if [ "$seconds" = 0 ]; then
    continue  # 0 seconds: replay the regressions only
  fi
  echo "== fuzz: $target for ${seconds}s"
  # -timeout: one input taking longer is a hang. -rss_limit_mb: the HTTP target keeps one apiserver for the
  # whole run, and its store grows with what the inputs write.
  # shellcheck disable=SC2086
  "$(bin_of "$target")" "$corpus" "${seeds[@]}" -max_total_time="$seconds" -timeout=30 -rss_limit_mb=4096 \
    -artifact_prefix="$artifacts/" -print_final_stats=1 ${FUZZ_FLAGS:-}
done

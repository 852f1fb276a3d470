#!/usr/bin/env bash
# Runs every kubesim test on a fresh machine: the real build (unit, property, and real-peer tests against
# Debian's etcd 3.4.23 and etcdctl 3.4.23, the `etcd-client` crate, whose build script needs protoc, and the
# apiserver binary against PyPI's `kubernetes` client, installed into a virtualenv under target/), then
# the simulation build (`--cfg madsim`, the `sim` profile: optimised, assertions on; its report tests open
# reports in Debian's chromium, installed here when missing), then the bounded fuzz run (scripts/fuzz.sh),
# and the cross-process determinism check; clippy with `-D warnings` over both builds first. This is the README's test command and what .ci/run calls.
set -euo pipefail
cd "$(dirname "$0")/.."

# Each phase says when it starts, so that a CI log shows where the time goes.
phase() { printf '== [%dm%02ds] %s\n' $((SECONDS / 60)) $((SECONDS % 60)) "$*"; }

missing() { for tool in etcd etcdctl protoc; do command -v "$tool" >/dev/null 2>&1 || return 0; done; return 1; }
if missing; then
  if [ "$(id -u)" = 0 ]; then
    phase "installing the real peers and protoc (Debian etcd-server, etcd-client, protobuf-compiler)"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq etcd-server etcd-client protobuf-compiler >/dev/null
  else
    echo "error: the real-peer tests need etcd, etcdctl 3.4 and protoc:" \
      "sudo apt-get install etcd-server etcd-client protobuf-compiler" >&2
    exit 1
  fi
fi

# The run reports' browser test (sim/tests/report_browser.rs) opens them in Debian's chromium, headless.
if ! command -v chromium >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ]; then
    phase "installing Debian's chromium for the report browser test"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
  else
    echo "error: the report browser test needs chromium: sudo apt-get install chromium" >&2
    exit 1
  fi
fi

# The apiserver's build script reads the k8s-rs-pb sources through `cargo metadata --offline`, which wants
# every package of this platform downloaded, not only those of the crate being built first.
phase "fetching the locked crates"
cargo fetch --locked

phase "formatting: cargo fmt --check (rustfmt.toml)"
cargo fmt --all -- --check

phase "lints: clippy with warnings as errors, real build then simulation build"
cargo clippy --workspace --all-targets -- -D warnings
cargo sim-clippy -- -D warnings

phase "the Python kubernetes client for the binary's client tests: a virtualenv under the target directory"
venv="$(realpath -m "${CARGO_TARGET_DIR:-target}/pyvenv")"
if ! "$venv/bin/python" -c 'import kubernetes, sys; sys.exit(kubernetes.__version__ != "37.0.2")' 2>/dev/null; then
  if ! python3 -c 'import ensurepip, venv' 2>/dev/null && [ "$(id -u)" = 0 ]; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv >/dev/null
  fi
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q kubernetes==37.0.2
fi
export KUBESIM_PYTHON="$venv/bin/python"

phase "real build: cargo test --workspace"
cargo test --workspace
# No later phase uses the real build, and a CI machine's disk is shared: one CI run ran out of space while
# building the fuzz targets. `.ci/run` asks for the real build's artifacts to go once its tests have passed;
# a developer's own runs keep them.
if [ "${KUBESIM_PRUNE_REAL_BUILD:-0}" = 1 ]; then
  phase "freeing the real build's artifacts (KUBESIM_PRUNE_REAL_BUILD=1): $(du -sh "${CARGO_TARGET_DIR:-target}/debug" | cut -f1)"
  rm -rf "${CARGO_TARGET_DIR:-target}/debug"
fi

phase "simulation build: cargo sim-test (scenarios with their twins without watch caches, the zoo, traffic, durability)"
cargo sim-test

phase "snapshots: none pending review (scenarios' outcomes in snapshots/)"
pending=$(find snapshots -name '*.snap.new' -o -name '*.pending-snap')
if [ -n "$pending" ]; then
  echo "error: pending snapshots; review them with \`cargo insta review\`: $pending" >&2
  exit 1
fi

phase "fuzzing, bounded: every input that once crashed a target, then 20 s of each target from a fixed seed"
# scripts/fuzz.sh with no arguments is the hour-long run (README.md, Fuzzing); the quick build leaves kubesim's
# own crates unoptimised, which builds in a third of the time. The builds stay after the tests: run niced
# beside the real tests they saved four minutes, but once starved the ten-thousand-lease test's renewals
# (fake-etcd/tests/limits.rs) until a lease expired.
corpus_root="$(mktemp -d)"
FUZZ_BUILD=quick FUZZ_FLAGS="-seed=1" FUZZ_CORPUS_ROOT="$corpus_root" bash scripts/fuzz.sh 20 etcd_raw etcd_ops peer_frames data_dir scenario http_api
rm -rf "$corpus_root"

phase "determinism across processes: scenario seeds (one of HA apiservers and informers) and a faulted traffic run, each twice"
# The kubesim binary `cargo sim-test` built for its CLI tests: `cargo kubesim` would build another (without
# the test build's dev-dependency features), which took 3.7 minutes of a CI run.
kubesim="$(cargo sim-test --no-run --message-format=json 2>/dev/null | python3 -c '
import json, sys
for line in sys.stdin:
    m = json.loads(line)
    # The binary itself, not the test harness of its unit tests (also a "bin" artifact named kubesim).
    if m.get("reason") == "compiler-artifact" and m["target"]["name"] == "kubesim" \
            and "bin" in m["target"]["kind"] and not m["profile"]["test"]:
        print(m["executable"])
')"
if [ ! -x "$kubesim" ]; then
  echo "error: cargo sim-test built no kubesim binary" >&2
  exit 1
fi
"$kubesim" check-determinism scenarios/crash-restart-member-mid-write.toml --seed 3
"$kubesim" check-determinism scenarios/zoo/informer-relist-from-lagging-apiserver.toml --seed 3 --zoo
a=$("$kubesim" traffic --seed 3 --hash-only)
b=$("$kubesim" traffic --seed 3 --hash-only)
if [ "$a" != "$b" ]; then
  echo "error: seed 3 gave different traces in two processes ($a vs $b)" >&2
  exit 1
fi
echo "same trace hash in two processes: $a"

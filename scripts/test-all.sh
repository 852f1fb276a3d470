#!/usr/bin/env bash
# Runs every kubesim test on a fresh machine: the real build (unit, property, and real-peer tests against
# Debian's etcd 3.4.23 and etcdctl 3.4.23), then the simulation build (`--cfg madsim`, release), then the
# cross-process determinism check. This is the README's test command and what .ci/run calls.
set -euo pipefail
cd "$(dirname "$0")/.."

need_etcd() { ! command -v etcd >/dev/null 2>&1 || ! command -v etcdctl >/dev/null 2>&1; }
if need_etcd; then
  if [ "$(id -u)" = 0 ]; then
    echo "== installing the real peers (Debian etcd-server, etcd-client)"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq etcd-server etcd-client >/dev/null
  else
    echo "error: the real-peer tests need etcd and etcdctl 3.4: sudo apt-get install etcd-server etcd-client" >&2
    exit 1
  fi
fi

echo "== real build: cargo test --workspace"
cargo test --workspace

echo "== simulation build: cargo sim-test"
cargo sim-test

echo "== determinism across processes: the same seed twice, trace hashes compared"
a=$(cargo kubesim demo --seed 3 | sha256sum)
b=$(cargo kubesim demo --seed 3 | sha256sum)
if [ "$a" != "$b" ]; then
  echo "error: seed 3 gave different transcripts in two processes ($a vs $b)" >&2
  exit 1
fi
echo "same transcript hash in two processes: ${a%% *}"

//! The storage conformance suite: our own cases, re-derived from what upstream's storage tests check
//! (`staging/src/k8s.io/apiserver/pkg/storage/testing/store_tests.go` and `watcher_tests.go`), run against every backend the storage interface has, each over
//! fake-etcd (in-process, loopback) and over real etcd 3.4.23 (`/usr/bin/etcd`, Debian package
//! `etcd-server`). The backends are the etcd3 store and the Cacher in front of it; most cases are shared,
//! because the cache must be indistinguishable from etcd where kube-apiserver makes it so, and each backend
//! has its own cases where the two differ. One entry point per (backend, server) pair runs every case and
//! reports all failures.
#![cfg(not(madsim))]

#[path = "support/cases.rs"]
mod cases;
#[path = "support/etcd_server.rs"]
mod etcd_server;

mod conformance;

use conformance::harness::{run_all, Backend, Server};

#[test]
fn etcd3_store_on_fake_etcd() {
    run_all(Server::FakeEtcd, Backend::Etcd3);
}

#[test]
fn etcd3_store_on_real_etcd() {
    run_all(Server::RealEtcd, Backend::Etcd3);
}

#[test]
fn cacher_on_fake_etcd() {
    run_all(Server::FakeEtcd, Backend::Cacher);
}

#[test]
fn cacher_on_real_etcd() {
    run_all(Server::RealEtcd, Backend::Cacher);
}

//! The storage conformance suite: our own cases, re-derived from the upstream test list in
//! reference/apiserver-semantics.md §16, run against every backend the storage interface has, each over
//! fake-etcd (in-process, loopback) and over real etcd 3.4.23 (`/usr/bin/etcd`, Debian package
//! `etcd-server`). One entry point per (backend, server) pair runs every case and reports all failures.
#![cfg(not(madsim))]

mod conformance;

use conformance::harness::{run_all, Server};

#[test]
fn etcd3_store_on_fake_etcd() {
    run_all(Server::FakeEtcd);
}

#[test]
fn etcd3_store_on_real_etcd() {
    run_all(Server::RealEtcd);
}

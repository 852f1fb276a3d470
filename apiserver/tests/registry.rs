//! The registry suite: table-driven cases for the generic registry and its strategies (configmaps,
//! namespaces, pods, and a custom resource whose strategy its case defines), each run against the registry
//! over the etcd3 store and over the Cacher, each on fake-etcd (in-process) and real etcd 3.4.23. One entry
//! point per (backend, server) pair runs every case and reports all failures.
#![cfg(not(madsim))]

#[path = "support/cases.rs"]
mod cases;
#[path = "support/etcd_server.rs"]
mod etcd_server;

#[path = "conformance/store.rs"]
mod backend;
mod registry_cases;

use registry_cases::harness::{run_all, Backend, Server};

#[test]
fn registry_over_etcd3_store_on_fake_etcd() {
    run_all(Server::FakeEtcd, Backend::Etcd3);
}

#[test]
fn registry_over_etcd3_store_on_real_etcd() {
    run_all(Server::RealEtcd, Backend::Etcd3);
}

#[test]
fn registry_over_cacher_on_fake_etcd() {
    run_all(Server::FakeEtcd, Backend::Cacher);
}

#[test]
fn registry_over_cacher_on_real_etcd() {
    run_all(Server::RealEtcd, Backend::Cacher);
}

//! The HTTP boundary, as data: each case is requests in, status, reason, message and fields out, sent
//! through `ApiServer::handle` (the same handler the socket server calls) of a server assembled over an
//! in-process fake-etcd member, once with the watch cache and once without. Every case gets a namespace
//! of its own (`{ns}` in paths and bodies). The bad-input rows say what kube-apiserver answers for the
//! same request; the socket-level behaviours (slow clients, disconnects, drain) are in
//! `tests/http_socket.rs`.
#![cfg(not(madsim))]
// The shared support modules serve several suites; each uses part of them.
#![allow(dead_code)]

#[path = "support/cases.rs"]
mod cases;
#[path = "support/etcd_server.rs"]
mod etcd_server;
mod http_cases;
#[path = "support/http_server.rs"]
mod http_server;

use http_server::{run_all, Cache};

#[test]
fn http_cases_with_the_watch_cache() {
    run_all(Cache::On);
}

#[test]
fn http_cases_without_the_watch_cache() {
    run_all(Cache::Off);
}

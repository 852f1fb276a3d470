//! Shared harness of the tests against real peers: finding etcd and etcdctl, free ports, starting and
//! stopping a real etcd or fake-etcd member, running etcdctl.
//!
//! Each test crate (and the benchmark, through `#[path]`) compiles this module on its own and uses a
//! different part of it, so items unused by one crate are expected.
// Real processes and sockets only: the simulation build has nothing to run here.
#![cfg(not(madsim))]
#![allow(dead_code)]

pub mod etcdctl;
pub mod server;
pub mod tools;

pub use server::{Disk, Peer, Server};

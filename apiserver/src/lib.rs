//! The Kubernetes-style apiserver: storage interface, etcd3 store, watch cache and generic registry.
//!
//! Built layer by layer (issue 6). Its boundary is fixed: it reaches its store only through the etcd v3 wire
//! API from `etcd-proto`, never through fake-etcd's internals, so that it runs unchanged against real etcd 3.4.
//! Today it holds the storage layer ([`storage`]): the storage interface, its typed errors and their one
//! translation into Kubernetes `Status` objects, the etcd3 implementation, and the watch cache (Cacher); and
//! the generic registry ([`registry`]) with its per-resource strategies on top; and its failpoints
//! ([`failpoint`]), which a test harness arms through the stores' configuration.

pub mod failpoint;
pub mod go_text;
pub mod registry;
pub mod storage;

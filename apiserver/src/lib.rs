//! kubesim's Kubernetes-style apiserver: the HTTP API kube-apiserver serves, over a generic registry, a
//! watch cache and an etcd3 store that reaches etcd only through the etcd v3 wire API (so that it runs
//! against real etcd 3.4 as well as against fake-etcd).
//!
//! Layers, outside in:
//! - [`endpoints`]: the HTTP layer (routing, negotiation, handlers per verb, discovery, OpenAPI, health,
//!   metrics, the hyper accept loop) in both builds.
//! - [`apis`]: the catalog of served resources and their printers.
//! - [`server`]: assembles a server from a catalog and an etcd connection.
//! - [`registry`]: the generic registry store and the per-resource strategies.
//! - [`storage`]: the storage interface, the etcd3 store and the watch cache (Cacher).
//! - [`failpoint`]: the apiserver's failpoints, which a test harness arms through the stores' configuration.
//! - [`bug`]: the apiserver's bug switches, historical bugs a simulation can put back.
//! - [`go_text`]: Go's formatting of values, for byte-identical error texts.

pub mod apiextensions;
pub mod apis;
pub mod bug;
pub mod endpoints;
pub mod failpoint;
pub mod go_text;
pub mod registry;
pub mod server;
pub mod storage;

//! kubesim's Kubernetes-style apiserver: the HTTP API kube-apiserver serves, over a generic registry, a
//! watch cache and an etcd3 store that reaches etcd only through the etcd v3 wire API (so that it runs
//! against real etcd 3.4 as well as against fake-etcd).
//!
//! Layers, bottom up. Each depends only on the layers below it, never on one above or beside it in this
//! list (ARCHITECTURE.md states it; `sim/tests/tidy.rs` finds any cycle between folders):
//! - [`go_text`] (Go's formatting of values, for byte-identical error texts), [`go_json`] (Go's JSON of
//!   kube's types: their key order, its escapes), [`failpoint`] (the
//!   apiserver's failpoints, which a test harness arms through the stores' configuration), [`bug`] (its
//!   bug switches, historical bugs a simulation can put back), [`cron`] (robfig/cron's schedules, which
//!   CronJob validation and the CronJob controller share) and [`quantity`] and [`quota`] (`resource.Quantity`
//!   and what objects use under a ResourceQuota, which the quota and limit plugins and the quota controller
//!   share): leaves, depending on nothing of the crate but
//!   Go's formatting.
//! - [`storage`]: the storage interface, the etcd3 store and the watch cache (Cacher).
//! - [`registry`]: the generic registry store, the strategies (the built-in kinds', the CRD kind's and the
//!   custom resources'), the field manager, and what kinds look like: k8s-openapi's schemas, and CRDs'
//!   structural schemas with their CEL rules.
//! - [`apis`]: the catalog of served resources, their verbs and their printers.
//! - [`endpoints`]: the HTTP layer (routing, negotiation, handlers per verb, discovery, OpenAPI, health,
//!   metrics, the hyper accept loop) in both builds.
//! - [`apiextensions`]: serving CRDs: their resources' catalog entries and printers, and the CRD controller,
//!   which swaps the HTTP layer's served catalog and registries.
//! - [`server`]: assembles a server from a catalog and an etcd connection, and starts the CRD controller.
//!
//! Public face: what other crates use, and nothing else (`pub(crate)` marks the rest, and the
//! `unreachable_pub` lint keeps it so):
//! - building and serving a server, for the `kubesim-apiserver` binary, sim's apiserver nodes and the fuzz
//!   harness: [`server::build`] with [`server::ServerOptions`], [`server::bootstrap`],
//!   [`endpoints::ServerConfig`], [`endpoints::serve`], [`apis::Catalog`], and the injected time and
//!   randomness ([`registry::SystemFields`], [`registry::Clock`]);
//! - for the controllers crate: [`cron`], [`quantity`], [`quota`] and the time formats in [`registry::system`];
//! - the harness's vocabulary: [`failpoint`], [`bug`], and for sim's simulated HTTP clients
//!   [`endpoints::quiet_flush::QuietFlush`] and [`endpoints::serve::RuntimeExecutor`]; the scenario validator
//!   reads the catalog ([`apis::ResourceInfo`], [`apiextensions::custom::declared_resource_infos`]);
//! - the layers the crate's conformance suites and benches drive directly: [`storage`] (the interface, the
//!   etcd3 store, the Cacher, their errors and options), [`registry::Store`] with a few strategies, the
//!   namespace controller's pass and the field manager ([`registry::managed_fields`]), and the protobuf codec
//!   as a client speaks it ([`endpoints::protobuf`]).

// What other crates use is `pub`; everything else is `pub(crate)` or private, and this lint keeps it so. The
// real build checks it: the simulation build leaves out the protobuf codec, whose public functions are what
// make the HTTP layer's error type reachable.
#![cfg_attr(not(madsim), warn(unreachable_pub))]

pub mod admission;
pub mod apiextensions;
pub mod apis;
pub mod bug;
pub mod cron;
pub mod endpoints;
pub mod failpoint;
pub(crate) mod go_json;
pub(crate) mod go_text;
pub mod quantity;
pub mod quota;
pub mod registry;
pub mod server;
pub mod storage;

//! The storage layer: what kube-apiserver calls `storage.Interface`, and its etcd3 implementation.
//!
//! Layers, inside out:
//! - [`resource_version`]: [`ResourceVersion`], the etcd revision as Kubernetes parses and prints it.
//! - [`object`]: the [`Object`] view of a stored object's metadata. Objects are JSON (`serde_json::Value`).
//!   kube-apiserver stores protobuf (or JSON for custom resources) in etcd; kubesim always stores JSON, with
//!   `metadata.resourceVersion` removed: the resourceVersion is never stored, it is written into an object on
//!   every read from the etcd `mod_revision` of its key (for deletions: the deletion revision).
//! - [`options`]: request options (`GetOptions`, `ListOptions`, `Preconditions`, `SelectionPredicate`).
//! - [`continue_token`]: list continue tokens, encoded exactly as kube-apiserver encodes them.
//! - [`error`]: [`StorageError`], the one error type of this layer; each variant says whether it is retriable.
//! - [`status`]: the one place where a [`StorageError`] becomes a Kubernetes `Status` (code, reason, message).
//! - [`watch`]: [`WatchEvent`] and the [`Watcher`] handle a watch returns, and the keyed change
//!   ([`watch::CachedEvent`]) the etcd3 store feeds the Cacher.
//! - [`interface`]: the [`Storage`] trait every backend implements (the etcd3 store and the Cacher).
//! - [`etcd3`]: [`etcd3::Etcd3Store`], the implementation over etcd v3 gRPC clients.
//! - [`conversion`]: [`conversion::Converting`], a storage that serves its objects in another version.
//! - [`cacher`]: [`cacher::Cacher`], the watch cache in front of the etcd3 store, around its sans-IO core
//!   [`cacher::watch_cache::WatchCache`].

pub mod cacher;
pub(crate) mod continue_token;
pub(crate) mod conversion;
pub(crate) mod error;
pub mod etcd3;
pub(crate) mod interface;
pub(crate) mod object;
pub(crate) mod options;
pub(crate) mod resource_version;
pub mod status;
pub(crate) mod watch;

pub use error::StorageError;
pub use interface::{ObjectList, ResponseMeta, Storage};
pub use object::{Object, SharedObject};
pub use options::{GetOptions, ListOptions, Preconditions, ResourceVersionMatch, SelectionPredicate};
pub use resource_version::ResourceVersion;
pub use status::{GroupResource, Operation};
pub use watch::{WatchEvent, Watcher};

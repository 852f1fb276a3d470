//! [`Etcd3Store`]: the storage interface over etcd v3 gRPC clients (`etcd-proto`), the same against real
//! etcd 3.4 and fake-etcd, and under madsim over the simulated network.
//!
//! Files: `etcd_error` (etcd's gRPC errors as storage errors), `state` (decoding a key-value into an object
//! with its resourceVersion), `read` (get, list with paging, count), `write` (create, guaranteed update,
//! delete: the txn shapes of kube's etcd3 store), `watcher` (watch streams), `cache_feed` (the
//! keyed list and watch the watch cache's reflector reads), `client` (the one etcd client every store of a
//! server shares: all endpoints, failover, retries, require-leader watches).

mod cache_feed;
pub mod client;
mod etcd_error;
mod leases;
mod read;
mod state;
mod watcher;
mod write;

use serde_json::Value;

pub(crate) use cache_feed::FeedItem;
pub use client::{EndpointError, EtcdClient};
pub(crate) use leases::LeaseManager;

use crate::bug::Bugs;
use crate::failpoint::Failpoints;
use crate::storage::error::StorageError;
use crate::storage::interface::{ObjectList, ResponseMeta, Storage};
use crate::storage::options::{GetOptions, ListOptions, Preconditions};
use crate::storage::resource_version::ResourceVersion;
use crate::storage::status::GroupResource;
use crate::storage::watch::Watcher;

/// Where a store keeps its objects and how it names them in errors.
#[derive(Clone, Debug)]
pub struct Etcd3Config {
    /// The etcd key prefix of every key of this store (kube-apiserver: `/registry/`); a '/' is appended if
    /// missing.
    pub path_prefix: String,
    /// The resource, for the `Status` of a failed watch.
    pub resource: GroupResource,
    /// The apiserver's failpoint registry (nothing armed unless a test harness arms it).
    pub failpoints: Failpoints,
    /// A time to live for every object of the store (kube's `TTLFunc`, `--event-ttl` for events): each
    /// create and update goes under a lease of that many seconds, from the manager.
    pub ttl: Option<Ttl>,
    /// The bug switches on (none in a real server).
    pub bugs: Bugs,
}

/// Objects that expire: how long they live after each write, and where the leases come from.
#[derive(Clone)]
pub struct Ttl {
    pub ttl_s: i64,
    pub leases: LeaseManager,
}

impl std::fmt::Debug for Ttl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Ttl({}s)", self.ttl_s)
    }
}

impl Etcd3Config {
    /// A store under `path_prefix` for `resource`, with no failpoint armed.
    pub fn new(path_prefix: &str, resource: GroupResource) -> Etcd3Config {
        Etcd3Config {
            path_prefix: path_prefix.to_string(),
            resource,
            failpoints: Failpoints::new(),
            ttl: None,
            bugs: Bugs::none(),
        }
    }
}

/// The etcd3 storage backend.
#[derive(Clone)]
pub struct Etcd3Store {
    client: EtcdClient,
    path_prefix: String,
    resource: GroupResource,
    failpoints: Failpoints,
    ttl: Option<Ttl>,
    bugs: Bugs,
}

impl Etcd3Store {
    /// A store over `client`.
    pub(crate) fn new(client: EtcdClient, config: Etcd3Config) -> Etcd3Store {
        let mut path_prefix = config.path_prefix;
        if !path_prefix.ends_with('/') {
            path_prefix.push('/');
        }
        Etcd3Store {
            client,
            path_prefix,
            resource: config.resource,
            failpoints: config.failpoints,
            ttl: config.ttl,
            bugs: config.bugs,
        }
    }

    /// A store over one etcd endpoint (`http://host:port`), connecting on first use.
    pub async fn connect(endpoint: &str, config: Etcd3Config) -> Result<Etcd3Store, StorageError> {
        let client = EtcdClient::new(&[endpoint.to_string()], 0)
            .map_err(|e| StorageError::Unreachable { key: String::new(), message: e.to_string() })?;
        Ok(Etcd3Store::new(client, config))
    }

    /// Whether its etcd watches require a leader (always, unless the bug switch says otherwise).
    fn require_leader(&self) -> bool {
        !self.bugs.has(crate::bug::Bug::WatchWithoutRequireLeader)
    }

    /// The etcd key of `key`: the path prefix, then `key` without its leading '/'.
    pub(crate) fn etcd_key(&self, key: &str) -> String {
        format!("{}{}", self.path_prefix, key.strip_prefix('/').unwrap_or(key))
    }

    /// The etcd key prefix of everything under `key`, ending in '/' so that `/pods/a` does not cover `/pods/ab`.
    fn etcd_prefix(&self, key: &str) -> String {
        let mut prefix = self.etcd_key(key);
        if !prefix.ends_with('/') {
            prefix.push('/');
        }
        prefix
    }
}

/// The end of the range of every key starting with `prefix`: the prefix with its last byte incremented
/// (trailing 0xff bytes dropped), or "\0" (no upper bound) if there is none.
fn prefix_range_end(prefix: &[u8]) -> Vec<u8> {
    let mut end = prefix.to_vec();
    while let Some(last) = end.pop() {
        if last < 0xff {
            end.push(last + 1);
            return end;
        }
    }
    vec![0]
}

impl Storage for Etcd3Store {
    async fn create(&self, key: &str, obj: Value) -> Result<Value, StorageError> {
        self.create_object(key, obj).await
    }

    async fn get(&self, key: &str, opts: &GetOptions) -> Result<Value, StorageError> {
        self.get_object(key, opts).await
    }

    async fn get_list(&self, key: &str, opts: &ListOptions) -> Result<ObjectList, StorageError> {
        self.list_objects(key, opts).await
    }

    async fn guaranteed_update<F>(
        &self,
        key: &str,
        ignore_not_found: bool,
        preconditions: Option<&Preconditions>,
        update: F,
        cached: Option<Value>,
    ) -> Result<Value, StorageError>
    where
        F: FnMut(Value, ResponseMeta) -> Result<Value, StorageError> + Send,
    {
        self.update_object(key, ignore_not_found, preconditions, update, cached).await
    }

    async fn delete<V>(
        &self,
        key: &str,
        preconditions: Option<&Preconditions>,
        validate: V,
        cached: Option<Value>,
    ) -> Result<Value, StorageError>
    where
        V: FnMut(&Value) -> Result<(), StorageError> + Send,
    {
        self.delete_object(key, preconditions, validate, cached).await
    }

    async fn watch(&self, key: &str, opts: &ListOptions) -> Result<Watcher, StorageError> {
        self.watch_objects(key, opts)
    }

    async fn count(&self, key: &str) -> Result<i64, StorageError> {
        self.count_objects(key).await
    }

    async fn current_resource_version(&self) -> Result<ResourceVersion, StorageError> {
        self.current_revision().await
    }
}

#[cfg(test)]
mod tests {
    use super::prefix_range_end;

    #[test]
    fn prefix_range_ends() {
        assert_eq!(prefix_range_end(b"/a/"), b"/a0".to_vec());
        assert_eq!(prefix_range_end(b"a\xff"), b"b".to_vec());
        assert_eq!(prefix_range_end(b"\xff"), b"\0".to_vec());
    }
}

//! Get and list through the cache, with kube-apiserver 1.33's routing (`CacheDelegator.Get`, `GetList`,
//! `delegator.ShouldDelegateList` without cache snapshots) and the cache's own list (`Cacher.GetList`).
//!
//! Get: resourceVersion "" is a quorum read from etcd; otherwise (when ready) the cache waits until it has
//! reached the resourceVersion and answers with its current object. List: exact reads
//! (resourceVersionMatch Exact, the legacy "N with a limit", continue tokens) go to etcd; "0" is the cache
//! as it is, ignoring the limit; N or NotOlderThan waits for N; "" is a consistent read: from the cache after
//! it has caught up with etcd's current revision (falling back to etcd if it does not within the block
//! timeout), or from etcd without `ConsistentListFromCache`.

use super::Cacher;
use crate::storage::continue_token;
use crate::storage::error::StorageError;
use crate::storage::interface::ObjectList;
use crate::storage::options::{GetOptions, ListOptions, ResourceVersionMatch};
use crate::storage::resource_version::ResourceVersion;
use crate::storage::Storage;

/// Where a list is served.
enum Route {
    Etcd,
    Cache { consistent: bool },
}

impl Cacher {
    pub(super) async fn get_object(&self, key: &str, opts: &GetOptions) -> Result<serde_json::Value, StorageError> {
        let shared = &self.shared;
        if opts.resource_version.is_empty() || !self.ready() {
            return shared.store.get(key, opts).await;
        }
        let rv = ResourceVersion::parse(&opts.resource_version)?;
        shared.wait_until_fresh(rv, shared.config.consistent_read_supported()).await?;
        let state = shared.lock();
        match state.cache.get(key) {
            Some(obj) => Ok(obj.value().clone()),
            None => Err(StorageError::KeyNotFound {
                key: shared.store.etcd_key(key),
                rv: state.cache.resource_version().revision(),
            }),
        }
    }

    pub(super) async fn list_objects(&self, key: &str, opts: &ListOptions) -> Result<ObjectList, StorageError> {
        let shared = &self.shared;
        validate(key, opts)?;
        let consistent = match self.route(opts) {
            Route::Etcd => return shared.store.get_list(key, opts).await,
            Route::Cache { consistent } => consistent,
        };
        let not_ready = shared.lock().ready_generation(tokio::time::Instant::now()).err();
        if let Some(err) = not_ready {
            // A paged, unfiltered list can be answered by etcd; anything else waits for the cache (KEP-4568).
            if opts.predicate.is_empty() && opts.predicate.limit > 0 {
                return shared.store.get_list(key, opts).await;
            }
            return Err(err);
        }
        let mut cache_opts = opts.clone();
        if consistent {
            cache_opts.resource_version = shared.store.current_resource_version().await?.to_string();
            cache_opts.resource_version_match = Some(ResourceVersionMatch::NotOlderThan);
        }
        match self.list_from_cache(key, &cache_opts).await {
            // A consistent read the cache could not catch up with is served by etcd instead.
            Err(StorageError::TooLargeResourceVersion { .. }) if consistent => shared.store.get_list(key, opts).await,
            other => other,
        }
    }

    /// `ShouldDelegateList` for a cache without snapshots.
    fn route(&self, opts: &ListOptions) -> Route {
        let rv = opts.resource_version.as_str();
        match opts.resource_version_match {
            Some(ResourceVersionMatch::Exact) => Route::Etcd,
            Some(ResourceVersionMatch::NotOlderThan) => Route::Cache { consistent: false },
            None if !opts.predicate.continue_token.is_empty() => Route::Etcd,
            None if opts.predicate.limit > 0 && !rv.is_empty() && rv != "0" => Route::Etcd,
            None if rv.is_empty() && !self.shared.config.consistent_read_supported() => Route::Etcd,
            None => Route::Cache { consistent: rv.is_empty() },
        }
    }

    /// The cache's list: waits until the cache has reached the resourceVersion, then reads its current state.
    async fn list_from_cache(&self, key: &str, opts: &ListOptions) -> Result<ObjectList, StorageError> {
        let shared = &self.shared;
        let rv = ResourceVersion::parse(&opts.resource_version)?;
        shared.wait_until_fresh(rv, shared.config.consistent_read_supported()).await?;
        // Upstream ignores the limit for resourceVersion "0" (`computeListLimit`).
        let limit = if opts.resource_version == "0" { 0 } else { opts.predicate.limit.max(0) as usize };
        let prefix = format!("{}/", key.trim_end_matches('/'));
        let state = shared.lock();
        let list_rv = state.cache.resource_version();
        let candidates: Vec<_> = state.cache.list(&prefix).collect();
        let mut items = Vec::new();
        let mut last_key = None;
        let mut has_more = false;
        for (i, (item_key, obj)) in candidates.iter().enumerate() {
            if opts.predicate.matches(obj) {
                items.push((*obj).clone());
                last_key = Some(item_key.as_str());
            }
            if limit > 0 && items.len() >= limit {
                has_more = i < candidates.len() - 1;
                break;
            }
        }
        let (continue_token, remaining_item_count) = match (has_more, last_key) {
            (true, Some(last)) => {
                // As upstream's `PrepareContinueToken` called with the unsuffixed key: the token's start key
                // keeps its leading '/' (etcd's tokens have none); both decode to the same key.
                let token = continue_token::encode(&format!("{last}\0"), key, list_rv.revision())?;
                let remaining = opts.predicate.is_empty().then(|| candidates.len() as i64 - opts.predicate.limit);
                (Some(token), remaining)
            }
            _ => (None, None),
        };
        Ok(ObjectList { items, resource_version: list_rv, continue_token, remaining_item_count })
    }
}

/// `storage.ValidateListOptions`, which the delegator runs before routing: a bad continue token or
/// resourceVersion fails the same way whichever side would serve the list.
fn validate(key: &str, opts: &ListOptions) -> Result<(), StorageError> {
    if !opts.predicate.continue_token.is_empty() {
        continue_token::decode(&opts.predicate.continue_token, &format!("{}/", key.trim_end_matches('/')))?;
        if !opts.resource_version.is_empty() && opts.resource_version != "0" {
            return Err(StorageError::ResourceVersionWithContinue);
        }
        return Ok(());
    }
    ResourceVersion::parse(&opts.resource_version).map(|_| ())
}

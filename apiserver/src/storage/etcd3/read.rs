//! Reads: get, list (resourceVersion semantics, paging with continue tokens, compaction), count, and the
//! current revision. Semantics follow kube-apiserver's etcd3 store.

use etcd_proto::etcdserverpb::RangeRequest;
use serde_json::Value;

use super::etcd_error::{storage_error, EtcdFailure};
use super::state::decode;
use super::{prefix_range_end, Etcd3Store};
use crate::storage::continue_token;
use crate::storage::error::StorageError;
use crate::storage::interface::ObjectList;
use crate::storage::object::SharedObject;
use crate::storage::options::{GetOptions, ListOptions, ResourceVersionMatch};
use crate::storage::resource_version::ResourceVersion;

/// The largest page the store asks etcd for while a selector keeps filling pages short.
const MAX_PAGE_ITEMS: i64 = 10_000;

impl Etcd3Store {
    pub(super) async fn get_object(&self, key: &str, opts: &GetOptions) -> Result<Value, StorageError> {
        let etcd_key = self.etcd_key(key);
        let request = RangeRequest { key: etcd_key.clone().into_bytes(), ..RangeRequest::default() };
        let response = self.client.range(request).await.map_err(|s| storage_error(s, &etcd_key))?;
        let revision = response.header.map_or(0, |h| h.revision);
        // A get always reads the latest state; a resourceVersion only sets a floor on it.
        validate_minimum_resource_version(&opts.resource_version, revision)?;
        match response.kvs.first() {
            Some(kv) => decode(&etcd_key, &kv.value, kv.mod_revision),
            None => Err(StorageError::KeyNotFound { key: etcd_key, rv: 0 }),
        }
    }

    pub(super) async fn list_objects(&self, key: &str, opts: &ListOptions) -> Result<ObjectList, StorageError> {
        let key_prefix = self.etcd_prefix(key);
        let range_end = prefix_range_end(key_prefix.as_bytes());
        let pred = &opts.predicate;
        let paging = pred.limit > 0;
        let (mut with_rev, mut from_key) = list_start(&key_prefix, opts)?;
        let continued = !pred.continue_token.is_empty();
        let mut limit = pred.limit;
        let mut items = Vec::new();
        let mut last_key: Vec<u8> = Vec::new();
        let mut has_more;
        let mut count;
        loop {
            let request = RangeRequest {
                key: from_key.clone().into_bytes(),
                range_end: range_end.clone(),
                limit: if paging { limit } else { 0 },
                revision: with_rev,
                ..RangeRequest::default()
            };
            let response = match self.client.range(request).await {
                Ok(r) => r,
                Err(status) => {
                    return Err(match EtcdFailure::from_status(&status, &key_prefix) {
                        EtcdFailure::FutureRevision => {
                            // Report the revision the store does have; 0 if even that cannot be read.
                            let current = self.current_revision().await.map_or(0, |rv| rv.0);
                            StorageError::TooLargeResourceVersion {
                                requested: ResourceVersion::from_revision(with_rev).0,
                                current,
                                retry_after_s: 0,
                            }
                        }
                        EtcdFailure::Compacted if continued => StorageError::ContinueExpired {
                            continue_token: continue_token::encode(&from_key, &key_prefix, -1)?,
                        },
                        EtcdFailure::Compacted => StorageError::ListExpired,
                        EtcdFailure::Other(e) => e,
                    });
                }
            };
            let revision = response.header.map_or(0, |h| h.revision);
            validate_minimum_resource_version(&opts.resource_version, revision)?;
            count = response.count;
            has_more = (response.kvs.len() as i64) < response.count;
            if response.kvs.is_empty() && has_more {
                return Err(StorageError::Internal(
                    "no results were found, but etcd indicated there were more values remaining".into(),
                ));
            }
            // Every later page reads at the revision of the first one.
            if with_rev == 0 {
                with_rev = revision;
            }
            for kv in &response.kvs {
                if paging && items.len() as i64 >= pred.limit {
                    has_more = true;
                    break;
                }
                last_key.clone_from(&kv.key);
                let obj = decode(&String::from_utf8_lossy(&kv.key), &kv.value, kv.mod_revision)?;
                if pred.matches(&obj) {
                    items.push(SharedObject::new(obj));
                }
            }
            from_key = format!("{}\0", String::from_utf8_lossy(&last_key));
            if !has_more || !paging || items.len() as i64 >= pred.limit {
                break;
            }
            // A selector dropped objects: ask for bigger pages until this one is full.
            limit = (limit * 2).min(MAX_PAGE_ITEMS).max(limit);
        }
        let (continue_token, remaining_item_count) = if has_more {
            let token =
                continue_token::encode(&format!("{}\0", String::from_utf8_lossy(&last_key)), &key_prefix, with_rev)?;
            // etcd counts objects the selector would drop, so the count is only reported without one.
            (Some(token), pred.is_empty().then(|| count - pred.limit))
        } else {
            (None, None)
        };
        Ok(ObjectList {
            items,
            resource_version: ResourceVersion::from_revision(with_rev),
            continue_token,
            remaining_item_count,
        })
    }

    pub(super) async fn count_objects(&self, key: &str) -> Result<i64, StorageError> {
        let key_prefix = self.etcd_prefix(key);
        let request = RangeRequest {
            range_end: prefix_range_end(key_prefix.as_bytes()),
            key: key_prefix.clone().into_bytes(),
            count_only: true,
            ..RangeRequest::default()
        };
        let response = self.client.range(request).await.map_err(|s| storage_error(s, &key_prefix))?;
        Ok(response.count)
    }

    pub(super) async fn current_revision(&self) -> Result<ResourceVersion, StorageError> {
        let prefix = self.path_prefix.clone();
        let request = RangeRequest {
            range_end: prefix_range_end(prefix.as_bytes()),
            key: prefix.clone().into_bytes(),
            count_only: true,
            ..RangeRequest::default()
        };
        let response = self.client.range(request).await.map_err(|s| storage_error(s, &prefix))?;
        Ok(ResourceVersion::from_revision(response.header.map_or(0, |h| h.revision)))
    }
}

/// Where a list starts: (revision to read at, 0 for the latest; first etcd key). Validates the options as
/// kube-apiserver does, in its order: the continue token first, then the resourceVersion.
fn list_start(key_prefix: &str, opts: &ListOptions) -> Result<(i64, String), StorageError> {
    if !opts.predicate.continue_token.is_empty() {
        let (from_key, rv) = continue_token::decode(&opts.predicate.continue_token, key_prefix)?;
        if !opts.resource_version.is_empty() && opts.resource_version != "0" {
            return Err(StorageError::ResourceVersionWithContinue);
        }
        // A positive revision pins the list; -1 (a compacted token's replacement) reads the latest.
        return Ok((rv.max(0), from_key));
    }
    if opts.resource_version.is_empty() {
        return Ok((0, key_prefix.to_string()));
    }
    let rv = ResourceVersion::parse(&opts.resource_version)?;
    let with_rev = match opts.resource_version_match {
        // Not-older-than is checked against the revision etcd answers at.
        Some(ResourceVersionMatch::NotOlderThan) => 0,
        Some(ResourceVersionMatch::Exact) => rv.revision(),
        // The legacy rule: a limited list at N > 0 is an exact read at N.
        None if opts.predicate.limit > 0 && rv.0 > 0 => rv.revision(),
        None => 0,
    };
    Ok((with_rev, key_prefix.to_string()))
}

/// Fails with 504 "Too large resource version" when a read at `revision` is older than the requested floor.
fn validate_minimum_resource_version(requested: &str, revision: i64) -> Result<(), StorageError> {
    if requested.is_empty() {
        return Ok(());
    }
    let minimum = ResourceVersion::parse(requested)?;
    let current = ResourceVersion::from_revision(revision);
    if minimum > current {
        return Err(StorageError::TooLargeResourceVersion {
            requested: minimum.0,
            current: current.0,
            retry_after_s: 0,
        });
    }
    Ok(())
}

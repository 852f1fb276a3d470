//! What the watch cache's reflector reads from etcd: a list and a watch that keep each object's storage key.
//!
//! The public watch and list give objects only, and an object's metadata does not determine its key (a
//! ConfigMap stored under `/configmaps/other/x` may say namespace "ns"). The cache indexes by key, as
//! kube-apiserver's watch cache does, so these crate-internal variants return the key relative to the
//! store's path prefix (`/configmaps/ns/a`). The watch asks etcd for previous values and progress
//! notifications, as the cacher's lister-watcher does.

use etcd_proto::etcdserverpb::{RangeRequest, WatchCreateRequest};
use etcd_proto::mvccpb::event::EventType;
use serde_json::Value;
use tokio::sync::mpsc;

use super::etcd_error::{storage_error, EtcdFailure};
use super::state::decode;
use super::{prefix_range_end, Etcd3Store};
use crate::storage::error::StorageError;
use crate::storage::resource_version::ResourceVersion;
use crate::storage::watch::{CachedEvent, EventKind};

/// One item of the reflector's watch.
#[derive(Debug)]
pub(crate) enum FeedItem {
    /// A change, in revision order. `prev_object` is left for the cache to fill from its own state.
    Event(CachedEvent),
    /// etcd's progress notification: every change up to this revision has been delivered.
    Progress(ResourceVersion),
}

/// Items buffered between the etcd stream and the reflector.
const FEED_BUFFER: usize = 100;

impl Etcd3Store {
    /// Every object under `key` with its relative key, and the revision they were read at (a quorum read).
    pub(crate) async fn list_keyed(&self, key: &str) -> Result<(Vec<(String, Value)>, ResourceVersion), StorageError> {
        let key_prefix = self.etcd_prefix(key);
        let request = RangeRequest {
            key: key_prefix.clone().into_bytes(),
            range_end: prefix_range_end(key_prefix.as_bytes()),
            ..RangeRequest::default()
        };
        let response = self.client.range(request).await.map_err(|s| storage_error(s, &key_prefix))?;
        let mut items = Vec::with_capacity(response.kvs.len());
        for kv in &response.kvs {
            let etcd_key = String::from_utf8_lossy(&kv.key).into_owned();
            items.push((self.relative_key(&etcd_key), decode(&etcd_key, &kv.value, kv.mod_revision)?));
        }
        Ok((items, ResourceVersion::from_revision(response.header.map_or(0, |h| h.revision))))
    }

    /// Watches every key under `key` from just after `from`. Ends with one `Err` when the watch fails
    /// (`WatchExpired` if `from` has been compacted) or the stream closes. Sending on the returned sender
    /// asks etcd for a progress notification.
    pub(crate) fn watch_keyed(
        &self,
        key: &str,
        from: ResourceVersion,
    ) -> (mpsc::Receiver<Result<FeedItem, StorageError>>, mpsc::UnboundedSender<()>) {
        let (out, items) = mpsc::channel(FEED_BUFFER);
        let (progress_tx, progress_rx) = mpsc::unbounded_channel();
        let store = self.clone();
        let key_prefix = self.etcd_prefix(key);
        tokio::spawn(async move {
            let result = store.feed(&key_prefix, from, progress_rx, &out).await;
            if let Err(e) = result {
                let _ = out.send(Err(e)).await;
            }
        });
        (items, progress_tx)
    }

    /// The key of an etcd key relative to the path prefix, with a leading '/'.
    fn relative_key(&self, etcd_key: &str) -> String {
        format!("/{}", etcd_key.strip_prefix(&self.path_prefix).unwrap_or(etcd_key))
    }

    async fn feed(
        &self,
        key_prefix: &str,
        from: ResourceVersion,
        mut progress: mpsc::UnboundedReceiver<()>,
        out: &mpsc::Sender<Result<FeedItem, StorageError>>,
    ) -> Result<(), StorageError> {
        let create = WatchCreateRequest {
            key: key_prefix.as_bytes().to_vec(),
            range_end: prefix_range_end(key_prefix.as_bytes()),
            start_revision: from.revision() + 1,
            progress_notify: true,
            prev_kv: true,
            ..WatchCreateRequest::default()
        };
        let mut responses =
            self.client.watch(create, self.require_leader()).await.map_err(|s| storage_error(s, key_prefix))?;
        let mut progress_open = true;
        loop {
            tokio::select! {
                biased;
                () = out.closed() => return Ok(()),
                asked = progress.recv(), if progress_open => match asked {
                    Some(()) => responses.request_progress(),
                    None => progress_open = false,
                },
                message = responses.message() => {
                    let response = match message {
                        Ok(response) => response,
                        Err(status) => return Err(match EtcdFailure::from_status(&status, key_prefix) {
                            EtcdFailure::Compacted => StorageError::WatchExpired,
                            other => other.into_storage_error(),
                        }),
                    };
                    if response.compact_revision > 0 {
                        return Err(StorageError::WatchExpired);
                    }
                    if response.canceled {
                        return Err(StorageError::Backend(format!("etcd canceled the watch: {}", response.cancel_reason)));
                    }
                    if response.created {
                        continue;
                    }
                    if response.events.is_empty() {
                        let rv = ResourceVersion::from_revision(response.header.map_or(0, |h| h.revision));
                        if out.send(Ok(FeedItem::Progress(rv))).await.is_err() {
                            return Ok(());
                        }
                        continue;
                    }
                    for event in &response.events {
                        let item = self.cached_event(event)?;
                        if out.send(Ok(FeedItem::Event(item))).await.is_err() {
                            return Ok(());
                        }
                    }
                }
            }
        }
    }

    /// An etcd event as a cache event. A deletion carries the last state at the deletion revision, which
    /// needs etcd's previous value (kube-apiserver fails the watch without it, with this text).
    fn cached_event(&self, event: &etcd_proto::mvccpb::Event) -> Result<CachedEvent, StorageError> {
        let kv = event.kv.as_ref().ok_or_else(|| StorageError::Internal("etcd event without a key-value".into()))?;
        let etcd_key = String::from_utf8_lossy(&kv.key).into_owned();
        let rv = ResourceVersion::from_revision(kv.mod_revision);
        let (kind, object) = if event.r#type == EventType::Delete as i32 {
            let prev = event.prev_kv.as_ref().filter(|p| !p.value.is_empty()).ok_or_else(|| {
                StorageError::Internal(format!("etcd event received with PrevKv=nil (key={etcd_key:?})"))
            })?;
            (EventKind::Deleted, decode(&etcd_key, &prev.value, kv.mod_revision)?)
        } else if kv.create_revision == kv.mod_revision {
            (EventKind::Added, decode(&etcd_key, &kv.value, kv.mod_revision)?)
        } else {
            (EventKind::Modified, decode(&etcd_key, &kv.value, kv.mod_revision)?)
        };
        Ok(CachedEvent {
            kind,
            key: self.relative_key(&etcd_key),
            object: object.into(),
            prev_object: None,
            resource_version: rv,
        })
    }
}

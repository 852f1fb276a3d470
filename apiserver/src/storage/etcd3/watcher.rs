//! Watch streams: one etcd watch (own gRPC stream) per storage watch, driven by a task that turns etcd
//! events into [`WatchEvent`]s.
//!
//! From resourceVersion N the etcd watch starts at N+1 (the event at N is not re-delivered); from "" or "0"
//! the task first lists the current state as ADDED events and watches from the list's revision + 1. A
//! watch-list request (`sendInitialEvents=true`) lists the latest state whatever its resourceVersion (which
//! may not be ahead of etcd: a 504 ERROR event then) and, when it allows bookmarks, ends the initial events
//! with the `k8s.io/initial-events-end` bookmark at the list's revision; `sendInitialEvents=false` from ""
//! starts at etcd's current revision (k8s.io/apiserver `pkg/storage/etcd3/watcher.go`). The etcd
//! watch asks for previous values, so DELETED events carry the object's last state (at the deletion
//! revision) and a selector can turn an update into ADDED or DELETED when an object starts or stops
//! matching. A compacted start revision ends the watch with one ERROR event (410 Expired). Progress
//! notifications (periodic or requested) become bookmarks when the watch asked for them.

use etcd_proto::etcdserverpb::{RangeRequest, WatchCreateRequest, WatchResponse};
use etcd_proto::mvccpb::event::EventType;
use etcd_proto::mvccpb::Event;
use serde_json::Value;
use tokio::sync::mpsc;

use super::client::EtcdClient;
use super::etcd_error::{storage_error, EtcdFailure};
use super::state::decode;
use super::{prefix_range_end, Etcd3Store};
use crate::storage::error::StorageError;
use crate::storage::options::{ListOptions, SelectionPredicate};
use crate::storage::resource_version::ResourceVersion;
use crate::storage::status::{GroupResource, Operation};
use crate::storage::watch::{WatchEvent, Watcher};

/// Events buffered between the etcd stream and a slow consumer before the task waits for it.
const EVENT_BUFFER: usize = 100;

/// Everything the watch task needs, moved into it.
struct WatchTask {
    client: EtcdClient,
    require_leader: bool,
    key_prefix: String,
    start: ResourceVersion,
    predicate: SelectionPredicate,
    progress_notify: bool,
    /// `sendInitialEvents` of the request.
    send_initial_events: Option<bool>,
    allow_watch_bookmarks: bool,
    resource: GroupResource,
    out: mpsc::Sender<WatchEvent>,
}

/// How long a watch-list from a resourceVersion ahead of etcd tells the client to wait (upstream draws 1 to
/// 4 s; a fixed second keeps runs reproducible without a generator here).
const TOO_LARGE_RETRY_AFTER_S: i32 = 1;

impl Etcd3Store {
    pub(super) fn watch_objects(&self, key: &str, opts: &ListOptions) -> Result<Watcher, StorageError> {
        // A bad resourceVersion fails the request itself, before any stream starts.
        let start = ResourceVersion::parse(&opts.resource_version)?;
        let (out, events) = mpsc::channel(EVENT_BUFFER);
        let (progress_tx, progress_rx) = mpsc::unbounded_channel();
        let task = WatchTask {
            client: self.client.clone(),
            require_leader: self.require_leader(),
            key_prefix: self.etcd_prefix(key),
            start,
            predicate: opts.predicate.clone(),
            progress_notify: opts.progress_notify,
            send_initial_events: opts.send_initial_events,
            allow_watch_bookmarks: opts.allow_watch_bookmarks,
            resource: self.resource.clone(),
            out,
        };
        tokio::spawn(task.run(progress_rx));
        Ok(Watcher::new(events, progress_tx))
    }
}

/// Why the task stopped early.
enum Stop {
    /// The consumer dropped its watcher.
    Gone,
    /// The watch failed; the error goes to the consumer as an ERROR event.
    Failed(StorageError),
}

impl WatchTask {
    async fn run(self, progress: mpsc::UnboundedReceiver<()>) {
        match self.stream(progress).await {
            Ok(()) | Err(Stop::Gone) => {}
            Err(Stop::Failed(e)) => {
                let status = e.to_status(Operation::Watch, &self.resource, "");
                let _ = self.out.send(WatchEvent::Error(Box::new(status))).await;
            }
        }
    }

    async fn stream(&self, mut progress: mpsc::UnboundedReceiver<()>) -> Result<(), Stop> {
        let start_revision = self.start_revision().await? + 1;
        let create = WatchCreateRequest {
            key: self.key_prefix.clone().into_bytes(),
            range_end: prefix_range_end(self.key_prefix.as_bytes()),
            start_revision,
            progress_notify: self.progress_notify,
            prev_kv: true,
            ..WatchCreateRequest::default()
        };
        let mut responses = self
            .client
            .watch(create, self.require_leader)
            .await
            .map_err(|s| Stop::Failed(storage_error(s, &self.key_prefix)))?;
        let mut progress_open = true;
        loop {
            tokio::select! {
                biased;
                asked = progress.recv(), if progress_open => match asked {
                    Some(()) => responses.request_progress(),
                    // The consumer dropped its watcher: stop watching.
                    None => {
                        progress_open = false;
                        if self.out.is_closed() {
                            return Err(Stop::Gone);
                        }
                    }
                },
                message = responses.message() => match message {
                    Ok(response) => self.deliver(response).await?,
                    Err(status) => return Err(Stop::Failed(match EtcdFailure::from_status(&status, &self.key_prefix) {
                        EtcdFailure::Compacted => StorageError::WatchExpired,
                        other => other.into_storage_error(),
                    })),
                },
                () = self.out.closed() => return Err(Stop::Gone),
            }
        }
    }

    /// The revision the etcd watch starts after, having sent whatever initial events the request asks for.
    async fn start_revision(&self) -> Result<i64, Stop> {
        match (self.send_initial_events, self.start.0) {
            // Legacy: from "" or "0" the current state, else from the resourceVersion.
            (None, 0) => self.initial_events().await,
            (None, _) | (Some(false), 1..) => Ok(self.start.revision()),
            // No initial events from "": start at etcd's current revision.
            (Some(false), 0) => self.current_revision().await,
            (Some(true), requested) => {
                if requested > 0 {
                    let current = self.current_revision().await?;
                    if requested > current as u64 {
                        return Err(Stop::Failed(StorageError::TooLargeResourceVersion {
                            requested,
                            current: current as u64,
                            retry_after_s: TOO_LARGE_RETRY_AFTER_S,
                        }));
                    }
                }
                let listed = self.initial_events().await?;
                if self.allow_watch_bookmarks {
                    self.emit(WatchEvent::InitialEventsEnd(ResourceVersion::from_revision(listed))).await?;
                }
                Ok(listed)
            }
        }
    }

    /// etcd's current revision, from the header of a read of nothing.
    async fn current_revision(&self) -> Result<i64, Stop> {
        let request = RangeRequest {
            key: self.key_prefix.clone().into_bytes(),
            range_end: prefix_range_end(self.key_prefix.as_bytes()),
            count_only: true,
            ..RangeRequest::default()
        };
        let response =
            self.client.range(request).await.map_err(|s| Stop::Failed(storage_error(s, &self.key_prefix)))?;
        Ok(response.header.map_or(0, |h| h.revision))
    }

    /// Sends the current state as ADDED events and returns the revision it was read at.
    async fn initial_events(&self) -> Result<i64, Stop> {
        let request = RangeRequest {
            key: self.key_prefix.clone().into_bytes(),
            range_end: prefix_range_end(self.key_prefix.as_bytes()),
            ..RangeRequest::default()
        };
        let response =
            self.client.range(request).await.map_err(|s| Stop::Failed(storage_error(s, &self.key_prefix)))?;
        for kv in &response.kvs {
            let obj = decode(&String::from_utf8_lossy(&kv.key), &kv.value, kv.mod_revision).map_err(Stop::Failed)?;
            if self.predicate.matches(&obj) {
                self.emit(WatchEvent::Added(obj.into())).await?;
            }
        }
        Ok(response.header.map_or(0, |h| h.revision))
    }

    async fn deliver(&self, response: WatchResponse) -> Result<(), Stop> {
        if response.compact_revision > 0 {
            return Err(Stop::Failed(StorageError::WatchExpired));
        }
        if response.canceled {
            return Err(Stop::Failed(StorageError::Backend(format!(
                "etcd canceled the watch: {}",
                response.cancel_reason
            ))));
        }
        if response.created {
            return Ok(());
        }
        if response.events.is_empty() {
            // A progress notification: everything up to the header revision has been sent.
            if self.progress_notify {
                let rv = ResourceVersion::from_revision(response.header.map_or(0, |h| h.revision));
                self.emit(WatchEvent::Bookmark(rv)).await?;
            }
            return Ok(());
        }
        for event in &response.events {
            if let Some(out) = self.translate(event).map_err(Stop::Failed)? {
                self.emit(out).await?;
            }
        }
        Ok(())
    }

    /// The watch event an etcd event becomes for this watch's predicate, if any.
    fn translate(&self, event: &Event) -> Result<Option<WatchEvent>, StorageError> {
        let kv = event.kv.as_ref().ok_or_else(|| StorageError::Internal("etcd event without a key-value".into()))?;
        let key = String::from_utf8_lossy(&kv.key).into_owned();
        // The previous state, at this event's revision (a DELETED object is reported "as of" its deletion).
        let prev = match &event.prev_kv {
            Some(p) if !p.value.is_empty() => Some(decode(&key, &p.value, kv.mod_revision)?),
            _ => None,
        };
        let prev_matches = prev.as_ref().is_some_and(|p| self.predicate.matches(p));
        if event.r#type == EventType::Delete as i32 {
            let prev = prev
                .ok_or_else(|| StorageError::Internal(format!("etcd event received with PrevKv=nil (key={key:?})")))?;
            return Ok(prev_matches.then_some(WatchEvent::Deleted(prev.into())));
        }
        let created = kv.create_revision == kv.mod_revision;
        if !created && prev.is_none() {
            // Upstream's `parseEvent`: a change to an existing key without its previous value (compacted
            // away, for a watch that starts at the compaction revision) fails the watch instead of passing
            // for a creation. Found by the apiserver simulation's watch checker (an ADDED for a MODIFIED).
            return Err(StorageError::Internal(format!(
                "etcd event received with PrevKv=nil (key={key:?}, modRevision={}, type=PUT)",
                kv.mod_revision
            )));
        }
        let cur: Value = decode(&key, &kv.value, kv.mod_revision)?;
        let cur_matches = self.predicate.matches(&cur);
        Ok(match (cur_matches, prev_matches && !created) {
            (true, true) => Some(WatchEvent::Modified(cur.into())),
            (true, false) => Some(WatchEvent::Added(cur.into())),
            (false, true) => Some(WatchEvent::Deleted(prev.expect("prev matched, so it exists").into())),
            (false, false) => None,
        })
    }

    async fn emit(&self, event: WatchEvent) -> Result<(), Stop> {
        self.out.send(event).await.map_err(|_| Stop::Gone)
    }
}

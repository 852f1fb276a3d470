//! What a watch delivers: [`WatchEvent`]s through a [`Watcher`] handle; and [`CachedEvent`], one change with
//! its storage key, which the etcd3 store's cache feed reads and the Cacher's watch cache keeps (here, below
//! both, so that the store never reaches up into the Cacher).
//!
//! A failure after the watch has started is not a `Result`: it is one [`WatchEvent::Error`] carrying the
//! `Status` (kube-apiserver sends it as an ERROR event on a 200 stream), after which the stream ends.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Status;
use tokio::sync::mpsc;

use crate::storage::object::SharedObject;
use crate::storage::resource_version::ResourceVersion;

/// One event of a watch. Objects carry their resourceVersion; a deleted object carries its last state with
/// the deletion's resourceVersion. Objects are shared: every watcher of a change gets the same one.
#[derive(Clone, Debug, PartialEq)]
pub enum WatchEvent {
    Added(SharedObject),
    Modified(SharedObject),
    Deleted(SharedObject),
    /// Every event up to this resourceVersion has been delivered.
    Bookmark(ResourceVersion),
    /// The BOOKMARK that ends a watch-list request's initial events: its object carries the annotation
    /// [`INITIAL_EVENTS_END_ANNOTATION`]` = "true"`, and the state sent so far is the state at this
    /// resourceVersion.
    InitialEventsEnd(ResourceVersion),
    /// The watch failed; nothing follows. (Boxed: a Status is much larger than the other variants.)
    Error(Box<Status>),
}

/// The annotation that marks the bookmark ending a watch-list request's initial events
/// (`metav1.InitialEventsAnnotationKey`).
pub(crate) const INITIAL_EVENTS_END_ANNOTATION: &str = "k8s.io/initial-events-end";

/// How many converted events a mapped watcher holds before its forwarding task waits for the reader.
const MAPPED_BUFFER: usize = 100;

/// The receiving end of a watch. Dropping it stops the watch.
pub struct Watcher {
    events: mpsc::Receiver<WatchEvent>,
    progress: mpsc::UnboundedSender<()>,
}

impl Watcher {
    /// A watcher over `events`; `progress` carries progress requests to whatever drives the watch.
    pub(crate) fn new(events: mpsc::Receiver<WatchEvent>, progress: mpsc::UnboundedSender<()>) -> Watcher {
        Watcher { events, progress }
    }

    /// A watcher that delivers `event` and then ends: how a watch that failed after its request was accepted
    /// reports the failure (kube-apiserver's `newErrWatcher`).
    pub(crate) fn failed(event: WatchEvent) -> Watcher {
        let (out, events) = mpsc::channel(1);
        out.try_send(event).expect("a fresh channel has room for one event");
        let (progress, _) = mpsc::unbounded_channel();
        Watcher { events, progress }
    }

    /// A watcher delivering this one's events with `f` applied to their objects (a conversion to another
    /// version). A task forwards them, and ends when either side does; progress requests reach this
    /// watcher's source unchanged.
    pub(crate) fn map(mut self, f: impl Fn(SharedObject) -> SharedObject + Send + 'static) -> Watcher {
        let (out, events) = mpsc::channel(MAPPED_BUFFER);
        let progress = self.progress.clone();
        tokio::spawn(async move {
            loop {
                let event = tokio::select! {
                    biased;
                    _ = out.closed() => return,
                    event = self.events.recv() => event,
                };
                let Some(event) = event else { return };
                let event = match event {
                    WatchEvent::Added(obj) => WatchEvent::Added(f(obj)),
                    WatchEvent::Modified(obj) => WatchEvent::Modified(f(obj)),
                    WatchEvent::Deleted(obj) => WatchEvent::Deleted(f(obj)),
                    other => other,
                };
                if out.send(event).await.is_err() {
                    return;
                }
            }
        });
        Watcher { events, progress }
    }

    /// The next event, or `None` once the watch has ended.
    pub async fn next(&mut self) -> Option<WatchEvent> {
        self.events.recv().await
    }

    /// Asks the store to report progress: a [`WatchEvent::Bookmark`] follows once every event up to the
    /// store's current revision has been delivered (etcd's progress request, when the watch was opened with
    /// `progress_notify`). Ignored if the watch has ended.
    pub fn request_progress(&self) {
        let _ = self.progress.send(());
    }
}

/// What happened to an object.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum EventKind {
    Added,
    Modified,
    Deleted,
}

/// One change, under its storage key (relative to the store's prefix), as the cache feed reads it and the
/// watch cache's history keeps it. `object` carries its resourceVersion; for a deletion, the last state.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct CachedEvent {
    pub kind: EventKind,
    pub key: String,
    pub object: SharedObject,
    pub prev_object: Option<SharedObject>,
    pub resource_version: ResourceVersion,
}

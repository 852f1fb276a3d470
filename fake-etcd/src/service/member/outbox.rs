//! A watch stream's outbox: the queue the member fills (the [`Outbox`] end, kept under the member lock) and
//! gRPC drains (the [`OutboundStream`] end), counting what is in flight so that the member can tell a slow
//! client (and stall its watchers) from a fast one.

use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};

use etcd_proto::etcdserverpb::WatchResponse;
use futures::Stream;
use tokio::sync::{mpsc, Notify};

/// A watch stream stops receiving live events once this many responses wait unsent (etcd's per-stream send
/// buffer is 128), and catches up once the client has drained it to [`RESUME_BELOW`].
const STALL_AT: usize = 128;
const RESUME_BELOW: usize = 64;

/// The member's end of a stream's queue.
pub(super) struct Outbox {
    tx: mpsc::UnboundedSender<WatchResponse>,
    in_flight: Arc<AtomicUsize>,
    stalled: bool,
}

/// How queueing a response went.
pub(super) enum Queued {
    Sent,
    /// Sent, and the queue just reached [`STALL_AT`]: the stream's watchers must stall.
    SentAndFull,
    /// The gRPC side is gone: the stream is over.
    Gone,
}

impl Outbox {
    /// A new outbox, the stream gRPC drains it through, and the signal that the client drained a stalled
    /// stream.
    pub(super) fn open() -> (Outbox, OutboundStream, Arc<Notify>) {
        let (tx, rx) = mpsc::unbounded_channel();
        let in_flight = Arc::new(AtomicUsize::new(0));
        let drained = Arc::new(Notify::new());
        let outbox = Outbox { tx, in_flight: in_flight.clone(), stalled: false };
        let outbound = OutboundStream { rx, in_flight, drained: drained.clone(), resume_below: RESUME_BELOW };
        (outbox, outbound, drained)
    }

    /// Queues `resp`. Queues are unbounded, so nothing is ever dropped here; a stream whose client does not
    /// keep up is stalled in the hub instead (once, until it is resumed).
    pub(super) fn push(&mut self, resp: WatchResponse) -> Queued {
        // Counted before it is sent: the gRPC side may take it off the queue (and count it down) on
        // another thread before `send` even returns, and the count must never go below zero.
        let queued = self.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
        if self.tx.send(resp).is_err() {
            return Queued::Gone;
        }
        if queued >= STALL_AT && !self.stalled {
            self.stalled = true;
            return Queued::SentAndFull;
        }
        Queued::Sent
    }

    /// The client drained the stream: whether it was stalled (and so its watchers must catch up now).
    pub(super) fn resume(&mut self) -> bool {
        std::mem::replace(&mut self.stalled, false)
    }

    /// How many more responses fit before the stream counts as full.
    pub(super) fn room(&self) -> usize {
        STALL_AT.saturating_sub(self.in_flight.load(Ordering::SeqCst))
    }

    /// The hub stalled the stream (a catch-up ran out of room): it is held until the client drains it below
    /// [`RESUME_BELOW`]. Returns false if the client has already read that far, so that no drain signal
    /// may come, and the caller must go on now instead (the stream is then not held).
    pub(super) fn hold(&mut self) -> bool {
        // The drain signal is handled under the member lock, which the caller holds, so the order of the
        // check and the flag does not matter.
        self.stalled = self.in_flight.load(Ordering::SeqCst) >= RESUME_BELOW;
        self.stalled
    }
}

/// The gRPC end of a stream's queue.
pub struct OutboundStream {
    rx: mpsc::UnboundedReceiver<WatchResponse>,
    in_flight: Arc<AtomicUsize>,
    /// Signalled when the queue drains below `resume_below`.
    drained: Arc<Notify>,
    resume_below: usize,
}

impl Stream for OutboundStream {
    type Item = Result<WatchResponse, tonic::Status>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = &mut *self;
        match this.rx.poll_recv(cx) {
            Poll::Ready(Some(resp)) => {
                let before = this.in_flight.fetch_sub(1, Ordering::SeqCst);
                if before == this.resume_below {
                    this.drained.notify_one();
                }
                Poll::Ready(Some(Ok(resp)))
            }
            Poll::Ready(None) => Poll::Ready(None),
            Poll::Pending => Poll::Pending,
        }
    }
}

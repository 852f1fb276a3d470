//! The response side of a watch stream: a queue the member fills and gRPC drains, counting what is in
//! flight so that the member can tell a slow client (and stall its watchers) from a fast one.

use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};

use etcd_proto::etcdserverpb::WatchResponse;
use futures::Stream;
use tokio::sync::{mpsc, Notify};

pub struct Outbound {
    pub rx: mpsc::UnboundedReceiver<WatchResponse>,
    pub in_flight: Arc<AtomicUsize>,
    /// Signalled when the queue drains below `resume_below`.
    pub drained: Arc<Notify>,
    pub resume_below: usize,
}

pub struct OutboundStream {
    inner: Outbound,
}

impl OutboundStream {
    pub fn new(inner: Outbound) -> OutboundStream {
        OutboundStream { inner }
    }
}

impl Stream for OutboundStream {
    type Item = Result<WatchResponse, tonic::Status>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = &mut self.inner;
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

/// A plain channel as a gRPC response stream (lease keep-alives).
pub struct ChannelStream<T> {
    rx: mpsc::UnboundedReceiver<Result<T, tonic::Status>>,
}

impl<T> ChannelStream<T> {
    pub fn new(rx: mpsc::UnboundedReceiver<Result<T, tonic::Status>>) -> ChannelStream<T> {
        ChannelStream { rx }
    }
}

impl<T> Stream for ChannelStream<T> {
    type Item = Result<T, tonic::Status>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        self.rx.poll_recv(cx)
    }
}

//! A plain channel as a gRPC response stream: what a spawned task sends reaches the client in order, and the
//! stream ends when the task drops its sender. The etcd services (lease keep-alives) and the peer service
//! (stream answers) both answer this way.

use std::pin::Pin;
use std::task::{Context, Poll};

use futures::Stream;
use tokio::sync::mpsc;

pub struct ChannelStream<T> {
    rx: mpsc::UnboundedReceiver<Result<T, tonic::Status>>,
}

impl<T> ChannelStream<T> {
    pub(crate) fn new(rx: mpsc::UnboundedReceiver<Result<T, tonic::Status>>) -> ChannelStream<T> {
        ChannelStream { rx }
    }
}

impl<T> Stream for ChannelStream<T> {
    type Item = Result<T, tonic::Status>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        self.rx.poll_recv(cx)
    }
}

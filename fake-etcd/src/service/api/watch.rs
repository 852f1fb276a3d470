//! The Watch service: one task per gRPC stream feeds client requests to the member's watch hub and
//! resumes a stalled stream once its client has drained it.

use std::sync::Arc;

use etcd_proto::etcdserverpb::watch_server::Watch;
use std::pin::Pin;

use etcd_proto::etcdserverpb::{WatchRequest, WatchResponse};
use futures::{Stream, StreamExt};
use tonic::{Request, Response, Status, Streaming};

use super::token::token_of;
use crate::failpoint::{Failpoints, Injected, Point};
use crate::service::member::outbox::OutboundStream;
use crate::service::member::Member;

#[derive(Clone)]
pub(crate) struct WatchService {
    pub member: Arc<Member>,
}

#[tonic::async_trait]
impl Watch for WatchService {
    type WatchStream = Pin<Box<dyn Stream<Item = Result<WatchResponse, Status>> + Send>>;

    async fn watch(&self, req: Request<Streaming<WatchRequest>>) -> Result<Response<Self::WatchStream>, Status> {
        // etcd resolves the stream's token at every watch it creates, so it is kept as sent.
        let token = token_of(&req);
        let mut inbound = req.into_inner();
        let (stream, outbound, drained) = self.member.open_watch_stream();
        let member = self.member.clone();
        tokio::spawn(async move {
            loop {
                tokio::select! {
                    biased;
                    msg = inbound.message() => match msg {
                        Ok(Some(req)) => member.watch_request(stream, req, token.as_deref()),
                        // The client closed its side or the connection broke: the stream is over.
                        Ok(None) | Err(_) => break,
                    },
                    _ = drained.notified() => member.watch_drained(stream),
                }
            }
            member.close_watch_stream(stream);
        });
        Ok(Response::new(with_send_failpoint(outbound, self.member.failpoints().clone())))
    }
}

/// Passes every response through [`Point::BeforeWatchResponseSend`] on its way to gRPC.
fn with_send_failpoint(outbound: OutboundStream, failpoints: Failpoints) -> <WatchService as Watch>::WatchStream {
    let point = Point::BeforeWatchResponseSend;
    Box::pin(outbound.filter_map(move |item| {
        let failpoints = failpoints.clone();
        async move {
            match failpoints.eval(point).await {
                Ok(()) => Some(item),
                Err(Injected::Drop) => None,
                Err(Injected::Error) => Some(Err(point.status())),
            }
        }
    }))
}

//! The Watch service: one task per gRPC stream feeds client requests to the member's watch hub and
//! resumes a stalled stream once its client has drained it. A stream that requires a leader is refused
//! without one, and ended when the member has been without one too long (`member::require_leader`).

use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use etcd_proto::etcdserverpb::watch_server::Watch;

use etcd_proto::etcdserverpb::{WatchRequest, WatchResponse};
use futures::{Stream, StreamExt};
use tonic::{Request, Response, Status, Streaming};

use super::status::to_status;
use super::token::token_of;
use crate::error::EtcdError;
use crate::failpoint::{Failpoints, Injected, Point};
use crate::service::member::outbox::OutboundStream;
use crate::service::member::require_leader::{HAS_LEADER, REQUIRE_LEADER_KEY};
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
        let requires_leader =
            req.metadata().get(REQUIRE_LEADER_KEY).is_some_and(|v| v.as_bytes() == HAS_LEADER.as_bytes());
        if requires_leader && !self.member.has_leader() {
            return Err(to_status(&EtcdError::NoLeader));
        }
        let cancel = requires_leader.then(|| self.member.leaderless_cancel());
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
        let outbound = with_send_failpoint(outbound, self.member.failpoints().clone());
        Ok(Response::new(match cancel {
            Some(cancel) => ended_without_leader(outbound, cancel),
            None => outbound,
        }))
    }
}

/// The stream, ended with `etcdserver: no leader` once `cancel` resolves (etcd's watch server reports the
/// monitor's cancellation so, and the stream is over).
fn ended_without_leader(
    outbound: <WatchService as Watch>::WatchStream,
    cancel: impl std::future::Future<Output = ()> + Send + 'static,
) -> <WatchService as Watch>::WatchStream {
    let canceled = Arc::new(AtomicBool::new(false));
    let flag = canceled.clone();
    let until = async move {
        cancel.await;
        flag.store(true, Ordering::SeqCst);
    };
    let last =
        futures::stream::once(
            async move { canceled.load(Ordering::SeqCst).then(|| Err(to_status(&EtcdError::NoLeader))) },
        )
        .filter_map(std::future::ready);
    Box::pin(outbound.take_until(until).chain(last))
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

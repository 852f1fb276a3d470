//! [`EtcdWatch`]: one etcd watch stream as kube-apiserver's etcd client keeps it. It is opened with etcd's
//! require-leader option (`hasleader: true` in the request metadata, clientv3's `WithRequireLeader`, which
//! kube-apiserver's watcher uses), so a member that has lost its leader refuses it, and cancels it with
//! `etcdserver: no leader` once it has been without one for three election timeouts: a watch never stays
//! silent on a member cut off from the rest. Opening goes through the endpoints as requests do. A stream
//! whose connection breaks is opened again on the next endpoint from the revision after the last event (or
//! progress) it delivered, which its consumer does not notice; a member's own refusal (no leader) ends the
//! watch with that error, as clientv3 ends a require-leader watch, and the consumer starts over.

use etcd_proto::etcdserverpb::{watch_request, WatchCreateRequest, WatchProgressRequest, WatchRequest, WatchResponse};
use futures::channel::mpsc;

use super::failure::{Failure, BROKEN};
use super::{EtcdClient, MAX_ATTEMPTS, RETRY_WAIT};

/// The metadata key and value of etcd's require-leader option (`rpctypes.MetadataRequireLeaderKey`,
/// `rpctypes.MetadataHasLeader`).
pub(crate) const REQUIRE_LEADER_KEY: &str = "hasleader";
pub(crate) const HAS_LEADER: &str = "true";

/// An open etcd watch with one watcher.
pub(crate) struct EtcdWatch {
    client: EtcdClient,
    create: WatchCreateRequest,
    /// The endpoint serving the stream now.
    endpoint: usize,
    requests: mpsc::UnboundedSender<WatchRequest>,
    responses: tonic::Streaming<WatchResponse>,
    /// Where a reopened stream starts: after the last event or progress delivered.
    next_revision: i64,
    /// Whether the consumer has had the `created` response (a reopened stream's is not passed on).
    created: bool,
    require_leader: bool,
}

impl EtcdWatch {
    /// Opens the watch `create` on the first endpoint that takes it.
    pub(super) async fn open(
        client: EtcdClient,
        create: WatchCreateRequest,
        require_leader: bool,
    ) -> Result<EtcdWatch, tonic::Status> {
        let next_revision = create.start_revision;
        let (endpoint, requests, responses) = stream(&client, &create, require_leader).await?;
        Ok(EtcdWatch { client, create, endpoint, requests, responses, next_revision, created: false, require_leader })
    }

    /// Asks the member for a progress notification.
    pub(crate) fn request_progress(&self) {
        let request = watch_request::RequestUnion::ProgressRequest(WatchProgressRequest {});
        let _ = self.requests.unbounded_send(WatchRequest { request_union: Some(request) });
    }

    /// The next response; `Err` ends the watch (a member's refusal, or no endpoint left to resume on).
    pub(crate) async fn message(&mut self) -> Result<WatchResponse, tonic::Status> {
        loop {
            let status = match self.responses.message().await {
                Ok(Some(response)) => {
                    if response.created && std::mem::replace(&mut self.created, true) {
                        continue;
                    }
                    self.advance(&response);
                    return Ok(response);
                }
                // A member that stops closes its streams: the connection is as good as broken.
                Ok(None) => tonic::Status::unavailable(BROKEN),
                Err(status) => status,
            };
            let failure = self.client.report(self.endpoint, &status);
            if !matches!(failure, Failure::NotSent | Failure::Broken) {
                return Err(failure.status(status, &self.client.inner.conns[self.endpoint].address));
            }
            tracing::debug!(
                endpoint = %self.client.inner.conns[self.endpoint].url,
                from = self.next_revision,
                "etcd watch resumed on the next endpoint"
            );
            tokio::time::sleep(RETRY_WAIT).await;
            let mut create = self.create.clone();
            create.start_revision = self.next_revision;
            let (endpoint, requests, responses) = stream(&self.client, &create, self.require_leader).await?;
            (self.endpoint, self.requests, self.responses) = (endpoint, requests, responses);
        }
    }

    fn advance(&mut self, response: &WatchResponse) {
        if let Some(last) = response.events.last().and_then(|e| e.kv.as_ref()) {
            self.next_revision = self.next_revision.max(last.mod_revision + 1);
        } else if !response.created && !response.canceled {
            // A progress notification: every event up to its revision has been delivered.
            let revision = response.header.as_ref().map_or(0, |h| h.revision);
            self.next_revision = self.next_revision.max(revision + 1);
        }
    }
}

/// Opens a stream for `create` on picked endpoints, attempt after attempt as a request would be.
async fn stream(
    client: &EtcdClient,
    create: &WatchCreateRequest,
    require_leader: bool,
) -> Result<(usize, mpsc::UnboundedSender<WatchRequest>, tonic::Streaming<WatchResponse>), tonic::Status> {
    let mut attempt = 0;
    loop {
        attempt += 1;
        let i = client.pick();
        let conn = &client.inner.conns[i];
        let (requests, outbound) = mpsc::unbounded();
        let first = watch_request::RequestUnion::CreateRequest(create.clone());
        let _ = requests.unbounded_send(WatchRequest { request_union: Some(first) });
        let mut request = tonic::Request::new(outbound);
        if require_leader {
            request.metadata_mut().insert(REQUIRE_LEADER_KEY, tonic::metadata::MetadataValue::from_static(HAS_LEADER));
        }
        let status = match conn.watch.clone().watch(request).await {
            Ok(responses) => {
                client.succeeded(i);
                return Ok((i, requests, responses.into_inner()));
            }
            Err(status) => status,
        };
        // Opening a watch is a read: any failure but a final answer moves on to the next endpoint (clientv3
        // retries a require-leader open refused with "no leader" too).
        let failure = client.report(i, &status);
        if failure == Failure::Final || attempt >= MAX_ATTEMPTS {
            return Err(failure.status(status, &conn.address));
        }
        tokio::time::sleep(RETRY_WAIT).await;
    }
}

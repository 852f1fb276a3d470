//! The KV service: validate as etcd does before Raft, then read from or propose to the member, as the user
//! the request's token names (reads are checked here; writes by every member when they apply them).

use std::sync::Arc;

use etcd_proto::etcdserverpb::kv_server::Kv;
use etcd_proto::etcdserverpb::{
    CompactionRequest, CompactionResponse, DeleteRangeRequest, DeleteRangeResponse, PutRequest, PutResponse,
    RangeRequest, RangeResponse, TxnRequest, TxnResponse,
};
use prost::Message;
use tonic::{Request, Response, Status};

use super::token::{requester, token_of};
use crate::apply::{validate, Command, CommandResponse};
use crate::auth::perms::Access;
use crate::auth::AuthInfo;
use crate::error::EtcdError;
use crate::failpoint::Point;
use crate::service::member::Member;

#[derive(Clone)]
pub struct KvService {
    pub member: Arc<Member>,
}

/// How large a KV request tonic decodes before [`KvService::check_grpc_limit`] judges it. tonic refuses a
/// message over its limit with its own code and words; the KV service lets it decode up to this bound and
/// refuses with grpc-go's instead. Above it (a 64 MiB request) tonic's text shows.
pub(crate) const KV_DECODE_LIMIT_BYTES: usize = 64 * 1024 * 1024;

impl KvService {
    /// grpc-go's receive limit on etcd's client port: `--max-request-bytes` plus 512 KiB of gRPC overhead.
    /// grpc-go refuses a larger message before etcd sees it, so this comes before every other check.
    fn check_grpc_limit(&self, encoded_len: usize) -> Result<(), Status> {
        let max = self.member.config().max_request_bytes + etcd_proto::GRPC_OVERHEAD_BYTES;
        if encoded_len > max {
            return Err(Status::resource_exhausted(format!(
                "grpc: received message larger than max ({encoded_len} vs. {max})"
            )));
        }
        Ok(())
    }

    /// etcd refuses a proposal whose encoded request exceeds `--max-request-bytes`.
    fn check_size(&self, encoded_len: usize) -> Result<(), EtcdError> {
        if encoded_len > self.member.config().max_request_bytes {
            return Err(EtcdError::RequestTooLarge);
        }
        Ok(())
    }

    async fn propose(&self, cmd: Command, by: &AuthInfo) -> Result<CommandResponse, Status> {
        let resp = self.member.propose_as(cmd, by).await?;
        let point = Point::BeforeWriteAck;
        self.member.failpoints().eval(point).await.map_err(|_| point.status())?;
        Ok(resp)
    }
}

/// A proposal's response of the wrong kind is a bug in the state machine, not a client error.
fn mismatch(what: &str) -> Status {
    Status::internal(format!("fake-etcd: state machine answered {what} with another response kind"))
}

#[tonic::async_trait]
impl Kv for KvService {
    async fn range(&self, req: Request<RangeRequest>) -> Result<Response<RangeResponse>, Status> {
        self.check_grpc_limit(req.get_ref().encoded_len())?;
        let token = token_of(&req);
        let req = req.into_inner();
        validate::check_range(&req)?;
        // A linearizable read first waits for the leader's read index to apply here (ReadIndex); a
        // serializable one is served from whatever this member has applied, stale or not, as etcd does.
        if !req.serializable {
            self.member.read_barrier().await?;
        }
        // The token is resolved after the barrier and the permission checked with the read, under one lock,
        // as etcd's `doSerialize` does.
        let by = self.member.auth_info(token.as_deref())?;
        let mut resp = self.member.read(|sm| {
            sm.auth.check(&by, &req.key, &req.range_end, Access::Read)?;
            sm.range(&req)
        })?;
        self.member.stamp(&mut resp.header);
        Ok(Response::new(resp))
    }

    async fn put(&self, req: Request<PutRequest>) -> Result<Response<PutResponse>, Status> {
        self.check_grpc_limit(req.get_ref().encoded_len())?;
        let by = requester(&self.member, &req)?;
        let req = req.into_inner();
        validate::check_put(&req)?;
        self.check_size(req.encoded_len())?;
        match self.propose(Command::Put(req), &by).await? {
            CommandResponse::Put(mut resp) => {
                self.member.stamp(&mut resp.header);
                Ok(Response::new(resp))
            }
            _ => Err(mismatch("Put")),
        }
    }

    async fn delete_range(&self, req: Request<DeleteRangeRequest>) -> Result<Response<DeleteRangeResponse>, Status> {
        self.check_grpc_limit(req.get_ref().encoded_len())?;
        let by = requester(&self.member, &req)?;
        let req = req.into_inner();
        validate::check_delete_range(&req)?;
        self.check_size(req.encoded_len())?;
        match self.propose(Command::DeleteRange(req), &by).await? {
            CommandResponse::DeleteRange(mut resp) => {
                self.member.stamp(&mut resp.header);
                Ok(Response::new(resp))
            }
            _ => Err(mismatch("DeleteRange")),
        }
    }

    async fn txn(&self, req: Request<TxnRequest>) -> Result<Response<TxnResponse>, Status> {
        self.check_grpc_limit(req.get_ref().encoded_len())?;
        let by = requester(&self.member, &req)?;
        let req = req.into_inner();
        validate::check_txn(&req, self.member.config().max_txn_ops)?;
        self.check_size(req.encoded_len())?;
        match self.propose(Command::Txn(req), &by).await? {
            CommandResponse::Txn(mut resp) => {
                // Only the outer header is stamped: etcd leaves inner responses with just a revision.
                self.member.stamp(&mut resp.header);
                Ok(Response::new(resp))
            }
            _ => Err(mismatch("Txn")),
        }
    }

    async fn compact(&self, req: Request<CompactionRequest>) -> Result<Response<CompactionResponse>, Status> {
        self.check_grpc_limit(req.get_ref().encoded_len())?;
        let by = requester(&self.member, &req)?;
        let req = req.into_inner();
        let point = Point::BeforeCompact;
        self.member.failpoints().eval(point).await.map_err(|_| point.status())?;
        // `physical` asks to wait for the backend compaction; ours finishes within the apply, so every
        // compaction is already physical when the response is sent.
        match self.propose(Command::Compact(req), &by).await? {
            CommandResponse::Compact(mut resp) => {
                self.member.stamp(&mut resp.header);
                Ok(Response::new(resp))
            }
            _ => Err(mismatch("Compact")),
        }
    }
}

//! The KV service: validate as etcd does before Raft, then read from or propose to the member.

use std::sync::Arc;

use etcd_proto::etcdserverpb::kv_server::Kv;
use etcd_proto::etcdserverpb::{
    CompactionRequest, CompactionResponse, DeleteRangeRequest, DeleteRangeResponse, PutRequest, PutResponse,
    RangeRequest, RangeResponse, TxnRequest, TxnResponse,
};
use prost::Message;
use tonic::{Request, Response, Status};

use super::member::Member;
use crate::apply::{validate, Command, CommandResponse};
use crate::error::EtcdError;
use crate::failpoint::Point;

#[derive(Clone)]
pub struct KvService {
    pub member: Arc<Member>,
}

impl KvService {
    /// etcd refuses a proposal whose encoded request exceeds `--max-request-bytes`.
    fn check_size(&self, encoded_len: usize) -> Result<(), EtcdError> {
        if encoded_len > self.member.config().max_request_bytes {
            return Err(EtcdError::RequestTooLarge);
        }
        Ok(())
    }

    async fn propose(&self, cmd: Command) -> Result<CommandResponse, Status> {
        let resp = self.member.propose(cmd).await?;
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
        let req = req.into_inner();
        validate::check_range(&req)?;
        // A linearizable read first waits for the leader's read index to apply here (ReadIndex); a
        // serializable one is served from whatever this member has applied, stale or not, as etcd does.
        if !req.serializable {
            self.member.read_barrier().await?;
        }
        let mut resp = self.member.read(|sm| sm.range(&req))?;
        self.member.stamp(&mut resp.header);
        Ok(Response::new(resp))
    }

    async fn put(&self, req: Request<PutRequest>) -> Result<Response<PutResponse>, Status> {
        let req = req.into_inner();
        validate::check_put(&req)?;
        self.check_size(req.encoded_len())?;
        match self.propose(Command::Put(req)).await? {
            CommandResponse::Put(mut resp) => {
                self.member.stamp(&mut resp.header);
                Ok(Response::new(resp))
            }
            _ => Err(mismatch("Put")),
        }
    }

    async fn delete_range(&self, req: Request<DeleteRangeRequest>) -> Result<Response<DeleteRangeResponse>, Status> {
        let req = req.into_inner();
        validate::check_delete_range(&req)?;
        self.check_size(req.encoded_len())?;
        match self.propose(Command::DeleteRange(req)).await? {
            CommandResponse::DeleteRange(mut resp) => {
                self.member.stamp(&mut resp.header);
                Ok(Response::new(resp))
            }
            _ => Err(mismatch("DeleteRange")),
        }
    }

    async fn txn(&self, req: Request<TxnRequest>) -> Result<Response<TxnResponse>, Status> {
        let req = req.into_inner();
        validate::check_txn(&req, self.member.config().max_txn_ops)?;
        self.check_size(req.encoded_len())?;
        match self.propose(Command::Txn(req)).await? {
            CommandResponse::Txn(mut resp) => {
                // Only the outer header is stamped: etcd leaves inner responses with just a revision.
                self.member.stamp(&mut resp.header);
                Ok(Response::new(resp))
            }
            _ => Err(mismatch("Txn")),
        }
    }

    async fn compact(&self, req: Request<CompactionRequest>) -> Result<Response<CompactionResponse>, Status> {
        let req = req.into_inner();
        let point = Point::BeforeCompact;
        self.member.failpoints().eval(point).await.map_err(|_| point.status())?;
        // `physical` asks to wait for the backend compaction; ours finishes within the apply, so every
        // compaction is already physical when the response is sent.
        match self.propose(Command::Compact(req)).await? {
            CommandResponse::Compact(mut resp) => {
                self.member.stamp(&mut resp.header);
                Ok(Response::new(resp))
            }
            _ => Err(mismatch("Compact")),
        }
    }
}

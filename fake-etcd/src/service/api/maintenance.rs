//! The Maintenance service: status (from the member's real Raft state), hashes, alarms, defragment and
//! leader moves. While auth is enabled, defragment and the hashes need the root role (etcd's
//! `authMaintenanceServer`); status, alarms and leader moves need nothing.

use std::sync::Arc;

use etcd_proto::etcdserverpb::alarm_request::AlarmAction;
use etcd_proto::etcdserverpb::maintenance_server::Maintenance;
use etcd_proto::etcdserverpb::{
    AlarmRequest, AlarmResponse, DefragmentRequest, DefragmentResponse, HashKvRequest, HashKvResponse, HashRequest,
    HashResponse, MoveLeaderRequest, MoveLeaderResponse, SnapshotRequest, SnapshotResponse, StatusRequest,
    StatusResponse,
};
use tonic::{Request, Response, Status};

use super::token::token_of;
use crate::error::EtcdError;
use crate::service::channel_stream::ChannelStream;
use crate::service::member::internal::Internal;
use crate::service::member::Member;
use crate::types::{MemberId, Revision};

/// The version fake-etcd claims: the etcd release whose behaviour it reproduces.
pub(crate) const ETCD_VERSION: &str = "3.4.23";

/// A fresh bbolt file is 20 KiB before the first key; Status reports file sizes, so ours start there too.
const EMPTY_DB_SIZE_BYTES: i64 = 20 * 1024;

#[derive(Clone)]
pub struct MaintenanceService {
    pub member: Arc<Member>,
}

impl MaintenanceService {
    /// Refuses `req` unless its user may administer the cluster (anyone while auth is disabled), with the
    /// auth package's untranslated error, as etcd 3.4.23 answers (measured: "rpc error: code = Unknown desc =
    /// auth: permission denied").
    fn check_admin<T>(&self, req: &Request<T>) -> Result<(), Status> {
        let by = self.member.auth_info(token_of(req).as_deref()).map_err(EtcdError::untranslated)?;
        Ok(self.member.read(|sm| sm.auth.check_admin(&by)).map_err(EtcdError::untranslated)?)
    }
}

#[tonic::async_trait]
impl Maintenance for MaintenanceService {
    async fn alarm(&self, req: Request<AlarmRequest>) -> Result<Response<AlarmResponse>, Status> {
        let req = req.into_inner();
        // etcd proposes every alarm request through Raft and answers without a header.
        self.member.propose_internal(Internal::Alarm).await?;
        match AlarmAction::try_from(req.action) {
            Ok(AlarmAction::Get) => Ok(Response::new(AlarmResponse { header: None, alarms: Vec::new() })),
            // fake-etcd never runs out of space and never detects corruption, so it raises no alarms; a
            // client that raises one by hand is told so rather than silently ignored.
            _ => Err(EtcdError::Unimplemented("activating or deactivating alarms").into()),
        }
    }

    async fn status(&self, _req: Request<StatusRequest>) -> Result<Response<StatusResponse>, Status> {
        let facts = self.member.status_facts();
        let db_size = EMPTY_DB_SIZE_BYTES + facts.db_size_bytes;
        let header = self.member.header(facts.revision);
        Ok(Response::new(StatusResponse {
            raft_term: header.raft_term,
            header: Some(header),
            version: ETCD_VERSION.to_string(),
            db_size,
            leader: facts.leader.map_or(0, |l| l.0),
            raft_index: facts.commit_index.0,
            raft_applied_index: facts.applied_index.0,
            errors: Vec::new(),
            db_size_in_use: db_size,
            is_learner: false,
        }))
    }

    async fn defragment(&self, req: Request<DefragmentRequest>) -> Result<Response<DefragmentResponse>, Status> {
        self.check_admin(&req)?;
        // Nothing to defragment in memory; the request succeeds as it does on etcd.
        let revision = self.member.status_facts().revision;
        Ok(Response::new(DefragmentResponse { header: Some(self.member.header(revision)) }))
    }

    async fn hash(&self, req: Request<HashRequest>) -> Result<Response<HashResponse>, Status> {
        self.check_admin(&req)?;
        let (hash, revision) = self.member.read(|sm| {
            let rev = sm.mvcc.current_revision();
            sm.mvcc.hash_kv(Revision::ZERO).map(|(h, _)| (h, rev.0))
        })?;
        Ok(Response::new(HashResponse { header: Some(self.member.header(revision)), hash }))
    }

    async fn hash_kv(&self, req: Request<HashKvRequest>) -> Result<Response<HashKvResponse>, Status> {
        self.check_admin(&req)?;
        let req = req.into_inner();
        let (hash, compact, revision) = self.member.read(|sm| {
            let rev = sm.mvcc.current_revision();
            sm.mvcc.hash_kv(Revision(req.revision)).map(|(h, c)| (h, c, rev.0))
        })?;
        Ok(Response::new(HashKvResponse {
            header: Some(self.member.header(revision)),
            hash,
            compact_revision: compact.0,
            hash_revision: 0,
        }))
    }

    type SnapshotStream = ChannelStream<SnapshotResponse>;

    async fn snapshot(&self, _req: Request<SnapshotRequest>) -> Result<Response<Self::SnapshotStream>, Status> {
        // etcdctl expects a bbolt database file; fake-etcd keeps no such file.
        Err(EtcdError::Unimplemented("Maintenance.Snapshot (a bbolt database image)").into())
    }

    async fn move_leader(&self, req: Request<MoveLeaderRequest>) -> Result<Response<MoveLeaderResponse>, Status> {
        let target = MemberId(req.into_inner().target_id);
        self.member.move_leader(target).await?;
        let revision = self.member.status_facts().revision;
        Ok(Response::new(MoveLeaderResponse { header: Some(self.member.header(revision)) }))
    }
}

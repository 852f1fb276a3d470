//! `StateMachine`: applies commands to the MVCC store, the lease table and the auth store, each checked
//! against the permissions of the user who made it (`permit`).

use etcd_proto::etcdserverpb::{
    CompactionRequest, CompactionResponse, DeleteRangeRequest, LeaseGrantResponse, LeaseRevokeResponse, PutRequest,
    RangeRequest, RangeResponse, TxnRequest,
};
use etcd_proto::mvccpb::Event;

use super::command::{Applied, Command, CommandResponse};
use super::permit;
use super::range;
use super::txn;
use super::write_ops::{self, header, LeaseOp};
use crate::auth::{AuthInfo, AuthRequest, AuthStore};
use crate::error::EtcdError;
use crate::lease::Lessor;
use crate::mvcc::{KeyRange, MvccConfig, MvccStore};
use crate::types::{LeaseId, Millis, Revision};

#[derive(Debug)]
pub struct StateMachine {
    pub mvcc: MvccStore,
    pub lessor: Lessor,
    pub auth: AuthStore,
}

impl StateMachine {
    pub fn new(min_lease_ttl_s: i64) -> StateMachine {
        StateMachine::with_config(min_lease_ttl_s, MvccConfig::default())
    }

    /// A state machine whose store runs with `mvcc`'s bug switches (none by default), kept across restores.
    pub(crate) fn with_config(min_lease_ttl_s: i64, mvcc: MvccConfig) -> StateMachine {
        StateMachine {
            mvcc: MvccStore::with_config(mvcc),
            lessor: Lessor::new(min_lease_ttl_s),
            auth: AuthStore::new(),
        }
    }

    /// Serves a Range (linearizability is the shell's concern: it calls this once the member is caught up).
    pub fn range(&self, req: &RangeRequest) -> Result<RangeResponse, EtcdError> {
        range::range(&self.mvcc, req)
    }

    /// Applies one committed command made without a user. An `Err` leaves the state unchanged.
    pub fn apply(&mut self, cmd: Command, now: Millis) -> Result<Applied, EtcdError> {
        self.apply_as(cmd, &AuthInfo::default(), now)
    }

    /// Applies one committed command made by `by`, refused if `by` may not make it (while auth is enabled).
    /// An `Err` leaves the state unchanged.
    pub(crate) fn apply_as(&mut self, cmd: Command, by: &AuthInfo, now: Millis) -> Result<Applied, EtcdError> {
        self.apply_checking(cmd, by, now, txn::RangeChecks::Run)
    }

    /// The #18667 bug, for negative tests only: applies a command another member served as etcd 3.5 did
    /// before the fix, with a txn's range operations (and so their checks) stripped, so that a txn reading
    /// at a compacted revision writes here while it fails on the member that served it.
    pub(crate) fn apply_from_elsewhere_skipping_txn_ranges(
        &mut self,
        cmd: Command,
        by: &AuthInfo,
        now: Millis,
    ) -> Result<Applied, EtcdError> {
        self.apply_checking(cmd, by, now, txn::RangeChecks::Skip)
    }

    fn apply_checking(
        &mut self,
        cmd: Command,
        by: &AuthInfo,
        now: Millis,
        ranges: txn::RangeChecks,
    ) -> Result<Applied, EtcdError> {
        permit::check(&self.auth, &self.lessor, &cmd, by)?;
        let rev_before = self.mvcc.current_revision();
        let applied = match cmd {
            Command::Put(req) => self.put(&req),
            Command::DeleteRange(req) => Ok(self.delete_range(&req)),
            Command::Txn(req) => self.txn(&req, ranges),
            Command::Compact(req) => self.compact(&req),
            Command::LeaseGrant { id, ttl_s } => self.lease_grant(id, ttl_s, now),
            Command::LeaseRevoke(id) => self.lease_revoke(id),
            Command::Auth(req) => self.auth(&req, by),
        };
        // The revision moves by one exactly when something changed, and never on an error.
        let rev_after = self.mvcc.current_revision();
        match &applied {
            Ok(a) if a.events.is_empty() => debug_assert_eq!(rev_after, rev_before),
            Ok(a) => {
                debug_assert_eq!(rev_after, rev_before.next());
                debug_assert!(a.events.iter().all(|e| e.kv.as_ref().is_some_and(|kv| kv.mod_revision == rev_after.0)));
            }
            Err(_) => debug_assert_eq!(rev_after, rev_before),
        }
        applied
    }

    /// A plain Put checks its lease at apply time (etcd's `applierV3backend.Put` with no txn).
    fn put(&mut self, req: &PutRequest) -> Result<Applied, EtcdError> {
        let lease = LeaseId(req.lease);
        if !lease.is_none() && !self.lessor.contains(lease) {
            return Err(EtcdError::LeaseNotFound);
        }
        let mut lease_ops = Vec::new();
        let mut txn = self.mvcc.write();
        // On `KeyNotFound` the txn is dropped uncommitted: etcd consumes the log entry but assigns no revision.
        let response = write_ops::put(&mut txn, req, &mut lease_ops)?;
        let events = txn.end();
        self.finish(CommandResponse::Put(response), events, lease_ops)
    }

    fn delete_range(&mut self, req: &DeleteRangeRequest) -> Applied {
        let mut lease_ops = Vec::new();
        let mut txn = self.mvcc.write();
        let response = write_ops::delete_range(&mut txn, req, &mut lease_ops);
        let events = txn.end();
        write_ops::apply_lease_ops(&mut self.lessor, lease_ops);
        Applied { response: CommandResponse::DeleteRange(response), events }
    }

    fn txn(&mut self, req: &TxnRequest, ranges: txn::RangeChecks) -> Result<Applied, EtcdError> {
        let (response, events, lease_ops) = txn::apply(&mut self.mvcc, &self.lessor, req, ranges)?;
        self.finish(CommandResponse::Txn(response), events, lease_ops)
    }

    fn finish(
        &mut self,
        response: CommandResponse,
        events: Vec<Event>,
        lease_ops: Vec<LeaseOp>,
    ) -> Result<Applied, EtcdError> {
        write_ops::apply_lease_ops(&mut self.lessor, lease_ops);
        Ok(Applied { response, events })
    }

    /// Compaction does not move the revision; its header names the current one. `physical` makes no
    /// difference here: compaction is immediate.
    fn compact(&mut self, req: &CompactionRequest) -> Result<Applied, EtcdError> {
        self.mvcc.compact(Revision(req.revision))?;
        let response = CompactionResponse { header: header(self.mvcc.current_revision()) };
        Ok(Applied { response: CommandResponse::Compact(response), events: Vec::new() })
    }

    fn lease_grant(&mut self, id: LeaseId, ttl_s: i64, now: Millis) -> Result<Applied, EtcdError> {
        let granted_ttl_s = self.lessor.grant(id, ttl_s, now)?;
        let response = LeaseGrantResponse {
            header: header(self.mvcc.current_revision()),
            id: id.0,
            ttl: granted_ttl_s,
            error: String::new(),
        };
        Ok(Applied { response: CommandResponse::LeaseGrant(response), events: Vec::new() })
    }

    /// Auth requests change no key; their header names the current revision.
    fn auth(&mut self, req: &AuthRequest, by: &AuthInfo) -> Result<Applied, EtcdError> {
        let mut response = self.auth.apply(req, by)?;
        *response.header_mut() = header(self.mvcc.current_revision());
        Ok(Applied { response: CommandResponse::Auth(response), events: Vec::new() })
    }

    /// Revoking deletes every attached key, in key order, in one write txn at one revision.
    fn lease_revoke(&mut self, id: LeaseId) -> Result<Applied, EtcdError> {
        let keys = self.lessor.revoke(id)?;
        let mut txn = self.mvcc.write();
        for key in &keys {
            let deleted = txn.delete_range(&KeyRange::new(key, b""));
            // Pair of the attach made by the put: a key attached to this lease is live and carries its id.
            debug_assert!(deleted.len() == 1 && deleted[0].lease == id.0, "lease {id} held {key:?}: {deleted:?}");
        }
        let events = txn.end();
        let response = LeaseRevokeResponse { header: header(self.mvcc.current_revision()) };
        Ok(Applied { response: CommandResponse::LeaseRevoke(response), events })
    }
}

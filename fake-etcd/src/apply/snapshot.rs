//! The state machine as bytes, for Raft snapshots: the MVCC store (index, record log, revisions, compaction
//! point), the lease table and the auth store (users, roles, the enabled flag, the auth revision; simple
//! tokens are the member's, in memory only, as etcd's are), serialised with serde into bincode. The Raft layer treats the bytes as
//! opaque; only [`StateMachine::restore`] reads them.
//!
//! Lease deadlines are points on the snapshotting member's clock, which means nothing to another member, so
//! a restore re-bases every deadline to `now + TTL` on the restoring member's clock. That is what etcd's
//! followers effectively hold (only the leader expires leases, and a new leader extends them all anyway).

use super::state::StateMachine;
use crate::auth::AuthStore;
use crate::lease::Lessor;
use crate::mvcc::MvccStore;
use crate::types::Millis;

/// Snapshot bytes that do not decode: they were not produced by [`StateMachine::snapshot`] of this version.
#[derive(Debug, thiserror::Error)]
#[error("state machine snapshot does not decode: {0}")]
pub(crate) struct SnapshotError(String);

#[derive(serde::Serialize)]
struct SnapshotRef<'a> {
    mvcc: &'a MvccStore,
    lessor: &'a Lessor,
    auth: &'a AuthStore,
}

#[derive(serde::Deserialize)]
struct SnapshotOwned {
    mvcc: MvccStore,
    lessor: Lessor,
    auth: AuthStore,
}

impl StateMachine {
    /// The whole state as bytes.
    pub(crate) fn snapshot(&self) -> Vec<u8> {
        bincode::serialize(&SnapshotRef { mvcc: &self.mvcc, lessor: &self.lessor, auth: &self.auth })
            .expect("serialising in-memory maps to a Vec cannot fail")
    }

    /// Whether `bytes` decode as a snapshot this version takes: what a member checks before it lets a peer's
    /// snapshot into Raft, since a restore that fails afterwards cannot be undone.
    pub(crate) fn snapshot_decodes(bytes: &[u8]) -> bool {
        bincode::deserialize::<SnapshotOwned>(bytes).is_ok()
    }

    /// Replaces the whole state with a snapshot's; lease deadlines restart from `now` (see the module doc).
    /// The store keeps this state machine's configuration (`crate::mvcc::MvccStore::adopt`).
    pub(crate) fn restore(&mut self, bytes: &[u8], now: Millis) -> Result<(), SnapshotError> {
        let SnapshotOwned { mvcc, mut lessor, auth } =
            bincode::deserialize(bytes).map_err(|e| SnapshotError(e.to_string()))?;
        lessor.promote(now, 0);
        self.mvcc.adopt(mvcc);
        self.lessor = lessor;
        self.auth = auth;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use etcd_proto::etcdserverpb::{CompactionRequest, DeleteRangeRequest, PutRequest, RangeRequest};

    use super::*;
    use crate::apply::Command;
    use crate::auth::{AuthInfo, AuthRequest};
    use crate::mvcc::KeyRange;
    use crate::types::{LeaseId, Revision};

    const NOW: Millis = Millis(5_000);

    fn put(key: &str, value: &str, lease: i64) -> Command {
        Command::Put(PutRequest {
            key: key.as_bytes().to_vec(),
            value: value.as_bytes().to_vec(),
            lease,
            ..PutRequest::default()
        })
    }

    fn busy_state_machine() -> StateMachine {
        let mut sm = StateMachine::new(2);
        let lease = LeaseId(0x77);
        let commands = [
            put("a", "1", 0),
            put("b", "1", 0),
            put("a", "2", 0),
            Command::LeaseGrant { id: lease, ttl_s: 30 },
            put("leased/x", "x", lease.0),
            put("leased/y", "y", lease.0),
            Command::DeleteRange(DeleteRangeRequest { key: b"b".to_vec(), ..DeleteRangeRequest::default() }),
            put("c", "1", 0),
            Command::Compact(CompactionRequest { revision: 4, physical: false }),
            put("a", "3", 0),
        ];
        for cmd in commands {
            sm.apply(cmd, NOW).unwrap();
        }
        let auth = [
            AuthRequest::UserAdd { name: "root".into(), hashed_password: Some("h".into()) },
            AuthRequest::UserGrantRole { user: "root".into(), role: "root".into() },
            AuthRequest::RoleAdd { name: "r".into() },
            AuthRequest::Enable,
        ];
        for req in auth {
            sm.apply(Command::Auth(req), NOW).unwrap();
        }
        sm
    }

    fn everything(sm: &StateMachine) -> Vec<u8> {
        let all = RangeRequest { key: vec![0], range_end: vec![0], ..RangeRequest::default() };
        format!("{:?}", sm.range(&all).unwrap()).into_bytes()
    }

    #[test]
    fn a_restored_state_machine_is_the_same_state_machine() {
        let original = busy_state_machine();
        let bytes = original.snapshot();
        let mut restored = StateMachine::new(2);
        restored.restore(&bytes, NOW).unwrap();

        // Same bytes again (maps serialise in key order, deadlines re-base to the same instant).
        assert_eq!(restored.snapshot(), bytes);
        assert_eq!(restored.mvcc.current_revision(), original.mvcc.current_revision());
        assert_eq!(restored.mvcc.compact_revision_raw(), Revision(4));
        assert_eq!(restored.auth, original.auth);
        assert!(restored.auth.is_enabled() && restored.auth.role("r").is_some());
        assert_eq!(everything(&restored), everything(&original));
        // History kept by compaction replays the same way for watchers.
        let all = KeyRange::new(&[0], &[0]);
        let to = original.mvcc.current_revision();
        assert_eq!(
            restored.mvcc.events(&all, Revision(4), to).unwrap(),
            original.mvcc.events(&all, Revision(4), to).unwrap()
        );
        assert_eq!(restored.lessor.time_to_live(LeaseId(0x77), NOW), original.lessor.time_to_live(LeaseId(0x77), NOW));

        // And it goes on the same way: a revoke deletes the same keys at the same revision.
        let mut original = original;
        // Auth is enabled in both: a revoke without a user is refused alike, and root's goes through.
        let revoke = Command::LeaseRevoke(LeaseId(0x77));
        assert_eq!(original.apply(revoke.clone(), NOW), Err(crate::EtcdError::UserEmpty));
        assert_eq!(restored.apply(revoke.clone(), NOW), Err(crate::EtcdError::UserEmpty));
        let root = AuthInfo { user: "root".into(), revision: original.auth.revision() };
        let a = original.apply_as(revoke.clone(), &root, NOW).unwrap();
        let b = restored.apply_as(revoke, &root, NOW).unwrap();
        assert_eq!(a, b);
        assert_eq!(a.events.len(), 2);
    }

    #[test]
    fn restore_rebases_lease_deadlines_and_rejects_garbage() {
        let original = busy_state_machine();
        let mut restored = StateMachine::new(2);
        let later = Millis(NOW.0 + 60_000);
        restored.restore(&original.snapshot(), later).unwrap();
        // Granted for 30 s at NOW, the lease would have expired by `later`; restored, it runs from `later`.
        assert!(original.lessor.expired(later).contains(&LeaseId(0x77)));
        assert!(restored.lessor.expired(later).is_empty());
        assert_eq!(restored.lessor.expired(later.plus_s(30)), vec![LeaseId(0x77)]);
        assert!(restored.restore(&[1, 2, 3], NOW).is_err());
        // A failed restore leaves the state as it was.
        assert_eq!(everything(&restored), everything(&original));
    }
}

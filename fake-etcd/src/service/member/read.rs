//! Reads. A serializable read is served from whatever this member has applied, stale or not, as etcd does.
//! A linearizable read first passes a barrier: the leader confirms its commit index with a quorum
//! (ReadIndex), and the read waits until this member has applied that far.

use std::collections::BTreeMap;

use tokio::sync::oneshot;

use super::Member;
use crate::apply::StateMachine;
use crate::error::EtcdError;
use crate::raft::ReadState;
use crate::types::LogIndex;

/// The linearizable reads waiting at their barrier, by the sequence number their ReadIndex context carried.
#[derive(Default)]
pub(super) struct ReadWaiters {
    /// Reads waiting for the leader's read index.
    waiting: BTreeMap<u64, oneshot::Sender<()>>,
    /// Read indexes known, waiting for the apply to catch up.
    known: Vec<(LogIndex, u64)>,
}

impl ReadWaiters {
    fn wait(&mut self, ctx: u64) -> oneshot::Receiver<()> {
        let (tx, rx) = oneshot::channel();
        self.waiting.insert(ctx, tx);
        rx
    }

    fn forget(&mut self, ctx: u64) {
        self.waiting.remove(&ctx);
    }

    /// Raft answered a ReadIndex request: the read may go ahead once `rs.index` is applied.
    pub(super) fn index_known(&mut self, rs: ReadState) {
        // The context is the asking member's id and its sequence number (`Replica::read_ctx`).
        let Some(Ok(bytes)) = rs.request_ctx.get(8..).map(<[u8; 8]>::try_from) else { return };
        self.known.push((LogIndex(rs.index), u64::from_be_bytes(bytes)));
    }

    /// Lets every read whose read index is applied go ahead.
    pub(super) fn wake(&mut self, applied: LogIndex) {
        let (due, later): (Vec<_>, Vec<_>) = self.known.drain(..).partition(|(i, _)| *i <= applied);
        self.known = later;
        for (_, ctx) in due {
            if let Some(waiter) = self.waiting.remove(&ctx) {
                let _ = waiter.send(());
            }
        }
    }
}

impl Member {
    /// Runs a read against the state machine as this member has applied it (a serializable read).
    pub(crate) fn read<T>(&self, f: impl FnOnce(&StateMachine) -> T) -> T {
        f(&self.lock().sm)
    }

    /// Waits until this member has applied everything committed when the read was asked for, as the leader
    /// confirms with a quorum (ReadIndex). A read after this returns is linearizable.
    pub(crate) async fn read_barrier(&self) -> Result<(), EtcdError> {
        let (ctx, rx) = {
            let mut st = self.lock();
            let (ctx, bytes) = st.raft.read_ctx();
            let rx = st.reads.wait(ctx);
            st.raft.node.read_index(bytes);
            st.drive(self);
            (ctx, rx)
        };
        match tokio::time::timeout(self.config.request_timeout, rx).await {
            Ok(Ok(())) => Ok(()),
            _ => {
                // With no leader raft-rs drops the request silently; etcd times such reads out.
                self.lock().reads.forget(ctx);
                Err(EtcdError::Timeout)
            }
        }
    }
}

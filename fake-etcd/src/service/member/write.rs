//! The write path: [`Member::propose`] is the single entry for every mutating request (lease grants and
//! revokes included). It proposes the command to Raft (a follower's raft-rs forwards it to the leader), and
//! waits until this member has applied the entry carrying its `ProposalId`, then answers with what the state
//! machine said.
//!
//! A proposal does not run Raft's Ready loop itself: it wakes the member's Ready loop task, which runs one
//! turn for every proposal made since its last one, as etcd's raft loop does. So proposals that arrive while
//! a turn is being handled share the next one: one append, one sync, one append message per follower.

use std::collections::BTreeMap;
use std::sync::atomic::Ordering;

use tokio::sync::oneshot;

use super::internal::Internal;
use super::{Member, State};
use crate::apply::{Command, CommandResponse};
use crate::auth::AuthInfo;
use crate::error::EtcdError;
use crate::raft::{encode_command_as, encode_internal, RaftError};

/// What a proposer is told once its entry applied: the state machine's answer (`None` for internal records).
pub(super) type Reply = Result<Option<CommandResponse>, EtcdError>;

/// The clients waiting for their proposals to apply on this member, by the sequence number of their
/// `ProposalId`.
#[derive(Default)]
pub(super) struct Proposals {
    waiting: BTreeMap<u64, oneshot::Sender<Reply>>,
}

impl Proposals {
    fn wait(&mut self, seq: u64) -> oneshot::Receiver<Reply> {
        let (tx, rx) = oneshot::channel();
        self.waiting.insert(seq, tx);
        rx
    }

    fn forget(&mut self, seq: u64) {
        self.waiting.remove(&seq);
    }

    /// The entry this member proposed as `seq` applied: tells its client, if it still waits.
    pub(super) fn answer(&mut self, seq: u64, reply: Reply) {
        if let Some(waiter) = self.waiting.remove(&seq) {
            // The client may have timed out and gone; the entry applied anyway.
            let _ = waiter.send(reply);
        }
    }
}

impl Member {
    /// The Ready loop for proposals, as etcd's raft goroutine runs it: a proposal only enters raft-rs's
    /// unstable log, and this task, woken once, runs one Ready turn for everything proposed since the last.
    /// So one append, one sync and one append message per follower carry every proposal that arrived while
    /// the previous turn was being handled (in the real build's single-threaded runtime, every request whose
    /// handler ran before this task did). Other inputs (ticks, peer messages) still drive at once, and their
    /// turns take any pending proposals along.
    pub(in crate::service) async fn run_ready_loop(&self) {
        loop {
            self.ready.notified().await;
            self.lock().drive(self);
        }
    }

    /// Asks for a Ready turn after a proposal: from the Ready loop task once the member is served, at once
    /// before that (no task runs yet, and a member that is never served must still make progress).
    fn ready_soon(&self, st: &mut State) {
        if self.tasks_started.load(Ordering::SeqCst) {
            // A stored permit if the task is busy: a proposal made during a turn gets the next one.
            self.ready.notify_one();
        } else {
            st.drive(self);
        }
    }

    /// The write path: every mutating request, lease grants and revokes included, made without a user.
    pub(crate) async fn propose(&self, cmd: Command) -> Result<CommandResponse, EtcdError> {
        self.propose_as(cmd, &AuthInfo::default()).await
    }

    /// The write path for a request made by `by`: every member checks `by`'s permissions when it applies it.
    pub(crate) async fn propose_as(&self, cmd: Command, by: &AuthInfo) -> Result<CommandResponse, EtcdError> {
        match self.submit(encode_command_as(&cmd, by)).await? {
            Some(resp) => Ok(resp),
            None => unreachable!("a command entry is answered with the state machine's response"),
        }
    }

    /// Proposes one of the shell's own records and waits for it to apply.
    pub(crate) async fn propose_internal(&self, record: Internal) -> Result<(), EtcdError> {
        self.submit(encode_internal(&record.encode())).await.map(|_| ())
    }

    async fn submit(&self, data: Vec<u8>) -> Result<Option<CommandResponse>, EtcdError> {
        let proposed = {
            let mut st = self.lock();
            let seq = st.raft.next_seq();
            let id = st.raft.proposal_id(seq);
            match st.raft.node.propose(data, id.encode()) {
                Ok(()) => {
                    let rx = st.proposals.wait(seq);
                    self.ready_soon(&mut st);
                    Some((seq, rx))
                }
                Err(RaftError::ProposalDropped) => None,
                Err(e) => unreachable!("proposing to a local node fails only for want of a leader: {e}"),
            }
        };
        let Some((seq, rx)) = proposed else {
            // No leader: the proposal will never commit. etcd's client waits out its request timeout in this
            // state; answering at once would let clients spin.
            tokio::time::sleep(self.config.request_timeout).await;
            return Err(EtcdError::NoLeader);
        };
        match tokio::time::timeout(self.config.request_timeout, rx).await {
            Ok(Ok(reply)) => reply,
            _ => {
                // The entry may still commit later (the leader went away with it, or it is slow); the client
                // cannot know, exactly as with etcd's "request timed out".
                self.lock().proposals.forget(seq);
                Err(EtcdError::Timeout)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use etcd_proto::etcdserverpb::PutRequest;

    use super::*;
    use crate::service::MemberConfig;
    use crate::types::Revision;

    fn syncs(member: &Member) -> u64 {
        member.lock().raft.node.disk().sync_count()
    }

    /// Proposals made while the Ready loop task has not run yet share its next turn: one sync for all of
    /// them, not one each.
    #[tokio::test]
    async fn proposals_made_together_share_one_ready_turn_and_one_sync() {
        let config = MemberConfig::single("m", vec!["http://127.0.0.1:2380".into()], vec![], "batch");
        let member = Member::new(config, 1).expect("a fresh single member opens");
        assert!(member.claim_tasks());
        let ready_loop = tokio::spawn({
            let member = member.clone();
            async move { member.run_ready_loop().await }
        });
        let before = syncs(&member);
        let puts: Vec<_> = (0..16)
            .map(|i| {
                let member = member.clone();
                tokio::spawn(async move {
                    let put =
                        PutRequest { key: format!("k{i}").into_bytes(), value: b"v".to_vec(), ..PutRequest::default() };
                    member.propose(Command::Put(put)).await
                })
            })
            .collect();
        for put in puts {
            put.await.expect("the proposal task ends").expect("the put applies");
        }
        // The current-thread test runtime runs every proposing task before the Ready loop task it woke.
        let used = syncs(&member) - before;
        assert_eq!(used, 1, "16 proposals made together took {used} syncs");
        assert_eq!(member.read(|sm| sm.mvcc.current_revision()), Revision(17));
        ready_loop.abort();
    }
}

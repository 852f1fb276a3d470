//! One running member: the cores and its Raft node behind a lock, the write path every mutating request takes,
//! linearizable reads, the watch streams' outboxes, and the clock.
//!
//! The lock is a plain mutex that is never held across an `.await`: every core call is synchronous and
//! short. [`Member::propose`] is the single entry for writes: it proposes the command to Raft (a follower's
//! raft-rs forwards it to the leader), and waits until this member has applied the entry carrying its
//! [`ProposalId`], then answers with what the state machine said. Every member applies every committed
//! entry (see `replica`), so watches and serializable reads work on every member.
//!
//! A proposal does not run Raft's Ready loop itself: it wakes the member's Ready loop task, which runs one
//! turn for every proposal made since its last one, as etcd's raft loop does. So proposals that arrive while
//! a turn is being handled share the next one: one append, one sync, one append message per follower.

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use etcd_proto::etcdserverpb::{ResponseHeader, WatchRequest, WatchResponse};
use etcd_proto::mvccpb::Event;
use tokio::sync::{mpsc, oneshot, Notify};
use tokio::time::Instant;

use super::config::{MemberConfig, MemberEvent, PeerSpec};
use super::internal::Internal;
use super::outbox::{Outbound, OutboundStream};
use super::replica::{Replica, Reply};
use super::transport;
use crate::apply::{Command, CommandResponse, StateMachine};
use crate::error::EtcdError;
use crate::failpoint::Failpoints;
use crate::lease::{LeaseIdGen, TimeToLive};
use crate::raft::{codec, encode_command, encode_internal, Message, RaftError, Role};
use crate::types::{LeaseId, LogIndex, MemberId, Millis, Revision};
use crate::watch::{HubConfig, StreamId, WatchHub};

/// A watch stream stops receiving live events once this many responses wait unsent (etcd's per-stream send
/// buffer is 128), and catches up once the client has drained it to [`RESUME_BELOW`].
pub const STALL_AT: usize = 128;
pub const RESUME_BELOW: usize = 64;

pub struct Member {
    config: MemberConfig,
    started: Instant,
    /// The current Raft term, kept outside the lock because every response header carries it and headers
    /// are stamped while the lock is held.
    term: AtomicU64,
    state: Mutex<State>,
    /// Raft messages for other members; the transport task takes the receiver when the member is served.
    peer_tx: mpsc::UnboundedSender<Message>,
    peer_rx: Mutex<Option<mpsc::UnboundedReceiver<Message>>>,
    tasks_started: AtomicBool,
    /// Wakes the Ready loop task (see [`Member::run_ready_loop`]) after proposals were handed to Raft.
    ready: Notify,
}

pub(super) struct State {
    pub(super) sm: StateMachine,
    pub(super) hub: WatchHub,
    pub(super) outboxes: BTreeMap<StreamId, Outbox>,
    lease_ids: LeaseIdGen,
    pub(super) raft: Replica,
}

pub(super) struct Outbox {
    tx: mpsc::UnboundedSender<WatchResponse>,
    in_flight: Arc<AtomicUsize>,
    stalled: bool,
}

/// What the member reports in Maintenance.Status.
#[derive(Clone, Copy, Debug)]
pub struct StatusFacts {
    pub revision: i64,
    pub db_size_bytes: i64,
    pub leader: Option<MemberId>,
    /// The highest index known committed (etcd's `raftIndex`).
    pub commit_index: LogIndex,
    pub applied_index: LogIndex,
}

impl Member {
    /// Opens the member on `config.disk` (empty: a new cluster is bootstrapped; otherwise the log is replayed)
    /// and runs Raft until it has nothing more to do on its own. A cluster of one elects itself at once.
    ///
    /// `start_ms` seeds the lease id generator and the proposal ids (wall-clock milliseconds in the real
    /// build, simulated ones under madsim), so that a restarted member does not reuse ids of its past life.
    pub fn new(config: MemberConfig, start_ms: u64) -> Result<Arc<Member>, RaftError> {
        let hub_config = HubConfig {
            max_request_bytes: config.max_request_bytes,
            restore_lowers_watchers: config.restore_lowers_watchers,
            ..HubConfig::default()
        };
        let raft = Replica::open(&config, start_ms)?;
        let state = State {
            sm: StateMachine::new(config.min_lease_ttl_s()),
            hub: WatchHub::new(hub_config),
            outboxes: BTreeMap::new(),
            lease_ids: LeaseIdGen::new(config.member_id, start_ms),
            raft,
        };
        let (peer_tx, peer_rx) = mpsc::unbounded_channel();
        let member = Arc::new(Member {
            config,
            started: Instant::now(),
            term: AtomicU64::new(0),
            state: Mutex::new(state),
            peer_tx,
            peer_rx: Mutex::new(Some(peer_rx)),
            tasks_started: AtomicBool::new(false),
            ready: Notify::new(),
        });
        {
            let mut st = member.lock();
            if member.config.peers.len() == 1 {
                // A cluster of one needs no election timeout to know it wins; etcd's takes one, which only
                // delays start-up.
                st.raft.node.campaign()?;
            }
            st.drive(&member);
        }
        Ok(member)
    }

    pub fn config(&self) -> &MemberConfig {
        &self.config
    }

    pub fn failpoints(&self) -> &Failpoints {
        &self.config.failpoints
    }

    /// Milliseconds since the member started, on the runtime's clock (simulated under madsim).
    pub fn now(&self) -> Millis {
        Millis(self.started.elapsed().as_millis() as u64)
    }

    pub(super) fn lock(&self) -> MutexGuard<'_, State> {
        // A poisoned lock means a core panicked mid-request, which is a bug; keep serving what is left is not
        // an option, so the panic propagates.
        self.state.lock().expect("member state lock poisoned")
    }

    pub(super) fn set_term(&self, term: u64) {
        self.term.store(term, Ordering::SeqCst);
    }

    pub(super) fn send_to_peer(&self, msg: Message) {
        // The receiver is gone only when the member is shutting down; Raft copes with lost messages.
        let _ = self.peer_tx.send(msg);
    }

    /// The receiving end of the outgoing Raft messages, once (for the transport task).
    pub(super) fn take_peer_queue(&self) -> Option<mpsc::UnboundedReceiver<Message>> {
        self.peer_rx.lock().expect("peer queue lock poisoned").take()
    }

    /// Whether the member's background tasks were started already (by the first `serve`).
    pub(super) fn claim_tasks(&self) -> bool {
        !self.tasks_started.swap(true, Ordering::SeqCst)
    }

    /// The header etcd puts on a response produced at `revision` (0 leaves it out, as etcd's JSON shows).
    pub fn header(&self, revision: i64) -> ResponseHeader {
        ResponseHeader {
            cluster_id: self.config.cluster_id.0,
            member_id: self.config.member_id.0,
            revision,
            raft_term: self.term.load(Ordering::SeqCst),
        }
    }

    /// Fills cluster id, member id and term into a header the cores left with only a revision.
    pub fn stamp(&self, header: &mut Option<ResponseHeader>) {
        let revision = header.as_ref().map_or(0, |h| h.revision);
        *header = Some(self.header(revision));
    }

    /// Runs a read against the state machine as this member has applied it (a serializable read).
    pub fn read<T>(&self, f: impl FnOnce(&StateMachine) -> T) -> T {
        f(&self.lock().sm)
    }

    /// Waits until this member has applied everything committed when the read was asked for, as the leader
    /// confirms with a quorum (ReadIndex). A read after this returns is linearizable.
    pub async fn read_barrier(&self) -> Result<(), EtcdError> {
        let (ctx, rx) = {
            let mut st = self.lock();
            let (tx, rx) = oneshot::channel();
            let ctx = st.raft.next_seq();
            st.raft.read_waiters.insert(ctx, tx);
            st.raft.node.read_index(ctx.to_be_bytes().to_vec());
            st.drive(self);
            (ctx, rx)
        };
        match tokio::time::timeout(self.config.request_timeout, rx).await {
            Ok(Ok(())) => Ok(()),
            _ => {
                // With no leader raft-rs drops the request silently; etcd times such reads out.
                self.lock().raft.read_waiters.remove(&ctx);
                Err(EtcdError::Timeout)
            }
        }
    }

    /// The Ready loop for proposals, as etcd's raft goroutine runs it: a proposal only enters raft-rs's
    /// unstable log, and this task, woken once, runs one Ready turn for everything proposed since the last.
    /// So one append, one sync and one append message per follower carry every proposal that arrived while
    /// the previous turn was being handled (in the real build's single-threaded runtime, every request whose
    /// handler ran before this task did). Other inputs (ticks, peer messages) still drive at once, and their
    /// turns take any pending proposals along.
    pub(super) async fn run_ready_loop(&self) {
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

    /// The write path: every mutating request, lease grants and revokes included.
    pub async fn propose(&self, cmd: Command) -> Result<CommandResponse, EtcdError> {
        match self.submit(encode_command(&cmd)).await? {
            Some(resp) => Ok(resp),
            None => unreachable!("a command entry is answered with the state machine's response"),
        }
    }

    /// Proposes one of the shell's own records and waits for it to apply.
    pub async fn propose_internal(&self, record: Internal) -> Result<(), EtcdError> {
        self.submit(encode_internal(&record.encode())).await.map(|_| ())
    }

    async fn submit(&self, data: Vec<u8>) -> Result<Option<CommandResponse>, EtcdError> {
        let proposed = {
            let mut st = self.lock();
            let (tx, rx) = oneshot::channel::<Reply>();
            let seq = st.raft.next_seq();
            let id = st.raft.proposal_id(seq);
            match st.raft.node.propose(data, id.encode()) {
                Ok(()) => {
                    st.raft.waiters.insert(seq, tx);
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
                self.lock().raft.waiters.remove(&seq);
                Err(EtcdError::Timeout)
            }
        }
    }

    /// One Raft tick (the heartbeat interval passed).
    pub fn tick(&self) {
        let mut st = self.lock();
        st.raft.node.tick();
        st.drive(self);
    }

    /// Raft messages from a peer. Messages that do not decode, or come from a member Raft does not know, are
    /// dropped: Raft retries what matters.
    pub fn deliver(&self, messages: &[Vec<u8>]) {
        let mut st = self.lock();
        for bytes in messages {
            let Ok(msg) = codec::decode_message(bytes) else { continue };
            if msg.to != self.config.member_id.0 {
                continue;
            }
            let _ = st.raft.node.step(msg);
        }
        st.drive(self);
    }

    /// The transport's verdict on messages it could not deliver.
    pub fn report_undelivered(&self, to: MemberId, snapshot: bool) {
        let mut st = self.lock();
        st.raft.node.report_unreachable(to);
        if snapshot {
            st.raft.node.report_snapshot(to, false);
        }
        st.drive(self);
    }

    pub fn report_snapshot_delivered(&self, to: MemberId) {
        let mut st = self.lock();
        st.raft.node.report_snapshot(to, true);
        st.drive(self);
    }

    /// etcd's MoveLeader: only the leader transfers; the call returns once `target` leads, or times out.
    pub async fn move_leader(&self, target: MemberId) -> Result<(), EtcdError> {
        {
            let mut st = self.lock();
            if !st.raft.node.is_leader() {
                return Err(EtcdError::NotLeader);
            }
            if !self.config.peers.iter().any(|p| p.id == target) {
                return Err(EtcdError::BadLeaderTransferee);
            }
            if target == self.config.member_id {
                return Ok(());
            }
            st.raft.node.transfer_leader(target);
            st.drive(self);
        }
        let deadline = Instant::now() + self.config.request_timeout;
        while Instant::now() < deadline {
            if self.lock().raft.leader == Some(target) {
                return Ok(());
            }
            tokio::time::sleep(self.config.raft.tick_interval).await;
        }
        Err(EtcdError::Timeout)
    }

    /// Picks the id for a LeaseGrant with ID = 0, before the grant is proposed.
    pub fn next_lease_id(&self) -> LeaseId {
        let mut st = self.lock();
        loop {
            let id = st.lease_ids.next();
            if !st.sm.lessor.contains(id) {
                return id;
            }
        }
    }

    /// Keep-alive: the leader renews without going through Raft; a follower forwards to the leader, as etcd
    /// does, because only the leader's deadlines decide expiry.
    pub async fn renew_lease(&self, id: LeaseId) -> Result<i64, EtcdError> {
        let cluster_id = self.config.cluster_id;
        self.at_leader(
            || self.renew_lease_as_leader(id),
            |leader, timeout| async move { transport::forward_lease_renew(&leader, cluster_id, id, timeout).await },
        )
        .await
    }

    /// The leader's side of a forwarded keep-alive; `None` when this member does not lead.
    pub fn renew_lease_as_leader(&self, id: LeaseId) -> Option<Result<i64, EtcdError>> {
        let now = self.now();
        let mut st = self.lock();
        st.raft.node.is_leader().then(|| st.sm.lessor.renew(id, now))
    }

    /// LeaseTimeToLive: the leader answers from its own lessor; a follower asks the leader, as etcd 3.4 does,
    /// because only the leader's deadlines are current (keep-alives renew them there alone, and a new leader
    /// extends them). `Ok(None)` is an unknown or expired lease.
    pub async fn lease_time_to_live(&self, id: LeaseId) -> Result<Option<TimeToLive>, EtcdError> {
        let cluster_id = self.config.cluster_id;
        self.at_leader(
            || self.lease_time_to_live_as_leader(id).map(Ok),
            |leader, timeout| async move {
                transport::forward_lease_time_to_live(&leader, cluster_id, id, timeout).await
            },
        )
        .await
    }

    /// What etcd does with the lease requests that bypass Raft (`LeaseRenew`, `LeaseTimeToLive` in
    /// `v3_server.go`): `local` answers if this member leads; otherwise the request is forwarded to the
    /// leader, and while there is none, or the one asked stepped down or did not answer, it is asked again
    /// once a leader is known (waiting an election timeout at a time), until the request timeout: then "no
    /// leader" if none was ever known, else "request timed out". Any other answer is final.
    async fn at_leader<T, Fut>(
        &self,
        local: impl Fn() -> Option<Result<T, EtcdError>>,
        forward: impl Fn(PeerSpec, Duration) -> Fut,
    ) -> Result<T, EtcdError>
    where
        Fut: Future<Output = Result<T, EtcdError>>,
    {
        let deadline = Instant::now() + self.config.request_timeout;
        loop {
            let leader = match local() {
                Some(answer) => return answer,
                None => self.lock().raft.leader,
            };
            let now = Instant::now();
            let wait = match leader.and_then(|l| self.peer(l).cloned()) {
                Some(peer) if now < deadline => match forward(peer, deadline - now).await {
                    Err(EtcdError::NotLeader | EtcdError::Timeout | EtcdError::NoLeader) => {
                        self.config.raft.tick_interval
                    }
                    answer => return answer,
                },
                Some(_) => self.config.raft.tick_interval,
                None => self.config.election_timeout,
            };
            if Instant::now() + wait >= deadline {
                return Err(if leader.is_some() { EtcdError::Timeout } else { EtcdError::NoLeader });
            }
            tokio::time::sleep(wait).await;
        }
    }

    /// The leader's side of LeaseTimeToLive (also a forwarded one); `None` when this member does not lead.
    pub fn lease_time_to_live_as_leader(&self, id: LeaseId) -> Option<Option<TimeToLive>> {
        let now = self.now();
        let st = self.lock();
        st.raft.node.is_leader().then(|| st.sm.lessor.time_to_live(id, now))
    }

    /// Revokes every lease whose deadline passed (what etcd's leader proposes every 500 ms; followers never
    /// expire leases themselves).
    pub async fn revoke_expired_leases(&self) {
        let now = self.now();
        let expired = {
            let st = self.lock();
            if !st.raft.node.is_leader() {
                return;
            }
            st.sm.lessor.expired(now)
        };
        for id in expired {
            self.config.events.notify(MemberEvent::LeaseExpired { id });
            match self.propose(Command::LeaseRevoke(id)).await {
                Ok(resp) => {
                    if let CommandResponse::LeaseRevoke(r) = &resp {
                        let revision = Revision(r.header.as_ref().map_or(0, |h| h.revision));
                        self.config.events.notify(MemberEvent::LeaseRevoked { id, revision });
                    }
                    tracing::debug!(lease = %id, "lease expired and revoked")
                }
                // A client revoked it between the scan and the proposal.
                Err(EtcdError::LeaseNotFound) => {}
                Err(e) => tracing::warn!(lease = %id, error = %e, "revoking an expired lease failed"),
            }
        }
    }

    pub fn status_facts(&self) -> StatusFacts {
        let st = self.lock();
        let status = st.raft.node.status();
        StatusFacts {
            revision: st.sm.mvcc.current_revision().0,
            db_size_bytes: st.sm.mvcc.size_bytes(),
            leader: st.raft.leader,
            commit_index: status.commit,
            applied_index: st.raft.applied,
        }
    }

    pub fn role(&self) -> Role {
        self.lock().raft.node.role()
    }

    /// A member of the initial cluster by id.
    pub fn peer(&self, id: MemberId) -> Option<&PeerSpec> {
        self.config.peers.iter().find(|p| p.id == id)
    }

    /// Every member with the client URLs it published (or, before it has, the ones configured for it).
    pub fn members(&self) -> Vec<PeerSpec> {
        let st = self.lock();
        let mut members = self.config.peers.clone();
        for m in &mut members {
            if let Some(urls) = st.raft.client_urls.get(&m.id) {
                m.client_urls = urls.clone();
            }
        }
        members
    }

    // ---- watch streams ----

    /// Opens a watch stream; returns its id, the response stream to hand to gRPC, and the signal that the
    /// client drained a stalled stream.
    pub fn open_watch_stream(&self) -> (StreamId, OutboundStream, Arc<Notify>) {
        let (tx, rx) = mpsc::unbounded_channel();
        let in_flight = Arc::new(AtomicUsize::new(0));
        let drained = Arc::new(Notify::new());
        let mut st = self.lock();
        let id = st.hub.open_stream();
        st.outboxes.insert(id, Outbox { tx, in_flight: in_flight.clone(), stalled: false });
        let outbound = Outbound { rx, in_flight, drained: drained.clone(), resume_below: RESUME_BELOW };
        (id, OutboundStream::new(outbound), drained)
    }

    pub fn watch_request(&self, stream: StreamId, req: WatchRequest) {
        let mut st = self.lock();
        let st = &mut *st;
        let responses = st.hub.handle(stream, req, &st.sm.mvcc);
        let addressed: Vec<(StreamId, WatchResponse)> = responses.into_iter().map(|r| (stream, r)).collect();
        st.dispatch(addressed, self);
    }

    /// The client drained a stalled stream below the low-water mark: catch its watchers up.
    pub fn watch_drained(&self, stream: StreamId) {
        let mut st = self.lock();
        let st = &mut *st;
        let Some(outbox) = st.outboxes.get_mut(&stream) else { return };
        if !outbox.stalled {
            return;
        }
        outbox.stalled = false;
        let responses = st.hub.sync(Some(stream), &st.sm.mvcc);
        st.dispatch(responses, self);
    }

    pub fn close_watch_stream(&self, stream: StreamId) {
        let mut st = self.lock();
        st.outboxes.remove(&stream);
        st.hub.close_stream(stream);
    }

    /// The periodic progress notification.
    pub fn progress_tick(&self) {
        let mut st = self.lock();
        let st = &mut *st;
        let responses = st.hub.progress_tick(&st.sm.mvcc);
        st.dispatch(responses, self);
    }
}

impl State {
    /// Hands a commit's events to the watch hub and sends what it owes.
    pub(super) fn publish(&mut self, events: &[Event], member: &Member) {
        if events.is_empty() {
            return;
        }
        let responses = self.hub.notify(events, &self.sm.mvcc);
        self.dispatch(responses, member);
    }

    /// The store was just replaced by a Raft snapshot's: tells the watch hub, which re-syncs its watchers
    /// from the restored store, and sends what it owes.
    pub(super) fn restored(&mut self, member: &Member) {
        let responses = self.hub.restore(&self.sm.mvcc);
        self.dispatch(responses, member);
    }

    /// Queues responses on their streams. Queues are unbounded, so nothing is ever dropped here; a stream
    /// whose client does not keep up is stalled in the hub instead, and its watchers fall behind and catch up
    /// from the store later, as etcd's unsynced watchers do.
    fn dispatch(&mut self, responses: Vec<(StreamId, WatchResponse)>, member: &Member) {
        let mut gone = Vec::new();
        for (stream, mut resp) in responses {
            let Some(outbox) = self.outboxes.get_mut(&stream) else { continue };
            member.stamp(&mut resp.header);
            // Counted before it is sent: the gRPC side may take it off the queue (and count it down) on
            // another thread before `send` even returns, and the count must never go below zero.
            let queued = outbox.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
            if outbox.tx.send(resp).is_err() {
                gone.push(stream);
                continue;
            }
            if queued >= STALL_AT && !outbox.stalled {
                outbox.stalled = true;
                self.hub.stall(stream);
            }
        }
        for stream in gone {
            self.outboxes.remove(&stream);
            self.hub.close_stream(stream);
        }
    }
}

#[cfg(test)]
mod tests {
    use etcd_proto::etcdserverpb::PutRequest;

    use super::*;

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

//! One running member: the cores behind a lock, the write path every mutating request takes, the watch
//! streams' outboxes, and the clock.
//!
//! The lock is a plain mutex that is never held across an `.await`: every core call is synchronous and
//! short, so requests serialize exactly as they would through etcd's apply loop. [`Member::propose`] is the
//! single entry for writes; with one member it applies at once, and it is the seam where Raft replication
//! slots in (propose, wait for commit, apply on every member).

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use etcd_proto::etcdserverpb::{ResponseHeader, WatchRequest, WatchResponse};
use etcd_proto::mvccpb::Event;
use tokio::sync::{mpsc, Notify};
use tokio::time::Instant;

use super::config::{MemberConfig, MemberEvent};
use super::outbox::{Outbound, OutboundStream};
use crate::apply::{Command, CommandResponse, StateMachine};
use crate::error::EtcdError;
use crate::failpoint::Failpoints;
use crate::lease::LeaseIdGen;
use crate::types::{LeaseId, Millis, Revision};
use crate::watch::{HubConfig, StreamId, WatchHub};

/// A watch stream stops receiving live events once this many responses wait unsent (etcd's per-stream send
/// buffer is 128), and catches up once the client has drained it to [`RESUME_BELOW`].
pub const STALL_AT: usize = 128;
pub const RESUME_BELOW: usize = 64;

/// The raft index a fresh single-member etcd reports after start-up (its own membership entry, the leader's
/// empty entry, its published attributes and the cluster version).
const BOOTSTRAP_RAFT_INDEX: u64 = 4;

pub struct Member {
    config: MemberConfig,
    started: Instant,
    state: Mutex<State>,
}

struct State {
    sm: StateMachine,
    hub: WatchHub,
    outboxes: BTreeMap<StreamId, Outbox>,
    lease_ids: LeaseIdGen,
    /// Every proposal consumes one log entry, applied successfully or not (etcd logs the failure and moves on).
    applied_index: u64,
}

struct Outbox {
    tx: mpsc::UnboundedSender<WatchResponse>,
    in_flight: Arc<AtomicUsize>,
    stalled: bool,
}

/// What the member reports in Maintenance.Status.
#[derive(Clone, Copy, Debug)]
pub struct StatusFacts {
    pub revision: i64,
    pub db_size_bytes: i64,
    pub raft_index: u64,
}

impl Member {
    /// `start_ms` seeds the lease id generator (wall-clock milliseconds in the real build, simulated ones
    /// under madsim), so that a restarted member does not hand out ids it handed out before.
    pub fn new(config: MemberConfig, start_ms: u64) -> Arc<Member> {
        let hub_config = HubConfig { max_request_bytes: config.max_request_bytes, ..HubConfig::default() };
        let state = State {
            sm: StateMachine::new(config.min_lease_ttl_s()),
            hub: WatchHub::new(hub_config),
            outboxes: BTreeMap::new(),
            lease_ids: LeaseIdGen::new(config.member_id, start_ms),
            applied_index: BOOTSTRAP_RAFT_INDEX,
        };
        Arc::new(Member { config, started: Instant::now(), state: Mutex::new(state) })
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

    fn lock(&self) -> MutexGuard<'_, State> {
        // A poisoned lock means a core panicked mid-request, which is a bug; keep serving what is left is not
        // an option, so the panic propagates.
        self.state.lock().expect("member state lock poisoned")
    }

    /// The header etcd puts on a response produced at `revision` (0 leaves it out, as etcd's JSON shows).
    pub fn header(&self, revision: i64) -> ResponseHeader {
        ResponseHeader {
            cluster_id: self.config.cluster_id.0,
            member_id: self.config.member_id.0,
            revision,
            raft_term: self.config.single_member_term.0,
        }
    }

    /// Fills cluster id, member id and term into a header the cores left with only a revision.
    pub fn stamp(&self, header: &mut Option<ResponseHeader>) {
        let revision = header.as_ref().map_or(0, |h| h.revision);
        *header = Some(self.header(revision));
    }

    /// Runs a read against the state machine.
    pub fn read<T>(&self, f: impl FnOnce(&StateMachine) -> T) -> T {
        f(&self.lock().sm)
    }

    /// The write path: every mutating request, lease grants and revokes included.
    pub async fn propose(&self, cmd: Command) -> Result<CommandResponse, EtcdError> {
        let now = self.now();
        let compact = match &cmd {
            Command::Compact(req) => Some(Revision(req.revision)),
            _ => None,
        };
        let mut st = self.lock();
        st.applied_index += 1;
        let applied = st.sm.apply(cmd, now)?;
        st.publish(&applied.events, self);
        drop(st);
        if let Some(revision) = compact {
            self.config.observer.notify(MemberEvent::Compacted { revision });
        }
        Ok(applied.response)
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

    /// Keep-alive: etcd renews on the leader without going through Raft.
    pub fn renew_lease(&self, id: LeaseId) -> Result<i64, EtcdError> {
        let now = self.now();
        self.lock().sm.lessor.renew(id, now)
    }

    /// Revokes every lease whose deadline passed (what etcd's leader proposes every 500 ms).
    pub async fn revoke_expired_leases(&self) {
        let now = self.now();
        let expired = self.read(|sm| sm.lessor.expired(now));
        for id in expired {
            self.config.observer.notify(MemberEvent::LeaseExpired { id });
            match self.propose(Command::LeaseRevoke(id)).await {
                Ok(resp) => {
                    let revision = match &resp {
                        CommandResponse::LeaseRevoke(r) => Revision(r.header.as_ref().map_or(0, |h| h.revision)),
                        _ => Revision(0),
                    };
                    self.config.observer.notify(MemberEvent::LeaseRevoked { id, revision });
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
        StatusFacts {
            revision: st.sm.mvcc.current_revision().0,
            db_size_bytes: st.sm.mvcc.size_bytes(),
            raft_index: st.applied_index,
        }
    }

    /// Some maintenance requests (Alarm) are proposed through Raft in etcd and consume a log entry.
    pub fn consume_log_entry(&self) {
        self.lock().applied_index += 1;
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
    fn publish(&mut self, events: &[Event], member: &Member) {
        if events.is_empty() {
            return;
        }
        let responses = self.hub.notify(events, &self.sm.mvcc);
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

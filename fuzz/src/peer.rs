//! Traffic from a peer: Raft batches as the peer service receives them, either raw protobuf bytes (the
//! frame decoder: `RaftBatch`, then each raft-rs message inside it) or messages built field by field from
//! fuzz input and encoded as a peer would, so that they reach deep into Raft (votes that elect the member,
//! appends it accepts, commits it applies, snapshots it installs).
//!
//! The member under test is the first of a three-member cluster whose other two members exist only as the
//! senders of this traffic; nothing the member sends is delivered anywhere.

use std::sync::Arc;

use arbitrary::Arbitrary;
use etcd_proto::kubesimpeer::peer_server::Peer;
use etcd_proto::kubesimpeer::{LeaseRenewRequest, LeaseTtlRequest, RaftBatch};
use fake_etcd::raft::codec;
use fake_etcd::service::{Link, Member, MemberConfig, PeerService};
use protobuf::Message as _;
use protobuf::ProtobufEnum;
use raft::eraftpb::{ConfState, Entry, EntryType, Message, MessageType, Snapshot};
use tonic::Request;

/// The member under test and its peers' ids.
pub struct Cluster {
    pub member: Arc<Member>,
    pub service: PeerService,
    /// Every member's id, the member under test's first.
    pub ids: [u64; 3],
    pub cluster_id: u64,
}

impl Cluster {
    pub fn start() -> Cluster {
        let peers: Vec<(String, Vec<String>, Vec<String>)> = (1..=3)
            .map(|i| {
                (format!("m{i}"), vec![format!("http://127.0.0.{i}:2380")], vec![format!("http://127.0.0.{i}:2379")])
            })
            .collect();
        let mut config = MemberConfig::member_of("m1", &peers, "fuzz").expect("three distinct members");
        config.bcrypt_cost = 4;
        let me = config.member_id.0;
        let others: Vec<u64> = config.peers.iter().map(|p| p.id.0).filter(|id| *id != me).collect();
        let ids = [me, others[0], others[1]];
        let cluster_id = config.cluster_id.0;
        let member = Member::new(config, 0).expect("a fresh member opens");
        let service = PeerService::new(member.clone() as Arc<dyn Link>);
        Cluster { member, service, ids, cluster_id }
    }

    /// Hands a batch to the peer service, as its Deliver call does after decoding it.
    pub async fn deliver(&self, batch: RaftBatch) {
        let _ = self.service.deliver(Request::new(batch)).await;
    }

    /// A batch from the first peer carrying `messages`, addressed as a peer addresses it.
    pub fn batch(&self, messages: Vec<Vec<u8>>) -> RaftBatch {
        RaftBatch { cluster_id: self.cluster_id, from: self.ids[1], to: self.ids[0], messages, ack_seq: 0 }
    }
}

/// Which member a field names: one of the cluster's (the member under test first), or any number.
#[derive(Arbitrary, Debug, Clone)]
pub enum Who {
    Member(u8),
    Raw(u64),
}

impl Who {
    fn id(&self, ids: &[u64; 3]) -> u64 {
        match self {
            Who::Member(n) => ids[usize::from(*n % 3)],
            Who::Raw(id) => *id,
        }
    }
}

#[derive(Arbitrary, Debug, Clone)]
pub struct FuzzEntry {
    /// Small offsets from the message's index, so that entries mostly follow on from it.
    index_offset: u8,
    term: u8,
    entry_type: u8,
    data: Vec<u8>,
    context: Vec<u8>,
}

#[derive(Arbitrary, Debug, Clone)]
pub struct FuzzSnapshot {
    index: u8,
    term: u8,
    voters: Vec<Who>,
    learners: Vec<Who>,
    data: Vec<u8>,
}

#[derive(Arbitrary, Debug, Clone)]
pub struct FuzzMessage {
    msg_type: u8,
    from: Who,
    to: Who,
    term: u8,
    log_term: u8,
    index: u8,
    commit: u8,
    entries: Vec<FuzzEntry>,
    snapshot: Option<FuzzSnapshot>,
    reject: bool,
    reject_hint: u8,
    context: Vec<u8>,
    request_snapshot: u8,
}

impl FuzzMessage {
    pub fn message(&self, ids: &[u64; 3]) -> Message {
        let mut m = Message::default();
        // raft-rs 0.7 has 19 message types; a number past them fails to decode on the receiving side.
        m.set_msg_type(MessageType::from_i32(i32::from(self.msg_type % 19)).unwrap_or(MessageType::MsgHup));
        m.from = self.from.id(ids);
        m.to = self.to.id(ids);
        m.term = self.term.into();
        m.log_term = self.log_term.into();
        m.index = self.index.into();
        m.commit = self.commit.into();
        for (i, e) in self.entries.iter().enumerate() {
            let entry_type = match e.entry_type % 3 {
                0 => EntryType::EntryNormal,
                1 => EntryType::EntryConfChange,
                _ => EntryType::EntryConfChangeV2,
            };
            m.mut_entries().push(Entry {
                entry_type,
                term: e.term.into(),
                index: u64::from(self.index) + 1 + i as u64 + u64::from(e.index_offset / 200),
                data: e.data.clone().into(),
                context: e.context.clone().into(),
                ..Entry::default()
            });
        }
        if let Some(s) = &self.snapshot {
            let mut snapshot = Snapshot::default();
            snapshot.mut_metadata().index = s.index.into();
            snapshot.mut_metadata().term = s.term.into();
            let conf = ConfState::from((
                s.voters.iter().map(|w| w.id(ids)).collect::<Vec<_>>(),
                s.learners.iter().map(|w| w.id(ids)).collect::<Vec<_>>(),
            ));
            snapshot.mut_metadata().set_conf_state(conf);
            snapshot.data = s.data.clone().into();
            m.set_snapshot(snapshot);
        }
        m.reject = self.reject;
        m.reject_hint = self.reject_hint.into();
        m.context = self.context.clone().into();
        m.request_snapshot = self.request_snapshot.into();
        m
    }
}

/// One step of a structure-aware peer run.
#[derive(Arbitrary, Debug, Clone)]
pub enum PeerOp {
    /// A batch of messages, as the first peer's transport sends them.
    Batch(Vec<FuzzMessage>),
    /// A batch whose envelope is wrong: another cluster, another recipient.
    Misaddressed {
        cluster: u64,
        to: u64,
        message: FuzzMessage,
    },
    /// A message's bytes cut short or with a byte flipped, as a broken peer might send them.
    Damaged {
        message: FuzzMessage,
        cut: u16,
        flip: u16,
    },
    /// The forwarded lease calls.
    LeaseRenew(i64),
    LeaseTtl(i64),
}

impl Cluster {
    pub async fn step(&self, op: &PeerOp) {
        match op {
            PeerOp::Batch(messages) => {
                let bytes = messages.iter().map(|m| codec::encode_message(&m.message(&self.ids))).collect();
                self.deliver(self.batch(bytes)).await;
            }
            PeerOp::Misaddressed { cluster, to, message } => {
                let mut batch = self.batch(vec![codec::encode_message(&message.message(&self.ids))]);
                batch.cluster_id = *cluster;
                batch.to = *to;
                self.deliver(batch).await;
            }
            PeerOp::Damaged { message, cut, flip } => {
                let mut bytes = message.message(&self.ids).write_to_bytes().expect("an in-memory message encodes");
                if !bytes.is_empty() {
                    let at = usize::from(*flip) % bytes.len();
                    bytes[at] ^= 0x5a;
                    bytes.truncate(bytes.len() - usize::from(*cut) % bytes.len());
                }
                self.deliver(self.batch(vec![bytes])).await;
            }
            PeerOp::LeaseRenew(id) => {
                let req = LeaseRenewRequest { cluster_id: self.cluster_id, id: *id };
                let _ = self.service.lease_renew(Request::new(req)).await;
            }
            PeerOp::LeaseTtl(id) => {
                let req = LeaseTtlRequest { cluster_id: self.cluster_id, id: *id };
                let _ = self.service.lease_time_to_live(Request::new(req)).await;
            }
        }
    }
}

/// The one panic a peer may cause on purpose: raft-rs, like etcd's Raft, stops a member whose peer claims a
/// commit index past the end of its log (`to_commit N is out of range [last_index M]`; etcd words it "Was
/// the raft log corrupted, truncated, or lost?"). A leader never sends one to a follower whose log it has
/// acknowledged, so only a lost log or a peer breaking the protocol gets there, and stopping is the designed
/// answer (the simulation's `skip-sync` switch shows the lost-log case). `f` runs with that panic caught;
/// any other panic still aborts the run through libFuzzer's hook, as a crash.
pub fn tolerating_commit_past_log(f: impl FnOnce()) {
    static HOOK: std::sync::Once = std::sync::Once::new();
    HOOK.call_once(|| {
        let crash = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let message = info
                .payload()
                .downcast_ref::<String>()
                .map(String::as_str)
                .or_else(|| info.payload().downcast_ref::<&str>().copied())
                .unwrap_or("");
            if !(message.starts_with("to_commit ") && message.contains(" is out of range [last_index ")) {
                crash(info);
            }
        }));
    });
    let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f));
}

//! The sending side of the peer transport: one task per peer that keeps one long-lived
//! `kubesimpeer.Peer/Stream` open to it, over the same (madsim-)tonic transport as the client API, and pushes
//! the Raft messages queued for it into that stream in batches, without waiting for an answer to each (etcd's
//! rafthttp streams do the same; a call per batch cost a request and a response with headers each way).
//!
//! A stream that cannot be opened within the timeout, that ends, that stops answering (a pushed batch that
//! asked for an answer got none within the timeout: a partition, a stalled peer) or whose buffer is full is
//! reported to Raft as unreachable, and the next batch opens a new one; Raft resends what was lost. A peer of
//! another cluster refuses the stream when it opens, which is reported the same way and logged with etcd's
//! text. Batches that carry a snapshot go as one `Deliver` call each, so that Raft learns whether the snapshot
//! arrived. Each sender greets its peer when it starts, with a stream whose first batch is empty, so that
//! the member learns which peers are reachable before Raft sends anything (`member::election_start` waits
//! for that). The transport knows the member only as a [`Link`]: where its peers are, and where to report.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use etcd_proto::kubesimpeer::peer_client::PeerClient;
use etcd_proto::kubesimpeer::{RaftBatch, StreamAck};
use tokio::sync::mpsc;
use tokio::time::Instant;
use tokio_stream::wrappers::ReceiverStream;
use tonic::metadata::MetadataMap;
use tonic::transport::Channel;
use tonic::{Request, Streaming};

use super::link::{Link, PeerSpec};
use super::wire::{client, is_cluster_mismatch, CLUSTER_ID_METADATA, FROM_METADATA, TO_METADATA};
use crate::raft::{codec, Message, MessageType};
use crate::types::MemberId;

/// How long opening a stream, an answer to a pushed batch or one snapshot call may take before the peer
/// counts as unreachable: a few heartbeats.
const SEND_TIMEOUT: Duration = Duration::from_millis(500);

/// Least time between two batches that ask for an answer on one stream: a heartbeat. Asking once per round
/// trip under load cost an answer per batch at one client; a stream that stops moving is still found within
/// this plus the timeout.
const PROBE_INTERVAL: Duration = Duration::from_millis(100);

/// How long apart a starting sender tries to open its first stream to a peer that is not listening yet,
/// and for how long it keeps trying (etcd's stream readers redial every 100 ms; its initial election tick
/// advance waits 5 s for them).
const GREET_RETRY: Duration = Duration::from_millis(100);
const GREET_FOR: Duration = Duration::from_secs(5);

/// Most messages in one batch, so that one slow batch does not hold back a whole backlog.
const MAX_BATCH: usize = 64;

/// Most batches waiting in one stream; beyond that the peer is not keeping up and the batch is dropped and
/// reported, as etcd drops a message when its stream buffer is full.
const STREAM_BUFFER: usize = 256;

/// Runs until the member's queue closes: fans the queue out to one sender task per peer. Every peer's
/// sender starts at once and greets its peer (see [`Sender::greet`]), as etcd's rafthttp dials every peer
/// when it starts rather than when the first message is due.
pub(crate) async fn run(member: Arc<dyn Link>, mut queue: mpsc::UnboundedReceiver<Message>) {
    let mut senders: BTreeMap<MemberId, mpsc::UnboundedSender<Message>> = BTreeMap::new();
    let start_sender = |to: MemberId| {
        let (tx, rx) = mpsc::unbounded_channel();
        if let Some(peer) = member.peer(to) {
            tokio::spawn(send_loop(member.clone(), peer, rx));
        }
        tx
    };
    for to in member.peer_ids() {
        senders.insert(to, start_sender(to));
    }
    while let Some(msg) = queue.recv().await {
        let to = MemberId(msg.to);
        let sender = senders.entry(to).or_insert_with(|| start_sender(to));
        let _ = sender.send(msg);
    }
}

/// An open stream to a peer.
struct OpenStream {
    tx: mpsc::Sender<RaftBatch>,
    acks: Streaming<StreamAck>,
    /// The number the last batch that asked for an answer carried.
    seq: u64,
    /// The batch that asked for an answer and has not had it yet, and when it was pushed. One at a time and
    /// at most one per `PROBE_INTERVAL`: that is enough to tell a live stream from a stuck one, and costs far
    /// less than an answer per batch.
    probe: Option<(u64, Instant)>,
    /// When the last batch that asked for an answer was pushed.
    last_probe: Instant,
}

impl OpenStream {
    /// Asks for an answer to this batch unless one is outstanding or the last was asked for too recently.
    fn number(&mut self, batch: &mut RaftBatch, now: Instant) {
        if self.probe.is_none() && now >= self.last_probe + PROBE_INTERVAL {
            self.seq += 1;
            batch.ack_seq = self.seq;
        }
    }
}

/// What the send loop woke up for.
enum Event {
    Ack(Result<Option<StreamAck>, tonic::Status>),
    Stalled,
    Greet,
    Queued(Option<Message>),
}

/// How pushing a batch into the open stream went.
enum Push {
    Pushed,
    Full,
    /// The stream's sending end is gone; the batch comes back to go on a new stream.
    Closed(RaftBatch),
}

struct Sender {
    member: Arc<dyn Link>,
    peer: PeerSpec,
    client: PeerClient<Channel>,
    stream: Option<OpenStream>,
    /// A peer of another cluster refuses every stream; saying so once per run of refusals keeps the log
    /// useful.
    refused: bool,
    /// While the first stream has not opened: when to try next, and when to stop trying.
    greeting: Option<(Instant, Instant)>,
}

async fn send_loop(member: Arc<dyn Link>, peer: PeerSpec, mut rx: mpsc::UnboundedReceiver<Message>) {
    let Some(client) = client(&peer) else {
        tracing::warn!(peer = %peer.name, "no usable peer URL; messages to it are dropped");
        return;
    };
    let now = Instant::now();
    let greeting = Some((now, now + GREET_FOR));
    let mut sender = Sender { member, peer, client, stream: None, refused: false, greeting };
    loop {
        let event = match &mut sender.stream {
            Some(open) => {
                let deadline = open.probe.map(|(_, pushed)| pushed + SEND_TIMEOUT);
                tokio::select! {
                    biased;
                    // Answers first, so that one already here clears the probe before its deadline counts.
                    ack = open.acks.message() => Event::Ack(ack),
                    () = sleep_until(deadline) => Event::Stalled,
                    msg = rx.recv() => Event::Queued(msg),
                }
            }
            None => match sender.greeting {
                Some((next, _)) => tokio::select! {
                    biased;
                    msg = rx.recv() => Event::Queued(msg),
                    () = tokio::time::sleep_until(next) => Event::Greet,
                },
                None => Event::Queued(rx.recv().await),
            },
        };
        match event {
            Event::Ack(Ok(Some(ack))) => {
                if let Some(open) = &mut sender.stream {
                    if open.probe.is_some_and(|(seq, _)| seq <= ack.ack_seq) {
                        open.probe = None;
                    }
                }
            }
            Event::Ack(_) => {
                tracing::debug!(peer = %sender.peer.name, "peer stream ended");
                sender.broken();
            }
            Event::Stalled => {
                tracing::debug!(peer = %sender.peer.name, "peer stream stalled");
                sender.broken();
            }
            Event::Greet => sender.greet().await,
            Event::Queued(None) => return,
            Event::Queued(Some(first)) => {
                let mut batch = vec![first];
                while batch.len() < MAX_BATCH {
                    match rx.try_recv() {
                        Ok(msg) => batch.push(msg),
                        Err(_) => break,
                    }
                }
                sender.send(batch).await;
            }
        }
    }
}

async fn sleep_until(deadline: Option<Instant>) {
    match deadline {
        Some(deadline) => tokio::time::sleep_until(deadline).await,
        None => std::future::pending().await,
    }
}

impl Sender {
    fn batch(&self, messages: &[Message]) -> RaftBatch {
        RaftBatch {
            cluster_id: self.member.cluster_id().0,
            from: self.member.member_id().0,
            to: self.peer.id.0,
            messages: messages.iter().map(codec::encode_message).collect(),
            ack_seq: 0,
        }
    }

    /// The open stream broke: whatever it still carried is lost, and Raft hears that the peer is unreachable
    /// (a leader stops streaming appends to it and probes).
    fn broken(&mut self) {
        self.stream = None;
        self.member.set_peer_active(self.peer.id, false);
        self.member.report_undelivered(self.peer.id, false);
    }

    /// Opens a stream with nothing in its first batch, so that both ends know the other is there before
    /// Raft has anything to say; tried every [`GREET_RETRY`] until one opens or [`GREET_FOR`] has passed.
    async fn greet(&mut self) {
        let Some((_, give_up)) = self.greeting else { return };
        let batch = self.batch(&[]);
        self.open(batch).await;
        let now = Instant::now();
        self.greeting = (self.stream.is_none() && now < give_up).then_some((now + GREET_RETRY, give_up));
    }

    async fn send(&mut self, messages: Vec<Message>) {
        if messages.iter().any(|m| m.get_msg_type() == MessageType::MsgSnapshot) {
            let batch = self.batch(&messages);
            self.deliver(batch).await;
            return;
        }
        let mut batch = self.batch(&messages);
        if let Some(open) = &mut self.stream {
            match push(open, batch) {
                Push::Pushed => return,
                Push::Full => {
                    self.member.report_undelivered(self.peer.id, false);
                    return;
                }
                Push::Closed(back) => {
                    self.stream = None;
                    batch = back;
                }
            }
        }
        self.open(batch).await;
    }

    /// Opens a stream with `batch` as its first message: the batch travels with the request, so a new stream
    /// costs no extra round trip before it.
    async fn open(&mut self, mut batch: RaftBatch) {
        let (tx, rx) = mpsc::channel(STREAM_BUFFER);
        // The first batch on a stream always asks for an answer: a stream that opens and then carries
        // nothing counts as stuck like any other.
        batch.ack_seq = 1;
        let messages_sent = !batch.messages.is_empty();
        let _ = tx.try_send(batch);
        let mut request = Request::new(ReceiverStream::new(rx));
        self.stream_metadata(request.metadata_mut());
        let opened = tokio::time::timeout(SEND_TIMEOUT, self.client.stream(request)).await;
        match opened {
            Ok(Ok(response)) => {
                self.refused = false;
                self.greeting = None;
                self.member.set_peer_active(self.peer.id, true);
                let acks = response.into_inner();
                let now = Instant::now();
                self.stream = Some(OpenStream { tx, acks, seq: 1, probe: Some((1, now)), last_probe: now });
            }
            Ok(Err(status)) if is_cluster_mismatch(&status) => {
                self.log_refusal(&status);
                self.unopened(messages_sent);
            }
            _ => self.unopened(messages_sent),
        }
    }

    /// A stream did not open: Raft hears of it when the batch carried messages (a greeting carries none).
    fn unopened(&mut self, carried_messages: bool) {
        self.member.set_peer_active(self.peer.id, false);
        if carried_messages {
            self.member.report_undelivered(self.peer.id, false);
        }
    }

    fn stream_metadata(&self, metadata: &mut MetadataMap) {
        let entries = [
            (CLUSTER_ID_METADATA, self.member.cluster_id().0),
            (FROM_METADATA, self.member.member_id().0),
            (TO_METADATA, self.peer.id.0),
        ];
        for (key, value) in entries {
            if let Ok(value) = format!("{value:x}").parse() {
                metadata.insert(key, value);
            }
        }
    }

    /// Sends a batch as one call and waits for the answer (snapshots: Raft must hear whether one arrived).
    async fn deliver(&mut self, batch: RaftBatch) {
        let sent = tokio::time::timeout(SEND_TIMEOUT, self.client.deliver(batch)).await;
        match sent {
            Ok(Ok(_)) => {
                self.refused = false;
                self.member.report_snapshot_delivered(self.peer.id);
            }
            Ok(Err(status)) if is_cluster_mismatch(&status) => {
                self.log_refusal(&status);
                self.member.report_undelivered(self.peer.id, true);
            }
            _ => self.member.report_undelivered(self.peer.id, true),
        }
    }

    fn log_refusal(&mut self, status: &tonic::Status) {
        if self.refused {
            return;
        }
        self.refused = true;
        let remote = status.metadata().get(CLUSTER_ID_METADATA).and_then(|v| v.to_str().ok());
        // etcd 3.4's text (capnslog), from its stream and pipeline senders.
        tracing::error!(
            "rafthttp: request sent was ignored (cluster ID mismatch: peer[{}]={}, local={:x})",
            self.peer.id,
            remote.unwrap_or("unknown"),
            self.member.cluster_id().0
        );
    }
}

fn push(open: &mut OpenStream, mut batch: RaftBatch) -> Push {
    let now = Instant::now();
    open.number(&mut batch, now);
    let seq = batch.ack_seq;
    match open.tx.try_send(batch) {
        Ok(()) => {
            if seq != 0 {
                open.probe = Some((seq, now));
                open.last_probe = now;
            }
            Push::Pushed
        }
        Err(mpsc::error::TrySendError::Full(_)) => Push::Full,
        Err(mpsc::error::TrySendError::Closed(batch)) => Push::Closed(batch),
    }
}

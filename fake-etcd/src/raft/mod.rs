//! Raft replication for fake-etcd: raft-rs's `RawNode` (a port of etcd-raft) over a disk model with an
//! explicit sync. Sans IO like the other cores: time comes in as ticks, messages come in through
//! [`RaftNode::step`] and go out in an [`Output`]; nothing here is async, reads a clock, draws randomness or
//! spawns a thread. The async shell (the service) owns timers, the peer transport and the state machine.
//!
//! Parts, one job each:
//! - [`disk`]: the durable-state model. Writes are buffered until [`Disk::sync`]; a crash (re-opening from
//!   the [`DurableDisk`] handle) loses everything not synced. A fault switch makes `sync` a silent no-op.
//! - [`disk_codec`]: the disk model's writes and whole state as bytes, for the real build's data dir.
//! - `storage`: raft-rs's `Storage` trait on top of [`Disk`].
//! - [`config`]: [`RaftConfig`], etcd 3.4's settings by default, with the first election timeout and the
//!   seed of the later ones chosen by the caller, so that raft-rs's `thread_rng` never decides anything
//!   (ARCHITECTURE.md, Determinism); [`timeout`]: the seeded stream of election timeouts.
//! - [`node`]: [`RaftNode`], the Ready loop in the order raft-rs 0.7 documents (persist, sync, send, apply),
//!   folded into one call that returns plain data; one call handles every proposal made since the last, and
//!   the appends for one follower leave as one message.
//! - [`output`]: what one turn of the loop produced.
//! - [`entry`]: how a [`Command`](crate::apply::Command) travels in a log entry, and the proposal id in the
//!   entry context that lets the proposing member find the client waiting for it.
//! - [`codec`]: Raft messages as bytes for the peer transport.
//! - [`error`]: [`RaftError`], the one error type of this layer.
//!
//! Determinism: raft-rs draws each election timeout from `thread_rng`, which madsim does not intercept on
//! Linux. [`RaftNode`] overrides every draw, right after the call that made it and before any tick can
//! read it, with the next value of [`timeout::ElectionTimeouts`], seeded by the caller from the simulation
//! seed ([`RaftConfig::election_seed`]). raft-rs's own maps hash with a fixed FxHasher, so its
//! message order is a function of its inputs.

pub mod codec;
pub(crate) mod config;
pub mod disk;
pub mod disk_codec;
pub(crate) mod entry;
pub(crate) mod error;
pub(crate) mod node;
pub(crate) mod output;
mod storage;
pub(crate) mod timeout;

pub use config::RaftConfig;
pub(crate) use disk::{Disk, DiskBackend, DiskOp, DiskState};
pub use disk::{DiskOptions, DurableDisk};
pub(crate) use entry::{encode_command_as, encode_internal, Payload, ProposalId};
pub(crate) use error::RaftError;
pub use node::RaftNode;
pub(crate) use output::CommittedEntry;
pub use output::{EntryKind, Output, Role};

/// raft-rs's wire and log types, re-exported so that the shell and the tests name one version of them.
pub(crate) use ::raft::eraftpb::Entry;
pub use ::raft::eraftpb::{Message, MessageType};
pub use ::raft::ReadState;

//! fake-etcd: an etcd v3 compatible key-value server for kubesim.
//!
//! Layers, inside out (see ARCHITECTURE.md):
//! - [`mvcc`]: the multi-version store (sans IO);
//! - [`lease`]: the lease table (sans IO, time passed in);
//! - [`auth`]: users, roles, permissions and simple tokens (sans IO);
//! - [`apply`]: the state machine committed requests are applied to (sans IO);
//! - [`watch`]: the watch hub that turns commits into watch responses (sans IO);
//! - [`failpoint`]: named failure-injection points for test harnesses, one registry per member;
//! - [`raft`]: Raft replication (raft-rs `RawNode`) over a disk model with an explicit sync (sans IO, ticks);
//! - [`service`]: the async gRPC shell (tonic, or madsim-tonic under `--cfg madsim`) that owns the clock,
//!   the tickers and the streams.
//!
//! Public face: what other crates use, and nothing else (`pub(crate)` marks the rest, and the
//! `unreachable_pub` lint keeps it so):
//! - running members, for the `fake-etcd` binary, the apiserver binary's embedded member, sim's clusters and
//!   the fuzz harnesses: [`service`] (`Member`, `MemberConfig` and its observers, the gRPC services,
//!   `serve`, `serve_listener`, `serve_peers`, the peer `Link`), `service::member::data_dir` and
//!   `identity`, and [`raft::DurableDisk`];
//! - the harness's vocabulary: [`failpoint`], [`bug`], [`types`], [`EtcdError`] and its [`error::Code`];
//! - the cores that tests and checkers drive directly: a bare [`apply::StateMachine`] (sim's differential
//!   checker, the kv model test) with [`apply::validate`] (the fuzz harness checks requests as the member
//!   does), [`mvcc::KeyRange`] (workloads), a [`raft::RaftNode`] over its disk model and codecs (the Raft
//!   tests and the fuzz harnesses), [`watch::StreamId`], and auth's defaults ([`auth::password`],
//!   [`auth::SIMPLE_TOKEN_TTL_S`]) for the binary's flags.

// What other crates use is `pub`; everything else is `pub(crate)` or private, and this lint keeps it so (in
// the real build, as the apiserver does).
#![cfg_attr(not(madsim), warn(unreachable_pub))]

pub mod apply;
pub mod auth;
pub mod bug;
pub mod error;
pub mod failpoint;
pub(crate) mod lease;
pub mod mvcc;
pub mod raft;
pub mod service;
pub mod types;
pub mod watch;

pub use error::EtcdError;
pub use types::{ClusterId, LeaseId, LogIndex, MemberId, Millis, Revision, Term};

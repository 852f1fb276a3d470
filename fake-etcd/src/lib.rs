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

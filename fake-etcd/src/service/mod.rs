//! The async gRPC shell around the cores: one member's services (KV, Watch, Lease, Maintenance, Cluster,
//! Auth), its clock and tickers, and the translation of [`crate::EtcdError`] into gRPC statuses.
//!
//! What this layer must not do: decide KV, lease or watch semantics (the cores do), or hold the member lock
//! across an `.await`.

pub mod auth;
#[cfg(not(madsim))]
pub mod authority;
pub mod cluster;
pub mod config;
pub mod data_dir;
pub mod identity;
pub mod internal;
pub mod kv;
pub mod lease;
pub mod maintenance;
pub mod member;
pub mod outbox;
pub mod peer;
mod replica;
pub mod server;
pub mod status;
pub mod transport;
pub mod watch;

pub use config::{EventObserver, MemberConfig, MemberEvent, PeerSpec, RaftObserver, RaftSettings};
pub use member::Member;
#[cfg(not(madsim))]
pub use server::serve_listener;
pub use server::{serve, serve_peers};

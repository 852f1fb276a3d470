//! The async shell around the cores, in three rooms and the server that joins them:
//!
//! - `member`: one running member, the cores and its Raft node behind one lock, with a file per job (write
//!   path, reads, leases, watch streams, membership and status, the Raft drive loop), and what it is
//!   started with (configuration, identity, the real build's data dir);
//! - `api`: etcd's gRPC services for clients, and the translation of [`crate::EtcdError`] into statuses;
//! - `peer`: the peer transport between members, which sees the member only through `peer::Link`;
//! - `server`: the routers over the services and the member's background tasks (tickers, the transport,
//!   the Ready loop); `authority` (real build only) rewrites the one header of etcdctl's that h2 rejects;
//!   `channel_stream` is the plain response stream the services share.
//!
//! The services are public so that a host can also call them in-process, without a network: the fuzz
//! targets (`fuzz/`) hand them decoded requests exactly as tonic would after reading a request off the wire.
//!
//! Dependencies point one way: `server` on the rooms, `api` on `member`, `member` on `peer`, and `peer` on
//! none of them. What this layer must not do: decide KV, lease or watch semantics (the cores do), or hold
//! the member lock across an `.await`.

mod api;
#[cfg(not(madsim))]
mod authority;
mod channel_stream;
pub mod member;
mod peer;
mod server;

pub use api::auth::AuthService;
pub use api::cluster::ClusterService;
pub use api::kv::KvService;
pub use api::lease::LeaseService;
pub use api::maintenance::MaintenanceService;
pub use member::config::{EventObserver, MemberConfig, MemberEvent, RaftObserver};
pub use member::Member;
pub use peer::{Link, PeerService};
#[cfg(not(madsim))]
pub use server::serve_listener;
pub use server::{serve, serve_peers};

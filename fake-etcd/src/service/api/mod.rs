//! etcd's v3 client API as gRPC services, one file each (KV, Lease, Watch, Maintenance, Cluster, Auth), and
//! `status`, the one place a [`crate::EtcdError`] becomes a gRPC status. Each service checks what etcd
//! checks before Raft and then asks the member: a read, a proposal, a watch stream, a lease call.
//!
//! What this layer must not do: decide KV, lease or watch semantics (the cores do), or touch the member's
//! state other than through its methods.

pub(super) mod auth;
pub(super) mod cluster;
pub(super) mod kv;
pub(super) mod lease;
pub(super) mod maintenance;
pub(super) mod status;
mod token;
pub(super) mod watch;

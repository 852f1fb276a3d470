//! etcd's v3 wire contract, compiled once and shared by fake-etcd's server and by every client in kubesim
//! (the apiserver's storage layer, the simulation harness, tests).
//!
//! The .proto files under `proto/` are kubesim's own statement of etcd 3.4's contract: package, service,
//! message and field names and numbers match etcd's so that real clients (etcdctl, clientv3, the `etcd-client`
//! crate) interoperate. In the real build the generated code is plain tonic/prost; under `--cfg madsim` the
//! same paths name madsim-tonic's simulation stubs, which pass typed messages over the simulated network.
//!
//! This crate must not grow behaviour: it is the contract, nothing else. Helpers that interpret requests
//! belong to fake-etcd or to the client that needs them.

#![allow(clippy::large_enum_variant, clippy::doc_lazy_continuation)]

pub mod mvccpb {
    tonic::include_proto!("mvccpb");
}

pub mod authpb {
    tonic::include_proto!("authpb");
}

pub mod etcdserverpb {
    tonic::include_proto!("etcdserverpb");
}

/// fake-etcd's own member-to-member protocol (Raft messages, forwarded lease renewals). Not etcd's contract:
/// etcd's peers speak rafthttp; only fake-etcd members speak this.
pub mod kubesimpeer {
    tonic::include_proto!("kubesimpeer");
}

/// The largest request etcd accepts by default (`--max-request-bytes`, 1.5 MiB).
pub const DEFAULT_MAX_REQUEST_BYTES: usize = 1536 * 1024;

/// etcd lets gRPC messages exceed `--max-request-bytes` by this much before gRPC itself refuses them, so that
/// the oversized request reaches etcd's own check and gets etcd's own error text.
pub const GRPC_OVERHEAD_BYTES: usize = 512 * 1024;

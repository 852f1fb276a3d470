//! The async gRPC shell around the cores: one member's services (KV, Watch, Lease, Maintenance, Cluster,
//! Auth), its clock and tickers, and the translation of [`crate::EtcdError`] into gRPC statuses.

pub mod status;

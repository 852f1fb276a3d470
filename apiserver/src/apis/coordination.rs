//! The `coordination.k8s.io/v1` resources: leases, which leader election and node heartbeats write.

use std::sync::Arc;

use super::{printers, ResourceInfo};
use crate::registry::strategies::leases;

/// The `coordination.k8s.io/v1` resources.
pub(crate) fn resources() -> Vec<ResourceInfo> {
    vec![ResourceInfo::new(leases::resource(), "lease", Arc::new(leases::Leases), printers::coordination::leases())]
}

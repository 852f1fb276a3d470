//! The `batch/v1` resources: jobs (with `/status`).

pub(crate) mod cronjobs;

use std::sync::Arc;

use super::{printers, status, ResourceInfo};
use crate::registry::strategies::jobs;

/// The `batch/v1` resources.
pub(crate) fn resources() -> Vec<ResourceInfo> {
    vec![ResourceInfo {
        categories: &["all"],
        subresources: vec![status("Job")],
        ..ResourceInfo::new(jobs::resource(), "job", Arc::new(jobs::Jobs), printers::batch::jobs())
    }]
}

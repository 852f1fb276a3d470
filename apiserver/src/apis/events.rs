//! The `events.k8s.io/v1` resources: events, the same objects as core events in this group's shape.

use std::sync::Arc;

use super::{printers, ResourceInfo};
use crate::registry::strategies::events_v1;

/// The `events.k8s.io/v1` resources.
pub(crate) fn resources() -> Vec<ResourceInfo> {
    vec![ResourceInfo {
        short_names: &["ev"],
        conversion: Some(events_v1::conversion()),
        ..ResourceInfo::new(events_v1::resource(), "event", Arc::new(events_v1::EventsV1), printers::events::events())
    }]
}

//! The printer of `events.k8s.io` events: upstream prints them as core events (their internal form), so
//! this one converts and reuses `printEvent`.

use serde_json::Value;

use super::*;
use crate::registry::strategies::events_v1;

/// `printEvent`, over the core form of the event.
pub(crate) fn events() -> Printer {
    Printer {
        columns: super::core::events().columns,
        cells: |obj: &Value, now, _| super::core::event_cells(&events_v1::to_core(obj.clone()), now),
    }
}

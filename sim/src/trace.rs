//! The trace: one line per event in simulated time (`t=1.311s c1 put /a=1 -> ok rev=17`), the unit of
//! determinism and of debugging. Lines are plain text built only from simulated time and from what the
//! nodes did, never from memory addresses or hash order, so that the same seed and binary give the same
//! bytes and two runs diff line by line. Each line is also emitted as a `tracing` event (target
//! `kubesim::trace`), so that a subscriber shows it among the detail logged behind it.

use std::sync::{Arc, Mutex};

use crate::history::Nanos;

/// A shared, append-only trace; clones append to the same lines.
#[derive(Clone, Default)]
pub struct Trace {
    lines: Arc<Mutex<Vec<String>>>,
}

impl Trace {
    pub fn new() -> Trace {
        Trace::default()
    }

    /// Simulated time since the simulation started.
    pub fn now() -> Nanos {
        Nanos(madsim::time::TimeHandle::current().elapsed().as_nanos() as u64)
    }

    /// Appends `t=<now> <node> <what>`.
    pub fn event(&self, node: &str, what: impl std::fmt::Display) {
        let line = format!("{} {node} {what}", Trace::now());
        tracing::info!(target: "kubesim::trace", "{line}");
        self.lines.lock().expect("trace lock poisoned").push(line);
    }

    pub fn lines(&self) -> Vec<String> {
        self.lines.lock().expect("trace lock poisoned").clone()
    }
}

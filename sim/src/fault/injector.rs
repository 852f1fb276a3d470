//! `Injector`: applies faults to one cluster, writes each to the trace at the instant it is applied, and
//! keeps the record of every fault applied with its time, scheduled or drawn by the nemesis: what
//! `kubesim shrink` turns into an explicit schedule.
//!
//! The record lives here rather than in the `Cluster` so that the dependency points one way: faults know
//! the cluster they act on, and the cluster knows nothing of faults.

use std::sync::{Arc, Mutex};

use super::{Fault, ScheduledFault};
use crate::cluster::Cluster;

/// Applies faults to a cluster and remembers them. Clones share the cluster and the record, so the
/// nemesis and every scheduled fault of a run file into one list.
#[derive(Clone)]
pub struct Injector {
    cluster: Arc<Cluster>,
    applied: Arc<Mutex<Vec<ScheduledFault>>>,
}

impl Injector {
    pub fn new(cluster: Arc<Cluster>) -> Injector {
        Injector { cluster, applied: Arc::default() }
    }

    /// The cluster the faults act on.
    pub fn cluster(&self) -> &Arc<Cluster> {
        &self.cluster
    }

    /// Traces the fault, files it at the current simulated time, and applies it.
    pub fn apply(&self, fault: &Fault) {
        self.cluster.trace.event("fault", fault);
        let at_ms = madsim::time::TimeHandle::current().elapsed().as_millis() as u64;
        self.applied.lock().expect("applied-faults lock poisoned").push(ScheduledFault { at_ms, fault: fault.clone() });
        fault.act(&self.cluster);
    }

    /// Every fault applied so far, in order.
    pub fn applied(&self) -> Vec<ScheduledFault> {
        self.applied.lock().expect("applied-faults lock poisoned").clone()
    }
}

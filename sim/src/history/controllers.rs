//! What the controller managers and schedulers did (`cluster::controller_manager`): each start and end of
//! a manager's leadership, each write its controllers sent and each delete its garbage collector made, in the order the simulation saw them (one thread: that
//! order is the true one), with the simulated time for the reader. Plain data; `checker::controllers`
//! judges it.

use std::sync::{Arc, Mutex};

use serde::{Deserialize, Serialize};

/// One act of one manager.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum ManagerAct {
    /// It took the lease and started its controllers.
    Leading,
    /// It dropped its controllers (it lost the lease, or its node went down mid-term and came back).
    Stopped,
    /// One of its controllers sent a write.
    Write { method: String, path: String },
    /// Its garbage collector deleted an object (the DELETE succeeded): the object's path and UID, the UIDs
    /// of its owners, and the revision of the delete (the answer's resourceVersion; 0 when it had none).
    Deleted { path: String, uid: String, owner_uids: Vec<String>, rv: i64 },
}

/// An act, who did it and when.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ManagerEvent {
    /// Simulated milliseconds since the run began.
    pub at_ms: u64,
    /// The manager's node (`controller-manager-2`).
    pub manager: String,
    /// Which component acted, by the lease it is elected by: `kube-controller-manager` or `kube-scheduler`
    /// (both run on each controller manager node, each elected on its own).
    pub role: String,
    pub what: ManagerAct,
}

/// The managers' acts, shared by their nodes and kept across their restarts.
pub type ManagerLog = Arc<Mutex<Vec<ManagerEvent>>>;

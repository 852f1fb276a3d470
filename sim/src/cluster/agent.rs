//! A node that runs one control-plane component from its init (a controller manager, a simulated
//! kubelet): a kill and restart re-runs the init, which starts the component from nothing, as a restarted
//! process does. The harness counts the restarts it asks for, so that any other start is filed as a panic.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use madsim::runtime::NodeHandle;
use madsim::task::NodeId;

/// A running component node.
pub struct AgentNode {
    pub name: String,
    pub id: NodeId,
    pub node: NodeHandle,
    /// Restarts the harness asked for and the node has not yet begun.
    pub(super) expected_starts: Arc<AtomicUsize>,
}

impl AgentNode {
    /// Restarts the node (kill and re-run its init): a new component, which starts over.
    pub fn restart(&self) {
        self.expected_starts.fetch_add(1, Ordering::SeqCst);
        super::restart_node(self.id);
    }
}

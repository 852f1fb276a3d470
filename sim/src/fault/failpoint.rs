//! A failpoint a run arms on one node before its clients start: the node, the point's name as that node's
//! component spells it, and how it fires. Scenario files (`[[failpoint]]`) and the traffic preset
//! (`run::RunConfig`) both say theirs this way; `scenario::execute::lifecycle::prepare` arms them.

use fake_etcd::failpoint::{Action, Arm};

/// A failpoint to arm on one node before the clients start.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FailpointSpec {
    pub node: String,
    /// The point's name as the node's component spells it (fake-etcd's `before-watch-response-send` on a
    /// member, the apiserver's `before-cacher-dispatch` on an apiserver); checked before the run.
    pub point: String,
    pub arm: Arm,
}

/// Shorthand for a failpoint spec that fires `times` times after `skip` hits.
pub fn failpoint(node: &str, point: &str, action: Action, skip: u32, times: Option<u32>) -> FailpointSpec {
    FailpointSpec { node: node.into(), point: point.into(), arm: Arm { action, skip, times } }
}

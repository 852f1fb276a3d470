//! What a scripted client's steps share: the run's context (the [`Board`], the history, the trace, the
//! members' endpoints, the request timeout, the watch tasks to close at the end), and how a step ends.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::board::Board;
use super::Observed;
use crate::client::{RecordingClient, SharedHistory};
use crate::scenario::plan::StepPlan;
use crate::trace::Trace;

/// Everything a client script needs.
pub(super) struct Ctx {
    pub(super) board: Arc<Board>,
    pub(super) history: SharedHistory,
    pub(super) trace: Trace,
    pub(super) endpoints: Vec<String>,
    pub(super) request_timeout: Duration,
    pub(super) watch_tasks: Arc<Mutex<Vec<madsim::task::JoinHandle<()>>>>,
    /// The watches `kube` steps opened, and their collecting tasks.
    pub(super) kube_watches: Mutex<super::kube::KubeWatches>,
    /// The informers `informer` steps started.
    pub(super) informers: Mutex<super::informer::Informers>,
    /// The informers' bug switches on.
    pub(super) informer_bugs: super::informer::Bugs,
}

/// What a step ended with: what was observed, the revision `rev_of` gets, the lease a grant got.
pub(super) type Finished = (Observed, Option<i64>, Option<i64>);

/// A step that could not be sent: an unresolved reference.
pub(super) fn not_run(client: &RecordingClient, step: &StepPlan, reason: String) -> Finished {
    client.trace().event(client.name(), format_args!("{} not sent: {reason}", step.label));
    (Observed::NotRun(reason), None, None)
}

//! What a scripted client's steps share: the run's context (the [`Board`], the history, the trace, the
//! members' endpoints, the request timeout, the watch tasks to close at the end), and how a step ends.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::board::Board;
use super::records::{InformerLog, KubeEvent};
use super::Observed;
use crate::client::{RecordingClient, SharedHistory};
use crate::kube::store::Store;
use crate::scenario::plan::KubePlan;
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
    pub(super) kube_watches: Mutex<KubeWatches>,
    /// The informers `informer` steps started.
    pub(super) informers: Mutex<Informers>,
    /// The informers' bug switches on.
    pub(super) informer_bugs: crate::kube::reflector::Bugs,
    /// The run's seeds, for choices steps make (a controller's retry jitter).
    pub(super) seeds: crate::cluster::Seeds,
}

/// What a step ended with: what was observed, the revision `rev_of` gets, the lease a grant got.
pub(super) type Finished = (Observed, Option<i64>, Option<i64>);

/// A step that could not be sent: an unresolved reference.
pub(super) fn not_run(client: &RecordingClient, step: &StepPlan, reason: String) -> Finished {
    client.trace().event(client.name(), format_args!("{} not sent: {reason}", step.label));
    (Observed::NotRun(reason), None, None)
}

/// The watches `kube` steps opened: each step's events so far, and the task collecting them.
#[derive(Default)]
pub(super) struct KubeWatches {
    pub(super) events: BTreeMap<String, Arc<Mutex<Vec<KubeEvent>>>>,
    pub(super) tasks: Vec<madsim::task::JoinHandle<()>>,
}

/// The informers the run started, by step label: their logs, and the tasks running them.
#[derive(Default)]
pub(super) struct Informers {
    pub(super) logs: BTreeMap<String, (String, Arc<Mutex<InformerLog>>)>,
    /// How to restart each informer's process, by step label.
    pub(super) restarts: BTreeMap<String, Arc<tokio::sync::Notify>>,
    /// Each informer's request and store, for `controller` steps.
    pub(super) stores: BTreeMap<String, (KubePlan, Arc<Mutex<Store>>)>,
    pub(super) tasks: Vec<madsim::task::JoinHandle<()>>,
}

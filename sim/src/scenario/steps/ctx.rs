//! What a scripted client's steps share while they run: the run's context ([`Ctx`]: the [`Board`], the
//! history, the trace, the members' endpoints, the request timeout, the watch tasks and informers to close
//! at the end), one step's view of it ([`RunCx`]), and how a step ends ([`Finished`]).

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::board::Board;
use super::kube_conn::KubeConn;
use super::observed::{InformerLog, KubeEvent, Observed};
use crate::client::{RecordingClient, SharedHistory};
use crate::kube::store::Store;
use crate::scenario::lang::expectations::Expectations;
use crate::trace::Trace;

/// Everything a client script needs.
pub struct Ctx {
    pub board: Arc<Board>,
    pub history: SharedHistory,
    pub trace: Trace,
    pub endpoints: Vec<String>,
    pub request_timeout: Duration,
    pub watch_tasks: Arc<Mutex<Vec<madsim::task::JoinHandle<()>>>>,
    /// The watches `kube` steps opened, and their collecting tasks.
    pub kube_watches: Mutex<KubeWatches>,
    /// The informers `informer` steps started.
    pub informers: Mutex<Informers>,
    /// The informers' bug switches on.
    pub informer_bugs: crate::kube::reflector::Bugs,
    /// The run's seeds, for choices steps make (a controller's retry jitter).
    pub seeds: crate::cluster::Seeds,
}

/// One step's view of the run while it runs: the context, its client's connections, and the step.
pub struct RunCx<'a> {
    pub ctx: &'a Ctx,
    /// The client's recording etcd client (a Kubernetes client's names the first member, for its waits).
    pub client: &'a mut RecordingClient,
    /// A Kubernetes client's connections to its apiservers.
    pub kube: Option<&'a mut KubeConn>,
    /// The client's name, as the trace shows it.
    pub client_name: &'a str,
    /// The step's label (its name, or `client#n`).
    pub label: &'a str,
    pub name: Option<&'a str>,
    /// What the step expects (a `kube` step with `until_ms` asks again until its answer meets it).
    pub expect: Option<&'a Expectations>,
}

impl RunCx<'_> {
    /// A step that could not be sent: an unresolved reference.
    pub fn not_run(&self, reason: String) -> Finished {
        self.ctx.trace.event(self.client_name, format_args!("{} not sent: {reason}", self.label));
        (Observed::NotRun(reason), None, None)
    }

    /// The Kubernetes client's connections; validation lets only Kubernetes clients run these steps.
    pub fn kube(&mut self) -> &mut KubeConn {
        self.kube.as_deref_mut().expect("validated: only Kubernetes clients run Kubernetes steps")
    }
}

/// What a step ended with: what was observed, the revision `rev_of` gets, the lease a grant got.
pub type Finished = (Observed, Option<i64>, Option<i64>);

/// The watches `kube` steps opened: each step's events so far, and the task collecting them.
#[derive(Default)]
pub struct KubeWatches {
    pub events: BTreeMap<String, Arc<Mutex<Vec<KubeEvent>>>>,
    pub tasks: Vec<madsim::task::JoinHandle<()>>,
}

/// Where an informer's objects live, for `controller` steps that read its store and update what they read.
#[derive(Clone, Debug)]
pub struct InformerTarget {
    /// The request path of the resource's collection (`/api/v1/namespaces/default/configmaps`).
    pub collection: String,
    pub namespace: Option<String>,
}

/// The informers the run started, by step label: their logs, and the tasks running them.
#[derive(Default)]
pub struct Informers {
    /// Each informer's etcd prefix (what its store must equal at the end) and log.
    pub logs: BTreeMap<String, (String, Arc<Mutex<InformerLog>>)>,
    /// How to restart each informer's process, by step label.
    pub restarts: BTreeMap<String, Arc<tokio::sync::Notify>>,
    /// Each informer's objects and store, for `controller` steps.
    pub stores: BTreeMap<String, (InformerTarget, Arc<Mutex<Store>>)>,
    pub tasks: Vec<madsim::task::JoinHandle<()>>,
}

/// Checks `condition` every 10ms of simulated time until it gives a value or `timeout` passes.
pub async fn poll<T>(timeout: Duration, mut condition: impl FnMut() -> Option<T>) -> Option<T> {
    let deadline = madsim::time::Instant::now() + timeout;
    loop {
        if let Some(v) = condition() {
            return Some(v);
        }
        if madsim::time::Instant::now() >= deadline {
            return None;
        }
        madsim::time::sleep(Duration::from_millis(10)).await;
    }
}

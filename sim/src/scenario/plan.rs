//! The validated scenario: what [`super::validate`] makes of a file once every name resolves, every
//! expression parses and every expectation is one the operation can meet. The runner reads only this.

use std::collections::BTreeSet;

use crate::checker::Guarantee;
use crate::cluster::ClusterSpec;
use crate::fault::nemesis::NemesisConfig;
use crate::fault::FailpointSpec;
use crate::fault::Fault;
use crate::workload::Workload;

use super::lang::expectations::Expectations;
pub use super::lang::kube::KubeTarget;
use super::steps::Op;
use super::syntax;

/// A scenario ready to run.
#[derive(Clone, Debug)]
pub struct Scenario {
    /// The file stem: the snapshot's name.
    pub name: String,
    /// The path as given.
    pub path: String,
    /// The first comment line: what the scenario shows.
    pub summary: String,
    /// The file as parsed, for tools that rewrite it (`kubesim shrink`).
    pub file: syntax::File,
    pub seeds: u64,
    pub canonical_seed: u64,
    pub time_limit_s: u64,
    pub settle_ms: u64,
    pub cluster: ClusterSpec,
    pub request_timeout_ms: u64,
    pub clients: Vec<ClientScript>,
    pub workloads: Vec<WorkloadPlan>,
    pub faults: Vec<FaultPlan>,
    pub failpoints: Vec<FailpointSpec>,
    pub nemesis: Option<NemesisConfig>,
    /// Guarantees that must pass, and those that must fail.
    pub hold: BTreeSet<Guarantee>,
    pub fail: BTreeSet<Guarantee>,
    /// `[checks] hold` was written: a guarantee it names that had nothing to judge fails.
    pub hold_explicit: bool,
    /// Why `Linearizable` cannot judge this scenario's KV history (etcd clients that write, compact or read
    /// the registry beside apiservers, whose writes take revisions that history never sees): its verdict
    /// is then `skipped` with this reason.
    pub linearizable_skipped: Option<String>,
    /// `WriteOutcomesSameWithoutWatchCache`: must hold (`Some(true)`), must fail (`Some(false)`), or not
    /// asked (`None`, and the run has no twin without watch caches).
    pub cache_parity: Option<bool>,
    /// `AcknowledgedWritesKept`: must hold, must fail, or not asked (and then its etcd reads are not made).
    pub writes_kept: Option<bool>,
    /// The bug zoo entry this scenario is, if any.
    pub zoo: Option<ZooEntry>,
    /// Expectations about several steps at once.
    pub relations: Vec<super::relations::Relation>,
    /// What validation points out without refusing (a fault aimed at the leader shorter than an election
    /// timeout, which cannot change the leader), shown with the run's outcome.
    pub notes: Vec<String>,
}

/// A scenario of the bug zoo: a historical race and the switch that puts it back.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ZooEntry {
    /// The bug switch (`crate::bugs`), off unless turned on.
    pub bug: String,
    /// The race, in a few words.
    pub race: String,
}

impl Scenario {
    /// The same scenario with every apiserver's watch cache off: the twin run that
    /// `WriteOutcomesSameWithoutWatchCache` compares with.
    pub fn without_watch_cache(&self) -> Scenario {
        let mut twin = self.clone();
        for a in &mut twin.cluster.apiservers {
            a.watch_cache = false;
        }
        twin.cache_parity = None;
        twin
    }

    /// Turns on a bug switch for this scenario's runs, whatever its file says.
    pub fn turn_on(&mut self, bug: &str) -> Result<(), crate::bugs::UnknownSwitch> {
        self.cluster.bugs.turn_on(bug)
    }

    /// Turns on the switch of the zoo entry this scenario is; `false` if it is none.
    pub fn turn_on_zoo_bug(&mut self) -> bool {
        match self.zoo.as_ref().map(|z| z.bug.clone()) {
            Some(bug) => self.turn_on(&bug).is_ok(),
            None => false,
        }
    }

    /// The default seeds, `1..=seeds`.
    pub fn default_seeds(&self) -> std::ops::RangeInclusive<u64> {
        1..=self.seeds
    }
}

/// A scripted client.
#[derive(Clone, Debug)]
pub struct ClientScript {
    pub name: String,
    /// The member it talks to (an etcd client), or "" (a Kubernetes client).
    pub member: String,
    /// A Kubernetes client: the apiservers it may reach and how it picks one per request.
    pub kube: Option<KubeTarget>,
    /// A Kubernetes client's `[[user]]`, whose token its requests carry (`None`: anonymous).
    pub user: Option<String>,
    pub steps: Vec<StepPlan>,
}

#[derive(Clone, Debug)]
pub struct StepPlan {
    /// The step's name, or `<client>#<n>` (1-based) for an unnamed step.
    pub label: String,
    pub name: Option<String>,
    /// `file:line` of the step, for failure messages.
    pub at: String,
    pub after: Vec<String>,
    pub at_ms: Option<u64>,
    pub op: Op,
    pub expect: Option<Expectations>,
}

impl StepPlan {
    /// The request as the trace and the snapshot show it.
    pub fn text(&self) -> String {
        self.op.text()
    }
}

/// Generated traffic on its own clients.
#[derive(Clone, Debug)]
pub struct WorkloadPlan {
    pub name: String,
    pub kind: WorkloadKind,
    pub clients: Vec<String>,
    pub ops: usize,
    /// An `apiserver` workload's scripted client (`<name>-script`) and its number of steps.
    pub script: Option<(String, usize)>,
    /// `file:line` of the `[[workload]]`, for findings about it.
    pub at: String,
}

/// What a workload's clients send, and to whom.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WorkloadKind {
    /// etcd requests straight to the members (`kubernetes`, `key-value`).
    Etcd(Workload),
    /// HTTP requests to the apiservers (`apiserver`): creates, gets, lists, updates and deletes with
    /// resourceVersion preconditions, and watches, on ConfigMaps, recorded into an apiserver history.
    Apiserver,
}

impl std::str::FromStr for WorkloadKind {
    type Err = String;

    fn from_str(s: &str) -> Result<WorkloadKind, String> {
        match s {
            "apiserver" => Ok(WorkloadKind::Apiserver),
            other => other
                .parse()
                .map(WorkloadKind::Etcd)
                .map_err(|_| format!("no workload is named {other:?} (known: kubernetes, key-value, apiserver)")),
        }
    }
}

impl std::fmt::Display for WorkloadKind {
    /// As the report names it: `Kubernetes`, `KeyValue`, `Apiserver`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            WorkloadKind::Etcd(w) => write!(f, "{w:?}"),
            WorkloadKind::Apiserver => f.write_str("Apiserver"),
        }
    }
}

#[derive(Clone, Debug)]
pub struct FaultPlan {
    pub when: When,
    /// The fault; it may name nodes by role (`leader`, `follower`, and the rest of the nodes of an
    /// isolation), resolved when it applies (`crate::fault::roles`).
    pub fault: Fault,
    /// Undone this long after it applied.
    pub for_ms: Option<u64>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum When {
    At { ms: u64 },
    After { step: String, delay_ms: u64 },
}

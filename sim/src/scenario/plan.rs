//! The validated scenario: what [`super::validate`] makes of a file once every name resolves, every
//! expression parses and every expectation is one the operation can meet. The runner reads only this.

use std::collections::BTreeSet;

use crate::checker::Guarantee;
use crate::cluster::ClusterSpec;
use crate::fault::nemesis::NemesisConfig;
use crate::fault::FailpointSpec;
use crate::fault::Fault;
use crate::history::{GrpcCode, KeySpan};
use crate::workload::Workload;

use super::auth::AuthPlan;
use super::expr::Expr;
use super::syntax::{
    self, CompareOp, CompareTarget, EventType, ExpectOutcome, PatchType, Routing, SortOrder, SortTarget, Verb,
};

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
    /// `WriteOutcomesSameWithoutWatchCache`: must hold (`Some(true)`), must fail (`Some(false)`), or not
    /// asked (`None`, and the run has no twin without watch caches).
    pub cache_parity: Option<bool>,
    /// The bug zoo entry this scenario is, if any.
    pub zoo: Option<ZooEntry>,
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
    pub steps: Vec<StepPlan>,
}

/// Where a Kubernetes client's requests go.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KubeTarget {
    /// The apiservers, by name, in the order routing walks them.
    pub pool: Vec<String>,
    /// `None`: always the one apiserver of the pool.
    pub routing: Option<Routing>,
}

impl std::fmt::Display for KubeTarget {
    /// `api-0`, or `api-0,api-1 round-robin`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.pool.join(","))?;
        match self.routing {
            None => Ok(()),
            Some(Routing::RoundRobin) => f.write_str(" round-robin"),
            Some(Routing::Sticky) => f.write_str(" sticky"),
            Some(Routing::Failover) => f.write_str(" failover"),
        }
    }
}

/// A `kube` step: one request to an apiserver.
#[derive(Clone, Debug)]
pub struct KubePlan {
    pub verb: Verb,
    /// The request path up to the resource (`/apis/apps/v1/namespaces/default/deployments`).
    pub collection: String,
    /// The resource as the file names it (`deployments.apps`), for the trace.
    pub resource: String,
    pub namespace: Option<String>,
    pub name: Option<String>,
    pub subresource: Option<String>,
    /// The kind and apiVersion a body gets when it names none.
    pub kind: String,
    pub api_version: String,
    pub object: Option<serde_json::Value>,
    pub patch: Option<(PatchType, serde_json::Value)>,
    /// get, list, watch: the `resourceVersion` parameter; update: the body's optimistic lock.
    pub resource_version: Option<KubeRv>,
    pub resource_version_match: Option<String>,
    pub limit: Option<i64>,
    /// The list step whose continue token this list continues.
    pub continue_from: Option<String>,
    pub label_selector: Option<String>,
    pub field_selector: Option<String>,
    pub send_initial_events: bool,
    pub allow_watch_bookmarks: bool,
    pub timeout_s: Option<u64>,
    pub open_for_ms: Option<u64>,
    /// get, list: repeat until the expected code and fields hold, for at most this long.
    pub until_ms: Option<u64>,
    pub dry_run: bool,
    pub field_manager: Option<String>,
    pub force: bool,
    pub precondition_rv: Option<Expr>,
    pub grace_period_s: Option<i64>,
    pub propagation_policy: Option<String>,
    /// Where the resource's objects in the request's namespace live in etcd (`/registry/configmaps/default/`):
    /// what an informer's store must equal at quiescence.
    pub etcd_prefix: String,
}

/// A resourceVersion a step sends: as written (`"0"`, `""`), or a number an expression gives.
#[derive(Clone, Debug)]
pub enum KubeRv {
    Text(String),
    Number(Expr),
}

/// What a `kube` step's client must observe; `None` fields are not checked.
#[derive(Clone, Debug, Default)]
pub struct KubeExpect {
    /// The code, or the codes one of which it must be.
    pub code: Option<Vec<u16>>,
    pub reason: Option<String>,
    pub message: Option<String>,
    /// JSON pointer and the value it must hold.
    pub fields: Vec<(String, serde_json::Value)>,
    pub rv: Option<Expr>,
    pub items: Option<Vec<String>>,
    pub watch_events: Option<Vec<WatchEventExpect>>,
}

/// One event a `kube` watch must deliver.
#[derive(Clone, Debug)]
pub struct WatchEventExpect {
    /// `ADDED`, `MODIFIED`, `DELETED`, `BOOKMARK` or `ERROR`.
    pub kind: String,
    pub name: Option<String>,
    pub rv: Option<Expr>,
    pub initial_events_end: Option<bool>,
    pub code: Option<u16>,
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

#[derive(Clone, Debug)]
pub enum Op {
    Get(GetPlan),
    Put(PutPlan),
    Delete(DeletePlan),
    Txn(TxnPlan),
    Compact {
        revision: Expr,
        physical: bool,
    },
    LeaseGrant {
        ttl_s: i64,
        id: i64,
    },
    LeaseRevoke {
        lease: String,
    },
    LeaseKeepAlive {
        lease: String,
    },
    LeaseTimeToLive {
        lease: String,
        keys: bool,
    },
    LeaseLeases,
    Watch(WatchPlan),
    WatchProgress {
        watch: String,
    },
    WatchCancel {
        watch: String,
    },
    Sleep {
        ms: u64,
    },
    Wait(WaitPlan),
    Kube(Box<KubePlan>),
    /// An informer: its list request (verb list), which its relists repeat; `send_initial_events` says that
    /// it lists by streaming (watch-lists).
    Informer(Box<KubePlan>),
    /// Restarts the informer of the named step.
    InformerRestart {
        informer: String,
    },
    /// A controller's read-modify-write of one object, read from the informer step's store.
    Controller(Box<ControllerPlan>),
    /// A request of etcd's Auth service, or a login or logout.
    Auth(AuthPlan),
}

/// A `controller` step.
#[derive(Clone, Debug)]
pub struct ControllerPlan {
    pub informer: String,
    pub name: String,
    /// The merge patch it applies to what it read.
    pub set: serde_json::Value,
}

impl Op {
    /// The operation's key in the file (`put`, `lease_grant`).
    pub fn keyword(&self) -> &'static str {
        match self {
            Op::Get(_) => "get",
            Op::Put(_) => "put",
            Op::Delete(_) => "delete",
            Op::Txn(_) => "txn",
            Op::Compact { .. } => "compact",
            Op::LeaseGrant { .. } => "lease_grant",
            Op::LeaseRevoke { .. } => "lease_revoke",
            Op::LeaseKeepAlive { .. } => "lease_keep_alive",
            Op::LeaseTimeToLive { .. } => "lease_time_to_live",
            Op::LeaseLeases => "lease_leases",
            Op::Watch(_) => "watch",
            Op::WatchProgress { .. } => "watch_progress",
            Op::WatchCancel { .. } => "watch_cancel",
            Op::Sleep { .. } => "sleep_ms",
            Op::Wait(_) => "wait",
            Op::Kube(_) => "kube",
            Op::Informer(_) => "informer",
            Op::InformerRestart { .. } => "informer_restart",
            Op::Controller(_) => "controller",
            Op::Auth(_) => "auth",
        }
    }

    /// Whether the step's response carries a header revision that `rev_of` can name.
    pub fn has_revision(&self) -> bool {
        matches!(
            self,
            Op::Get(_)
                | Op::Put(_)
                | Op::Delete(_)
                | Op::Txn(_)
                | Op::Compact { .. }
                | Op::LeaseGrant { .. }
                | Op::LeaseRevoke { .. }
                | Op::Watch(_)
                | Op::Kube(_)
                | Op::Informer(_)
                | Op::Controller(_)
        )
    }
}

#[derive(Clone, Debug)]
pub struct GetPlan {
    pub span: KeySpan,
    pub limit: i64,
    pub revision: Option<Expr>,
    pub serializable: bool,
    pub keys_only: bool,
    pub count_only: bool,
    pub sort_order: Option<SortOrder>,
    pub sort_target: Option<SortTarget>,
    pub min_mod_revision: Option<Expr>,
    pub max_mod_revision: Option<Expr>,
    pub min_create_revision: Option<Expr>,
    pub max_create_revision: Option<Expr>,
}

#[derive(Clone, Debug)]
pub struct PutPlan {
    pub key: String,
    pub value: String,
    pub lease: Option<String>,
    pub prev_kv: bool,
    pub ignore_value: bool,
    pub ignore_lease: bool,
}

#[derive(Clone, Debug)]
pub struct DeletePlan {
    pub span: KeySpan,
    pub prev_kv: bool,
}

#[derive(Clone, Debug)]
pub struct TxnPlan {
    pub compare: Vec<ComparePlan>,
    pub success: Vec<TxnOpPlan>,
    pub failure: Vec<TxnOpPlan>,
}

#[derive(Clone, Debug)]
pub struct ComparePlan {
    pub span: KeySpan,
    pub target: CompareTarget,
    pub op: CompareOp,
    pub value: CompareValue,
}

#[derive(Clone, Debug)]
pub enum CompareValue {
    Number(Expr),
    Text(String),
    /// A `lease_grant` step's lease.
    Lease(String),
}

#[derive(Clone, Debug)]
pub enum TxnOpPlan {
    /// Boxed: a get plan (range, limits, revision, sort) is four times the size of the others.
    Get(Box<GetPlan>),
    Put(PutPlan),
    Delete(DeletePlan),
    Txn(TxnPlan),
}

#[derive(Clone, Debug)]
pub struct WatchPlan {
    pub span: KeySpan,
    pub start_revision: Option<Expr>,
    pub prev_kv: bool,
    pub progress_notify: bool,
    pub no_put: bool,
    pub no_delete: bool,
    pub fragment: bool,
    pub open_for_ms: Option<u64>,
}

#[derive(Clone, Debug)]
pub enum WaitPlan {
    Leader { timeout_ms: u64 },
    Watch { watch: String, condition: WatchCondition, timeout_ms: u64 },
}

#[derive(Clone, Debug)]
pub enum WatchCondition {
    Events(usize),
    Revision(Expr),
    Canceled,
    Progress,
}

/// What a step's client must observe; `None` fields are not checked.
#[derive(Clone, Debug, Default)]
pub struct Expectations {
    pub outcome: Option<ExpectOutcome>,
    pub error: Option<(GrpcCode, Option<String>)>,
    pub revision: Option<Expr>,
    /// What the response itself must hold (`kvs`, `count`, `more`, `prev_value`, `succeeded`).
    pub body: ResponseExpect,
    pub ttl_s: Option<Expr>,
    /// lease_time_to_live: the keys attached, in order.
    pub keys: Option<Vec<String>>,
    /// lease_leases: the `lease_grant` steps whose leases are listed, and no others.
    pub leases: Option<Vec<String>>,
    /// auth lists and gets: the names in the answer, in order.
    pub names: Option<Vec<String>>,
    /// txn: one per operation of the branch that ran.
    pub responses: Option<Vec<ResponseExpect>>,
    pub events: Option<Vec<EventExpect>>,
    pub canceled: Option<bool>,
    pub compact_revision: Option<Expr>,
    pub cancel_reason: Option<String>,
    pub progress_count: Option<Expr>,
    pub progress_revision: Option<Expr>,
    /// A `kube` step's expectations.
    pub kube: KubeExpect,
}

/// What a response must hold: a step's own, or one operation's in a txn branch; `None` fields are not
/// checked.
#[derive(Clone, Debug, Default)]
pub struct ResponseExpect {
    pub kvs: Option<Vec<KvExpect>>,
    pub count: Option<Expr>,
    pub more: Option<bool>,
    pub prev_value: Option<String>,
    pub succeeded: Option<bool>,
}

impl ResponseExpect {
    /// The keys given, by their names in the file.
    pub fn given(&self) -> Vec<&'static str> {
        let keys = [
            ("kvs", self.kvs.is_some()),
            ("count", self.count.is_some()),
            ("more", self.more.is_some()),
            ("prev_value", self.prev_value.is_some()),
            ("succeeded", self.succeeded.is_some()),
        ];
        keys.iter().filter(|(_, set)| *set).map(|(k, _)| *k).collect()
    }

    /// The first key given that a response of `kind` cannot hold.
    pub fn misfit(&self, kind: ResponseKind) -> Option<&'static str> {
        self.given().into_iter().find(|k| !kind.keys().contains(k))
    }
}

/// What kind of response a [`ResponseExpect`] is judged against.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ResponseKind {
    Get,
    Put,
    Delete,
    Txn,
}

impl ResponseKind {
    pub fn keyword(self) -> &'static str {
        match self {
            ResponseKind::Get => "get",
            ResponseKind::Put => "put",
            ResponseKind::Delete => "delete",
            ResponseKind::Txn => "txn",
        }
    }

    /// The keys of [`ResponseExpect`] a response of this kind can meet.
    pub fn keys(self) -> &'static [&'static str] {
        match self {
            ResponseKind::Get => &["kvs", "count", "more"],
            ResponseKind::Put => &["prev_value"],
            ResponseKind::Delete => &["count", "prev_value"],
            ResponseKind::Txn => &["succeeded"],
        }
    }
}

impl TxnOpPlan {
    pub fn kind(&self) -> ResponseKind {
        match self {
            TxnOpPlan::Get(_) => ResponseKind::Get,
            TxnOpPlan::Put(_) => ResponseKind::Put,
            TxnOpPlan::Delete(_) => ResponseKind::Delete,
            TxnOpPlan::Txn(_) => ResponseKind::Txn,
        }
    }
}

#[derive(Clone, Debug)]
pub struct KvExpect {
    pub key: String,
    pub value: Option<String>,
    pub create_revision: Option<Expr>,
    pub mod_revision: Option<Expr>,
    pub version: Option<Expr>,
    pub lease: Option<String>,
}

#[derive(Clone, Debug)]
pub struct EventExpect {
    pub kind: EventType,
    pub key: String,
    pub value: Option<String>,
    pub mod_revision: Option<Expr>,
    pub create_revision: Option<Expr>,
    pub version: Option<Expr>,
    pub prev_value: Option<String>,
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
    pub fault: Fault,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum When {
    At { ms: u64 },
    After { step: String, delay_ms: u64 },
}

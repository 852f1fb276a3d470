//! The scenario file as written: serde structs that mirror the TOML tables key for key, every table with
//! `deny_unknown_fields`, and `Spanned` wherever a later check needs to point at the text. Nothing here
//! judges a value beyond its type; [`super::validate`] does that, with the spans kept here.
//!
//! A step is one flat table with exactly one operation key (`put = {..}`, `watch = {..}`, `sleep_ms = ..`)
//! beside the keys every step shares (`name`, `after`, `at_ms`, `expect`). Flat tables, rather than a
//! serde-tagged enum, keep toml's own error locations exact: a tagged enum buffers its content and loses
//! them. New operations (the apiserver's) become new optional keys, so existing files keep parsing.

use serde::{Deserialize, Serialize};
use toml::Spanned;

mod auth;
mod checks;
mod kube;

mod expect;

pub use auth::Auth;
pub use checks::{CheckName, Checks};
pub use expect::{Codes, EventType, Expect, ExpectError, ExpectEvent, ExpectKv, ExpectOutcome, ExpectResponse};
pub use kube::{Apiserver, Controller, ExpectWatchEvent, Informer, Kube, PatchType, Routing, Verb};

/// A whole scenario file.
#[derive(Clone, Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct File {
    #[serde(default)]
    pub scenario: Settings,
    #[serde(default)]
    pub cluster: Cluster,
    #[serde(default, rename = "apiserver", skip_serializing_if = "Vec::is_empty")]
    pub apiservers: Vec<Apiserver>,
    #[serde(default, rename = "client", skip_serializing_if = "Vec::is_empty")]
    pub clients: Vec<Client>,
    #[serde(default, rename = "workload", skip_serializing_if = "Vec::is_empty")]
    pub workloads: Vec<Workload>,
    #[serde(default, rename = "fault", skip_serializing_if = "Vec::is_empty")]
    pub faults: Vec<Spanned<Fault>>,
    #[serde(default, rename = "failpoint", skip_serializing_if = "Vec::is_empty")]
    pub failpoints: Vec<Spanned<Failpoint>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nemesis: Option<Spanned<Nemesis>>,
    #[serde(default)]
    pub checks: Checks,
}

/// `[scenario]`: how the scenario is run by default.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Settings {
    /// Seeds `1..=seeds` are the scenario's default sweep.
    #[serde(default = "default_seeds")]
    pub seeds: Spanned<u64>,
    /// The seed whose outcome is the scenario's snapshot.
    #[serde(default = "default_canonical_seed")]
    pub canonical_seed: u64,
    /// Simulated time a run may take before it is failed as stuck.
    #[serde(default = "default_time_limit_s")]
    pub time_limit_s: Spanned<u64>,
    /// Quiet time after the last client step, before open watches are closed and checked.
    #[serde(default = "default_settle_ms")]
    pub settle_ms: u64,
    /// A bug zoo entry: the bug switch whose race this scenario catches (off in its own runs, which must
    /// pass; `kubesim zoo` and `--zoo` turn it on).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bug: Option<Spanned<String>>,
    /// A bug zoo entry: the race, in a few words, for the zoo's table.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub race: Option<Spanned<String>>,
}

fn default_seeds() -> Spanned<u64> {
    Spanned::new(0..0, 10)
}
fn default_canonical_seed() -> u64 {
    1
}
fn default_time_limit_s() -> Spanned<u64> {
    Spanned::new(0..0, 120)
}
fn default_settle_ms() -> u64 {
    1000
}

impl Default for Settings {
    fn default() -> Settings {
        Settings {
            seeds: default_seeds(),
            canonical_seed: default_canonical_seed(),
            time_limit_s: default_time_limit_s(),
            settle_ms: default_settle_ms(),
            bug: None,
            race: None,
        }
    }
}

/// `[cluster]`: the fake-etcd members and how clients talk to them.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Cluster {
    #[serde(default = "default_members")]
    pub members: Spanned<usize>,
    #[serde(default = "default_progress_notify_interval_ms")]
    pub progress_notify_interval_ms: Spanned<u64>,
    /// A request with no answer within this time has an unknown outcome.
    #[serde(default = "default_request_timeout_ms")]
    pub request_timeout_ms: Spanned<u64>,
    /// Raft entries applied between two snapshots (etcd's `--snapshot-count`). A small value makes the leader
    /// compact its log, so that a member that lagged behind must install a snapshot.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub snapshot_count: Option<Spanned<u64>>,
    /// How long a simple auth token lives without use (etcd's `--auth-token-ttl`, default 300 s).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub auth_token_ttl_s: Option<Spanned<u64>>,
    /// Bug switches for negative tests, by name (`restore-lowers-watchers`, `skip-sync`,
    /// `txn-ranges-checked-only-where-served`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub bugs: Vec<Spanned<String>>,
    /// Apiservers, `apiserver-1..N`, each on its own node with its own watch cache (`[[apiserver]]` tunes one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub apiservers: Option<Spanned<usize>>,
    /// The resources they serve besides namespaces (`configmaps`, `deployments.apps`); default: those the
    /// scenario's `kube` steps name.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub resources: Vec<Spanned<String>>,
}

fn default_members() -> Spanned<usize> {
    Spanned::new(0..0, 1)
}
fn default_progress_notify_interval_ms() -> Spanned<u64> {
    Spanned::new(0..0, 1000)
}
fn default_request_timeout_ms() -> Spanned<u64> {
    Spanned::new(0..0, 1000)
}

impl Default for Cluster {
    fn default() -> Cluster {
        Cluster {
            members: default_members(),
            progress_notify_interval_ms: default_progress_notify_interval_ms(),
            request_timeout_ms: default_request_timeout_ms(),
            snapshot_count: None,
            auth_token_ttl_s: None,
            bugs: Vec::new(),
            apiservers: None,
            resources: Vec::new(),
        }
    }
}

/// `[[client]]`: a scripted client; its steps run one after another, beside the other clients.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Client {
    pub name: Spanned<String>,
    /// The member this client talks to (default: the first).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub member: Option<Spanned<String>>,
    /// A Kubernetes client: the apiserver it talks to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub apiserver: Option<Spanned<String>>,
    /// A Kubernetes client behind a load balancer: how it picks among every apiserver.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub routing: Option<Spanned<Routing>>,
    #[serde(default, rename = "step", skip_serializing_if = "Vec::is_empty")]
    pub steps: Vec<Spanned<Step>>,
}

/// `[[client.step]]`: one operation, with when it may start and what its client must observe.
#[derive(Clone, Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Step {
    /// Names the step for `after`, `rev_of(..)`, `lease`, `watch` and the report.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<Spanned<String>>,
    /// Steps (of any client) that must have completed before this one starts.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub after: Vec<Spanned<String>>,
    /// Not before this simulated time (milliseconds since the run started).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at_ms: Option<u64>,

    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub get: Option<Spanned<Get>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub put: Option<Spanned<Put>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delete: Option<Spanned<Delete>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub txn: Option<Spanned<Txn>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compact: Option<Spanned<Compact>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lease_grant: Option<Spanned<LeaseGrant>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lease_revoke: Option<Spanned<LeaseRef>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lease_keep_alive: Option<Spanned<LeaseRef>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lease_time_to_live: Option<Spanned<LeaseTimeToLive>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lease_leases: Option<Spanned<LeaseLeases>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub watch: Option<Spanned<Watch>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub watch_progress: Option<Spanned<WatchRef>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub watch_cancel: Option<Spanned<WatchRef>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sleep_ms: Option<Spanned<u64>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wait: Option<Spanned<Wait>>,
    /// A request to an apiserver (a Kubernetes client's step).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kube: Option<Spanned<Kube>>,
    /// An informer on a resource (a Kubernetes client's step), running for the rest of the run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub informer: Option<Spanned<Informer>>,
    /// Restarts the named informer's process (a controller crash): it forgets its store and relists.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub informer_restart: Option<Spanned<String>>,
    /// A controller's read-modify-write from an informer's store, retried on conflict.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub controller: Option<Spanned<Controller>>,
    /// A request of etcd's Auth service, or a login or logout of the step's client.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub auth: Option<Spanned<Auth>>,

    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expect: Option<Spanned<Expect>>,
}

/// Which keys an operation covers is said by four keys every key-range operation has: `key` alone is one
/// key; with `prefix = true`, every key under it; with `range_end`, `[key, range_end)`; with
/// `from_key = true`, every key from `key` on. They are spelled out in each table (no serde `flatten`,
/// which would lose toml's error locations); [`super::validate`] reads them through [`KeyFields`].
pub(super) fn is_false(b: &bool) -> bool {
    !*b
}

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Get {
    pub key: Spanned<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub range_end: Option<Spanned<String>>,
    #[serde(default, skip_serializing_if = "is_false")]
    pub prefix: bool,
    #[serde(default, skip_serializing_if = "is_false")]
    pub from_key: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<i64>,
    /// Read at this revision (a number or `rev_of(step)`); default the latest.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revision: Option<Spanned<Value>>,
    #[serde(default, skip_serializing_if = "is_false")]
    pub serializable: bool,
    #[serde(default, skip_serializing_if = "is_false")]
    pub keys_only: bool,
    #[serde(default, skip_serializing_if = "is_false")]
    pub count_only: bool,
    /// `ascend`, `descend` or `none` (the default: key order, as stored).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sort_order: Option<SortOrder>,
    /// `key` (the default), `version`, `create`, `mod` or `value`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sort_target: Option<SortTarget>,
    /// Only keys last modified at or after this revision (a number or `rev_of(step)`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_mod_revision: Option<Spanned<Value>>,
    /// Only keys last modified at or before this revision.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_mod_revision: Option<Spanned<Value>>,
    /// Only keys created at or after this revision.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_create_revision: Option<Spanned<Value>>,
    /// Only keys created at or before this revision.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_create_revision: Option<Spanned<Value>>,
}

/// etcd's `RangeRequest.SortOrder`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SortOrder {
    None,
    Ascend,
    Descend,
}

/// etcd's `RangeRequest.SortTarget`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SortTarget {
    Key,
    Version,
    Create,
    Mod,
    Value,
}

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Put {
    pub key: Spanned<String>,
    /// Required unless `ignore_value = true` (which keeps the stored value, and takes none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<Spanned<String>>,
    /// The `lease_grant` step whose lease the key is attached to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lease: Option<Spanned<String>>,
    #[serde(default, skip_serializing_if = "is_false")]
    pub prev_kv: bool,
    /// Keep the key's current value (etcd's `ignore_value`; the key must exist).
    #[serde(default, skip_serializing_if = "is_false")]
    pub ignore_value: bool,
    /// Keep the key's current lease (etcd's `ignore_lease`; the key must exist).
    #[serde(default, skip_serializing_if = "is_false")]
    pub ignore_lease: bool,
}

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Delete {
    pub key: Spanned<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub range_end: Option<Spanned<String>>,
    #[serde(default, skip_serializing_if = "is_false")]
    pub prefix: bool,
    #[serde(default, skip_serializing_if = "is_false")]
    pub from_key: bool,
    #[serde(default, skip_serializing_if = "is_false")]
    pub prev_kv: bool,
}

/// `txn = { compare = [..], success = [..], failure = [..] }`.
#[derive(Clone, Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Txn {
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub compare: Vec<Spanned<Compare>>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub success: Vec<Spanned<TxnOp>>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub failure: Vec<Spanned<TxnOp>>,
}

/// `{ key = "/a", target = "mod", op = "==", value = "rev_of(create)" }`.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Compare {
    pub key: Spanned<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub range_end: Option<Spanned<String>>,
    #[serde(default, skip_serializing_if = "is_false")]
    pub prefix: bool,
    #[serde(default, skip_serializing_if = "is_false")]
    pub from_key: bool,
    pub target: CompareTarget,
    pub op: CompareOp,
    /// A number or `rev_of(..)` for version/create/mod, text for value, a lease step's name for lease.
    pub value: Spanned<Value>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CompareTarget {
    Version,
    Create,
    Mod,
    Value,
    Lease,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
pub enum CompareOp {
    #[serde(rename = "==")]
    Equal,
    #[serde(rename = "!=")]
    NotEqual,
    #[serde(rename = ">")]
    Greater,
    #[serde(rename = "<")]
    Less,
}

/// One operation of a txn branch: exactly one of the keys.
#[derive(Clone, Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct TxnOp {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub get: Option<Get>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub put: Option<Put>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delete: Option<Delete>,
    /// A nested txn (etcd 3.3 and later).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub txn: Option<Box<Txn>>,
}

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Compact {
    pub revision: Spanned<Value>,
    #[serde(default, skip_serializing_if = "is_false")]
    pub physical: bool,
}

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct LeaseGrant {
    pub ttl_s: i64,
    /// Ask for this id (default: the server picks).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<i64>,
}

/// Names the `lease_grant` step whose lease the operation is about.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct LeaseRef {
    pub lease: Spanned<String>,
}

/// `lease_time_to_live = { lease = "grant", keys = true }`.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct LeaseTimeToLive {
    pub lease: Spanned<String>,
    /// Ask for the keys attached to the lease too.
    #[serde(default, skip_serializing_if = "is_false")]
    pub keys: bool,
}

/// `lease_leases = {}`: lists every lease the member knows. It takes no keys.
#[derive(Clone, Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct LeaseLeases {}

/// Opens a watch that runs beside the client's later steps, until the run's end (or `open_for_ms`).
/// The watch step must be named; its `expect` is checked against everything the watch saw, at the end.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Watch {
    pub key: Spanned<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub range_end: Option<Spanned<String>>,
    #[serde(default, skip_serializing_if = "is_false")]
    pub prefix: bool,
    #[serde(default, skip_serializing_if = "is_false")]
    pub from_key: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_revision: Option<Spanned<Value>>,
    #[serde(default, skip_serializing_if = "is_false")]
    pub prev_kv: bool,
    #[serde(default, skip_serializing_if = "is_false")]
    pub progress_notify: bool,
    #[serde(default, skip_serializing_if = "is_false")]
    pub no_put: bool,
    #[serde(default, skip_serializing_if = "is_false")]
    pub no_delete: bool,
    /// Let the server split a response of at least `max_request_bytes` (1.5 MiB) into fragments.
    #[serde(default, skip_serializing_if = "is_false")]
    pub fragment: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub open_for_ms: Option<u64>,
}

/// Names the `watch` step an operation is about.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct WatchRef {
    pub watch: Spanned<String>,
}

/// Blocks the client until a condition holds, or fails the step after `timeout_ms`.
#[derive(Clone, Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Wait {
    /// Some member reports a leader.
    #[serde(default, skip_serializing_if = "is_false")]
    pub leader: bool,
    /// The watch step to wait on; with `events`, `revision`, `canceled` or `progress`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub watch: Option<Spanned<String>>,
    /// The watch has delivered at least this many events.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub events: Option<usize>,
    /// The watch has vouched for a revision that satisfies this (an event's or a progress notification's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revision: Option<Spanned<Value>>,
    /// The watch has been canceled by the server.
    #[serde(default, skip_serializing_if = "is_false")]
    pub canceled: bool,
    /// The watch has received at least one progress notification.
    #[serde(default, skip_serializing_if = "is_false")]
    pub progress: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<u64>,
}

/// A number, or text: an expression (`">= rev_of(create) + 1"`) where a number is expected, plain text
/// where text is (a compared value).
#[derive(Clone, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(untagged)]
pub enum Value {
    Number(i64),
    Text(String),
}

/// `[[workload]]`: generated traffic from its own clients (`<name>-1..N`).
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Workload {
    pub name: Spanned<String>,
    /// `kubernetes` or `key-value` (etcd traffic), or `apiserver` (HTTP traffic through the apiservers).
    pub kind: Spanned<String>,
    pub clients: Spanned<usize>,
    /// Requests over all of the workload's clients.
    pub ops: usize,
    /// `apiserver` workloads: a scripted client (`<name>-script`) that runs this many steps of a seeded
    /// sequence on ConfigMaps nobody else writes, whose outcomes follow from the sequence alone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub script_steps: Option<Spanned<usize>>,
}

/// `[[fault]]`: one fault, at a fixed time or after a step; exactly one action key.
#[derive(Clone, Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Fault {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at_ms: Option<u64>,
    /// Apply once this step has completed (plus `delay_ms`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after: Option<Spanned<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delay_ms: Option<u64>,

    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partition: Option<Sides>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partition_one_way: Option<OneWay>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub heal: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clog: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unclog: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clog_link: Option<Link>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unclog_link: Option<Link>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub packet_loss_permille: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency: Option<Latency>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kill: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub restart: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pause: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resume: Option<String>,
    /// Lets go of the requests held at a failpoint armed with `hold`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub release: Option<Release>,
}

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Sides {
    pub left: Vec<String>,
    pub right: Vec<String>,
}

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct OneWay {
    pub from: Vec<String>,
    pub to: Vec<String>,
}

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Link {
    pub from: String,
    pub to: String,
}

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Latency {
    pub min_ms: u64,
    pub max_ms: u64,
}

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Release {
    pub node: String,
    pub point: String,
}

/// `[[failpoint]]`: armed on a member before the clients start.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Failpoint {
    pub node: String,
    pub point: String,
    pub action: FailpointAction,
    /// For `delay`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delay_ms: Option<u64>,
    /// Let this many hits pass before firing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skip: Option<u32>,
    /// Fire this many times, then disarm (default: every hit).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub times: Option<u32>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FailpointAction {
    Delay,
    Drop,
    Error,
    Crash,
    Hold,
}

/// `[nemesis]`: the seeded random fault schedule and its knobs.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Nemesis {
    #[serde(default = "default_true")]
    pub enabled: bool,
    /// Which fault patterns it draws from (default: all).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub patterns: Option<Vec<Spanned<String>>>,
    /// The quiet time between rounds, drawn from `[min, max)`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quiet_ms: Option<Spanned<[u64; 2]>>,
}

fn default_true() -> bool {
    true
}

/// The key fields of a key-range table, borrowed.
pub struct KeyFields<'a> {
    pub key: &'a Spanned<String>,
    pub range_end: Option<&'a Spanned<String>>,
    pub prefix: bool,
    pub from_key: bool,
}

macro_rules! key_fields {
    ($($t:ty),*) => {$(
        impl $t {
            pub fn keys(&self) -> KeyFields<'_> {
                KeyFields { key: &self.key, range_end: self.range_end.as_ref(), prefix: self.prefix, from_key: self.from_key }
            }
        }
    )*};
}

key_fields!(Get, Delete, Compare, Watch);

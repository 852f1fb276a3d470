//! The scenario file as written: serde structs that mirror the TOML tables key for key, every table with
//! `deny_unknown_fields`, and `Spanned` wherever a later check needs to point at the text. Nothing here
//! judges a value beyond its type; [`super::validate`] does that, with the spans kept here.
//!
//! A step's table is the step kinds' (`crate::scenario::steps::Step`): one operation key beside the keys
//! every step shares, its value read by its kind. The vocabulary the tables share (values, expectations,
//! routing) is `crate::scenario::lang`'s.

use serde::{Deserialize, Serialize};
use toml::Spanned;

pub mod access;
mod checks;
pub mod expand;

pub use crate::scenario::lang::kube::Routing;
pub use crate::scenario::lang::value::Value;
pub use crate::scenario::steps::Step;
pub use access::{User, Webhook};
pub use checks::{CheckName, Checks};

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
    /// Users the apiservers trust, by a token each.
    #[serde(default, rename = "user", skip_serializing_if = "Vec::is_empty")]
    pub users: Vec<User>,
    /// Admission webhooks, each on a node of its own.
    #[serde(default, rename = "webhook", skip_serializing_if = "Vec::is_empty")]
    pub webhooks: Vec<Webhook>,
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
    /// Expectations about several steps at once.
    #[serde(default, rename = "relation", skip_serializing_if = "Vec::is_empty")]
    pub relations: Vec<Spanned<crate::scenario::relations::Syntax>>,
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
    /// The apiservers' `--authorization-mode` (`AlwaysAllow`, the default; `RBAC`; `Node,RBAC`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub authorization_mode: Option<Spanned<String>>,
    /// kube-controller-manager replicas, `controller-manager-1..N`, each on a node of its own, leader-elected.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub controller_managers: Option<Spanned<usize>>,
    /// Simulated nodes, `node-1..N`, each a kwok-like kubelet on a node of its own; a scheduler runs beside
    /// each controller manager.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nodes: Option<Spanned<usize>>,
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
            authorization_mode: None,
            controller_managers: None,
            nodes: None,
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
    /// A Kubernetes client: the `[[user]]` it runs as (its requests carry the user's token); without
    /// one it is anonymous.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user: Option<Spanned<String>>,
    #[serde(default, rename = "step", skip_serializing_if = "Vec::is_empty")]
    pub steps: Vec<Spanned<Step>>,
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

/// `[[fault]]`: one fault, at a fixed time or after a step; exactly one action key. A node may be named by
/// its role when the fault applies: `leader` (the member that leads then) or `follower` (a member that
/// does not, drawn from the seed), in `kill`, `pause`, `clog`, `isolate`, `cut_from_peers` and partition sides.
#[derive(Clone, Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Fault {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at_ms: Option<Millis>,
    /// Apply once this step has completed (plus `delay_ms`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after: Option<Spanned<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delay_ms: Option<Millis>,
    /// Undo the fault this long after it applied: a kill is restarted, a pause resumed, a clog unclogged, a
    /// partition, isolation, loss or latency healed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub for_ms: Option<u64>,

    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partition: Option<Sides>,
    /// Cuts one node off from every other node (a partition of it against the rest).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub isolate: Option<String>,
    /// Cuts one member off from the other members only: it keeps serving its clients and apiservers, with
    /// no leader once it has noticed (what etcd's require-leader option exists for).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cut_from_peers: Option<String>,
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
    /// The step after which the first round starts (default: the run's start), so that a setup can finish
    /// in a quiet cluster.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after: Option<Spanned<String>>,
}

fn default_true() -> bool {
    true
}

/// `[[apiserver]]`: one apiserver's settings (the others keep the defaults).
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Apiserver {
    /// Which apiserver (`apiserver-2`).
    pub name: Spanned<String>,
    /// Whether reads and watches go through its watch cache (default: yes).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub watch_cache: Option<bool>,
    /// The events each of its watch caches keeps in its history (default 100, upstream's); a small one
    /// makes a watch from a slightly old resourceVersion get 410 Gone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub watch_cache_size: Option<Spanned<usize>>,
    /// The one etcd member it talks to (default: every member, the first drawn from the seed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub member: Option<Spanned<String>>,
    /// The etcd members its client uses, as `--etcd-servers` lists them (default: every member).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub members: Option<Spanned<Vec<String>>>,
}

/// A time in milliseconds, written as a number or as digits in a string (what a `for_each` copy of a
/// fault gets: `at_ms = "{i}000"`, or `every_ms`'s spacing).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(into = "u64")]
pub struct Millis(pub u64);

impl From<Millis> for u64 {
    fn from(m: Millis) -> u64 {
        m.0
    }
}

impl<'de> Deserialize<'de> for Millis {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Millis, D::Error> {
        struct Visitor;
        impl serde::de::Visitor<'_> for Visitor {
            type Value = Millis;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a number of milliseconds")
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<Millis, E> {
                u64::try_from(v).map(Millis).map_err(|_| E::custom(format!("{v} ms is negative")))
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<Millis, E> {
                Ok(Millis(v))
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Millis, E> {
                v.trim().parse().map(Millis).map_err(|_| E::custom(format!("{v:?} is not a number of milliseconds")))
            }
        }
        d.deserialize_any(Visitor)
    }
}

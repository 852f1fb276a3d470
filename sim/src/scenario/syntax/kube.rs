//! The scenario file's Kubernetes parts, as written: apiservers (`[cluster] apiservers = N` and
//! `[[apiserver]]` settings), how a client reaches them (`apiserver = "apiserver-1"` or a `routing`), the
//! `kube = { verb = "create", ... }` step, and the events a `kube` watch must deliver (`watch_events`;
//! the other expectations of a `kube` step are `expect` keys: `code`, `reason`, `message`, `fields`, `rv`,
//! `items`). Like the rest of the syntax, plain serde structs with
//! `deny_unknown_fields` and spans where a later check points at the text.

use serde::{Deserialize, Serialize};
use toml::Spanned;

use super::{is_false, Value};

/// `[[apiserver]]`: one apiserver's settings (the others keep the defaults).
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Apiserver {
    /// Which apiserver (`apiserver-2`).
    pub name: Spanned<String>,
    /// Whether reads and watches go through its watch cache (default: yes).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub watch_cache: Option<bool>,
    /// The etcd member it talks to (default: members in turn, `apiserver-i` to `etcd-((i-1) mod N + 1)`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub member: Option<Spanned<String>>,
}

/// How a client picks the apiserver of each request, as a load balancer in front of HA apiservers would.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Routing {
    /// Each request to the next apiserver in turn, from one the seed picks.
    RoundRobin,
    /// One apiserver drawn from the seed, for the whole run.
    Sticky,
    /// One apiserver until a request gets no answer or a 5xx/429, then the next.
    Failover,
}

/// The verb of a `kube` step, as kube-apiserver's request info names them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Verb {
    Create,
    Get,
    List,
    Update,
    Patch,
    Delete,
    Deletecollection,
    Watch,
}

impl Verb {
    /// The verb as the file, the trace and the report spell it.
    pub fn word(self) -> &'static str {
        match self {
            Verb::Create => "create",
            Verb::Get => "get",
            Verb::List => "list",
            Verb::Update => "update",
            Verb::Patch => "patch",
            Verb::Delete => "delete",
            Verb::Deletecollection => "deletecollection",
            Verb::Watch => "watch",
        }
    }

    /// Whether the verb changes what is stored (a dry run aside).
    pub fn is_write(self) -> bool {
        matches!(self, Verb::Create | Verb::Update | Verb::Patch | Verb::Delete | Verb::Deletecollection)
    }
}

/// A patch's type, by its `Content-Type`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum PatchType {
    /// `application/merge-patch+json` (RFC 7386).
    Merge,
    /// `application/json-patch+json` (RFC 6902).
    Json,
    /// `application/strategic-merge-patch+json` (built-in kinds).
    Strategic,
    /// `application/apply-patch+yaml`: server-side apply (the patch is the applied configuration; give
    /// `field_manager`).
    Apply,
}

/// `kube = { verb = "...", resource = "...", ... }`: one request to an apiserver, over HTTP.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Kube {
    pub verb: Spanned<Verb>,
    /// The resource's plural, qualified by its group outside the core group (`deployments.apps`).
    pub resource: Spanned<String>,
    /// Default `default` for namespaced resources; cluster-scoped ones take none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<Spanned<String>>,
    /// The object's name (get, update, patch, delete, and a watch of one object).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<Spanned<String>>,
    /// `status`, `scale`, ... (get, update, patch).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subresource: Option<Spanned<String>>,
    /// create and update: the body, written as TOML, sent as JSON.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub object: Option<Spanned<toml::Value>>,
    /// patch: the body (a table for a merge patch, an array of operations for a JSON patch).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub patch: Option<Spanned<toml::Value>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub patch_type: Option<PatchType>,
    /// get, list, watch: the `resourceVersion` parameter (`"0"`, `""`, or an expression such as
    /// `"rev_of(create-a)"`); update: the object's `metadata.resourceVersion`, the optimistic lock.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource_version: Option<Spanned<Value>>,
    /// list: `Exact` or `NotOlderThan`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource_version_match: Option<Spanned<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<i64>,
    /// list: continue the named list step's paging (its `continue` token).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub continue_from: Option<Spanned<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label_selector: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub field_selector: Option<String>,
    /// watch: a watch-list (`sendInitialEvents=true`, with `resourceVersionMatch=NotOlderThan`).
    #[serde(default, skip_serializing_if = "is_false")]
    pub send_initial_events: bool,
    #[serde(default, skip_serializing_if = "is_false")]
    pub allow_watch_bookmarks: bool,
    /// watch: the `timeoutSeconds` parameter.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_s: Option<u64>,
    /// watch: stop reading after this long (default: keep it open until the run settles).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub open_for_ms: Option<u64>,
    /// get, list: send again (every 10 ms) until the answer has the expected code and fields, for at most
    /// this long: how a client waits on a condition (`kubectl wait`), such as a CRD being established.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub until_ms: Option<u64>,
    /// create, update, patch, delete: `dryRun=All`.
    #[serde(default, skip_serializing_if = "is_false")]
    pub dry_run: bool,
    /// create, update, patch: the `fieldManager` the write's fields go to in `managedFields`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub field_manager: Option<String>,
    /// patch with `patch_type = "apply"`: `force=true`, taking conflicting fields from their managers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub force: Option<Spanned<bool>>,
    /// delete: `preconditions.resourceVersion`, an expression.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub precondition_rv: Option<Spanned<Value>>,
    /// delete: `gracePeriodSeconds`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grace_period_s: Option<i64>,
    /// delete: `propagationPolicy` (`Orphan`, `Background`, `Foreground`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub propagation_policy: Option<Spanned<String>>,
}

/// One event a `kube` watch must deliver, in order.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ExpectWatchEvent {
    /// `ADDED`, `MODIFIED`, `DELETED`, `BOOKMARK` or `ERROR`.
    #[serde(rename = "type")]
    pub kind: Spanned<String>,
    /// The object's name (not for bookmarks and errors).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The event's resourceVersion, an expression.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rv: Option<Spanned<Value>>,
    /// A bookmark: whether it is the `k8s.io/initial-events-end` one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub initial_events_end: Option<bool>,
    /// An ERROR event: its Status code (410 for a resourceVersion too old).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<u16>,
}

/// `informer = { resource = "configmaps", ... }`: client-go's reflector on one resource, in the background
/// for the rest of the run: it lists, keeps a local store, watches from the list's resourceVersion with
/// bookmarks, and relists after a 410 as client-go does. The step completes once the store has synced.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Informer {
    /// The resource's plural, qualified by its group outside the core group (`deployments.apps`).
    pub resource: Spanned<String>,
    /// Default `default` for namespaced resources; cluster-scoped ones take none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<Spanned<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label_selector: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub field_selector: Option<String>,
    /// The page size of its lists (client-go's pager; default unpaged). Lists at resourceVersion "0" are
    /// served whole from the watch cache whatever the limit, as upstream serves them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<i64>,
    /// Streaming lists (client-go's `WatchListClient`): each (re)list is a watch with
    /// `sendInitialEvents=true`, synced at its `k8s.io/initial-events-end` bookmark, instead of paged GETs.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub streaming: bool,
}

impl Informer {
    /// The list request the informer starts with, as a `kube` step would write it.
    pub fn as_list(&self) -> Kube {
        Kube {
            verb: Spanned::new(self.resource.span(), Verb::List),
            resource: self.resource.clone(),
            namespace: self.namespace.clone(),
            name: None,
            subresource: None,
            object: None,
            patch: None,
            patch_type: None,
            resource_version: None,
            resource_version_match: None,
            limit: self.limit,
            continue_from: None,
            label_selector: self.label_selector.clone(),
            field_selector: self.field_selector.clone(),
            send_initial_events: false,
            allow_watch_bookmarks: false,
            timeout_s: None,
            open_for_ms: None,
            until_ms: None,
            dry_run: false,
            field_manager: None,
            force: None,
            precondition_rv: None,
            grace_period_s: None,
            propagation_policy: None,
        }
    }
}

/// `controller = { informer = "pods", name = "web", set = { data = { mode = "b" } } }`: a controller's
/// read-modify-write, as client-go's `RetryOnConflict` runs it: read the object from the informer's store
/// (the controller's lister, possibly stale), merge `set` into it (RFC 7386), update it with the
/// resourceVersion it read, and on 409 Conflict wait 10 ms and try again from the store, at most 5 times.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Controller {
    /// The `informer` step whose store the controller reads.
    pub informer: Spanned<String>,
    /// The object's name, in the informer's namespace.
    pub name: Spanned<String>,
    /// What the controller changes, as a JSON merge patch written in TOML.
    pub set: Spanned<toml::Value>,
}

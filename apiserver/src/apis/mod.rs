//! The API this server serves: which groups, versions and resources exist, with what each resource tells
//! discovery (singular name, short names, categories, scope, verbs, subresources) and how it prints as a
//! table. One table, [`Catalog`], read by the router, discovery, OpenAPI and the Table conversion, so
//! that a resource is declared once.
//!
//! A kind is one module, `apis/<group>/<resource>.rs` (`scheduling/priorityclasses.rs`): its discovery
//! facts, strategy (defaults, validation with upstream's messages), printer and the objects kube-apiserver
//! creates at start, with its tests; and one line of [`KINDS`]. The kinds served before that layout are
//! still spread over a group file here ([`core`], [`apps`], [`events`], [`batch`], [`apiextensions`],
//! [`coordination`]), a strategy in `registry::strategies` and a printer in [`printers`]; they move as they
//! are touched.
//! The [`Verb`]s a resource serves are declared here, where discovery's facts are; the HTTP layer above
//! reads a request's verb into the same type.

pub(crate) mod admissionregistration;
pub(crate) mod apiextensions;
pub(crate) mod apiregistration;
pub(crate) mod apps;
pub(crate) mod authentication;
pub(crate) mod authorization;
pub(crate) mod autoscaling;
pub(crate) mod batch;
pub(crate) mod certificates;
pub(crate) mod coordination;
pub(crate) mod core;
pub(crate) mod discovery;
pub(crate) mod events;
pub(crate) mod flowcontrol;
pub(crate) mod networking;
pub(crate) mod node;
pub(crate) mod policy;
pub(crate) mod printers;
pub(crate) mod rbac;
pub(crate) mod scheduling;
pub(crate) mod storage;

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::registry::strategy::{Strategy, Subresource};
use crate::registry::Resource;
use crate::storage::conversion::Conversion;

pub(crate) use printers::Printer;

/// The verbs kube-apiserver knows (`get`, `list`, ...), as they are spelled in RBAC rules and metrics.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Verb {
    Get,
    List,
    Watch,
    Create,
    Update,
    Patch,
    Delete,
    DeleteCollection,
    /// A method no verb maps to (`OPTIONS`, `TRACE`); resource requests with it are 405.
    Unknown,
}

impl Verb {
    /// The verb's name as discovery documents and metrics spell it.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Verb::Get => "get",
            Verb::List => "list",
            Verb::Watch => "watch",
            Verb::Create => "create",
            Verb::Update => "update",
            Verb::Patch => "patch",
            Verb::Delete => "delete",
            Verb::DeleteCollection => "deletecollection",
            Verb::Unknown => "",
        }
    }
}

/// Every verb a full resource serves, in discovery's order.
pub(crate) const ALL_VERBS: &[Verb] = &[
    Verb::Create,
    Verb::Delete,
    Verb::DeleteCollection,
    Verb::Get,
    Verb::List,
    Verb::Patch,
    Verb::Update,
    Verb::Watch,
];

/// What an object-level subresource is to discovery and the router.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SubresourceInfo {
    /// Its name in the path (`status`).
    pub name: &'static str,
    /// What the registry does on an update of it.
    pub sub: Subresource,
    /// The kind its requests and responses carry (`Pod` for `pods/status`, `Scale` for `deployments/scale`).
    pub kind: &'static str,
    /// Group and version of that kind, if not the resource's (`autoscaling`/`v1` for `Scale`).
    pub kind_group_version: Option<(&'static str, &'static str)>,
    pub(crate) verbs: &'static [Verb],
}

/// A resource as discovery, the router and the printers know it.
#[derive(Clone)]
pub struct ResourceInfo {
    pub resource: Resource,
    pub singular: &'static str,
    pub short_names: &'static [&'static str],
    pub categories: &'static [&'static str],
    pub namespaced: bool,
    pub(crate) verbs: &'static [Verb],
    pub subresources: Vec<SubresourceInfo>,
    /// The strategy the registry uses for it.
    pub strategy: Arc<dyn Strategy>,
    /// Its `kubectl get` columns.
    pub printer: Printer,
    /// A custom resource: lists keep their items' type fields, as unstructured lists do.
    pub custom: bool,
    /// A custom resource whose CRD is being deleted: creates are refused (405).
    pub terminating: bool,
    /// A custom resource's `openAPIV3Schema`, which `/openapi/v3` publishes.
    pub schema: Option<Arc<serde_json::Value>>,
    /// Whether the resource speaks Kubernetes protobuf (built-in kinds do, except CRDs here; custom
    /// resources never).
    pub protobuf: bool,
    /// How objects are stored when they are stored in another group's shape (`events.k8s.io` events
    /// are core events in etcd); `None` when they are stored as served.
    pub conversion: Option<Conversion>,
    /// The objects kube-apiserver's post-start hooks create when they are missing (the system priority
    /// classes, the bootstrap RBAC policy), each a full object with `kind` and `apiVersion`.
    pub bootstrap: fn() -> Vec<serde_json::Value>,
    /// A kind that is only created and never stored (`TokenReview`, `SubjectAccessReview`): its answer.
    pub(crate) review: Option<Arc<dyn crate::registry::review::Review>>,
    /// The deprecation warning every answer about it carries (`v1 ComponentStatus is deprecated in v1.19+`).
    pub(crate) deprecated: Option<&'static str>,
}

impl ResourceInfo {
    /// A namespaced resource serving every verb, with no short names, categories or subresources: the
    /// common case, which entries adjust with struct update syntax.
    pub(crate) fn new(
        resource: Resource,
        singular: &'static str,
        strategy: Arc<dyn Strategy>,
        printer: Printer,
    ) -> ResourceInfo {
        ResourceInfo {
            resource,
            singular,
            short_names: &[],
            categories: &[],
            namespaced: true,
            verbs: ALL_VERBS,
            subresources: vec![],
            strategy,
            printer,
            custom: false,
            protobuf: true,
            terminating: false,
            schema: None,
            conversion: None,
            bootstrap: Vec::new,
            review: None,
            deprecated: None,
        }
    }

    /// Whether the resource serves `verb` on its main endpoint.
    pub(crate) fn serves(&self, verb: Verb) -> bool {
        self.verbs.contains(&verb)
    }

    pub fn subresource(&self, name: &str) -> Option<&SubresourceInfo> {
        self.subresources.iter().find(|s| s.name == name)
    }

    /// The kind of a list of these objects (`ConfigMapList`).
    pub(crate) fn list_kind(&self) -> String {
        format!("{}List", self.resource.kind)
    }
}

impl std::fmt::Debug for ResourceInfo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ResourceInfo").field("resource", &self.resource).finish_non_exhaustive()
    }
}

/// Makes the registries of a CRD's served versions, given its storage version: one storage for all of
/// them (they share the etcd prefix) and a store per version. The server assembly provides it
/// ([`crate::server::build`]); the CRD controller calls it.
pub(crate) type StoreFactory =
    Arc<dyn Fn(&[ResourceInfo], &str) -> Vec<Arc<dyn crate::registry::rest::Rest>> + Send + Sync>;

/// A group and version, the unit discovery documents describe.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) struct GroupVersion {
    pub group: String,
    pub version: String,
}

/// Every resource the server serves, by group, version and plural.
#[derive(Clone, Debug, Default)]
pub struct Catalog {
    resources: BTreeMap<(GroupVersion, String), ResourceInfo>,
    /// Groups in the order `/apis` lists them (kube lists by priority, not by name).
    group_order: Vec<String>,
}

impl Catalog {
    /// The built-in resources.
    pub fn builtin() -> Catalog {
        let mut catalog = Catalog::default();
        for info in builtin_resources() {
            catalog.add(info);
        }
        catalog
    }

    /// Adds a resource; a second one with the same group, version and plural replaces the first.
    pub fn add(&mut self, info: ResourceInfo) {
        let gv = GroupVersion { group: info.resource.group.clone(), version: info.resource.version.clone() };
        if !gv.group.is_empty() && !self.group_order.contains(&gv.group) {
            self.group_order.push(gv.group.clone());
        }
        self.resources.insert((gv, info.resource.plural.clone()), info);
    }

    pub(crate) fn get(&self, group: &str, version: &str, plural: &str) -> Option<&ResourceInfo> {
        let gv = GroupVersion { group: group.to_string(), version: version.to_string() };
        self.resources.get(&(gv, plural.to_string()))
    }

    /// Whether any resource lives in `group`/`version`.
    pub(crate) fn serves_group_version(&self, group: &str, version: &str) -> bool {
        self.resources.keys().any(|(gv, _)| gv.group == group && gv.version == version)
    }

    /// The resources of one group and version, by plural.
    pub(crate) fn in_group_version<'a>(
        &'a self,
        group: &'a str,
        version: &'a str,
    ) -> impl Iterator<Item = &'a ResourceInfo> {
        self.resources.iter().filter(move |((gv, _), _)| gv.group == group && gv.version == version).map(|(_, r)| r)
    }

    /// The named groups, in `/apis` order (kube-apiserver's priorities for the built-in groups, then the
    /// others as they were added), each with its versions in kube's version priority order (GA above beta
    /// above alpha, higher numbers first), the first preferred.
    pub(crate) fn groups(&self) -> Vec<(String, Vec<String>)> {
        let mut order: Vec<&String> = self.group_order.iter().collect();
        let rank = |g: &String| GROUP_PRIORITY.iter().position(|p| p == g).unwrap_or(GROUP_PRIORITY.len());
        order.sort_by_key(|g| rank(g));
        order
            .into_iter()
            .map(|group| {
                let mut versions: Vec<String> = self
                    .resources
                    .keys()
                    .filter(|(gv, _)| &gv.group == group)
                    .map(|(gv, _)| gv.version.clone())
                    .collect();
                versions.dedup();
                versions.sort_by(|a, b| compare_kube_aware_versions(a, b));
                (group.clone(), versions)
            })
            .collect()
    }

    /// Keeps only the resources `keep` accepts (a simulation serves only what its clients use).
    pub fn retain(&mut self, keep: impl Fn(&ResourceInfo) -> bool) {
        self.resources.retain(|_, info| keep(info));
        let served: Vec<String> = self.resources.keys().map(|(gv, _)| gv.group.clone()).collect();
        self.group_order.retain(|g| served.contains(g));
    }

    /// Every resource.
    pub fn all(&self) -> impl Iterator<Item = &ResourceInfo> {
        self.resources.values()
    }
}

/// A version's place in kube's priority order (`version.CompareKubeAwareVersionStrings`): `vN` (GA),
/// `vNbetaM`, `vNalphaM`, each with higher numbers first, then any other string.
fn kube_version_rank(version: &str) -> (u8, std::cmp::Reverse<u64>, std::cmp::Reverse<u64>) {
    let other = (3, std::cmp::Reverse(0), std::cmp::Reverse(0));
    let Some(rest) = version.strip_prefix('v') else { return other };
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    let Ok(major) = rest[..digits].parse::<u64>() else { return other };
    let (level, minor) = match &rest[digits..] {
        "" => (0, ""),
        tail if tail.starts_with("beta") => (1, &tail[4..]),
        tail if tail.starts_with("alpha") => (2, &tail[5..]),
        _ => return other,
    };
    let minor = match (level, minor.parse::<u64>()) {
        (0, _) => 0,
        (_, Ok(n)) if minor.bytes().all(|b| b.is_ascii_digit()) => n,
        _ => return other,
    };
    (level, std::cmp::Reverse(major), std::cmp::Reverse(minor))
}

/// Kube-aware version order: the more preferred version first; strings that are not kube versions last,
/// in lexical order.
pub(crate) fn compare_kube_aware_versions(a: &str, b: &str) -> std::cmp::Ordering {
    kube_version_rank(a).cmp(&kube_version_rank(b)).then_with(|| a.cmp(b))
}

/// The built-in groups in the order kube-apiserver 1.32's `/apis` lists them (their APIService priorities).
const GROUP_PRIORITY: &[&str] = &[
    "apiregistration.k8s.io",
    "apps",
    "events.k8s.io",
    "authentication.k8s.io",
    "authorization.k8s.io",
    "autoscaling",
    "batch",
    "certificates.k8s.io",
    "networking.k8s.io",
    "policy",
    "rbac.authorization.k8s.io",
    "storage.k8s.io",
    "admissionregistration.k8s.io",
    "apiextensions.k8s.io",
    "scheduling.k8s.io",
    "coordination.k8s.io",
    "node.k8s.io",
    "discovery.k8s.io",
    "flowcontrol.apiserver.k8s.io",
];

/// Every kind written as one module: its `info`, the entry of the catalog. A new kind is its module and
/// one line here.
const KINDS: &[fn() -> ResourceInfo] = &[
    core::bindings::info,
    core::componentstatuses::info,
    apps::controllerrevisions::info,
    core::persistentvolumes::info,
    core::podtemplates::info,
    core::replicationcontrollers::info,
    apiregistration::apiservices::info,
    authentication::selfsubjectreviews::info,
    authentication::tokenreviews::info,
    authorization::localsubjectaccessreviews::info,
    authorization::selfsubjectaccessreviews::info,
    authorization::selfsubjectrulesreviews::info,
    authorization::subjectaccessreviews::info,
    batch::cronjobs::info,
    networking::ingressclasses::info,
    networking::ingresses::info,
    networking::networkpolicies::info,
    policy::poddisruptionbudgets::info,
    rbac::clusterrolebindings::info,
    rbac::clusterroles::info,
    rbac::rolebindings::info,
    rbac::roles::info,
    storage::storageclasses::info,
    storage::csidrivers::info,
    storage::csinodes::info,
    storage::csistoragecapacities::info,
    storage::volumeattachments::info,
    scheduling::priorityclasses::info,
    node::runtimeclasses::info,
    discovery::endpointslices::info,
    autoscaling::horizontalpodautoscalers::info,
    autoscaling::horizontalpodautoscalers_v1::info,
    certificates::certificatesigningrequests::info,
    admissionregistration::mutatingwebhookconfigurations::info,
    admissionregistration::validatingwebhookconfigurations::info,
    admissionregistration::validatingadmissionpolicies::info,
    admissionregistration::validatingadmissionpolicybindings::info,
    flowcontrol::flowschemas::info,
    flowcontrol::prioritylevelconfigurations::info,
];

/// The verbs of a `/status` subresource.
pub(crate) const STATUS_VERBS: &[Verb] = &[Verb::Get, Verb::Patch, Verb::Update];

/// A `/status` subresource carrying the resource's own `kind`.
pub(crate) fn status(kind: &'static str) -> SubresourceInfo {
    SubresourceInfo { name: "status", sub: Subresource::Status, kind, kind_group_version: None, verbs: STATUS_VERBS }
}

/// The `/scale` subresource of a workload: an `autoscaling/v1` `Scale`.
pub(crate) fn scale() -> SubresourceInfo {
    SubresourceInfo {
        name: "scale",
        sub: Subresource::Scale,
        kind: "Scale",
        kind_group_version: Some(("autoscaling", "v1")),
        verbs: STATUS_VERBS,
    }
}

/// The built-in resources, as kube-apiserver 1.32 serves them, group by group in the order its discovery
/// lists the groups (their priority: apps, events.k8s.io, batch, ..., apiextensions.k8s.io,
/// coordination.k8s.io).
fn builtin_resources() -> Vec<ResourceInfo> {
    let mut all = core::resources();
    all.extend(apps::resources());
    all.extend(events::resources());
    all.extend(batch::resources());
    all.extend(apiextensions::resources());
    all.extend(coordination::resources());
    all.extend(KINDS.iter().map(|info| info()));
    all
}

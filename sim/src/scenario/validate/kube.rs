//! The scenario's Kubernetes parts: the apiservers (`[cluster] apiservers`, `[[apiserver]]`), where each
//! Kubernetes client sends its requests (`apiserver` or `routing`), each `kube` step's request (its resource
//! resolved in the apiserver's catalog, its parameters checked against its verb), and the resources the
//! apiservers must serve.

use std::collections::BTreeSet;

use apiserver::apiextensions;
use apiserver::apis::{Catalog, ResourceInfo};
use toml::Spanned;

use super::names::{Names, StepKind};
use super::{Result, Source};
use crate::cluster::{ApiserverSpec, ClusterSpec};
use crate::scenario::plan::{KubePlan, KubeRv, KubeTarget};
use crate::scenario::syntax::{self, Kube, Verb};

/// The most apiservers a scenario may run.
const MAX_APISERVERS: usize = 9;

/// `[cluster] apiservers` and each `[[apiserver]]`'s settings, into the cluster's spec.
pub(super) fn apiservers(src: &Source, file: &syntax::File, spec: &mut ClusterSpec) -> Result<()> {
    let count = file.cluster.apiservers.as_ref().map_or(0, |n| *n.get_ref());
    if let Some(n) = &file.cluster.apiservers {
        if count > MAX_APISERVERS {
            return Err(src.err(n.span(), format!("`apiservers` is {count}; expected 0 to {MAX_APISERVERS}")));
        }
    }
    // Apiserver i talks to the members in turn, so that HA apiservers lag behind different members.
    spec.apiservers =
        (1..=count).map(|i| ApiserverSpec { watch_cache: true, member: (i - 1) % spec.members + 1 }).collect();
    let names = spec.apiserver_names();
    let mut seen = BTreeSet::new();
    for a in &file.apiservers {
        let Some(i) = names.iter().position(|n| n == a.name.get_ref()) else {
            let known = if names.is_empty() {
                "none: `[cluster] apiservers` is 0".into()
            } else {
                format!("one of {}", names.join(", "))
            };
            return Err(
                src.err(a.name.span(), format!("no apiserver is named {:?}; expected {known}", a.name.get_ref()))
            );
        };
        if !seen.insert(i) {
            return Err(src.err(a.name.span(), format!("`[[apiserver]]` {} is given twice", a.name.get_ref())));
        }
        if let Some(cache) = a.watch_cache {
            spec.apiservers[i].watch_cache = cache;
        }
        if let Some(m) = &a.member {
            let members = spec.member_names();
            let Some(j) = members.iter().position(|n| n == m.get_ref()) else {
                let msg = format!("no member is named {:?}; expected one of {}", m.get_ref(), members.join(", "));
                return Err(src.err(m.span(), msg));
            };
            spec.apiservers[i].member = j + 1;
        }
    }
    Ok(())
}

/// Where a client's requests go: `None` for an etcd client, the apiserver pool and routing for a
/// Kubernetes one.
pub(super) fn target(src: &Source, client: &syntax::Client, spec: &ClusterSpec) -> Result<Option<KubeTarget>> {
    let names = spec.apiserver_names();
    if let (Some(m), true) = (&client.member, client.apiserver.is_some() || client.routing.is_some()) {
        return Err(src.err(m.span(), "a client talks to a member or to apiservers, not both"));
    }
    let no_apiservers = |span| src.err(span, "the cluster has no apiservers; set `[cluster] apiservers`");
    match (&client.apiserver, &client.routing) {
        (Some(a), Some(_)) => {
            Err(src.err(a.span(), "`apiserver` names one apiserver; `routing` picks among all: give one"))
        }
        (Some(a), None) => {
            if names.is_empty() {
                return Err(no_apiservers(a.span()));
            }
            if !names.contains(a.get_ref()) {
                let msg = format!("no apiserver is named {:?}; expected one of {}", a.get_ref(), names.join(", "));
                return Err(src.err(a.span(), msg));
            }
            Ok(Some(KubeTarget { pool: vec![a.get_ref().clone()], routing: None }))
        }
        (None, Some(r)) => {
            if names.is_empty() {
                return Err(no_apiservers(r.span()));
            }
            Ok(Some(KubeTarget { pool: names, routing: Some(*r.get_ref()) }))
        }
        (None, None) => {
            // A client of `kube` steps with neither: the first apiserver, as kubectl with one server.
            // A client that names its member is an etcd client, whatever its steps say.
            let kube = client.member.is_none()
                && client.steps.iter().any(|s| s.get_ref().kube.is_some() || s.get_ref().informer.is_some());
            match (kube, names.first()) {
                (false, _) => Ok(None),
                (true, Some(first)) => Ok(Some(KubeTarget { pool: vec![first.clone()], routing: None })),
                (true, None) => Err(no_apiservers(client.name.span())),
            }
        }
    }
}

/// The catalog every apiserver serves, for resolving resources: the built-in resources, and the custom
/// resources of the CRDs the file's `kube` steps create (served once the CRD is established, so a step
/// that uses one too early gets the 404 a real client would).
pub(super) fn catalog(file: &syntax::File) -> Catalog {
    let mut catalog = Catalog::builtin();
    for step in file.clients.iter().flat_map(|c| &c.steps) {
        let Some(k) = &step.get_ref().kube else { continue };
        let k = k.get_ref();
        if *k.verb.get_ref() != Verb::Create || k.resource.get_ref() != CRDS {
            continue;
        }
        let object = k.object.as_ref().and_then(|o| serde_json::to_value(o.get_ref()).ok());
        for info in object.as_ref().and_then(apiextensions::custom::declared_resource_infos).unwrap_or_default() {
            catalog.add(info);
        }
    }
    catalog
}

/// How a file names the CRD resource.
const CRDS: &str = "customresourcedefinitions.apiextensions.k8s.io";

/// The resource a `kube` step names (`configmaps`, `deployments.apps`), in `catalog`.
fn resource<'c>(src: &Source, catalog: &'c Catalog, name: &Spanned<String>) -> Result<&'c ResourceInfo> {
    let (plural, group) = name.get_ref().split_once('.').unwrap_or((name.get_ref(), ""));
    let found = catalog.all().find(|r| r.resource.plural == plural && r.resource.group == group);
    found.ok_or_else(|| {
        let mut known: Vec<String> = catalog.all().map(qualified).collect();
        known.dedup();
        src.err(
            name.span(),
            format!("no resource is called {:?}; expected one of {}", name.get_ref(), known.join(", ")),
        )
    })
}

/// `configmaps`, `deployments.apps`: how the file names a resource.
fn qualified(info: &ResourceInfo) -> String {
    let r = &info.resource;
    if r.group.is_empty() {
        r.plural.clone()
    } else {
        format!("{}.{}", r.plural, r.group)
    }
}

/// Which parameters each verb takes; any other given is refused at its key.
fn allowed(verb: Verb) -> &'static [&'static str] {
    match verb {
        Verb::Create => &["namespace", "object", "dry_run", "field_manager"],
        Verb::Get => &["namespace", "name", "subresource", "resource_version", "until_ms"],
        Verb::List => &[
            "namespace",
            "resource_version",
            "resource_version_match",
            "limit",
            "continue_from",
            "label_selector",
            "field_selector",
            "until_ms",
        ],
        Verb::Update => &["namespace", "name", "subresource", "object", "resource_version", "dry_run", "field_manager"],
        Verb::Patch => {
            &["namespace", "name", "subresource", "patch", "patch_type", "dry_run", "field_manager", "force"]
        }
        Verb::Delete => &["namespace", "name", "dry_run", "precondition_rv", "grace_period_s", "propagation_policy"],
        Verb::Deletecollection => &["namespace", "label_selector", "field_selector", "dry_run"],
        Verb::Watch => &[
            "namespace",
            "name",
            "resource_version",
            "label_selector",
            "field_selector",
            "send_initial_events",
            "allow_watch_bookmarks",
            "timeout_s",
            "open_for_ms",
        ],
    }
}

/// The parameters a step gives, by key.
fn given(k: &Kube) -> Vec<&'static str> {
    let keys = [
        ("namespace", k.namespace.is_some()),
        ("name", k.name.is_some()),
        ("subresource", k.subresource.is_some()),
        ("object", k.object.is_some()),
        ("patch", k.patch.is_some()),
        ("patch_type", k.patch_type.is_some()),
        ("resource_version", k.resource_version.is_some()),
        ("resource_version_match", k.resource_version_match.is_some()),
        ("limit", k.limit.is_some()),
        ("continue_from", k.continue_from.is_some()),
        ("label_selector", k.label_selector.is_some()),
        ("field_selector", k.field_selector.is_some()),
        ("send_initial_events", k.send_initial_events),
        ("allow_watch_bookmarks", k.allow_watch_bookmarks),
        ("timeout_s", k.timeout_s.is_some()),
        ("open_for_ms", k.open_for_ms.is_some()),
        ("until_ms", k.until_ms.is_some()),
        ("dry_run", k.dry_run),
        ("field_manager", k.field_manager.is_some()),
        ("force", k.force.is_some()),
        ("precondition_rv", k.precondition_rv.is_some()),
        ("grace_period_s", k.grace_period_s.is_some()),
        ("propagation_policy", k.propagation_policy.is_some()),
    ];
    keys.iter().filter(|(_, set)| *set).map(|(key, _)| *key).collect()
}

/// A `kube` step's request.
pub(super) fn kube_plan(src: &Source, names: &Names, catalog: &Catalog, step: &Spanned<Kube>) -> Result<KubePlan> {
    let k = step.get_ref();
    let verb = *k.verb.get_ref();
    let info = resource(src, catalog, &k.resource)?;
    let allowed = allowed(verb);
    if let Some(extra) = given(k).into_iter().find(|key| !allowed.contains(key)) {
        return Err(src.err(
            step.span(),
            format!("`{extra}` is not a parameter of {}; it takes {}", verb.word(), allowed.join(", ")),
        ));
    }
    let needs_name = matches!(verb, Verb::Get | Verb::Update | Verb::Patch | Verb::Delete);
    let name = k.name.as_ref().map(|n| n.get_ref().clone());
    if needs_name && name.is_none() {
        return Err(src.err(step.span(), format!("a {} names its object: expected `name`", verb.word())));
    }
    let namespace = match (&k.namespace, info.namespaced) {
        (Some(ns), false) => {
            let msg = format!("{} is cluster-scoped: it takes no `namespace`", qualified(info));
            return Err(src.err(ns.span(), msg));
        }
        (Some(ns), true) => Some(ns.get_ref().clone()),
        (None, true) => Some("default".to_string()),
        (None, false) => None,
    };
    if let Some(sub) = &k.subresource {
        if info.subresource(sub.get_ref()).is_none() {
            let known: Vec<&str> = info.subresources.iter().map(|s| s.name).collect();
            let has = if known.is_empty() {
                "it has none".to_string()
            } else {
                format!("expected one of {}", known.join(", "))
            };
            let msg = format!("{} has no subresource {:?}; {has}", qualified(info), sub.get_ref());
            return Err(src.err(sub.span(), msg));
        }
    }
    let body = |v: &Spanned<toml::Value>, what: &str| -> Result<serde_json::Value> {
        serde_json::to_value(v.get_ref()).map_err(|e| src.err(v.span(), format!("`{what}` is not JSON: {e}")))
    };
    let object = k.object.as_ref().map(|o| body(o, "object")).transpose()?;
    if matches!(verb, Verb::Create | Verb::Update) && object.is_none() {
        return Err(src.err(step.span(), format!("a {} sends an object: expected `object`", verb.word())));
    }
    // A create's object is named in its body; the trace and the report show the name as for other verbs.
    let name = match (&name, &object, verb) {
        (None, Some(o), Verb::Create) => {
            o.pointer("/metadata/name").and_then(serde_json::Value::as_str).map(str::to_string)
        }
        _ => name,
    };
    let patch = match (&k.patch, verb) {
        (Some(p), _) => Some((k.patch_type.unwrap_or(syntax::PatchType::Merge), body(p, "patch")?)),
        (None, Verb::Patch) => return Err(src.err(step.span(), "a patch sends a patch: expected `patch`")),
        (None, _) => None,
    };
    if let (Some(force), false) = (&k.force, k.patch_type == Some(syntax::PatchType::Apply)) {
        return Err(src.err(force.span(), "`force` is for server-side apply only: expected `patch_type = \"apply\"`"));
    }
    let resource_version = k.resource_version.as_ref().map(|rv| rv_param(src, names, rv)).transpose()?;
    if let Some(m) = &k.resource_version_match {
        if !["Exact", "NotOlderThan"].contains(&m.get_ref().as_str()) {
            return Err(src
                .err(m.span(), format!("`resource_version_match` {:?}: expected Exact or NotOlderThan", m.get_ref())));
        }
    }
    if let Some(from) = &k.continue_from {
        if names.step(src, from, "`continue_from`")? != StepKind::Kube {
            return Err(src.err(
                from.span(),
                format!("`continue_from` names step {:?}, which is not a `kube` list", from.get_ref()),
            ));
        }
    }
    if let Some(p) = &k.propagation_policy {
        if !["Orphan", "Background", "Foreground"].contains(&p.get_ref().as_str()) {
            let msg = format!("`propagation_policy` {:?}: expected Orphan, Background or Foreground", p.get_ref());
            return Err(src.err(p.span(), msg));
        }
    }
    let precondition_rv = k.precondition_rv.as_ref().map(|v| names.given(src, v)).transpose()?;
    let r = &info.resource;
    let prefix =
        if r.group.is_empty() { format!("/api/{}", r.version) } else { format!("/apis/{}/{}", r.group, r.version) };
    let collection = match &namespace {
        Some(ns) => format!("{prefix}/namespaces/{ns}/{}", r.plural),
        None => format!("{prefix}/{}", r.plural),
    };
    let etcd_prefix = match &namespace {
        Some(ns) => format!("/registry/{}/{ns}/", r.etcd_prefix),
        None => format!("/registry/{}/", r.etcd_prefix),
    };
    Ok(KubePlan {
        etcd_prefix,
        verb,
        collection,
        resource: qualified(info),
        namespace,
        name,
        subresource: k.subresource.as_ref().map(|s| s.get_ref().clone()),
        kind: r.kind.clone(),
        api_version: r.api_version(),
        object,
        patch,
        resource_version,
        resource_version_match: k.resource_version_match.as_ref().map(|m| m.get_ref().clone()),
        limit: k.limit,
        continue_from: k.continue_from.as_ref().map(|c| c.get_ref().clone()),
        label_selector: k.label_selector.clone(),
        field_selector: k.field_selector.clone(),
        send_initial_events: k.send_initial_events,
        allow_watch_bookmarks: k.allow_watch_bookmarks,
        timeout_s: k.timeout_s,
        open_for_ms: k.open_for_ms,
        until_ms: k.until_ms,
        dry_run: k.dry_run,
        field_manager: k.field_manager.clone(),
        force: k.force.as_ref().is_some_and(|f| *f.get_ref()),
        precondition_rv,
        grace_period_s: k.grace_period_s,
        propagation_policy: k.propagation_policy.as_ref().map(|p| p.get_ref().clone()),
    })
}

/// A resourceVersion a step sends: `"0"` and `""` as written, anything else an expression.
fn rv_param(src: &Source, names: &Names, rv: &Spanned<syntax::Value>) -> Result<KubeRv> {
    match rv.get_ref() {
        syntax::Value::Text(t) if t.is_empty() || t == "0" => Ok(KubeRv::Text(t.clone())),
        _ => Ok(KubeRv::Number(names.given(src, rv)?)),
    }
}

/// The resources the apiservers serve besides namespaces: `[cluster] resources`, or those `kube` steps
/// name.
pub(super) fn served(src: &Source, file: &syntax::File, catalog: &Catalog) -> Result<Vec<String>> {
    let mut out = BTreeSet::new();
    for r in &file.cluster.resources {
        out.insert(qualified(resource(src, catalog, r)?));
    }
    if file.cluster.resources.is_empty() {
        for step in file.clients.iter().flat_map(|c| &c.steps) {
            if let Some(k) = &step.get_ref().kube {
                out.insert(qualified(resource(src, catalog, &k.get_ref().resource)?));
            }
            if let Some(i) = &step.get_ref().informer {
                out.insert(qualified(resource(src, catalog, &i.get_ref().resource)?));
            }
        }
    }
    // An apiserver workload's clients send ConfigMaps, whatever else is served.
    if file.workloads.iter().any(|w| w.kind.get_ref() == "apiserver") {
        out.insert("configmaps".to_string());
    }
    Ok(out.into_iter().collect())
}

/// Every `apiserver` workload needs apiservers to send to.
pub(super) fn workloads(src: &Source, file: &syntax::File, spec: &ClusterSpec) -> Result<()> {
    for w in &file.workloads {
        if w.kind.get_ref() == "apiserver" && spec.apiservers.is_empty() {
            return Err(src.err(
                w.kind.span(),
                "an `apiserver` workload sends through the apiservers, and the cluster has none; set `[cluster] \
                 apiservers`",
            ));
        }
    }
    Ok(())
}

//! A `kube` step's validation: its resource resolved in the apiservers' catalog (the built-in resources and
//! the custom resources of CRDs the file creates), its parameters checked against its verb, its paths and
//! etcd prefix made, and the events a watch expects checked against what the watch can deliver.

use apiserver::apiextensions;
use apiserver::apis::{Catalog, ResourceInfo};
use toml::Spanned;

use super::{Kube, Syntax};
use crate::scenario::lang::expect::ExpectWatchEvent;
use crate::scenario::lang::expectations::WatchEventExpect;
use crate::scenario::lang::kube::{KubeRv, PatchType, Verb};
use crate::scenario::lang::names::{Gives, Names};
use crate::scenario::lang::source::{Result, Source};
use crate::scenario::lang::suggest;
use crate::scenario::lang::value::Value;

/// How a file names the CRD resource.
pub const CRDS: &str = "customresourcedefinitions.apiextensions.k8s.io";

/// The custom resources a `kube` step's create of a CRD declares, for the catalog the file's steps are
/// resolved in (served once the CRD is established, so a step that uses one too early gets the 404 a real
/// client would).
pub fn declared_resources(k: &Syntax) -> Vec<ResourceInfo> {
    if *k.verb.get_ref() != Verb::Create || k.resource.get_ref() != CRDS {
        return Vec::new();
    }
    let object = k.object.as_ref().and_then(|o| serde_json::to_value(o.get_ref()).ok());
    object.as_ref().and_then(apiextensions::custom::declared_resource_infos).unwrap_or_default()
}

/// The resource a `kube` step names (`configmaps`, `deployments.apps`), in `catalog`.
pub fn resource<'c>(src: &Source, catalog: &'c Catalog, name: &Spanned<String>) -> Result<&'c ResourceInfo> {
    let (plural, group) = name.get_ref().split_once('.').unwrap_or((name.get_ref(), ""));
    let found = catalog.all().find(|r| r.resource.plural == plural && r.resource.group == group);
    found.ok_or_else(|| {
        let mut known: Vec<String> = catalog.all().map(qualified).collect();
        known.dedup();
        src.err(
            name.span(),
            format!(
                "no resource is called {:?}; expected one of {}{}",
                name.get_ref(),
                known.join(", "),
                suggest::hint(name.get_ref(), known.iter().map(String::as_str))
            ),
        )
    })
}

/// `configmaps`, `deployments.apps`: how the file names a resource.
pub fn qualified(info: &ResourceInfo) -> String {
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
fn given(k: &Syntax) -> Vec<&'static str> {
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
pub fn kube_plan(src: &Source, names: &Names, catalog: &Catalog, step: &Spanned<Syntax>) -> Result<Kube> {
    let k = step.get_ref();
    let verb = *k.verb.get_ref();
    let info = resource(src, catalog, &k.resource)?;
    let allowed = allowed(verb);
    if let Some(extra) = given(k).into_iter().find(|key| !allowed.contains(key)) {
        return Err(src.err(
            step.span(),
            format!(
                "`{extra}` is not a parameter of {}; it takes {}{}",
                verb.word(),
                allowed.join(", "),
                suggest::hint(extra, allowed.iter().copied())
            ),
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
        (Some(p), _) => Some((k.patch_type.unwrap_or(PatchType::Merge), body(p, "patch")?)),
        (None, Verb::Patch) => return Err(src.err(step.span(), "a patch sends a patch: expected `patch`")),
        (None, _) => None,
    };
    if let (Some(force), false) = (&k.force, k.patch_type == Some(PatchType::Apply)) {
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
        if names.step(src, from, "`continue_from`")? != Gives::Kube {
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
    Ok(Kube {
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
fn rv_param(src: &Source, names: &Names, rv: &Spanned<Value>) -> Result<KubeRv> {
    match rv.get_ref() {
        Value::Text(t) if t.is_empty() || t == "0" => Ok(KubeRv::Text(t.clone())),
        _ => Ok(KubeRv::Number(names.given(src, rv)?)),
    }
}

/// The event types a watch can deliver, as the API spells them.
const EVENT_TYPES: [&str; 5] = ["ADDED", "MODIFIED", "DELETED", "BOOKMARK", "ERROR"];

pub fn watch_event(
    src: &Source,
    names: &Names,
    plan: &Kube,
    e: &Spanned<ExpectWatchEvent>,
) -> Result<WatchEventExpect> {
    let x = e.get_ref();
    let kind = x.kind.get_ref().as_str();
    if !EVENT_TYPES.contains(&kind) {
        return Err(src.err(x.kind.span(), format!("event type {kind:?}; expected one of {}", EVENT_TYPES.join(", "))));
    }
    let object_event = matches!(kind, "ADDED" | "MODIFIED" | "DELETED");
    if x.name.is_some() && !object_event {
        return Err(src.err(e.span(), format!("a {kind} event names no object: drop `name`")));
    }
    if x.initial_events_end.is_some() && kind != "BOOKMARK" {
        return Err(src.err(e.span(), "`initial_events_end` is a bookmark's"));
    }
    if x.initial_events_end == Some(true) && !plan.send_initial_events {
        return Err(
            src.err(e.span(), "only a watch with `send_initial_events = true` gets the initial-events-end bookmark")
        );
    }
    if kind == "BOOKMARK" && !plan.allow_watch_bookmarks {
        return Err(src.err(e.span(), "bookmarks come only to a watch with `allow_watch_bookmarks = true`"));
    }
    if x.code.is_some() && kind != "ERROR" {
        return Err(src.err(e.span(), "`code` is an ERROR event's"));
    }
    Ok(WatchEventExpect {
        kind: kind.to_string(),
        name: x.name.clone(),
        rv: x.rv.as_ref().map(|v| names.expr(src, v)).transpose()?,
        initial_events_end: x.initial_events_end,
        code: x.code,
    })
}

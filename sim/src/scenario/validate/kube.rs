//! The scenario's Kubernetes parts: the apiservers (`[cluster] apiservers`, `[[apiserver]]`), where each
//! Kubernetes client sends its requests (`apiserver` or `routing`), the catalog the steps' resources
//! resolve in, and the resources the apiservers must serve. Each `kube` step's own request is its kind's
//! to validate (`crate::scenario::steps::kube`).

use std::collections::BTreeSet;

use apiserver::apis::Catalog;

use super::{Result, Source};
use crate::cluster::{ApiserverSpec, ClusterSpec};
use crate::scenario::plan::KubeTarget;
use crate::scenario::steps::kube::plan::{self as kube_plan, qualified, resource};
use crate::scenario::steps::{ClientKind, OpSyntax};
use crate::scenario::syntax;

/// The most apiservers a scenario may run.
const MAX_APISERVERS: usize = 9;
/// The largest watch cache history (upstream's adaptive size stops at 102,400 events).
const MAX_WATCH_CACHE_SIZE: usize = 102_400;

/// `[cluster] apiservers` and each `[[apiserver]]`'s settings, into the cluster's spec.
pub(super) fn apiservers(src: &Source, file: &syntax::File, spec: &mut ClusterSpec) -> Result<()> {
    let count = file.cluster.apiservers.as_ref().map_or(0, |n| *n.get_ref());
    if let Some(n) = &file.cluster.apiservers {
        if count > MAX_APISERVERS {
            return Err(src.err(n.span(), format!("`apiservers` is {count}; expected 0 to {MAX_APISERVERS}")));
        }
    }
    // Every apiserver's etcd client uses every member, as real deployments list them all.
    spec.apiservers = (1..=count)
        .map(|_| ApiserverSpec { watch_cache: true, members: (1..=spec.members).collect(), watch_cache_size: None })
        .collect();
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
        if let Some(size) = &a.watch_cache_size {
            if !(1..=MAX_WATCH_CACHE_SIZE).contains(size.get_ref()) {
                let msg = format!("`watch_cache_size` is {}; expected 1 to {MAX_WATCH_CACHE_SIZE}", size.get_ref());
                return Err(src.err(size.span(), msg));
            }
            if a.watch_cache == Some(false) {
                return Err(src.err(size.span(), "`watch_cache_size` sizes a watch cache, and `watch_cache = false`"));
            }
            spec.apiservers[i].watch_cache_size = Some(*size.get_ref());
        }
        let members = spec.member_names();
        let index = |name: &str, span: std::ops::Range<usize>| -> Result<usize> {
            match members.iter().position(|n| n == name) {
                Some(j) => Ok(j + 1),
                None => {
                    let msg = format!("no member is named {name:?}; expected one of {}", members.join(", "));
                    Err(src.err(span, msg))
                }
            }
        };
        match (&a.member, &a.members) {
            (Some(m), Some(_)) => {
                return Err(src.err(m.span(), "`member` pins one member and `members` lists several: give one"));
            }
            (Some(m), None) => spec.apiservers[i].members = vec![index(m.get_ref(), m.span())?],
            (None, Some(list)) => {
                if list.get_ref().is_empty() {
                    return Err(src.err(list.span(), "`members` is empty; list at least one member"));
                }
                let mut chosen = Vec::new();
                for name in list.get_ref() {
                    let j = index(name, list.span())?;
                    if chosen.contains(&j) {
                        return Err(src.err(list.span(), format!("`members` lists {name:?} twice")));
                    }
                    chosen.push(j);
                }
                spec.apiservers[i].members = chosen;
            }
            (None, None) => {}
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
                && client.steps.iter().flat_map(|s| &s.get_ref().ops).any(|op| op.client() == ClientKind::Kube);
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
    for op in file.clients.iter().flat_map(|c| &c.steps).flat_map(|s| &s.get_ref().ops) {
        if let OpSyntax::Kube(k) = op {
            for info in kube_plan::declared_resources(k.get_ref()) {
                catalog.add(info);
            }
        }
    }
    catalog
}

/// The resources the apiservers serve besides namespaces: `[cluster] resources`, or those `kube` steps
/// name.
pub(super) fn served(src: &Source, file: &syntax::File, catalog: &Catalog) -> Result<Vec<String>> {
    let mut out = BTreeSet::new();
    for r in &file.cluster.resources {
        out.insert(qualified(resource(src, catalog, r)?));
    }
    if file.cluster.resources.is_empty() {
        for op in file.clients.iter().flat_map(|c| &c.steps).flat_map(|s| &s.get_ref().ops) {
            for r in op.resources() {
                out.insert(qualified(resource(src, catalog, r)?));
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

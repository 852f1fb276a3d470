//! From parsed file to [`Scenario`]: resolves every name (nodes, steps, leases, watches, failpoints),
//! parses every expression, and refuses what cannot work, each time with the `file:line:col` of the
//! offending key and what was expected there. The first problem found is the one reported, so the parts
//! run in the order of the file's tables:
//!
//! - [`cluster`]: the scenario-wide numbers, the cluster with its bug switches, the clients' names and the
//!   workloads; [`kube`]: the apiservers, where Kubernetes clients send, the catalog the `kube` steps'
//!   resources resolve in, and what the apiservers serve;
//! - [`access`]: the authorization mode, the users, and the admission webhooks (nodes of their own);
//! - [`names`]: the steps' names, each with what it gives the steps that name it;
//! - [`steps`]: each scripted client and its steps, each step's operation and expectations validated by its
//!   kind (`crate::scenario::steps`); [`order`] refuses `after` chains that can never start;
//! - [`faults`]: the scheduled faults, the failpoints and the nemesis;
//! - [`checks`]: the guarantees that must hold or fail, and whether the run needs its twin without watch
//!   caches.

mod access;
mod checks;
mod cluster;
mod faults;
mod kube;
mod names;
mod order;
mod steps;

use super::lang::names::Names;
use super::lang::source::{Result, Source};
use super::plan::{Scenario, ZooEntry};
use super::syntax;

/// Validates a parsed file. `name` is the file stem.
pub fn validate(path: &str, text: &str, name: &str, file: syntax::File) -> Result<Scenario> {
    let src = Source { path, text };
    cluster::check_settings(&src, &file)?;
    let mut spec = cluster::spec(&src, &file.cluster)?;
    kube::apiservers(&src, &file, &mut spec)?;
    let catalog = kube::catalog(&file);
    spec.api_resources = kube::served(&src, &file, &catalog)?;
    let members = spec.member_names();
    let apiservers = spec.apiserver_names();
    let servers: Vec<String> = members.iter().chain(&apiservers).cloned().collect();
    let (client_names, workloads) = cluster::clients(&src, &file, &servers)?;
    kube::workloads(&src, &file, &spec)?;
    spec.clients = client_names.len();
    spec.client_labels = client_names.clone();
    access::identities(&src, &file, &mut spec)?;
    access::controller_managers(&src, &file, &mut spec)?;
    access::nodes(&src, &file, &mut spec, &client_names)?;
    let taken: Vec<String> = servers
        .iter()
        .chain(&client_names)
        .cloned()
        .chain(spec.controller_manager_names())
        .chain(spec.kubelet_names())
        .collect();
    access::webhooks(&src, &file, &mut spec, &taken)?;
    access::served(&mut spec);
    let webhooks = spec.webhook_names();
    let managers = spec.controller_manager_names();
    let kubelets = spec.kubelet_names();

    let steps = names::steps(&src, &file)?;
    let names = Names { steps: &steps };
    let clients = steps::scripts(&src, &names, &file, &spec, &catalog)?;
    order::check_no_deadlock(&src, &file, &clients)?;

    let nodes = faults::Nodes {
        members: &members,
        apiservers: &apiservers,
        clients: &client_names,
        webhooks: &webhooks,
        controller_managers: &managers,
        kubelets: &kubelets,
    };
    let (faults, notes) = faults::faults(&src, &names, &file, &spec, &nodes)?;
    let relations = super::relations::plans(&src, &names, &file.relations)?;
    let failpoints = faults::failpoints(&src, &file, &nodes)?;
    let nemesis = match &file.nemesis {
        Some(n) if n.get_ref().enabled => Some(faults::nemesis(&src, &names, n.get_ref(), &spec)?),
        _ => None,
    };
    let wanted = checks::checks(&src, &file.checks, &spec, &clients, &workloads)?;

    let summary =
        text.lines().next().and_then(|l| l.strip_prefix('#')).map(|l| l.trim().to_string()).unwrap_or_default();
    let (s, c) = (&file.scenario, &file.cluster);
    let zoo = zoo_entry(&src, s)?;
    Ok(Scenario {
        name: name.to_string(),
        path: path.to_string(),
        summary,
        seeds: *s.seeds.get_ref(),
        canonical_seed: s.canonical_seed,
        time_limit_s: *s.time_limit_s.get_ref(),
        settle_ms: s.settle_ms,
        request_timeout_ms: *c.request_timeout_ms.get_ref(),
        cluster: spec,
        clients,
        workloads,
        faults,
        failpoints,
        nemesis,
        hold: wanted.hold,
        hold_explicit: wanted.hold_explicit,
        linearizable_skipped: wanted.linearizable_skipped,
        fail: wanted.fail,
        cache_parity: wanted.cache_parity,
        writes_kept: wanted.writes_kept,
        zoo,
        notes,
        relations,
        file,
    })
}

/// `[scenario] bug` and `race`: both or neither, and the switch must exist.
fn zoo_entry(src: &Source, s: &syntax::Settings) -> Result<Option<ZooEntry>> {
    match (&s.bug, &s.race) {
        (None, None) => Ok(None),
        (Some(bug), None) => {
            Err(src.err(bug.span(), "a bug zoo entry names its race too: expected `race = \"...\"` beside `bug`"))
        }
        (None, Some(race)) => {
            Err(src.err(race.span(), "`race` belongs to a bug zoo entry: expected `bug = \"<switch>\"` beside it"))
        }
        (Some(bug), Some(race)) => {
            crate::bugs::Bugs::default().turn_on(bug.get_ref()).map_err(|e| src.err(bug.span(), e.to_string()))?;
            Ok(Some(ZooEntry { bug: bug.get_ref().clone(), race: race.get_ref().clone() }))
        }
    }
}

//! The scenario-wide numbers, the cluster, and who is in it: `[scenario]` and `[cluster]`'s numbers, the
//! cluster's shape with its bug switches, the scripted clients' names and each workload with the names of
//! the clients it generates.

use toml::Spanned;

use super::{Result, Source};
use crate::cluster::ClusterSpec;
use crate::scenario::error::ScenarioError;
use crate::scenario::plan::{WorkloadKind, WorkloadPlan};
use crate::scenario::syntax;

/// Node names the harness itself uses in the trace; a client may not take them.
const RESERVED: [&str; 3] = ["sim", "fault", "control"];

/// The numbers of `[scenario]` and `[cluster]`, and that someone sends requests.
pub(super) fn check_settings(src: &Source, file: &syntax::File) -> Result<()> {
    let s = &file.scenario;
    if *s.seeds.get_ref() == 0 {
        return Err(src.err(s.seeds.span(), "`seeds` is 0; expected at least 1 (seeds 1..=N run by default)"));
    }
    if *s.time_limit_s.get_ref() == 0 {
        return Err(src.err(s.time_limit_s.span(), "`time_limit_s` is 0; expected at least 1"));
    }
    let c = &file.cluster;
    let members = *c.members.get_ref();
    if !(1..=9).contains(&members) {
        return Err(src.err(c.members.span(), format!("`members` is {members}; expected 1 to 9")));
    }
    if *c.request_timeout_ms.get_ref() == 0 {
        return Err(src.err(c.request_timeout_ms.span(), "`request_timeout_ms` is 0; expected at least 1"));
    }
    if *c.progress_notify_interval_ms.get_ref() == 0 {
        return Err(
            src.err(c.progress_notify_interval_ms.span(), "`progress_notify_interval_ms` is 0; expected at least 1")
        );
    }
    if file.clients.is_empty() && file.workloads.is_empty() {
        return Err(ScenarioError::at(
            src.path,
            src.text,
            0..0,
            "the scenario has no `[[client]]` and no `[[workload]]`; expected at least one",
        ));
    }
    Ok(())
}

/// The cluster's shape (its clients are filled in once they are named), with its bug switches.
pub(super) fn spec(src: &Source, c: &syntax::Cluster) -> Result<ClusterSpec> {
    let mut spec = ClusterSpec::new(*c.members.get_ref(), 0);
    spec.progress_notify_interval_ms = *c.progress_notify_interval_ms.get_ref();
    if let Some(count) = &c.snapshot_count {
        if *count.get_ref() == 0 {
            return Err(src.err(count.span(), "`snapshot_count` is 0; expected at least 1"));
        }
        spec.snapshot_count = Some(*count.get_ref());
    }
    if let Some(ttl) = &c.auth_token_ttl_s {
        if *ttl.get_ref() == 0 || *ttl.get_ref() > 86_400 {
            return Err(src.err(ttl.span(), format!("`auth_token_ttl_s` is {}; expected 1 to 86400", ttl.get_ref())));
        }
        spec.auth_token_ttl_s = Some(*ttl.get_ref());
    }
    for bug in &c.bugs {
        spec.bugs.turn_on(bug.get_ref()).map_err(|err| src.err(bug.span(), err.to_string()))?;
    }
    Ok(spec)
}

/// Every client's name, scripted clients first and then each workload's generated ones, and the
/// workloads.
pub(super) fn clients(
    src: &Source,
    file: &syntax::File,
    members: &[String],
) -> Result<(Vec<String>, Vec<WorkloadPlan>)> {
    let mut names: Vec<String> = Vec::new();
    for client in &file.clients {
        take(src, &client.name, members, &mut names)?;
    }
    let mut workloads = Vec::new();
    for w in &file.workloads {
        let kind: WorkloadKind = w.kind.get_ref().parse().map_err(|e: String| src.err(w.kind.span(), e))?;
        let count = *w.clients.get_ref();
        if count == 0 || count > 64 {
            return Err(src.err(w.clients.span(), format!("`clients` is {count}; expected 1 to 64")));
        }
        let mut generated = Vec::new();
        for i in 1..=count {
            let name = Spanned::new(w.name.span(), format!("{}-{i}", w.name.get_ref()));
            take(src, &name, members, &mut names)?;
            generated.push(name.into_inner());
        }
        let script = match &w.script_steps {
            None => None,
            Some(steps) if kind != WorkloadKind::Apiserver => {
                return Err(src.err(steps.span(), "`script_steps` belongs to an `apiserver` workload"));
            }
            Some(steps) if *steps.get_ref() == 0 || *steps.get_ref() > 1000 => {
                return Err(src.err(steps.span(), format!("`script_steps` is {}; expected 1 to 1000", steps.get_ref())));
            }
            Some(steps) => {
                let name = Spanned::new(w.name.span(), format!("{}-script", w.name.get_ref()));
                take(src, &name, members, &mut names)?;
                Some((name.into_inner(), *steps.get_ref()))
            }
        };
        let at = src.line_of(&w.name.span());
        let name = w.name.get_ref().clone();
        workloads.push(WorkloadPlan { name, kind, clients: generated, ops: w.ops, script, at });
    }
    Ok((names, workloads))
}

/// Adds a client's name to `names`, if it is well formed and nobody has it yet.
fn take(src: &Source, name: &Spanned<String>, members: &[String], names: &mut Vec<String>) -> Result<()> {
    let n = name.get_ref();
    let valid = !n.is_empty() && n.chars().all(|ch| ch.is_ascii_alphanumeric() || ch == '-' || ch == '_');
    if !valid {
        return Err(src.err(name.span(), format!("client name {n:?}: expected letters, digits, `-` and `_`")));
    }
    if members.contains(n) || RESERVED.contains(&n.as_str()) || names.contains(n) {
        return Err(src.err(
            name.span(),
            format!("the name {n:?} is already taken (members, clients and `sim`, `fault`, `control` are reserved)"),
        ));
    }
    names.push(n.clone());
    Ok(())
}

//! Faults and failpoints: each `[[fault]]` with its one action, the nodes it names and when it applies;
//! each `[[failpoint]]` on a member or an apiserver with its action; and the `[nemesis]`'s patterns and
//! quiet times.

use fake_etcd::failpoint::{Action, Arm, Point};
use toml::Spanned;

use super::Names;
use super::{Result, Source};
use crate::cluster::ClusterSpec;
use crate::fault::nemesis::{NemesisConfig, Pattern};
use crate::fault::FailpointSpec;
use crate::fault::{roles, Fault};
use crate::scenario::lang::suggest;
use crate::scenario::plan::{FaultPlan, When};
use crate::scenario::syntax;

/// The nodes a fault may name: the members, the apiservers, every client, the webhooks, the controller
/// managers, then the simulated nodes.
pub(super) struct Nodes<'a> {
    pub(super) members: &'a [String],
    pub(super) apiservers: &'a [String],
    pub(super) clients: &'a [String],
    pub(super) webhooks: &'a [String],
    pub(super) controller_managers: &'a [String],
    pub(super) kubelets: &'a [String],
}

impl Nodes<'_> {
    fn all(&self) -> impl Iterator<Item = &String> {
        let nodes = self.members.iter().chain(self.apiservers).chain(self.clients).chain(self.webhooks);
        nodes.chain(self.controller_managers).chain(self.kubelets)
    }

    fn check(&self, src: &Source, node: &str, span: std::ops::Range<usize>, what: &str) -> Result<()> {
        if self.all().any(|n| n == node) {
            return Ok(());
        }
        let known: Vec<&str> = self.all().map(String::as_str).collect();
        let hint = suggest::hint(node, known.iter().copied().chain(roles::ROLES));
        Err(src.err(
            span,
            format!(
                "{what} names node {node:?}, which the scenario does not have; expected one of {}, or a role ({}){hint}",
                known.join(", "),
                roles::ROLES.join(", ")
            ),
        ))
    }
}

/// Every `[[fault]]`, in file order, and the notes about them (faults aimed at the leader too short to
/// change it).
pub(super) fn faults(
    src: &Source,
    names: &Names,
    file: &syntax::File,
    spec: &ClusterSpec,
    nodes: &Nodes,
) -> Result<(Vec<FaultPlan>, Vec<String>)> {
    let mut faults = Vec::new();
    let mut notes = Vec::new();
    for f in &file.faults {
        let fault = fault_of(src, f)?;
        if let Some(n) = &f.get_ref().cut_from_peers {
            if !roles::ROLES.contains(&n.as_str()) && !nodes.members.contains(n) {
                let msg = format!(
                    "`cut_from_peers` cuts a member off from the other members, and {n:?} is not a member; expected one of {}, or a role ({})",
                    nodes.members.join(", "),
                    roles::ROLES.join(", ")
                );
                return Err(src.err(f.span(), msg));
            }
        }
        for n in fault.nodes() {
            if roles::ROLES.contains(&n) {
                check_role(src, f, &fault, n, spec)?;
            } else if !(n == roles::REST && f.get_ref().isolate.is_some()
                || n == roles::PEERS && f.get_ref().cut_from_peers.is_some())
            {
                nodes.check(src, n, f.span(), "the fault")?;
            }
        }
        if let Fault::Release { node, point } = &fault {
            check_point(src, f.span(), node, point, nodes, "`release`")?;
        }
        // The numbers are checked with any member standing in for a role.
        let first = spec.member_names().remove(0);
        let named = fault.map_nodes(&mut |n| {
            if roles::ROLES.contains(&n) || n == roles::REST || n == roles::PEERS {
                vec![first.clone()]
            } else {
                vec![n.to_string()]
            }
        });
        named.validate(spec).map_err(|e| src.err(f.span(), e.to_string()))?;
        let for_ms = f.get_ref().for_ms;
        if for_ms.is_some() && roles::undo(&fault).is_none() {
            let msg = format!("`for_ms` undoes a fault after a while, and `{fault}` is itself an undo: drop `for_ms`");
            return Err(src.err(f.span(), msg));
        }
        if let (Some(ms), true) = (for_ms, fault.aims_at_leader()) {
            let election = min_election_timeout_ms();
            if ms < election {
                notes.push(format!(
                    "{}: `{fault}` for {ms} ms is shorter than an election timeout ({election} ms): it cannot change the leader",
                    src.line_of(&f.span())
                ));
            }
        }
        faults.push(FaultPlan { when: when(src, names, f)?, fault, for_ms });
    }
    Ok((faults, notes))
}

/// The shortest time a member waits without hearing from its leader before it campaigns: the members'
/// Raft tick times their election ticks (etcd's 1000 ms `--election-timeout` by default).
fn min_election_timeout_ms() -> u64 {
    let config = fake_etcd::service::MemberConfig::single("etcd-1", Vec::new(), Vec::new(), "kubesim-cluster");
    config.raft.tick_interval.as_millis() as u64 * config.raft.election_tick as u64
}

/// A role is named only where the fault's node is chosen when it applies (kill, pause, clog, isolate, a
/// partition's sides), and `follower` needs a cluster with one.
fn check_role(src: &Source, f: &Spanned<syntax::Fault>, fault: &Fault, role: &str, spec: &ClusterSpec) -> Result<()> {
    let aimed = matches!(
        fault,
        Fault::Kill(_) | Fault::Pause(_) | Fault::ClogNode(_) | Fault::Partition { .. } | Fault::PartitionOneWay { .. }
    );
    if !aimed {
        return Err(src.err(
            f.span(),
            format!(
                "`{fault}` names the role `{role}`, which only kill, pause, clog, isolate and partitions take; \
                 undo a fault aimed at a role with `for_ms`"
            ),
        ));
    }
    if role == roles::FOLLOWER && spec.members < 2 {
        return Err(src.err(f.span(), "`follower` names a member that does not lead, and the cluster has one member"));
    }
    Ok(())
}

/// When a fault applies: at a time, or after a step (and a delay).
fn when(src: &Source, names: &Names, f: &Spanned<syntax::Fault>) -> Result<When> {
    let r = f.get_ref();
    match (r.at_ms.map(|m| m.0), &r.after) {
        (Some(ms), None) => {
            if r.delay_ms.is_some() {
                return Err(src.err(f.span(), "`delay_ms` goes with `after`; with `at_ms` give the time directly"));
            }
            Ok(When::At { ms })
        }
        (None, Some(step)) => {
            names.step(src, step, "`after`")?;
            Ok(When::After { step: step.get_ref().clone(), delay_ms: r.delay_ms.map_or(0, |m| m.0) })
        }
        _ => Err(src.err(f.span(), "a fault needs exactly one of `at_ms` (a time) or `after` (a step name)")),
    }
}

/// That `point` is a failpoint of `node`: fake-etcd's on a member, the apiserver's on an apiserver.
fn check_point(
    src: &Source,
    span: std::ops::Range<usize>,
    node: &str,
    point: &str,
    nodes: &Nodes,
    what: &str,
) -> Result<()> {
    if nodes.members.iter().any(|m| m == node) {
        point.parse::<Point>().map(drop).map_err(|e| src.err(span, e.to_string()))
    } else if nodes.apiservers.iter().any(|a| a == node) {
        point.parse::<apiserver::failpoint::Point>().map(drop).map_err(|e| src.err(span, e.to_string()))
    } else {
        let known: Vec<&str> = nodes.members.iter().chain(nodes.apiservers).map(String::as_str).collect();
        Err(src.err(
            span,
            format!(
                "{what} names {node:?}: failpoints live in members and apiservers; expected one of {}",
                known.join(", ")
            ),
        ))
    }
}

/// Every `[[failpoint]]`, in file order.
pub(super) fn failpoints(src: &Source, file: &syntax::File, nodes: &Nodes) -> Result<Vec<FailpointSpec>> {
    let mut failpoints = Vec::new();
    for fp in &file.failpoints {
        let r = fp.get_ref();
        check_point(src, fp.span(), &r.node, &r.point, nodes, "the failpoint")?;
        let action = match (r.action, r.delay_ms) {
            (syntax::FailpointAction::Delay, Some(ms)) => Action::Delay(std::time::Duration::from_millis(ms)),
            (syntax::FailpointAction::Delay, None) => {
                return Err(src.err(fp.span(), "`action = \"delay\"` needs `delay_ms`"))
            }
            (_, Some(_)) => return Err(src.err(fp.span(), "`delay_ms` goes only with `action = \"delay\"`")),
            (syntax::FailpointAction::Drop, None) => Action::Drop,
            (syntax::FailpointAction::Error, None) => Action::Error,
            (syntax::FailpointAction::Crash, None) => Action::Crash,
            (syntax::FailpointAction::Hold, None) => Action::Hold,
        };
        let arm = Arm { action, skip: r.skip.unwrap_or(0), times: r.times };
        failpoints.push(FailpointSpec { node: r.node.clone(), point: r.point.clone(), arm });
    }
    Ok(failpoints)
}

/// A fault's one action.
fn fault_of(src: &Source, f: &Spanned<syntax::Fault>) -> Result<Fault> {
    let r = f.get_ref();
    let mut found: Vec<Fault> = Vec::new();
    if let Some(p) = &r.partition {
        found.push(Fault::Partition { left: p.left.clone(), right: p.right.clone() });
    }
    if let Some(n) = &r.isolate {
        found.push(Fault::Partition { left: vec![n.clone()], right: vec![roles::REST.to_string()] });
    }
    if let Some(n) = &r.cut_from_peers {
        found.push(Fault::Partition { left: vec![n.clone()], right: vec![roles::PEERS.to_string()] });
    }
    if let Some(p) = &r.partition_one_way {
        found.push(Fault::PartitionOneWay { from: p.from.clone(), to: p.to.clone() });
    }
    match r.heal {
        Some(true) => found.push(Fault::Heal),
        Some(false) => {
            return Err(src.err(f.span(), "`heal = false` does nothing; write `heal = true` or leave it out"))
        }
        None => {}
    }
    let node = |v: &Option<String>, make: fn(String) -> Fault, found: &mut Vec<Fault>| {
        if let Some(n) = v {
            found.push(make(n.clone()));
        }
    };
    node(&r.clog, Fault::ClogNode, &mut found);
    node(&r.unclog, Fault::UnclogNode, &mut found);
    node(&r.kill, Fault::Kill, &mut found);
    node(&r.restart, Fault::Restart, &mut found);
    node(&r.pause, Fault::Pause, &mut found);
    node(&r.resume, Fault::Resume, &mut found);
    if let Some(l) = &r.clog_link {
        found.push(Fault::ClogLink { from: l.from.clone(), to: l.to.clone() });
    }
    if let Some(l) = &r.unclog_link {
        found.push(Fault::UnclogLink { from: l.from.clone(), to: l.to.clone() });
    }
    if let Some(p) = r.packet_loss_permille {
        found.push(Fault::PacketLoss { loss_permille: p });
    }
    if let Some(l) = &r.latency {
        found.push(Fault::Latency { min_ms: l.min_ms, max_ms: l.max_ms });
    }
    if let Some(rel) = &r.release {
        found.push(Fault::Release { node: rel.node.clone(), point: rel.point.clone() });
    }
    match found.len() {
        1 => Ok(found.pop().expect("one")),
        0 => Err(src.err(f.span(), "the fault has no action; expected exactly one of: partition, isolate, partition_one_way, heal, clog, unclog, clog_link, unclog_link, packet_loss_permille, latency, kill, restart, pause, resume, release")),
        n => Err(src.err(f.span(), format!("the fault has {n} actions; expected exactly one (write one `[[fault]]` per action)"))),
    }
}

/// The `[nemesis]`, when it is enabled.
pub(super) fn nemesis(src: &Source, names: &Names, n: &syntax::Nemesis, spec: &ClusterSpec) -> Result<NemesisConfig> {
    let mut config = NemesisConfig::default();
    if let Some(step) = &n.after {
        names.step(src, step, "`[nemesis] after`")?;
        config.after = Some(step.get_ref().clone());
    }
    if let Some(list) = &n.patterns {
        let mut patterns = Vec::new();
        for p in list {
            let pattern: Pattern = p.get_ref().parse().map_err(|e: String| src.err(p.span(), e))?;
            if pattern == Pattern::LeaderPartition && spec.members < 2 {
                return Err(src.err(
                    p.span(),
                    "`leader-partition` cuts the leader off from the other members, and the cluster has one; \
                     expected `[cluster] members` of 2 or more",
                ));
            }
            if !patterns.contains(&pattern) {
                patterns.push(pattern);
            }
        }
        if patterns.is_empty() {
            return Err(src.err(0..0, "`[nemesis] patterns` is empty; expected at least one (or `enabled = false`)"));
        }
        patterns.sort();
        config.patterns = patterns;
    }
    if let Some(q) = &n.quiet_ms {
        let [lo, hi] = *q.get_ref();
        if lo >= hi {
            return Err(
                src.err(q.span(), format!("`quiet_ms` is [{lo}, {hi}]; expected [min, max] with min below max"))
            );
        }
        config.quiet_ms = (lo, hi);
    }
    Ok(config)
}

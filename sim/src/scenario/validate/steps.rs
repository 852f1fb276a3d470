//! Each scripted client and its steps: the member it talks to, and per step its one operation (validated by
//! its kind), what it waits for (`after`, `at_ms`), its expectations and its label.

use toml::Spanned;

use super::Names;
use super::{Result, Source};
use crate::cluster::ClusterSpec;
use crate::scenario::lang::suggest;
use crate::scenario::plan::{ClientScript, StepPlan};
use crate::scenario::steps::{self, ClientKind, Op, PlanCx, Step};
use crate::scenario::syntax;
use apiserver::apis::Catalog;

/// Every scripted client, in file order.
pub(super) fn scripts(
    src: &Source,
    names: &Names,
    file: &syntax::File,
    spec: &ClusterSpec,
    catalog: &Catalog,
) -> Result<Vec<ClientScript>> {
    let members = spec.member_names();
    let mut clients = Vec::new();
    for client in &file.clients {
        let kube = super::kube::target(src, client, spec)?;
        let member = match &client.member {
            None if kube.is_some() => String::new(),
            None => members[0].clone(),
            Some(m) => {
                if !members.contains(m.get_ref()) {
                    return Err(src.err(
                        m.span(),
                        format!(
                            "no member is named {:?}; expected one of {}{}",
                            m.get_ref(),
                            members.join(", "),
                            suggest::hint(m.get_ref(), members.iter().map(String::as_str))
                        ),
                    ));
                }
                m.get_ref().clone()
            }
        };
        let mut plans = Vec::new();
        for (i, step) in client.steps.iter().enumerate() {
            let cx = PlanCx { src, names, catalog, members: &members, step };
            let plan = step_plan(&cx, client.name.get_ref(), i)?;
            check_client_kind(src, step, &plan.op, kube.is_some())?;
            plans.push(plan);
        }
        let user = super::access::client_user(src, client, spec, kube.is_some())?;
        clients.push(ClientScript { name: client.name.get_ref().clone(), member, kube, user, steps: plans });
    }
    Ok(clients)
}

/// A Kubernetes client sends `kube` steps, an etcd client etcd requests; waits and sleeps are either's.
fn check_client_kind(src: &Source, step: &Spanned<Step>, op: &Op, kube_client: bool) -> Result<()> {
    match (op.client(), kube_client) {
        (ClientKind::Kube, false) => Err(src.err(
            step.span(),
            format!("a `{}` step needs a Kubernetes client: give the client `apiserver` or `routing`", op.keyword()),
        )),
        (ClientKind::Etcd, true) => Err(src.err(
            step.span(),
            format!(
                "a Kubernetes client sends `kube` steps, not `{}`; etcd requests need a client of a member",
                op.keyword()
            ),
        )),
        _ => Ok(()),
    }
}

fn step_plan(cx: &PlanCx, client: &str, index: usize) -> Result<StepPlan> {
    let (src, names, step) = (cx.src, cx.names, cx.step);
    let s = step.get_ref();
    let op = match s.ops.as_slice() {
        [op] => op.plan(cx)?,
        [] => {
            let all = steps::FIELDS[4..].join(", ");
            return Err(src.err(step.span(), format!("the step has no operation; expected exactly one of: {all}")));
        }
        many => {
            let keys: Vec<&str> = many.iter().map(|o| o.key()).collect();
            return Err(src.err(
                step.span(),
                format!("the step has {} operations ({}); expected exactly one", keys.len(), keys.join(", ")),
            ));
        }
    };
    let mut after = Vec::new();
    for a in &s.after {
        names.step(src, a, "`after`")?;
        if s.name.as_ref().is_some_and(|n| n.get_ref() == a.get_ref()) {
            return Err(src.err(a.span(), "a step cannot wait for itself"));
        }
        after.push(a.get_ref().clone());
    }
    let expect = s.expect.as_ref().map(|e| steps::expect::parse(cx, &op, e)).transpose()?;
    let name = s.name.as_ref().map(|n| n.get_ref().clone());
    Ok(StepPlan {
        label: name.clone().unwrap_or_else(|| format!("{client}#{}", index + 1)),
        name,
        at: src.line_of(&step.span()),
        after,
        at_ms: s.at_ms,
        op,
        expect,
    })
}

//! `move_leader = { to = "etcd-2" }`: etcd's MoveLeader, as `etcdctl move-leader` sends it: the step asks
//! every member's Status for the leader and the target's member id, and sends the request to the leader,
//! which hands leadership over once the target has caught up (or answers etcd's refusal). `to = "follower"`
//! moves it to a follower the seed picks. It expects the outcome, etcd's error, the member that leads
//! afterwards (`leader`) and whether leadership moved (`leader_changed`).

use std::fmt::{self, Formatter};
use std::time::Duration;

use etcd_proto::etcdserverpb as pb;
use pb::maintenance_client::MaintenanceClient;
use rand::Rng;
use serde::{Deserialize, Serialize};
use toml::Spanned;

use super::ctx::{Finished, RunCx};
use super::judging::StepJudge;
use super::observed::{Answer, AnswerOutcome, Observed};
use super::{ClientKind, PlanCx, StepKind};
use crate::history::ErrorStatus;
use crate::scenario::lang::expect::Expect;
use crate::scenario::lang::expectations::Expectations;
use crate::scenario::lang::names::Gives;
use crate::scenario::lang::source::Result;
use crate::scenario::lang::suggest;

/// `move_leader = { to = ".." }` as written.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Syntax {
    /// A member's name, or `follower`: one the seed picks among those that do not lead.
    pub to: Spanned<String>,
}

/// A validated move: the member to lead, or `None` for a follower the seed picks.
#[derive(Clone, Debug)]
pub struct MoveLeader {
    pub to: Option<String>,
}

/// How long each member's Status may take, when the step looks for the leader.
const ASK_TIMEOUT: Duration = Duration::from_millis(100);

impl StepKind for MoveLeader {
    const KEY: &'static str = "move_leader";
    const CLIENT: ClientKind = ClientKind::Etcd;
    const GIVES: Gives = Gives::Nothing;
    type Syntax = Syntax;

    fn variants() -> &'static [(&'static str, &'static [&'static str])] {
        &[("move_leader", &["outcome", "error", "leader", "leader_changed"])]
    }

    fn plan(cx: &PlanCx, syntax: &Spanned<Syntax>) -> Result<MoveLeader> {
        let to = &syntax.get_ref().to;
        match to.get_ref().as_str() {
            "follower" if cx.members.len() < 2 => {
                Err(cx.src.err(to.span(), "a cluster of one member has no follower to move leadership to"))
            }
            "follower" => Ok(MoveLeader { to: None }),
            m if cx.members.iter().any(|n| n == m) => Ok(MoveLeader { to: Some(m.to_string()) }),
            m => Err(cx.src.err(
                to.span(),
                format!(
                    "no member is named {m:?}; expected `follower` or one of {}{}",
                    cx.members.join(", "),
                    suggest::hint(m, cx.members.iter().map(String::as_str))
                ),
            )),
        }
    }

    fn check_expect(&self, cx: &PlanCx, written: &Spanned<Expect>, _parsed: &mut Expectations) -> Result<()> {
        match &written.get_ref().leader {
            Some(m) if !cx.members.contains(m.get_ref()) => Err(cx.src.err(
                m.span(),
                format!("no member is named {:?}; expected one of {}", m.get_ref(), cx.members.join(", ")),
            )),
            _ => Ok(()),
        }
    }

    fn text(&self, f: &mut Formatter<'_>) -> fmt::Result {
        write!(f, "move-leader {}", self.to.as_deref().unwrap_or("follower"))
    }

    async fn run(&self, cx: &mut RunCx<'_>) -> Finished {
        let ctx = cx.ctx;
        let before = statuses(&ctx.endpoints).await;
        let Some(leader) = leader_of(&before) else {
            return cx.not_run("no member reports a leader".into());
        };
        let target = match &self.to {
            Some(name) => before.iter().find(|m| &m.name == name),
            None => {
                let followers: Vec<&Member> = before.iter().filter(|m| m.name != leader.name).collect();
                let mut rng = ctx.seeds.rng(&format!("move_leader/{}", cx.label));
                (!followers.is_empty()).then(|| followers[rng.random_range(0..followers.len())])
            }
        };
        let Some(target) = target else {
            return cx.not_run("the member to lead does not answer Status".into());
        };
        let mut m = MaintenanceClient::new(crate::client::channel(&leader.endpoint));
        let request = pb::MoveLeaderRequest { target_id: target.id };
        let outcome = match tokio::time::timeout(ctx.request_timeout, m.move_leader(request)).await {
            Ok(Ok(_)) => AnswerOutcome::Ok,
            Ok(Err(status)) if status.code() == tonic::Code::Unavailable => {
                AnswerOutcome::Unknown(format!("unavailable: {}", status.message()))
            }
            Ok(Err(status)) => AnswerOutcome::Err(ErrorStatus::from(&status)),
            Err(_) => AnswerOutcome::Unknown(format!("no answer within {}ms", ctx.request_timeout.as_millis())),
        };
        let after = leader_of(&statuses(&ctx.endpoints).await).map(|m| m.name);
        let now = after.clone().unwrap_or_else(|| "none".into());
        let facts = vec![
            ("to".to_string(), target.name.clone()),
            ("leader".to_string(), now.clone()),
            ("changed".to_string(), (after.as_deref() != Some(leader.name.as_str())).to_string()),
        ];
        let answer = Answer { outcome, facts };
        ctx.trace.event(cx.client_name, format_args!("{} move-leader {} -> {}: {answer}", cx.label, leader.name, target.name));
        (Observed::Answer(answer), None, None)
    }

    fn judge(&self, j: &mut StepJudge<'_>, observed: &Observed, expect: Option<&Expectations>) {
        let (Observed::Answer(answer), Some(e)) = (observed, expect) else { return };
        j.answer(answer, e);
        if let Some(want) = &e.leader {
            let got = answer.fact("leader").unwrap_or("none");
            j.push("leader", format!("leader {want}"), got == want, format!("got {got}"));
        }
        if let Some(want) = e.leader_changed {
            let got = answer.fact("changed") == Some("true");
            j.push("leader_changed", format!("leader_changed {want}"), got == want, format!("got {got}"));
        }
    }
}

/// A member as its Status describes it.
#[derive(Clone, Debug)]
struct Member {
    name: String,
    endpoint: String,
    id: u64,
    leads: bool,
    term: u64,
}

/// Every member that answers Status, in member order.
async fn statuses(endpoints: &[String]) -> Vec<Member> {
    let mut out = Vec::new();
    for (i, endpoint) in endpoints.iter().enumerate() {
        let mut m = MaintenanceClient::new(crate::client::channel(endpoint));
        let Ok(Ok(status)) = tokio::time::timeout(ASK_TIMEOUT, m.status(pb::StatusRequest {})).await else {
            continue;
        };
        let s = status.into_inner();
        let id = s.header.as_ref().map_or(0, |h| h.member_id);
        out.push(Member {
            name: crate::cluster::member_name(i + 1),
            endpoint: endpoint.clone(),
            id,
            leads: s.leader != 0 && s.leader == id,
            term: s.raft_term,
        });
    }
    out
}

/// The member that says it leads, of the highest term (one cut off may not know yet that it was replaced).
fn leader_of(members: &[Member]) -> Option<Member> {
    members.iter().filter(|m| m.leads).max_by_key(|m| m.term).cloned()
}

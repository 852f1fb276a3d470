//! `wait = { .. }`: blocks the client until a named condition holds, or fails the step after `timeout_ms`
//! (default 10 s): a leader (any, or a given member), a leadership change, a condition on a watch's stream
//! (events delivered, a revision vouched for, a cancel, a progress notification), or an informer's
//! (synced, a resourceVersion reached). Conditions are polled on the simulated clock, which is
//! deterministic. A wait that times out is a failure of its step; the client goes on.

use std::fmt::{self, Formatter};
use std::time::Duration;

use etcd_proto::etcdserverpb as pb;
use serde::{Deserialize, Serialize};
use toml::Spanned;

use super::ctx::{poll, Finished, RunCx};
use super::judging::StepJudge;
use super::board::Known;
use super::observed::Observed;
use super::{ClientKind, PlanCx, StepKind};
use crate::scenario::expr::Expr;
use crate::scenario::lang::expectations::Expectations;
use crate::scenario::lang::names::Gives;
use crate::scenario::lang::source::Result;
use crate::scenario::lang::suggest;
use crate::scenario::lang::value::{is_false, Value};

/// `wait = { .. }` as written.
#[derive(Clone, Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Syntax {
    /// `true`: some member reports a leader; a member's name: that member leads.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub leader: Option<Spanned<LeaderWanted>>,
    /// Another member leads than the one that led when the wait began.
    #[serde(default, skip_serializing_if = "is_false")]
    pub leader_changed: bool,
    /// The watch step to wait on; with `events`, `revision`, `canceled` or `progress`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub watch: Option<Spanned<String>>,
    /// The watch has delivered at least this many events.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub events: Option<usize>,
    /// The watch has vouched for a revision that satisfies this (an event's or a progress notification's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revision: Option<Spanned<Value>>,
    /// The watch has been canceled by the server.
    #[serde(default, skip_serializing_if = "is_false")]
    pub canceled: bool,
    /// The watch has received at least one progress notification.
    #[serde(default, skip_serializing_if = "is_false")]
    pub progress: bool,
    /// The informer step to wait on; with `synced` or `rv`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub informer: Option<Spanned<String>>,
    /// The informer has synced (its first list came back).
    #[serde(default, skip_serializing_if = "is_false")]
    pub synced: bool,
    /// The informer has been told a resourceVersion that satisfies this (by a list or an event).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rv: Option<Spanned<Value>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<u64>,
}

/// `leader = true` or `leader = "etcd-2"`.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(untagged)]
pub enum LeaderWanted {
    Any(bool),
    Member(String),
}

/// A validated wait.
#[derive(Clone, Debug)]
pub struct Wait {
    pub condition: Condition,
    pub timeout_ms: u64,
}

#[derive(Clone, Debug)]
pub enum Condition {
    /// Some member leads (`None`), or this one.
    Leader(Option<String>),
    LeaderChanged,
    Watch { watch: String, condition: WatchCondition },
    Informer { informer: String, condition: InformerCondition },
}

#[derive(Clone, Debug)]
pub enum WatchCondition {
    Events(usize),
    Revision(Expr),
    Canceled,
    Progress,
}

#[derive(Clone, Debug)]
pub enum InformerCondition {
    Synced,
    Rv(Expr),
}

impl StepKind for Wait {
    const KEY: &'static str = "wait";
    const CLIENT: ClientKind = ClientKind::Any;
    const GIVES: Gives = Gives::Nothing;
    type Syntax = Syntax;

    fn variants() -> &'static [(&'static str, &'static [&'static str])] {
        &[("wait", &[])]
    }

    fn plan(cx: &PlanCx, w: &Spanned<Syntax>) -> Result<Wait> {
        let (src, r) = (cx.src, w.get_ref());
        let timeout_ms = r.timeout_ms.unwrap_or(10_000);
        let watch_keys = r.events.is_some() || r.revision.is_some() || r.canceled || r.progress;
        let informer_keys = r.synced || r.rv.is_some();
        let subjects = usize::from(r.leader.is_some())
            + usize::from(r.leader_changed)
            + usize::from(r.watch.is_some())
            + usize::from(r.informer.is_some());
        if subjects != 1 {
            return Err(src.err(
                w.span(),
                "`wait` needs exactly one of `leader = true` (or a member's name), `leader_changed = true`, \
                 `watch = \"<watch step>\"` or `informer = \"<informer step>\"`",
            ));
        }
        let condition = if let Some(leader) = &r.leader {
            if watch_keys || informer_keys {
                return Err(src.err(w.span(), "`wait` for `leader` takes no watch condition"));
            }
            match leader.get_ref() {
                LeaderWanted::Any(true) => Condition::Leader(None),
                LeaderWanted::Any(false) => {
                    return Err(src.err(leader.span(), "`leader = false` waits for nothing: expected `true`"))
                }
                LeaderWanted::Member(m) if cx.members.contains(m) => Condition::Leader(Some(m.clone())),
                LeaderWanted::Member(m) => {
                    let msg = format!(
                        "no member is named {m:?}; expected one of {}{}",
                        cx.members.join(", "),
                        suggest::hint(m, cx.members.iter().map(String::as_str))
                    );
                    return Err(src.err(leader.span(), msg));
                }
            }
        } else if r.leader_changed {
            if watch_keys || informer_keys {
                return Err(src.err(w.span(), "`wait` for `leader_changed` takes no watch condition"));
            }
            Condition::LeaderChanged
        } else if let Some(watch) = &r.watch {
            let watch = cx.names.watch(src, watch)?;
            let mut conditions = Vec::new();
            if let Some(n) = r.events {
                conditions.push(WatchCondition::Events(n));
            }
            if let Some(v) = &r.revision {
                conditions.push(WatchCondition::Revision(cx.names.expr(src, v)?));
            }
            if r.canceled {
                conditions.push(WatchCondition::Canceled);
            }
            if r.progress {
                conditions.push(WatchCondition::Progress);
            }
            if conditions.len() != 1 || informer_keys {
                return Err(src.err(
                    w.span(),
                    "`wait` on a watch needs exactly one of `events`, `revision`, `canceled = true`, `progress = true`",
                ));
            }
            Condition::Watch { watch, condition: conditions.pop().expect("one") }
        } else {
            let informer = r.informer.as_ref().expect("one subject");
            let informer = cx.names.informer(src, informer, "`wait.informer`")?;
            let condition = match (r.synced, &r.rv) {
                (true, None) if !watch_keys => InformerCondition::Synced,
                (false, Some(v)) if !watch_keys => InformerCondition::Rv(cx.names.expr(src, v)?),
                _ => {
                    return Err(src.err(w.span(), "`wait` on an informer needs exactly one of `synced = true`, `rv`"))
                }
            };
            Condition::Informer { informer, condition }
        };
        Ok(Wait { condition, timeout_ms })
    }

    fn text(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match &self.condition {
            Condition::Leader(None) => f.write_str("wait leader"),
            Condition::Leader(Some(m)) => write!(f, "wait leader {m}"),
            Condition::LeaderChanged => f.write_str("wait leader-changed"),
            Condition::Watch { watch, condition } => match condition {
                WatchCondition::Events(n) => write!(f, "wait {watch} events>={n}"),
                WatchCondition::Revision(e) => write!(f, "wait {watch} revision {e}"),
                WatchCondition::Canceled => write!(f, "wait {watch} canceled"),
                WatchCondition::Progress => write!(f, "wait {watch} progress"),
            },
            Condition::Informer { informer, condition } => match condition {
                InformerCondition::Synced => write!(f, "wait {informer} synced"),
                InformerCondition::Rv(e) => write!(f, "wait {informer} rv {e}"),
            },
        }
    }

    async fn run(&self, cx: &mut RunCx<'_>) -> Finished {
        let result = self.wait(cx).await;
        let text = crate::describe::FromFn(|f: &mut Formatter<'_>| self.text(f)).to_string();
        match &result {
            Ok(()) => cx.ctx.trace.event(cx.client_name, format_args!("{} {text}: holds", cx.label)),
            Err(e) => cx.ctx.trace.event(cx.client_name, format_args!("{} {text}: {e}", cx.label)),
        }
        (Observed::Waited(result), None, None)
    }

    fn judge(&self, j: &mut StepJudge<'_>, observed: &Observed, _expect: Option<&Expectations>) {
        if let Observed::Waited(Err(e)) = observed {
            j.fail("", "wait", e.clone());
        }
    }
}

impl Wait {
    async fn wait(&self, cx: &RunCx<'_>) -> std::result::Result<(), String> {
        let ctx = cx.ctx;
        let timeout = Duration::from_millis(self.timeout_ms);
        let timeout_ms = self.timeout_ms;
        match &self.condition {
            Condition::Leader(None) => {
                if crate::cluster::leader_elected(&ctx.endpoints, timeout).await {
                    Ok(())
                } else {
                    Err(format!("timed out after {timeout_ms}ms: no member reported a leader"))
                }
            }
            Condition::Leader(Some(member)) => {
                let deadline = madsim::time::Instant::now() + timeout;
                loop {
                    let view = leader_view(&ctx.endpoints).await;
                    if view.leader_name() == Some(member.as_str()) {
                        return Ok(());
                    }
                    if madsim::time::Instant::now() >= deadline {
                        let now = view.leader_name().unwrap_or("none").to_string();
                        return Err(format!("timed out after {timeout_ms}ms: {member} does not lead (the leader: {now})"));
                    }
                    madsim::time::sleep(Duration::from_millis(50)).await;
                }
            }
            Condition::LeaderChanged => {
                // The leader the members report when the wait begins, by member id: a leader that stalls
                // answers nothing, but its followers still name it until they elect another.
                let before = leader_view(&ctx.endpoints).await;
                let deadline = madsim::time::Instant::now() + timeout;
                loop {
                    madsim::time::sleep(Duration::from_millis(50)).await;
                    let now = leader_view(&ctx.endpoints).await;
                    if now.leader.is_some_and(|(_, id)| Some(id) != before.leader.map(|(_, id)| id)) {
                        return Ok(());
                    }
                    if madsim::time::Instant::now() >= deadline {
                        let was = before.leader_name().unwrap_or("none").to_string();
                        return Err(format!("timed out after {timeout_ms}ms: the leader is still {was}"));
                    }
                }
            }
            Condition::Watch { watch, condition } => {
                let id = ctx.board.lock().watches.get(watch).map(|w| w.id);
                let Some(id) = id else {
                    return Err(format!("watch {watch} is not open"));
                };
                let board = ctx.board.clone();
                let holds = poll(timeout, || {
                    let h = ctx.history.lock();
                    let responses = &h.watches[id.0].responses;
                    let ok = match condition {
                        WatchCondition::Events(n) => {
                            responses.iter().map(|r| r.response.events.len()).sum::<usize>() >= *n
                        }
                        WatchCondition::Canceled => responses.iter().any(|r| r.response.canceled),
                        WatchCondition::Progress => responses.iter().any(|r| r.response.is_progress_notify()),
                        WatchCondition::Revision(e) => responses.iter().any(|r| {
                            let vouched = match r.response.events.last() {
                                Some(ev) => ev.revision().0,
                                None if r.response.is_progress_notify() => r.response.header_revision.0,
                                None => return false,
                            };
                            e.matches(vouched, &|s| board.revision(s)).unwrap_or(false)
                        }),
                    };
                    ok.then_some(())
                })
                .await;
                holds.ok_or_else(|| format!("timed out after {timeout_ms}ms"))
            }
            Condition::Informer { informer, condition } => {
                let board = ctx.board.clone();
                let holds = poll(timeout, || {
                    let informers = ctx.informers.lock().expect("informers lock");
                    let (_, log) = informers.logs.get(informer)?;
                    let log = log.lock().expect("informer log lock");
                    let listed = log.beliefs.iter().any(|b| matches!(b.what, super::observed::BeliefKind::Listed { .. }));
                    let ok = match condition {
                        InformerCondition::Synced => listed,
                        InformerCondition::Rv(e) => {
                            log.beliefs.iter().any(|b| e.matches(b.rv as i64, &|s| board.revision(s)).unwrap_or(false))
                        }
                    };
                    ok.then_some(())
                })
                .await;
                holds.ok_or_else(|| format!("timed out after {timeout_ms}ms"))
            }
        }
    }
}

/// Who the members say leads, by etcd's Status: the leader's member id as reported by the member of the
/// highest term that names one (a leader cut off may not know yet that it was replaced, and a stalled
/// leader answers nothing while its followers still name it), and each answering member's id and name.
pub struct LeaderView {
    /// The term, and the leader's member id.
    pub leader: Option<(u64, u64)>,
    pub names: Vec<(u64, String)>,
}

impl LeaderView {
    /// The leader's name, when it answered too.
    pub fn leader_name(&self) -> Option<&str> {
        let (_, id) = self.leader?;
        self.names.iter().find(|(i, _)| *i == id).map(|(_, n)| n.as_str())
    }
}

/// Asks every member's Status (100 ms each).
pub async fn leader_view(endpoints: &[String]) -> LeaderView {
    use pb::maintenance_client::MaintenanceClient;
    let mut view = LeaderView { leader: None, names: Vec::new() };
    for (i, endpoint) in endpoints.iter().enumerate() {
        let mut m = MaintenanceClient::new(crate::client::channel(endpoint));
        let Ok(Ok(status)) = madsim::time::timeout(Duration::from_millis(100), m.status(pb::StatusRequest {})).await
        else {
            continue;
        };
        let status = status.into_inner();
        if let Some(h) = &status.header {
            view.names.push((h.member_id, crate::cluster::member_name(i + 1)));
        }
        if status.leader != 0 && view.leader.is_none_or(|(term, _)| status.raft_term > term) {
            view.leader = Some((status.raft_term, status.leader));
        }
    }
    view
}

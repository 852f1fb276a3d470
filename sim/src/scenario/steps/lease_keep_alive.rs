//! `lease_keep_alive = { lease = "grant" }`: one keep-alive round trip for a granted lease, traced but not
//! filed in the history. It expects the outcome and the TTL answered (-1: the lease is gone).

use std::fmt::{self, Formatter};

use toml::Spanned;

use super::ctx::{Finished, RunCx};
use super::judging::{shown, StepJudge};
use super::board::lease_id;
use super::lease_revoke::LeaseRef;
use super::observed::Observed;
use super::{ClientKind, PlanCx, StepKind};
use crate::describe;
use crate::history as h;
use crate::scenario::lang::expectations::Expectations;
use crate::scenario::lang::names::Gives;
use crate::scenario::lang::source::Result;

/// A validated keep-alive: the grant step whose lease it keeps.
#[derive(Clone, Debug)]
pub struct LeaseKeepAlive {
    pub lease: String,
}

impl StepKind for LeaseKeepAlive {
    const KEY: &'static str = "lease_keep_alive";
    const CLIENT: ClientKind = ClientKind::Etcd;
    const GIVES: Gives = Gives::Nothing;
    type Syntax = LeaseRef;

    fn variants() -> &'static [(&'static str, &'static [&'static str])] {
        &[("lease_keep_alive", &["outcome", "ttl_s"])]
    }

    fn plan(cx: &PlanCx, syntax: &Spanned<LeaseRef>) -> Result<LeaseKeepAlive> {
        Ok(LeaseKeepAlive { lease: cx.names.lease(cx.src, &syntax.get_ref().lease)? })
    }

    fn text(&self, f: &mut Formatter<'_>) -> fmt::Result {
        describe::write_lease_keep_alive(f, &self.lease)
    }

    async fn run(&self, cx: &mut RunCx<'_>) -> Finished {
        let id = match lease_id(&*cx.ctx.board, &self.lease) {
            Ok(id) => id,
            Err(e) => return cx.not_run(e),
        };
        let ttl = cx.client.lease_keep_alive(id).await;
        let ttl = ttl.ok_or_else(|| format!("no answer within {}ms", cx.ctx.request_timeout.as_millis()));
        (Observed::Ttl(ttl.map(|t| (t, Vec::new()))), None, None)
    }

    fn judge(&self, j: &mut StepJudge<'_>, observed: &Observed, expect: Option<&Expectations>) {
        judge_ttl(j, observed, expect);
    }
}

/// A keep-alive's or time-to-live's answer: the outcome, the TTL, and the keys on the lease.
pub fn judge_ttl(j: &mut StepJudge<'_>, observed: &Observed, e: Option<&Expectations>) {
    let (Observed::Ttl(ttl), Some(e)) = (observed, e) else { return };
    let got = match ttl {
        Ok((t, _)) => format!("ok ttl={t}"),
        Err(err) => err.clone(),
    };
    if let Some(want) = e.outcome {
        let ok = ttl.is_ok();
        j.outcome(want, &got, ok, !ok, false, false);
    }
    if let Some(t) = &e.ttl_s {
        match ttl {
            Ok((actual, _)) => j.number("ttl_s", t, *actual),
            Err(err) => j.fail("ttl_s", &format!("ttl_s {}", shown(t)), err.clone()),
        }
    }
    if let Some(want) = &e.keys {
        let what = format!("keys {want:?}");
        match ttl {
            Ok((_, keys)) => {
                let actual: Vec<String> = keys.iter().map(h::Bytes::escaped).collect();
                j.push("keys", what, *want == actual, format!("got {actual:?}"));
            }
            Err(err) => j.fail("keys", &what, err.clone()),
        }
    }
}

//! `lease_time_to_live = { lease = "grant", keys = true }`: one LeaseTimeToLive request, traced but not filed
//! in the history. It expects the outcome, the TTL left (-1: the lease is gone) and, with `keys`, the keys
//! on the lease in key order.

use std::fmt::{self, Formatter};

use serde::{Deserialize, Serialize};
use toml::Spanned;

use super::ctx::{Finished, RunCx};
use super::judging::StepJudge;
use super::board::lease_id;
use super::lease_keep_alive::judge_ttl;
use super::observed::Observed;
use super::{ClientKind, PlanCx, StepKind};
use crate::describe;
use crate::scenario::lang::expect::Expect;
use crate::scenario::lang::expectations::Expectations;
use crate::scenario::lang::names::Gives;
use crate::scenario::lang::source::Result;
use crate::scenario::lang::value::is_false;

/// `lease_time_to_live = { .. }` as written.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Syntax {
    pub lease: Spanned<String>,
    /// Ask for the keys attached to the lease too.
    #[serde(default, skip_serializing_if = "is_false")]
    pub keys: bool,
}

/// A validated time-to-live request.
#[derive(Clone, Debug)]
pub struct LeaseTimeToLive {
    pub lease: String,
    pub keys: bool,
}

impl StepKind for LeaseTimeToLive {
    const KEY: &'static str = "lease_time_to_live";
    const CLIENT: ClientKind = ClientKind::Etcd;
    const GIVES: Gives = Gives::Nothing;
    type Syntax = Syntax;

    fn variants() -> &'static [(&'static str, &'static [&'static str])] {
        &[("lease_time_to_live", &["outcome", "ttl_s", "keys"])]
    }

    fn plan(cx: &PlanCx, syntax: &Spanned<Syntax>) -> Result<LeaseTimeToLive> {
        let s = syntax.get_ref();
        Ok(LeaseTimeToLive { lease: cx.names.lease(cx.src, &s.lease)?, keys: s.keys })
    }

    fn check_expect(&self, cx: &PlanCx, written: &Spanned<Expect>, _parsed: &mut Expectations) -> Result<()> {
        match &written.get_ref().keys {
            Some(k) if !self.keys => {
                Err(cx.src.err(k.span(), "`expect.keys` needs `keys = true` on the `lease_time_to_live`"))
            }
            _ => Ok(()),
        }
    }

    fn text(&self, f: &mut Formatter<'_>) -> fmt::Result {
        describe::write_lease_time_to_live(f, &self.lease, self.keys)
    }

    async fn run(&self, cx: &mut RunCx<'_>) -> Finished {
        match lease_id(&*cx.ctx.board, &self.lease) {
            Ok(id) => (Observed::Ttl(cx.client.lease_time_to_live(id, self.keys).await), None, None),
            Err(e) => cx.not_run(e),
        }
    }

    fn judge(&self, j: &mut StepJudge<'_>, observed: &Observed, expect: Option<&Expectations>) {
        judge_ttl(j, observed, expect);
    }
}

//! `lease_leases = {}`: lists every lease the member knows (LeaseLeases), traced but not filed in the
//! history. It expects the outcome and the leases listed, by the `lease_grant` steps that got them: those,
//! and no others.

use std::fmt::{self, Formatter};

use serde::{Deserialize, Serialize};
use toml::Spanned;

use super::ctx::{Finished, RunCx};
use super::judging::{shown_leases, StepJudge};
use super::observed::Observed;
use super::{ClientKind, PlanCx, StepKind};
use crate::describe;
use crate::scenario::lang::expectations::Expectations;
use crate::scenario::lang::names::Gives;
use crate::scenario::lang::source::Result;

/// `lease_leases = {}`: it takes no keys.
#[derive(Clone, Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Syntax {}

/// A lease listing.
#[derive(Clone, Debug)]
pub struct LeaseLeases;

impl StepKind for LeaseLeases {
    const KEY: &'static str = "lease_leases";
    const CLIENT: ClientKind = ClientKind::Etcd;
    const GIVES: Gives = Gives::Nothing;
    type Syntax = Syntax;

    fn variants() -> &'static [(&'static str, &'static [&'static str])] {
        &[("lease_leases", &["outcome", "leases"])]
    }

    fn plan(_cx: &PlanCx, _syntax: &Spanned<Syntax>) -> Result<LeaseLeases> {
        Ok(LeaseLeases)
    }

    fn text(&self, f: &mut Formatter<'_>) -> fmt::Result {
        f.write_str(describe::LEASE_LEASES)
    }

    async fn run(&self, cx: &mut RunCx<'_>) -> Finished {
        (Observed::Leases(cx.client.lease_leases().await), None, None)
    }

    /// The leases listed against the `lease_grant` steps named: the same set, no more, no fewer.
    fn judge(&self, j: &mut StepJudge<'_>, observed: &Observed, expect: Option<&Expectations>) {
        let (Observed::Leases(ids), Some(e)) = (observed, expect) else { return };
        let got = match ids {
            Ok(ids) => format!("ok {} leases", ids.len()),
            Err(err) => err.clone(),
        };
        if let Some(want) = e.outcome {
            let ok = ids.is_ok();
            j.outcome(want, &got, ok, !ok, false, false);
        }
        let Some(want) = &e.leases else { return };
        let what = format!("leases {want:?}");
        let ids = match ids {
            Ok(ids) => ids,
            Err(err) => return j.fail("leases", &what, err.clone()),
        };
        let mut expected: Vec<i64> = Vec::new();
        let mut missing_grant = Vec::new();
        for step in want {
            match j.leases.get(step) {
                Some(id) => expected.push(*id),
                None => missing_grant.push(step.clone()),
            }
        }
        expected.sort_unstable();
        let shown = shown_leases(ids, j.leases);
        if !missing_grant.is_empty() {
            return j.fail("leases", &what, format!("got {shown}; no lease was granted to {missing_grant:?}"));
        }
        j.push("leases", what, expected == *ids, format!("got {shown}"));
    }
}

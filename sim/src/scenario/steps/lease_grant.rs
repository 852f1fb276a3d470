//! `lease_grant = { ttl_s = 5 }`: one LeaseGrant request (`id` asks for a given id; 0, the default, lets the
//! server pick). A named grant gives its lease to the steps that name it (`lease = "grant"`). It expects the
//! outcome, etcd's error, the header revision and the TTL granted.

use std::fmt::{self, Display, Formatter};

use etcd_proto::etcdserverpb as pb;
use serde::{Deserialize, Serialize};
use toml::Spanned;

use super::ctx::{Finished, RunCx};
use super::judging::StepJudge;
use super::kv;
use super::observed::Observed;
use super::{ClientKind, PlanCx, StepKind};
use crate::describe;
use crate::history::LeaseId;
use crate::scenario::lang::expectations::Expectations;
use crate::scenario::lang::names::Gives;
use crate::scenario::lang::source::Result;

/// `lease_grant = { .. }` as written.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Syntax {
    pub ttl_s: i64,
    /// Ask for this id (default: the server picks).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<i64>,
}

/// A validated grant.
#[derive(Clone, Debug)]
pub struct LeaseGrant {
    pub ttl_s: i64,
    pub id: i64,
}

impl StepKind for LeaseGrant {
    const KEY: &'static str = "lease_grant";
    const CLIENT: ClientKind = ClientKind::Etcd;
    const GIVES: Gives = Gives::Lease;
    type Syntax = Syntax;

    fn variants() -> &'static [(&'static str, &'static [&'static str])] {
        &[("lease_grant", &["outcome", "error", "revision", "ttl_s"])]
    }

    fn plan(cx: &PlanCx, syntax: &Spanned<Syntax>) -> Result<LeaseGrant> {
        let g = syntax.get_ref();
        if g.ttl_s <= 0 {
            let msg = format!("`ttl_s` is {}; expected a positive number of seconds", g.ttl_s);
            return Err(cx.src.err(syntax.span(), msg));
        }
        Ok(LeaseGrant { ttl_s: g.ttl_s, id: g.id.unwrap_or(0) })
    }

    fn text(&self, f: &mut Formatter<'_>) -> fmt::Result {
        let id = LeaseId(self.id);
        describe::write_lease_grant(f, self.ttl_s, (!id.is_none()).then_some(&id as &dyn Display))
    }

    async fn run(&self, cx: &mut RunCx<'_>) -> Finished {
        kv::finish(cx.client.lease_grant(pb::LeaseGrantRequest { ttl: self.ttl_s, id: self.id }).await)
    }

    fn judge(&self, j: &mut StepJudge<'_>, observed: &Observed, expect: Option<&Expectations>) {
        kv::judge(j, observed, expect);
    }
}

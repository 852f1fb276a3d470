//! `lease_revoke = { lease = "grant" }`: one LeaseRevoke request for the lease a `lease_grant` step got. It
//! expects the outcome, etcd's error and the header revision.

use std::fmt::{self, Formatter};

use etcd_proto::etcdserverpb as pb;
use serde::{Deserialize, Serialize};
use toml::Spanned;

use super::ctx::{Finished, RunCx};
use super::judging::StepJudge;
use super::kv;
use super::board::lease_id;
use super::observed::Observed;
use super::{ClientKind, PlanCx, StepKind};
use crate::describe;
use crate::scenario::lang::expectations::Expectations;
use crate::scenario::lang::names::Gives;
use crate::scenario::lang::source::Result;

/// Names the `lease_grant` step whose lease a lease request is about (`{ lease = "grant" }`).
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct LeaseRef {
    pub lease: Spanned<String>,
}

/// A validated revoke: the grant step whose lease it revokes.
#[derive(Clone, Debug)]
pub struct LeaseRevoke {
    pub lease: String,
}

impl StepKind for LeaseRevoke {
    const KEY: &'static str = "lease_revoke";
    const CLIENT: ClientKind = ClientKind::Etcd;
    const GIVES: Gives = Gives::Revision;
    type Syntax = LeaseRef;

    fn variants() -> &'static [(&'static str, &'static [&'static str])] {
        &[("lease_revoke", &["outcome", "error", "revision"])]
    }

    fn plan(cx: &PlanCx, syntax: &Spanned<LeaseRef>) -> Result<LeaseRevoke> {
        Ok(LeaseRevoke { lease: cx.names.lease(cx.src, &syntax.get_ref().lease)? })
    }

    fn text(&self, f: &mut Formatter<'_>) -> fmt::Result {
        describe::write_lease_revoke(f, &self.lease)
    }

    async fn run(&self, cx: &mut RunCx<'_>) -> Finished {
        match lease_id(&*cx.ctx.board, &self.lease) {
            Ok(id) => kv::finish(cx.client.lease_revoke(pb::LeaseRevokeRequest { id }).await),
            Err(e) => cx.not_run(e),
        }
    }

    fn judge(&self, j: &mut StepJudge<'_>, observed: &Observed, expect: Option<&Expectations>) {
        kv::judge(j, observed, expect);
    }
}

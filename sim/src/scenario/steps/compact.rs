//! `compact = { revision = "rev_of(v2)", physical = true }`: one Compaction request at a revision given as a
//! number or taken from another step. It expects the outcome, etcd's error and the header revision.

use std::fmt::{self, Formatter};

use etcd_proto::etcdserverpb as pb;
use serde::{Deserialize, Serialize};
use toml::Spanned;

use super::ctx::{Finished, RunCx};
use super::judging::StepJudge;
use super::kv;
use super::board::Known;
use super::observed::Observed;
use super::text::Named;
use super::{ClientKind, PlanCx, StepKind};
use crate::describe;
use crate::scenario::expr::Expr;
use crate::scenario::lang::expectations::Expectations;
use crate::scenario::lang::names::Gives;
use crate::scenario::lang::source::Result;
use crate::scenario::lang::value::{is_false, Value};

/// `compact = { .. }` as written.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Syntax {
    pub revision: Spanned<Value>,
    #[serde(default, skip_serializing_if = "is_false")]
    pub physical: bool,
}

/// A validated compaction.
#[derive(Clone, Debug)]
pub struct Compact {
    pub revision: Expr,
    pub physical: bool,
}

impl StepKind for Compact {
    const KEY: &'static str = "compact";
    const CLIENT: ClientKind = ClientKind::Etcd;
    const GIVES: Gives = Gives::Revision;
    type Syntax = Syntax;

    fn variants() -> &'static [(&'static str, &'static [&'static str])] {
        &[("compact", &["outcome", "error", "revision"])]
    }

    fn plan(cx: &PlanCx, syntax: &Spanned<Syntax>) -> Result<Compact> {
        let c = syntax.get_ref();
        Ok(Compact { revision: cx.names.given(cx.src, &c.revision)?, physical: c.physical })
    }

    fn text(&self, f: &mut Formatter<'_>) -> fmt::Result {
        describe::write_compact(f, &Named(&self.revision))
    }

    async fn run(&self, cx: &mut RunCx<'_>) -> Finished {
        let board = cx.ctx.board.clone();
        match self.revision.value(&|s| board.revision(s)) {
            Ok(revision) => {
                kv::finish(cx.client.compact(pb::CompactionRequest { revision, physical: self.physical }).await)
            }
            Err(e) => cx.not_run(e),
        }
    }

    fn judge(&self, j: &mut StepJudge<'_>, observed: &Observed, expect: Option<&Expectations>) {
        kv::judge(j, observed, expect);
    }
}

//! `delete = { key = "/a", ... }`: one DeleteRange request over a key range, with `prev_kv`. It expects the
//! outcome, etcd's error, the header revision, how many keys it deleted (`count`) and, with `prev_kv`, the
//! first deleted key's value (`prev_value`). A txn's branches use the same table, plan and text.

use std::fmt::{self, Formatter};

use etcd_proto::etcdserverpb as pb;
use serde::{Deserialize, Serialize};
use toml::Spanned;

use super::ctx::{Finished, RunCx};
use super::judging::StepJudge;
use super::kv::{self, wire_span};
use super::observed::Observed;
use super::{ClientKind, PlanCx, StepKind};
use crate::describe;
use crate::history::KeySpan;
use crate::key_fields;
use crate::scenario::lang::expect::Expect;
use crate::scenario::lang::expectations::Expectations;
use crate::scenario::lang::names::Gives;
use crate::scenario::lang::source::{Result, Source};
use crate::scenario::lang::value::is_false;

/// `delete = { .. }` as written.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Syntax {
    pub key: Spanned<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub range_end: Option<Spanned<String>>,
    #[serde(default, skip_serializing_if = "is_false")]
    pub prefix: bool,
    #[serde(default, skip_serializing_if = "is_false")]
    pub from_key: bool,
    #[serde(default, skip_serializing_if = "is_false")]
    pub prev_kv: bool,
}

key_fields!(Syntax);

/// A validated delete.
#[derive(Clone, Debug)]
pub struct Delete {
    pub span: KeySpan,
    pub prev_kv: bool,
}

impl Delete {
    pub fn from_syntax(src: &Source, d: &Syntax) -> Result<Delete> {
        Ok(Delete { span: kv::span_of(src, &d.keys())?, prev_kv: d.prev_kv })
    }

    pub fn request(&self) -> pb::DeleteRangeRequest {
        let (key, range_end) = wire_span(&self.span);
        pb::DeleteRangeRequest { key, range_end, prev_kv: self.prev_kv }
    }

    pub fn write(&self, f: &mut Formatter<'_>) -> fmt::Result {
        describe::write_del(f, &self.span)
    }
}

impl StepKind for Delete {
    const KEY: &'static str = "delete";
    const CLIENT: ClientKind = ClientKind::Etcd;
    const GIVES: Gives = Gives::Revision;
    type Syntax = Syntax;

    fn variants() -> &'static [(&'static str, &'static [&'static str])] {
        &[("delete", &["outcome", "error", "revision", "count", "prev_value"])]
    }

    fn plan(cx: &PlanCx, syntax: &Spanned<Syntax>) -> Result<Delete> {
        Delete::from_syntax(cx.src, syntax.get_ref())
    }

    fn check_expect(&self, cx: &PlanCx, written: &Spanned<Expect>, _parsed: &mut Expectations) -> Result<()> {
        match &written.get_ref().prev_value {
            Some(pv) if !self.prev_kv => {
                Err(cx.src.err(pv.span(), "`expect.prev_value` needs `prev_kv = true` on the operation"))
            }
            _ => Ok(()),
        }
    }

    fn text(&self, f: &mut Formatter<'_>) -> fmt::Result {
        self.write(f)
    }

    async fn run(&self, cx: &mut RunCx<'_>) -> Finished {
        kv::finish(cx.client.delete_range(self.request()).await)
    }

    fn judge(&self, j: &mut StepJudge<'_>, observed: &Observed, expect: Option<&Expectations>) {
        kv::judge(j, observed, expect);
    }
}

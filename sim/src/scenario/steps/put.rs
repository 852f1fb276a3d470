//! `put = { key = "/a", value = "1", ... }`: one Put request (with a lease, `prev_kv`, `ignore_value`,
//! `ignore_lease`). It expects the outcome, etcd's error, the header revision and, with `prev_kv`, the value
//! before (`prev_value`). A txn's branches use the same table, plan and text.

use std::fmt::{self, Display, Formatter};
use std::ops::Range;

use etcd_proto::etcdserverpb as pb;
use serde::{Deserialize, Serialize};
use toml::Spanned;

use super::ctx::{Finished, RunCx};
use super::judging::StepJudge;
use super::kv;
use super::board::{lease_id, Known, Unresolved};
use super::observed::Observed;
use super::{ClientKind, PlanCx, StepKind};
use crate::describe;
use crate::scenario::lang::expect::Expect;
use crate::scenario::lang::expectations::Expectations;
use crate::scenario::lang::names::{Gives, Names};
use crate::scenario::lang::source::{Result, Source};
use crate::scenario::lang::value::is_false;

/// `put = { .. }` as written.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Syntax {
    pub key: Spanned<String>,
    /// Required unless `ignore_value = true` (which keeps the stored value, and takes none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<Spanned<String>>,
    /// The `lease_grant` step whose lease the key is attached to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lease: Option<Spanned<String>>,
    #[serde(default, skip_serializing_if = "is_false")]
    pub prev_kv: bool,
    /// Keep the key's current value (etcd's `ignore_value`; the key must exist).
    #[serde(default, skip_serializing_if = "is_false")]
    pub ignore_value: bool,
    /// Keep the key's current lease (etcd's `ignore_lease`; the key must exist).
    #[serde(default, skip_serializing_if = "is_false")]
    pub ignore_lease: bool,
}

/// A validated put.
#[derive(Clone, Debug)]
pub struct Put {
    pub key: String,
    pub value: String,
    pub lease: Option<String>,
    pub prev_kv: bool,
    pub ignore_value: bool,
    pub ignore_lease: bool,
}

impl Put {
    /// Validates a put table; `span` is the table's, for the error of a put without a value.
    pub fn from_syntax(src: &Source, names: &Names, p: &Syntax, span: Range<usize>) -> Result<Put> {
        if p.key.get_ref().is_empty() {
            return Err(src.err(p.key.span(), "`key` is empty; etcd refuses an empty key"));
        }
        // etcd itself refuses a value beside `ignore_value` (and a lease beside `ignore_lease`); a scenario
        // may send one to see that error, so only a put with neither is refused here.
        let value = match (&p.value, p.ignore_value) {
            (Some(v), _) => v.get_ref().clone(),
            (None, true) => String::new(),
            (None, false) => {
                return Err(
                    src.err(span, "`put` needs a `value` (or `ignore_value = true`, which keeps the stored one)")
                )
            }
        };
        Ok(Put {
            key: p.key.get_ref().clone(),
            value,
            lease: p.lease.as_ref().map(|l| names.lease(src, l)).transpose()?,
            prev_kv: p.prev_kv,
            ignore_value: p.ignore_value,
            ignore_lease: p.ignore_lease,
        })
    }

    /// The Put request, its lease resolved.
    pub fn request(&self, known: &dyn Known) -> std::result::Result<pb::PutRequest, Unresolved> {
        let lease = match &self.lease {
            Some(step) => lease_id(known, step)?,
            None => 0,
        };
        Ok(pb::PutRequest {
            key: self.key.as_bytes().to_vec(),
            value: self.value.as_bytes().to_vec(),
            lease,
            prev_kv: self.prev_kv,
            ignore_value: self.ignore_value,
            ignore_lease: self.ignore_lease,
        })
    }

    /// `put /a=1 lease=grant`: the lease by its step's name.
    pub fn write(&self, f: &mut Formatter<'_>) -> fmt::Result {
        let lease = self.lease.as_ref().map(|l| l as &dyn Display);
        describe::write_put(f, self.key.as_bytes(), self.value.as_bytes(), lease, self.ignore_value, self.ignore_lease)
    }
}

impl StepKind for Put {
    const KEY: &'static str = "put";
    const CLIENT: ClientKind = ClientKind::Etcd;
    const GIVES: Gives = Gives::Revision;
    type Syntax = Syntax;

    fn variants() -> &'static [(&'static str, &'static [&'static str])] {
        &[("put", &["outcome", "error", "revision", "prev_value"])]
    }

    fn plan(cx: &PlanCx, syntax: &Spanned<Syntax>) -> Result<Put> {
        Put::from_syntax(cx.src, cx.names, syntax.get_ref(), syntax.span())
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
        match self.request(&*cx.ctx.board) {
            Ok(r) => kv::finish(cx.client.put(r).await),
            Err(e) => cx.not_run(e),
        }
    }

    fn judge(&self, j: &mut StepJudge<'_>, observed: &Observed, expect: Option<&Expectations>) {
        kv::judge(j, observed, expect);
    }
}

//! `get = { key = "/a", ... }`: one Range request, with every option etcd's has (ranges, limit, revision,
//! serializable, keys or count only, sort, revision bounds). It expects the outcome, etcd's error, the
//! header revision, the key-values returned (`kvs`, an exact list), `count` and `more`. A txn's branches
//! use the same table, plan and text.

use std::fmt::{self, Formatter};

use etcd_proto::etcdserverpb as pb;
use serde::{Deserialize, Serialize};
use toml::Spanned;

use super::ctx::{Finished, RunCx};
use super::judging::StepJudge;
use super::kv::{self, wire_span};
use super::board::{Known, Unresolved};
use super::observed::Observed;
use super::text::{either, named, NoneKnown};
use super::{ClientKind, PlanCx, StepKind};
use crate::describe::Range;
use crate::history::{self as h, KeySpan};
use crate::key_fields;
use crate::scenario::expr::Expr;
use crate::scenario::lang::expect::{Expect, ExpectKv};
use crate::scenario::lang::expectations::{Expectations, KvExpect};
use crate::scenario::lang::names::{Gives, Names};
use crate::scenario::lang::source::{Result, Source};
use crate::scenario::lang::value::{is_false, Value};

/// `get = { .. }` as written.
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
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<i64>,
    /// Read at this revision (a number or `rev_of(step)`); default the latest.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revision: Option<Spanned<Value>>,
    #[serde(default, skip_serializing_if = "is_false")]
    pub serializable: bool,
    #[serde(default, skip_serializing_if = "is_false")]
    pub keys_only: bool,
    #[serde(default, skip_serializing_if = "is_false")]
    pub count_only: bool,
    /// `ascend`, `descend` or `none` (the default: key order, as stored).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sort_order: Option<SortOrder>,
    /// `key` (the default), `version`, `create`, `mod` or `value`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sort_target: Option<SortTarget>,
    /// Only keys last modified at or after this revision (a number or `rev_of(step)`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_mod_revision: Option<Spanned<Value>>,
    /// Only keys last modified at or before this revision.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_mod_revision: Option<Spanned<Value>>,
    /// Only keys created at or after this revision.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_create_revision: Option<Spanned<Value>>,
    /// Only keys created at or before this revision.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_create_revision: Option<Spanned<Value>>,
}

key_fields!(Syntax);

/// etcd's `RangeRequest.SortOrder`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SortOrder {
    None,
    Ascend,
    Descend,
}

/// etcd's `RangeRequest.SortTarget`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SortTarget {
    Key,
    Version,
    Create,
    Mod,
    Value,
}

/// A validated get.
#[derive(Clone, Debug)]
pub struct Get {
    pub span: KeySpan,
    pub limit: i64,
    pub revision: Option<Expr>,
    pub serializable: bool,
    pub keys_only: bool,
    pub count_only: bool,
    pub sort_order: Option<SortOrder>,
    pub sort_target: Option<SortTarget>,
    pub min_mod_revision: Option<Expr>,
    pub max_mod_revision: Option<Expr>,
    pub min_create_revision: Option<Expr>,
    pub max_create_revision: Option<Expr>,
}

impl Get {
    /// Validates a get table (a step's, or a txn branch's).
    pub fn from_syntax(src: &Source, names: &Names, g: &Syntax) -> Result<Get> {
        if g.limit.is_some_and(|l| l < 0) {
            return Err(src.err(g.key.span(), "`limit` is negative; expected 0 (no limit) or more"));
        }
        let given = |v: &Option<Spanned<Value>>| v.as_ref().map(|r| names.given(src, r)).transpose();
        Ok(Get {
            span: kv::span_of(src, &g.keys())?,
            limit: g.limit.unwrap_or(0),
            revision: given(&g.revision)?,
            serializable: g.serializable,
            keys_only: g.keys_only,
            count_only: g.count_only,
            sort_order: g.sort_order,
            sort_target: g.sort_target,
            min_mod_revision: given(&g.min_mod_revision)?,
            max_mod_revision: given(&g.max_mod_revision)?,
            min_create_revision: given(&g.min_create_revision)?,
            max_create_revision: given(&g.max_create_revision)?,
        })
    }

    /// The Range request, its references resolved against what earlier steps returned.
    pub fn request(&self, known: &dyn Known) -> std::result::Result<pb::RangeRequest, Unresolved> {
        let (key, range_end) = wire_span(&self.span);
        let given = |e: &Option<Expr>| -> std::result::Result<i64, Unresolved> {
            match e {
                Some(e) => e.value(&|s| known.revision(s)),
                None => Ok(0),
            }
        };
        use pb::range_request::{SortOrder as O, SortTarget as T};
        let sort_order = match self.sort_order {
            None | Some(SortOrder::None) => O::None,
            Some(SortOrder::Ascend) => O::Ascend,
            Some(SortOrder::Descend) => O::Descend,
        };
        let sort_target = match self.sort_target {
            None | Some(SortTarget::Key) => T::Key,
            Some(SortTarget::Version) => T::Version,
            Some(SortTarget::Create) => T::Create,
            Some(SortTarget::Mod) => T::Mod,
            Some(SortTarget::Value) => T::Value,
        };
        Ok(pb::RangeRequest {
            key,
            range_end,
            limit: self.limit,
            revision: given(&self.revision)?,
            sort_order: sort_order as i32,
            sort_target: sort_target as i32,
            serializable: self.serializable,
            keys_only: self.keys_only,
            count_only: self.count_only,
            min_mod_revision: given(&self.min_mod_revision)?,
            max_mod_revision: given(&self.max_mod_revision)?,
            min_create_revision: given(&self.min_create_revision)?,
            max_create_revision: given(&self.max_create_revision)?,
        })
    }

    /// The get as it is sent, but with each revision that names a step shown by the name.
    pub fn write(&self, f: &mut Formatter<'_>) -> fmt::Result {
        let numeric = |e: &Option<Expr>| e.clone().filter(|e| e.step().is_none());
        let given = Get {
            revision: numeric(&self.revision),
            min_mod_revision: numeric(&self.min_mod_revision),
            max_mod_revision: numeric(&self.max_mod_revision),
            min_create_revision: numeric(&self.min_create_revision),
            max_create_revision: numeric(&self.max_create_revision),
            ..self.clone()
        };
        let sent: h::RangeRequest = (&given.request(&NoneKnown).expect("a get of numbers names no step")).into();
        let [revision, min_mod, max_mod, min_create, max_create] = [
            named(&self.revision),
            named(&self.min_mod_revision),
            named(&self.max_mod_revision),
            named(&self.min_create_revision),
            named(&self.max_create_revision),
        ];
        let shown = Range::of(&sent);
        let shown = Range {
            revision: either(&revision, shown.revision),
            min_mod_revision: either(&min_mod, shown.min_mod_revision),
            max_mod_revision: either(&max_mod, shown.max_mod_revision),
            min_create_revision: either(&min_create, shown.min_create_revision),
            max_create_revision: either(&max_create, shown.max_create_revision),
            ..shown
        };
        write!(f, "{shown}")
    }

    /// `expect.kvs` of a get: every key listed must be one the get covers.
    pub fn kvs_expect(&self, src: &Source, names: &Names, list: &Spanned<Vec<ExpectKv>>) -> Result<Vec<KvExpect>> {
        if self.count_only {
            return Err(src
                .err(list.span(), "`expect.kvs` on a `count_only` get, which returns no kvs; expect `count` instead"));
        }
        let expr = |v: &Option<Spanned<Value>>| v.as_ref().map(|v| names.expr(src, v)).transpose();
        let mut out = Vec::new();
        for kv in list.get_ref() {
            if !self.span.contains(kv.key.as_bytes()) {
                return Err(
                    src.err(list.span(), format!("`expect.kvs` lists key {:?}, which the get does not cover", kv.key))
                );
            }
            out.push(KvExpect {
                key: kv.key.clone(),
                value: kv.value.clone(),
                create_revision: expr(&kv.create_revision)?,
                mod_revision: expr(&kv.mod_revision)?,
                version: expr(&kv.version)?,
                lease: kv.lease.as_ref().map(|l| names.lease(src, l)).transpose()?,
            });
        }
        Ok(out)
    }
}

impl StepKind for Get {
    const KEY: &'static str = "get";
    const CLIENT: ClientKind = ClientKind::Etcd;
    const GIVES: Gives = Gives::Revision;
    type Syntax = Syntax;

    fn variants() -> &'static [(&'static str, &'static [&'static str])] {
        &[("get", &["outcome", "error", "revision", "kvs", "count", "more"])]
    }

    fn plan(cx: &PlanCx, syntax: &Spanned<Syntax>) -> Result<Get> {
        Get::from_syntax(cx.src, cx.names, syntax.get_ref())
    }

    fn check_expect(&self, cx: &PlanCx, written: &Spanned<Expect>, parsed: &mut Expectations) -> Result<()> {
        if let Some(list) = &written.get_ref().kvs {
            parsed.body.kvs = Some(self.kvs_expect(cx.src, cx.names, list)?);
        }
        Ok(())
    }

    fn text(&self, f: &mut Formatter<'_>) -> fmt::Result {
        self.write(f)
    }

    async fn run(&self, cx: &mut RunCx<'_>) -> Finished {
        match self.request(&*cx.ctx.board) {
            Ok(r) => kv::finish(cx.client.range(r).await),
            Err(e) => cx.not_run(e),
        }
    }

    fn judge(&self, j: &mut StepJudge<'_>, observed: &Observed, expect: Option<&Expectations>) {
        kv::judge(j, observed, expect);
    }
}

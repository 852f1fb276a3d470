//! `txn = { compare = [..], success = [..], failure = [..] }`: one Txn request: compares on key ranges
//! (version, create, mod, value, lease), then the `get`, `put`, `delete` or nested `txn` operations of the
//! branch they choose. It expects the outcome, etcd's error, the header revision, which branch ran
//! (`succeeded`) and what each operation of that branch returned (`responses`, an exact list).

use std::fmt::{self, Formatter};

use etcd_proto::etcdserverpb as pb;
use etcd_proto::etcdserverpb::compare::{CompareResult as PbResult, CompareTarget as PbTarget, TargetUnion};
use etcd_proto::etcdserverpb::request_op::Request as PbOp;
use serde::{Deserialize, Serialize};
use toml::Spanned;

use super::ctx::{Finished, RunCx};
use super::delete::{self, Delete};
use super::get::{self, Get};
use super::judging::StepJudge;
use super::kv::{self, wire_span};
use super::board::{lease_id, Known, Unresolved};
use super::observed::Observed;
use super::put::{self, Put};
use super::text::Named;
use super::{ClientKind, PlanCx, StepKind};
use crate::describe::{self, Text};
use crate::history::{CompareResult, KeySpan};
use crate::key_fields;
use crate::scenario::expr::Expr;
use crate::scenario::lang::expect::{Expect, ExpectResponse};
use crate::scenario::lang::expectations::{Expectations, ResponseExpect, ResponseKind};
use crate::scenario::lang::names::{Gives, Names};
use crate::scenario::lang::source::{Result, Source};
use crate::scenario::lang::value::{is_false, Value};

/// `txn = { compare = [..], success = [..], failure = [..] }` as written.
#[derive(Clone, Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Syntax {
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub compare: Vec<Spanned<CompareSyntax>>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub success: Vec<Spanned<OpSyntax>>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub failure: Vec<Spanned<OpSyntax>>,
}

/// `{ key = "/a", target = "mod", op = "==", value = "rev_of(create)" }`.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct CompareSyntax {
    pub key: Spanned<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub range_end: Option<Spanned<String>>,
    #[serde(default, skip_serializing_if = "is_false")]
    pub prefix: bool,
    #[serde(default, skip_serializing_if = "is_false")]
    pub from_key: bool,
    pub target: CompareTarget,
    pub op: CompareOp,
    /// A number or `rev_of(..)` for version/create/mod, text for value, a lease step's name for lease.
    pub value: Spanned<Value>,
}

key_fields!(CompareSyntax);

#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CompareTarget {
    Version,
    Create,
    Mod,
    Value,
    Lease,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
pub enum CompareOp {
    #[serde(rename = "==")]
    Equal,
    #[serde(rename = "!=")]
    NotEqual,
    #[serde(rename = ">")]
    Greater,
    #[serde(rename = "<")]
    Less,
}

/// One operation of a txn branch as written: exactly one of the keys.
#[derive(Clone, Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct OpSyntax {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub get: Option<get::Syntax>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub put: Option<put::Syntax>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delete: Option<delete::Syntax>,
    /// A nested txn (etcd 3.3 and later).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub txn: Option<Box<Syntax>>,
}

/// A validated txn.
#[derive(Clone, Debug)]
pub struct Txn {
    pub compare: Vec<Compare>,
    pub success: Vec<TxnOp>,
    pub failure: Vec<TxnOp>,
}

#[derive(Clone, Debug)]
pub struct Compare {
    pub span: KeySpan,
    pub target: CompareTarget,
    pub op: CompareOp,
    pub value: CompareValue,
}

#[derive(Clone, Debug)]
pub enum CompareValue {
    Number(Expr),
    Text(String),
    /// A `lease_grant` step's lease.
    Lease(String),
}

/// One operation of a branch.
#[derive(Clone, Debug)]
pub enum TxnOp {
    /// Boxed: a get (range, limits, revision, sort) is four times the size of the others.
    Get(Box<Get>),
    Put(Put),
    Delete(Delete),
    Txn(Txn),
}

impl TxnOp {
    pub fn kind(&self) -> ResponseKind {
        match self {
            TxnOp::Get(_) => ResponseKind::Get,
            TxnOp::Put(_) => ResponseKind::Put,
            TxnOp::Delete(_) => ResponseKind::Delete,
            TxnOp::Txn(_) => ResponseKind::Txn,
        }
    }

    fn from_syntax(src: &Source, names: &Names, op: &Spanned<OpSyntax>) -> Result<TxnOp> {
        let o = op.get_ref();
        match (&o.get, &o.put, &o.delete, &o.txn) {
            (Some(g), None, None, None) => Ok(TxnOp::Get(Box::new(Get::from_syntax(src, names, g)?))),
            (None, Some(p), None, None) => Ok(TxnOp::Put(Put::from_syntax(src, names, p, op.span())?)),
            (None, None, Some(d), None) => Ok(TxnOp::Delete(Delete::from_syntax(src, d)?)),
            (None, None, None, Some(t)) => Ok(TxnOp::Txn(Txn::from_syntax(src, names, t)?)),
            _ => Err(src.err(op.span(), "a txn operation needs exactly one of `get`, `put`, `delete`, `txn`")),
        }
    }
}

impl Txn {
    fn from_syntax(src: &Source, names: &Names, t: &Syntax) -> Result<Txn> {
        let mut compare = Vec::new();
        for c in &t.compare {
            let r = c.get_ref();
            let value = match (r.target, r.value.get_ref()) {
                (CompareTarget::Value, Value::Text(s)) => CompareValue::Text(s.clone()),
                (CompareTarget::Value, Value::Number(_)) => {
                    return Err(src.err(r.value.span(), "a `value` compare takes text; write the number in quotes"))
                }
                (CompareTarget::Lease, Value::Text(s)) => {
                    CompareValue::Lease(names.lease(src, &Spanned::new(r.value.span(), s.clone()))?)
                }
                (CompareTarget::Lease, Value::Number(0)) => CompareValue::Number(Expr::exactly(0)),
                (CompareTarget::Lease, Value::Number(_)) => {
                    return Err(src
                        .err(r.value.span(), "a `lease` compare takes a lease_grant step's name, or 0 for no lease"))
                }
                _ => CompareValue::Number(names.given(src, &r.value)?),
            };
            compare.push(Compare { span: kv::span_of(src, &r.keys())?, target: r.target, op: r.op, value });
        }
        let success = t.success.iter().map(|o| TxnOp::from_syntax(src, names, o)).collect::<Result<_>>()?;
        let failure = t.failure.iter().map(|o| TxnOp::from_syntax(src, names, o)).collect::<Result<_>>()?;
        Ok(Txn { compare, success, failure })
    }

    /// The Txn request, its references resolved.
    pub fn request(&self, known: &dyn Known) -> std::result::Result<pb::TxnRequest, Unresolved> {
        let mut compare = Vec::new();
        for c in &self.compare {
            let (key, range_end) = wire_span(&c.span);
            let number = |v: &CompareValue| -> std::result::Result<i64, Unresolved> {
                match v {
                    CompareValue::Number(e) => e.value(&|s| known.revision(s)),
                    CompareValue::Lease(step) => lease_id(known, step),
                    CompareValue::Text(_) => unreachable!("validated: text only for value compares"),
                }
            };
            let (target, union) = match c.target {
                CompareTarget::Version => (PbTarget::Version, TargetUnion::Version(number(&c.value)?)),
                CompareTarget::Create => (PbTarget::Create, TargetUnion::CreateRevision(number(&c.value)?)),
                CompareTarget::Mod => (PbTarget::Mod, TargetUnion::ModRevision(number(&c.value)?)),
                CompareTarget::Lease => (PbTarget::Lease, TargetUnion::Lease(number(&c.value)?)),
                CompareTarget::Value => match &c.value {
                    CompareValue::Text(s) => (PbTarget::Value, TargetUnion::Value(s.as_bytes().to_vec())),
                    _ => unreachable!("validated: value compares take text"),
                },
            };
            let result = match c.op {
                CompareOp::Equal => PbResult::Equal,
                CompareOp::NotEqual => PbResult::NotEqual,
                CompareOp::Greater => PbResult::Greater,
                CompareOp::Less => PbResult::Less,
            };
            compare.push(pb::Compare {
                result: result as i32,
                target: target as i32,
                key,
                range_end,
                target_union: Some(union),
            });
        }
        let ops = |list: &[TxnOp]| -> std::result::Result<Vec<pb::RequestOp>, Unresolved> {
            list.iter()
                .map(|op| {
                    let request = match op {
                        TxnOp::Get(g) => PbOp::RequestRange(g.request(known)?),
                        TxnOp::Put(p) => PbOp::RequestPut(p.request(known)?),
                        TxnOp::Delete(d) => PbOp::RequestDeleteRange(d.request()),
                        TxnOp::Txn(t) => PbOp::RequestTxn(t.request(known)?),
                    };
                    Ok(pb::RequestOp { request: Some(request) })
                })
                .collect()
        };
        Ok(pb::TxnRequest { compare, success: ops(&self.success)?, failure: ops(&self.failure)? })
    }

    fn write(&self, f: &mut Formatter<'_>) -> fmt::Result {
        describe::write_txn(f, &self.compare, &self.success, &self.failure, write_compare, write_op)
    }

    /// `expect.responses` of a txn: entry i is judged against operation i of the branch that ran, so the
    /// list must be as long as that branch and each entry must fit its operation: in the branch `succeeded`
    /// names, or, without `succeeded`, in at least one branch.
    fn responses_expect(
        &self,
        src: &Source,
        names: &Names,
        succeeded: Option<bool>,
        list: &Spanned<Vec<Spanned<ExpectResponse>>>,
    ) -> Result<Vec<ResponseExpect>> {
        let branches: Vec<(&str, &[TxnOp])> = match succeeded {
            Some(true) => vec![("success", &self.success)],
            Some(false) => vec![("failure", &self.failure)],
            None => vec![("success", &self.success), ("failure", &self.failure)],
        };
        // The list is the exact sequence of the branch's responses, as `kvs` and `events` are exact lists.
        let n = list.get_ref().len();
        if !branches.iter().any(|(_, ops)| ops.len() == n) {
            let which: Vec<String> = branches.iter().map(|(b, ops)| format!("{b}: {}", ops.len())).collect();
            return Err(src.err(
                list.span(),
                format!(
                    "`expect.responses` lists {n} response{}; expected one per operation of the branch that runs ({})",
                    if n == 1 { "" } else { "s" },
                    which.join(", ")
                ),
            ));
        }
        let expr = |v: &Option<Spanned<Value>>| v.as_ref().map(|v| names.expr(src, v)).transpose();
        let mut out = Vec::new();
        for (i, entry) in list.get_ref().iter().enumerate() {
            let x = entry.get_ref();
            // The entry as the judge will read it; its `kvs` are checked against the get they belong to below.
            let mut expect = ResponseExpect {
                kvs: x.kvs.as_ref().map(|_| Vec::new()),
                count: expr(&x.count)?,
                more: x.more.as_ref().map(|b| *b.get_ref()),
                prev_value: x.prev_value.as_ref().map(|p| p.get_ref().clone()),
                succeeded: x.succeeded.as_ref().map(|b| *b.get_ref()),
            };
            let mut why = Vec::new();
            let mut get = None;
            for (branch, ops) in &branches {
                match ops.get(i).map(|op| (op, fits(&expect, x, op))) {
                    Some((op, Ok(()))) => {
                        if let TxnOp::Get(g) = op {
                            get.get_or_insert(g);
                        }
                        why.clear();
                        break;
                    }
                    Some((_, Err(e))) => why.push(format!("{branch} operation {}: {e}", i + 1)),
                    None => why.push(format!("{branch} has no operation {}", i + 1)),
                }
            }
            if !why.is_empty() {
                return Err(src.err(entry.span(), format!("response {} can never match: {}", i + 1, why.join("; "))));
            }
            expect.kvs = match (&x.kvs, get) {
                (Some(list), Some(g)) => Some(g.kvs_expect(src, names, list)?),
                _ => None,
            };
            out.push(expect);
        }
        Ok(out)
    }
}

/// Whether one entry of `expect.responses` can be met by the operation at its position.
fn fits(expect: &ResponseExpect, x: &ExpectResponse, op: &TxnOp) -> std::result::Result<(), String> {
    let kind = op.kind();
    if let Some(key) = expect.misfit(kind) {
        return Err(format!("`{key}` does not apply to a `{}`", kind.keyword()));
    }
    let prev_kv = match op {
        TxnOp::Put(p) => p.prev_kv,
        TxnOp::Delete(d) => d.prev_kv,
        _ => true,
    };
    if x.prev_value.is_some() && !prev_kv {
        return Err(format!("`prev_value` needs `prev_kv = true` on the `{}`", kind.keyword()));
    }
    Ok(())
}

fn write_compare(f: &mut Formatter<'_>, c: &Compare) -> fmt::Result {
    let target = match c.target {
        CompareTarget::Version => "version",
        CompareTarget::Create => "create",
        CompareTarget::Mod => "mod",
        CompareTarget::Value => "value",
        CompareTarget::Lease => "lease",
    };
    let result = match c.op {
        CompareOp::Equal => CompareResult::Equal,
        CompareOp::NotEqual => CompareResult::NotEqual,
        CompareOp::Greater => CompareResult::Greater,
        CompareOp::Less => CompareResult::Less,
    };
    match &c.value {
        CompareValue::Number(e) => describe::write_compare(f, target, &c.span, result, &Named(e)),
        CompareValue::Text(s) => describe::write_compare(f, target, &c.span, result, &Text(s.as_bytes())),
        CompareValue::Lease(step) => describe::write_compare(f, target, &c.span, result, step),
    }
}

fn write_op(f: &mut Formatter<'_>, op: &TxnOp) -> fmt::Result {
    match op {
        TxnOp::Get(g) => g.write(f),
        TxnOp::Put(p) => p.write(f),
        TxnOp::Delete(d) => d.write(f),
        TxnOp::Txn(inner) => describe::write_nested(f, &describe::FromFn(|f: &mut Formatter<'_>| inner.write(f))),
    }
}

impl StepKind for Txn {
    const KEY: &'static str = "txn";
    const CLIENT: ClientKind = ClientKind::Etcd;
    const GIVES: Gives = Gives::Revision;
    type Syntax = Syntax;

    fn variants() -> &'static [(&'static str, &'static [&'static str])] {
        &[("txn", &["outcome", "error", "revision", "succeeded", "responses"])]
    }

    fn plan(cx: &PlanCx, syntax: &Spanned<Syntax>) -> Result<Txn> {
        Txn::from_syntax(cx.src, cx.names, syntax.get_ref())
    }

    fn check_expect(&self, cx: &PlanCx, written: &Spanned<Expect>, parsed: &mut Expectations) -> Result<()> {
        let r = written.get_ref();
        if let Some(list) = &r.responses {
            let succeeded = r.succeeded.as_ref().map(|s| *s.get_ref());
            parsed.responses = Some(self.responses_expect(cx.src, cx.names, succeeded, list)?);
        }
        Ok(())
    }

    fn text(&self, f: &mut Formatter<'_>) -> fmt::Result {
        self.write(f)
    }

    async fn run(&self, cx: &mut RunCx<'_>) -> Finished {
        match self.request(&*cx.ctx.board) {
            Ok(r) => kv::finish(cx.client.txn(r).await),
            Err(e) => cx.not_run(e),
        }
    }

    fn judge(&self, j: &mut StepJudge<'_>, observed: &Observed, expect: Option<&Expectations>) {
        kv::judge(j, observed, expect);
    }
}

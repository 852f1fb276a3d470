//! A step's `expect = { .. }`, validated: every key written must be one the step's kind judges (refused at
//! its line and column otherwise, naming the keys it does judge), every expression parses and names a step
//! that gives a number, and the kind then checks what depends on its plan ([`super::StepKind::check_expect`]).
//! The keys written are kept ([`Expectations::written`]) so that the judge can prove each was judged.

use std::collections::BTreeSet;
use std::ops::Range;

use toml::Spanned;

use super::{Op, PlanCx};
use crate::history::GrpcCode;
use crate::scenario::lang::expect::{Expect, ExpectOutcome};
use crate::scenario::lang::expectations::{Expectations, InformerExpect, KubeExpect, ResponseExpect};
use crate::scenario::lang::source::{Result, Source};
use crate::scenario::lang::suggest;
use crate::scenario::lang::value::Value;

/// Every key of `expect` that is written, with where.
pub fn written(r: &Expect) -> Vec<(&'static str, Range<usize>)> {
    let keys: [(&'static str, Option<Range<usize>>); 36] = [
        ("outcome", r.outcome.as_ref().map(Spanned::span)),
        ("error", r.error.as_ref().map(Spanned::span)),
        ("revision", r.revision.as_ref().map(Spanned::span)),
        ("kvs", r.kvs.as_ref().map(Spanned::span)),
        ("count", r.count.as_ref().map(Spanned::span)),
        ("more", r.more.as_ref().map(Spanned::span)),
        ("succeeded", r.succeeded.as_ref().map(Spanned::span)),
        ("prev_value", r.prev_value.as_ref().map(Spanned::span)),
        ("ttl_s", r.ttl_s.as_ref().map(Spanned::span)),
        ("keys", r.keys.as_ref().map(Spanned::span)),
        ("leases", r.leases.as_ref().map(Spanned::span)),
        ("names", r.names.as_ref().map(Spanned::span)),
        ("responses", r.responses.as_ref().map(Spanned::span)),
        ("events", r.events.as_ref().map(Spanned::span)),
        ("canceled", r.canceled.as_ref().map(Spanned::span)),
        ("compact_revision", r.compact_revision.as_ref().map(Spanned::span)),
        ("cancel_reason", r.cancel_reason.as_ref().map(Spanned::span)),
        ("progress_count", r.progress_count.as_ref().map(Spanned::span)),
        ("progress_revision", r.progress_revision.as_ref().map(Spanned::span)),
        ("code", r.code.as_ref().map(Spanned::span)),
        ("reason", r.reason.as_ref().map(Spanned::span)),
        ("message", r.message.as_ref().map(Spanned::span)),
        ("message_contains", r.message_contains.as_ref().map(Spanned::span)),
        ("fields", r.fields.as_ref().map(Spanned::span)),
        ("non_empty", r.non_empty.as_ref().map(Spanned::span)),
        ("absent", r.absent.as_ref().map(Spanned::span)),
        ("rv", r.rv.as_ref().map(Spanned::span)),
        ("items", r.items.as_ref().map(Spanned::span)),
        ("watch_events", r.watch_events.as_ref().map(Spanned::span)),
        ("attempts", r.attempts.as_ref().map(Spanned::span)),
        ("synced", r.synced.as_ref().map(Spanned::span)),
        ("relists", r.relists.as_ref().map(Spanned::span)),
        ("expired", r.expired.as_ref().map(Spanned::span)),
        ("store", r.store.as_ref().map(Spanned::span)),
        ("leader", r.leader.as_ref().map(Spanned::span)),
        ("leader_changed", r.leader_changed.as_ref().map(Spanned::span)),
    ];
    keys.into_iter().filter_map(|(k, span)| span.map(|s| (k, s))).collect()
}

/// A step's expectations, checked against its operation. The checks run in the order of the expectation's
/// keys as the language reference lists them; the first that fails is the one reported.
pub fn parse(cx: &PlanCx, op: &Op, e: &Spanned<Expect>) -> Result<Expectations> {
    let (src, names) = (cx.src, cx.names);
    let r = e.get_ref();
    let (variant, judged) = op.judged();
    let written = written(r);
    for (key, span) in &written {
        if !judged.contains(key) {
            let can = if judged.is_empty() { "nothing".to_string() } else { judged.join(", ") };
            let which = if variant.is_empty() || variant == op.keyword() {
                format!("a `{}` step", op.keyword())
            } else {
                format!("a `{}` step ({variant})", op.keyword())
            };
            return Err(src.err(
                span.clone(),
                format!(
                    "`expect.{key}` does not apply to {which}; it judges: {can}{}",
                    suggest::hint(key, judged.iter().copied())
                ),
            ));
        }
    }
    let expr = |v: &Option<Spanned<Value>>| v.as_ref().map(|v| names.expr(src, v)).transpose();
    let error = error_expect(src, r)?;
    let outcome = outcome_expect(src, judged, r, &error)?;
    let leases = match &r.leases {
        None => None,
        Some(list) => Some(list.get_ref().iter().map(|l| names.lease(src, l)).collect::<Result<Vec<_>>>()?),
    };
    if let (Some(c), Some(_)) = (&r.canceled, &r.compact_revision) {
        if !*c.get_ref() {
            return Err(src.err(c.span(), "`canceled = false` contradicts `compact_revision`"));
        }
    }
    let mut parsed = Expectations {
        outcome,
        error,
        revision: expr(&r.revision)?,
        body: ResponseExpect {
            kvs: None,
            count: expr(&r.count)?,
            more: r.more.as_ref().map(|b| *b.get_ref()),
            succeeded: r.succeeded.as_ref().map(|b| *b.get_ref()),
            prev_value: r.prev_value.as_ref().map(|p| p.get_ref().clone()),
        },
        ttl_s: expr(&r.ttl_s)?,
        keys: r.keys.as_ref().map(|k| k.get_ref().clone()),
        leases,
        names: r.names.as_ref().map(|n| n.get_ref().clone()),
        responses: None,
        events: None,
        canceled: r.canceled.as_ref().map(|c| *c.get_ref()).or(r.compact_revision.as_ref().map(|_| true)),
        compact_revision: expr(&r.compact_revision)?,
        cancel_reason: r.cancel_reason.as_ref().map(|c| c.get_ref().clone()),
        progress_count: expr(&r.progress_count)?,
        progress_revision: expr(&r.progress_revision)?,
        kube: kube_expect(cx, r)?,
        informer: InformerExpect {
            synced: r.synced.as_ref().map(|s| *s.get_ref()),
            relists: expr(&r.relists)?,
            expired: expr(&r.expired)?,
            store: r.store.as_ref().map(|s| s.get_ref().clone()),
        },
        attempts: expr(&r.attempts)?,
        leader: r.leader.as_ref().map(|l| l.get_ref().clone()),
        leader_changed: r.leader_changed.as_ref().map(|l| *l.get_ref()),
        written: written.iter().map(|(k, _)| *k).collect::<BTreeSet<_>>(),
    };
    op.check_expect(cx, e, &mut parsed)?;
    Ok(parsed)
}

/// The expectations of a step that answers in HTTP (`code`, `reason`, `message`, `message_contains`,
/// `fields`, `non_empty`, `absent`, `rv`, `items`); a kube watch's events are its kind's to check.
fn kube_expect(cx: &PlanCx, r: &Expect) -> Result<KubeExpect> {
    let src = cx.src;
    let pointers = |list: &Option<Spanned<Vec<String>>>, key: &str| -> Result<Vec<String>> {
        let Some(list) = list else { return Ok(Vec::new()) };
        for p in list.get_ref() {
            if !p.starts_with('/') {
                let msg = format!("`{key}` entry {p:?} is not a JSON pointer; expected one starting with `/`");
                return Err(src.err(list.span(), msg));
            }
        }
        Ok(list.get_ref().clone())
    };
    let fields = match &r.fields {
        None => Vec::new(),
        Some(map) => {
            let mut out = Vec::new();
            for (pointer, value) in map.get_ref() {
                if !pointer.starts_with('/') {
                    let msg = format!("`fields` key {pointer:?} is not a JSON pointer; expected one starting with `/`");
                    return Err(src.err(map.span(), msg));
                }
                let value = serde_json::to_value(value).map_err(|e| src.err(map.span(), e.to_string()))?;
                out.push((pointer.clone(), value));
            }
            out
        }
    };
    Ok(KubeExpect {
        code: r.code.as_ref().map(|c| c.get_ref().0.clone()),
        reason: r.reason.as_ref().map(|s| s.get_ref().clone()),
        message: r.message.as_ref().map(|s| s.get_ref().clone()),
        message_contains: r.message_contains.as_ref().map(|s| s.get_ref().clone()),
        fields,
        non_empty: pointers(&r.non_empty, "non_empty")?,
        absent: pointers(&r.absent, "absent")?,
        rv: r.rv.as_ref().map(|v| cx.names.expr(src, v)).transpose()?,
        items: r.items.as_ref().map(|i| i.get_ref().clone()),
        watch_events: None,
    })
}

/// `error = { code, message }`: the code must be a gRPC code's name.
fn error_expect(src: &Source, r: &Expect) -> Result<Option<(GrpcCode, Option<String>)>> {
    let Some(err) = &r.error else { return Ok(None) };
    let name = err.get_ref().code.get_ref();
    let code = grpc_code(name).ok_or_else(|| {
        src.err(
            err.get_ref().code.span(),
            format!(
                "no gRPC code is named {name:?}; expected one of: {}{}",
                GRPC_CODES.join(", "),
                suggest::hint(name, GRPC_CODES)
            ),
        )
    })?;
    Ok(Some((code, err.get_ref().message.clone())))
}

/// The outcome expected: as written; `error` when an etcd error is given; for a step that answers in HTTP,
/// `error` when only refusals are accepted (codes of 300 or more, or a refusal's words without a code), none
/// when the codes accept both; else `ok`, for a step that has an outcome at all.
fn outcome_expect(
    src: &Source,
    judged: &[&str],
    r: &Expect,
    error: &Option<(GrpcCode, Option<String>)>,
) -> Result<Option<ExpectOutcome>> {
    let http = judged.contains(&"code");
    Ok(match (&r.outcome, error) {
        (Some(o), Some(_)) if *o.get_ref() != ExpectOutcome::Error => {
            return Err(src.err(o.span(), "`error` is given, so the outcome is `error`; drop `outcome` or the `error`"))
        }
        (Some(o), _) => Some(*o.get_ref()),
        (None, Some(_)) => Some(ExpectOutcome::Error),
        (None, None) if http && expects_refusal(r) => Some(ExpectOutcome::Error),
        (None, None) if http && accepts_both(r) => None,
        (None, None) if judged.contains(&"outcome") => Some(ExpectOutcome::Ok),
        (None, None) => None,
    })
}

/// Whether a step's expectations say it must be refused: only codes of 300 or more, or a refusal's words
/// (`reason`, `message`, `message_contains`) without any code. Beside codes that accept success too
/// (`code = [200, 409]`), a reason means "if it is refused, for this reason".
pub fn expects_refusal(r: &Expect) -> bool {
    match &r.code {
        Some(c) => c.get_ref().0.iter().all(|c| *c >= 300),
        None => r.reason.is_some() || r.message.is_some() || r.message_contains.is_some(),
    }
}

/// Whether the codes accept a refusal as well as success (`code = [200, 409]`): then neither outcome is
/// implied.
pub fn accepts_both(r: &Expect) -> bool {
    r.code.as_ref().is_some_and(|c| {
        let codes = &c.get_ref().0;
        codes.iter().any(|c| *c < 300) && codes.iter().any(|c| *c >= 300)
    })
}

const GRPC_CODES: [&str; 16] = [
    "Cancelled",
    "Unknown",
    "InvalidArgument",
    "DeadlineExceeded",
    "NotFound",
    "AlreadyExists",
    "PermissionDenied",
    "ResourceExhausted",
    "FailedPrecondition",
    "Aborted",
    "OutOfRange",
    "Unimplemented",
    "Internal",
    "Unavailable",
    "DataLoss",
    "Unauthenticated",
];

fn grpc_code(name: &str) -> Option<GrpcCode> {
    GRPC_CODES.iter().position(|c| *c == name).map(|i| GrpcCode::from_i32(i as i32 + 1))
}

//! What a step expects of its response (`[client.step.expect]`): each key checked against what the step's
//! operation can meet, each expression parsed, each event and key-value checked against what the watch or
//! get can deliver, so that an expectation that can never hold is refused before the run.

use std::ops::Range;

use toml::Spanned;

use super::names::Names;
use super::{Result, Source};
use crate::history::GrpcCode;
use crate::scenario::auth::AuthPlan;
use crate::scenario::plan::{
    DeletePlan, EventExpect, Expectations, GetPlan, KvExpect, Op, PutPlan, ResponseExpect, TxnOpPlan, TxnPlan,
    WatchPlan,
};
use crate::scenario::syntax::{self, EventType, ExpectOutcome, Value};

/// Which expectation keys each operation can meet.
fn allowed(op: &Op) -> &'static [&'static str] {
    const BASE: [&str; 3] = ["outcome", "error", "revision"];
    match op {
        Op::Get(_) => &["outcome", "error", "revision", "kvs", "count", "more"],
        Op::Put(_) => &["outcome", "error", "revision", "prev_value"],
        Op::Delete(_) => &["outcome", "error", "revision", "count", "prev_value"],
        Op::Txn(_) => &["outcome", "error", "revision", "succeeded", "responses"],
        Op::Compact { .. } | Op::LeaseRevoke { .. } => &BASE,
        Op::LeaseGrant { .. } => &["outcome", "error", "revision", "ttl_s"],
        Op::LeaseKeepAlive { .. } => &["outcome", "ttl_s"],
        Op::LeaseTimeToLive { .. } => &["outcome", "ttl_s", "keys"],
        Op::LeaseLeases => &["outcome", "leases"],
        Op::Watch(_) => &[
            "revision",
            "events",
            "canceled",
            "compact_revision",
            "cancel_reason",
            "progress_count",
            "progress_revision",
        ],
        Op::WatchProgress { .. } | Op::WatchCancel { .. } | Op::Sleep { .. } | Op::Wait(_) => &[],
        Op::InformerRestart { .. } => &[],
        Op::Controller(_) => super::kube_expect::allowed(crate::scenario::syntax::Verb::Update),
        Op::Kube(k) | Op::Informer(k) => super::kube_expect::allowed(k.verb),
        Op::Auth(AuthPlan::Logout) => &[],
        Op::Auth(a) if a.lists() => &["outcome", "error", "names"],
        Op::Auth(_) => &["outcome", "error"],
    }
}

/// A step's expectations, checked against its operation. The checks run in the order of the expectation's
/// keys as the language reference lists them; the first that fails is the one reported.
pub(super) fn expectations(src: &Source, names: &Names, op: &Op, e: &Spanned<syntax::Expect>) -> Result<Expectations> {
    let r = e.get_ref();
    check_keys_apply(src, op, r)?;
    let expr = |v: &Option<Spanned<Value>>| v.as_ref().map(|v| names.expr(src, v)).transpose();
    let error = error_expect(src, r)?;
    let outcome = outcome_expect(src, op, r, &error)?;
    if let (Some(pv), Op::Put(PutPlan { prev_kv: false, .. }) | Op::Delete(DeletePlan { prev_kv: false, .. })) =
        (&r.prev_value, op)
    {
        return Err(src.err(pv.span(), "`expect.prev_value` needs `prev_kv = true` on the operation"));
    }
    let kvs = match (&r.kvs, op) {
        (None, _) => None,
        (Some(list), Op::Get(g)) => Some(kvs_expect(src, names, g, list)?),
        (Some(_), _) => unreachable!("checked by `allowed`"),
    };
    if let (Some(k), Op::LeaseTimeToLive { keys: false, .. }) = (&r.keys, op) {
        return Err(src.err(k.span(), "`expect.keys` needs `keys = true` on the `lease_time_to_live`"));
    }
    let leases = match &r.leases {
        None => None,
        Some(list) => Some(list.get_ref().iter().map(|l| names.lease(src, l)).collect::<Result<Vec<_>>>()?),
    };
    let responses = match (&r.responses, op) {
        (None, _) => None,
        (Some(list), Op::Txn(t)) => {
            Some(responses_expect(src, names, t, r.succeeded.as_ref().map(|s| *s.get_ref()), list)?)
        }
        (Some(_), _) => unreachable!("checked by `allowed`"),
    };
    let events = match (&r.events, op) {
        (None, _) => None,
        (Some(list), Op::Watch(w)) => Some(events_expect(src, names, w, list)?),
        (Some(_), _) => unreachable!("checked by `allowed`"),
    };
    if let (Some(c), Some(_)) = (&r.canceled, &r.compact_revision) {
        if !*c.get_ref() {
            return Err(src.err(c.span(), "`canceled = false` contradicts `compact_revision`"));
        }
    }
    Ok(Expectations {
        outcome,
        error,
        revision: expr(&r.revision)?,
        body: ResponseExpect {
            kvs,
            count: expr(&r.count)?,
            more: r.more.as_ref().map(|b| *b.get_ref()),
            succeeded: r.succeeded.as_ref().map(|b| *b.get_ref()),
            prev_value: r.prev_value.as_ref().map(|p| p.get_ref().clone()),
        },
        ttl_s: expr(&r.ttl_s)?,
        keys: r.keys.as_ref().map(|k| k.get_ref().clone()),
        leases,
        names: r.names.as_ref().map(|n| n.get_ref().clone()),
        responses,
        events,
        canceled: r.canceled.as_ref().map(|c| *c.get_ref()).or(r.compact_revision.as_ref().map(|_| true)),
        compact_revision: expr(&r.compact_revision)?,
        cancel_reason: r.cancel_reason.as_ref().map(|c| c.get_ref().clone()),
        progress_count: expr(&r.progress_count)?,
        progress_revision: expr(&r.progress_revision)?,
        kube: match op {
            Op::Kube(k) => super::kube_expect::kube_expect(src, names, k, r)?,
            _ => Default::default(),
        },
    })
}

/// Every key that is present must be one the operation can meet; the first that is not is pointed at.
fn check_keys_apply(src: &Source, op: &Op, r: &syntax::Expect) -> Result<()> {
    // Every key that is present, with its span, so that a key the operation cannot meet is pointed at.
    let present: Vec<(&str, Option<Range<usize>>)> = vec![
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
        ("fields", r.fields.as_ref().map(Spanned::span)),
        ("rv", r.rv.as_ref().map(Spanned::span)),
        ("items", r.items.as_ref().map(Spanned::span)),
        ("watch_events", r.watch_events.as_ref().map(Spanned::span)),
    ];
    let ok = allowed(op);
    for (key, span) in &present {
        if let Some(span) = span {
            if !ok.contains(key) {
                let can = if ok.is_empty() { "nothing".to_string() } else { ok.join(", ") };
                return Err(src.err(
                    span.clone(),
                    format!("`expect.{key}` does not apply to a `{}` step; it can expect: {can}", op.keyword()),
                ));
            }
        }
    }
    Ok(())
}

/// `error = { code, message }`: the code must be a gRPC code's name.
fn error_expect(src: &Source, r: &syntax::Expect) -> Result<Option<(GrpcCode, Option<String>)>> {
    let Some(err) = &r.error else { return Ok(None) };
    let code = grpc_code(err.get_ref().code.get_ref()).ok_or_else(|| {
        src.err(
            err.get_ref().code.span(),
            format!(
                "no gRPC code is named {:?}; expected one of: {}",
                err.get_ref().code.get_ref(),
                GRPC_CODES.join(", ")
            ),
        )
    })?;
    Ok(Some((code, err.get_ref().message.clone())))
}

/// The outcome expected: as written, `error` when an error is given, else `ok` (a watch expects none).
fn outcome_expect(
    src: &Source,
    op: &Op,
    r: &syntax::Expect,
    error: &Option<(GrpcCode, Option<String>)>,
) -> Result<Option<ExpectOutcome>> {
    Ok(match (&r.outcome, error) {
        (Some(o), Some(_)) if *o.get_ref() != ExpectOutcome::Error => {
            return Err(src.err(o.span(), "`error` is given, so the outcome is `error`; drop `outcome` or the `error`"))
        }
        (Some(o), _) => Some(*o.get_ref()),
        (None, Some(_)) => Some(ExpectOutcome::Error),
        (None, None) if matches!(op, Op::Kube(_)) && super::kube_expect::expects_refusal(r) => {
            Some(ExpectOutcome::Error)
        }
        (None, None) if matches!(op, Op::Kube(_)) && super::kube_expect::accepts_both(r) => None,
        (None, None) if !matches!(op, Op::Watch(_)) => Some(ExpectOutcome::Ok),
        (None, None) => None,
    })
}

/// `expect.events` of a watch: each event must be one the watch can deliver (a key it covers, a kind its
/// filters let through, a previous value only if it asked for them).
fn events_expect(
    src: &Source,
    names: &Names,
    w: &WatchPlan,
    list: &Spanned<Vec<Spanned<syntax::ExpectEvent>>>,
) -> Result<Vec<EventExpect>> {
    let expr = |v: &Option<Spanned<Value>>| v.as_ref().map(|v| names.expr(src, v)).transpose();
    let mut out = Vec::new();
    for ev in list.get_ref() {
        let x = ev.get_ref();
        if !w.span.contains(x.key.get_ref().as_bytes()) {
            return Err(src.err(
                x.key.span(),
                format!("the watch does not cover key {:?}, so it can never deliver this event", x.key.get_ref()),
            ));
        }
        let filtered = match x.kind {
            EventType::Put => w.no_put,
            EventType::Delete => w.no_delete,
        };
        if filtered {
            return Err(src.err(
                ev.span(),
                format!("the watch filters out {:?} events, so it can never deliver this one", x.kind),
            ));
        }
        if x.prev_value.is_some() && !w.prev_kv {
            return Err(src.err(ev.span(), "`prev_value` needs `prev_kv = true` on the watch"));
        }
        out.push(EventExpect {
            kind: x.kind,
            key: x.key.get_ref().clone(),
            value: x.value.clone(),
            mod_revision: expr(&x.mod_revision)?,
            create_revision: expr(&x.create_revision)?,
            version: expr(&x.version)?,
            prev_value: x.prev_value.clone(),
        });
    }
    Ok(out)
}

/// `expect.kvs` of a get: every key listed must be one the get covers.
fn kvs_expect(
    src: &Source,
    names: &Names,
    g: &GetPlan,
    list: &Spanned<Vec<syntax::ExpectKv>>,
) -> Result<Vec<KvExpect>> {
    if g.count_only {
        return Err(
            src.err(list.span(), "`expect.kvs` on a `count_only` get, which returns no kvs; expect `count` instead")
        );
    }
    let expr = |v: &Option<Spanned<Value>>| v.as_ref().map(|v| names.expr(src, v)).transpose();
    let mut out = Vec::new();
    for kv in list.get_ref() {
        if !g.span.contains(kv.key.as_bytes()) {
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

/// `expect.responses` of a txn: entry i is judged against operation i of the branch that ran, so the list
/// must be as long as that branch and each entry must fit its operation: in the branch `succeeded` names, or,
/// without `succeeded`, in at least one branch.
fn responses_expect(
    src: &Source,
    names: &Names,
    t: &TxnPlan,
    succeeded: Option<bool>,
    list: &Spanned<Vec<Spanned<syntax::ExpectResponse>>>,
) -> Result<Vec<ResponseExpect>> {
    let branches: Vec<(&str, &[TxnOpPlan])> = match succeeded {
        Some(true) => vec![("success", &t.success)],
        Some(false) => vec![("failure", &t.failure)],
        None => vec![("success", &t.success), ("failure", &t.failure)],
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
                    if let TxnOpPlan::Get(g) = op {
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
            (Some(list), Some(g)) => Some(kvs_expect(src, names, g, list)?),
            _ => None,
        };
        out.push(expect);
    }
    Ok(out)
}

/// Whether one entry of `expect.responses` can be met by the operation at its position.
fn fits(expect: &ResponseExpect, x: &syntax::ExpectResponse, op: &TxnOpPlan) -> std::result::Result<(), String> {
    let kind = op.kind();
    if let Some(key) = expect.misfit(kind) {
        return Err(format!("`{key}` does not apply to a `{}`", kind.keyword()));
    }
    let prev_kv = match op {
        TxnOpPlan::Put(p) => p.prev_kv,
        TxnOpPlan::Delete(d) => d.prev_kv,
        _ => true,
    };
    if x.prev_value.is_some() && !prev_kv {
        return Err(format!("`prev_value` needs `prev_kv = true` on the `{}`", kind.keyword()));
    }
    Ok(())
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

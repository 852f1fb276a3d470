//! Requests and outcomes as short, stable trace text: `put /a=1`, `txn [mod(/a)==5] ? put /a=2 : get /a`,
//! `ok rev=17`. Values are printed as text when they are printable, and in hex otherwise.

use crate::history::{
    Bytes, Compare, CompareResult, CompareTarget, KeySpan, Outcome, Request, ResponseBody, TxnOp, TxnOpResult,
};

fn text(b: &Bytes) -> String {
    let s = b.as_slice();
    if s.iter().all(|c| c.is_ascii_graphic()) {
        String::from_utf8_lossy(s).into_owned()
    } else {
        let hex: Vec<String> = s.iter().map(|c| format!("{c:02x}")).collect();
        format!("0x{}", hex.join(""))
    }
}

fn span(s: &KeySpan) -> String {
    if s.range_end.is_empty() {
        text(&s.key)
    } else if s.range_end.0 == fake_etcd::mvcc::prefix_end(s.key.as_slice()) {
        format!("{}*", text(&s.key))
    } else if s.range_end.as_slice() == [0] {
        format!("{}..", text(&s.key))
    } else {
        format!("{}..{}", text(&s.key), text(&s.range_end))
    }
}

fn compare(c: &Compare) -> String {
    let op = match c.result {
        CompareResult::Equal => "==",
        CompareResult::Greater => ">",
        CompareResult::Less => "<",
        CompareResult::NotEqual => "!=",
    };
    let (target, value) = match &c.target {
        CompareTarget::Version(v) => ("version", v.to_string()),
        CompareTarget::Create(r) => ("create", r.to_string()),
        CompareTarget::Mod(r) => ("mod", r.to_string()),
        CompareTarget::Value(v) => ("value", text(v)),
        CompareTarget::Lease(l) => ("lease", l.to_string()),
    };
    format!("{target}({}){op}{value}", span(&c.span))
}

fn txn_op(op: &TxnOp) -> String {
    match op {
        TxnOp::Range(r) => format!("get {}", span(&r.span)),
        TxnOp::Put(p) => format!("put {}={}", text(&p.key), text(&p.value)),
        TxnOp::DeleteRange(d) => format!("del {}", span(&d.span)),
        TxnOp::Txn(_) => "txn(..)".to_string(),
    }
}

fn ops(list: &[TxnOp]) -> String {
    if list.is_empty() {
        return "-".to_string();
    }
    list.iter().map(txn_op).collect::<Vec<_>>().join("; ")
}

pub fn describe_request(r: &Request) -> String {
    match r {
        Request::Range(r) => {
            let mut s = format!("get {}", span(&r.span));
            if r.limit > 0 {
                s.push_str(&format!(" limit={}", r.limit));
            }
            if r.revision.0 > 0 {
                s.push_str(&format!(" rev={}", r.revision));
            }
            s
        }
        Request::Put(p) => format!("put {}={}", text(&p.key), text(&p.value)),
        Request::DeleteRange(d) => format!("del {}", span(&d.span)),
        Request::Txn(t) => {
            let cmps: Vec<String> = t.compare.iter().map(compare).collect();
            format!("txn [{}] ? {} : {}", cmps.join(" "), ops(&t.success), ops(&t.failure))
        }
        Request::Compact(c) => format!("compact rev={}", c.revision),
        Request::LeaseGrant(g) => format!("lease-grant ttl={}s", g.ttl_s),
        Request::LeaseRevoke(r) => format!("lease-revoke {}", r.id),
    }
}

fn txn_results(rs: &[TxnOpResult]) -> String {
    rs.iter()
        .map(|r| match r {
            TxnOpResult::Range(r) => format!("got {}", r.kvs.len()),
            TxnOpResult::Put(_) => "put".to_string(),
            TxnOpResult::DeleteRange(d) => format!("deleted {}", d.deleted),
            TxnOpResult::Txn(_) => "txn".to_string(),
        })
        .collect::<Vec<_>>()
        .join(",")
}

pub fn describe_outcome(o: &Outcome) -> String {
    match o {
        Outcome::Ok(r) => {
            let rev = r.header_revision;
            match &r.body {
                ResponseBody::Range(g) => {
                    let more = if g.more { " more" } else { "" };
                    format!("ok rev={rev} kvs={} count={}{more}", g.kvs.len(), g.count)
                }
                ResponseBody::DeleteRange(d) => format!("ok rev={rev} deleted={}", d.deleted),
                ResponseBody::Txn(t) => {
                    let branch = if t.succeeded { "then" } else { "else" };
                    format!("ok rev={rev} {branch} [{}]", txn_results(&t.responses))
                }
                ResponseBody::LeaseGrant(g) => format!("ok rev={rev} id={}", g.id),
                ResponseBody::Put(_) | ResponseBody::Compact | ResponseBody::LeaseRevoke => format!("ok rev={rev}"),
            }
        }
        Outcome::Err(e) => format!("err {:?} {:?}", e.code, e.message),
        Outcome::Unknown { reason } => format!("unknown ({reason})"),
    }
}

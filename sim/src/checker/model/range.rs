//! Serving a Range at a given revision: scan, min/max filters, sort, limit, `count` and `more`, exactly in
//! the order etcd 3.4's `apply.go::Range` does them.

use std::cmp::Ordering;
use std::ops::Bound;

use super::KvModel;
use crate::history::{KeySpan, KeyValue, RangeRequest, RangeResult, Revision, SortOrder, SortTarget};

/// Reads `request` at revision `at` (already checked against compaction and the current revision).
pub(super) fn read(model: &KvModel, request: &RangeRequest, at: Revision) -> RangeResult {
    let mut kvs = scan(model, request, at);
    // `count` is the number of keys in range at `at`, before filters and limit.
    let count = kvs.len() as i64;
    if request.count_only {
        return RangeResult { kvs: Vec::new(), more: false, count };
    }
    let zero = Revision::ZERO;
    kvs.retain(|kv| {
        !(request.max_mod_revision != zero && kv.mod_revision > request.max_mod_revision
            || request.min_mod_revision != zero && kv.mod_revision < request.min_mod_revision
            || request.max_create_revision != zero && kv.create_revision > request.max_create_revision
            || request.min_create_revision != zero && kv.create_revision < request.min_create_revision)
    });
    sort(&mut kvs, request.sort_order, request.sort_target);
    let mut more = false;
    if request.limit > 0 && kvs.len() as i64 > request.limit {
        kvs.truncate(request.limit as usize);
        more = true;
    }
    if request.keys_only {
        for kv in &mut kvs {
            kv.value.0.clear();
        }
    }
    RangeResult { kvs, more, count }
}

/// Every key in the request's span that is live at `at`, in key order.
fn scan(model: &KvModel, request: &RangeRequest, at: Revision) -> Vec<KeyValue> {
    scan_span(model, &request.span, at)
}

/// Every key in `span` that is live at `at`, in key order.
pub(super) fn scan_span(model: &KvModel, span: &KeySpan, at: Revision) -> Vec<KeyValue> {
    if span.range_end.is_empty() {
        return model.kv_at(span.key.as_slice(), at).into_iter().collect();
    }
    let end = span.end_exclusive();
    let upper = match &end {
        Some(end) if end.as_slice() <= span.key.as_slice() => return Vec::new(),
        Some(end) => Bound::Excluded(end.as_slice()),
        None => Bound::Unbounded,
    };
    let bounds: (Bound<&[u8]>, Bound<&[u8]>) = (Bound::Included(span.key.as_slice()), upper);
    model
        .keys
        .range::<[u8], _>(bounds)
        .filter_map(|(key, records)| KvModel::record_at(records, at).and_then(|r| KvModel::to_kv(key.as_slice(), r)))
        .collect()
}

/// etcd sorts only when asked; a non-key target without an order means ascending. The sort is stable over
/// the key-ordered scan, which is what etcd's sort produces for the small results tests make (Go's sort is
/// an insertion sort below 12 elements); `responses_agree` forgives the order of ties anyway.
fn sort(kvs: &mut [KeyValue], order: SortOrder, target: SortTarget) {
    let order = match (order, target) {
        (SortOrder::None, SortTarget::Key) => return,
        (SortOrder::None, _) => SortOrder::Ascend,
        (order, _) => order,
    };
    kvs.sort_by(|a, b| {
        let by_target = compare_by(a, b, target);
        if order == SortOrder::Descend {
            by_target.reverse()
        } else {
            by_target
        }
    });
}

pub(crate) fn compare_by(a: &KeyValue, b: &KeyValue, target: SortTarget) -> Ordering {
    match target {
        SortTarget::Key => a.key.cmp(&b.key),
        SortTarget::Version => a.version.cmp(&b.version),
        SortTarget::Create => a.create_revision.cmp(&b.create_revision),
        SortTarget::Mod => a.mod_revision.cmp(&b.mod_revision),
        SortTarget::Value => a.value.cmp(&b.value),
    }
}

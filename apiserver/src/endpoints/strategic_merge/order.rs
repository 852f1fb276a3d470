//! The order of a merged list (`normalizeElementOrder` and `mergeSortedSlice` in upstream's
//! `strategicpatch`): the elements the patch names, in the patch's order (or its `$setElementOrder`'s),
//! with every element only the original has put back among them by its original position.

use serde_json::Value;

/// `items` are (merge key, element, index in the original list; `None` for an element the patch added);
/// `wanted` is the order the patch asks for, by merge key. Elements the patch names come in that order;
/// each original-only element goes before the first named element, after the last one placed, whose
/// original index is greater (an added element's counts as greater than every original index), so the
/// relative order of both groups is kept.
pub(super) fn arrange(items: Vec<(Value, Value, Option<usize>)>, wanted: &[Value]) -> Vec<Value> {
    let (mut named, unnamed): (Vec<_>, Vec<_>) = items.into_iter().partition(|(key, _, _)| wanted.contains(key));
    named.sort_by_key(|(key, _, _)| wanted.iter().position(|w| w == key));
    let (original_only, added_unnamed): (Vec<_>, Vec<_>) = unnamed.into_iter().partition(|(_, _, at)| at.is_some());
    let mut out = Vec::new();
    let mut named = named.into_iter().peekable();
    for (_, element, at) in original_only {
        while let Some((_, _, named_at)) = named.peek() {
            let named_at = named_at.unwrap_or(usize::MAX);
            if named_at > at.expect("original-only elements have an index") {
                break;
            }
            out.push(named.next().expect("peeked").1);
        }
        out.push(element);
    }
    out.extend(named.map(|(_, element, _)| element));
    // An element the patch added but its `$setElementOrder` leaves out goes last.
    out.extend(added_unnamed.into_iter().map(|(_, element, _)| element));
    out
}

//! The etcd 3.4.23 bugs that the differential test tolerates, each recognised by an exact rule: fake-etcd
//! implements the fixed behaviour, and a difference is excused only when the fix explains all of it.

use etcd_client::proto::PbWatchResponse;

use super::exec::{watch_text, Outcome};
use super::gen::{Model, Op};

/// A documented etcd bug whose fixed behaviour fake-etcd implements.
#[derive(Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct KnownBug {
    pub name: &'static str,
    pub issue: &'static str,
}

/// A watch from exactly the compaction revision misses the DELETE events of that revision, because
/// compaction removed their tombstones (fixed in 3.4.36).
pub const WATCH_MISSES_DELETE_AT_COMPACT_REV: KnownBug = KnownBug {
    name: "watch from the compaction revision misses that revision's DELETE events",
    issue: "etcd-io/etcd#19179 (#18089)",
};

/// The mvccpb event type of a DELETE.
const DELETE: i32 = 1;

/// Returns the known bug that explains every difference between real etcd's and fake-etcd's answers to
/// `op`, if there is one. `model` is the store as it was when `op` ran.
pub fn explain(op: &Op, model: &Model, real: &Outcome, fake: &Outcome) -> Option<&'static KnownBug> {
    if let Op::Watch { start_revision, .. } = op {
        if model.compacted > 0 && *start_revision == model.compacted {
            let without = drop_deletes_at(&fake.watch, model.compacted);
            if watch_text(&without, &fake.watch_tail) == real.text {
                return Some(&WATCH_MISSES_DELETE_AT_COMPACT_REV);
            }
        }
    }
    None
}

/// The responses as 3.4.23 sends them: DELETE events of `revision` removed, and a response that carried
/// only such events not sent at all.
fn drop_deletes_at(responses: &[PbWatchResponse], revision: i64) -> Vec<PbWatchResponse> {
    responses
        .iter()
        .filter_map(|response| {
            let mut response = response.clone();
            let had_events = !response.events.is_empty();
            response
                .events
                .retain(|e| !(e.r#type == DELETE && e.kv.as_ref().is_some_and(|kv| kv.mod_revision == revision)));
            (!had_events || !response.events.is_empty()).then_some(response)
        })
        .collect()
}

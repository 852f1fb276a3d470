//! Unique: a watch delivers each event once. An event is identified by its revision and key: one revision
//! changes a key at most once (etcd rejects a txn that writes a key twice).

use std::collections::BTreeMap;

use super::{events, watches};
use crate::checker::{Guarantee, Verdict, Violation};
use crate::describe;
use crate::history::History;

pub fn check(history: &History) -> Verdict {
    for (watch, record) in watches(history) {
        let mut seen = BTreeMap::new();
        for (at, event) in events(watch, record) {
            if let Some(first) = seen.insert((event.revision(), &event.kv.key), at) {
                let details = format!("{} delivered {} twice", describe::watch(watch, record), describe::event(event));
                return Verdict::Fail(Violation::new(Guarantee::Unique, details, vec![first, at]));
            }
        }
    }
    Verdict::Pass
}

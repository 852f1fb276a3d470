//! The watch guarantees of etcd's API, one checker each, applied to every watch in a history:
//! [`ordered`], [`unique`], [`atomic`], [`reliable`], [`resumable`], [`bookmarkable`].
//!
//! Watches are not linearizable (events arrive with unbounded delay), so these checkers look at each watch's
//! own stream, and, for Reliable and Resumable, compare it with a [`Reference`] of changes known to be
//! committed: what successful writes reported and what any watch delivered. Verdicts name watches and
//! events as the trace does ([`crate::describe`]).

pub mod atomic;
pub mod bookmarkable;
pub mod ordered;
pub mod reference;
pub mod reliable;
pub mod resumable;
pub mod unique;

#[cfg(test)]
mod tests;

pub use reference::Reference;

use super::{Culprit, Guarantee, Verdict};
use crate::history::{Event, History, WatchId, WatchRecord};

/// Runs every watch checker, in [`Guarantee`] order.
pub fn check_all(history: &History) -> Vec<(Guarantee, Verdict)> {
    let reference = Reference::from_history(history);
    vec![
        (Guarantee::Ordered, ordered::check(history)),
        (Guarantee::Unique, unique::check(history)),
        (Guarantee::Atomic, atomic::check(history)),
        (Guarantee::Reliable, reliable::check(history, &reference)),
        (Guarantee::Resumable, resumable::check(history, &reference)),
        (Guarantee::Bookmarkable, bookmarkable::check(history)),
    ]
}

/// Every watch with its id.
fn watches(history: &History) -> impl Iterator<Item = (WatchId, &WatchRecord)> {
    history.watches.iter().enumerate().map(|(i, w)| (WatchId(i), w))
}

/// A watch's events in arrival order, each with where it is.
fn events(watch: WatchId, record: &WatchRecord) -> impl Iterator<Item = (Culprit, &Event)> {
    record.responses.iter().enumerate().flat_map(move |(response, r)| {
        r.response.events.iter().enumerate().map(move |(event, e)| (Culprit::Event { watch, response, event }, e))
    })
}

//! Linearizable: the KV history must be explainable by one order of the requests, consistent with real
//! time, in which etcd's KV semantics ([`KvModel`](crate::checker::model::KvModel)) produce every response
//! the clients saw.
//!
//! How each kind of op is held to it (see `prepare` for the details):
//! - definite responses and etcd's deterministic errors must be reproduced exactly at the op's place;
//! - unknown outcomes (timeouts, lost connections, availability errors) may take effect at any point after
//!   their invocation, or never;
//! - reads at a past revision are linearized like any other read (their header still shows the current
//!   revision) and must return the state at the revision they asked for;
//! - serializable reads are in the search too, but as stale reads: each must show exactly the state at its
//!   own header revision, and that revision must be committed when it is linearized. This keeps the check
//!   honest (no read of a state that never existed, nothing from the future) without demanding freshness
//!   etcd does not promise.
//!
//! The history cannot be split per key, because every response carries the global revision; the search
//! instead prunes on that revision (see `search`), and `Options::max_steps` turns a search that would run
//! too long into `Verdict::Unknown`.

mod agree;
mod prepare;
mod search;

#[cfg(test)]
mod differential;
#[cfg(test)]
pub(crate) mod generate;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod timing;

use serde::{Deserialize, Serialize};

use super::{Culprit, Guarantee, Verdict, Violation};
use crate::describe;
use crate::history::{History, OpId};
use search::{Ending, Search};

/// Search limits.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Options {
    /// Model steps (one candidate tried at one node) before the search gives up with `Unknown`.
    pub max_steps: u64,
}

impl Default for Options {
    fn default() -> Options {
        // Linearizable histories of thousands of ops take a few steps per op; this leaves room for
        // backtracking around unknown outcomes while bounding a hopeless search to seconds. Two seeds in 200
        // of the standard run needed more than 2,000,000 (both decided within 3 s).
        Options { max_steps: 20_000_000 }
    }
}

/// The verdict, and what the search found on the way.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Checked {
    pub verdict: Verdict,
    /// On a pass, the ops in a linearization order that explains the history; unknown outcomes that are
    /// not listed never took effect in it.
    pub witness: Option<Vec<OpId>>,
    /// Model steps the search took.
    pub steps: u64,
}

/// Checks the KV operations of `history` for linearizability.
pub fn check(history: &History, options: &Options) -> Checked {
    let entries = prepare::entries(history);
    let mut search = Search::new(entries, options.max_steps);
    let ending = search.run();
    let steps = search.steps();
    match ending {
        Ending::Linearized(order) => Checked { verdict: Verdict::Pass, witness: Some(order), steps },
        Ending::OutOfSteps => Checked {
            verdict: Verdict::Unknown {
                reason: format!("linearizability search gave up after {steps} steps over {} ops", history.ops.len()),
            },
            witness: None,
            steps,
        },
        Ending::Impossible(dead_end) => {
            let describe = |op: OpId| {
                let o = &history.ops[op.0];
                format!(
                    "{op} {} {} -> {}",
                    o.client,
                    describe::request(&o.request),
                    describe::outcome_in_full(o.outcome())
                )
            };
            let recent: Vec<String> = dead_end.recent.iter().map(|&op| describe(op)).collect();
            let blocked: Vec<String> =
                dead_end.blocked.iter().map(|(op, why)| format!("{op} {}: {why}", history.ops[op.0].client)).collect();
            let waiting = dead_end.frontier.map_or(String::new(), |op| {
                format!("; the ops invoked after {op} returned must wait for it, by real-time order")
            });
            let details = format!(
                "no order of the ops explains what the clients saw. The furthest the search got was {} definite \
                 ops in, with the store at revision {}; the last ops placed: [{}]; none of the ops that could \
                 come next fits: [{}]{waiting}",
                dead_end.depth,
                dead_end.revision,
                recent.join("; "),
                blocked.join("; ")
            );
            let mut culprits: Vec<Culprit> = dead_end.blocked.iter().map(|(op, _)| Culprit::Op(*op)).collect();
            culprits.extend(dead_end.recent.iter().map(|&op| Culprit::Op(op)));
            culprits.sort();
            culprits.dedup();
            Checked {
                verdict: Verdict::Fail(Violation::new(Guarantee::Linearizable, details, culprits)),
                witness: None,
                steps,
            }
        }
    }
}

//! The depth-first search for a linearization (Wing & Gong's algorithm with Lowe's memoisation, as
//! porcupine does it), over entries from `prepare`.
//!
//! A node is a set of linearized entries and the model state they produced. Its candidates are the
//! unlinearized entries invoked before the earliest return among the unlinearized definite entries (no
//! other entry can go next without breaking real-time order). The search tries each candidate: the model
//! applies it, and it is kept if the model's answer agrees with the observed one and (set, state) was not
//! seen before. It succeeds when every definite entry is linearized; unknown outcomes left over never
//! happened.
//!
//! Three prunings keep it fast on the histories the simulation produces:
//! - **Memoisation** on (linearized set, state fingerprint): two orders that reach the same state with the
//!   same ops are explored once.
//! - **Revisions never go back.** Every definite response carries a header revision, which pins the store
//!   revision at which the op can take effect. A node where some unlinearized op needs a revision below the
//!   store's is dead at once, which also stops unknown writes from being tried in every gap.
//! - **Reads go greedily.** An entry that changes nothing (a read, a failed request) and agrees now can be
//!   linearized now without loss of generality: moving it earlier only relaxes the real-time order and
//!   leaves every state unchanged. So when the search backs out of such a step it backs out of its parent
//!   too, rather than trying the siblings.
//!
//! And one ordering: at each node definite ops are tried before unknown outcomes, so an unknown write is
//! applied where the definite ops cannot go on without it (the revision gap it fills), not first tried at
//! every earlier point.
//!
//! Cost: deciding linearizability is NP-complete, so the worst case is exponential, and `max_steps` bounds
//! it. With the prunings, a history of n ops from c concurrent clients with u unknown outcomes costs about
//! n · (c + u) model steps when it is linearizable (each node tries its few candidates; misplaced writes
//! fail on their header revision in O(1)), each step O(log n + size of the op's result).

use std::collections::{BTreeMap, BTreeSet, HashSet};

use super::agree::{errors_agree, responses_agree};
use super::prepare::{Entry, Expect};
use crate::checker::model::{Fingerprint, KvModel, Undo};
use crate::describe;
use crate::history::{OpId, Request, ResponseBody, Revision};

/// How a search ended.
pub(super) enum Ending {
    /// Every definite op found its place; the ops in linearization order (unknown ones that took effect
    /// included).
    Linearized(Vec<OpId>),
    /// No order works; the deepest dead end, to explain why.
    Impossible(DeadEnd),
    OutOfSteps,
}

/// The deepest point the search reached without finding a way on.
#[derive(Debug, Default)]
pub(super) struct DeadEnd {
    /// How many definite ops were linearized there.
    pub depth: usize,
    pub revision: Revision,
    /// The last few ops linearized before it, oldest first.
    pub recent: Vec<OpId>,
    /// Why each op that could have come next could not.
    pub blocked: Vec<(OpId, String)>,
    /// The pending op that returned first: every op invoked after that return has to wait for it.
    pub frontier: Option<OpId>,
}

struct Frame {
    entry: usize,
    undo: Option<Undo>,
    /// The entry changed nothing: backing out of it backs out of its parent too.
    greedy: bool,
}

/// The linearized set as a bitset, for the memo table.
#[derive(Clone, PartialEq, Eq, Hash)]
struct Bitset(Box<[u64]>);

impl Bitset {
    fn new(n: usize) -> Bitset {
        Bitset(vec![0; n.div_ceil(64)].into_boxed_slice())
    }

    fn flip(&mut self, i: usize) {
        self.0[i / 64] ^= 1 << (i % 64);
    }
}

pub(super) struct Search<'h> {
    entries: Vec<Entry<'h>>,
    model: KvModel,
    linearized: Bitset,
    /// Unlinearized entries by index (= invocation order).
    pending: BTreeSet<usize>,
    /// (return seq, entry) of the unlinearized entries that returned: the first one bounds the candidates.
    returns: BTreeSet<(u64, usize)>,
    /// The highest revision each unlinearized op with a header can start from, counted.
    latest_start: BTreeMap<Revision, usize>,
    /// Unlinearized definite entries, and all definite entries.
    remaining: usize,
    definite: usize,
    /// (set, state) pairs already explored. Only looked up, never iterated.
    memo: HashSet<(Bitset, Fingerprint)>,
    stack: Vec<Frame>,
    steps: u64,
    max_steps: u64,
    deepest: Option<DeadEnd>,
}

impl<'h> Search<'h> {
    pub fn new(entries: Vec<Entry<'h>>, max_steps: u64) -> Search<'h> {
        let mut search = Search {
            linearized: Bitset::new(entries.len()),
            pending: (0..entries.len()).collect(),
            returns: BTreeSet::new(),
            latest_start: BTreeMap::new(),
            remaining: 0,
            definite: 0,
            memo: HashSet::new(),
            stack: Vec::new(),
            steps: 0,
            max_steps,
            deepest: None,
            model: KvModel::new(),
            entries,
        };
        for i in 0..search.entries.len() {
            search.book(i, true);
        }
        search.definite = search.remaining;
        search
    }

    pub fn steps(&self) -> u64 {
        self.steps
    }

    pub fn run(&mut self) -> Ending {
        // Candidates at the current node are tried in order; after backing out of a step at entry `e`, the
        // node resumes with the candidates after `e`.
        let mut after: Option<usize> = None;
        let mut candidates = Vec::new();
        loop {
            if self.remaining == 0 {
                return Ending::Linearized(self.stack.iter().map(|f| self.entries[f.entry].op).collect());
            }
            let mut descended = false;
            if !self.is_dead() {
                self.candidates(after, &mut candidates);
                for &e in &candidates {
                    if self.steps >= self.max_steps {
                        return Ending::OutOfSteps;
                    }
                    self.steps += 1;
                    match self.try_step(e) {
                        Step::Rejected => {}
                        Step::Seen { greedy: true } => break,
                        Step::Seen { greedy: false } => {}
                        Step::Taken(frame) => {
                            self.linearize(frame);
                            descended = true;
                            break;
                        }
                    }
                }
            }
            if descended {
                after = None;
                continue;
            }
            self.note_dead_end(after);
            loop {
                let Some(frame) = self.stack.pop() else {
                    return Ending::Impossible(self.deepest.take().unwrap_or_default());
                };
                let greedy = frame.greedy;
                let entry = frame.entry;
                self.unlinearize(frame);
                if !greedy {
                    after = Some(entry);
                    break;
                }
            }
        }
    }

    /// A node is dead when some op still to come needs a store revision the store has already passed.
    fn is_dead(&self) -> bool {
        self.latest_start.first_key_value().is_some_and(|(rev, _)| *rev < self.model.revision())
    }

    /// The candidates at the current node after `after` (all of them for `None`): definite entries first,
    /// in invocation order, then unknown outcomes. Trying unknown outcomes last means the search applies
    /// one only where the definite ops cannot go on without it (typically at the revision gap it fills),
    /// instead of first trying it at every earlier point.
    fn candidates(&self, after: Option<usize>, out: &mut Vec<usize>) {
        out.clear();
        let frontier = self.returns.first().map_or(u64::MAX, |(seq, _)| *seq);
        let eligible = self.pending.iter().copied().take_while(|&e| self.entries[e].invoked < frontier);
        out.extend(eligible.clone().filter(|&e| self.entries[e].is_definite()));
        out.extend(eligible.filter(|&e| !self.entries[e].is_definite()));
        if let Some(after) = after {
            let done =
                out.iter().position(|&e| e == after).expect("the entry backed out of is a candidate of its parent");
            out.drain(..=done);
        }
    }

    fn try_step(&mut self, e: usize) -> Step {
        let before = self.model.fingerprint();
        let undo = match self.agrees_now(e) {
            Ok(undo) => undo,
            Err(()) => return Step::Rejected,
        };
        let after = self.model.fingerprint();
        let entry = &self.entries[e];
        if !entry.is_definite() && after == before {
            // An unknown outcome that changes nothing is the same as never happening.
            if let Some(undo) = undo {
                self.model.undo(undo);
            }
            return Step::Rejected;
        }
        let greedy = entry.is_definite() && after == before;
        let mut set = self.linearized.clone();
        set.flip(e);
        if !self.memo.insert((set, after)) {
            if let Some(undo) = undo {
                self.model.undo(undo);
            }
            return Step::Seen { greedy };
        }
        Step::Taken(Frame { entry: e, undo, greedy })
    }

    /// Applies entry `e` to the model if what it shows agrees with the model now; on disagreement the
    /// model is left as it was.
    fn agrees_now(&mut self, e: usize) -> Result<Option<Undo>, ()> {
        let entry = &self.entries[e];
        match entry.expect {
            Expect::Response(observed) => {
                let (lo, hi) = entry.before.expect("a response has a revision window");
                let rev = self.model.revision();
                if rev < lo || rev > hi {
                    return Err(());
                }
                let granted = match &observed.body {
                    ResponseBody::LeaseGrant(g) => Some(g.id),
                    _ => None,
                };
                let (predicted, undo) = self.model.apply(entry.request, granted);
                match predicted {
                    Ok(p) if responses_agree(entry.request, &p, observed) => Ok(Some(undo)),
                    _ => {
                        self.model.undo(undo);
                        Err(())
                    }
                }
            }
            Expect::Error(observed) => {
                let (predicted, undo) = self.model.apply(entry.request, None);
                match predicted {
                    Err(p) if errors_agree(p, observed) => Ok(Some(undo)),
                    _ => {
                        self.model.undo(undo);
                        Err(())
                    }
                }
            }
            Expect::StaleRead(observed) => {
                let Request::Range(request) = entry.request else { return Err(()) };
                let ResponseBody::Range(seen) = &observed.body else { return Err(()) };
                match self.model.stale_range(request, observed.header_revision) {
                    Some(predicted) if super::agree::stale_read_agrees(request, &predicted, seen) => Ok(None),
                    _ => Err(()),
                }
            }
            Expect::Anything => Ok(Some(self.model.apply(entry.request, None).1)),
        }
    }

    fn linearize(&mut self, frame: Frame) {
        self.linearized.flip(frame.entry);
        self.book(frame.entry, false);
        self.stack.push(frame);
    }

    fn unlinearize(&mut self, frame: Frame) {
        self.linearized.flip(frame.entry);
        self.book(frame.entry, true);
        if let Some(undo) = frame.undo {
            self.model.undo(undo);
        }
    }

    /// Adds entry `e` to (or removes it from) the bookkeeping of pending entries.
    fn book(&mut self, e: usize, pending: bool) {
        let entry = &self.entries[e];
        let returned = entry.returned.map(|seq| (seq, e));
        let start = entry.before.map(|(_, hi)| hi);
        let definite = entry.is_definite();
        if pending {
            self.pending.insert(e);
            if let Some(r) = returned {
                self.returns.insert(r);
            }
            if let Some(hi) = start {
                *self.latest_start.entry(hi).or_default() += 1;
            }
            self.remaining += usize::from(definite);
        } else {
            self.pending.remove(&e);
            if let Some(r) = returned {
                self.returns.remove(&r);
            }
            if let Some(hi) = start {
                let count = self.latest_start.get_mut(&hi).expect("booked");
                *count -= 1;
                if *count == 0 {
                    self.latest_start.remove(&hi);
                }
            }
            self.remaining -= usize::from(definite);
        }
    }

    /// Remembers the current node if it is the deepest dead end so far, with the reason each candidate
    /// was turned down. This runs only when the depth record is broken, so its cost does not matter.
    fn note_dead_end(&mut self, after: Option<usize>) {
        let depth = self.definite - self.remaining;
        // A node resumed after a child failed has had its deeper dead ends noted already.
        if self.deepest.as_ref().is_some_and(|d| d.depth >= depth) || after.is_some() {
            return;
        }
        let revision = self.model.revision();
        let recent = self.stack.iter().rev().take(4).rev().map(|f| self.entries[f.entry].op).collect();
        let mut blocked = Vec::new();
        for (hi, _) in self.latest_start.range(..revision) {
            for e in self.pending.iter().filter(|&&e| self.entries[e].before.is_some_and(|(_, h)| h == *hi)) {
                let entry = &self.entries[*e];
                let why = format!(
                    "{} needs the store at revision {} or below, but it is already at {revision}",
                    describe::request(entry.request),
                    hi
                );
                blocked.push((entry.op, why));
            }
        }
        let mut candidates = Vec::new();
        self.candidates(None, &mut candidates);
        for e in candidates {
            if self.entries[e].is_definite() {
                blocked.push((self.entries[e].op, self.explain(e)));
            }
        }
        let frontier = self.returns.first().map(|(_, e)| self.entries[*e].op);
        self.deepest = Some(DeadEnd { depth, revision, recent, blocked, frontier });
    }

    /// Why entry `e` cannot go next: what the model says against what the client saw.
    fn explain(&mut self, e: usize) -> String {
        let entry = &self.entries[e];
        let request = describe::request(entry.request);
        let observed = match entry.expect {
            Expect::Response(r) | Expect::StaleRead(r) => describe::response_in_full(r).to_string(),
            Expect::Error(s) => describe::error(s).to_string(),
            Expect::Anything => "unknown".to_string(),
        };
        if let Expect::StaleRead(r) = entry.expect {
            return format!(
                "{request}: observed {observed}, which is not the state at revision {} (or that revision is not \
                 committed yet)",
                r.header_revision
            );
        }
        let (predicted, undo) = self.model.apply(entry.request, None);
        self.model.undo(undo);
        let predicted = match predicted {
            Ok(p) => describe::response_in_full(&p).to_string(),
            Err(refusal) => describe::error(&refusal.status()).to_string(),
        };
        format!("{request}: the model answers {predicted}, but the client saw {observed}")
    }
}

enum Step {
    Rejected,
    /// The step agreed but leads to a node already explored.
    Seen {
        greedy: bool,
    },
    Taken(Frame),
}

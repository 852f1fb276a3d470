//! The pure half of `kubesim shrink`: which reductions of a scenario file to try, in what order, and how
//! to tell that a smaller scenario still fails the same way. Running a candidate is the caller's job (an
//! oracle passed in), so everything here is plain data in, data out, and is unit-tested without a
//! simulation.
//!
//! The reductions, in order: the nemesis becomes the explicit fault schedule it drew in the failing run
//! (so that faults can then be removed one by one), then delta debugging (Zeller's ddmin) over the
//! `[[fault]]` entries, the `[[failpoint]]` entries, whole workloads and scripted clients, and the
//! scripted steps; workloads' `ops` and `clients` are cut by halves, or by smaller steps when a half is
//! too much. Rounds repeat until a round removes nothing, because a smaller workload can make a fault
//! unnecessary and the other way round.
//!
//! A candidate is the file's own document (toml_edit's [`Doc`]), edited in place: what is removed goes with
//! its comments and what stays keeps the author's comments, table style and order; a `for_each` template
//! is one entry, kept or removed whole. The caller writes it back and parses it, which also rejects a
//! candidate whose references dangle (a step's `after` naming a removed step), at no cost of a run.
//!
//! Any change to a scenario moves madsim's interleavings, so the same seed rarely fails the same way
//! after a reduction even when the reduction kept everything the failure needs. [`SeedSearch`] is the
//! oracle that allows for it: a candidate that does not fail on the current seed is tried on a bounded
//! number of other seeds before it is rejected, and the seed that failed is kept for what follows (and
//! written into the result as its canonical seed).

use std::collections::BTreeSet;
use std::fmt;

use toml_edit::{ArrayOfTables, DocumentMut, Item, Table, Value};

use super::judge::Judgement;
use super::syntax::{self, File};
use crate::fault::{Fault, ScheduledFault};

/// A scenario file as a document that keeps its comments and layout.
pub type Doc = DocumentMut;

/// How a run failed: its failing expectations (`client/step: what`), the checks that did not come out as
/// required (`Reliable must hold`), member panics (`etcd-2 panicked and was restarted`) and a timeout. Two
/// runs fail the same way when these are equal.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Signature(BTreeSet<String>);

impl Signature {
    pub fn of(j: &Judgement) -> Signature {
        let mut s: BTreeSet<String> = j.failures().map(|f| format!("{}: {}", f.who, f.what)).collect();
        for c in j.checks.iter().filter(|c| !c.pass()) {
            s.insert(format!("{} {}", c.guarantee, if c.must_hold { "must hold" } else { "must fail" }));
        }
        s.extend(j.panics.iter().cloned());
        if j.timed_out {
            s.insert("the time limit".into());
        }
        Signature(s)
    }

    /// Whether the run failed at all.
    pub fn is_failure(&self) -> bool {
        !self.0.is_empty()
    }
}

impl fmt::Display for Signature {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let parts: Vec<&str> = self.0.iter().map(String::as_str).collect();
        f.write_str(&parts.join("; "))
    }
}

/// The `[[fault]]` entry that schedules `fault` at `at_ms`: the inverse of validation's reading of one.
pub fn fault_entry(at_ms: u64, fault: &Fault) -> syntax::Fault {
    let mut s = syntax::Fault { at_ms: Some(syntax::Millis(at_ms)), ..syntax::Fault::default() };
    match fault.clone() {
        Fault::Partition { left, right } => s.partition = Some(syntax::Sides { left, right }),
        Fault::PartitionOneWay { from, to } => s.partition_one_way = Some(syntax::OneWay { from, to }),
        Fault::Heal => s.heal = Some(true),
        Fault::ClogNode(n) => s.clog = Some(n),
        Fault::UnclogNode(n) => s.unclog = Some(n),
        Fault::ClogLink { from, to } => s.clog_link = Some(syntax::Link { from, to }),
        Fault::UnclogLink { from, to } => s.unclog_link = Some(syntax::Link { from, to }),
        Fault::PacketLoss { loss_permille } => s.packet_loss_permille = Some(loss_permille),
        Fault::Latency { min_ms, max_ms } => s.latency = Some(syntax::Latency { min_ms, max_ms }),
        Fault::Kill(n) => s.kill = Some(n),
        Fault::Restart(n) => s.restart = Some(n),
        Fault::Pause(n) => s.pause = Some(n),
        Fault::Resume(n) => s.resume = Some(n),
        Fault::Release { node, point } => s.release = Some(syntax::Release { node, point }),
    }
    s
}

/// Whether the file runs the random nemesis.
pub fn has_nemesis(doc: &Doc) -> bool {
    doc.get("nemesis")
        .and_then(Item::as_table_like)
        .is_some_and(|n| n.get("enabled").and_then(Item::as_bool) != Some(false))
}

/// The file with its nemesis replaced by `applied`, every fault a run applied, each at the time it was
/// applied. The schedule replaces the file's own `[[fault]]` entries too, since `applied` holds them.
pub fn explicit_schedule(doc: &Doc, applied: &[ScheduledFault]) -> Doc {
    #[derive(serde::Serialize)]
    struct Faults {
        fault: Vec<syntax::Fault>,
    }
    let mut out = doc.clone();
    out.remove("nemesis");
    out.remove("fault");
    if applied.is_empty() {
        return out;
    }
    let faults = Faults { fault: applied.iter().map(|f| fault_entry(f.at_ms, &f.fault)).collect() };
    let text = toml::to_string(&faults).expect("faults serialize");
    let mut entries: Doc = text.parse().expect("serialized faults parse");
    if let Some(item) = entries.remove("fault") {
        out.insert("fault", item);
    }
    out
}

/// Sets the file's `[scenario] canonical_seed`.
pub fn set_canonical_seed(doc: &mut Doc, seed: u64) {
    if doc.get("scenario").and_then(Item::as_table).is_none() {
        let mut t = Table::new();
        t.set_position(Some(0));
        doc.insert("scenario", Item::Table(t));
    }
    if let Some(t) = doc.get_mut("scenario").and_then(Item::as_table_mut) {
        set_number(t, "canonical_seed", seed as i64);
    }
}

/// How many entries the array (of tables, or inline) under `key` has.
fn count(t: &Table, key: &str) -> usize {
    match t.get(key) {
        Some(Item::ArrayOfTables(a)) => a.len(),
        Some(Item::Value(Value::Array(a))) => a.len(),
        _ => 0,
    }
}

/// Keeps the entries of the array under `key` whose indices are in `keep` (sorted), in order.
fn retain(t: &mut Table, key: &str, keep: &[usize]) {
    match t.get_mut(key) {
        Some(Item::ArrayOfTables(a)) => {
            let kept: ArrayOfTables =
                a.iter().enumerate().filter(|(i, _)| keep.contains(i)).map(|(_, t)| t.clone()).collect();
            *a = kept;
        }
        Some(Item::Value(Value::Array(a))) => {
            let mut i = 0;
            a.retain(|_| {
                let kept = keep.contains(&i);
                i += 1;
                kept
            });
        }
        _ => {}
    }
}

/// The `i`th table of the array of tables under `key`.
fn entry<'a>(t: &'a Table, key: &str, i: usize) -> Option<&'a Table> {
    t.get(key).and_then(Item::as_array_of_tables).and_then(|a| a.get(i))
}

/// The `i`th table of the array of tables under `key`, to edit.
fn entry_mut<'a>(t: &'a mut Table, key: &str, i: usize) -> Option<&'a mut Table> {
    t.get_mut(key).and_then(Item::as_array_of_tables_mut).and_then(|a| a.get_mut(i))
}

/// An integer value, keeping the comment after it.
fn set_number(t: &mut Table, key: &str, n: i64) {
    match t.get_mut(key).and_then(Item::as_value_mut) {
        Some(v) => {
            let decor = v.decor().clone();
            *v = Value::from(n);
            *v.decor_mut() = decor;
        }
        None => {
            t.insert(key, toml_edit::value(n));
        }
    }
}

fn number(t: &Table, key: &str) -> usize {
    t.get(key).and_then(Item::as_integer).map_or(0, |n| n.max(0) as usize)
}

/// What the shrinker can make smaller, counted: printed before and after.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Size {
    pub nemesis: bool,
    pub faults: usize,
    pub failpoints: usize,
    pub workloads: usize,
    pub workload_clients: usize,
    pub workload_ops: usize,
    pub clients: usize,
    pub steps: usize,
}

impl Size {
    /// What a document holds, a `for_each` template counted once.
    pub fn of_doc(doc: &Doc) -> Size {
        let t = doc.as_table();
        let workloads = |f: &dyn Fn(&Table) -> usize| -> usize {
            t.get("workload").and_then(Item::as_array_of_tables).map_or(0, |a| a.iter().map(f).sum())
        };
        let steps =
            t.get("client").and_then(Item::as_array_of_tables).map_or(0, |a| a.iter().map(|c| count(c, "step")).sum());
        Size {
            nemesis: has_nemesis(doc),
            faults: count(t, "fault"),
            failpoints: count(t, "failpoint"),
            workloads: count(t, "workload"),
            workload_clients: workloads(&|w| number(w, "clients")),
            workload_ops: workloads(&|w| number(w, "ops")),
            clients: count(t, "client"),
            steps,
        }
    }

    pub fn of(file: &File) -> Size {
        Size {
            nemesis: file.nemesis.as_ref().is_some_and(|n| n.get_ref().enabled),
            faults: file.faults.len(),
            failpoints: file.failpoints.len(),
            workloads: file.workloads.len(),
            workload_clients: file.workloads.iter().map(|w| *w.clients.get_ref()).sum(),
            workload_ops: file.workloads.iter().map(|w| w.ops).sum(),
            clients: file.clients.len(),
            steps: file.clients.iter().map(|c| c.steps.len()).sum(),
        }
    }
}

impl fmt::Display for Size {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "nemesis {}, {} faults, {} failpoints, {} workloads ({} clients, {} ops), {} scripted clients ({} steps)",
            if self.nemesis { "on" } else { "off" },
            self.faults,
            self.failpoints,
            self.workloads,
            self.workload_clients,
            self.workload_ops,
            self.clients,
            self.steps
        )
    }
}

/// An oracle that lets a candidate fail on another seed: [`SeedSearch::fails`] runs the candidate on the
/// current seed, then on up to `tries` others (the seeds after it, in order), and moves to the first that
/// fails the same way.
pub struct SeedSearch<'a> {
    /// The seed the last accepted candidate failed on.
    pub seed: u64,
    /// Other seeds a candidate gets before it is rejected.
    pub tries: u64,
    /// Runs so far, and how many of the accepted candidates needed another seed.
    pub runs: u64,
    pub moves: u64,
    run: &'a mut dyn FnMut(&Doc, u64) -> bool,
}

impl<'a> SeedSearch<'a> {
    /// `run(file, seed)` says whether `file` run with `seed` fails the same way.
    pub fn new(seed: u64, tries: u64, run: &'a mut dyn FnMut(&Doc, u64) -> bool) -> SeedSearch<'a> {
        SeedSearch { seed, tries, runs: 0, moves: 0, run }
    }

    /// Whether `file` fails the same way on the current seed or on one of the next `tries`.
    pub fn fails(&mut self, file: &Doc) -> bool {
        for k in 0..=self.tries {
            let seed = self.seed.wrapping_add(k);
            self.runs += 1;
            if (self.run)(file, seed) {
                if k > 0 {
                    self.seed = seed;
                    self.moves += 1;
                }
                return true;
            }
        }
        false
    }
}

/// Reduces `file` while `fails` says a candidate still fails the same way. `applied` is the fault
/// schedule of the failing run, for making the nemesis explicit. `fails(file)` is assumed true.
///
/// The explicit schedule is not the same run again: the nemesis's own task takes part in madsim's
/// scheduling, so without it every later interleaving moves. It is kept only when it still fails the
/// same way; otherwise the nemesis stays and the other reductions go on around it.
pub fn shrink(doc: &Doc, applied: &[ScheduledFault], fails: &mut dyn FnMut(&Doc) -> bool) -> Doc {
    let mut cur = doc.clone();
    if has_nemesis(&cur) {
        let explicit = explicit_schedule(&cur, applied);
        if fails(&explicit) {
            cur = explicit;
        }
    }
    // Each round can only shrink the file, so the rounds end; the cap keeps a pathological oracle cheap.
    for _round in 0..4 {
        let before = Size::of_doc(&cur);
        for key in ["fault", "failpoint", "workload", "client"] {
            let all: Vec<usize> = (0..count(cur.as_table(), key)).collect();
            let with = |cur: &Doc, keep: &[usize]| {
                let mut c = cur.clone();
                retain(c.as_table_mut(), key, keep);
                c
            };
            let kept = ddmin(&all, &mut |sub| fails(&with(&cur, sub)));
            cur = with(&cur, &kept);
            if key == "workload" {
                for i in 0..count(cur.as_table(), "workload") {
                    shrink_workload(&mut cur, i, fails);
                }
            }
        }
        shrink_steps(&mut cur, fails);
        if Size::of_doc(&cur) == before {
            break;
        }
    }
    cur
}

/// Cuts workload `i`'s ops, then its clients, while the run still fails. A run is chaotic in its inputs
/// (fewer ops reorders every later message), so when a half does not fail the same way, smaller cuts
/// (a quarter, an eighth) are tried before giving up.
fn shrink_workload(cur: &mut Doc, i: usize, fails: &mut dyn FnMut(&Doc) -> bool) {
    let read =
        |d: &Doc| entry(d.as_table(), "workload", i).map_or((0, 0), |w| (number(w, "ops"), number(w, "clients")));
    let mut try_set = |cur: &mut Doc, ops: usize, clients: usize| {
        let mut c = cur.clone();
        if let Some(w) = entry_mut(c.as_table_mut(), "workload", i) {
            set_number(w, "ops", ops as i64);
            set_number(w, "clients", clients as i64);
        }
        let ok = fails(&c);
        if ok {
            *cur = c;
        }
        ok
    };
    loop {
        let (ops, clients) = read(cur);
        if !cuts(ops, &[2, 4, 8]).into_iter().any(|smaller| try_set(cur, smaller, clients)) {
            break;
        }
    }
    loop {
        let (ops, clients) = read(cur);
        if !cuts(clients, &[2, clients.max(1)]).into_iter().any(|fewer| try_set(cur, ops, fewer)) {
            break;
        }
    }
}

/// `n` less `n / d` for each divisor `d` (half, a quarter, ...), each at least 1 and below `n`, without
/// repeats, in the order given.
fn cuts(n: usize, divisors: &[usize]) -> Vec<usize> {
    let mut out: Vec<usize> = Vec::new();
    for &d in divisors {
        let m = n - (n / d).max(1);
        if n >= 2 && m >= 1 && !out.contains(&m) {
            out.push(m);
        }
    }
    out
}

/// Delta debugging over every scripted step at once (client, index), so that steps of different clients
/// that only matter together are found together.
fn shrink_steps(cur: &mut Doc, fails: &mut dyn FnMut(&Doc) -> bool) {
    let clients = count(cur.as_table(), "client");
    let all: Vec<(usize, usize)> = (0..clients)
        .flat_map(|c| {
            let n = entry(cur.as_table(), "client", c).map_or(0, |t| count(t, "step"));
            (0..n).map(move |s| (c, s))
        })
        .collect();
    let with = |cur: &Doc, keep: &[(usize, usize)]| {
        let mut d = cur.clone();
        for c in 0..clients {
            let mine: Vec<usize> = keep.iter().filter(|(ci, _)| *ci == c).map(|(_, s)| *s).collect();
            if let Some(client) = entry_mut(d.as_table_mut(), "client", c) {
                retain(client, "step", &mine);
            }
        }
        d
    };
    let kept = ddmin(&all, &mut |sub| fails(&with(cur, sub)));
    *cur = with(cur, &kept);
}

/// Zeller's ddmin: a subset of `items`, in their order, for which `fails` holds and from which no single
/// chunk at the finest granularity tried can be removed. `fails(items)` is assumed true.
pub fn ddmin<T: Clone>(items: &[T], fails: &mut dyn FnMut(&[T]) -> bool) -> Vec<T> {
    let mut cur = items.to_vec();
    if cur.is_empty() || fails(&[]) {
        return Vec::new();
    }
    let mut n = 2;
    while cur.len() >= 2 {
        let chunks = chunks(cur.len(), n);
        let mut reduced = false;
        for r in &chunks {
            let subset = cur[r.clone()].to_vec();
            if fails(&subset) {
                (cur, n, reduced) = (subset, 2, true);
                break;
            }
        }
        // With two chunks, each chunk's complement is the other chunk, tried just above.
        if !reduced && n > 2 {
            for r in &chunks {
                let complement: Vec<T> = cur[..r.start].iter().chain(&cur[r.end..]).cloned().collect();
                if fails(&complement) {
                    (cur, n, reduced) = (complement, (n - 1).max(2), true);
                    break;
                }
            }
        }
        if !reduced {
            if n >= cur.len() {
                break;
            }
            n = (2 * n).min(cur.len());
        }
    }
    cur
}

/// `len` items cut into `n` contiguous ranges of near-equal size.
fn chunks(len: usize, n: usize) -> Vec<std::ops::Range<usize>> {
    (0..n).map(|k| k * len / n..(k + 1) * len / n).filter(|r| !r.is_empty()).collect()
}

/// The shrunk file's text: the header as comment lines, then the document as the author wrote it, less what
/// was removed.
pub fn render(doc: &Doc, header: &[String]) -> String {
    let mut text: String = header.iter().map(|l| format!("# {l}\n")).collect();
    text.push('\n');
    text.push_str(&doc.to_string());
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ddmin_finds_the_one_item_that_matters() {
        let items: Vec<u32> = (0..40).collect();
        let mut runs = 0;
        let got = ddmin(&items, &mut |s| {
            runs += 1;
            s.contains(&17)
        });
        assert_eq!(got, vec![17]);
        assert!(runs < 40, "ddmin should need fewer runs than one per item, took {runs}");
    }

    #[test]
    fn ddmin_keeps_items_that_only_fail_together_in_order() {
        let items: Vec<u32> = (0..16).collect();
        let got = ddmin(&items, &mut |s| s.contains(&3) && s.contains(&12) && s.contains(&13));
        assert_eq!(got, vec![3, 12, 13]);
    }

    #[test]
    fn ddmin_empties_when_nothing_is_needed_and_keeps_everything_when_all_is() {
        assert_eq!(ddmin(&[1, 2, 3], &mut |_| true), Vec::<i32>::new());
        assert_eq!(ddmin(&[1, 2, 3], &mut |s| s.len() == 3), vec![1, 2, 3]);
    }

    /// With an oracle that needs one kill and at least 10 ops, the nemesis becomes its schedule, the
    /// schedule shrinks to the kill, and the ops to between 10 and 19.
    #[test]
    fn shrink_keeps_only_what_the_failure_needs() {
        let doc: Doc =
            "[[workload]]\nname = \"w\"\nkind = \"kubernetes\"\nclients = 8\nops = 1000\n[nemesis]\n".parse().unwrap();
        let kill = Fault::Kill("etcd-1".into());
        let applied: Vec<ScheduledFault> =
            [Fault::ClogNode("w-1".into()), kill.clone(), Fault::Heal, Fault::Restart("etcd-1".into())]
                .into_iter()
                .enumerate()
                .map(|(i, fault)| ScheduledFault { at_ms: 100 * i as u64, fault })
                .collect();
        let got = shrink(&doc, &applied, &mut |c: &Doc| {
            let text = c.to_string();
            text.contains("kill = \"etcd-1\"") && Size::of_doc(c).workload_ops >= 10
        });
        let size = Size::of_doc(&got);
        assert!(!size.nemesis && size.faults == 1, "{size}");
        assert!((10..20).contains(&size.workload_ops) && size.workload_clients == 1, "{size}");
    }

    /// A candidate that fails only on other seeds is accepted, and the seed it failed on is kept: here
    /// a file of N ops "fails" on seeds divisible by N, so each cut needs its own seed.
    #[test]
    fn a_seed_search_keeps_the_seed_a_smaller_candidate_failed_on() {
        let doc: Doc = "[[workload]]\nname = \"w\"\nkind = \"kubernetes\"\nclients = 1\nops = 64\n".parse().unwrap();
        let mut run = |d: &Doc, seed: u64| {
            let ops = Size::of_doc(d).workload_ops as u64;
            ops >= 5 && seed.is_multiple_of(ops)
        };
        let mut search = SeedSearch::new(64, 32, &mut run);
        let got = shrink(&doc, &[], &mut |f| search.fails(f));
        assert_eq!(Size::of_doc(&got).workload_ops, 5, "{}", Size::of_doc(&got));
        assert_eq!((search.seed, search.moves), (70, 2), "6 ops failed on seed 66, then 5 on seed 70");
        let searched = search.runs;
        // On seed 64 alone, only the sizes that divide 64 fail, so the cuts stop at 8.
        let mut fixed = SeedSearch::new(64, 0, &mut run);
        assert_eq!(Size::of_doc(&shrink(&doc, &[], &mut |f| fixed.fails(f))).workload_ops, 8);
        assert!(fixed.runs < searched, "a search over seeds costs more runs");
    }

    /// What the shrinker keeps, it keeps as written: comments, inline tables, dotted keys, order; a removed
    /// step goes with its comment, and a `for_each` template is one step.
    #[test]
    fn shrink_keeps_the_authors_comments_and_table_style() {
        let text = "# The race.\n[scenario]\nseeds = 3 # three\n\n[[client]]\nname = \"c\"\n\n\
                    # Needed: the first write.\n[[client.step]]\nname = \"one\"\nput = { key = \"/a\", value = \"1\" }\n\n\
                    # Not needed.\n[[client.step]]\nfor_each = { i = \"1..=5\" }\nput.key = \"/b/{i}\"\nput.value = \"x\"\n";
        let doc: Doc = text.parse().unwrap();
        assert_eq!(Size::of_doc(&doc).steps, 2);
        let got = shrink(&doc, &[], &mut |d: &Doc| d.to_string().contains("name = \"one\""));
        let mut got = got;
        set_canonical_seed(&mut got, 7);
        let out = render(&got, &["Reproduces it.".into()]);
        assert!(
            out.starts_with("# Reproduces it.\n\n# The race.\n[scenario]\nseeds = 3 # three\ncanonical_seed = 7\n"),
            "{out}"
        );
        assert!(
            out.contains(
                "# Needed: the first write.\n[[client.step]]\nname = \"one\"\nput = { key = \"/a\", value = \"1\" }\n"
            ),
            "{out}"
        );
        assert!(!out.contains("Not needed") && !out.contains("for_each"), "{out}");
        crate::scenario::parse("shrunk.toml", &out).unwrap_or_else(|e| panic!("{e}\n{out}"));
    }

    #[test]
    fn cuts_try_a_half_then_smaller_steps() {
        assert_eq!(cuts(120, &[2, 4, 8]), vec![60, 90, 105]);
        assert_eq!(cuts(3, &[2, 4, 8]), vec![2]);
        assert_eq!(cuts(1, &[2, 4, 8]), Vec::<usize>::new());
        assert_eq!(cuts(4, &[2, 4]), vec![2, 3]);
    }

    #[test]
    fn chunks_cover_the_range_without_gaps() {
        assert_eq!(chunks(5, 2), vec![0..2, 2..5]);
        assert_eq!(chunks(3, 3), vec![0..1, 1..2, 2..3]);
    }

    /// Every fault, written back as an entry and read by validation, is the same fault again.
    #[test]
    fn fault_entries_round_trip_through_the_parser() {
        let m = |n: &str| n.to_string();
        let faults = vec![
            Fault::Partition { left: vec![m("etcd-1")], right: vec![m("etcd-2"), m("etcd-3")] },
            Fault::PartitionOneWay { from: vec![m("etcd-1")], to: vec![m("c")] },
            Fault::Heal,
            Fault::ClogNode(m("etcd-2")),
            Fault::UnclogNode(m("etcd-2")),
            Fault::ClogLink { from: m("etcd-1"), to: m("etcd-3") },
            Fault::UnclogLink { from: m("etcd-1"), to: m("etcd-3") },
            Fault::PacketLoss { loss_permille: 125 },
            Fault::Latency { min_ms: 5, max_ms: 40 },
            Fault::Kill(m("etcd-3")),
            Fault::Restart(m("etcd-3")),
            Fault::Pause(m("etcd-1")),
            Fault::Resume(m("etcd-1")),
            Fault::Release { node: m("etcd-1"), point: m("before-watch-response-send") },
        ];
        let base: Doc = "[cluster]\nmembers = 3\n[[client]]\nname = \"c\"\n\
             [[client.step]]\nname = \"p\"\nput = { key = \"/a\", value = \"1\" }\n"
            .parse()
            .unwrap();
        let applied: Vec<ScheduledFault> = faults
            .iter()
            .enumerate()
            .map(|(i, f)| ScheduledFault { at_ms: 100 * i as u64, fault: f.clone() })
            .collect();
        let file = explicit_schedule(&base, &applied);
        let text = render(&file, &["header".into()]);
        let parsed = crate::scenario::parse("round-trip.toml", &text).unwrap_or_else(|e| panic!("{e}\n{text}"));
        let got: Vec<(super::super::plan::When, Fault)> =
            parsed.faults.iter().map(|p| (p.when.clone(), p.fault.clone())).collect();
        let want: Vec<(super::super::plan::When, Fault)> =
            applied.iter().map(|a| (super::super::plan::When::At { ms: a.at_ms }, a.fault.clone())).collect();
        assert_eq!(got, want);
        assert_eq!(parsed.summary, "header");
    }

    /// A file with every kind of table survives its typed tables' own TOML serialization and parsing
    /// unchanged (the steps' tables are written key by key, by hand).
    #[test]
    fn a_whole_file_round_trips_through_toml() {
        let text = r#"# Round trip.
[scenario]
seeds = 3
canonical_seed = 2

[cluster]
members = 3

[[client]]
name = "writer"

[[client.step]]
name = "v1"
put = { key = "/a", value = "1" }
expect = { revision = 2 }

[[client.step]]
name = "t"
txn = { compare = [{ key = "/a", target = "mod", op = "==", value = "rev_of(v1)" }], success = [{ put = { key = "/a", value = "2" } }] }
expect = { succeeded = true }

[[client]]
name = "informer"

[[client.step]]
name = "w"
watch = { key = "/", prefix = true, start_revision = "rev_of(v1)" }
expect.events = [
  { type = "put", key = "/a", value = "1", mod_revision = "rev_of(v1)" },
  { type = "put", key = "/a", value = "2" },
]

[[workload]]
name = "k8s"
kind = "kubernetes"
clients = 4
ops = 100

[[failpoint]]
node = "etcd-1"
point = "before-watch-response-send"
action = "delay"
delay_ms = 30

[nemesis]
patterns = ["partition", "kill"]
quiet_ms = [100, 500]

[checks]
fail = ["Reliable"]
"#;
        let first = crate::scenario::parse("a.toml", text).unwrap();
        let again = format!("# Round trip.\n{}", toml::to_string(&first.file).unwrap());
        let second = crate::scenario::parse("a.toml", &again).unwrap_or_else(|e| panic!("{e}\n{again}"));
        assert_eq!(format!("# Round trip.\n{}", toml::to_string(&second.file).unwrap()), again);
        // Steps carry their `file:line`, which moves; what they do and expect must not.
        let steps = |s: &crate::scenario::Scenario| -> Vec<String> {
            s.clients.iter().flat_map(|c| &c.steps).map(|p| format!("{} {:?} {:?}", p.label, p.op, p.expect)).collect()
        };
        assert_eq!(steps(&first), steps(&second));
        assert_eq!(format!("{:?}", first.nemesis), format!("{:?}", second.nemesis));
        assert_eq!(first.workloads.len(), 1);
        assert_eq!(Size::of(&second.file), Size::of(&first.file));
        assert_eq!((first.hold, first.fail), (second.hold, second.fail));
    }

    /// The less common operations (nested txns, sorted and filtered reads, ignore flags, lease listings)
    /// survive the shrinker's rewrite too.
    #[test]
    fn every_operation_round_trips_through_toml() {
        let text = include_str!("../../tests/data/every-operation.toml");
        let first = crate::scenario::parse("every-operation.toml", text).unwrap();
        let again = format!("# Round trip.\n{}", toml::to_string(&first.file).unwrap());
        let second = crate::scenario::parse("every-operation.toml", &again).unwrap_or_else(|e| panic!("{e}\n{again}"));
        let steps = |s: &crate::scenario::Scenario| -> Vec<String> {
            s.clients.iter().flat_map(|c| &c.steps).map(|p| format!("{} {:?} {:?}", p.label, p.op, p.expect)).collect()
        };
        assert_eq!(steps(&first), steps(&second));
    }
}

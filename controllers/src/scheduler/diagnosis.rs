//! Why a pod fits no node, and the message that says so (`pkg/scheduler/framework/types.go`'s `FitError`
//! and `Diagnosis`, `interface.go`'s `Status`, and `schedule_one.go`'s `truncateMessage`, 1.32).
//!
//! Each node that failed carries the first failing filter's status; the message counts every reason over
//! the nodes (plus, for nodes without a status of their own, the reasons of the "absent" status), writes
//! each as `<count> <reason>`, sorts those strings as Go's `sort.Strings` (bytewise, so `"10 x"` sorts
//! before `"2 x"`), and joins them with `", "`: `0/3 nodes are available: 3 Insufficient cpu.` A PreFilter
//! rejection replaces the per-node part; the PostFilter (preemption) message follows with the same
//! `" %v."` separator, which is why upstream's messages end in `..` when that message ends in a period.

use std::collections::{BTreeMap, BTreeSet};

/// `ErrNoNodesAvailable`'s text.
pub const NO_NODES_AVAILABLE: &str = "no nodes available to schedule pods";
/// `validation.NoteLengthLimit`: an event's note is cut to this.
pub const NOTE_LENGTH_LIMIT: usize = 1024;

/// A rejection's code: whether preemption might help (`Unschedulable`) or not.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Code {
    Unschedulable,
    UnschedulableAndUnresolvable,
}

/// A plugin's rejection of a pod on a node.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Status {
    pub code: Code,
    pub reasons: Vec<String>,
    /// The plugin that rejected (empty for a status the framework made up).
    pub plugin: &'static str,
}

impl Status {
    pub fn new(code: Code, plugin: &'static str, reasons: &[&str]) -> Status {
        Status { code, reasons: reasons.iter().map(|r| r.to_string()).collect(), plugin }
    }

    /// `Status.Message()`: the reasons joined with `", "`.
    pub fn message(&self) -> String {
        self.reasons.join(", ")
    }
}

/// Every node's rejection, and what the framework adds to them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnosis {
    pub node_to_status: BTreeMap<String, Status>,
    /// The status of nodes absent from `node_to_status` (`AbsentNodesStatus`; reasonless by default).
    pub absent: Status,
    /// A PreFilter plugin's rejection, which stands for every node.
    pub prefilter_msg: String,
    /// The PostFilter (preemption) message.
    pub postfilter_msg: String,
    /// The plugins that rejected the pod somewhere (`UnschedulablePlugins`), which cluster events are
    /// matched against.
    pub unschedulable_plugins: BTreeSet<&'static str>,
}

impl Default for Diagnosis {
    fn default() -> Diagnosis {
        Diagnosis {
            node_to_status: BTreeMap::new(),
            absent: Status::new(Code::UnschedulableAndUnresolvable, "", &[]),
            prefilter_msg: String::new(),
            postfilter_msg: String::new(),
            unschedulable_plugins: BTreeSet::new(),
        }
    }
}

/// `FitError.Error()`: `0/<all> nodes are available: <prefilter or per-node reasons>. <postfilter>.`
pub fn fit_error_message(num_all_nodes: usize, diagnosis: &Diagnosis) -> String {
    let mut message = format!("0/{num_all_nodes} nodes are available:");
    if !diagnosis.prefilter_msg.is_empty() {
        message.push_str(&format!(" {}.", diagnosis.prefilter_msg));
    } else {
        let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
        for status in diagnosis.node_to_status.values() {
            for reason in &status.reasons {
                *counts.entry(reason).or_insert(0) += 1;
            }
        }
        let present = diagnosis.node_to_status.len();
        if present < num_all_nodes {
            for reason in &diagnosis.absent.reasons {
                *counts.entry(reason).or_insert(0) += num_all_nodes - present;
            }
        }
        let mut histogram: Vec<String> = counts.iter().map(|(reason, n)| format!("{n} {reason}")).collect();
        histogram.sort();
        if !histogram.is_empty() {
            message.push_str(&format!(" {}.", histogram.join(", ")));
        }
    }
    if !diagnosis.postfilter_msg.is_empty() {
        message.push_str(&format!(" {}.", diagnosis.postfilter_msg));
    }
    message
}

/// `truncateMessage`: a message longer than an event note may be is cut and ends in `" ..."`.
pub fn truncate_message(message: &str) -> String {
    if message.len() <= NOTE_LENGTH_LIMIT {
        return message.to_string();
    }
    let mut end = NOTE_LENGTH_LIMIT - " ...".len();
    while !message.is_char_boundary(end) {
        end -= 1;
    }
    format!("{} ...", &message[..end])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn diagnosis(statuses: &[(&str, &[&str])]) -> Diagnosis {
        let mut d = Diagnosis::default();
        for (node, reasons) in statuses {
            d.node_to_status.insert(node.to_string(), Status::new(Code::Unschedulable, "P", reasons));
        }
        d
    }

    #[test]
    fn messages_count_sort_and_join_reasons() {
        let cases: Vec<(usize, Diagnosis, &str)> = vec![
            (
                3,
                diagnosis(&[("a", &["Insufficient cpu"]), ("b", &["Insufficient cpu"]), ("c", &["Insufficient cpu"])]),
                "0/3 nodes are available: 3 Insufficient cpu.",
            ),
            // Reasons of one node each count; the strings sort bytewise, counts included.
            (
                4,
                diagnosis(&[
                    ("a", &["Insufficient memory", "Insufficient cpu"]),
                    ("b", &["Insufficient cpu"]),
                    ("c", &["node(s) had untolerated taint {k: v}"]),
                    ("d", &["Insufficient cpu"]),
                ]),
                "0/4 nodes are available: 1 Insufficient memory, 1 node(s) had untolerated taint {k: v}, 3 Insufficient cpu.",
            ),
            (
                12,
                {
                    let mut d = diagnosis(&[("a", &["x"]), ("b", &["x"])]);
                    d.absent = Status::new(Code::UnschedulableAndUnresolvable, "", &["y"]);
                    d
                },
                "0/12 nodes are available: 10 y, 2 x.",
            ),
            (
                2,
                Diagnosis { prefilter_msg: "pod affinity terms conflict".into(), ..diagnosis(&[("a", &["ignored"])]) },
                "0/2 nodes are available: pod affinity terms conflict.",
            ),
            (0, Diagnosis::default(), "0/0 nodes are available:"),
        ];
        for (all, d, want) in cases {
            assert_eq!(fit_error_message(all, &d), want);
        }
        let mut d = diagnosis(&[("a", &["Insufficient cpu"])]);
        d.postfilter_msg =
            "preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod.".into();
        assert_eq!(
            fit_error_message(1, &d),
            "0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod.."
        );
    }

    #[test]
    fn long_messages_are_cut_for_events() {
        assert_eq!(truncate_message("short"), "short");
        let long = "x".repeat(2000);
        let cut = truncate_message(&long);
        assert_eq!(cut.len(), NOTE_LENGTH_LIMIT);
        assert!(cut.ends_with("x ..."));
    }
}

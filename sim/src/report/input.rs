//! What a run hands to the report: the trace and the history it already recorded, the names behind the
//! history's client ids, what its Kubernetes clients did ([`KubeData`]), and how it was judged. Plain
//! data, filled in by the command that ran the simulation (`report::scenario` for a scenario run);
//! nothing here runs or records anything, so a report can never change a trace.

use crate::checker::Verdict;
use crate::history::{History, OpId, WatchId};

pub use super::kube_input::KubeData;

/// One finished (or interrupted) run, as recorded.
pub struct RunData<'a> {
    /// The scenario's name (or `traffic` for a generated run).
    pub title: &'a str,
    /// Where the run came from: the scenario file, or the command line that made it.
    pub source: &'a str,
    pub seed: u64,
    /// The trace lines, `t=1.311s NODE what`, in order.
    pub trace: &'a [String],
    /// The history of what clients asked and saw; `None` when the run did not hand one back (it panicked).
    pub history: Option<&'a History>,
    /// What the Kubernetes clients (scripted steps and `apiserver` workloads) asked and saw; empty for a
    /// run without apiservers, or one that panicked.
    pub kube: KubeData<'a>,
    /// The member nodes, in order (`etcd-1`, ...).
    pub members: Vec<String>,
    /// The name of history client `i` is `clients[i - 1]` (client 0 is the members themselves).
    pub clients: Vec<String>,
    /// Every checker's verdict, with what the scenario required of it.
    pub checks: Vec<CheckInput<'a>>,
    /// Failing expectations of scripted steps.
    pub findings: Vec<FindingInput>,
    /// Member panics the run recovered from (`etcd-2 panicked and was restarted`).
    pub panics: Vec<String>,
    /// Panic messages caught while the run went on, each with the number of trace lines written before it.
    pub panic_messages: Vec<(usize, String)>,
    /// The run itself panicked with this message: the trace ends where it stopped.
    pub aborted: Option<String>,
    pub timed_out: bool,
    /// The run's overall verdict (every expectation and check as required).
    pub passed: bool,
}

/// A checker's verdict and what the run required of it.
pub struct CheckInput<'a> {
    pub guarantee: String,
    /// `Some(true)`: must hold; `Some(false)`: must fail (a regression that reproduces a bug); `None`: not
    /// judged, shown for information.
    pub must_hold: Option<bool>,
    pub verdict: &'a Verdict,
}

/// A failing expectation of a scripted step, or a guarantee a step is judged by on its own.
pub struct FindingInput {
    /// `expectation`, or the guarantee's name (`InformerNeverTravelsBackInTime`).
    pub kind: String,
    /// `client/step`.
    pub who: String,
    /// `file:line` of the step.
    pub at: String,
    /// The expectation as written.
    pub what: String,
    /// What was seen, with the diff for sequences.
    pub detail: String,
    /// What on the timeline the finding is about, each with its role (`the step's request, op#3`, `went
    /// back to rv=7`), the most telling first; empty when the step sent nothing.
    pub targets: Vec<(Target, String)>,
}

/// Something a finding is about: in the history, or among the Kubernetes clients' record ([`KubeData`],
/// by index).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    Op(OpId),
    Watch(WatchId),
    /// A Kubernetes request or controller attempt: `kube.calls[i]`.
    KubeCall(usize),
    /// An event of a Kubernetes watch: `kube.events[i]`.
    KubeEvent(usize),
    /// Informer `i`'s belief `j`: `kube.informers[i].beliefs[j]`.
    Belief(usize, usize),
    /// Informer `i`'s store at the end of the run, against etcd's.
    Store(usize),
    /// The 410 Gone answers informer `i` got.
    Expired(usize),
}

impl RunData<'_> {
    /// The lane name of history client `id` (`c0` files what members do on their own).
    pub fn client_name(&self, id: u32) -> String {
        match id {
            0 => "members".to_string(),
            i => self.clients.get(i as usize - 1).cloned().unwrap_or_else(|| format!("c{i}")),
        }
    }
}

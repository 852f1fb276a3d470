//! The report's data: lanes on simulated time, and what is drawn on them (fault spans, markers, request
//! bars, watch ticks; for Kubernetes clients also their HTTP requests and watch events, and a lane per
//! informer with the lists and events it believed), the violations with what each points at, and the
//! trace. The HTML page and the
//! Perfetto trace are both written from this, and the tests read it directly, so that what a reader sees
//! is checked without a browser.
//!
//! Times are simulated nanoseconds since the run started. Items point at their trace line by index
//! into [`Report::trace`], which is how a click shows the full line.

/// Everything one report shows.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Report {
    pub title: String,
    pub source: String,
    pub seed: u64,
    /// The run's verdict in one line (`pass`, `FAIL: 2 problems`, `panicked: ...`).
    pub verdict: String,
    pub passed: bool,
    /// The last simulated time anything happened at.
    pub end: u64,
    pub lanes: Vec<Lane>,
    pub spans: Vec<Span>,
    pub markers: Vec<Marker>,
    pub bars: Vec<Bar>,
    pub ticks: Vec<Tick>,
    pub violations: Vec<Violation>,
    /// Every checker's line (`Reliable must fail: FAIL ...`), in guarantee order.
    pub checks: Vec<CheckLine>,
    pub trace: Vec<String>,
    /// The message of the panic that stopped the run, if one did.
    pub aborted: Option<String>,
}

/// What a lane stands for; the page orders and colours lanes by it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum LaneKind {
    /// The cluster as a whole: network-wide faults, the start and the end of the run.
    Cluster,
    /// An etcd member.
    Member,
    /// Any other server node seen in the trace (an apiserver).
    Server,
    /// A client, scripted or generated; requests and watches live here (etcd's and apiservers').
    Client,
    /// An informer of a Kubernetes client: each list and watch event it believed, its relists, 410s,
    /// tombstones and restarts, and its store at the end against etcd's.
    Informer,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Lane {
    pub name: String,
    pub kind: LaneKind,
}

/// What a shaded span is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum SpanKind {
    Partition,
    Clog,
    /// Packet loss or added latency, network-wide.
    Network,
    /// Killed or crashed, until restarted.
    Down,
    Paused,
    /// A failpoint armed on the node, from arming to the end of the run.
    Failpoint,
    /// A watch's stream, from its open to its end.
    Watch,
}

/// A shaded interval on one lane.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Span {
    pub lane: usize,
    pub kind: SpanKind,
    pub start: u64,
    pub end: u64,
    pub label: String,
    /// The trace line that began it.
    pub line: Option<usize>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum MarkerKind {
    Leader,
    SteppedDown,
    Compaction,
    SnapshotInstall,
    FailpointHit,
    /// A fault's end (heal, unclog, restart, resume) or a one-off fault (release).
    Fault,
    /// A member panic, or the panic that stopped the run.
    Panic,
    Lease,
    /// Anything else a node wrote (a wait that held, a step not sent, the run's start and end).
    Note,
    /// Where a violation's evidence is that no bar or tick shows (a missing watch event's place), or
    /// where a failing Kubernetes step or informer guarantee points.
    Violation,
    /// A relist announced a `DeletedFinalStateUnknown` tombstone: a DELETE the informer's watch missed.
    Tombstone,
    /// An informer's list or watch answered 410 Gone (or a watch's `ERROR 410`).
    Expired,
    /// An informer's process restarted: it forgot its store and its resourceVersion.
    InformerRestart,
    /// An informer's store at the end of the run, the same as etcd's objects.
    StoreMatches,
    /// An informer's store at the end of the run, not the same as etcd's objects (or etcd unread).
    StoreDiffers,
}

/// A point in time on one lane.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Marker {
    pub lane: usize,
    pub kind: MarkerKind,
    pub at: u64,
    pub label: String,
    pub line: Option<usize>,
}

/// How a request ended, as its bar's colour.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Outcome {
    Ok,
    /// A definite error the server answered.
    Error,
    /// No answer, or the run ended first: it may or may not have taken effect.
    Unknown,
    /// It never left the client.
    NotSent,
}

/// A request from invocation to response.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Bar {
    pub lane: usize,
    pub start: u64,
    pub end: u64,
    pub outcome: Outcome,
    /// The request and its outcome in one line, as the trace shows it.
    pub label: String,
    /// The full request and response as JSON, for a click; fields at their defaults (false, 0, empty,
    /// null) left out, which halves a large history's page.
    pub detail: serde_json::Value,
    pub line: Option<usize>,
    /// The history's op index, when it came from the history.
    pub op: Option<usize>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum TickKind {
    /// An etcd watch event, and etcd watch responses without events.
    Event,
    Created,
    Progress,
    Canceled,
    /// An event of a Kubernetes watch (a `kube` step's or an `apiserver` workload's): ADDED, MODIFIED,
    /// DELETED or BOOKMARK.
    KubeEvent,
    /// A Kubernetes watch's `ERROR` event (410 Gone, mostly).
    KubeError,
    /// An informer's first list: what it believed from then on.
    InformerList,
    /// A list after the first (after a 410, a failed watch, or a restart).
    InformerRelist,
    /// A watch event an informer applied to its store (a bookmark too).
    InformerEvent,
}

impl TickKind {
    /// Whether this is an etcd watch's, found by its history indices.
    pub fn is_etcd(self) -> bool {
        matches!(self, TickKind::Event | TickKind::Created | TickKind::Progress | TickKind::Canceled)
    }
}

/// One watch response's event (or a created, progress or cancel response) on the watching client's lane;
/// or a Kubernetes watch's event there; or a list or event on an informer's lane.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tick {
    pub lane: usize,
    pub at: u64,
    pub kind: TickKind,
    /// The history's watch index (`watch#N`); for a Kubernetes watch or an informer, its number among the
    /// run's Kubernetes streams (which colours its ticks).
    pub watch: usize,
    /// The event's revision (the header revision for a response without events; a Kubernetes event's or
    /// list's resourceVersion).
    pub revision: i64,
    pub label: String,
    pub line: Option<usize>,
    /// Where it is in the history: response and event index (`None` for a response without events). A
    /// Kubernetes tick has response 0 and its index in its stream.
    pub response: usize,
    pub event: Option<usize>,
}

/// What a violation points at.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Pointer {
    Bar(usize),
    Tick(usize),
    Marker(usize),
}

/// A broken guarantee, a failing expectation, a panic or a timeout.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Violation {
    /// `Reliable`, `expectation`, `panic`, `time limit`.
    pub kind: String,
    /// One line: what broke.
    pub title: String,
    /// The evidence in full (the checker's details, the expectation's diff).
    pub detail: String,
    /// The scenario requires this failure (a regression reproducing a bug): shown, but not a problem.
    pub expected: bool,
    /// What it points at on the timeline, each with its role (`does not fit`, `missing event's place`).
    pub pointers: Vec<(Pointer, String)>,
    /// Where to jump to: the earliest time it points at, and that item's lane.
    pub at: Option<(usize, u64)>,
}

/// One checker's verdict as the summary lists it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CheckLine {
    pub guarantee: String,
    pub requirement: String,
    pub ok: bool,
    pub verdict: String,
}

impl Report {
    /// The lane called `name`.
    pub fn lane(&self, name: &str) -> Option<usize> {
        self.lanes.iter().position(|l| l.name == name)
    }

    /// Violations that are problems (not required by the scenario).
    pub fn problems(&self) -> impl Iterator<Item = &Violation> {
        self.violations.iter().filter(|v| !v.expected)
    }

    /// The requests (etcd's, apiservers', controllers' attempts and informers' lists) and the watch
    /// events (etcd's, Kubernetes watches' and informers') the report shows.
    pub fn counts(&self) -> Counts {
        let lists =
            self.ticks.iter().filter(|t| matches!(t.kind, TickKind::InformerList | TickKind::InformerRelist)).count();
        let events = self.ticks.iter().filter(|t| {
            matches!(t.kind, TickKind::Event | TickKind::KubeEvent | TickKind::KubeError | TickKind::InformerEvent)
        });
        Counts {
            requests: self.bars.len() + lists,
            watch_events: events.count(),
            informers: self.lanes.iter().filter(|l| l.kind == LaneKind::Informer).count(),
        }
    }
}

/// What a report shows, counted (the summary line and `kubesim run --html`'s message).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    pub requests: usize,
    pub watch_events: usize,
    pub informers: usize,
}

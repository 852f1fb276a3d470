//! Reads the trace's text back into timed events: `t=1.311s etcd-2 leader term=3` is a leader marker on
//! etcd-2's lane at 1.311 s. The trace is the one record of what nodes did on their own (faults, leaders,
//! compactions, snapshot installs, failpoints, panics), so the report reads those from it rather than
//! asking the run to record them twice. Requests and watch events come from the history and the
//! Kubernetes steps' records instead, which have their start times; their trace lines are matched to them
//! for the full text.

/// One trace line, split.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Line<'a> {
    /// Simulated nanoseconds (the trace has millisecond precision).
    pub at: u64,
    pub node: &'a str,
    pub text: &'a str,
}

/// Splits `t=1.311s NODE TEXT`; `None` for a line of another shape.
pub fn parse(line: &str) -> Option<Line<'_>> {
    let rest = line.strip_prefix("t=")?;
    let (time, rest) = rest.split_once(' ')?;
    let (secs, millis) = time.strip_suffix('s')?.split_once('.')?;
    let secs: u64 = secs.parse().ok()?;
    let millis: u64 = millis.parse().ok()?;
    let (node, text) = rest.split_once(' ').unwrap_or((rest, ""));
    Some(Line { at: secs * 1_000_000_000 + millis * 1_000_000, node, text })
}

/// What a line says, as far as the timeline cares.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Kind<'a> {
    /// A request's result on a client (`put /a=1 -> ok rev=2`): the request and the outcome's text.
    Request {
        request: &'a str,
        outcome: &'a str,
    },
    /// A line about a watch (`watch#3 event put /a rev=5`): the watch's index and the rest.
    Watch {
        watch: usize,
        what: &'a str,
    },
    /// A network fault (`partition [a] | [b]`, `heal`), written by the `fault` pseudo-node.
    Fault(Fault<'a>),
    Leader,
    SteppedDown,
    Compacted,
    SnapshotRestored,
    /// A failpoint armed (`arm before-write-ack drop`): the point and the rest.
    Armed {
        point: &'a str,
    },
    FailpointHit,
    /// A member killed by a crash failpoint, or brought back after one.
    Crash,
    Restart,
    Panic,
    Lease,
    Other,
}

/// The faults the `fault` pseudo-node writes (`sim::fault::Fault`'s `Display`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Fault<'a> {
    /// Both partitions; `nodes` is every node on either side.
    Partition {
        one_way: bool,
        nodes: Vec<&'a str>,
    },
    Heal,
    Clog(&'a str),
    Unclog(&'a str),
    ClogLink(&'a str, &'a str),
    UnclogLink(&'a str, &'a str),
    /// Packet loss or latency: network-wide until a heal.
    Network,
    Kill(&'a str),
    Restart(&'a str),
    Pause(&'a str),
    Resume(&'a str),
    Release(&'a str),
    Unknown,
}

/// Request verbs that are traced but not filed in the history (they change nothing a checker reads).
const TRACE_ONLY_REQUESTS: [&str; 3] = ["lease-keepalive", "lease-ttl", "lease-leases"];

/// What `line` says.
pub fn classify<'a>(line: &Line<'a>) -> Kind<'a> {
    let text = line.text;
    if line.node == "fault" {
        return Kind::Fault(fault(text));
    }
    if let Some(rest) = text.strip_prefix("watch#") {
        let (n, what) = rest.split_once(' ').unwrap_or((rest, ""));
        if let Ok(watch) = n.parse() {
            return Kind::Watch { watch, what };
        }
    }
    let first = text.split(' ').next().unwrap_or("");
    match first {
        "leader" => return Kind::Leader,
        "stepped" => return Kind::SteppedDown,
        "compacted" => return Kind::Compacted,
        "snapshot" if text.starts_with("snapshot restored") => return Kind::SnapshotRestored,
        "arm" => return Kind::Armed { point: text.split(' ').nth(1).unwrap_or("") },
        "failpoint" => return Kind::FailpointHit,
        "crash" => return Kind::Crash,
        "restart" => return Kind::Restart,
        "restarted" if text.contains("panic") => return Kind::Panic,
        "lease-expired" | "lease-revoked" => return Kind::Lease,
        _ => {}
    }
    if let Some((request, outcome)) = text.split_once(" -> ") {
        if !TRACE_ONLY_REQUESTS.contains(&first) && !request.contains(" not sent") {
            return Kind::Request { request, outcome };
        }
    }
    Kind::Other
}

/// Every node name in `[a b] | [c]` or `[a] -> [b c]`.
fn names(s: &str) -> Vec<&str> {
    s.split(['[', ']', ' ', '|']).filter(|w| !w.is_empty() && *w != "->").collect()
}

fn link(s: &str) -> Option<(&str, &str)> {
    s.split_once(" -> ")
}

fn fault(text: &str) -> Fault<'_> {
    let (verb, rest) = text.split_once(' ').unwrap_or((text, ""));
    match verb {
        "partition" => Fault::Partition { one_way: false, nodes: names(rest) },
        "partition-one-way" => Fault::Partition { one_way: true, nodes: names(rest) },
        "heal" => Fault::Heal,
        "clog" => Fault::Clog(rest),
        "unclog" => Fault::Unclog(rest),
        "clog-link" => link(rest).map_or(Fault::Unknown, |(a, b)| Fault::ClogLink(a, b)),
        "unclog-link" => link(rest).map_or(Fault::Unknown, |(a, b)| Fault::UnclogLink(a, b)),
        "packet-loss" | "latency" => Fault::Network,
        "kill" => Fault::Kill(rest),
        "restart" => Fault::Restart(rest),
        "pause" => Fault::Pause(rest),
        "resume" => Fault::Resume(rest),
        "release" => Fault::Release(rest.split(' ').next().unwrap_or("")),
        _ => Fault::Unknown,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_split_into_time_node_and_text() {
        let l = parse("t=12.034s etcd-2 leader term=3").unwrap();
        assert_eq!((l.at, l.node, l.text), (12_034_000_000, "etcd-2", "leader term=3"));
        assert_eq!(parse("t=0.000s sim end").unwrap().text, "end");
        assert_eq!(parse("no time here"), None);
        assert_eq!(parse("t=x.000s a b"), None);
    }

    #[test]
    fn kinds_are_read_from_the_text_the_harness_writes() {
        let k = |s: &str| format!("{:?}", classify(&parse(s).unwrap()));
        assert_eq!(k("t=1.000s w put /a=1 -> ok rev=2"), "Request { request: \"put /a=1\", outcome: \"ok rev=2\" }");
        assert_eq!(k("t=1.000s w lease-keepalive 5 -> ok ttl=5"), "Other");
        assert_eq!(k("t=1.000s i watch#3 event put /a rev=5"), "Watch { watch: 3, what: \"event put /a rev=5\" }");
        assert_eq!(
            k("t=1.000s fault partition [etcd-1 c1] | [etcd-2]"),
            "Fault(Partition { one_way: false, nodes: [\"etcd-1\", \"c1\", \"etcd-2\"] })"
        );
        assert_eq!(
            k("t=1.000s fault partition-one-way [etcd-1] -> [c1 c2]"),
            "Fault(Partition { one_way: true, nodes: [\"etcd-1\", \"c1\", \"c2\"] })"
        );
        assert_eq!(k("t=1.000s fault clog-link etcd-1 -> etcd-2"), "Fault(ClogLink(\"etcd-1\", \"etcd-2\"))");
        assert_eq!(k("t=1.000s fault packet-loss 12.5%"), "Fault(Network)");
        assert_eq!(k("t=1.000s etcd-1 snapshot restored index=40 revision=33"), "SnapshotRestored");
        assert_eq!(k("t=1.000s etcd-1 arm before-write-ack drop"), "Armed { point: \"before-write-ack\" }");
        assert_eq!(k("t=1.000s etcd-1 restarted after a panic"), "Panic");
    }
}

//! Completion indexes of Indexed Jobs (kube-controller-manager 1.32, `pkg/controller/job/indexed_job_utils.go`:
//! `orderedIntervals`, `parseIndexesFromString`, `calculateSucceededIndexes`, `firstPendingIndexes`,
//! `appendDuplicatedIndexPodsForRemoval`). Sans-IO.
//!
//! `status.completedIndexes` is a compressed list of intervals (`1,3-5,7`). An index is pending while it
//! has no succeeded pod, no active pod and (when only failed pods are replaced) no terminating pod; new
//! pods take the lowest pending indexes. Active pods with an index out of range, without one, or sharing
//! one with another active pod are surplus.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use super::pods::{completion_index, has_tracking_finalizer, phase};

/// `parseIndexesFromString`: the indexes below `completions` (invalid parts are skipped).
pub fn parse(text: &str, completions: i64) -> BTreeSet<i64> {
    let mut set = BTreeSet::new();
    for part in text.split(',').filter(|p| !p.is_empty()) {
        let (first, last) = match part.split_once('-') {
            Some((a, b)) => (a.parse::<i64>(), b.parse::<i64>()),
            None => (part.parse::<i64>(), part.parse::<i64>()),
        };
        let (Ok(first), Ok(last)) = (first, last) else { continue };
        if first < 0 || first > last || first >= completions {
            continue;
        }
        set.extend(first..=last.min(completions - 1));
    }
    set
}

/// `orderedIntervals.String`: runs of two or more as `a-b`.
pub fn format(set: &BTreeSet<i64>) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut run: Option<(i64, i64)> = None;
    let flush = |run: (i64, i64), parts: &mut Vec<String>| {
        parts.push(if run.0 == run.1 { run.0.to_string() } else { format!("{}-{}", run.0, run.1) });
    };
    for &ix in set {
        run = match run {
            Some((first, last)) if ix == last + 1 => Some((first, ix)),
            Some(done) => {
                flush(done, &mut parts);
                Some((ix, ix))
            }
            None => Some((ix, ix)),
        };
    }
    if let Some(done) = run {
        flush(done, &mut parts);
    }
    parts.join(",")
}

/// `calculateSucceededIndexes`: the indexes recorded in the status, and those plus the valid indexes of
/// succeeded pods still carrying the tracking finalizer.
pub fn succeeded_indexes(job: &Value, pods: &[Value], completions: i64) -> (BTreeSet<i64>, BTreeSet<i64>) {
    let previous = parse(job.pointer("/status/completedIndexes").and_then(Value::as_str).unwrap_or(""), completions);
    let mut all = previous.clone();
    for pod in pods.iter().filter(|p| phase(p) == "Succeeded" && has_tracking_finalizer(p)) {
        if let Some(ix) = completion_index(pod).filter(|ix| *ix < completions) {
            all.insert(ix);
        }
    }
    (previous, all)
}

/// `firstPendingIndexes`: up to `count` of the lowest indexes below `completions` not in `non_pending`.
pub fn first_pending(non_pending: &BTreeSet<i64>, count: usize, completions: i64) -> Vec<i64> {
    (0..completions.max(0)).filter(|ix| !non_pending.contains(ix)).take(count).collect()
}

/// `appendDuplicatedIndexPodsForRemoval`: splits active `pods` into those to remove (no valid index, or a
/// second pod of an index) and those left. Of the pods sharing an index, the one `delete_before` ranks
/// last stays.
pub fn split_duplicates(
    pods: &[Value],
    completions: i64,
    delete_before: impl Fn(&Value, &Value) -> bool,
) -> (Vec<Value>, Vec<Value>) {
    let mut remove = Vec::new();
    let mut by_index: BTreeMap<i64, Vec<Value>> = BTreeMap::new();
    for pod in pods {
        match completion_index(pod).filter(|ix| *ix < completions) {
            Some(ix) => by_index.entry(ix).or_default().push(pod.clone()),
            None => remove.push(pod.clone()),
        }
    }
    let mut left = Vec::new();
    for (_, mut same) in by_index {
        same.sort_by(|a, b| order(&delete_before, a, b));
        let keep = same.pop().expect("each index has a pod");
        remove.extend(same);
        left.push(keep);
    }
    (remove, left)
}

/// A total order from a "delete first" predicate, for a stable sort.
pub fn order(delete_before: &impl Fn(&Value, &Value) -> bool, a: &Value, b: &Value) -> std::cmp::Ordering {
    if delete_before(a, b) {
        std::cmp::Ordering::Less
    } else if delete_before(b, a) {
        std::cmp::Ordering::Greater
    } else {
        std::cmp::Ordering::Equal
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::pods::{COMPLETION_INDEX_ANNOTATION, JOB_TRACKING_FINALIZER};
    use super::*;

    fn pod(name: &str, ix: Option<&str>, phase: &str, finalizer: bool) -> Value {
        let mut pod = json!({"metadata": {"name": name}, "status": {"phase": phase}});
        if let Some(ix) = ix {
            pod["metadata"]["annotations"] = json!({COMPLETION_INDEX_ANNOTATION: ix});
        }
        if finalizer {
            pod["metadata"]["finalizers"] = json!([JOB_TRACKING_FINALIZER]);
        }
        pod
    }

    #[test]
    fn intervals_round_trip() {
        let cases = [
            ("", 5, vec![], ""),
            ("1,3-5,7", 10, vec![1, 3, 4, 5, 7], "1,3-5,7"),
            ("0-2,3", 10, vec![0, 1, 2, 3], "0-3"),
            ("2-9", 4, vec![2, 3], "2-3"),
            ("x,1,5-2", 10, vec![1], "1"),
        ];
        for (text, completions, want, formatted) in cases {
            let set = parse(text, completions);
            assert_eq!(set.iter().copied().collect::<Vec<_>>(), want, "{text}");
            assert_eq!(format(&set), formatted, "{text}");
        }
    }

    #[test]
    fn succeeded_and_pending_indexes() {
        let job = json!({"status": {"completedIndexes": "0"}});
        let pods = [
            pod("a", Some("2"), "Succeeded", true),
            pod("b", Some("3"), "Succeeded", false),
            pod("c", Some("9"), "Succeeded", true),
            pod("d", Some("1"), "Running", true),
        ];
        let (previous, all) = succeeded_indexes(&job, &pods, 5);
        assert_eq!(previous, BTreeSet::from([0]));
        assert_eq!(all, BTreeSet::from([0, 2]));
        let non_pending = BTreeSet::from([0, 1, 2]);
        assert_eq!(first_pending(&non_pending, 2, 5), vec![3, 4]);
        assert_eq!(first_pending(&non_pending, 5, 5), vec![3, 4]);
        assert_eq!(first_pending(&BTreeSet::new(), 0, 5), Vec::<i64>::new());
    }

    #[test]
    fn duplicates_and_invalid_indexes_are_surplus() {
        let pods = [
            pod("a", Some("0"), "Running", true),
            pod("b", Some("0"), "Pending", true),
            pod("c", None, "Running", true),
            pod("d", Some("7"), "Running", true),
            pod("e", Some("1"), "Running", true),
        ];
        // Pending pods go first, as `controller.ActivePods` ranks them.
        let pending_first =
            |a: &Value, b: &Value| a["status"]["phase"] == "Pending" && b["status"]["phase"] != "Pending";
        let (remove, left) = split_duplicates(&pods, 5, pending_first);
        let names =
            |v: &[Value]| v.iter().map(|p| p["metadata"]["name"].as_str().unwrap().to_string()).collect::<Vec<_>>();
        assert_eq!(names(&remove), ["c", "d", "b"]);
        assert_eq!(names(&left), ["a", "e"]);
    }
}

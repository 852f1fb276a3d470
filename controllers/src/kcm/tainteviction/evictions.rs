//! Which pods the taint eviction controller deletes, and when (kube-controller-manager 1.32,
//! `pkg/controller/tainteviction/taint_eviction.go` `processPodOnNode`, `getMinTolerationTime`,
//! `getNoExecuteTaints`; `timed_workers.go`; `pkg/apis/core/v1/helper` `GetMatchingTolerations` and
//! core/v1's `ToleratesTaint`). Sans-IO: taints and tolerations are the JSON objects of `spec.taints` and
//! `spec.tolerations`, times the controller's clock in unix µs.
//!
//! A pod that does not tolerate every NoExecute taint of its node is due at once; one that tolerates them
//! all is due after the shortest `tolerationSeconds` among the tolerations used, counted from when the
//! controller first scheduled it; one that tolerates them all forever is never due. A deletion that went
//! through stays on record (as upstream's nil worker) so that it is not scheduled twice.

use std::collections::BTreeMap;

use serde_json::Value;

fn field<'a>(v: &'a Value, f: &str) -> &'a str {
    v.get(f).and_then(Value::as_str).unwrap_or("")
}

/// `getNoExecuteTaints`.
pub fn no_execute_taints(node: &Value) -> Vec<Value> {
    let taints = node.pointer("/spec/taints").and_then(Value::as_array).cloned().unwrap_or_default();
    taints.into_iter().filter(|t| field(t, "effect") == "NoExecute").collect()
}

/// `ToleratesTaint`: the effect and key match where the toleration names them, and the value matches
/// under `Equal` (the default) or anything under `Exists`.
pub fn tolerates(toleration: &Value, taint: &Value) -> bool {
    let effect = field(toleration, "effect");
    let key = field(toleration, "key");
    if (!effect.is_empty() && effect != field(taint, "effect")) || (!key.is_empty() && key != field(taint, "key")) {
        return false;
    }
    match field(toleration, "operator") {
        "" | "Equal" => field(toleration, "value") == field(taint, "value"),
        "Exists" => true,
        _ => false,
    }
}

/// `GetMatchingTolerations`: whether every taint is tolerated, and the first toleration that tolerates each.
pub fn matching_tolerations(taints: &[Value], tolerations: &[Value]) -> (bool, Vec<Value>) {
    let mut used = Vec::new();
    for taint in taints {
        match tolerations.iter().find(|t| tolerates(t, taint)) {
            Some(t) => used.push(t.clone()),
            None => return (false, Vec::new()),
        }
    }
    (true, used)
}

/// `getMinTolerationTime` in µs: the shortest `tolerationSeconds` (0 for none used, or one of 0 or less),
/// `None` when every toleration used is forever.
pub fn min_toleration_us(used: &[Value]) -> Option<i64> {
    if used.is_empty() {
        return Some(0);
    }
    let mut min: Option<i64> = None;
    for seconds in used.iter().filter_map(|t| t.get("tolerationSeconds").and_then(Value::as_i64)) {
        if seconds <= 0 {
            return Some(0);
        }
        min = Some(min.map_or(seconds, |m| m.min(seconds)));
    }
    min.map(|s| s * 1_000_000)
}

/// One pod's scheduled deletion.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Work {
    /// To fire at `fire_us`; scheduled at `created_us`.
    Pending { created_us: i64, fire_us: i64 },
    /// Fired and done: kept so that the pod is not scheduled again.
    Done,
}

/// The scheduled deletions by pod key (`namespace/name`): `TimedWorkerQueue`.
#[derive(Clone, Debug, Default)]
pub struct Evictions {
    work: BTreeMap<String, Work>,
}

/// What processing a pod asks the shell to say: how many `Cancelling deletion` events (0 or 1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Processed {
    pub cancelled: bool,
}

impl Evictions {
    /// `CancelWork`: drops the pod's entry; whether a pending deletion was cancelled (which upstream
    /// announces with an event).
    pub fn cancel(&mut self, key: &str) -> bool {
        matches!(self.work.remove(key), Some(Work::Pending { .. }))
    }

    /// `AddWork`: schedules unless the pod has an entry already.
    fn add(&mut self, key: &str, created_us: i64, fire_us: i64) {
        self.work.entry(key.to_string()).or_insert(Work::Pending { created_us, fire_us });
    }

    pub fn get(&self, key: &str) -> Option<Work> {
        self.work.get(key).copied()
    }

    /// `processPodOnNode`: the pod `key` with `tolerations` on a node with NoExecute `taints`, at `now_us`.
    pub fn process_pod(&mut self, key: &str, tolerations: &[Value], taints: &[Value], now_us: i64) -> Processed {
        if taints.is_empty() {
            return Processed { cancelled: self.cancel(key) };
        }
        let (all_tolerated, used) = matching_tolerations(taints, tolerations);
        if !all_tolerated {
            // Deleted right away; whatever was scheduled is replaced.
            let cancelled = self.cancel(key);
            self.add(key, now_us, now_us);
            return Processed { cancelled };
        }
        let Some(min_us) = min_toleration_us(&used) else {
            return Processed { cancelled: self.cancel(key) };
        };
        let trigger_us = now_us + min_us;
        let mut created_us = now_us;
        let mut cancelled = false;
        if let Some(Work::Pending { created_us: was, .. }) = self.get(key) {
            // An earlier schedule that would fire sooner stands.
            if was + min_us < trigger_us {
                return Processed { cancelled: false };
            }
            created_us = was;
            cancelled = self.cancel(key);
        }
        self.add(key, created_us, trigger_us);
        Processed { cancelled }
    }

    /// The earliest pending deletion's time.
    pub fn next_fire_us(&self) -> Option<i64> {
        self.work
            .values()
            .filter_map(|w| match w {
                Work::Pending { fire_us, .. } => Some(*fire_us),
                Work::Done => None,
            })
            .min()
    }

    /// The pods whose deletion is due at `now_us`, in key order.
    pub fn due(&self, now_us: i64) -> Vec<String> {
        self.work
            .iter()
            .filter(|(_, w)| matches!(w, Work::Pending { fire_us, .. } if *fire_us <= now_us))
            .map(|(k, _)| k.clone())
            .collect()
    }

    /// A fired deletion's outcome: kept as done when it went through, forgotten when it failed.
    pub fn fired(&mut self, key: &str, ok: bool) {
        if ok {
            self.work.insert(key.to_string(), Work::Done);
        } else {
            self.work.remove(key);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const S: i64 = 1_000_000;

    fn unreachable() -> Value {
        json!({"key": "node.kubernetes.io/unreachable", "effect": "NoExecute", "timeAdded": "t"})
    }

    #[test]
    fn tolerations_match_as_upstreams() {
        let t = json!({"key": "k", "value": "v", "effect": "NoExecute"});
        // (toleration, tolerates)
        let cases = [
            (json!({"operator": "Exists"}), true),
            (json!({"key": "k", "operator": "Exists"}), true),
            (json!({"key": "k", "value": "v"}), true),
            (json!({"key": "k", "operator": "Equal", "value": "w"}), false),
            (json!({"key": "k", "operator": "Exists", "effect": "NoSchedule"}), false),
            (json!({"key": "other", "operator": "Exists"}), false),
            (json!({"key": "k", "operator": "Lt", "value": "v"}), false),
        ];
        for (toleration, want) in cases {
            assert_eq!(tolerates(&toleration, &t), want, "{toleration}");
        }
    }

    #[test]
    fn eviction_times_follow_the_shortest_toleration_used() {
        let exists = |seconds: Option<i64>| {
            let mut t = json!({"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute"});
            if let Some(s) = seconds {
                t["tolerationSeconds"] = json!(s);
            }
            t
        };
        // (tolerations, fire time after now: None for never)
        let cases = [
            (vec![], Some(0)),
            (vec![json!({"key": "other", "operator": "Exists"})], Some(0)),
            (vec![exists(Some(2))], Some(2 * S)),
            (vec![exists(Some(300)), exists(Some(2))], Some(300 * S)),
            (vec![exists(Some(-5))], Some(0)),
            (vec![exists(None)], None),
            (vec![json!({"operator": "Exists"})], None),
        ];
        for (tolerations, want) in cases {
            let mut e = Evictions::default();
            e.process_pod("ns/p", &tolerations, &[unreachable()], 10 * S);
            assert_eq!(e.next_fire_us().map(|f| f - 10 * S), want, "{tolerations:?}");
        }
        let two = [unreachable(), json!({"key": "b", "effect": "NoExecute"})];
        let (all, used) =
            matching_tolerations(&two, &[exists(Some(7)), json!({"operator": "Exists", "tolerationSeconds": 3})]);
        assert!(all);
        assert_eq!(min_toleration_us(&used), Some(3 * S));
    }

    #[test]
    fn a_schedule_keeps_its_start_and_cancels_when_tolerated_forever() {
        let two = [json!({"key": "node.kubernetes.io/unreachable", "operator": "Exists", "tolerationSeconds": 2})];
        let mut e = Evictions::default();
        assert!(!e.process_pod("ns/p", &two, &[unreachable()], 0).cancelled);
        // Seen again later (another taint change): the first schedule stands.
        e.process_pod("ns/p", &two, &[unreachable()], S);
        assert_eq!(e.get("ns/p"), Some(Work::Pending { created_us: 0, fire_us: 2 * S }));
        assert_eq!(e.due(S), Vec::<String>::new());
        assert_eq!(e.due(2 * S), vec!["ns/p".to_string()]);
        // Tolerated forever now: cancelled, with an event.
        assert!(e.process_pod("ns/p", &[json!({"operator": "Exists"})], &[unreachable()], S).cancelled);
        assert_eq!(e.next_fire_us(), None);
        // Done work is not scheduled again, and cancelling it is silent.
        e.process_pod("ns/p", &two, &[unreachable()], 3 * S);
        e.fired("ns/p", true);
        e.process_pod("ns/p", &two, &[unreachable()], 4 * S);
        assert_eq!(e.get("ns/p"), Some(Work::Done));
        assert!(!e.cancel("ns/p"));
        assert_eq!(e.get("ns/p"), None);
        assert_eq!(
            no_execute_taints(&json!({"spec": {"taints": [unreachable(),
            {"key": "x", "effect": "NoSchedule"}]}})),
            vec![unreachable()]
        );
    }
}

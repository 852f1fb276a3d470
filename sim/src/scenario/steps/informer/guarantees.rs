//! The two guarantees client-go's informers rely on, which every informer step is judged by whatever its
//! `expect` says:
//!
//! - `InformerNeverTravelsBackInTime`: the resourceVersions an informer is told never go below one it was
//!   told before: not by an event, and not by a relist. A relist answered from a cache behind what the
//!   informer already saw is the time travel of kubernetes #59848 (Sieve's A1); the finding names the
//!   apiserver that served it and the one that had served the newer state.
//! - `InformerMatchesEtcdAtQuiescence`: once the run has settled, the informer's store holds exactly etcd's
//!   objects under its prefix, each at its mod revision. A missed DELETE left in the store (a stale
//!   tombstone handlers never got) or a missed update shows here.

use std::collections::BTreeMap;

use crate::scenario::steps::judging::StepJudge;
use crate::scenario::steps::observed::{Belief, InformerLog};

/// The guarantees' names, as findings show them.
pub const NEVER_BACK_IN_TIME: &str = "InformerNeverTravelsBackInTime";
pub const MATCHES_ETCD: &str = "InformerMatchesEtcdAtQuiescence";

/// Files both guarantees' findings for one informer.
pub fn judge(j: &mut StepJudge<'_>, log: &InformerLog) {
    let travels = time_travels(&log.beliefs);
    let detail = match travels.first() {
        None => format!("{} beliefs, {} relists, never back", log.beliefs.len(), log.relists),
        Some((newer, older)) => format!(
            "{} time travel(s); first: at {} ms, {older}, after rv={} from {} (at {} ms)",
            travels.len(),
            older.at_ms,
            newer.rv,
            newer.apiserver,
            newer.at_ms
        ),
    };
    j.push(NEVER_BACK_IN_TIME, NEVER_BACK_IN_TIME, travels.is_empty(), detail);
    match &log.etcd {
        None => j.fail(MATCHES_ETCD, MATCHES_ETCD, "etcd could not be read at the end of the run".into()),
        Some(etcd) => {
            let diff = store_diff(&log.store, etcd);
            let detail = if diff.is_empty() {
                format!("{} objects, as etcd", etcd.len())
            } else {
                format!("store differs from etcd: {}", diff.join("; "))
            };
            j.push(MATCHES_ETCD, MATCHES_ETCD, diff.is_empty(), detail);
        }
    }
}

/// Every belief whose resourceVersion is below the highest one before it, with the belief that set that
/// highest one.
pub fn time_travels(beliefs: &[Belief]) -> Vec<(&Belief, &Belief)> {
    let mut out = Vec::new();
    let mut newest: Option<&Belief> = None;
    for b in beliefs {
        match newest {
            Some(n) if b.rv < n.rv => out.push((n, b)),
            Some(n) if b.rv == n.rv => {}
            _ => newest = Some(b),
        }
    }
    out
}

/// How the store differs from etcd's objects: each name missing, extra, or at another resourceVersion.
pub fn store_diff(store: &BTreeMap<String, u64>, etcd: &BTreeMap<String, u64>) -> Vec<String> {
    let mut out = Vec::new();
    for (name, rv) in etcd {
        match store.get(name) {
            None => out.push(format!("{name} (rv={rv}) missing")),
            Some(have) if have != rv => out.push(format!("{name} at rv={have}, etcd has rv={rv}")),
            Some(_) => {}
        }
    }
    for (name, rv) in store {
        if !etcd.contains_key(name) {
            out.push(format!("{name} (rv={rv}) is gone from etcd but still in the store"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::steps::observed::BeliefKind;
    use crate::scenario::steps::observed::KubeEvent;

    fn listed(at_ms: u64, apiserver: &str, rv: u64) -> Belief {
        let what = BeliefKind::Listed { asked: "0".into(), items: 1 };
        Belief { at_ms, apiserver: apiserver.into(), rv, what }
    }

    fn event(at_ms: u64, rv: u64) -> Belief {
        let e = KubeEvent {
            kind: "MODIFIED".into(),
            name: "a".into(),
            rv: rv.to_string(),
            initial_events_end: false,
            code: None,
            at_ms,
        };
        Belief { at_ms, apiserver: "apiserver-1".into(), rv, what: BeliefKind::Event(e) }
    }

    #[test]
    fn a_relist_from_a_lagging_apiserver_is_time_travel_and_names_both_replicas() {
        let beliefs = vec![listed(10, "apiserver-1", 5), event(20, 9), listed(30, "apiserver-2", 7), event(40, 10)];
        let travels = time_travels(&beliefs);
        assert_eq!(travels.len(), 1);
        let (newer, older) = travels[0];
        assert_eq!((newer.rv, older.rv, older.apiserver.as_str()), (9, 7, "apiserver-2"));
    }

    #[test]
    fn rising_and_equal_resource_versions_are_not_time_travel() {
        let beliefs = vec![listed(10, "apiserver-1", 5), event(20, 9), listed(30, "apiserver-2", 9), event(40, 10)];
        assert!(time_travels(&beliefs).is_empty());
    }

    #[test]
    fn a_missed_delete_and_a_missed_update_differ_from_etcd() {
        let store = BTreeMap::from([("a".to_string(), 5), ("b".to_string(), 6)]);
        let etcd = BTreeMap::from([("a".to_string(), 8)]);
        assert_eq!(
            store_diff(&store, &etcd),
            vec![
                "a at rv=5, etcd has rv=8".to_string(),
                "b (rv=6) is gone from etcd but still in the store".to_string()
            ]
        );
        assert!(store_diff(&etcd, &etcd).is_empty());
    }
}

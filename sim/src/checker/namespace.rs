//! The namespace controller's guarantee: `DeletedNamespacesGone`. Once the faults have stopped, every
//! namespace being deleted is gone within [`BOUND_MS`], and nothing of a deleted namespace is left in etcd: no
//! object names a namespace that no longer exists. A pure function of what the run saw when it watched etcd
//! after settling (`scenario::execute::namespaces`).
//!
//! The bound follows upstream's timings (kube-controller-manager 1.32, `pkg/controller/namespace`): a deleted
//! namespace is first looked at 5 s after its deletion (`namespaceDeletionGracePeriod`); a pass that failed
//! during the faults is retried with the namespace queue's backoff, which doubles up to a minute; pods are
//! waited for by their grace period (30 s by default) and objects held by finalizers by 15 s
//! (`finalizerEstimateSeconds`). A namespace that one backoff, one pod grace period and one finalizer
//! estimate after the faults is still there, 5 + 60 + 30 + 15 = 110 s, is stuck; 120 s leaves a little slack.

use std::collections::BTreeMap;

/// How long after the faults stopped (and the clients ended) every namespace being deleted must be gone.
pub const BOUND_MS: u64 = 120_000;

/// The guarantee's statement, as findings quote it.
pub const STATEMENT: &str = "once the faults stop, every namespace being deleted is gone within 120 s, and no \
                             object of a namespace that no longer exists is left in etcd";

/// One namespace that was being deleted when the watch began, or was seen deleting during it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Deleting {
    pub name: String,
    /// How long after the watch began it was gone from etcd (`None`: still there when the watch ended).
    pub gone_after_ms: Option<u64>,
    /// Its status conditions when last seen (`Type=Status: message`), for a namespace still there.
    pub conditions: Vec<String>,
}

/// What the run saw of deleted namespaces after the faults stopped.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NamespaceWatch {
    /// How long the watch went on at most.
    pub bound_ms: u64,
    /// Every namespace seen being deleted, by name.
    pub deleting: Vec<Deleting>,
    /// Objects left in a namespace that no longer exists, when the watch ended: key by namespace.
    pub leftovers: BTreeMap<String, Vec<String>>,
    /// etcd could not be read: nothing was judged (the finding says so and fails).
    pub unreadable: Option<String>,
}

/// One namespace that broke the guarantee.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Violation {
    pub namespace: String,
    pub details: String,
}

/// How many leftover keys a violation names.
const KEYS_SHOWN: usize = 3;

/// Every namespace still there after the bound, and every namespace gone with objects left behind.
pub fn deleted_namespaces_gone(watch: &NamespaceWatch) -> Vec<Violation> {
    let mut out = Vec::new();
    if let Some(why) = &watch.unreadable {
        out.push(Violation { namespace: String::new(), details: format!("nothing judged: {why}") });
        return out;
    }
    for ns in watch.deleting.iter().filter(|ns| ns.gone_after_ms.is_none_or(|ms| ms > watch.bound_ms)) {
        let conditions = if ns.conditions.is_empty() { "no conditions".to_string() } else { ns.conditions.join("; ") };
        out.push(Violation {
            namespace: ns.name.clone(),
            details: format!(
                "namespace {} is still there {} ms after the faults stopped ({conditions})",
                ns.name, watch.bound_ms
            ),
        });
    }
    for (namespace, keys) in &watch.leftovers {
        let mut shown = keys.iter().take(KEYS_SHOWN).cloned().collect::<Vec<_>>().join(", ");
        if keys.len() > KEYS_SHOWN {
            shown.push_str(&format!(" and {} more", keys.len() - KEYS_SHOWN));
        }
        out.push(Violation {
            namespace: namespace.clone(),
            details: format!("namespace {namespace} is gone but {} of its objects are left: {shown}", keys.len()),
        });
    }
    out
}

/// The slowest namespace that went, in ms after the watch began.
pub fn slowest_ms(watch: &NamespaceWatch) -> Option<u64> {
    watch.deleting.iter().filter_map(|ns| ns.gone_after_ms).max()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn deleting(name: &str, gone_after_ms: Option<u64>) -> Deleting {
        let conditions = match gone_after_ms {
            Some(_) => Vec::new(),
            None => vec!["NamespaceDeletionDiscoveryFailure=True: Discovery failed for some groups".into()],
        };
        Deleting { name: name.into(), gone_after_ms, conditions }
    }

    fn watch(deleting: Vec<Deleting>, leftovers: &[(&str, &[&str])]) -> NamespaceWatch {
        let leftovers =
            leftovers.iter().map(|(ns, keys)| (ns.to_string(), keys.iter().map(|k| k.to_string()).collect())).collect();
        NamespaceWatch { bound_ms: BOUND_MS, deleting, leftovers, unreadable: None }
    }

    #[test]
    fn namespaces_that_go_cleanly_pass_and_stuck_or_leaky_ones_fail() {
        let keys = ["/registry/configmaps/a/x", "/registry/example.com/widgets/a/w"];
        let many = [
            "/registry/configmaps/b/1",
            "/registry/configmaps/b/2",
            "/registry/configmaps/b/3",
            "/registry/configmaps/b/4",
        ];
        // (what the run saw, the namespaces that break the guarantee, the first violation's details)
        let cases: Vec<(NamespaceWatch, Vec<&str>, &str)> = vec![
            (watch(vec![], &[]), vec![], ""),
            (watch(vec![deleting("a", Some(0)), deleting("b", Some(BOUND_MS))], &[]), vec![], ""),
            (
                watch(vec![deleting("a", None), deleting("b", Some(1000))], &[]),
                vec!["a"],
                "namespace a is still there 120000 ms after the faults stopped \
                 (NamespaceDeletionDiscoveryFailure=True: Discovery failed for some groups)",
            ),
            (
                watch(vec![deleting("a", Some(BOUND_MS + 1))], &[]),
                vec!["a"],
                "namespace a is still there 120000 ms after the faults stopped (no conditions)",
            ),
            (
                watch(vec![deleting("a", Some(0))], &[("a", &keys)]),
                vec!["a"],
                "namespace a is gone but 2 of its objects are left: /registry/configmaps/a/x, \
                 /registry/example.com/widgets/a/w",
            ),
            (
                watch(vec![], &[("b", &many)]),
                vec!["b"],
                "namespace b is gone but 4 of its objects are left: /registry/configmaps/b/1, \
                 /registry/configmaps/b/2, /registry/configmaps/b/3 and 1 more",
            ),
        ];
        for (seen, want, first) in cases {
            let found = deleted_namespaces_gone(&seen);
            assert_eq!(found.iter().map(|v| v.namespace.as_str()).collect::<Vec<_>>(), want, "{seen:?}");
            assert_eq!(found.first().map_or("", |v| v.details.as_str()), first, "{seen:?}");
        }
    }

    #[test]
    fn an_unreadable_etcd_fails_rather_than_passes() {
        let seen = NamespaceWatch { unreadable: Some("no member answered".into()), ..watch(vec![], &[]) };
        let found = deleted_namespaces_gone(&seen);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].details, "nothing judged: no member answered");
    }

    #[test]
    fn the_slowest_is_the_latest_namespace_gone() {
        let seen = watch(vec![deleting("a", Some(7000)), deleting("b", None), deleting("c", Some(3000))], &[]);
        assert_eq!(slowest_ms(&seen), Some(7000));
        assert_eq!(slowest_ms(&watch(vec![], &[])), None);
    }
}

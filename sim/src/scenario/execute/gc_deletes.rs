//! What `DeletesOnlyWhenOwnersGone` judges, read from etcd once the run has settled: the garbage
//! collector's deletes the managers' log recorded so far, and for each distinct revision of those deletes
//! the owners they named as etcd held them at that revision (`registry::read`, one read per revision; a
//! delete answered by a `Status`, without a revision, at the latest revision, see `GcDelete::rv`). A
//! revision etcd has compacted, or could not answer, is recorded as such and its deletes are not judged;
//! past [`MAX_REVISIONS`] revisions the rest are not read either, so that a run with a great many deletes
//! stays cheap to judge. The reads go from the control node straight to the first member that answers.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use super::registry::{self, Registry};
use crate::checker::garbage_collector::{GcDelete, GcDeletes, OwnerSeen, OwnersAt};
use crate::cluster::Cluster;
use crate::history::controllers::{ManagerAct, ManagerEvent};

/// The most revisions one run reads the registry at.
pub const MAX_REVISIONS: usize = 200;

/// The collector's deletes in `log`, in the order they were recorded.
pub fn deletes(log: &[ManagerEvent]) -> Vec<GcDelete> {
    log.iter()
        .filter_map(|event| match &event.what {
            ManagerAct::Deleted { path, uid, owner_uids, rv } => Some(GcDelete {
                manager: event.manager.clone(),
                at_ms: event.at_ms,
                path: path.clone(),
                uid: uid.clone(),
                owner_uids: owner_uids.clone(),
                rv: *rv,
            }),
            _ => None,
        })
        .collect()
}

/// The owners among `uids` that exist in `registry`.
pub fn owners_in(registry: &Registry, uids: &BTreeSet<String>) -> BTreeMap<String, OwnerSeen> {
    uids.iter()
        .filter_map(|uid| {
            let (key, object) = registry.by_uid(uid)?;
            let being_deleted = object.pointer("/metadata/deletionTimestamp").is_some_and(|t| !t.is_null());
            let namespace = object.pointer("/metadata/namespace").and_then(|n| n.as_str()).map(str::to_string);
            Some((uid.clone(), OwnerSeen { key: key.to_string(), namespace, being_deleted }))
        })
        .collect()
}

/// The collector's deletes so far, with the owners at each delete's revision.
pub(super) async fn read(cluster: &Cluster, timeout: Duration) -> GcDeletes {
    let log = cluster.manager_log.lock().expect("the manager log is never poisoned").clone();
    let deletes = deletes(&log);
    // The owners asked about at each revision.
    let mut asked: BTreeMap<i64, BTreeSet<String>> = BTreeMap::new();
    // A delete answered without a revision (a `Status`) is judged at the latest revision (0).
    for delete in deletes.iter().filter(|d| !d.owner_uids.is_empty()) {
        asked.entry(delete.rv.max(0)).or_default().extend(delete.owner_uids.iter().cloned());
    }
    let endpoints = cluster.endpoints();
    let owners_at = cluster
        .control
        .spawn(async move {
            let mut out: BTreeMap<i64, OwnersAt> = BTreeMap::new();
            for (i, (rv, uids)) in asked.into_iter().enumerate() {
                let seen = if i >= MAX_REVISIONS {
                    Err(format!("more than {MAX_REVISIONS} revisions to read"))
                } else {
                    registry::read(&endpoints, timeout, rv)
                        .await
                        .map(|registry| owners_in(&registry, &uids))
                        .map_err(|e| e.to_string())
                };
                out.insert(rv, seen);
            }
            out
        })
        .await
        .unwrap_or_default();
    // A delete without owners is judged trivially: record its revision as read with nothing in it.
    let mut owners_at = owners_at;
    for delete in deletes.iter().filter(|d| d.owner_uids.is_empty()) {
        owners_at.entry(delete.rv.max(0)).or_insert_with(|| Ok(BTreeMap::new()));
    }
    GcDeletes { deletes, owners_at }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_owners_asked_about_are_found_by_uid_with_their_deletion_state() {
        let mut registry = Registry::default();
        let live = json!({"kind": "ConfigMap", "metadata": {"name": "a", "namespace": "b", "uid": "o1"}});
        let going = json!({"kind": "ConfigMap", "metadata": {"name": "c", "namespace": "b", "uid": "o2",
            "deletionTimestamp": "2025-06-15T15:06:40Z"}});
        registry.objects.insert("/registry/configmaps/b/a".into(), live);
        registry.objects.insert("/registry/configmaps/b/c".into(), going);
        let asked = BTreeSet::from(["o1".to_string(), "o2".to_string(), "o3".to_string()]);
        let owners = owners_in(&registry, &asked);
        assert_eq!(
            owners,
            BTreeMap::from([
                (
                    "o1".to_string(),
                    OwnerSeen {
                        key: "/registry/configmaps/b/a".into(),
                        namespace: Some("b".into()),
                        being_deleted: false
                    }
                ),
                (
                    "o2".to_string(),
                    OwnerSeen {
                        key: "/registry/configmaps/b/c".into(),
                        namespace: Some("b".into()),
                        being_deleted: true
                    }
                ),
            ])
        );
    }

    #[test]
    fn only_the_collectors_deletes_are_taken_from_the_log() {
        let event =
            |what| ManagerEvent { at_ms: 5, manager: "m1".into(), role: "kube-controller-manager".into(), what };
        let log = [
            event(ManagerAct::Leading),
            event(ManagerAct::Write { method: "DELETE".into(), path: "/p".into() }),
            event(ManagerAct::Deleted { path: "/p".into(), uid: "d".into(), owner_uids: vec!["o".into()], rv: 4 }),
        ];
        let found = deletes(&log);
        assert_eq!(found.len(), 1);
        assert_eq!((found[0].rv, found[0].owner_uids.as_slice()), (4, ["o".to_string()].as_slice()));
    }
}

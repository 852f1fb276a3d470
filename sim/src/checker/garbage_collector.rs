//! The garbage collector's guarantee: `DeletesOnlyWhenOwnersGone`. The collector deletes an object only once
//! none of its owners lives on: at the revision of each of its deletes, every owner the deleted object
//! named (by UID) is gone or is itself being deleted. An owner that exists at that revision under its UID
//! without a deletion timestamp had a dependent taken from it (kubernetes #65200: an absent-owner cache
//! keyed by UID alone). A pure function of the collector's deletes (`history::controllers`) and of the
//! owners as etcd held them at each delete's revision (`scenario::execute::gc_deletes` reads them).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// The guarantee's statement, as findings quote it.
pub const STATEMENT: &str =
    "the garbage collector never deletes an object whose owner with that UID exists and is not being deleted";

/// One delete the garbage collector made, as the apiserver answered it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct GcDelete {
    /// The manager whose collector sent it.
    pub manager: String,
    /// Simulated milliseconds since the run began.
    pub at_ms: u64,
    /// The request path.
    pub path: String,
    /// The deleted object's UID.
    pub uid: String,
    /// The UIDs its owner references named.
    pub owner_uids: Vec<String>,
    /// The revision of the delete (the deleted object's resourceVersion in the answer). 0 when the answer
    /// is a `Status` without one (upstream answers an immediate delete so): such a delete is judged at the
    /// revision read once the run settled, which is sound, since an owner alive there without a deletion
    /// timestamp was alive so at the delete (a UID never comes back, a deletion timestamp is never
    /// removed); it only misses an owner deleted in between.
    pub rv: i64,
}

/// An owner as etcd held it at a revision.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct OwnerSeen {
    /// Its etcd key.
    pub key: String,
    /// Its namespace (`None`: cluster-scoped).
    pub namespace: Option<String>,
    /// Whether it carried a deletion timestamp.
    pub being_deleted: bool,
}

impl OwnerSeen {
    /// Whether it can own an object in `namespace` (`None`: a cluster-scoped object): a namespaced owner owns
    /// only objects of its own namespace. An owner reference across namespaces names an owner that, for the
    /// collector, does not exist (upstream reports `OwnerRefInvalidNamespace` and deletes the dependent),
    /// so an owner of the same UID elsewhere does not make that delete wrong.
    pub fn can_own_in(&self, namespace: Option<&str>) -> bool {
        match &self.namespace {
            None => true,
            Some(own) => namespace == Some(own.as_str()),
        }
    }
}

/// The namespace in a request path (`/api/v1/namespaces/NS/...`, `/apis/G/V/namespaces/NS/...`), if any.
pub fn namespace_of_path(path: &str) -> Option<&str> {
    let mut segments = path.split('/');
    segments.by_ref().find(|s| *s == "namespaces")?;
    // `/api/v1/namespaces/NS` is the namespace itself: cluster-scoped.
    let namespace = segments.next()?;
    segments.next().map(|_| namespace)
}

/// What etcd held at one revision: the owners asked about that existed then, by UID, or why etcd could not
/// say (compacted, unreadable, too many revisions to read).
pub type OwnersAt = Result<BTreeMap<String, OwnerSeen>, String>;

/// The collector's deletes and the owners at their revisions, as the run recorded them.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct GcDeletes {
    pub deletes: Vec<GcDelete>,
    /// For each revision read (0: the one read once the run settled), what etcd held of the owners asked
    /// about.
    pub owners_at: BTreeMap<i64, OwnersAt>,
}

/// One delete of a dependent whose owner lived.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Violation {
    pub details: String,
}

/// The verdict over a run's collector deletes.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Verdict {
    /// Deletes judged (their revision read).
    pub judged: usize,
    /// Deletes that could not be judged, each with why.
    pub unjudged: Vec<String>,
    pub violations: Vec<Violation>,
}

/// Judges every delete: each owner UID it named must be absent at the delete's revision, or there with a
/// deletion timestamp.
pub fn deletes_only_when_owners_gone(record: &GcDeletes) -> Verdict {
    let mut verdict = Verdict::default();
    for delete in &record.deletes {
        let owners = match record.owners_at.get(&delete.rv.max(0)) {
            None => Err(format!("revision {} was not read", delete.rv)),
            Some(owners) => owners.clone(),
        };
        let owners = match owners {
            Ok(owners) => owners,
            Err(why) => {
                verdict.unjudged.push(format!("{} at revision {}: {why}", delete.path, delete.rv));
                continue;
            }
        };
        verdict.judged += 1;
        let namespace = namespace_of_path(&delete.path);
        for owner in &delete.owner_uids {
            match owners.get(owner) {
                Some(seen) if !seen.being_deleted && seen.can_own_in(namespace) => verdict.violations.push(Violation {
                    details: format!(
                        "{} deleted {} (uid {}) at revision {} ({} ms), while its owner {} (uid {owner}) existed \
                         without a deletion timestamp",
                        delete.manager, delete.path, delete.uid, delete.rv, delete.at_ms, seen.key
                    ),
                }),
                _ => {}
            }
        }
    }
    verdict
}

#[cfg(test)]
mod tests {
    use super::*;

    fn delete(rv: i64, owners: &[&str]) -> GcDelete {
        GcDelete {
            manager: "controller-manager-1".into(),
            at_ms: 10,
            path: "/api/v1/namespaces/b/configmaps/child".into(),
            uid: "d1".into(),
            owner_uids: owners.iter().map(|o| o.to_string()).collect(),
            rv,
        }
    }

    fn seen(deleting: bool) -> OwnerSeen {
        OwnerSeen { key: "/registry/configmaps/b/owner".into(), namespace: Some("b".into()), being_deleted: deleting }
    }

    fn seen_in(namespace: Option<&str>) -> OwnerSeen {
        OwnerSeen { namespace: namespace.map(str::to_string), ..seen(false) }
    }

    #[test]
    fn a_delete_fails_only_beside_a_live_owner() {
        // (name, the delete, owners at its revision (None: not read), judged, unjudged, violations)
        let cases: Vec<(&str, GcDelete, Option<OwnersAt>, usize, usize, usize)> = vec![
            ("owner gone", delete(7, &["o1"]), Some(Ok(BTreeMap::new())), 1, 0, 0),
            ("owner being deleted", delete(7, &["o1"]), Some(Ok(BTreeMap::from([("o1".into(), seen(true))]))), 1, 0, 0),
            ("owner alive", delete(7, &["o1"]), Some(Ok(BTreeMap::from([("o1".into(), seen(false))]))), 1, 0, 1),
            (
                "one of two owners alive",
                delete(7, &["o0", "o1"]),
                Some(Ok(BTreeMap::from([("o1".into(), seen(false))]))),
                1,
                0,
                1,
            ),
            (
                "owner alive in another namespace: a reference across namespaces names no owner",
                delete(7, &["o1"]),
                Some(Ok(BTreeMap::from([("o1".into(), seen_in(Some("a")))]))),
                1,
                0,
                0,
            ),
            (
                "cluster-scoped owner alive",
                delete(7, &["o1"]),
                Some(Ok(BTreeMap::from([("o1".into(), seen_in(None))]))),
                1,
                0,
                1,
            ),
            ("compacted", delete(7, &["o1"]), Some(Err("etcd compacted that revision".into())), 0, 1, 0),
            ("not read", delete(7, &["o1"]), None, 0, 1, 0),
            ("no revision, owner gone since", delete(0, &["o1"]), Some(Ok(BTreeMap::new())), 1, 0, 0),
            (
                "no revision, owner alive after",
                delete(0, &["o1"]),
                Some(Ok(BTreeMap::from([("o1".into(), seen(false))]))),
                1,
                0,
                1,
            ),
        ];
        for (name, d, owners, judged, unjudged, violations) in cases {
            let rv = d.rv;
            let record = GcDeletes { deletes: vec![d], owners_at: owners.into_iter().map(|o| (rv, o)).collect() };
            let verdict = deletes_only_when_owners_gone(&record);
            assert_eq!(verdict.judged, judged, "{name}");
            assert_eq!(verdict.unjudged.len(), unjudged, "{name}");
            assert_eq!(verdict.violations.len(), violations, "{name}");
        }
    }

    #[test]
    fn the_dependents_namespace_is_read_from_its_path() {
        let cases = [
            ("/api/v1/namespaces/b/configmaps/child", Some("b")),
            ("/apis/apps/v1/namespaces/team-a/replicasets/web", Some("team-a")),
            ("/api/v1/namespaces/b", None),
            ("/api/v1/nodes/n1", None),
            ("/apis/rbac.authorization.k8s.io/v1/clusterroles/r", None),
        ];
        for (path, want) in cases {
            assert_eq!(namespace_of_path(path), want, "{path}");
        }
    }

    #[test]
    fn a_violation_names_the_object_its_owner_and_the_revision() {
        let record = GcDeletes {
            deletes: vec![delete(9, &["o1"])],
            owners_at: BTreeMap::from([(9, Ok(BTreeMap::from([("o1".to_string(), seen(false))])))]),
        };
        let verdict = deletes_only_when_owners_gone(&record);
        assert_eq!(
            verdict.violations,
            [Violation {
                details: "controller-manager-1 deleted /api/v1/namespaces/b/configmaps/child (uid d1) at revision 9 \
                          (10 ms), while its owner /registry/configmaps/b/owner (uid o1) existed without a deletion \
                          timestamp"
                    .into()
            }]
        );
    }
}

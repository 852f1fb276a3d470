//! Rolling a Deployment back through the `deprecated.deployment.rollback.to` annotation
//! (kube-controller-manager 1.32, `pkg/controller/deployment/rollback.go`: `rollback`,
//! `rollbackToTemplate`, `getRollbackTo`, `setRollbackTo`). Sans-IO: the Deployment and its ReplicaSets in,
//! the Deployment to write and the events out.
//!
//! apps/v1 has no `spec.rollbackTo`; the old API versions' field survives as this annotation, and the
//! 1.32 controller still honours it: revision 0 means the one before the current. The ReplicaSet of that
//! revision lends the Deployment its template and annotations; the annotation is cleared in any case.
//! `kubectl rollout undo` does not use it: it writes the old template into the Deployment itself, which
//! the controller then sees as a new rollout onto an existing ReplicaSet (renumbered, with its old
//! revision kept in `revision-history`).

use serde_json::Value;

use super::revision::{
    annotations_mut, equal_ignore_hash, last_revision, revision, set_deployment_annotations_to,
    set_from_replica_set_template, DEPRECATED_ROLLBACK_TO,
};
use super::util::{meta, parse_go_int};

/// `RollbackRevisionNotFound`.
pub const REVISION_NOT_FOUND: &str = "DeploymentRollbackRevisionNotFound";
/// `RollbackTemplateUnchanged`.
pub const TEMPLATE_UNCHANGED: &str = "DeploymentRollbackTemplateUnchanged";
/// `RollbackDone`.
pub const DONE: &str = "DeploymentRollback";

/// `getRollbackTo`: the revision asked for, if the annotation holds an integer.
pub fn rollback_to(d: &Value) -> Option<i64> {
    let text =
        d.pointer("/metadata/annotations").and_then(|a| a.get(DEPRECATED_ROLLBACK_TO)).and_then(Value::as_str)?;
    if text.is_empty() {
        return None;
    }
    parse_go_int(text)
}

/// What a rollback comes to.
#[derive(Clone, Debug, PartialEq)]
pub struct Rollback {
    /// The Deployment to write (`Update`), its annotation cleared.
    pub deployment: Value,
    /// A `Warning` event (reason, message) to record first.
    pub warning: Option<(&'static str, String)>,
    /// The `Normal` `DeploymentRollback` event's message, once the write succeeded.
    pub done: Option<String>,
}

/// `rollback` for `d` among `all_rss` (its old ReplicaSets, then the new one).
pub fn plan(d: &Value, all_rss: &[Value]) -> Rollback {
    let mut deployment = d.clone();
    let out = |warning: Option<(&'static str, String)>, done: Option<String>, mut deployment: Value| {
        annotations_mut(&mut deployment).remove(DEPRECATED_ROLLBACK_TO);
        Rollback { deployment, warning, done }
    };
    let mut target = rollback_to(d).unwrap_or(0);
    if target == 0 {
        target = last_revision(all_rss);
        if target == 0 {
            return out(Some((REVISION_NOT_FOUND, "Unable to find last revision.".into())), None, deployment);
        }
    }
    let Some(rs) = all_rss.iter().find(|rs| revision(rs).ok() == Some(target)) else {
        return out(Some((REVISION_NOT_FOUND, "Unable to find the revision to rollback to.".into())), None, deployment);
    };
    // The revision number moves on in the next sync, when this ReplicaSet is found to be the new one.
    if equal_ignore_hash(d.pointer("/spec/template"), rs.pointer("/spec/template")) {
        let message =
            format!("The rollback revision contains the same template as current deployment \"{}\"", meta(d, "name"));
        return out(Some((TEMPLATE_UNCHANGED, message)), None, deployment);
    }
    set_from_replica_set_template(&mut deployment, rs.pointer("/spec/template").unwrap_or(&Value::Null));
    // The Deployment takes the ReplicaSet's annotations too, or the current ones would be copied onto it.
    set_deployment_annotations_to(&mut deployment, rs);
    let done = format!("Rolled back deployment \"{}\" to revision {target}", meta(d, "name"));
    out(None, Some(done), deployment)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::kcm::deployment::revision::REVISION;

    fn rs(name: &str, revision: &str, image: &str) -> Value {
        json!({"metadata": {"name": name, "annotations": {REVISION: revision, "cause": name}},
               "spec": {"template": {"metadata": {"labels": {"app": "web", "pod-template-hash": name}}, "spec": {"containers": [{"name": "c", "image": image}]}}}})
    }

    fn deployment(rollback_to: &str, image: &str) -> Value {
        json!({"metadata": {"name": "web", "annotations": {DEPRECATED_ROLLBACK_TO: rollback_to, REVISION: "3", "cause": "now"}},
               "spec": {"template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "c", "image": image}]}}}})
    }

    #[test]
    fn the_annotation_names_the_revision() {
        let cases = [("2", Some(2)), ("0", Some(0)), ("", None), ("x", None)];
        for (text, want) in cases {
            assert_eq!(rollback_to(&deployment(text, "n")), want, "{text}");
        }
        assert_eq!(rollback_to(&json!({"metadata": {}})), None);
    }

    #[test]
    fn rollbacks() {
        let rss = vec![rs("v1", "1", "nginx:1"), rs("v2", "2", "nginx:2"), rs("v3", "3", "nginx:3")];
        // (annotation, the current image, want image, want warning reason, want done message)
        let cases = [
            ("1", "nginx:3", "nginx:1", None, Some("Rolled back deployment \"web\" to revision 1")),
            // 0: the revision before the current one.
            ("0", "nginx:3", "nginx:2", None, Some("Rolled back deployment \"web\" to revision 2")),
            ("9", "nginx:3", "nginx:3", Some(REVISION_NOT_FOUND), None),
            ("3", "nginx:3", "nginx:3", Some(TEMPLATE_UNCHANGED), None),
        ];
        for (to, current, want_image, want_warning, want_done) in cases {
            let got = plan(&deployment(to, current), &rss);
            assert_eq!(got.deployment["spec"]["template"]["spec"]["containers"][0]["image"], want_image, "{to}");
            assert_eq!(got.warning.as_ref().map(|w| w.0), want_warning, "{to}");
            assert_eq!(got.done.as_deref(), want_done, "{to}");
            assert!(got.deployment["metadata"]["annotations"].get(DEPRECATED_ROLLBACK_TO).is_none(), "cleared: {to}");
        }
        let got = plan(&deployment("1", "nginx:3"), &rss);
        assert_eq!(got.deployment["spec"]["template"]["metadata"]["labels"], json!({"app": "web"}), "no hash label");
        assert_eq!(got.deployment["metadata"]["annotations"], json!({REVISION: "3", "cause": "v1"}));
        let got = plan(&deployment("3", "nginx:3"), &rss);
        assert_eq!(
            got.warning.unwrap().1,
            "The rollback revision contains the same template as current deployment \"web\""
        );
        let got = plan(&deployment("0", "nginx:1"), &[rs("v1", "1", "nginx:1")]);
        assert_eq!(got.warning, Some((REVISION_NOT_FOUND, "Unable to find last revision.".to_string())));
    }
}

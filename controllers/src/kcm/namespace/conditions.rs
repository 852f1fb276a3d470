//! The status conditions a namespace being deleted carries (kube-controller-manager 1.32,
//! `pkg/controller/namespace/deletion/status_condition_utils.go`): after each pass over its content the
//! deleter reports the five condition types it owns, each either failing (`True`, with what failed) or
//! fine (`False`, with a fixed reason and message). Sans IO: the failures come in, the namespace's JSON is
//! edited in place, and whether anything changed comes out, so that the status is written only then.
//!
//! Upstream's rules kept here: a condition is rewritten only when its status, reason or message changes,
//! and its `lastTransitionTime` moves only when its status does; a type the namespace lacks is appended in
//! the fixed order below; other condition types are left alone; the lists in messages are sorted, so that
//! the same content gives the same text on every pass.

use std::collections::BTreeMap;
use std::fmt;

use serde_json::{json, Value};

use crate::client::ApiResource;

/// `v1.NamespaceDeletionDiscoveryFailure`.
pub const DISCOVERY_FAILURE: &str = "NamespaceDeletionDiscoveryFailure";
/// `v1.NamespaceDeletionGVParsingFailure`.
pub const GROUP_VERSION_PARSING_FAILURE: &str = "NamespaceDeletionGroupVersionParsingFailure";
/// `v1.NamespaceDeletionContentFailure`.
pub const CONTENT_FAILURE: &str = "NamespaceDeletionContentFailure";
/// `v1.NamespaceContentRemaining`.
pub const CONTENT_REMAINING: &str = "NamespaceContentRemaining";
/// `v1.NamespaceFinalizersRemaining`.
pub const FINALIZERS_REMAINING: &str = "NamespaceFinalizersRemaining";

/// `conditionTypes`: the types the deleter owns, in the order a namespace first gets them.
pub const CONDITION_TYPES: [&str; 5] =
    [DISCOVERY_FAILURE, GROUP_VERSION_PARSING_FAILURE, CONTENT_FAILURE, CONTENT_REMAINING, FINALIZERS_REMAINING];

/// `okReasons` and `okMessages`: what each type says when nothing is wrong.
fn ok_reason_and_message(kind: &str) -> (&'static str, &'static str) {
    match kind {
        DISCOVERY_FAILURE => ("ResourcesDiscovered", "All resources successfully discovered"),
        GROUP_VERSION_PARSING_FAILURE => ("ParsedGroupVersions", "All legacy kube types successfully parsed"),
        CONTENT_FAILURE => ("ContentDeleted", "All content successfully deleted, may be waiting on finalization"),
        CONTENT_REMAINING => ("ContentRemoved", "All content successfully removed"),
        FINALIZERS_REMAINING => ("ContentHasNoFinalizers", "All content-preserving finalizers finished"),
        _ => ("", ""),
    }
}

/// One condition as a pass computes it; its transition time is set when it is written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Condition {
    pub kind: &'static str,
    /// `True` (something failed or remains) or `False`.
    pub status: &'static str,
    pub reason: &'static str,
    pub message: String,
}

impl Condition {
    fn failing(kind: &'static str, reason: &'static str, message: String) -> Condition {
        Condition { kind, status: "True", reason, message }
    }

    /// `newSuccessfulCondition`.
    pub fn ok(kind: &'static str) -> Condition {
        let (reason, message) = ok_reason_and_message(kind);
        Condition { kind, status: "False", reason, message: message.to_string() }
    }
}

/// Why discovery was not complete.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DiscoveryFailure {
    /// client-go's `ErrGroupDiscoveryFailed`: these group versions (`apps/v1`, `v1`) failed, with the text
    /// of each one's error; the others were discovered.
    Groups(Vec<(String, String)>),
    /// Discovery failed as a whole (the group lists could not be read), with the error's text.
    Other(String),
}

impl fmt::Display for DiscoveryFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DiscoveryFailure::Groups(groups) => {
                // Upstream sorts the formatted entries, not the group versions.
                let mut entries: Vec<String> = groups.iter().map(|(gv, err)| format!("{gv}: {err}")).collect();
                entries.sort();
                write!(f, "unable to retrieve the complete list of server APIs: {}", entries.join(", "))
            }
            DiscoveryFailure::Other(err) => f.write_str(err),
        }
    }
}

/// `allGVRDeletionMetadata`: what a pass found left in the namespace.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ContentTotals {
    /// How many objects of each resource remain.
    pub resources_remaining: BTreeMap<ApiResource, usize>,
    /// How many remaining objects carry each finalizer.
    pub finalizers_remaining: BTreeMap<String, usize>,
}

/// `namespaceConditionUpdater`: gathers one pass's failures, then turns them into conditions.
#[derive(Clone, Debug, Default)]
pub struct ConditionUpdater {
    new_conditions: Vec<Condition>,
    delete_content_errors: Vec<String>,
}

impl ConditionUpdater {
    /// `ProcessDiscoverResourcesErr`.
    pub fn process_discover_resources_err(&mut self, err: &DiscoveryFailure) {
        let message = match err {
            DiscoveryFailure::Groups(groups) => {
                format!("Discovery failed for some groups, {} failing: {err}", groups.len())
            }
            DiscoveryFailure::Other(_) => err.to_string(),
        };
        self.new_conditions.push(Condition::failing(DISCOVERY_FAILURE, "DiscoveryFailed", message));
    }

    /// `ProcessGroupVersionErr`: a discovered group version that does not parse. Discovery here reports
    /// group and version apart, so nothing calls it yet; it is kept so that the condition's rules are whole.
    pub fn process_group_version_err(&mut self, err: &str) {
        self.new_conditions.push(Condition::failing(
            GROUP_VERSION_PARSING_FAILURE,
            "GroupVersionParsingFailed",
            err.to_string(),
        ));
    }

    /// `ProcessDeleteContentErr`: one resource whose content could not be deleted (the error's text).
    pub fn process_delete_content_err(&mut self, err: String) {
        self.delete_content_errors.push(err);
    }

    /// `ProcessContentTotals`: what remains, by resource and by finalizer.
    pub fn process_content_totals(&mut self, totals: &ContentTotals) {
        if !totals.resources_remaining.is_empty() {
            let mut remaining: Vec<String> = totals
                .resources_remaining
                .iter()
                .filter(|(_, n)| **n != 0)
                .map(|(r, n)| format!("{}.{} has {n} resource instances", r.resource, r.group))
                .collect();
            remaining.sort();
            self.new_conditions.push(Condition::failing(
                CONTENT_REMAINING,
                "SomeResourcesRemain",
                format!("Some resources are remaining: {}", remaining.join(", ")),
            ));
        }
        if !totals.finalizers_remaining.is_empty() {
            let mut remaining: Vec<String> = totals
                .finalizers_remaining
                .iter()
                .filter(|(_, n)| **n != 0)
                .map(|(finalizer, n)| format!("{finalizer} in {n} resource instances"))
                .collect();
            remaining.sort();
            self.new_conditions.push(Condition::failing(
                FINALIZERS_REMAINING,
                "SomeFinalizersRemain",
                format!("Some content in the namespace has finalizers remaining: {}", remaining.join(", ")),
            ));
        }
    }

    /// The conditions this pass computed for the types that failed, in the order they were found.
    pub fn conditions(&self) -> Vec<Condition> {
        let mut out = self.new_conditions.clone();
        if !out.iter().any(|c| c.kind == CONTENT_FAILURE) {
            out.extend(delete_content_condition(&self.delete_content_errors));
        }
        out
    }

    /// `Update`: writes the pass's conditions into the namespace `ns`, stamping changed transitions with
    /// `now` (RFC 3339); true if the status changed and should be written.
    pub fn update(&self, ns: &mut Value, now: &str) -> bool {
        update_conditions(ns, &self.conditions(), now)
    }
}

/// `makeDeleteContentCondition`: the failures of every resource whose content could not be deleted.
fn delete_content_condition(errors: &[String]) -> Option<Condition> {
    if errors.is_empty() {
        return None;
    }
    let mut messages = errors.to_vec();
    messages.sort();
    Some(Condition::failing(
        CONTENT_FAILURE,
        "ContentDeletionFailed",
        format!("Failed to delete all resource types, {} remaining: {}", errors.len(), messages.join(", ")),
    ))
}

/// `updateConditions`: every owned type takes its new condition, or its fine one when this pass found
/// nothing wrong. Returns whether `ns.status.conditions` changed.
pub fn update_conditions(ns: &mut Value, new: &[Condition], now: &str) -> bool {
    if !ns.get("status").is_some_and(Value::is_object) {
        ns["status"] = json!({});
    }
    let status = &mut ns["status"];
    if !status.get("conditions").is_some_and(Value::is_array) {
        status["conditions"] = json!([]);
    }
    let conditions = status["conditions"].as_array_mut().expect("made an array above");
    let mut changed = false;
    for kind in CONDITION_TYPES {
        let wanted = new.iter().find(|c| c.kind == kind).cloned().unwrap_or_else(|| Condition::ok(kind));
        let old = conditions.iter_mut().find(|c| c.get("type").and_then(Value::as_str) == Some(kind));
        match old {
            None => {
                conditions.push(json!({
                    "type": kind,
                    "status": wanted.status,
                    "lastTransitionTime": now,
                    "reason": wanted.reason,
                    "message": wanted.message,
                }));
                changed = true;
            }
            Some(old) => {
                let field = |c: &Value, f: &str| c.get(f).and_then(Value::as_str).unwrap_or("").to_string();
                let status_changed = field(old, "status") != wanted.status;
                if status_changed || field(old, "reason") != wanted.reason || field(old, "message") != wanted.message {
                    if status_changed {
                        old["lastTransitionTime"] = json!(now);
                    }
                    old["type"] = json!(kind);
                    old["status"] = json!(wanted.status);
                    old["reason"] = json!(wanted.reason);
                    old["message"] = json!(wanted.message);
                    changed = true;
                }
            }
        }
    }
    changed
}

#[cfg(test)]
mod tests {
    use super::*;

    const T0: &str = "2023-11-14T22:13:20Z";
    const T1: &str = "2023-11-14T22:13:30Z";

    fn condition<'a>(ns: &'a Value, kind: &str) -> &'a Value {
        ns["status"]["conditions"].as_array().unwrap().iter().find(|c| c["type"] == kind).unwrap()
    }

    fn summary(ns: &Value) -> Vec<(String, String, String, String)> {
        let s = |c: &Value, f: &str| c[f].as_str().unwrap_or("").to_string();
        ns["status"]["conditions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| (s(c, "type"), s(c, "status"), s(c, "reason"), s(c, "message")))
            .collect()
    }

    fn configmaps() -> ApiResource {
        ApiResource::new("", "v1", "configmaps", "ConfigMap", true)
    }

    fn deployments() -> ApiResource {
        ApiResource::new("apps", "v1", "deployments", "Deployment", true)
    }

    #[test]
    fn a_clean_pass_gives_every_type_its_fine_condition_in_order() {
        let mut ns = json!({"metadata": {"name": "ns"}, "status": {"phase": "Terminating"}});
        assert!(ConditionUpdater::default().update(&mut ns, T0));
        let want: Vec<(String, String, String, String)> = [
            (DISCOVERY_FAILURE, "ResourcesDiscovered", "All resources successfully discovered"),
            (GROUP_VERSION_PARSING_FAILURE, "ParsedGroupVersions", "All legacy kube types successfully parsed"),
            (CONTENT_FAILURE, "ContentDeleted", "All content successfully deleted, may be waiting on finalization"),
            (CONTENT_REMAINING, "ContentRemoved", "All content successfully removed"),
            (FINALIZERS_REMAINING, "ContentHasNoFinalizers", "All content-preserving finalizers finished"),
        ]
        .iter()
        .map(|(k, r, m)| (k.to_string(), "False".to_string(), r.to_string(), m.to_string()))
        .collect();
        assert_eq!(summary(&ns), want);
        assert_eq!(condition(&ns, CONTENT_REMAINING)["lastTransitionTime"], T0);
        assert_eq!(ns["status"]["phase"], "Terminating", "the phase is kept");
        // The same pass again changes nothing, so nothing is written.
        assert!(!ConditionUpdater::default().update(&mut ns, T1));
    }

    #[test]
    fn failures_become_true_conditions_with_upstreams_texts() {
        // (what the pass saw, the condition type, its reason, its message)
        type Feed = fn(&mut ConditionUpdater);
        let cases: Vec<(Feed, &str, &str, &str)> = vec![
            (
                |u| {
                    u.process_discover_resources_err(&DiscoveryFailure::Groups(vec![
                        ("metrics.k8s.io/v1beta1".into(), "the server is currently unable to handle the request".into()),
                        ("apps/v1".into(), "boom".into()),
                    ]))
                },
                DISCOVERY_FAILURE,
                "DiscoveryFailed",
                "Discovery failed for some groups, 2 failing: unable to retrieve the complete list of server APIs: \
                 apps/v1: boom, metrics.k8s.io/v1beta1: the server is currently unable to handle the request",
            ),
            (
                |u| u.process_discover_resources_err(&DiscoveryFailure::Other("connection refused".into())),
                DISCOVERY_FAILURE,
                "DiscoveryFailed",
                "connection refused",
            ),
            (
                |u| u.process_group_version_err("unexpected GroupVersion string: a/b/c"),
                GROUP_VERSION_PARSING_FAILURE,
                "GroupVersionParsingFailed",
                "unexpected GroupVersion string: a/b/c",
            ),
            (
                |u| {
                    u.process_delete_content_err("z failed".into());
                    u.process_delete_content_err("a failed".into());
                },
                CONTENT_FAILURE,
                "ContentDeletionFailed",
                "Failed to delete all resource types, 2 remaining: a failed, z failed",
            ),
            (
                |u| {
                    u.process_content_totals(&ContentTotals {
                        resources_remaining: [(deployments(), 2), (configmaps(), 1)].into_iter().collect(),
                        finalizers_remaining: BTreeMap::new(),
                    })
                },
                CONTENT_REMAINING,
                "SomeResourcesRemain",
                "Some resources are remaining: configmaps. has 1 resource instances, deployments.apps has 2 resource instances",
            ),
            (
                |u| {
                    u.process_content_totals(&ContentTotals {
                        resources_remaining: [(configmaps(), 3)].into_iter().collect(),
                        finalizers_remaining: [("example.com/hold".to_string(), 1), ("a.io/x".to_string(), 2)]
                            .into_iter()
                            .collect(),
                    })
                },
                FINALIZERS_REMAINING,
                "SomeFinalizersRemain",
                "Some content in the namespace has finalizers remaining: a.io/x in 2 resource instances, \
                 example.com/hold in 1 resource instances",
            ),
        ];
        for (feed, kind, reason, message) in cases {
            let mut updater = ConditionUpdater::default();
            feed(&mut updater);
            let mut ns = json!({"metadata": {"name": "ns"}});
            assert!(updater.update(&mut ns, T0));
            let c = condition(&ns, kind);
            assert_eq!((c["status"].as_str(), c["reason"].as_str()), (Some("True"), Some(reason)), "{kind}");
            assert_eq!(c["message"], message, "{kind}");
            // Only the types that failed are True; remaining content with finalizers is both kinds.
            let failing: Vec<String> = summary(&ns).into_iter().filter(|c| c.1 == "True").map(|c| c.0).collect();
            let want: &[&str] =
                if kind == FINALIZERS_REMAINING { &[CONTENT_REMAINING, FINALIZERS_REMAINING] } else { &[kind] };
            assert_eq!(failing, want, "{kind}");
        }
    }

    #[test]
    fn transition_time_moves_only_when_the_status_does() {
        let remaining = |n: usize| {
            let mut u = ConditionUpdater::default();
            u.process_content_totals(&ContentTotals {
                resources_remaining: [(configmaps(), n)].into_iter().collect(),
                finalizers_remaining: BTreeMap::new(),
            });
            u
        };
        let mut ns = json!({"status": {"conditions": [{"type": "Other", "status": "True"}]}});
        assert!(remaining(2).update(&mut ns, T0));
        // The message changes, the status does not: rewritten, with the old transition time.
        assert!(remaining(1).update(&mut ns, T1));
        let c = condition(&ns, CONTENT_REMAINING);
        assert_eq!(
            (c["message"].as_str(), c["lastTransitionTime"].as_str()),
            (Some("Some resources are remaining: configmaps. has 1 resource instances"), Some(T0))
        );
        // Everything removed: the status flips and the time moves.
        assert!(ConditionUpdater::default().update(&mut ns, T1));
        let c = condition(&ns, CONTENT_REMAINING);
        assert_eq!((c["status"].as_str(), c["lastTransitionTime"].as_str()), (Some("False"), Some(T1)));
        assert_eq!(condition(&ns, CONTENT_FAILURE)["lastTransitionTime"], T0, "an unchanged condition keeps its time");
        assert_eq!(ns["status"]["conditions"][0], json!({"type": "Other", "status": "True"}), "other types are kept");
    }

    #[test]
    fn a_content_failure_condition_given_directly_wins_over_the_gathered_errors() {
        let mut u = ConditionUpdater::default();
        u.process_delete_content_err("x".into());
        assert_eq!(u.conditions().len(), 1);
        u.new_conditions.push(Condition::failing(CONTENT_FAILURE, "Given", "given".into()));
        let conditions = u.conditions();
        assert_eq!(conditions.iter().filter(|c| c.kind == CONTENT_FAILURE).count(), 1);
        assert_eq!(conditions[0].reason, "Given");
    }
}

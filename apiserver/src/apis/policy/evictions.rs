//! Evictions, `POST .../pods/NAME/eviction` (`KK/pkg/registry/core/pod/storage/eviction.go`): a pod
//! deleted only if its disruption budget allows it. What `kubectl drain` calls.
//!
//! The decision is here, over the pod and its namespace's budgets; the HTTP layer reads them, writes the
//! budget's new status and deletes the pod. A pod that is terminal, pending or already being deleted goes
//! without a look at budgets (it disrupts nothing more). Otherwise the one budget that selects it decides
//! (two are an internal error): one the disruption controller has not yet observed is a 429 to retry in
//! 10 seconds, one with no disruptions left a 429 naming its healthy counts, and one that allows a
//! disruption loses it (its `disruptedPods` records the pod) before the pod goes. A pod that is not ready
//! goes without spending the budget when the budget is healthy anyway, or its policy is `AlwaysAllow`.
//!
//! kubesim runs no disruption controller yet, so a budget's status is whatever a client wrote through
//! `/status`: a budget nobody observed refuses every eviction of a running pod, as on a cluster whose
//! controller manager is down.

use serde_json::{json, Map, Value};

use crate::registry::error::RegistryError;
use crate::registry::meta;
use crate::registry::strategies::workloads::selector_matches;

/// The message of both 429s (`NewTooManyRequests`).
const BUDGET_MESSAGE: &str = "Cannot evict pod as it would violate the pod's disruption budget.";

/// The status cause's reason (`policyv1.DisruptionBudgetCause`).
const CAUSE: &str = "DisruptionBudget";

/// What the eviction does.
#[derive(Debug, PartialEq)]
pub(crate) enum Verdict {
    /// Delete the pod; no budget is spent.
    Delete,
    /// Write this budget (its status with one disruption fewer and the pod recorded), then delete the pod.
    Spend(Value),
}

/// The name in the path must be the eviction's.
pub(crate) fn check_name(eviction: &Value, url_name: &str) -> Result<(), RegistryError> {
    if meta::get_str(eviction, "name") != url_name {
        return Err(RegistryError::BadRequest("name in URL does not match name in Eviction object".into()));
    }
    Ok(())
}

/// `canIgnorePDB`: a pod that finished, never started, or is already going.
fn can_ignore_budgets(pod: &Value) -> bool {
    let phase = pod.pointer("/status/phase").and_then(Value::as_str).unwrap_or("");
    matches!(phase, "Succeeded" | "Failed" | "Pending" | "")
        || pod.pointer("/metadata/deletionTimestamp").is_some_and(|t| !t.is_null())
}

/// `IsPodReady`: a `Ready` condition that is `True`.
fn is_ready(pod: &Value) -> bool {
    pod.pointer("/status/conditions").and_then(Value::as_array).is_some_and(|conditions| {
        conditions.iter().any(|c| c.get("type") == Some(&json!("Ready")) && c.get("status") == Some(&json!("True")))
    })
}

/// The budgets of `budgets` that select `pod`: policy/v1 semantics, where an empty selector selects every
/// pod and a missing one none.
fn selecting<'a>(pod: &Value, budgets: &'a [Value]) -> Vec<&'a Value> {
    let empty = Map::new();
    let labels = pod.pointer("/metadata/labels").and_then(Value::as_object).unwrap_or(&empty);
    budgets
        .iter()
        .filter(|b| b.pointer("/spec/selector").filter(|s| s.is_object()).is_some_and(|s| selector_matches(s, labels)))
        .collect()
}

/// The verdict on evicting `pod`, given every budget of its namespace, at `now` (RFC 3339).
pub(crate) fn judge(pod: &Value, budgets: &[Value], now: &str) -> Result<Verdict, RegistryError> {
    if can_ignore_budgets(pod) {
        return Ok(Verdict::Delete);
    }
    let selecting = selecting(pod, budgets);
    let budget = match selecting.as_slice() {
        [] => return Ok(Verdict::Delete),
        [one] => *one,
        _ => {
            return Err(RegistryError::Internal(
                "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support."
                    .into(),
            ))
        }
    };
    let status_int = |field: &str| budget.pointer(&format!("/status/{field}")).and_then(Value::as_i64).unwrap_or(0);
    if !is_ready(pod) {
        let policy = budget.pointer("/spec/unhealthyPodEvictionPolicy").and_then(Value::as_str).unwrap_or("");
        let healthy_enough =
            status_int("currentHealthy") >= status_int("desiredHealthy") && status_int("desiredHealthy") > 0;
        if policy == "AlwaysAllow" || healthy_enough {
            return Ok(Verdict::Delete);
        }
    }
    spend(budget, meta::get_str(pod, "name"), now).map(Verdict::Spend)
}

/// `checkAndDecrement`: the budget with one disruption fewer and `pod` recorded as disrupted, or why not.
fn spend(budget: &Value, pod: &str, now: &str) -> Result<Value, RegistryError> {
    let name = meta::get_str(budget, "name");
    let status_int = |field: &str| budget.pointer(&format!("/status/{field}")).and_then(Value::as_i64).unwrap_or(0);
    let generation = budget.pointer("/metadata/generation").and_then(Value::as_i64).unwrap_or(0);
    if status_int("observedGeneration") < generation {
        return Err(RegistryError::TooManyRequests {
            message: BUDGET_MESSAGE.into(),
            retry_after_s: 10,
            causes: vec![(
                CAUSE.into(),
                format!("The disruption budget {name} is still being processed by the server."),
            )],
        });
    }
    let allowed = status_int("disruptionsAllowed");
    if allowed < 0 {
        return Err(forbidden(name, "pdb disruptions allowed is negative"));
    }
    let disrupted = budget.pointer("/status/disruptedPods").and_then(Value::as_object).map_or(0, Map::len);
    if disrupted > MAX_DISRUPTED_PODS {
        return Err(forbidden(name, "DisruptedPods map too big - too many evictions not confirmed by PDB controller"));
    }
    if allowed == 0 {
        return Err(RegistryError::TooManyRequests {
            message: BUDGET_MESSAGE.into(),
            retry_after_s: 0,
            causes: vec![(
                CAUSE.into(),
                format!(
                    "The disruption budget {name} needs {} healthy pods and has {} currently",
                    status_int("desiredHealthy"),
                    status_int("currentHealthy")
                ),
            )],
        });
    }
    let mut spent = budget.clone();
    let status = spent["status"].as_object_mut().expect("a budget with disruptions allowed has a status");
    status.insert("disruptionsAllowed".into(), json!(allowed - 1));
    if allowed - 1 == 0 {
        set_condition(status, now);
    }
    let pods = status.entry("disruptedPods").or_insert_with(|| json!({}));
    if !pods.is_object() {
        *pods = json!({});
    }
    pods[pod] = json!(now);
    Ok(spent)
}

/// The most pods a budget may have recorded as disrupted before evictions stop (`MaxDisruptedPodSize`).
const MAX_DISRUPTED_PODS: usize = 2000;

fn forbidden(budget: &str, why: &str) -> RegistryError {
    RegistryError::Forbidden {
        resource: crate::storage::GroupResource::new("policy", "poddisruptionbudget"),
        name: budget.into(),
        reason: why.into(),
    }
}

/// `UpdateDisruptionAllowedCondition` for a budget with none left: `DisruptionAllowed` is `False`
/// (`InsufficientPods`); its transition time moves only if its status changes.
fn set_condition(status: &mut Map<String, Value>, now: &str) {
    let conditions = status.entry("conditions").or_insert_with(|| json!([]));
    if !conditions.is_array() {
        *conditions = json!([]);
    }
    let list = conditions.as_array_mut().expect("conditions was made an array");
    let wanted = json!({"type": "DisruptionAllowed", "status": "False", "reason": "InsufficientPods", "message": "", "lastTransitionTime": now});
    match list.iter_mut().find(|c| c.get("type") == Some(&json!("DisruptionAllowed"))) {
        Some(existing) => {
            if existing.get("status") != Some(&json!("False")) {
                existing["status"] = json!("False");
                existing["lastTransitionTime"] = json!(now);
            }
            existing["reason"] = json!("InsufficientPods");
            existing["message"] = json!("");
        }
        None => list.push(wanted),
    }
}

/// `UpdatePodCondition` with the `DisruptionTarget` condition an eviction leaves on the pod it deletes.
pub(crate) fn mark_disrupted(pod: &Value, now: &str) -> Value {
    let mut pod = pod.clone();
    if !pod.get("status").is_some_and(Value::is_object) {
        pod["status"] = json!({});
    }
    let status = pod["status"].as_object_mut().expect("status was made an object");
    let conditions = status.entry("conditions").or_insert_with(|| json!([]));
    if !conditions.is_array() {
        *conditions = json!([]);
    }
    let list = conditions.as_array_mut().expect("conditions was made an array");
    let condition = json!({"type": "DisruptionTarget", "status": "True", "lastTransitionTime": now, "reason": "EvictionByEvictionAPI", "message": "Eviction API: evicting"});
    match list.iter_mut().find(|c| c.get("type") == Some(&json!("DisruptionTarget"))) {
        Some(existing) => {
            let transition = if existing.get("status") == Some(&json!("True")) {
                existing.get("lastTransitionTime").cloned().unwrap_or(json!(now))
            } else {
                json!(now)
            };
            *existing = condition;
            existing["lastTransitionTime"] = transition;
        }
        None => list.push(condition),
    }
    pod
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: &str = "2026-01-01T00:00:00Z";

    fn pod(phase: &str, ready: bool) -> Value {
        json!({
            "metadata": {"name": "web-0", "labels": {"app": "web"}},
            "status": {"phase": phase, "conditions": [{"type": "Ready", "status": if ready { "True" } else { "False" }}]},
        })
    }

    fn budget(name: &str, selector: Value, status: Value) -> Value {
        json!({"metadata": {"name": name, "generation": 1}, "spec": {"selector": selector}, "status": status})
    }

    fn observed(allowed: i64) -> Value {
        json!({"observedGeneration": 1, "disruptionsAllowed": allowed, "currentHealthy": 2, "desiredHealthy": 2, "expectedPods": 2})
    }

    fn message_and_causes(err: RegistryError) -> (String, i32, Vec<(String, String)>) {
        match err {
            RegistryError::TooManyRequests { message, retry_after_s, causes } => (message, retry_after_s, causes),
            other => panic!("not a 429: {other:?}"),
        }
    }

    #[test]
    fn pods_that_disrupt_nothing_more_go_without_a_budget() {
        let spent = [budget("web", json!({"matchLabels": {"app": "web"}}), observed(0))];
        for phase in ["Pending", "Succeeded", "Failed"] {
            assert_eq!(judge(&pod(phase, true), &spent, NOW), Ok(Verdict::Delete), "{phase}");
        }
        let mut going = pod("Running", true);
        going["metadata"]["deletionTimestamp"] = json!(NOW);
        assert_eq!(judge(&going, &spent, NOW), Ok(Verdict::Delete));
        let other = [budget("db", json!({"matchLabels": {"app": "db"}}), observed(0))];
        assert_eq!(judge(&pod("Running", true), &other, NOW), Ok(Verdict::Delete), "no budget selects it");
        let unselecting = [budget("none", Value::Null, observed(0))];
        assert_eq!(
            judge(&pod("Running", true), &unselecting, NOW),
            Ok(Verdict::Delete),
            "a missing selector selects nothing"
        );
    }

    #[test]
    fn a_spent_or_unobserved_budget_is_a_429() {
        let spent = [budget("web", json!({}), observed(0))];
        let (message, retry, causes) = message_and_causes(judge(&pod("Running", true), &spent, NOW).unwrap_err());
        assert_eq!(message, "Cannot evict pod as it would violate the pod's disruption budget.");
        assert_eq!(retry, 0);
        assert_eq!(
            causes,
            [("DisruptionBudget".into(), "The disruption budget web needs 2 healthy pods and has 2 currently".into())]
        );

        let unobserved = [budget("web", json!({"matchLabels": {"app": "web"}}), json!({}))];
        let (_, retry, causes) = message_and_causes(judge(&pod("Running", true), &unobserved, NOW).unwrap_err());
        assert_eq!(retry, 10);
        assert_eq!(
            causes,
            [("DisruptionBudget".into(), "The disruption budget web is still being processed by the server.".into())]
        );

        let two = [budget("a", json!({}), observed(1)), budget("b", json!({}), observed(1))];
        assert_eq!(
            judge(&pod("Running", true), &two, NOW).unwrap_err().to_string(),
            "Internal error occurred: This pod has more than one PodDisruptionBudget, which the eviction subresource does not support."
        );
        let negative = [budget("web", json!({}), observed(-1))];
        assert_eq!(
            judge(&pod("Running", true), &negative, NOW).unwrap_err().to_string(),
            r#"poddisruptionbudget.policy "web" is forbidden: pdb disruptions allowed is negative"#
        );
    }

    #[test]
    fn an_eviction_spends_one_disruption_and_records_the_pod() {
        let one = [budget("web", json!({"matchLabels": {"app": "web"}}), observed(1))];
        let Verdict::Spend(spent) = judge(&pod("Running", true), &one, NOW).unwrap() else { panic!("spends") };
        assert_eq!(spent["status"]["disruptionsAllowed"], 0);
        assert_eq!(spent["status"]["disruptedPods"], json!({"web-0": NOW}));
        assert_eq!(
            spent["status"]["conditions"],
            json!([{"type": "DisruptionAllowed", "status": "False", "reason": "InsufficientPods", "message": "", "lastTransitionTime": NOW}])
        );
        let two = [budget("web", json!({}), observed(2))];
        let Verdict::Spend(spent) = judge(&pod("Running", true), &two, NOW).unwrap() else { panic!("spends") };
        assert_eq!(spent["status"]["disruptionsAllowed"], 1);
        assert!(spent["status"].get("conditions").is_none(), "the condition changes only when none are left");
    }

    #[test]
    fn an_unready_pod_goes_free_when_the_budget_is_healthy_or_says_always() {
        let healthy = [budget("web", json!({}), observed(0))];
        assert_eq!(judge(&pod("Running", false), &healthy, NOW), Ok(Verdict::Delete));
        let mut unhealthy = budget(
            "web",
            json!({}),
            json!({"observedGeneration": 1, "disruptionsAllowed": 0, "currentHealthy": 1, "desiredHealthy": 2}),
        );
        assert!(judge(&pod("Running", false), std::slice::from_ref(&unhealthy), NOW).is_err());
        unhealthy["spec"]["unhealthyPodEvictionPolicy"] = json!("AlwaysAllow");
        assert_eq!(judge(&pod("Running", false), &[unhealthy], NOW), Ok(Verdict::Delete));
    }

    #[test]
    fn names_must_agree_and_the_pod_is_marked() {
        assert!(check_name(&json!({"metadata": {"name": "a"}}), "a").is_ok());
        assert_eq!(
            check_name(&json!({"metadata": {"name": "b"}}), "a"),
            Err(RegistryError::BadRequest("name in URL does not match name in Eviction object".into()))
        );
        let marked = mark_disrupted(&pod("Running", true), NOW);
        assert_eq!(
            marked["status"]["conditions"][1],
            json!({"type": "DisruptionTarget", "status": "True", "lastTransitionTime": NOW, "reason": "EvictionByEvictionAPI", "message": "Eviction API: evicting"})
        );
    }
}

//! A Job's `podFailurePolicy` (kube-controller-manager 1.32, `pkg/controller/job/pod_failure_policy.go`
//! `matchPodFailurePolicy`, `matchOnExitCodes`, `matchOnPodConditions`; `job_controller.go`
//! `getFailJobMessage`). Sans-IO.
//!
//! The rules are tried in order against a failed pod; the first that matches decides. `onExitCodes`
//! matches a terminated container (of `containerStatuses`, then `initContainerStatuses`) with a non-zero
//! exit code in (`In`) or outside (`NotIn`) the listed values, optionally only the named container;
//! `onPodConditions` matches a pod condition of the listed type and status. `Ignore` keeps the failure out
//! of the count, `Count` counts it as usual, `FailIndex` counts it and fails its index, `FailJob` fails the
//! whole Job with a message naming the rule. A failure no rule matches is counted.

use serde_json::Value;

/// `batch.PodFailurePolicyAction`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Action {
    FailJob,
    FailIndex,
    Ignore,
    Count,
}

impl Action {
    fn parse(text: &str) -> Option<Action> {
        match text {
            "FailJob" => Some(Action::FailJob),
            "FailIndex" => Some(Action::FailIndex),
            "Ignore" => Some(Action::Ignore),
            "Count" => Some(Action::Count),
            _ => None,
        }
    }

    /// Go's `%v` of the action.
    pub fn as_str(self) -> &'static str {
        match self {
            Action::FailJob => "FailJob",
            Action::FailIndex => "FailIndex",
            Action::Ignore => "Ignore",
            Action::Count => "Count",
        }
    }
}

/// What the policy made of one failed pod.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Decision {
    /// The Job's failure message, for a `FailJob` rule.
    pub fail_job_message: Option<String>,
    /// Whether the failure counts toward `backoffLimit`.
    pub count_failed: bool,
    /// The matching rule's action, if a rule matched.
    pub action: Option<Action>,
}

fn str_field<'a>(obj: &'a Value, field: &str) -> &'a str {
    obj.get(field).and_then(Value::as_str).unwrap_or("")
}

/// `getMatchingContainerFromList`: the first terminated container with a non-zero exit code the
/// requirement accepts.
fn matching_container<'a>(statuses: Option<&'a Value>, requirement: &Value) -> Option<(&'a str, i64)> {
    let wanted_name = requirement.get("containerName").and_then(Value::as_str);
    let values: Vec<i64> = requirement
        .get("values")
        .and_then(Value::as_array)
        .map(|v| v.iter().filter_map(Value::as_i64).collect())
        .unwrap_or_default();
    let operator = str_field(requirement, "operator");
    statuses?.as_array()?.iter().find_map(|status| {
        // A container still running (or terminating) has no exit code to match yet.
        let code = status.pointer("/state/terminated/exitCode")?.as_i64()?;
        let name = str_field(status, "name");
        if wanted_name.is_some_and(|w| w != name) || code == 0 {
            return None;
        }
        let listed = values.contains(&code);
        let accepted = match operator {
            "In" => listed,
            "NotIn" => !listed,
            _ => false,
        };
        accepted.then_some((name, code))
    })
}

/// `matchOnPodConditions`: the first pod condition (in the pod's order) some pattern names.
fn matching_condition<'a>(pod: &'a Value, patterns: &[Value]) -> Option<&'a str> {
    pod.pointer("/status/conditions")?.as_array()?.iter().find_map(|condition| {
        let kind = str_field(condition, "type");
        let status = str_field(condition, "status");
        // The apiserver defaults a pattern's status to `True`.
        let matched = patterns.iter().any(|p| {
            str_field(p, "type") == kind && p.get("status").and_then(Value::as_str).unwrap_or("True") == status
        });
        matched.then_some(kind)
    })
}

/// `matchPodFailurePolicy` for `pod` under `policy` (`None` or null: no policy, every failure counts).
pub fn match_policy(policy: Option<&Value>, pod: &Value) -> Decision {
    let counted = Decision { fail_job_message: None, count_failed: true, action: None };
    let Some(rules) = policy.and_then(|p| p.get("rules")).and_then(Value::as_array) else { return counted };
    let (ns, name) = (
        pod.pointer("/metadata/namespace").and_then(Value::as_str).unwrap_or(""),
        pod.pointer("/metadata/name").and_then(Value::as_str).unwrap_or(""),
    );
    for (index, rule) in rules.iter().enumerate() {
        let Some(action) = Action::parse(str_field(rule, "action")) else { continue };
        let describe = if let Some(requirement) = rule.get("onExitCodes").filter(|r| !r.is_null()) {
            let found = matching_container(pod.pointer("/status/containerStatuses"), requirement)
                .or_else(|| matching_container(pod.pointer("/status/initContainerStatuses"), requirement));
            let Some((container, code)) = found else { continue };
            format!(
                "Container {container} for pod {ns}/{name} failed with exit code {code} matching {} rule at index {index}",
                action.as_str()
            )
        } else if let Some(patterns) = rule.get("onPodConditions").and_then(Value::as_array) {
            let Some(kind) = matching_condition(pod, patterns) else { continue };
            format!("Pod {ns}/{name} has condition {kind} matching {} rule at index {index}", action.as_str())
        } else {
            continue;
        };
        return match action {
            Action::Ignore => Decision { fail_job_message: None, count_failed: false, action: Some(action) },
            Action::FailIndex | Action::Count => {
                Decision { fail_job_message: None, count_failed: true, action: Some(action) }
            }
            Action::FailJob => Decision { fail_job_message: Some(describe), count_failed: true, action: Some(action) },
        };
    }
    counted
}

/// `getFailJobMessage`: the message of the first failed pod a `FailJob` rule matches.
pub fn fail_job_message(job: &Value, pods: &[Value]) -> Option<String> {
    let policy = job.pointer("/spec/podFailurePolicy").filter(|p| !p.is_null())?;
    pods.iter()
        .filter(|p| super::pods::is_pod_failed(p, job))
        .find_map(|p| match_policy(Some(policy), p).fail_job_message)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn failed_pod(exit_code: i64, container: &str, conditions: Value) -> Value {
        json!({
            "metadata": {"name": "p", "namespace": "ns"},
            "status": {
                "phase": "Failed",
                "conditions": conditions,
                "containerStatuses": [
                    {"name": "ok", "state": {"terminated": {"exitCode": 0}}},
                    {"name": container, "state": {"terminated": {"exitCode": exit_code}}},
                ],
            },
        })
    }

    #[test]
    fn rules_match_in_order() {
        let policy = json!({"rules": [
            {"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget"}]},
            {"action": "FailJob", "onExitCodes": {"containerName": "main", "operator": "In", "values": [42]}},
            {"action": "Count", "onExitCodes": {"operator": "NotIn", "values": [1, 2]}},
            {"action": "FailIndex", "onExitCodes": {"operator": "In", "values": [1]}},
        ]});
        let disrupted = json!([{"type": "DisruptionTarget", "status": "True"}]);
        let cases = [
            ("disrupted", failed_pod(42, "main", disrupted.clone()), None, false, Some(Action::Ignore)),
            (
                "exit 42 in main",
                failed_pod(42, "main", json!([])),
                Some("Container main for pod ns/p failed with exit code 42 matching FailJob rule at index 1"),
                true,
                Some(Action::FailJob),
            ),
            ("exit 42 elsewhere", failed_pod(42, "side", json!([])), None, true, Some(Action::Count)),
            ("exit 1", failed_pod(1, "main", json!([])), None, true, Some(Action::FailIndex)),
            ("exit 2", failed_pod(2, "main", json!([])), None, true, None),
            (
                "condition false",
                failed_pod(2, "main", json!([{"type": "DisruptionTarget", "status": "False"}])),
                None,
                true,
                None,
            ),
        ];
        for (name, pod, message, counted, action) in cases {
            let decision = match_policy(Some(&policy), &pod);
            assert_eq!(decision.fail_job_message.as_deref(), message, "{name}");
            assert_eq!(decision.count_failed, counted, "{name}");
            assert_eq!(decision.action, action, "{name}");
        }
        assert!(match_policy(None, &failed_pod(1, "main", json!([]))).count_failed);
    }

    #[test]
    fn a_fail_job_rule_on_conditions_names_the_condition() {
        let policy =
            json!({"rules": [{"action": "FailJob", "onPodConditions": [{"type": "ConfigIssue", "status": "True"}]}]});
        let pod = failed_pod(1, "main", json!([{"type": "ConfigIssue", "status": "True"}]));
        let job = json!({"spec": {"podFailurePolicy": policy}});
        assert_eq!(
            fail_job_message(&job, std::slice::from_ref(&pod)).as_deref(),
            Some("Pod ns/p has condition ConfigIssue matching FailJob rule at index 0")
        );
        let mut running = pod;
        running["status"]["phase"] = json!("Running");
        assert_eq!(fail_job_message(&job, &[running]), None);
        assert_eq!(fail_job_message(&json!({"spec": {}}), &[]), None);
    }
}

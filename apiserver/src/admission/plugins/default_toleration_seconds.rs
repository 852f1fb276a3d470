//! The DefaultTolerationSeconds plugin (`KK/plugin/pkg/admission/defaulttolerationseconds/admission.go`):
//! a pod written without a toleration of the `not-ready` or `unreachable` NoExecute taints gets one for
//! 300 seconds, so that it stays bound to a node that stops answering for five minutes before it is
//! evicted. The two flags that change the 300 seconds are not modelled.

use std::sync::Arc;

use serde_json::{json, Value};

use super::support::{self, items, text};
use crate::admission::{Plugin, Request};
use crate::registry::error::RegistryError;
use crate::registry::rest::BoxFuture;

/// `--default-not-ready-toleration-seconds` and `--default-unreachable-toleration-seconds`.
const TOLERATION_SECONDS: i64 = 300;
/// `TaintNodeNotReady`, `TaintNodeUnreachable`.
const TAINTS: [&str; 2] = ["node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable"];

pub(crate) struct DefaultTolerationSeconds;

pub(crate) fn make() -> Arc<dyn Plugin> {
    Arc::new(DefaultTolerationSeconds)
}

/// The tolerations `pod` lacks, appended in upstream's order (not-ready, then unreachable). A toleration
/// with no key or no effect tolerates either taint.
pub(crate) fn add_default_tolerations(pod: &mut Value) {
    let missing: Vec<&str> = TAINTS
        .into_iter()
        .filter(|taint| {
            !items(pod, "/spec/tolerations").iter().any(|t| {
                let (key, effect) = (text(t, "/key"), text(t, "/effect"));
                (key == *taint || key.is_empty()) && (effect == "NoExecute" || effect.is_empty())
            })
        })
        .collect();
    if missing.is_empty() {
        return;
    }
    let Some(spec) = pod.get_mut("spec").and_then(Value::as_object_mut) else { return };
    let tolerations = spec.entry("tolerations").or_insert_with(|| json!([]));
    if !tolerations.is_array() {
        *tolerations = json!([]);
    }
    if let Some(list) = tolerations.as_array_mut() {
        for key in missing {
            list.push(json!({"key": key, "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": TOLERATION_SECONDS}));
        }
    }
}

impl Plugin for DefaultTolerationSeconds {
    fn name(&self) -> &'static str {
        "DefaultTolerationSeconds"
    }

    fn admit<'a>(
        &'a self,
        req: &'a Request<'a>,
        pod: &'a mut Value,
        _old: &'a Value,
    ) -> BoxFuture<'a, Result<(), RegistryError>> {
        Box::pin(async move {
            if support::is_pod_write(req) {
                add_default_tolerations(pod);
            }
            Ok(())
        })
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn missing_tolerations_are_added_for_300_seconds() {
        let not_ready =
            json!({"key": TAINTS[0], "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300});
        let unreachable =
            json!({"key": TAINTS[1], "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300});
        let own = json!({"key": TAINTS[0], "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 10});
        let cases: Vec<(&str, Value, Value)> = vec![
            ("none", json!(null), json!([not_ready, unreachable])),
            ("its own not-ready", json!([own]), json!([own, unreachable])),
            ("everything", json!([{"operator": "Exists"}]), json!([{"operator": "Exists"}])),
            (
                "all NoExecute",
                json!([{"operator": "Exists", "effect": "NoExecute"}]),
                json!([{"operator": "Exists", "effect": "NoExecute"}]),
            ),
            (
                "NoSchedule only",
                json!([{"key": TAINTS[1], "effect": "NoSchedule"}]),
                json!([{"key": TAINTS[1], "effect": "NoSchedule"}, not_ready, unreachable]),
            ),
        ];
        for (what, tolerations, want) in cases {
            let mut pod = json!({"spec": {"containers": []}});
            if !tolerations.is_null() {
                pod["spec"]["tolerations"] = tolerations;
            }
            add_default_tolerations(&mut pod);
            assert_eq!(pod["spec"]["tolerations"], want, "{what}");
        }
    }
}

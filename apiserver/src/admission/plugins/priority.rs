//! The Priority plugin (`KK/plugin/pkg/admission/priority/admission.go`): a new pod's `priority` and
//! `preemptionPolicy` come from the PriorityClass it names, else from the class marked `globalDefault`
//! (whose name it then takes), else 0 and `PreemptLowerPriority`; a pod naming a class that does not exist,
//! or writing a priority or policy its class disagrees with, is refused. An update keeps what the create
//! set. Only one class may be the global default.

use std::sync::Arc;

use serde_json::{json, Value};

use super::support::{self, forbidden, text};
use crate::admission::{Plugin, Request};
use crate::registry::admission::Operation;
use crate::registry::error::RegistryError;
use crate::registry::rest::BoxFuture;

const CLASSES: (&str, &str, &str) = ("scheduling.k8s.io", "v1", "priorityclasses");

pub(crate) struct Priority;

pub(crate) fn make() -> Arc<dyn Plugin> {
    Arc::new(Priority)
}

/// `getDefaultPriorityClass`: the global default class; of several (a race), the lowest valued.
fn default_class(classes: &[Value]) -> Option<&Value> {
    classes
        .iter()
        .filter(|c| c.get("globalDefault").and_then(Value::as_bool) == Some(true))
        .min_by_key(|c| c.get("value").and_then(Value::as_i64).unwrap_or(0))
}

/// What a class gives a pod: its value and its preemption policy, if it has one.
fn resolved(class: &Value) -> (i64, Option<String>) {
    let value = class.get("value").and_then(Value::as_i64).unwrap_or(0);
    (value, class.get("preemptionPolicy").and_then(Value::as_str).map(str::to_string))
}

/// `admitPod` on create, over the stored classes: the class's name, priority and policy written into the
/// pod, or why the pod is refused.
pub(crate) fn resolve_pod(pod: &mut Value, classes: &[Value]) -> Result<(), String> {
    let name = text(pod, "/spec/priorityClassName").to_string();
    let (class_name, priority, policy) = if name.is_empty() {
        match default_class(classes) {
            Some(class) => {
                let (value, policy) = resolved(class);
                (text(class, "/metadata/name").to_string(), value, policy)
            }
            // `DefaultPriorityWhenNoDefaultClassExists`.
            None => (String::new(), 0, Some("PreemptLowerPriority".to_string())),
        }
    } else {
        let Some(class) = classes.iter().find(|c| text(c, "/metadata/name") == name) else {
            return Err(format!("no PriorityClass with name {name} was found"));
        };
        let (value, policy) = resolved(class);
        (name, value, policy)
    };
    let Some(spec) = pod.get_mut("spec").and_then(Value::as_object_mut) else { return Ok(()) };
    if let Some(given) = spec.get("priority").filter(|p| !p.is_null()) {
        if given.as_i64() != Some(priority) {
            return Err(format!(
                "the integer value of priority ({given}) must not be provided in pod spec; priority admission controller computed {priority} from the given PriorityClass name"
            ));
        }
    }
    if !class_name.is_empty() {
        spec.insert("priorityClassName".into(), json!(class_name));
    }
    spec.insert("priority".into(), json!(priority));
    if let Some(policy) = policy {
        if let Some(given) = spec.get("preemptionPolicy").and_then(Value::as_str) {
            if given != policy {
                return Err(format!(
                    "the string value of PreemptionPolicy ({given}) must not be provided in pod spec; priority admission controller computed {policy} from the given PriorityClass name"
                ));
            }
        }
        spec.insert("preemptionPolicy".into(), json!(policy));
    }
    Ok(())
}

/// `admitPod` on update: what the create set stays (validation refuses any other change to it).
fn keep_on_update(pod: &mut Value, old: &Value) {
    let Some(spec) = pod.get_mut("spec").and_then(Value::as_object_mut) else { return };
    for field in ["priority", "preemptionPolicy"] {
        let missing = spec.get(field).is_none_or(Value::is_null);
        if let Some(before) = old.pointer(&format!("/spec/{field}")).filter(|v| !v.is_null()) {
            if missing {
                spec.insert(field.into(), before.clone());
            }
        }
    }
}

impl Plugin for Priority {
    fn name(&self) -> &'static str {
        "Priority"
    }

    fn admit<'a>(
        &'a self,
        req: &'a Request<'a>,
        pod: &'a mut Value,
        old: &'a Value,
    ) -> BoxFuture<'a, Result<(), RegistryError>> {
        Box::pin(async move {
            if !support::is_pod_write(req) || !pod.is_object() {
                return Ok(());
            }
            if req.attrs.operation == Operation::Update {
                keep_on_update(pod, old);
                return Ok(());
            }
            let classes = support::list_cached(req.registry, CLASSES, "").await?;
            resolve_pod(pod, &classes).map_err(|why| forbidden(req, pod, why))
        })
    }

    fn validate<'a>(
        &'a self,
        req: &'a Request<'a>,
        class: &'a Value,
        _old: &'a Value,
    ) -> BoxFuture<'a, Result<(), RegistryError>> {
        Box::pin(async move {
            let writes = matches!(req.attrs.operation, Operation::Create | Operation::Update);
            if !writes || !support::is_main(req, CLASSES.0, CLASSES.2) {
                return Ok(());
            }
            if class.get("globalDefault").and_then(Value::as_bool) != Some(true) {
                return Ok(());
            }
            let classes = support::list_cached(req.registry, CLASSES, "").await?;
            let Some(current) = default_class(&classes) else { return Ok(()) };
            let current = text(current, "/metadata/name");
            if req.attrs.operation == Operation::Create || current != text(class, "/metadata/name") {
                let why = format!("PriorityClass {current} is already marked as default. Only one default can exist");
                return Err(forbidden(req, class, why));
            }
            Ok(())
        })
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::admission::plugins::testing::{admin, attrs, message, pod, registry, run};
    use crate::registry::resource::Resource;

    fn class(name: &str, value: i64, default: bool, policy: Option<&str>) -> Value {
        let mut c = json!({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": name},
            "value": value, "globalDefault": default});
        if let Some(p) = policy {
            c["preemptionPolicy"] = json!(p);
        }
        c
    }

    #[tokio::test]
    async fn pods_get_their_class_priority_or_are_refused() {
        let pods = Resource::core("Pod", "pods");
        let user = admin();
        let high = class("high", 1000, false, Some("Never"));
        let low_default = class("low", 10, true, Some("PreemptLowerPriority"));
        let with = |f: &dyn Fn(&mut Value)| {
            let mut p = pod("ns", "p", &["c"]);
            f(&mut p);
            p
        };
        // (what, classes, pod, error, priority, policy, class name)
        let cases: Vec<(&str, Vec<Value>, Value, &str, i64, &str, &str)> = vec![
            ("no class at all", vec![], pod("ns", "p", &["c"]), "", 0, "PreemptLowerPriority", ""),
            (
                "the global default",
                vec![high.clone(), low_default.clone()],
                pod("ns", "p", &["c"]),
                "",
                10,
                "PreemptLowerPriority",
                "low",
            ),
            (
                "a named class",
                vec![high.clone()],
                with(&|p| p["spec"]["priorityClassName"] = json!("high")),
                "",
                1000,
                "Never",
                "high",
            ),
            (
                "an unknown class",
                vec![],
                with(&|p| p["spec"]["priorityClassName"] = json!("nope")),
                r#"pods "p" is forbidden: no PriorityClass with name nope was found"#,
                0,
                "",
                "",
            ),
            (
                "a priority of its own",
                vec![high.clone()],
                with(&|p| {
                    p["spec"]["priorityClassName"] = json!("high");
                    p["spec"]["priority"] = json!(5)
                }),
                r#"pods "p" is forbidden: the integer value of priority (5) must not be provided in pod spec; priority admission controller computed 1000 from the given PriorityClass name"#,
                0,
                "",
                "",
            ),
            (
                "the same priority",
                vec![high.clone()],
                with(&|p| {
                    p["spec"]["priorityClassName"] = json!("high");
                    p["spec"]["priority"] = json!(1000)
                }),
                "",
                1000,
                "Never",
                "high",
            ),
            (
                "a policy of its own",
                vec![high.clone()],
                with(&|p| {
                    p["spec"]["priorityClassName"] = json!("high");
                    p["spec"]["preemptionPolicy"] = json!("PreemptLowerPriority")
                }),
                r#"pods "p" is forbidden: the string value of PreemptionPolicy (PreemptLowerPriority) must not be provided in pod spec; priority admission controller computed Never from the given PriorityClass name"#,
                0,
                "",
                "",
            ),
        ];
        for (what, classes, mut obj, want, priority, policy, name) in cases {
            let registry = registry(classes);
            let req = Request {
                attrs: attrs(&pods, Operation::Create, "ns", "p"),
                user: &user,
                registry: &registry,
                now_unix_s: 0,
            };
            assert_eq!(message(&run(&Priority, &req, &mut obj, &Value::Null).await), want, "{what}");
            if want.is_empty() {
                assert_eq!(obj["spec"]["priority"], priority, "{what}");
                assert_eq!(obj["spec"]["preemptionPolicy"], policy, "{what}");
                assert_eq!(text(&obj, "/spec/priorityClassName"), name, "{what}");
            }
        }
    }

    #[tokio::test]
    async fn only_one_class_is_the_global_default() {
        let classes =
            Resource { group: "scheduling.k8s.io".into(), ..Resource::core("PriorityClass", "priorityclasses") };
        let user = admin();
        let registry = registry(vec![class("low", 10, true, None)]);
        let cases = [
            (
                Operation::Create,
                class("other", 5, true, None),
                r#"priorityclasses.scheduling.k8s.io "other" is forbidden: PriorityClass low is already marked as default. Only one default can exist"#,
            ),
            (
                Operation::Update,
                class("other", 5, true, None),
                r#"priorityclasses.scheduling.k8s.io "other" is forbidden: PriorityClass low is already marked as default. Only one default can exist"#,
            ),
            (Operation::Update, class("low", 10, true, None), ""),
            (Operation::Create, class("plain", 5, false, None), ""),
        ];
        for (op, mut obj, want) in cases {
            let req = Request { attrs: attrs(&classes, op, "", "x"), user: &user, registry: &registry, now_unix_s: 0 };
            assert_eq!(message(&run(&Priority, &req, &mut obj, &Value::Null).await), want, "{op:?} {obj}");
        }
    }

    #[test]
    fn updates_keep_what_the_create_set() {
        let mut new = json!({"spec": {"containers": []}});
        keep_on_update(&mut new, &json!({"spec": {"priority": 7, "preemptionPolicy": "Never"}}));
        assert_eq!(new["spec"], json!({"containers": [], "priority": 7, "preemptionPolicy": "Never"}));
    }
}

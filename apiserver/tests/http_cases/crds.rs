//! CustomResourceDefinitions over HTTP: a CRD is accepted and established, its resource appears in
//! discovery and serves custom resources that are pruned, defaulted and validated by their schema and CEL
//! rules, with `/status` and printer columns; bad CRDs are refused with upstream's texts; deleting a CRD
//! deletes its custom resources first. CRDs are cluster-wide, so every case uses its own group.

use serde_json::json;

use super::{case, delete, get, patch, post, Case};

const CRDS: &str = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";

/// A namespaced CRD `widgets.<group>` (kind Widget, short name `wd`) with `/status`, a printer column for
/// `spec.size`, a default, a bounded integer, an enum, and a CEL rule.
fn widget_crd(group: &str) -> String {
    json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": format!("widgets.{group}")},
        "spec": {
            "group": group,
            "scope": "Namespaced",
            "names": {"plural": "widgets", "kind": "Widget", "shortNames": ["wd"]},
            "versions": [{
                "name": "v1",
                "served": true,
                "storage": true,
                "subresources": {"status": {}, "scale": {"specReplicasPath": ".spec.size", "statusReplicasPath": ".status.count", "labelSelectorPath": ".status.selector"}},
                "additionalPrinterColumns": [{"name": "Size", "type": "integer", "jsonPath": ".spec.size"}],
                "selectableFields": [{"jsonPath": ".spec.color"}],
                "schema": {"openAPIV3Schema": {
                    "type": "object",
                    "properties": {
                        "spec": {
                            "type": "object",
                            "x-kubernetes-validations": [{"rule": "self.size <= self.max", "message": "size must not exceed max"}],
                            "properties": {
                                "size": {"type": "integer", "minimum": 0},
                                "max": {"type": "integer", "default": 10},
                                "color": {"type": "string", "enum": ["red", "blue"]},
                            },
                            "required": ["size"],
                        },
                        "status": {"type": "object", "properties": {"ready": {"type": "boolean"}, "count": {"type": "integer"}, "selector": {"type": "string"}}},
                    },
                }},
            }],
        },
    })
    .to_string()
}

fn widgets(group: &str) -> String {
    format!("/apis/{group}/v1/namespaces/{{ns}}/widgets")
}

fn widget(name: &str, spec: serde_json::Value, group: &str) -> String {
    json!({"apiVersion": format!("{group}/v1"), "kind": "Widget", "metadata": {"name": name}, "spec": spec}).to_string()
}

/// A cluster-scoped CRD `gears.<group>` served as v1beta1 and v1 (the storage version), with v1alpha1 not
/// served.
fn versioned_crd(group: &str) -> String {
    let schema = json!({"openAPIV3Schema": {"type": "object", "properties": {"spec": {"type": "object", "properties": {"teeth": {"type": "integer"}}}}}});
    json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": format!("gears.{group}")},
        "spec": {
            "group": group,
            "scope": "Cluster",
            "names": {"plural": "gears", "kind": "Gear"},
            "versions": [
                {"name": "v1alpha1", "served": false, "storage": false, "schema": schema},
                {"name": "v1beta1", "served": true, "storage": false, "schema": schema},
                {"name": "v1", "served": true, "storage": true, "schema": schema},
            ],
        },
    })
    .to_string()
}

pub fn cases() -> Vec<Case> {
    vec![
        case(
            "several versions, one storage version, the None conversion: an object reads as each served version",
            vec![
                post(CRDS, &versioned_crd("h.example.com")).code(201),
                get("/apis/h.example.com/v1/gears").eventually(),
                post(
                    "/apis/h.example.com/v1beta1/gears",
                    r#"{"apiVersion":"h.example.com/v1beta1","kind":"Gear","metadata":{"name":"g"},"spec":{"teeth":12}}"#,
                )
                .code(201)
                .field("/apiVersion", json!("h.example.com/v1beta1")),
                get("/apis/h.example.com/v1/gears/g").field("/apiVersion", json!("h.example.com/v1")).field("/spec/teeth", json!(12)),
                get("/apis/h.example.com/v1beta1/gears")
                    .field("/apiVersion", json!("h.example.com/v1beta1"))
                    .field("/items/0/apiVersion", json!("h.example.com/v1beta1")),
                get("/apis/h.example.com/v1alpha1/gears").code(404),
                get("/apis/h.example.com")
                    .field("/preferredVersion/version", json!("v1"))
                    .field("/versions/0/version", json!("v1")),
            ],
        ),
        case(
            "a CRD is accepted, established and served: custom resources are defaulted, pruned and validated",
            vec![
                post(CRDS, &widget_crd("a.example.com"))
                    .code(201)
                    .field("/status/acceptedNames", json!({"kind": "", "plural": ""}))
                    .field("/status/storedVersions", json!(["v1"]))
                    .field("/spec/names/listKind", json!("WidgetList"))
                    .field("/spec/names/singular", json!("widget"))
                    .field("/spec/conversion", json!({"strategy": "None"})),
                get(&format!("{CRDS}/widgets.a.example.com"))
                    .field("/status/conditions/0/type", json!("NamesAccepted"))
                    .field("/status/conditions/0/reason", json!("NoConflicts"))
                    .field("/status/conditions/1/type", json!("Established"))
                    .field("/status/conditions/1/status", json!("True"))
                    .field("/status/conditions/1/message", json!("the initial names have been accepted"))
                    .field("/status/acceptedNames/shortNames", json!(["wd"]))
                    .eventually(),
                get("/apis/a.example.com/v1")
                    .field("/resources/0/name", json!("widgets"))
                    .field("/resources/0/kind", json!("Widget"))
                    .field("/resources/0/shortNames", json!(["wd"]))
                    .field("/resources/1/name", json!("widgets/status"))
                    .field("/resources/2/name", json!("widgets/scale"))
                    .field("/resources/2/group", json!("autoscaling"))
                    .eventually(),
                // The CRD's schema is published, with the standard fields of every object.
                get("/openapi/v3/apis/a.example.com/v1")
                    .field("/components/schemas/com.example.a.v1.Widget/properties/spec/properties/size/type", json!("integer"))
                    .field("/components/schemas/com.example.a.v1.Widget/properties/spec/required", json!(["size"]))
                    .field("/components/schemas/com.example.a.v1.Widget/properties/kind/type", json!("string"))
                    .field(
                        "/components/schemas/com.example.a.v1.Widget/x-kubernetes-group-version-kind",
                        json!([{"group": "a.example.com", "kind": "Widget", "version": "v1"}]),
                    ),
                post(&widgets("a.example.com"), &widget("w", json!({"size": 3, "unknown": true}), "a.example.com"))
                    .code(201)
                    .field("/spec", json!({"size": 3, "max": 10}))
                    .field("/metadata/generation", json!(1)),
                post(&widgets("a.example.com"), &widget("big", json!({"size": 11}), "a.example.com")).status(
                    422,
                    "Invalid",
                    "Widget.a.example.com \"big\" is invalid: spec: Invalid value: \"object\": size must not exceed max",
                ),
                // Nothing refused is stored.
                get(&format!("{}/big", widgets("a.example.com"))).code(404),
                post(&widgets("a.example.com"), &widget("red", json!({"size": 1, "color": "green"}), "a.example.com"))
                    .status(
                        422,
                        "Invalid",
                        "Widget.a.example.com \"red\" is invalid: spec.color: Unsupported value: \"green\": supported values: \"red\", \"blue\"",
                    ),
                post(&widgets("a.example.com"), &widget("nosize", json!({}), "a.example.com"))
                    .status(422, "Invalid", "Widget.a.example.com \"nosize\" is invalid: spec.size: Required value")
                    .field(
                        "/details",
                        json!({"name": "nosize", "group": "a.example.com", "kind": "Widget", "causes": [
                            {"reason": "FieldValueRequired", "message": "Required value", "field": "spec.size"},
                        ]}),
                    ),
                // selectableFields: the CRD's fields work in field selectors; others are refused.
                post(&widgets("a.example.com"), &widget("blue", json!({"size": 1, "color": "blue"}), "a.example.com")).code(201),
                get(&format!("{}?fieldSelector=spec.color%3Dblue", widgets("a.example.com")))
                    .field("/items/0/metadata/name", json!("blue"))
                    .field("/items/1", json!(null)),
                get(&format!("{}?fieldSelector=spec.size%3D1", widgets("a.example.com")))
                    .status(400, "BadRequest", "field label not supported: spec.size"),
                // The main endpoint keeps the stored status; /status changes only the status.
                patch(&format!("{}/w", widgets("a.example.com")), "application/merge-patch+json", r#"{"spec":{"size":4},"status":{"ready":true}}"#)
                    .field("/spec/size", json!(4))
                    .field("/status", json!(null))
                    .field("/metadata/generation", json!(2)),
                patch(&format!("{}/w/status", widgets("a.example.com")), "application/merge-patch+json", r#"{"spec":{"size":5},"status":{"ready":true}}"#)
                    .field("/spec/size", json!(4))
                    .field("/status", json!({"ready": true}))
                    .field("/metadata/generation", json!(2)),
                // Custom resources take no strategic merge patch.
                patch(&format!("{}/w", widgets("a.example.com")), "application/strategic-merge-patch+json", "{}").code(415),
                // Server-side apply of a custom resource: spec.size is the creator's, so it takes force.
                patch(
                    &format!("{}/w?fieldManager=op", widgets("a.example.com")),
                    "application/apply-patch+yaml",
                    "apiVersion: a.example.com/v1\nkind: Widget\nmetadata:\n  name: w\nspec:\n  size: 2\n",
                )
                .code(409)
                .contains("Apply failed with 1 conflict"),
                patch(
                    &format!("{}/w?fieldManager=op&force=true", widgets("a.example.com")),
                    "application/apply-patch+yaml",
                    "apiVersion: a.example.com/v1\nkind: Widget\nmetadata:\n  name: w\nspec:\n  size: 2\n",
                )
                .field("/spec/size", json!(2))
                .field("/metadata/managedFields/0/manager", json!("op"))
                // Fields are owned by the CRD's schema: `spec` is a struct, which an apply does not own itself.
                .field("/metadata/managedFields/0/fieldsV1", json!({"f:spec": {"f:size": {}}}))
                // The creator owns what it sent after pruning and defaulting: `max` (the default), not `unknown`;
                // and `spec` itself, which its create added (an unstructured object has no zero-valued structs).
                .field("/metadata/managedFields/1/fieldsV1", json!({"f:spec": {".": {}, "f:max": {}}})),
                // /scale reads and writes the CRD's replicas paths, through the main endpoint's rules.
                patch(&format!("{}/w/status", widgets("a.example.com")), "application/merge-patch+json", r#"{"status":{"count":2,"selector":"app=w"}}"#),
                get(&format!("{}/w/scale", widgets("a.example.com")))
                    .field("/kind", json!("Scale"))
                    .field("/apiVersion", json!("autoscaling/v1"))
                    .field("/spec", json!({"replicas": 2}))
                    .field("/status", json!({"replicas": 2, "selector": "app=w"})),
                patch(&format!("{}/w/scale", widgets("a.example.com")), "application/merge-patch+json", r#"{"spec":{"replicas":5}}"#)
                    .field("/spec/replicas", json!(5)),
                get(&format!("{}/w", widgets("a.example.com"))).field("/spec/size", json!(5)).field("/metadata/generation", json!(4)),
                patch(&format!("{}/w/scale", widgets("a.example.com")), "application/merge-patch+json", r#"{"spec":{"replicas":11}}"#)
                    .status(422, "Invalid", "Widget.a.example.com \"w\" is invalid: spec: Invalid value: \"object\": size must not exceed max"),
                patch(&format!("{}/w?fieldManager=op&force=true", widgets("a.example.com")), "application/apply-patch+yaml", "apiVersion: a.example.com/v1\nkind: Widget\nmetadata:\n  name: w\nspec:\n  size: 2\n")
                    .field("/spec/size", json!(2)),
                get(&widgets("a.example.com"))
                    .header("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io")
                    .field("/columnDefinitions/1/name", json!("Size"))
                    .field("/rows/0/cells/0", json!("blue"))
                    .field("/rows/1/cells/0", json!("w"))
                    .field("/rows/1/cells/1", json!(2)),
            ],
        ),
        case(
            "bad CRDs are refused with upstream's texts, and nothing is stored",
            vec![
                post(CRDS, &widget_crd("b.example.com").replace("widgets.b.example.com", "gadgets.b.example.com")).status(
                    422,
                    "Invalid",
                    "CustomResourceDefinition.apiextensions.k8s.io \"gadgets.b.example.com\" is invalid: metadata.name: Invalid value: \"gadgets.b.example.com\": must be spec.names.plural+\".\"+spec.group",
                ),
                post(CRDS, &widget_crd("nodot")).status(
                    422,
                    "Invalid",
                    "CustomResourceDefinition.apiextensions.k8s.io \"widgets.nodot\" is invalid: spec.group: Invalid value: \"nodot\": should be a domain with at least one dot",
                ),
                post(CRDS, &widget_crd("c.example.com").replace("\"storage\":true", "\"storage\":false"))
                    .code(422)
                    .contains("must have exactly one version marked as storage version"),
                post(CRDS, &widget_crd("d.example.com").replace("\"rule\":\"self.size <= self.max\"", "\"rule\":\"self.size <=\""))
                    .code(422)
                    .contains("x-kubernetes-validations[0].rule"),
                post(CRDS, &widget_crd("e.example.com").replace("\"size\":{\"minimum\":0,\"type\":\"integer\"}", "\"size\":{\"minimum\":0}"))
                    .code(422)
                    .contains("spec.versions[0].schema.openAPIV3Schema.properties[spec].properties[size].type: Required value"),
                post(CRDS, &widget_crd("i.example.com").replace(",\"schema\":{\"openAPIV3Schema\"", ",\"unused\":{\"openAPIV3Schema\""))
                    .code(422)
                    .contains("spec.versions[0].schema.openAPIV3Schema: Required value: schemas are required"),
                post(CRDS, &versioned_crd("j.example.com").replace("\"storage\":false", "\"storage\":true"))
                    .code(422)
                    .contains("spec.versions: Invalid value: []apiextensions.CustomResourceDefinitionVersion{")
                    .contains("must have exactly one version marked as storage version"),
                get(&format!("{CRDS}/gadgets.b.example.com")).code(404),
                get(&format!("{CRDS}/widgets.c.example.com")).code(404),
            ],
        ),
        case(
            "a CRD whose kind another CRD of the group holds is not established",
            vec![
                post(CRDS, &widget_crd("f.example.com")).code(201),
                get(&format!("{CRDS}/widgets.f.example.com")).field("/status/conditions/1/status", json!("True")).eventually(),
                post(CRDS, &widget_crd("f.example.com").replace("widgets", "gizmos").replace("\"wd\"", "\"gz\""))
                    .code(201),
                get(&format!("{CRDS}/gizmos.f.example.com"))
                    .field("/status/conditions/0/status", json!("False"))
                    // Kind and list kind both conflict; the condition names the last name checked.
                    .field("/status/conditions/0/reason", json!("ListKindConflict"))
                    .field("/status/conditions/0/message", json!("\"WidgetList\" is already in use"))
                    .field("/status/conditions/1/reason", json!("NotAccepted"))
                    .eventually(),
                get("/apis/f.example.com/v1/namespaces/{ns}/gizmos").code(404),
            ],
        ),
        case(
            "deleting a CRD deletes its custom resources first (creates refused meanwhile), then the CRD and its endpoints go",
            vec![
                post(CRDS, &widget_crd("g.example.com")).code(201),
                get(&format!("{CRDS}/widgets.g.example.com")).field("/status/conditions/1/status", json!("True")).eventually(),
                post(&widgets("g.example.com"), &widget("w", json!({"size": 1}), "g.example.com")).code(201).eventually(),
                // A custom resource with a finalizer of its own holds the CRD's deletion until it goes.
                post(
                    &widgets("g.example.com"),
                    r#"{"apiVersion":"g.example.com/v1","kind":"Widget","metadata":{"name":"held","finalizers":["example.com/hold"]},"spec":{"size":1}}"#,
                )
                .code(201),
                delete(&format!("{CRDS}/widgets.g.example.com"))
                    .field("/metadata/finalizers", json!(["customresourcecleanup.apiextensions.k8s.io"]))
                    .field("/status/conditions/2/type", json!("Terminating")),
                get(&format!("{}/w", widgets("g.example.com"))).code(404).eventually(),
                get(&format!("{}/held", widgets("g.example.com")))
                    .field("/metadata/deletionTimestamp", json!("2023-11-14T22:13:20Z"))
                    .eventually(),
                get(&format!("{CRDS}/widgets.g.example.com"))
                    .field("/status/conditions/2/reason", json!("InstanceDeletionInProgress"))
                    .eventually(),
                // The handler reads the CRD from its informer, as upstream's crdHandler reads its lister, so
                // it may still take one create before it sees the CRD terminating; the cleanup deletes that
                // object too (it lists again until nothing is left).
                post(&widgets("g.example.com"), &widget("late", json!({"size": 1}), "g.example.com"))
                    .status(405, "MethodNotAllowed", "create not allowed while custom resource definition is terminating")
                    .eventually(),
                patch(&format!("{}/held", widgets("g.example.com")), "application/merge-patch+json", r#"{"metadata":{"finalizers":null}}"#),
                get(&format!("{CRDS}/widgets.g.example.com")).code(404).eventually(),
                get(&widgets("g.example.com")).code(404).eventually(),
            ],
        ),
    ]
}

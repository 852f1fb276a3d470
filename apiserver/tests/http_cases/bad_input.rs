//! What kube-apiserver refuses before or inside the registry, one row each, with its code, reason and
//! message: bodies that do not decode, bodies that contradict the URL, paths and methods nothing serves,
//! media types, sizes, invalid objects and options, selectors and resourceVersions.

use serde_json::json;

use super::{case, compact, configmap, delete, get, patch, post, put, step, Case};
use crate::http_server::Cache;

const CMS: &str = "/api/v1/namespaces/{ns}/configmaps";

pub fn cases() -> Vec<Case> {
    vec![
        case(
            "fieldValidation=Strict refuses unknown fields with the strict decoder's list",
            vec![post(
                &format!("{CMS}?fieldValidation=Strict"),
                r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x","nmae":"y"},"spec":{}}"#,
            )
            .status(
                400,
                "BadRequest",
                r#"ConfigMap in version "v1" cannot be handled as a ConfigMap: strict decoding error: unknown field "metadata.nmae", unknown field "spec""#,
            )],
        ),
        case(
            "fieldValidation=Strict reports a field of the wrong type before unknown ones",
            vec![post(
                &format!("{CMS}?fieldValidation=Strict"),
                r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x"},"data":{"a":1},"spec":{}}"#,
            )
            .status(
                400,
                "BadRequest",
                r#"ConfigMap in version "v1" cannot be handled as a ConfigMap: json: cannot unmarshal number into Go struct field ConfigMap.data of type string"#,
            )],
        ),
        case(
            "unknown fields are warnings by default and dropped",
            vec![
                post(CMS, r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x"},"spec":{"a":1}}"#)
                    .answer_header("Warning", r#"299 - "unknown field \"spec\"""#)
                    .field("/spec", serde_json::Value::Null),
                put(&format!("{CMS}/x?fieldValidation=Warn"), r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x"},"extra":true}"#)
                    .answer_header("Warning", r#"299 - "unknown field \"extra\"""#),
                patch(&format!("{CMS}/x"), "application/merge-patch+json", r#"{"other":1}"#)
                    .answer_header("Warning", r#"299 - "unknown field \"other\"""#),
            ],
        ),
        case(
            "a strict patch that adds an unknown field is a 422 on the patch",
            vec![
                post(CMS, &configmap("x", "{}")),
                patch(&format!("{CMS}/x?fieldValidation=Strict"), "application/merge-patch+json", r#"{"spec":{"a":1}}"#)
                    .code(422)
                    .field("/reason", json!("Invalid"))
                    .field("/details/causes/0/field", json!("patch"))
                    .contains(r#"strict decoding error: unknown field \"spec\""#),
            ],
        ),
        case(
            "malformed JSON body",
            vec![post(CMS, "xx").header("Content-Type", "application/json").status(
                400,
                "BadRequest",
                "the object provided is unrecognized (must be of type ConfigMap): couldn't get version/kind; json parse error: invalid character 'x' looking for beginning of value (7878)",
            )],
        ),
        case(
            "empty body",
            vec![post(CMS, "").status(
                400,
                "BadRequest",
                "the object provided is unrecognized (must be of type ConfigMap): couldn't get version/kind; json parse error: unexpected end of JSON input (<empty>)",
            )],
        ),
        case(
            "malformed YAML body",
            vec![post(CMS, "a: [").header("Content-Type", "application/yaml").code(400).contains(
                "the object provided is unrecognized (must be of type ConfigMap): error converting YAML to JSON: yaml: line",
            )],
        ),
        case(
            "a body of another kind",
            vec![post(CMS, r#"{"apiVersion":"v1","kind":"Pod","metadata":{"name":"x"}}"#).status(
                400,
                "BadRequest",
                r#"Pod in version "v1" cannot be handled as a ConfigMap: converting (v1.Pod) to (core.ConfigMap): unknown conversion"#,
            )],
        ),
        case(
            "a body of an unknown version",
            vec![post(CMS, r#"{"apiVersion":"v2","kind":"ConfigMap","metadata":{"name":"x"}}"#).status(
                400,
                "BadRequest",
                r#"ConfigMap in version "v2" cannot be handled as a ConfigMap: no kind "ConfigMap" is registered for version "v2" in scheme "pkg/api/legacyscheme/scheme.go:30""#,
            )],
        ),
        case(
            "a field of the wrong JSON type",
            vec![post(CMS, r#"{"metadata":{"name":"x"},"data":{"a":1}}"#).status(
                400,
                "BadRequest",
                r#"ConfigMap in version "v1" cannot be handled as a ConfigMap: json: cannot unmarshal number into Go struct field ConfigMap.data of type string"#,
            )],
        ),
        case(
            "a name in the body that differs from the URL",
            vec![
                post(CMS, &configmap("a", "{}")),
                put(&format!("{CMS}/a"), &configmap("b", "{}")).status(
                    400,
                    "BadRequest",
                    "the name of the object (b) does not match the name on the URL (a)",
                ),
            ],
        ),
        case(
            "a namespace in the body that differs from the URL",
            vec![post(CMS, r#"{"metadata":{"name":"x","namespace":"other"}}"#).status(
                400,
                "BadRequest",
                "the namespace of the provided object does not match the namespace sent on the request",
            )],
        ),
        case(
            "an unknown resource in a served group",
            vec![get("/api/v1/namespaces/{ns}/foos").status(404, "NotFound", "the server could not find the requested resource")],
        ),
        case(
            "an unknown group",
            vec![get("/apis/example.com/v1/widgets").code(404).contains("404 page not found")],
        ),
        case(
            "an unknown version of the core group",
            vec![get("/api/v2/namespaces/{ns}/configmaps").code(404).contains("404 page not found")],
        ),
        case(
            "a cluster-scoped resource under a namespace",
            vec![get("/api/v1/namespaces/{ns}/namespaces").status(404, "NotFound", "the server could not find the requested resource")],
        ),
        case(
            "a subresource the resource lacks",
            vec![
                post(CMS, &configmap("a", "{}")),
                get(&format!("{CMS}/a/status")).status(404, "NotFound", "the server could not find the requested resource"),
            ],
        ),
        case(
            "a method the collection does not serve",
            vec![put(CMS, &configmap("a", "{}")).status(
                405,
                "MethodNotAllowed",
                "the server does not allow this method on the requested resource",
            )],
        ),
        case(
            "deletecollection where the resource has none",
            vec![delete("/api/v1/namespaces").status(
                405,
                "MethodNotAllowed",
                "the server does not allow this method on the requested resource",
            )],
        ),
        case(
            "a create across namespaces",
            vec![post("/api/v1/configmaps", &configmap("a", "{}")).status(
                405,
                "MethodNotAllowed",
                "the server does not allow this method on the requested resource",
            )],
        ),
        case(
            "a body in an unknown media type",
            vec![post(CMS, &configmap("a", "{}")).header("Content-Type", "text/plain").status(
                415,
                "UnsupportedMediaType",
                "the body of the request was in an unknown format - accepted media types include: application/json, application/yaml, application/vnd.kubernetes.protobuf",
            )],
        ),
        case(
            "a patch in an unknown patch type",
            vec![
                post(CMS, &configmap("a", "{}")),
                patch(&format!("{CMS}/a"), "application/json", "{}").code(415).field("/reason", json!("UnsupportedMediaType")),
            ],
        ),
        case(
            "an Accept nothing can satisfy",
            vec![get(CMS).header("Accept", "text/html").status(
                406,
                "NotAcceptable",
                "only the following media types are accepted: application/json, application/yaml, application/vnd.kubernetes.protobuf",
            )],
        ),
        case(
            "a body over the request limit",
            vec![step("POST", CMS)
                .raw_body(vec![b' '; 3 * 1024 * 1024 + 1])
                .status(413, "RequestEntityTooLarge", "Request entity too large: limit is 3145728")],
        ),
        case(
            "an invalid object",
            vec![post(CMS, &configmap("x", r#"{"a b":"1"}"#))
                .status(
                    422,
                    "Invalid",
                    r#"ConfigMap "x" is invalid: data[a b]: Invalid value: "a b": a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')"#,
                )
                .field("/details/causes/0/field", json!("data[a b]"))
                .field("/details/causes/0/reason", json!("FieldValueInvalid"))
                .field("/details/kind", json!("ConfigMap"))],
        ),
        case(
            "a name kube refuses",
            vec![post(CMS, &configmap("Not_Valid", "{}")).code(422).field("/reason", json!("Invalid"))],
        ),
        case(
            "an unsupported field selector",
            vec![get(&format!("{CMS}?fieldSelector=spec.foo%3Dx")).status(
                400,
                "BadRequest",
                r#""spec.foo" is not a known field selector: only "metadata.name", "metadata.namespace""#,
            )],
        ),
        case(
            "an unparsable resourceVersion on a list",
            vec![get(&format!("{CMS}?resourceVersion=abc")).code(400).field("/reason", json!("BadRequest"))],
        ),
        case(
            "an unparsable limit",
            vec![get(&format!("{CMS}?limit=ten")).status(
                400,
                "BadRequest",
                r#"strconv.ParseInt: parsing "ten": invalid syntax"#,
            )],
        ),
        case(
            "a malformed continue token",
            vec![get(&format!("{CMS}?limit=1&continue=%21%21")).code(400).contains("invalid continue token")],
        ),
        case(
            "resourceVersionMatch without a resourceVersion",
            vec![get(&format!("{CMS}?resourceVersionMatch=NotOlderThan")).status(
                422,
                "Invalid",
                r#"ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided"#,
            )],
        ),
        case(
            "a resourceVersion too far in the future",
            vec![get(&format!("{CMS}?resourceVersion=99999999"))
                .code(504)
                .field("/reason", json!("Timeout"))
                .contains("Too large resource version: 99999999")],
        ),
        case(
            "invalid create options",
            vec![post(&format!("{CMS}?dryRun=Some&fieldValidation=Loud"), &configmap("a", "{}")).status(
                422,
                "Invalid",
                r#"CreateOptions.meta.k8s.io "" is invalid: [dryRun: Unsupported value: []string{"Some"}: supported values: "All", fieldValidation: Unsupported value: "Loud": supported values: "", "Ignore", "Strict", "Warn"]"#,
            )],
        ),
        case(
            "force on a non-apply patch",
            vec![
                post(CMS, &configmap("a", "{}")),
                patch(&format!("{CMS}/a?force=true"), "application/merge-patch+json", "{}").status(
                    422,
                    "Invalid",
                    r#"PatchOptions.meta.k8s.io "" is invalid: force: Forbidden: may not be specified for non-apply patch"#,
                ),
            ],
        ),
        case(
            "a patch that is not JSON",
            vec![
                post(CMS, &configmap("a", "{}")),
                patch(&format!("{CMS}/a"), "application/merge-patch+json", "{").status(
                    400,
                    "BadRequest",
                    "error decoding patch: unexpected end of JSON input",
                ),
                patch(&format!("{CMS}/a?fieldValidation=Ignore"), "application/merge-patch+json", "{")
                    .status(400, "BadRequest", "Invalid JSON Patch"),
                patch(&format!("{CMS}/a"), "application/json-patch+json", r#"{"op":"add"}"#).status(
                    400,
                    "BadRequest",
                    "error decoding patch: json: cannot unmarshal object into Go value of type []handlers.jsonPatchOp",
                ),
                patch(&format!("{CMS}/a?fieldValidation=Ignore"), "application/json-patch+json", r#"{"op":"add"}"#)
                    .status(400, "BadRequest", "json: cannot unmarshal object into Go value of type jsonpatch.Patch"),
                patch(&format!("{CMS}/a"), "application/merge-patch+json", "[1]").status(
                    400,
                    "BadRequest",
                    "error decoding patch: json: cannot unmarshal array into Go value of type map[string]interface {}",
                ),
            ],
        ),
        case(
            "a patch that is not JSON, of an object that does not exist: the 404 comes first",
            vec![patch(&format!("{CMS}/nope"), "application/merge-patch+json", "{").status(
                404,
                "NotFound",
                r#"configmaps "nope" not found"#,
            )],
        ),
        case(
            "a JSON patch of more than 10,000 operations",
            vec![
                post(CMS, &configmap("a", "{}")),
                patch(
                    &format!("{CMS}/a"),
                    "application/json-patch+json",
                    &format!("[{}]", vec![r#"{"op":"test","path":"/kind","value":"ConfigMap"}"#; 10_001].join(",")),
                )
                .status(413, "RequestEntityTooLarge", "Request entity too large: The allowed maximum operations in a JSON patch is 10000, got 10001"),
            ],
        ),
        case(
            "a JSON patch whose test fails",
            vec![
                post(CMS, &configmap("a", r#"{"k":"v"}"#)),
                patch(&format!("{CMS}/a"), "application/json-patch+json", r#"[{"op":"test","path":"/data/k","value":"other"}]"#)
                    .status(422, "Invalid", "the server rejected our request due to an error in our request"),
            ],
        ),
        case(
            "a patch of an object that does not exist",
            vec![patch(&format!("{CMS}/nope"), "application/merge-patch+json", "{}").status(
                404,
                "NotFound",
                r#"configmaps "nope" not found"#,
            )],
        ),
        case(
            "delete options that contradict themselves",
            vec![
                post(CMS, &configmap("a", "{}")),
                delete(&format!("{CMS}/a"))
                    .header("Content-Type", "application/json")
                    .body(r#"{"orphanDependents":true,"propagationPolicy":"Orphan"}"#)
                    .status(
                        422,
                        "Invalid",
                        r#"DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Invalid value: "Orphan": orphanDependents and deletionPropagation cannot be both set"#,
                    ),
            ],
        ),
        case(
            "an unknown propagation policy",
            vec![
                post(CMS, &configmap("a", "{}")),
                delete(&format!("{CMS}/a?propagationPolicy=Sideways")).status(
                    422,
                    "Invalid",
                    r#"DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Unsupported value: "Sideways": supported values: "Foreground", "Background", "Orphan", "nil""#,
                ),
            ],
        ),
        case(
            "an update with a stale resourceVersion",
            vec![
                post(CMS, &configmap("a", "{}")),
                put(&format!("{CMS}/a"), r#"{"metadata":{"name":"a","resourceVersion":"1"},"data":{}}"#).status(
                    409,
                    "Conflict",
                    r#"Operation cannot be fulfilled on configmaps "a": the object has been modified; please apply your changes to the latest version and try again"#,
                ),
            ],
        ),
        case(
            "a create of a name that exists",
            vec![
                post(CMS, &configmap("a", "{}")),
                post(CMS, &configmap("a", "{}")).status(409, "AlreadyExists", r#"configmaps "a" already exists"#),
            ],
        ),
        case(
            "a create in a namespace that does not exist",
            vec![post("/api/v1/namespaces/nowhere/configmaps", &configmap("a", "{}")).status(
                404,
                "NotFound",
                r#"namespaces "nowhere" not found"#,
            )],
        ),
        case(
            "an exact list at a compacted resourceVersion",
            vec![
                post(CMS, &configmap("a", "{}")),
                compact(),
                get(&format!("{CMS}?resourceVersion=2&resourceVersionMatch=Exact")).status(
                    410,
                    "Expired",
                    "The resourceVersion for the provided list is too old.",
                ),
            ],
        ),
        case(
            "a watch from a compacted resourceVersion, from etcd",
            vec![
                post(CMS, &configmap("a", "{}")),
                compact(),
                get(&format!("{CMS}?watch=true&resourceVersion=2&timeoutSeconds=1"))
                    .code(200)
                    .contains(r#""type":"ERROR""#)
                    .contains(r#""code":410"#)
                    .contains("The resourceVersion for the provided watch is too old."),
            ],
        )
        .only(Cache::Off),
        case(
            "a resourceVersion too far in the future, from the watch cache",
            vec![get(&format!("{CMS}/x?resourceVersion=99999999")).code(504).answer_header("Retry-After", "1")],
        )
        .only(Cache::On),
        case(
            "a continue token whose revision was compacted",
            vec![
                post(CMS, &configmap("a", "{}")),
                compact(),
                // A token at revision 2 (compacted by now) whose start key is a configmap's: a key from
                // another resource passes as upstream's does; the revision is what fails, with a 410 that
                // carries a token to go on at the latest revision.
                get("/api/v1/namespaces/{ns}/pods?limit=1&continue=eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6Miwic3RhcnQiOiJ0ZXN0XHUwMDAwIn0")
                    .code(410)
                    .field("/reason", json!("Expired"))
                    .contains("The provided continue parameter is too old to display a consistent list result.")
                    .contains(r#""continue":"ey"#),
            ],
        ),
        case(
            "an unrecognized includeObject",
            vec![get(&format!("{CMS}?includeObject=Everything"))
                .header("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io")
                .status(400, "BadRequest", r#"unrecognized includeObject value: "Everything""#)],
        ),
    ]
}

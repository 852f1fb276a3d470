//! `authentication.k8s.io/v1`: the reviews of who someone is (`TokenReview`, `SelfSubjectReview`, never
//! stored) and the `TokenRequest` of `serviceaccounts/token`.

pub(crate) mod selfsubjectreviews;
pub(crate) mod tokenrequests;
pub(crate) mod tokenreviews;

use serde_json::{json, Value};

/// The answer's metadata: the request's, with the `creationTimestamp` Go writes as `null` for an object
/// that was never stored.
pub(crate) fn unstored_meta(obj: &mut Value) {
    if !obj.get("metadata").is_some_and(Value::is_object) {
        obj["metadata"] = json!({});
    }
    let meta = obj["metadata"].as_object_mut().expect("metadata was made an object");
    meta.entry("creationTimestamp").or_insert(Value::Null);
}

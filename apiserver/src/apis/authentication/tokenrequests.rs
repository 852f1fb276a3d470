//! TokenRequests, `POST .../serviceaccounts/NAME/token` (`KK/pkg/registry/core/serviceaccount/storage/
//! token.go`, `KK/pkg/apis/authentication/validation`, `KK/pkg/serviceaccount/claims.go`): a signed,
//! expiring token for a service account, optionally bound to a pod or secret of its namespace, which the
//! token then names (`kubectl create token`). Nothing is stored: the answer is the request with its
//! defaults, `creationTimestamp` and status (the token and when it expires).
//!
//! The HTTP layer looks the account and the bound object up; this module checks the request, names the
//! object to look up, and issues.

use serde_json::{json, Value};

use crate::registry::error::RegistryError;
use crate::registry::field_error::FieldError;
use crate::registry::meta;
use crate::registry::system::rfc3339;
use crate::registry::tokens::{Claims, KubernetesClaims, ObjectRef, ServiceAccountTokens};
use crate::storage::GroupResource;

/// `SetDefaults_TokenRequestSpec`: an hour.
const DEFAULT_EXPIRATION_S: i64 = 3600;

/// The group and kind errors name (`TokenRequest.authentication.k8s.io`).
fn invalid(name: &str, errors: Vec<FieldError>) -> RegistryError {
    RegistryError::Invalid {
        group: "authentication.k8s.io".into(),
        kind: "TokenRequest".into(),
        name: name.into(),
        errors,
    }
}

/// The request's name and namespace, if given, must be the account's (checked before the account is
/// looked up).
pub(crate) fn check_names(req: &Value, account: &str, namespace: &str) -> Result<(), RegistryError> {
    let name = meta::get_str(req, "name");
    if !name.is_empty() && name != account {
        let err = FieldError::invalid("metadata.name", name, "must match the service account name if specified");
        return Err(invalid(account, vec![err]));
    }
    let ns = meta::get_str(req, "namespace");
    if !ns.is_empty() && ns != namespace {
        let err =
            FieldError::invalid("metadata.namespace", ns, "must match the service account namespace if specified");
        return Err(invalid(account, vec![err]));
    }
    Ok(())
}

/// What the token is to be bound to, as the plural to look it up in and its name.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct BoundRef {
    pub plural: &'static str,
    pub kind: &'static str,
    pub name: String,
    pub uid: String,
}

/// `spec.boundObjectRef`: a pod or a secret (kube 1.32 also binds to nodes, which this server does not
/// model yet), or nothing.
pub(crate) fn bound_ref(req: &Value) -> Result<Option<BoundRef>, RegistryError> {
    let Some(r) = req.pointer("/spec/boundObjectRef").filter(|r| r.is_object()) else {
        return Ok(None);
    };
    let field = |f: &str| r.get(f).and_then(Value::as_str).unwrap_or("").to_string();
    let (api_version, kind) = (field("apiVersion"), field("kind"));
    let (plural, kind) = match (api_version.as_str(), kind.as_str()) {
        ("v1", "Pod") => ("pods", "Pod"),
        ("v1", "Secret") => ("secrets", "Secret"),
        _ => {
            let (group, version) = api_version.rsplit_once('/').unwrap_or(("", &api_version));
            return Err(RegistryError::BadRequest(format!(
                "cannot bind token to object of type {group}/{version}, Kind={kind}"
            )));
        }
    };
    Ok(Some(BoundRef { plural, kind, name: field("name"), uid: field("uid") }))
}

/// The answer to `req` for `account`, bound to `bound` (the object looked up for [`bound_ref`]), issued at
/// `now_unix_s` with token id `jti`.
pub(crate) fn issue(
    mut req: Value,
    account: &Value,
    bound: Option<(&BoundRef, &Value)>,
    now_unix_s: i64,
    jti: &str,
    tokens: &ServiceAccountTokens,
) -> Result<Value, RegistryError> {
    let account_name = meta::get_str(account, "name").to_string();
    let namespace = meta::get_str(account, "namespace").to_string();
    if !req.get("spec").is_some_and(Value::is_object) {
        req["spec"] = json!({});
    }
    let audiences: Vec<String> = req["spec"]
        .get("audiences")
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).map(str::to_string).collect())
        .unwrap_or_default();
    let audiences = if audiences.is_empty() { vec![tokens.issuer().to_string()] } else { audiences };
    let expiration_s = req["spec"].get("expirationSeconds").and_then(Value::as_i64).unwrap_or(DEFAULT_EXPIRATION_S);
    {
        let spec = req["spec"].as_object_mut().expect("spec was made an object");
        spec.insert("audiences".into(), json!(audiences));
        spec.insert("expirationSeconds".into(), json!(expiration_s));
        spec.entry("boundObjectRef").or_insert(Value::Null);
    }
    if !req.get("metadata").is_some_and(Value::is_object) {
        req["metadata"] = json!({});
    }
    let meta = req["metadata"].as_object_mut().expect("metadata was made an object");
    meta.insert("name".into(), json!(account_name));
    meta.insert("namespace".into(), json!(namespace));
    meta.insert("creationTimestamp".into(), json!(rfc3339(now_unix_s)));
    let errors = validate(expiration_s);
    if !errors.is_empty() {
        return Err(invalid("", errors));
    }
    let mut kubernetes = KubernetesClaims {
        namespace: namespace.clone(),
        serviceaccount: ObjectRef { name: account_name.clone(), uid: meta::get_str(account, "uid").into() },
        ..KubernetesClaims::default()
    };
    if let Some((r, obj)) = bound {
        let uid = meta::get_str(obj, "uid");
        if !r.uid.is_empty() && r.uid != uid {
            return Err(RegistryError::Conflict {
                resource: GroupResource::new("", r.kind),
                name: r.name.clone(),
                why: format!("the UID in the bound object reference ({}) does not match the UID in record. The object might have been deleted and then recreated", r.uid),
            });
        }
        if r.kind == "Pod" {
            let pod_account = obj.pointer("/spec/serviceAccountName").and_then(Value::as_str).unwrap_or("");
            if pod_account != account_name {
                return Err(RegistryError::BadRequest(format!(
                    "cannot bind token for serviceaccount {account_name:?} to pod running with serviceaccount {pod_account:?}"
                )));
            }
        }
        let reference = Some(ObjectRef { name: r.name.clone(), uid: uid.into() });
        if r.kind == "Pod" {
            kubernetes.pod = reference;
        } else {
            kubernetes.secret = reference;
        }
    }
    let claims = Claims {
        aud: audiences,
        exp: now_unix_s + expiration_s,
        iat: now_unix_s,
        iss: tokens.issuer().into(),
        jti: jti.into(),
        kubernetes,
        nbf: now_unix_s,
        sub: format!("system:serviceaccount:{namespace}:{account_name}"),
    };
    req["status"] = json!({
        "token": tokens.issue(&claims),
        "expirationTimestamp": rfc3339(now_unix_s + expiration_s),
    });
    Ok(req)
}

/// `ValidateTokenRequest`: between ten minutes and 2^32 seconds.
fn validate(expiration_s: i64) -> Vec<FieldError> {
    let mut errors = Vec::new();
    if expiration_s < 600 {
        errors.push(FieldError::invalid_int(
            "spec.expirationSeconds",
            expiration_s,
            "may not specify a duration less than 10 minutes",
        ));
    }
    if expiration_s > 1 << 32 {
        errors.push(FieldError::invalid_int(
            "spec.expirationSeconds",
            expiration_s,
            "may not specify a duration larger than 2^32 seconds",
        ));
    }
    errors
}

#[cfg(test)]
mod tests {
    use super::*;

    fn account() -> Value {
        json!({"metadata": {"name": "robot", "namespace": "ns", "uid": "u-1"}})
    }

    #[test]
    fn a_request_is_defaulted_and_answered_with_a_token_that_verifies() {
        let tokens = ServiceAccountTokens::from_seed(0);
        let answer = issue(json!({"spec": {}}), &account(), None, 1000, "j-1", &tokens).unwrap();
        assert_eq!(
            answer["metadata"],
            json!({"name": "robot", "namespace": "ns", "creationTimestamp": "1970-01-01T00:16:40Z"})
        );
        assert_eq!(
            answer["spec"],
            json!({"audiences": [crate::registry::tokens::DEFAULT_ISSUER], "expirationSeconds": 3600, "boundObjectRef": null})
        );
        assert_eq!(answer["status"]["expirationTimestamp"], "1970-01-01T01:16:40Z");
        let claims = tokens.verify(answer["status"]["token"].as_str().unwrap(), 1000, &[]).unwrap();
        assert_eq!(claims.sub, "system:serviceaccount:ns:robot");
        assert_eq!(claims.exp, 4600);
        assert_eq!(claims.kubernetes.serviceaccount.uid, "u-1");
    }

    #[test]
    fn requests_are_checked_as_upstream_checks_them() {
        let tokens = ServiceAccountTokens::from_seed(0);
        let cases: Vec<(Value, &str)> = vec![
            (
                json!({"spec": {"expirationSeconds": 60}}),
                r#"TokenRequest.authentication.k8s.io "" is invalid: spec.expirationSeconds: Invalid value: 60: may not specify a duration less than 10 minutes"#,
            ),
            (
                json!({"spec": {"expirationSeconds": 4294967297i64}}),
                r#"TokenRequest.authentication.k8s.io "" is invalid: spec.expirationSeconds: Invalid value: 4294967297: may not specify a duration larger than 2^32 seconds"#,
            ),
        ];
        for (req, want) in cases {
            assert_eq!(issue(req, &account(), None, 0, "j", &tokens).unwrap_err().to_string(), want);
        }
        assert_eq!(
            check_names(&json!({"metadata": {"name": "other"}}), "robot", "ns").unwrap_err().to_string(),
            r#"TokenRequest.authentication.k8s.io "robot" is invalid: metadata.name: Invalid value: "other": must match the service account name if specified"#
        );
        assert!(check_names(&json!({"metadata": {"name": "robot", "namespace": "ns"}}), "robot", "ns").is_ok());
    }

    #[test]
    fn tokens_bind_to_pods_and_secrets_only() {
        let pod_ref =
            json!({"spec": {"boundObjectRef": {"apiVersion": "v1", "kind": "Pod", "name": "p", "uid": "p-1"}}});
        let r = bound_ref(&pod_ref).unwrap().unwrap();
        assert_eq!(r, BoundRef { plural: "pods", kind: "Pod", name: "p".into(), uid: "p-1".into() });
        assert_eq!(
            bound_ref(
                &json!({"spec": {"boundObjectRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "d"}}})
            ),
            Err(RegistryError::BadRequest("cannot bind token to object of type apps/v1, Kind=Deployment".into()))
        );
        let tokens = ServiceAccountTokens::from_seed(0);
        let pod = json!({"metadata": {"name": "p", "uid": "p-1"}, "spec": {"serviceAccountName": "other"}});
        assert_eq!(
            issue(pod_ref.clone(), &account(), Some((&r, &pod)), 0, "j", &tokens),
            Err(RegistryError::BadRequest(
                r#"cannot bind token for serviceaccount "robot" to pod running with serviceaccount "other""#.into()
            ))
        );
        let recreated = json!({"metadata": {"name": "p", "uid": "p-2"}, "spec": {"serviceAccountName": "robot"}});
        assert!(matches!(
            issue(pod_ref.clone(), &account(), Some((&r, &recreated)), 0, "j", &tokens),
            Err(RegistryError::Conflict { .. })
        ));
        let pod = json!({"metadata": {"name": "p", "uid": "p-1"}, "spec": {"serviceAccountName": "robot"}});
        let answer = issue(pod_ref, &account(), Some((&r, &pod)), 0, "j", &tokens).unwrap();
        let claims = tokens.verify(answer["status"]["token"].as_str().unwrap(), 0, &[]).unwrap();
        assert_eq!(claims.kubernetes.pod, Some(ObjectRef { name: "p".into(), uid: "p-1".into() }));
    }
}

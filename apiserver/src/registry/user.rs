//! [`UserInfo`]: who made a request, as kube's `user.Info` says it, and as the review kinds
//! (`TokenReview`, `SelfSubjectReview`, the access reviews) write it back.
//!
//! The server has no authenticator configured beyond service account tokens (the next step adds the
//! rest): a request with a valid service account token is that account; every other request is the
//! anonymous user, which the server's authorizer (kube's `AlwaysAllow`) lets do anything.

use std::collections::BTreeMap;

use serde_json::{json, Map, Value};

/// The user a request runs as.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UserInfo {
    pub username: String,
    pub uid: String,
    pub groups: Vec<String>,
    pub extra: BTreeMap<String, Vec<String>>,
}

impl UserInfo {
    /// kube's anonymous user, `system:anonymous` in `system:unauthenticated`.
    pub fn anonymous() -> UserInfo {
        UserInfo {
            username: "system:anonymous".into(),
            uid: String::new(),
            groups: vec!["system:unauthenticated".into()],
            extra: BTreeMap::new(),
        }
    }

    /// The user of a service account token (`serviceaccount.UserInfo`): `system:serviceaccount:NS:NAME` in
    /// the service account groups, with the token's id as its credential.
    pub(crate) fn service_account(namespace: &str, name: &str, uid: &str, token_id: &str) -> UserInfo {
        let mut extra = BTreeMap::new();
        if !token_id.is_empty() {
            extra.insert("authentication.kubernetes.io/credential-id".into(), vec![format!("JTI={token_id}")]);
        }
        UserInfo {
            username: format!("system:serviceaccount:{namespace}:{name}"),
            uid: uid.into(),
            groups: vec![
                "system:serviceaccounts".into(),
                format!("system:serviceaccounts:{namespace}"),
                "system:authenticated".into(),
            ],
            extra,
        }
    }

    /// The `authentication.k8s.io/v1` `UserInfo` object (every field is `omitempty`).
    pub(crate) fn to_json(&self) -> Value {
        let mut out = Map::new();
        if !self.username.is_empty() {
            out.insert("username".into(), json!(self.username));
        }
        if !self.uid.is_empty() {
            out.insert("uid".into(), json!(self.uid));
        }
        if !self.groups.is_empty() {
            out.insert("groups".into(), json!(self.groups));
        }
        if !self.extra.is_empty() {
            out.insert("extra".into(), json!(self.extra));
        }
        Value::Object(out)
    }
}

impl Default for UserInfo {
    fn default() -> UserInfo {
        UserInfo::anonymous()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn users_write_only_what_they_have() {
        assert_eq!(
            UserInfo::anonymous().to_json(),
            json!({"username": "system:anonymous", "groups": ["system:unauthenticated"]})
        );
        let sa = UserInfo::service_account("ns", "robot", "u-1", "j-1");
        assert_eq!(
            sa.to_json(),
            json!({
                "username": "system:serviceaccount:ns:robot",
                "uid": "u-1",
                "groups": ["system:serviceaccounts", "system:serviceaccounts:ns", "system:authenticated"],
                "extra": {"authentication.kubernetes.io/credential-id": ["JTI=j-1"]},
            })
        );
    }
}

//! Impersonation (`Impersonate-User`, `-Uid`, `-Group`, `-Extra-<key>` headers): a request runs as
//! another user once the authorizer allows its real user to `impersonate` each part, as kube's
//! `WithImpersonation` filter checks them: users (or the service account a `system:serviceaccount:`
//! name is), groups, uids and each extra value.

use std::collections::BTreeMap;

use http::HeaderMap;

use crate::registry::authorizer::{Attributes, ResourceAttributes};
use crate::registry::user::UserInfo;

/// What a request asks to impersonate.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Impersonation {
    pub user: String,
    pub uid: Option<String>,
    pub groups: Vec<String>,
    pub extra: BTreeMap<String, Vec<String>>,
}

/// The prefix of the extra headers.
const EXTRA_PREFIX: &str = "impersonate-extra-";

impl Impersonation {
    /// The impersonation a request's headers ask for, if any; a group, uid or extra without a user is
    /// upstream's 400.
    pub(crate) fn from_headers(headers: &HeaderMap) -> Result<Option<Impersonation>, String> {
        let text = |v: &http::HeaderValue| v.to_str().unwrap_or("").to_string();
        let user = headers.get("impersonate-user").map(text);
        let uid = headers.get("impersonate-uid").map(text);
        let groups: Vec<String> = headers.get_all("impersonate-group").iter().map(text).collect();
        let mut extra: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for (name, value) in headers {
            if let Some(key) = name.as_str().strip_prefix(EXTRA_PREFIX) {
                let key = percent_encoding::percent_decode_str(key).decode_utf8_lossy().to_lowercase();
                extra.entry(key).or_default().push(text(value));
            }
        }
        let Some(user) = user else {
            if uid.is_some() || !groups.is_empty() || !extra.is_empty() {
                return Err(format!(
                    "requested {} without impersonating a user",
                    describe(&groups, uid.as_deref(), &extra)
                ));
            }
            return Ok(None);
        };
        Ok(Some(Impersonation { user, uid, groups, extra }))
    }

    /// Each check the authorizer must allow, as attributes for `actor` (the real user).
    pub(crate) fn checks<'a>(&'a self, actor: &'a UserInfo) -> Vec<Attributes<'a>> {
        let resource = |group: &'a str, resource: &'a str, sub: &'a str, ns: &'a str, name: &'a str| Attributes {
            user: actor,
            verb: "impersonate",
            resource: Some(ResourceAttributes {
                namespace: ns,
                api_group: group,
                api_version: "",
                resource,
                subresource: sub,
                name,
            }),
            path: "",
        };
        let mut checks = Vec::new();
        match service_account(&self.user) {
            Some((ns, name)) => checks.push(resource("", "serviceaccounts", "", ns, name)),
            None => checks.push(resource("", "users", "", "", &self.user)),
        }
        for group in &self.groups {
            checks.push(resource("", "groups", "", "", group));
        }
        for (key, values) in &self.extra {
            for value in values {
                checks.push(resource("authentication.k8s.io", "userextras", key, "", value));
            }
        }
        if let Some(uid) = &self.uid {
            checks.push(resource("authentication.k8s.io", "uids", "", "", uid));
        }
        checks
    }

    /// The user the request becomes: the groups asked for, plus those upstream adds (a service account's
    /// groups, and the authenticated or unauthenticated group).
    pub(crate) fn user(&self) -> UserInfo {
        let mut groups = self.groups.clone();
        // A service account's groups are a fixed mapping, added only when no group is asked for.
        if let (Some((ns, _)), true) = (service_account(&self.user), groups.is_empty()) {
            groups = vec!["system:serviceaccounts".to_string(), format!("system:serviceaccounts:{ns}")];
        }
        let has = |g: &str| groups.iter().any(|x| x == g);
        if self.user == "system:anonymous" {
            if !has("system:unauthenticated") {
                groups.push("system:unauthenticated".into());
            }
        } else if !has("system:authenticated") && !has("system:unauthenticated") {
            groups.push("system:authenticated".into());
        }
        UserInfo {
            username: self.user.clone(),
            uid: self.uid.clone().unwrap_or_default(),
            groups,
            extra: self.extra.clone(),
        }
    }
}

/// The namespace and name of a `system:serviceaccount:NS:NAME` user.
fn service_account(user: &str) -> Option<(&str, &str)> {
    let rest = user.strip_prefix("system:serviceaccount:")?;
    let (ns, name) = rest.split_once(':')?;
    (!ns.is_empty() && !name.is_empty() && !name.contains(':')).then_some((ns, name))
}

/// What a headless impersonation asked for, as upstream's error prints its `[]ObjectReference` with
/// Go's `%v`: each reference's seven fields (kind, namespace, name, uid, apiVersion, resourceVersion,
/// fieldPath) separated by spaces, in the order the requests were built.
fn describe(groups: &[String], uid: Option<&str>, extra: &BTreeMap<String, Vec<String>>) -> String {
    let reference = |kind: &str, name: &str, api_version: &str, field_path: &str| {
        format!("{{{kind}  {name}  {api_version}  {field_path}}}")
    };
    let mut parts = Vec::new();
    for group in groups {
        parts.push(reference("Group", group, "", ""));
    }
    for (key, values) in extra {
        for value in values {
            parts.push(reference("UserExtra", value, "authentication.k8s.io/v1", key));
        }
    }
    if let Some(uid) = uid {
        parts.push(reference("UID", uid, "authentication.k8s.io/v1", ""));
    }
    format!("[{}]", parts.join(" "))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&str, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (k, v) in pairs {
            map.append(http::HeaderName::from_bytes(k.as_bytes()).unwrap(), v.parse().unwrap());
        }
        map
    }

    #[test]
    fn headers_become_checks_and_a_user() {
        let asked = Impersonation::from_headers(&headers(&[
            ("Impersonate-User", "system:serviceaccount:ns:robot"),
            ("Impersonate-Group", "dev"),
            ("Impersonate-Extra-Scopes", "a"),
        ]))
        .unwrap()
        .unwrap();
        let actor = UserInfo::anonymous();
        let checks: Vec<_> = asked
            .checks(&actor)
            .iter()
            .map(|c| {
                let r = c.resource.unwrap();
                format!("{}/{}/{}/{}/{}", r.api_group, r.resource, r.subresource, r.namespace, r.name)
            })
            .collect();
        assert_eq!(
            checks,
            ["/serviceaccounts//ns/robot", "/groups///dev", "authentication.k8s.io/userextras/scopes//a"]
        );
        // Groups were asked for, so the service account's own are not added.
        let user = asked.user();
        assert_eq!(user.username, "system:serviceaccount:ns:robot");
        assert_eq!(user.groups, ["dev", "system:authenticated"]);
        assert_eq!(user.extra["scopes"], ["a"]);
    }

    #[test]
    fn no_headers_no_impersonation_and_a_group_alone_is_refused() {
        assert_eq!(Impersonation::from_headers(&HeaderMap::new()), Ok(None));
        assert_eq!(
            Impersonation::from_headers(&headers(&[("Impersonate-Group", "dev")])).unwrap_err(),
            "requested [{Group  dev    }] without impersonating a user"
        );
    }
}

//! [`RequestInfo`]: what a request is about, read from its method, path and query alone, by
//! kube-apiserver's rules (`RequestInfoFactory.NewRequestInfo` in k8s.io/apiserver
//! `pkg/endpoints/request/requestinfo.go`). The server routes on it, the metrics label by it, and the
//! errors name its resource. [`Action`], what a resource request does once routed, lives here too: the
//! handlers decide it and the metrics label by it, so it sits below both.
//!
//! Resource requests look like `/api/v1/[namespaces/NS/]RESOURCE[/NAME[/SUBRESOURCE]]` and
//! `/apis/GROUP/VERSION/...`; the deprecated `/api/v1/watch/...` form puts the verb in the path. The verb
//! comes from the method (`POST` create, `GET` get, `PUT` update, `PATCH` patch, `DELETE` delete), and a
//! `get` without a name is a `list`, or a `watch` when the query says `watch=true`; a `delete` without a
//! name is a `deletecollection`. Anything else is a non-resource request (`/version`, `/healthz`, `/api`).

use crate::apis::Verb;

/// What a request is about.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct RequestInfo {
    /// Whether the path names a resource (`/api/v1/pods`) rather than anything else (`/version`).
    pub is_resource_request: bool,
    /// The request path as received.
    pub path: String,
    /// For non-resource requests, the lower-cased method (`get`); for resource requests, the verb.
    pub verb: Verb,
    /// `api` or `apis`.
    pub api_prefix: String,
    /// The API group, "" for the core group.
    pub api_group: String,
    pub api_version: String,
    /// "" for cluster-scoped requests and lists across namespaces.
    pub namespace: String,
    pub resource: String,
    pub subresource: String,
    pub name: String,
    /// The path after the version and namespace, starting at the resource.
    pub parts: Vec<String>,
    /// Whether the verb came from the path (`/api/v1/watch/...`) rather than the method.
    pub verb_in_path: bool,
}

/// Why a path that starts like a resource request cannot be one (kube answers 404 for it).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct UnresolvableUrl(pub String);

/// Path prefixes of API groups (`/apis/GROUP/VERSION`) and of the legacy, group-less core API (`/api/VERSION`).
const API_PREFIX: &str = "apis";
const LEGACY_API_PREFIX: &str = "api";

/// Subresources of namespaces, which share the `/namespaces/NAME/...` form with namespaced resources.
const NAMESPACE_SUBRESOURCES: [&str; 2] = ["status", "finalize"];

impl RequestInfo {
    /// Resolves a request. `method` is the HTTP method, `path` the URL path (percent-decoded), `query`
    /// the decoded query pairs in order.
    pub(crate) fn new(method: &str, path: &str, query: &[(String, String)]) -> Result<RequestInfo, UnresolvableUrl> {
        let mut info = RequestInfo {
            is_resource_request: false,
            path: path.to_string(),
            verb: Verb::Unknown,
            api_prefix: String::new(),
            api_group: String::new(),
            api_version: String::new(),
            namespace: String::new(),
            resource: String::new(),
            subresource: String::new(),
            name: String::new(),
            parts: Vec::new(),
            verb_in_path: false,
        };
        let mut parts: Vec<&str> = split_path(path);
        if parts.len() < 3 || ![API_PREFIX, LEGACY_API_PREFIX].contains(&parts[0]) {
            return Ok(info);
        }
        info.api_prefix = parts[0].to_string();
        parts.remove(0);
        if info.api_prefix == API_PREFIX {
            // One part (the prefix) is consumed: a group request needs group, version and resource.
            if parts.len() < 3 {
                return Ok(info);
            }
            info.api_group = parts.remove(0).to_string();
        }
        info.is_resource_request = true;
        info.api_version = parts.remove(0).to_string();

        if parts[0] == "watch" || parts[0] == "proxy" {
            if parts.len() < 2 {
                return Err(UnresolvableUrl(format!("unable to determine kind and namespace from url, {path}")));
            }
            info.verb = if parts[0] == "watch" { Verb::Watch } else { Verb::Unknown };
            info.verb_in_path = true;
            parts.remove(0);
        } else {
            info.verb = match method {
                "POST" => Verb::Create,
                "GET" | "HEAD" => Verb::Get,
                "PUT" => Verb::Update,
                "PATCH" => Verb::Patch,
                "DELETE" => Verb::Delete,
                _ => Verb::Unknown,
            };
        }

        if parts[0] == "namespaces" && parts.len() > 1 {
            info.namespace = parts[1].to_string();
            // A step after the namespace's name that is not one of its subresources is a resource of its own.
            if parts.len() > 2 && !NAMESPACE_SUBRESOURCES.contains(&parts[2]) {
                parts.drain(..2);
            }
        }
        info.parts = parts.iter().map(|p| p.to_string()).collect();
        if let Some(resource) = parts.first() {
            info.resource = resource.to_string();
        }
        if let Some(name) = parts.get(1) {
            info.name = name.to_string();
        }
        if let Some(sub) = parts.get(2) {
            info.subresource = sub.to_string();
        }

        if info.name.is_empty() && info.verb == Verb::Get {
            info.verb = if query_watch(query) { Verb::Watch } else { Verb::List };
        }
        if info.name.is_empty() && info.verb == Verb::Delete {
            info.verb = Verb::DeleteCollection;
        }
        Ok(info)
    }
}

/// The path's segments without empty ones at either end (`/api/v1/` is `["api", "v1"]`).
fn split_path(path: &str) -> Vec<&str> {
    let trimmed = path.trim_matches('/');
    if trimmed.is_empty() {
        Vec::new()
    } else {
        trimmed.split('/').collect()
    }
}

/// Whether the query asks for a watch: the first `watch` value parsed as Go's `strconv.ParseBool`
/// (`1`, `t`, `T`, `TRUE`, `true`, `True`), as kube's parameter codec reads it.
pub(crate) fn query_watch(query: &[(String, String)]) -> bool {
    query.iter().find(|(k, _)| k == "watch").is_some_and(|(_, v)| parse_go_bool(v) == Some(true))
}

/// Go's `strconv.ParseBool`.
pub(crate) fn parse_go_bool(text: &str) -> Option<bool> {
    match text {
        "1" | "t" | "T" | "TRUE" | "true" | "True" => Some(true),
        "0" | "f" | "F" | "FALSE" | "false" | "False" => Some(false),
        _ => None,
    }
}

/// What a resource request does once routed (`handlers::route` decides it from the method and the
/// request's target): the handler that answers it, and the verb its metrics carry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Action {
    Get,
    List,
    Watch,
    Create,
    Update,
    Patch,
    Delete,
    DeleteCollection,
}

impl Action {
    /// The verb as discovery and RBAC name it.
    pub(crate) fn verb(self) -> Verb {
        match self {
            Action::Get => Verb::Get,
            Action::List => Verb::List,
            Action::Watch => Verb::Watch,
            Action::Create => Verb::Create,
            Action::Update => Verb::Update,
            Action::Patch => Verb::Patch,
            Action::Delete => Verb::Delete,
            Action::DeleteCollection => Verb::DeleteCollection,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One case: method, path, query, then the expected verb, group, version, namespace, resource, name and
    /// subresource ("-" for a non-resource request).
    type Case = (&'static str, &'static str, &'static str, &'static str, [&'static str; 6]);

    #[test]
    fn resolves_as_kube_apiserver_does() {
        let cases: &[Case] = &[
            ("GET", "/api/v1/namespaces", "", "list", ["", "v1", "", "namespaces", "", ""]),
            ("GET", "/api/v1/namespaces/other", "", "get", ["", "v1", "other", "namespaces", "other", ""]),
            ("GET", "/api/v1/namespaces/other/pods", "", "list", ["", "v1", "other", "pods", "", ""]),
            ("GET", "/api/v1/namespaces/other/pods/foo", "", "get", ["", "v1", "other", "pods", "foo", ""]),
            ("HEAD", "/api/v1/namespaces/other/pods/foo", "", "get", ["", "v1", "other", "pods", "foo", ""]),
            ("GET", "/api/v1/pods", "", "list", ["", "v1", "", "pods", "", ""]),
            ("GET", "/api/v1/pods", "watch=true", "watch", ["", "v1", "", "pods", "", ""]),
            ("GET", "/api/v1/pods", "watch=1", "watch", ["", "v1", "", "pods", "", ""]),
            ("GET", "/api/v1/pods", "watch=false", "list", ["", "v1", "", "pods", "", ""]),
            ("GET", "/api/v1/pods", "watch=yes", "list", ["", "v1", "", "pods", "", ""]),
            ("GET", "/api/v1/watch/pods", "", "watch", ["", "v1", "", "pods", "", ""]),
            ("GET", "/api/v1/watch/namespaces/other/pods", "", "watch", ["", "v1", "other", "pods", "", ""]),
            (
                "GET",
                "/api/v1/namespaces/other/pods/foo/status",
                "",
                "get",
                ["", "v1", "other", "pods", "foo", "status"],
            ),
            (
                "PUT",
                "/api/v1/namespaces/other/finalize",
                "",
                "update",
                ["", "v1", "other", "namespaces", "other", "finalize"],
            ),
            (
                "PUT",
                "/api/v1/namespaces/other/status",
                "",
                "update",
                ["", "v1", "other", "namespaces", "other", "status"],
            ),
            ("POST", "/api/v1/namespaces/other/pods", "", "create", ["", "v1", "other", "pods", "", ""]),
            ("PUT", "/api/v1/namespaces/other/pods/foo", "", "update", ["", "v1", "other", "pods", "foo", ""]),
            ("PATCH", "/api/v1/namespaces/other/pods/foo", "", "patch", ["", "v1", "other", "pods", "foo", ""]),
            ("DELETE", "/api/v1/namespaces/other/pods/foo", "", "delete", ["", "v1", "other", "pods", "foo", ""]),
            ("DELETE", "/api/v1/namespaces/other/pods", "", "deletecollection", ["", "v1", "other", "pods", "", ""]),
            (
                "GET",
                "/apis/apps/v1/namespaces/other/deployments/d/scale",
                "",
                "get",
                ["apps", "v1", "other", "deployments", "d", "scale"],
            ),
            ("GET", "/apis/apps/v1/deployments", "", "list", ["apps", "v1", "", "deployments", "", ""]),
            ("GET", "/api/v1/nodes/n1/", "", "get", ["", "v1", "", "nodes", "n1", ""]),
            ("OPTIONS", "/api/v1/pods/x", "", "", ["", "v1", "", "pods", "x", ""]),
            ("GET", "/api", "", "-", ["", "", "", "", "", ""]),
            ("GET", "/api/v1", "", "-", ["", "", "", "", "", ""]),
            ("GET", "/apis/apps/v1", "", "-", ["", "", "", "", "", ""]),
            ("GET", "/version", "", "-", ["", "", "", "", "", ""]),
            ("GET", "/healthz/etcd", "", "-", ["", "", "", "", "", ""]),
        ];
        for (method, path, query, verb, [group, version, ns, resource, name, sub]) in cases {
            let query: Vec<(String, String)> = form_pairs(query);
            let info = RequestInfo::new(method, path, &query).unwrap();
            let what = format!("{method} {path}?{query:?}");
            if *verb == "-" {
                assert!(!info.is_resource_request, "{what}");
                continue;
            }
            assert!(info.is_resource_request, "{what}");
            assert_eq!(info.verb.as_str(), *verb, "{what}");
            assert_eq!(
                [&info.api_group, &info.api_version, &info.namespace, &info.resource, &info.name, &info.subresource],
                [group, version, ns, resource, name, sub].map(|s| s.to_string()).each_ref(),
                "{what}"
            );
        }
    }

    #[test]
    fn a_verb_in_the_path_needs_a_resource() {
        let err = RequestInfo::new("GET", "/api/v1/watch", &[]).unwrap_err();
        assert_eq!(err.0, "unable to determine kind and namespace from url, /api/v1/watch");
    }

    fn form_pairs(query: &str) -> Vec<(String, String)> {
        query
            .split('&')
            .filter(|p| !p.is_empty())
            .map(|p| {
                let (k, v) = p.split_once('=').unwrap_or((p, ""));
                (k.to_string(), v.to_string())
            })
            .collect()
    }
}

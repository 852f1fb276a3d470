//! Watch streams over HTTP, read until the server ends them (`timeoutSeconds`): events as JSON lines,
//! bookmarks, the initial events of a watch-list request and its end marker.

use super::{case, configmap, get, post, Case};

const CMS: &str = "/api/v1/namespaces/{ns}/configmaps";

pub fn cases() -> Vec<Case> {
    vec![
        case(
            "a watch from resourceVersion 0 gets the current state",
            vec![
                post(CMS, &configmap("a", "{}")),
                get(&format!("{CMS}?watch=true&resourceVersion=0&timeoutSeconds=1"))
                    .contains(r#""kind":"ConfigMap""#)
                    .contains(r#""type":"ADDED""#),
            ],
        ),
        case(
            "a watch-list ends its initial events with a bookmark",
            vec![
                post(CMS, &configmap("a", "{}")),
                get(&format!(
                    "{CMS}?watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&timeoutSeconds=1"
                ))
                .contains(r#""type":"ADDED""#)
                .contains(r#""type":"BOOKMARK""#)
                .contains(r#""k8s.io/initial-events-end":"true""#),
            ],
        ),
        case(
            "a watch of one object by the deprecated path",
            vec![
                post(CMS, &configmap("a", "{}")),
                post(CMS, &configmap("b", "{}")),
                get("/api/v1/watch/namespaces/{ns}/configmaps/b?resourceVersion=0&timeoutSeconds=1")
                    .contains(r#""name":"b""#),
            ],
        ),
    ]
}

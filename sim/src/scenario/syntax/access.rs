//! The tables of identities and admission, as written: `[[user]]` (a user every apiserver trusts through a
//! token the harness derives) and `[[webhook]]` (an admission webhook on a node of its own). The words
//! `type`, `answer` and `failure_policy` take are the cluster's own enums, so that an unknown one is
//! refused by serde with the known ones listed.

use serde::{Deserialize, Serialize};
use toml::Spanned;

use crate::cluster::webhook::{Answer, FailurePolicy, WebhookKind};

/// `[[user]]`: someone a `[[client]]` may run as (`user = "alice"`).
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct User {
    pub name: Spanned<String>,
    /// The user's groups (`system:masters` may do anything); `system:authenticated` is added by the
    /// apiservers.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub groups: Vec<Spanned<String>>,
}

/// `[[webhook]]`: an admission webhook, its configuration created when the cluster starts.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Webhook {
    /// Its node's name and its configuration's.
    pub name: Spanned<String>,
    #[serde(rename = "type")]
    pub kind: Spanned<WebhookKind>,
    /// The resources its rule matches (`configmaps`, `*`).
    pub resources: Spanned<Vec<String>>,
    /// The API groups its rule matches (default: the core group, `""`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_groups: Option<Spanned<Vec<String>>>,
    /// The operations its rule matches (default `CREATE`, `UPDATE`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub operations: Option<Spanned<Vec<String>>>,
    pub answer: Spanned<Answer>,
    /// A denial's message.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<Spanned<String>>,
    /// A patch answer's JSON patch: an array of operations.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub patch: Option<Spanned<toml::Value>>,
    /// The object names the answer is for (a trailing `*` matches any rest); others are allowed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub names: Option<Spanned<Vec<String>>>,
    /// `Fail` (default) or `Ignore`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure_policy: Option<Spanned<FailurePolicy>>,
    /// `timeoutSeconds`, 1 to 30 (default 10).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_s: Option<Spanned<u64>>,
}

//! Identities and admission: `[cluster] authorization_mode`, the `[[user]]`s, the user each Kubernetes
//! client runs as, and the `[[webhook]]`s, each refused at its key with what was expected; and the
//! resources the apiservers must serve for them (the RBAC kinds under RBAC, the webhook configurations
//! beside webhooks).

use apiserver::registry::authorizer::Modes;
use toml::Spanned;

use super::{Result, Source};
use crate::cluster::access::HARNESS_USER;
use crate::cluster::webhook::{Answer, FailurePolicy, WebhookKind};
use crate::cluster::{ClusterSpec, UserSpec, WebhookSpec};
use crate::scenario::lang::suggest;
use crate::scenario::syntax;

/// The authorization modes kube-apiserver knows, for suggestions.
const MODES: [&str; 4] = ["AlwaysAllow", "AlwaysDeny", "Node", "RBAC"];
/// A webhook rule's operations.
const OPERATIONS: [&str; 5] = ["CREATE", "UPDATE", "DELETE", "CONNECT", "*"];
/// JSON patch operations (RFC 6902).
const PATCH_OPS: [&str; 6] = ["add", "remove", "replace", "move", "copy", "test"];
/// The longest webhook timeout upstream accepts.
const MAX_TIMEOUT_S: u64 = 30;

fn no_apiservers(src: &Source, span: std::ops::Range<usize>, what: &str) -> crate::scenario::ScenarioError {
    src.err(span, format!("{what} belongs to the apiservers, and the cluster has none; set `[cluster] apiservers`"))
}

/// `[cluster] controller_managers`, into the cluster's spec: at most 9, beside at least one apiserver.
pub(super) fn controller_managers(src: &Source, file: &syntax::File, spec: &mut ClusterSpec) -> Result<()> {
    let Some(count) = &file.cluster.controller_managers else { return Ok(()) };
    if spec.apiservers.is_empty() {
        return Err(no_apiservers(src, count.span(), "`controller_managers`"));
    }
    if !(1..=9).contains(count.get_ref()) {
        return Err(src.err(count.span(), format!("`controller_managers` is {}; expected 1 to 9", count.get_ref())));
    }
    spec.controller_managers = *count.get_ref();
    Ok(())
}

/// `[cluster] nodes`, into the cluster's spec: 1 to 20, beside the controller managers, whose schedulers
/// bind pods to them.
pub(super) fn nodes(src: &Source, file: &syntax::File, spec: &mut ClusterSpec, clients: &[String]) -> Result<()> {
    let Some(count) = &file.cluster.nodes else { return Ok(()) };
    if spec.controller_managers == 0 {
        return Err(src.err(
            count.span(),
            "`nodes` needs a scheduler, which runs beside the controller managers; set `[cluster] controller_managers`",
        ));
    }
    if !(1..=20).contains(count.get_ref()) {
        return Err(src.err(count.span(), format!("`nodes` is {}; expected 1 to 20", count.get_ref())));
    }
    spec.nodes = *count.get_ref();
    if let Some(clash) = spec.kubelet_names().into_iter().find(|n| clients.contains(n)) {
        return Err(src.err(count.span(), format!("`nodes` names a node `{clash}`, and a client has that name")));
    }
    Ok(())
}

/// `[cluster] authorization_mode` and the `[[user]]`s, into the cluster's spec.
pub(super) fn identities(src: &Source, file: &syntax::File, spec: &mut ClusterSpec) -> Result<()> {
    if let Some(mode) = &file.cluster.authorization_mode {
        if spec.apiservers.is_empty() {
            return Err(no_apiservers(src, mode.span(), "`authorization_mode`"));
        }
        let text = mode.get_ref();
        if let Err(e) = Modes::parse(text) {
            let bad = text.split(',').map(str::trim).find(|m| !MODES.contains(m)).unwrap_or("");
            let hint = suggest::hint(bad, MODES);
            let msg = format!(
                "`authorization_mode` {text:?}: {e}; expected modes from {} separated by commas{hint}",
                MODES.join(", ")
            );
            return Err(src.err(mode.span(), msg));
        }
        spec.authorization_mode = text.clone();
    }
    for user in &file.users {
        let name = user.name.get_ref();
        if spec.apiservers.is_empty() {
            return Err(no_apiservers(src, user.name.span(), "a `[[user]]`"));
        }
        let valid = !name.is_empty()
            && name.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, ':' | '@' | '.' | '_' | '-'));
        if !valid {
            let msg = format!("user name {name:?}: expected letters, digits, `:`, `@`, `.`, `_` and `-`");
            return Err(src.err(user.name.span(), msg));
        }
        if name == HARNESS_USER || spec.users.iter().any(|u| &u.name == name) {
            let msg = format!("a `[[user]]` named {name:?} already exists (`{HARNESS_USER}` is the harness's own)");
            return Err(src.err(user.name.span(), msg));
        }
        let mut groups = Vec::new();
        for g in &user.groups {
            if g.get_ref().is_empty() || g.get_ref().contains(',') {
                return Err(src.err(g.span(), "a group name: expected a non-empty name without commas"));
            }
            groups.push(g.get_ref().clone());
        }
        spec.users.push(UserSpec { name: name.clone(), groups });
    }
    Ok(())
}

/// The user a client runs as: only a Kubernetes client has one, and it must be a `[[user]]`.
pub(super) fn client_user(
    src: &Source,
    client: &syntax::Client,
    spec: &ClusterSpec,
    kube_client: bool,
) -> Result<Option<String>> {
    let Some(user) = &client.user else { return Ok(None) };
    if !kube_client {
        let msg = "`user` is who a Kubernetes client's requests run as, and this client talks to etcd (it has \
                   no `kube` steps, or names a `member`)";
        return Err(src.err(user.span(), msg));
    }
    let name = user.get_ref();
    if spec.users.iter().any(|u| &u.name == name) {
        return Ok(Some(name.clone()));
    }
    let known: Vec<&str> = spec.users.iter().map(|u| u.name.as_str()).collect();
    let msg = if known.is_empty() {
        format!(
            "no `[[user]]` is named {name:?}: the scenario declares none; expected a `[[user]]` table with that name"
        )
    } else {
        format!(
            "no `[[user]]` is named {name:?}; expected one of {}{}",
            known.join(", "),
            suggest::hint(name, known.clone())
        )
    };
    Err(src.err(user.span(), msg))
}

/// Every `[[webhook]]`, into the cluster's spec; `taken` are the names of the other nodes.
pub(super) fn webhooks(src: &Source, file: &syntax::File, spec: &mut ClusterSpec, taken: &[String]) -> Result<()> {
    for w in &file.webhooks {
        let name = w.name.get_ref();
        if spec.apiservers.is_empty() {
            return Err(no_apiservers(src, w.name.span(), "a `[[webhook]]`"));
        }
        if !is_dns_label(name) {
            let msg = format!(
                "webhook name {name:?}: expected a DNS label (lowercase letters, digits and `-`, at most 63, starting \
                 and ending with a letter or digit): it names the webhook's node and configuration"
            );
            return Err(src.err(w.name.span(), msg));
        }
        let reserved = ["sim", "fault", "control"].contains(&name.as_str());
        if reserved || taken.contains(name) || spec.webhooks.iter().any(|x| &x.name == name) {
            let msg = format!(
                "the name {name:?} is already taken (members, apiservers, clients and webhooks are nodes; `sim`, \
                 `fault`, `control` are reserved)"
            );
            return Err(src.err(w.name.span(), msg));
        }
        let kind = *w.kind.get_ref();
        let answer = *w.answer.get_ref();
        let resources = strings(src, &w.resources, "resources", None)?;
        let api_groups = match &w.api_groups {
            Some(g) => strings(src, g, "api_groups", Some(true))?,
            None => vec![String::new()],
        };
        let operations = match &w.operations {
            Some(ops) => {
                let list = strings(src, ops, "operations", None)?;
                if let Some(bad) = list.iter().find(|o| !OPERATIONS.contains(&o.as_str())) {
                    let msg = format!(
                        "`operations` lists {bad:?}; expected some of {}{}",
                        OPERATIONS.join(", "),
                        suggest::hint(bad, OPERATIONS)
                    );
                    return Err(src.err(ops.span(), msg));
                }
                list
            }
            None => vec!["CREATE".into(), "UPDATE".into()],
        };
        let message = match (&w.message, answer) {
            (Some(m), Answer::Deny) => m.get_ref().clone(),
            (Some(m), _) => return Err(src.err(m.span(), "`message` is a denial's: expected `answer = \"deny\"`")),
            (None, _) => String::new(),
        };
        let patch = match (&w.patch, answer) {
            (Some(p), Answer::Patch) => json_patch(src, p)?,
            (Some(p), _) => return Err(src.err(p.span(), "`patch` is a patch answer's: expected `answer = \"patch\"`")),
            (None, Answer::Patch) => {
                return Err(src.err(w.answer.span(), "a patch answer sends a JSON patch: expected `patch = [...]`"))
            }
            (None, _) => serde_json::Value::Null,
        };
        if answer == Answer::Patch && kind == WebhookKind::Validating {
            let msg = "a validating webhook cannot patch (its patch would be refused): expected `type = \"mutating\"`";
            return Err(src.err(w.answer.span(), msg));
        }
        let names = match &w.names {
            Some(n) => {
                let list = strings(src, n, "names", None)?;
                if list.iter().any(|p| p.trim_end_matches('*').contains('*')) {
                    return Err(src.err(n.span(), "`names`: a `*` may only end a name (`forbidden-*`)"));
                }
                list
            }
            None => Vec::new(),
        };
        let timeout_s = match &w.timeout_s {
            Some(t) if !(1..=MAX_TIMEOUT_S).contains(t.get_ref()) => {
                let msg = format!("`timeout_s` is {}; expected 1 to {MAX_TIMEOUT_S}", t.get_ref());
                return Err(src.err(t.span(), msg));
            }
            Some(t) => *t.get_ref(),
            None => 10,
        };
        let failure_policy = w.failure_policy.as_ref().map_or(FailurePolicy::Fail, |p| *p.get_ref());
        spec.webhooks.push(WebhookSpec {
            name: name.clone(),
            kind,
            api_groups,
            resources,
            operations,
            answer,
            message,
            patch,
            names,
            failure_policy,
            timeout_s,
        });
    }
    Ok(())
}

/// A list of strings that must not be empty; its entries must not be either, unless `empty_ok` (an API
/// group's `""` is the core group).
fn strings(src: &Source, list: &Spanned<Vec<String>>, key: &str, empty_ok: Option<bool>) -> Result<Vec<String>> {
    if list.get_ref().is_empty() {
        return Err(src.err(list.span(), format!("`{key}` is empty; expected at least one")));
    }
    if empty_ok != Some(true) && list.get_ref().iter().any(String::is_empty) {
        return Err(src.err(list.span(), format!("`{key}` lists an empty string")));
    }
    Ok(list.get_ref().clone())
}

/// A patch answer's JSON patch: an array of operations, each with a known `op` and a `path` from `/`.
fn json_patch(src: &Source, patch: &Spanned<toml::Value>) -> Result<serde_json::Value> {
    let value = serde_json::to_value(patch.get_ref())
        .map_err(|e| src.err(patch.span(), format!("`patch` is not JSON: {e}")))?;
    let bad = |why: String| {
        src.err(
            patch.span(),
            format!(
                "`patch`: {why}; expected a JSON patch, an array of \
        `{{ op, path[, value | from] }}` tables"
            ),
        )
    };
    let Some(ops) = value.as_array().filter(|ops| !ops.is_empty()) else {
        return Err(bad("not a non-empty array".into()));
    };
    for (i, op) in ops.iter().enumerate() {
        let word = op.get("op").and_then(serde_json::Value::as_str).unwrap_or("");
        if !PATCH_OPS.contains(&word) {
            return Err(bad(format!("operation {} has `op` {word:?}, not one of {}", i + 1, PATCH_OPS.join(", "))));
        }
        if !op.get("path").and_then(serde_json::Value::as_str).is_some_and(|p| p.is_empty() || p.starts_with('/')) {
            return Err(bad(format!("operation {} has no `path` that is a JSON pointer", i + 1)));
        }
    }
    Ok(value)
}

/// RFC 1123's label: what a node name and an object name may both be.
fn is_dns_label(name: &str) -> bool {
    let ok = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit();
    (1..=63).contains(&name.len())
        && name.chars().all(|c| ok(c) || c == '-')
        && name.starts_with(ok)
        && name.ends_with(ok)
}

/// The resources the apiservers must serve for identities and webhooks, when the scenario serves a list of
/// its own (an empty list serves everything already): the RBAC kinds under an RBAC mode (a kind that is
/// not served reads as empty, so every user would be refused), and the webhooks' configuration kinds.
pub(super) fn served(spec: &mut ClusterSpec) {
    if spec.api_resources.is_empty() {
        return;
    }
    // Controllers act on whatever the cluster holds (the garbage collector and the namespace controller
    // on every resource discovery lists): with controller managers, every built-in resource is served.
    if spec.controller_managers > 0 {
        spec.api_resources.clear();
        return;
    }
    if Modes::parse(&spec.authorization_mode).is_ok_and(|m| m.rbac()) {
        for plural in ["roles", "rolebindings", "clusterroles", "clusterrolebindings"] {
            spec.api_resources.push(format!("{plural}.rbac.authorization.k8s.io"));
        }
    }
    let configurations: Vec<String> = spec
        .webhooks
        .iter()
        .map(|w| match w.kind {
            WebhookKind::Validating => "validatingwebhookconfigurations.admissionregistration.k8s.io".to_string(),
            WebhookKind::Mutating => "mutatingwebhookconfigurations.admissionregistration.k8s.io".to_string(),
        })
        .collect();
    spec.api_resources.extend(configurations);
    spec.api_resources.sort();
    spec.api_resources.dedup();
}

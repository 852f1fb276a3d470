//! Field management: `metadata.managedFields`, who owns which field of an object, kept on every write
//! that names a manager, and server-side apply, which merges a manager's configuration into the object
//! and refuses to take fields another manager owns (k8s.io/apimachinery `util/managedfields` over
//! sigs.k8s.io/structured-merge-diff; behaviour, texts and encodings are theirs, the code our own).
//!
//! - [`path`]: field paths, sets of them, and their `FieldsV1` form.
//! - [`shape`]: which values are owned whole and how list elements are named, from the schemas.
//! - [`walk`]: field sets of objects, comparisons, merges and removals.
//! - [`managers`]: the decoded `managedFields` entries and their encoding.
//!
//! Sans-IO: the time is passed in, and the functions take and return JSON values.
//!
//! An update (`operation: Update`) gives its manager the fields it changed or added, takes them from
//! every other manager, and takes the fields it removed from everyone. An apply (`operation: Apply`)
//! makes the applied configuration's fields its manager's set, removes from the object the fields the
//! manager applied before and no longer applies (unless another manager owns them), merges the
//! configuration in, and fails with a conflict for every field it changes that another manager owns,
//! unless forced, which moves those fields to it.

pub(crate) mod managers;
pub mod path;
pub mod shape;
pub(crate) mod walk;

#[cfg(test)]
mod tests;

use std::sync::OnceLock;

use serde_json::Value;

use crate::registry::managed_fields::managers::{Managers, Operation};
use crate::registry::managed_fields::path::{Display, FieldSet, PathElement};
use crate::registry::managed_fields::shape::Shape;
use crate::registry::managed_fields::walk::{compare, field_set, merge, remove};

/// The manager of a client-side `kubectl apply`, and the manager whose server-side applies may take its
/// fields over without a conflict where the last-applied annotation still holds them
/// (`lastAppliedManager`).
const KUBECTL: &str = "kubectl";
/// The annotation client-side `kubectl apply` keeps its configuration in.
pub(crate) const LAST_APPLIED: &str = "kubectl.kubernetes.io/last-applied-configuration";

/// Who writes, and how.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Writer<'a> {
    pub manager: &'a str,
    /// The subresource written ("" for the object itself).
    pub subresource: &'a str,
    /// The resource's `group/version` (`v1`, `apps/v1`).
    pub api_version: &'a str,
    /// The time of the write, as `metav1.Time` writes it.
    pub now: &'a str,
}

/// The fields no manager owns (`stripMetaManager`): the type, and the metadata the server sets. Built once:
/// every tracked write takes it away.
fn stripped() -> &'static FieldSet {
    static STRIPPED: OnceLock<FieldSet> = OnceLock::new();
    STRIPPED.get_or_init(build_stripped)
}

fn build_stripped() -> FieldSet {
    let mut out = FieldSet::default();
    out.insert(&[PathElement::field("apiVersion")]);
    out.insert(&[PathElement::field("kind")]);
    out.insert(&[PathElement::field("metadata")]);
    for field in [
        "name",
        "namespace",
        "creationTimestamp",
        "selfLink",
        "uid",
        "clusterName",
        "generation",
        "managedFields",
        "resourceVersion",
    ] {
        out.insert(&[PathElement::field("metadata"), PathElement::field(field)]);
    }
    out
}

/// The fields a write through `subresource` may not own (the strategy resets them: `ResetFieldsStrategy`).
/// The main resource of a kind with a status subresource cannot own its status; the status subresource
/// owns nothing but the status.
pub(crate) fn ignored_fields(subresource: &str, has_status: bool) -> FieldSet {
    let mut out = FieldSet::default();
    match subresource {
        "" if has_status => out.insert(&[PathElement::field("status")]),
        "status" => {
            out.insert(&[PathElement::field("spec")]);
            out.insert(&[PathElement::field("metadata")]);
        }
        _ => {}
    }
    out
}

/// `obj` without `metadata.managedFields`.
fn without_managed_fields(obj: &Value) -> Value {
    let mut out = obj.clone();
    if let Some(meta) = out.get_mut("metadata").and_then(Value::as_object_mut) {
        meta.remove("managedFields");
    }
    out
}

/// An update by `writer` from `live` (`Value::Null` for a create) to `new`: `new` comes back with its
/// `managedFields`. Managed fields the client sent in `new` replace the live ones, as upstream lets a
/// client edit them directly; a subresource write always starts from the live ones.
pub fn update(live: &Value, new: &Value, writer: &Writer, shape: &Shape, ignored: &FieldSet) -> Value {
    // `managedFields: [{}]` resets the field (upstream's documented way to strip it); an empty or
    // undecodable list keeps the live one, so that clients unaware of it cannot drop it by accident.
    let reset = writer.subresource.is_empty()
        && new
            .pointer("/metadata/managedFields")
            .and_then(Value::as_array)
            .is_some_and(|entries| entries.len() == 1 && entries[0].as_object().is_some_and(serde_json::Map::is_empty));
    let sent = Managers::decode(new).ok().filter(|m| !m.is_empty() && writer.subresource.is_empty());
    let mut managers = match (reset, sent) {
        (true, _) => Managers::default(),
        (false, Some(sent)) => sent,
        (false, None) => Managers::decode(live).unwrap_or_default(),
    };
    let lhs = if live.is_null() { Value::Object(Default::default()) } else { without_managed_fields(live) };
    let rhs = without_managed_fields(new);
    let comparison = compare(&lhs, &rhs, shape).without(ignored);
    let changed = comparison.changed();
    for entry in managers.entries_mut() {
        entry.set = entry.set.difference(&changed).difference(&comparison.removed);
    }
    let taken = changed.difference(stripped());
    if !taken.is_empty() {
        let entry = managers.entry(writer.manager, Operation::Update, writer.api_version, writer.subresource);
        entry.set = entry.set.union(&taken);
        entry.time = Some(writer.now.to_string());
    }
    managers.strip(stripped());
    managers.cap_updaters();
    managers.encode_into(rhs)
}

/// One field another manager owns that an apply would change.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Conflict {
    /// The manager as upstream prints it (`"kubectl-client-side-apply" using v1`).
    pub manager: String,
    /// The field path as upstream prints it (`.data.key`).
    pub field: String,
}

/// Why an apply failed.
#[derive(Clone, Debug, PartialEq)]
pub enum ApplyError {
    /// Fields another manager owns would change (409).
    Conflicts(Vec<Conflict>),
    /// The configuration cannot be applied as sent (400): another apiVersion or kind than the endpoint's,
    /// or managed fields of its own.
    BadRequest(String),
    /// The live object's managed fields do not decode (500).
    Internal(String),
}

/// The message of the 400 an applied configuration gets when its apiVersion and kind are not the
/// endpoint's: upstream's `versionCheckManager`, which prints the `GroupVersionKind` as Go does
/// (`apps/v1, Kind=Deployment`, `/v1, Kind=Secret`; an apiVersion with more than one slash parses as no group
/// version at all). The registry's error wraps it; the field manager sits below that error.
pub(crate) fn invalid_object_type(api_version: &str, kind: &str) -> String {
    let (group, version) = match api_version.matches('/').count() {
        0 => ("", api_version),
        1 => api_version.split_once('/').expect("one slash"),
        _ => ("", ""),
    };
    format!("invalid object type: {group}/{version}, Kind={kind}")
}

/// `config` applied by `writer` (forced or not) to `live` (`Value::Null` when the apply creates): the new
/// object with its `managedFields`, or, if it would change nothing at all, `live` itself.
pub fn apply(
    live: &Value,
    config: &Value,
    writer: &Writer,
    force: bool,
    shape: &Shape,
    ignored: &FieldSet,
) -> Result<Value, ApplyError> {
    let version = config.get("apiVersion").and_then(Value::as_str).unwrap_or("");
    if version != writer.api_version {
        let kind = config.get("kind").and_then(Value::as_str).unwrap_or("");
        return Err(ApplyError::BadRequest(invalid_object_type(version, kind)));
    }
    if config.pointer("/metadata/managedFields").is_some_and(|m| !m.is_null()) {
        return Err(ApplyError::BadRequest("metadata.managedFields must be nil".into()));
    }
    let managers = Managers::decode(live)
        .map_err(|why| ApplyError::Internal(format!("failed to decode managed fields: {why}")))?;
    let lhs = if live.is_null() { Value::Object(Default::default()) } else { without_managed_fields(live) };
    match apply_once(&lhs, managers.clone(), config, writer, force, shape, ignored) {
        Err(ApplyError::Conflicts(conflicts)) if writer.manager == KUBECTL && !force => {
            // kubectl's server-side apply takes over what its client-side apply set, where the
            // last-applied annotation still holds the live value (`lastAppliedManager`).
            let allowed = last_applied_fields(&lhs, shape);
            let unexplained: Vec<Conflict> =
                conflicts.iter().filter(|c| !allowed.contains(&c.field)).cloned().collect();
            if !unexplained.is_empty() {
                return Err(ApplyError::Conflicts(unexplained));
            }
            apply_once(&lhs, managers, config, writer, true, shape, ignored)
        }
        other => other,
    }
}

fn apply_once(
    lhs: &Value,
    mut managers: Managers,
    config: &Value,
    writer: &Writer,
    force: bool,
    shape: &Shape,
    ignored: &FieldSet,
) -> Result<Value, ApplyError> {
    let applied = field_set(config, shape).recursive_difference(ignored).difference(stripped());
    let last = managers.get(writer.manager, Operation::Apply, writer.subresource).map(|e| e.set.clone());
    let mut merged = merge(lhs, config, shape);
    if let Some(last) = last {
        let others = managers.union_except(writer.manager, Operation::Apply, writer.subresource);
        let gone = last.difference(&applied);
        remove(&mut merged, &gone, &others.union(&applied), shape);
    }
    let comparison = compare(lhs, &merged, shape).without(ignored);
    let changed = comparison.changed();
    let mut conflicts = Vec::new();
    for entry in managers.entries() {
        if entry.is(writer.manager, Operation::Apply, writer.subresource) {
            continue;
        }
        for path in entry.set.intersection(&changed).paths() {
            conflicts.push(Conflict { manager: entry.printed(), field: Display(&path).to_string() });
        }
    }
    if !force && !conflicts.is_empty() {
        conflicts.sort_by(|a, b| a.manager.cmp(&b.manager));
        return Err(ApplyError::Conflicts(conflicts));
    }
    for entry in managers.entries_mut() {
        if !entry.is(writer.manager, Operation::Apply, writer.subresource) {
            entry.set = entry.set.difference(&changed).difference(&comparison.removed);
        }
    }
    let unchanged = &merged == lhs;
    let entry = managers.entry(writer.manager, Operation::Apply, "", writer.subresource);
    entry.api_version = writer.api_version.to_string();
    entry.set = applied;
    if !unchanged || entry.time.is_none() {
        entry.time = Some(writer.now.to_string());
    }
    managers.strip(stripped());
    managers.cap_updaters();
    Ok(managers.encode_into(merged))
}

/// The printed paths of the fields `kubectl apply` last applied that still hold the applied value.
fn last_applied_fields(live: &Value, shape: &Shape) -> Vec<String> {
    let annotation = live.pointer("/metadata/annotations").and_then(|a| a.get(LAST_APPLIED));
    let Some(last) = annotation.and_then(Value::as_str).and_then(|text| serde_json::from_str::<Value>(text).ok())
    else {
        return Vec::new();
    };
    let comparison = compare(&last, live, shape);
    let held = field_set(&last, shape)
        .difference(&comparison.modified)
        .difference(&comparison.added)
        .difference(&comparison.removed);
    held.paths().iter().map(|path| Display(path).to_string()).collect()
}

/// The 409 of a failed apply, in upstream's words (`NewConflictError`).
pub(crate) fn conflict_message(conflicts: &[Conflict]) -> String {
    if let [only] = conflicts {
        return format!("Apply failed with 1 conflict: conflict with {}: {}", only.manager, only.field);
    }
    let mut managers: Vec<&str> = conflicts.iter().map(|c| c.manager.as_str()).collect();
    managers.sort();
    managers.dedup();
    let mut lines = Vec::new();
    for manager in managers {
        lines.push(format!("conflicts with {manager}:"));
        lines.extend(conflicts.iter().filter(|c| c.manager == manager).map(|c| format!("- {}", c.field)));
    }
    format!("Apply failed with {} conflicts: {}", conflicts.len(), lines.join("\n"))
}

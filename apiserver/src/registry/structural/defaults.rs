//! The parse-time check of `default` values (upstream `pkg/apiserver/schema/defaulting/validation.go`,
//! `ValidateDefaults` with pruned defaults required, as for every new CRD): a default must survive pruning
//! unchanged, make valid embedded resources, and validate against its own node's schema.
//!
//! Upstream also coerces and checks defaults inside an embedded resource's metadata against ObjectMeta and
//! runs CEL rules on defaults; here those are validated against the schema like any other default (the
//! CEL rules are the `cel` module's).

use super::gofmt::bad_value;
use super::{embedded, prune, validate, Structural};
use crate::registry::field_error::{FieldError, FieldErrorType};

/// Checks every default in `root` (its items and properties, recursively); `path` is the schema's path.
pub(super) fn check(root: &Structural, path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    // The root counts as an embedded resource, as upstream clones it with the flag set.
    walk(root, path, true, &mut errs);
    errs
}

fn walk(s: &Structural, path: &str, embedded_here: bool, errs: &mut Vec<FieldError>) {
    let embedded_here = embedded_here || s.embedded_resource;
    if let Some(d) = &s.default {
        let at = format!("{path}.default");
        let mut pruned = d.clone();
        prune::prune(&mut pruned, s, embedded_here);
        if &pruned != d {
            errs.push(FieldError {
                kind: FieldErrorType::Invalid,
                field: at.clone(),
                value: bad_value(d),
                detail: "must not have unknown fields".into(),
            });
        }
        let meta_errs = embedded::validate_embedded(&at, s, d, embedded_here);
        if !meta_errs.is_empty() {
            errs.extend(meta_errs);
        } else {
            errs.extend(validate::validate(s, d, &at));
        }
    }
    if let Some(items) = s.items() {
        walk(items, &format!("{path}.items"), false, errs);
    }
    for (k, p) in &s.properties {
        walk(p, &format!("{path}.properties[{k}]"), false, errs);
    }
}

//! Defaulting of custom resources, as upstream's `pkg/apiserver/schema/defaulting/algorithm.go` (`Default`)
//! and `prunenulls.go` (`PruneNonNullableNullsWithoutDefaults`) do it.

use serde_json::Value;

use super::Structural;

/// Whether `x` is a null the schema does not allow.
fn non_nullable_null(x: &Value, s: Option<&Structural>) -> bool {
    x.is_null() && s.is_some_and(|s| !s.nullable)
}

/// `PruneNonNullableNullsWithoutDefaults`: drops object fields that are null where the schema neither
/// allows null nor has a default to put there (array elements are left in place).
pub(super) fn prune_non_nullable_nulls(x: &mut Value, s: Option<&Structural>) {
    match x {
        Value::Object(map) => {
            map.retain(|k, v| {
                let schema = s.and_then(|s| s.properties.get(k).or_else(|| s.additional_schema()));
                let drop = non_nullable_null(v, schema) && schema.is_some_and(|s| s.default.is_none());
                if !drop {
                    prune_non_nullable_nulls(v, schema);
                }
                !drop
            });
        }
        Value::Array(items) => {
            let item = s.and_then(Structural::items);
            for v in items {
                prune_non_nullable_nulls(v, item);
            }
        }
        _ => {}
    }
}

/// `Default`: sets the defaults of absent (or non-nullable null) properties, then recurses into every
/// field (through properties and additionalProperties) and every array element.
pub(super) fn apply(x: &mut Value, s: &Structural) {
    match x {
        Value::Object(map) => {
            for (k, prop) in &s.properties {
                let Some(d) = &prop.default else { continue };
                if map.get(k).is_none_or(|v| non_nullable_null(v, Some(prop))) {
                    map.insert(k.clone(), d.clone());
                }
            }
            for (k, v) in map.iter_mut() {
                if let Some(prop) = s.properties.get(k) {
                    apply(v, prop);
                } else if s.additional_properties.is_some() {
                    let ap = s.additional_schema();
                    if let Some(ap) = ap {
                        if non_nullable_null(v, Some(ap)) {
                            if let Some(d) = &ap.default {
                                *v = d.clone();
                            }
                        }
                        apply(v, ap);
                    }
                }
            }
        }
        Value::Array(items) => {
            let Some(item) = s.items() else { return };
            for v in items.iter_mut() {
                if non_nullable_null(v, Some(item)) {
                    if let Some(d) = &item.default {
                        *v = d.clone();
                    }
                }
                apply(v, item);
            }
        }
        _ => {}
    }
}

//! The object forms a client may ask for instead of the resource's own (kube-apiserver's
//! `transformResponseObject`): `Table` rows with the resource's printer columns, `PartialObjectMetadata`
//! and `PartialObjectMetadataList`. `includeObject` says what a Table row embeds: the object's metadata
//! (the default), the whole object, or nothing.

use serde_json::{json, Map, Value};

use crate::apis::Printer;
use crate::endpoints::error::ApiError;
use crate::endpoints::query::Query;

/// What a Table row embeds (`includeObject`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum IncludeObject {
    None,
    Metadata,
    Object,
}

impl IncludeObject {
    /// Reads `includeObject` from the query; an unknown value is kube's 400.
    pub(crate) fn from_query(query: &Query) -> Result<IncludeObject, ApiError> {
        match query.first("includeObject").unwrap_or("") {
            "" | "Metadata" => Ok(IncludeObject::Metadata),
            "None" => Ok(IncludeObject::None),
            "Object" => Ok(IncludeObject::Object),
            other => {
                Err(ApiError::BadRequest(format!("unrecognized includeObject value: {}", crate::go_text::quote(other))))
            }
        }
    }
}

/// The list metadata a Table or metadata list carries over from the list it converts.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct ListMeta {
    pub resource_version: String,
    pub continue_token: Option<String>,
    pub remaining_item_count: Option<i64>,
}

impl ListMeta {
    fn to_value(&self) -> Value {
        let mut meta = Map::new();
        if !self.resource_version.is_empty() {
            meta.insert("resourceVersion".into(), Value::from(self.resource_version.clone()));
        }
        if let Some(c) = &self.continue_token {
            meta.insert("continue".into(), Value::from(c.clone()));
        }
        if let Some(n) = self.remaining_item_count {
            meta.insert("remainingItemCount".into(), Value::from(n));
        }
        Value::Object(meta)
    }
}

/// An object's `PartialObjectMetadata`.
pub(crate) fn partial_object_metadata(obj: &Value) -> Value {
    json!({
        "kind": "PartialObjectMetadata",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": obj.get("metadata").cloned().unwrap_or_else(|| json!({})),
    })
}

/// A list of objects' `PartialObjectMetadataList`.
pub(crate) fn partial_object_metadata_list(items: &[Value], meta: &ListMeta) -> Value {
    json!({
        "kind": "PartialObjectMetadataList",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": meta.to_value(),
        "items": items.iter().map(partial_object_metadata).collect::<Vec<_>>(),
    })
}

/// A Table of `items`. `headers` is false for the watch events after the first, which leave the column
/// definitions out as kube does (`NoHeaders`).
pub(crate) fn table(
    printer: &Printer,
    items: &[Value],
    meta: &ListMeta,
    include: IncludeObject,
    headers: bool,
    now_unix_s: i64,
) -> Value {
    let rows: Vec<Value> = items
        .iter()
        .map(|obj| {
            let mut row = Map::new();
            row.insert("cells".into(), Value::Array((printer.cells)(obj, now_unix_s, &printer.columns)));
            match include {
                IncludeObject::None => {}
                IncludeObject::Metadata => {
                    row.insert("object".into(), partial_object_metadata(obj));
                }
                IncludeObject::Object => {
                    row.insert("object".into(), obj.clone());
                }
            }
            Value::Object(row)
        })
        .collect();
    json!({
        "kind": "Table",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": meta.to_value(),
        "columnDefinitions": if headers { Value::Array(printer.column_definitions()) } else { Value::Null },
        "rows": rows,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::apis::printers;

    #[test]
    fn a_list_becomes_a_table_with_metadata_rows() {
        let cm = json!({"kind": "ConfigMap", "metadata": {"name": "a", "resourceVersion": "5"}, "data": {"k": "v"}});
        let meta = ListMeta { resource_version: "9".into(), continue_token: None, remaining_item_count: None };
        let t = table(&printers::core::configmaps(), &[cm], &meta, IncludeObject::Metadata, true, 0);
        assert_eq!(t["kind"], "Table");
        assert_eq!(t["metadata"], json!({"resourceVersion": "9"}));
        assert_eq!(t["columnDefinitions"][0]["name"], "Name");
        assert_eq!(t["rows"][0]["cells"], json!(["a", 1, "<unknown>"]));
        assert_eq!(t["rows"][0]["object"]["kind"], "PartialObjectMetadata");
        assert_eq!(t["rows"][0]["object"]["metadata"]["name"], "a");
        let bare = table(&printers::core::configmaps(), &[], &meta, IncludeObject::None, false, 0);
        assert_eq!(bare["columnDefinitions"], Value::Null);
    }

    #[test]
    fn include_object_is_checked() {
        assert_eq!(
            IncludeObject::from_query(&Query::parse(Some("includeObject=Object"))).unwrap(),
            IncludeObject::Object
        );
        let err = IncludeObject::from_query(&Query::parse(Some("includeObject=x"))).unwrap_err();
        assert_eq!(err.to_status().message.unwrap(), "unrecognized includeObject value: \"x\"");
    }
}

//! The columns `kubectl get` shows per resource: kube-apiserver's table printers
//! (kubernetes `pkg/printers/internalversion/printers.go`), as column definitions and a function from an
//! object to its cells. Ages are computed against the server's clock, as upstream computes them, and read
//! as `duration.HumanDuration` writes them (`5m`, `2d3h`).
//!
//! A resource without a printer gets kube's default table: `Name` and `Created At`.

use std::borrow::Cow;

use serde_json::{json, Value};

use crate::registry::system::parse_rfc3339;

pub(crate) mod apps;
pub(crate) mod batch;
pub(crate) mod coordination;
pub(crate) mod core;
pub(crate) mod events;

/// One column of a table (`metav1.TableColumnDefinition`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Column {
    pub name: Cow<'static, str>,
    /// `string`, `integer`, `number`, `boolean` or `date`.
    pub kind: &'static str,
    /// `name` for the column that names the object, else "" (a custom resource's column: its own).
    pub format: Cow<'static, str>,
    pub description: Cow<'static, str>,
    /// 0: shown by default; 1: shown with `-o wide`.
    pub priority: i32,
    /// A custom resource's column: the JSONPath of its value (`.spec.replicas`), which the cells read.
    pub json_path: Option<String>,
}

/// How a resource prints: its columns and the cells of one object, given the time now (Unix seconds).
#[derive(Clone)]
pub struct Printer {
    pub columns: Vec<Column>,
    /// The cells of `obj`; `columns` are the printer's own, for printers that read their paths from them.
    pub cells: fn(obj: &Value, now_unix_s: i64, columns: &[Column]) -> Vec<Value>,
}

impl Printer {
    /// The column definitions as a Table carries them.
    pub(crate) fn column_definitions(&self) -> Vec<Value> {
        self.columns
            .iter()
            .map(|c| {
                json!({"name": c.name, "type": c.kind, "format": c.format, "description": c.description, "priority": c.priority})
            })
            .collect()
    }
}

/// `ObjectMeta.name`'s description, which every Name column carries.
const NAME_DESCRIPTION: &str = "Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names";
/// `ObjectMeta.creationTimestamp`'s description, which every Age column carries.
const AGE_DESCRIPTION: &str = "CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. Null for lists. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata";

pub(crate) fn name_column() -> Column {
    Column {
        name: Cow::Borrowed("Name"),
        kind: "string",
        format: Cow::Borrowed("name"),
        description: Cow::Borrowed(NAME_DESCRIPTION),
        priority: 0,
        json_path: None,
    }
}

pub(crate) fn age_column() -> Column {
    Column {
        name: Cow::Borrowed("Age"),
        kind: "string",
        format: Cow::Borrowed(""),
        description: Cow::Borrowed(AGE_DESCRIPTION),
        priority: 0,
        json_path: None,
    }
}

pub(crate) fn column(name: &'static str, kind: &'static str, description: &'static str, priority: i32) -> Column {
    Column {
        name: Cow::Borrowed(name),
        kind,
        format: Cow::Borrowed(""),
        description: Cow::Borrowed(description),
        priority,
        json_path: None,
    }
}

/// A column whose description is the API's own for `field` of the type `definition`
/// (`io.k8s.api.core.v1.ServiceSpec`, `type`), as upstream's printers take it from the swagger docs.
pub(crate) fn doc_column(
    name: &'static str,
    kind: &'static str,
    definition: &str,
    field: &str,
    priority: i32,
) -> Column {
    let description = crate::registry::schema::schemas().field_description(definition, field).unwrap_or_default();
    Column {
        name: Cow::Borrowed(name),
        kind,
        format: Cow::Borrowed(""),
        description: Cow::Owned(description),
        priority,
        json_path: None,
    }
}

pub(crate) fn meta_str<'a>(obj: &'a Value, field: &str) -> &'a str {
    obj.pointer(&format!("/metadata/{field}")).and_then(Value::as_str).unwrap_or("")
}

/// The object's name cell.
pub(crate) fn name(obj: &Value) -> Value {
    Value::from(meta_str(obj, "name"))
}

/// The object's age cell: `translateTimestampSince`.
pub(crate) fn age(obj: &Value, now_unix_s: i64) -> Value {
    Value::from(since(meta_str(obj, "creationTimestamp"), now_unix_s))
}

/// How long ago `timestamp` was, as kubectl shows it; `<unknown>` for no timestamp.
pub(crate) fn since(timestamp: &str, now_unix_s: i64) -> String {
    match parse_rfc3339(timestamp) {
        Some(then) => human_duration(now_unix_s - then),
        None => "<unknown>".to_string(),
    }
}

/// `duration.HumanDuration` of a whole number of seconds.
pub(crate) fn human_duration(seconds: i64) -> String {
    if seconds < -1 {
        return "<invalid>".into();
    }
    if seconds < 0 {
        return "0s".into();
    }
    if seconds < 60 * 2 {
        return format!("{seconds}s");
    }
    let minutes = seconds / 60;
    if minutes < 10 {
        return match seconds % 60 {
            0 => format!("{minutes}m"),
            s => format!("{minutes}m{s}s"),
        };
    }
    if minutes < 60 * 3 {
        return format!("{minutes}m");
    }
    let hours = seconds / 3600;
    if hours < 8 {
        return match minutes % 60 {
            0 => format!("{hours}h"),
            m => format!("{hours}h{m}m"),
        };
    }
    if hours < 48 {
        return format!("{hours}h");
    }
    if hours < 24 * 8 {
        return match hours % 24 {
            0 => format!("{}d", hours / 24),
            h => format!("{}d{h}h", hours / 24),
        };
    }
    if hours < 24 * 365 * 2 {
        return format!("{}d", hours / 24);
    }
    if hours < 24 * 365 * 8 {
        return match (hours / 24) % 365 {
            0 => format!("{}y", hours / 24 / 365),
            d => format!("{}y{d}d", hours / 24 / 365),
        };
    }
    format!("{}y", hours / 24 / 365)
}

/// kube's `DefaultTableConvertor`, for resources without a printer.
pub(crate) fn default_printer() -> Printer {
    Printer {
        columns: vec![
            name_column(),
            Column {
                name: Cow::Borrowed("Created At"),
                kind: "date",
                format: Cow::Borrowed(""),
                description: Cow::Borrowed("CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. Null for lists. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata"),
                priority: 0,
                json_path: None,
            },
        ],
        cells: |obj, _, _| vec![name(obj), Value::from(meta_str(obj, "creationTimestamp"))],
    }
}

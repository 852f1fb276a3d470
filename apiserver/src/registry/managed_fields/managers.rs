//! `metadata.managedFields` decoded into one entry per manager, and encoded back in upstream's order.
//!
//! An entry is identified as upstream identifies it (`BuildManagerIdentifier`): by manager, operation and
//! subresource, and for updates also by API version; an applier keeps one entry whatever version it
//! applies through. Entries are written sorted by operation (`Apply` before `Update`), then time, manager,
//! API version and subresource (`sortEncodedManagedFields`); a manager left owning nothing is dropped.

use serde_json::{json, Map, Value};

use crate::registry::managed_fields::path::FieldSet;

/// The most update entries an object keeps; older ones are merged into [`ANCIENT_CHANGES`]
/// (`DefaultMaxUpdateManagers`).
const MAX_UPDATE_MANAGERS: usize = 10;
/// The manager older updates are merged into.
const ANCIENT_CHANGES: &str = "ancient-changes";

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Operation {
    Apply,
    Update,
}

impl Operation {
    fn as_str(self) -> &'static str {
        match self {
            Operation::Apply => "Apply",
            Operation::Update => "Update",
        }
    }
}

/// One manager's fields.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Entry {
    pub manager: String,
    pub operation: Operation,
    pub api_version: String,
    pub subresource: String,
    pub time: Option<String>,
    pub set: FieldSet,
}

impl Entry {
    /// Whether this is the entry of `manager` writing by `operation` through `subresource` (for updates
    /// the caller also checks the version).
    pub(crate) fn is(&self, manager: &str, operation: Operation, subresource: &str) -> bool {
        self.manager == manager && self.operation == operation && self.subresource == subresource
    }

    /// The manager as a conflict names it (`printManager`): `"m"`, with ` with subresource "s"`, and for
    /// updates ` using v1`.
    pub(crate) fn printed(&self) -> String {
        let mut out = Value::from(self.manager.as_str()).to_string();
        if !self.subresource.is_empty() {
            out.push_str(&format!(" with subresource {}", Value::from(self.subresource.as_str())));
        }
        if self.operation == Operation::Update {
            out.push_str(&format!(" using {}", self.api_version));
        }
        out
    }

    fn encode(&self) -> Value {
        let mut out = json!({
            "manager": self.manager,
            "operation": self.operation.as_str(),
            "apiVersion": self.api_version,
            "fieldsType": "FieldsV1",
            "fieldsV1": self.set.to_fields_v1(),
        });
        if let Some(time) = &self.time {
            out["time"] = Value::from(time.as_str());
        }
        if !self.subresource.is_empty() {
            out["subresource"] = Value::from(self.subresource.as_str());
        }
        out
    }
}

/// Every manager's entry.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Managers {
    entries: Vec<Entry>,
}

impl Managers {
    /// The entries of `obj`'s `metadata.managedFields` (none if it has none); an error says which entry
    /// cannot be read.
    pub(crate) fn decode(obj: &Value) -> Result<Managers, String> {
        let Some(list) = obj.pointer("/metadata/managedFields").filter(|v| !v.is_null()) else {
            return Ok(Managers::default());
        };
        let Value::Array(list) = list else { return Err("managedFields is not a list".into()) };
        let mut out = Managers::default();
        for (i, raw) in list.iter().enumerate() {
            let text = |key: &str| raw.get(key).and_then(Value::as_str).unwrap_or("").to_string();
            let operation = match text("operation").as_str() {
                "Apply" => Operation::Apply,
                "Update" => Operation::Update,
                other => return Err(format!("entry {i}: unknown operation {other:?}")),
            };
            let set = match raw.get("fieldsV1") {
                Some(fields) => FieldSet::from_fields_v1(fields).map_err(|why| format!("entry {i}: {why}"))?,
                None => FieldSet::default(),
            };
            let entry = Entry {
                manager: text("manager"),
                operation,
                api_version: text("apiVersion"),
                subresource: text("subresource"),
                time: raw.get("time").and_then(Value::as_str).map(str::to_string),
                set,
            };
            out.entries.push(entry);
        }
        Ok(out)
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    pub(crate) fn entries(&self) -> &[Entry] {
        &self.entries
    }

    pub(crate) fn entries_mut(&mut self) -> impl Iterator<Item = &mut Entry> {
        self.entries.iter_mut()
    }

    /// The entry of `manager` by `operation` through `subresource` (any version), if there is one.
    pub(crate) fn get(&self, manager: &str, operation: Operation, subresource: &str) -> Option<&Entry> {
        self.entries.iter().find(|e| e.is(manager, operation, subresource))
    }

    /// The entry of `manager`, created empty if absent. Updates are told apart by `api_version` too.
    pub(crate) fn entry(
        &mut self,
        manager: &str,
        operation: Operation,
        api_version: &str,
        subresource: &str,
    ) -> &mut Entry {
        let matches = |e: &Entry| {
            e.is(manager, operation, subresource) && (operation == Operation::Apply || e.api_version == api_version)
        };
        let at = match self.entries.iter().position(matches) {
            Some(at) => at,
            None => {
                self.entries.push(Entry {
                    manager: manager.to_string(),
                    operation,
                    api_version: api_version.to_string(),
                    subresource: subresource.to_string(),
                    time: None,
                    set: FieldSet::default(),
                });
                self.entries.len() - 1
            }
        };
        &mut self.entries[at]
    }

    /// What every manager but the given one owns.
    pub(crate) fn union_except(&self, manager: &str, operation: Operation, subresource: &str) -> FieldSet {
        let others = self.entries.iter().filter(|e| !e.is(manager, operation, subresource));
        others.fold(FieldSet::default(), |all, e| all.union(&e.set))
    }

    /// Takes `paths` from every manager (members only, as upstream strips server-set metadata).
    pub(crate) fn strip(&mut self, paths: &FieldSet) {
        for entry in &mut self.entries {
            entry.set = entry.set.difference(paths);
        }
    }

    /// Keeps at most [`MAX_UPDATE_MANAGERS`] update entries, merging the oldest per API version into
    /// [`ANCIENT_CHANGES`] (`capManagersManager`).
    pub(crate) fn cap_updaters(&mut self) {
        self.entries.retain(|e| !e.set.is_empty());
        let mut updaters: Vec<usize> =
            (0..self.entries.len()).filter(|&i| self.entries[i].operation == Operation::Update).collect();
        if updaters.len() <= MAX_UPDATE_MANAGERS {
            return;
        }
        updaters.sort_by(|&a, &b| {
            let (a, b) = (&self.entries[a], &self.entries[b]);
            (&a.time, &a.manager).cmp(&(&b.time, &b.manager))
        });
        let mut count = updaters.len();
        let mut first_of_version: Vec<(String, usize)> = Vec::new();
        let mut merged_away = Vec::new();
        for &i in &updaters {
            if count <= MAX_UPDATE_MANAGERS {
                break;
            }
            let version = self.entries[i].api_version.clone();
            match first_of_version.iter().find(|(v, _)| *v == version) {
                Some(&(_, first)) => {
                    let (set, time) = (self.entries[i].set.clone(), self.entries[i].time.clone());
                    let bucket = &mut self.entries[first];
                    bucket.manager = ANCIENT_CHANGES.to_string();
                    bucket.subresource = String::new();
                    bucket.set = bucket.set.union(&set);
                    bucket.time = time;
                    merged_away.push(i);
                    count -= 1;
                }
                None => first_of_version.push((version, i)),
            }
        }
        let mut i = 0;
        self.entries.retain(|_| {
            i += 1;
            !merged_away.contains(&(i - 1))
        });
    }

    /// `obj` with these entries as its `metadata.managedFields` (none at all if there are none).
    pub(crate) fn encode_into(mut self, mut obj: Value) -> Value {
        self.entries.retain(|e| !e.set.is_empty());
        self.entries.sort_by(|a, b| {
            (a.operation, &a.time, &a.manager, &a.api_version, &a.subresource).cmp(&(
                b.operation,
                &b.time,
                &b.manager,
                &b.api_version,
                &b.subresource,
            ))
        });
        let Some(meta) = obj.as_object_mut().map(|o| o.entry("metadata").or_insert_with(|| Value::Object(Map::new())))
        else {
            return obj;
        };
        let Some(meta) = meta.as_object_mut() else { return obj };
        if self.entries.is_empty() {
            meta.remove("managedFields");
        } else {
            meta.insert("managedFields".into(), Value::Array(self.entries.iter().map(Entry::encode).collect()));
        }
        obj
    }
}

//! What the scheduler reads off a node, decoded once from its JSON: its name, labels, taints, allocatable
//! resources and `spec.unschedulable`. Apart from the pod's facts (`facts`), so that node affinity
//! (`affinity`), which pod facts carry, can match nodes without the two depending on each other.

use std::collections::BTreeMap;

use serde_json::Value;

use super::resources::{resource_list, Resource};

fn str_of<'a>(v: &'a Value, pointer: &str) -> &'a str {
    v.pointer(pointer).and_then(Value::as_str).unwrap_or("")
}

fn array_of<'a>(v: &'a Value, pointer: &str) -> &'a [Value] {
    v.pointer(pointer).and_then(Value::as_array).map(Vec::as_slice).unwrap_or(&[])
}

/// A node taint.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Taint {
    pub key: String,
    pub value: String,
    pub effect: String,
}

/// What the scheduler needs of a node.
#[derive(Clone, Debug, PartialEq)]
pub struct NodeFacts {
    pub name: String,
    pub labels: BTreeMap<String, String>,
    pub unschedulable: bool,
    pub taints: Vec<Taint>,
    pub allocatable: Resource,
}

impl NodeFacts {
    pub fn from_json(node: &Value) -> NodeFacts {
        NodeFacts {
            name: str_of(node, "/metadata/name").into(),
            labels: node
                .pointer("/metadata/labels")
                .and_then(Value::as_object)
                .map(|m| m.iter().map(|(k, v)| (k.clone(), v.as_str().unwrap_or("").to_string())).collect())
                .unwrap_or_default(),
            unschedulable: node.pointer("/spec/unschedulable").and_then(Value::as_bool).unwrap_or(false),
            taints: array_of(node, "/spec/taints")
                .iter()
                .map(|t| Taint {
                    key: str_of(t, "/key").into(),
                    value: str_of(t, "/value").into(),
                    effect: str_of(t, "/effect").into(),
                })
                .collect(),
            allocatable: Resource::from_list(&resource_list(node.pointer("/status/allocatable"))),
        }
    }
}

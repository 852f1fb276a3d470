//! Node selector terms as the NodeAffinity plugin matches them (`staging/src/k8s.io/component-helpers/
//! scheduling/corev1/nodeaffinity/nodeaffinity.go` and `apimachinery/pkg/labels/selector.go`, 1.32).
//!
//! A term's requirements are ANDed, terms are ORed. Label operators: `In`, `NotIn`, `Exists`,
//! `DoesNotExist`, `Gt`, `Lt`; field requirements only on `metadata.name` with `In`/`NotIn` and exactly one
//! value. A term that does not parse (an unknown operator, a wrong number of values) matches nothing, and
//! an empty term is dropped, as upstream's `LazyErrorNodeSelector` does.

use std::collections::BTreeMap;

use serde_json::Value;

use super::node_facts::NodeFacts;

/// One `NodeSelectorRequirement`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Requirement {
    pub key: String,
    pub operator: String,
    pub values: Vec<String>,
}

impl Requirement {
    fn from_json(v: &Value) -> Requirement {
        Requirement {
            key: v.get("key").and_then(Value::as_str).unwrap_or("").into(),
            operator: v.get("operator").and_then(Value::as_str).unwrap_or("").into(),
            values: v
                .get("values")
                .and_then(Value::as_array)
                .map(|a| a.iter().map(|s| s.as_str().unwrap_or("").to_string()).collect())
                .unwrap_or_default(),
        }
    }

    /// Whether the label requirement is well formed (`labels.NewRequirement`).
    fn label_valid(&self) -> bool {
        match self.operator.as_str() {
            "In" | "NotIn" => !self.values.is_empty(),
            "Exists" | "DoesNotExist" => self.values.is_empty(),
            "Gt" | "Lt" => self.values.len() == 1 && self.values[0].parse::<i64>().is_ok(),
            _ => false,
        }
    }

    fn label_matches(&self, labels: &BTreeMap<String, String>) -> bool {
        let value = labels.get(&self.key);
        match self.operator.as_str() {
            "In" => value.is_some_and(|v| self.values.contains(v)),
            "NotIn" => value.is_none_or(|v| !self.values.contains(v)),
            "Exists" => value.is_some(),
            "DoesNotExist" => value.is_none(),
            "Gt" | "Lt" => {
                let (Some(have), Ok(bound)) =
                    (value.and_then(|v| v.parse::<i64>().ok()), self.values[0].parse::<i64>())
                else {
                    return false;
                };
                if self.operator == "Gt" {
                    have > bound
                } else {
                    have < bound
                }
            }
            _ => false,
        }
    }

    /// Whether the field requirement is well formed: `metadata.name`, `In` or `NotIn`, one value.
    fn field_valid(&self) -> bool {
        self.key == "metadata.name" && matches!(self.operator.as_str(), "In" | "NotIn") && self.values.len() == 1
    }

    fn field_matches(&self, node_name: &str) -> bool {
        (self.values[0] == node_name) == (self.operator == "In")
    }
}

/// One `NodeSelectorTerm`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NodeSelectorTerm {
    pub match_expressions: Vec<Requirement>,
    pub match_fields: Vec<Requirement>,
}

impl NodeSelectorTerm {
    pub fn from_json(v: &Value) -> NodeSelectorTerm {
        let list = |f: &str| {
            v.get(f)
                .and_then(Value::as_array)
                .map(|a| a.iter().map(Requirement::from_json).collect())
                .unwrap_or_default()
        };
        NodeSelectorTerm { match_expressions: list("matchExpressions"), match_fields: list("matchFields") }
    }

    fn is_empty(&self) -> bool {
        self.match_expressions.is_empty() && self.match_fields.is_empty()
    }

    fn is_valid(&self) -> bool {
        self.match_expressions.iter().all(Requirement::label_valid)
            && self.match_fields.iter().all(Requirement::field_valid)
    }

    /// Whether a well-formed, non-empty term matches `node`.
    pub fn matches(&self, node: &NodeFacts) -> bool {
        !self.is_empty()
            && self.is_valid()
            && self.match_expressions.iter().all(|r| r.label_matches(&node.labels))
            && self.match_fields.iter().all(|r| r.field_matches(&node.name))
    }
}

/// One `PreferredSchedulingTerm`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PreferredTerm {
    pub weight: i64,
    pub preference: NodeSelectorTerm,
}

impl PreferredTerm {
    pub fn from_json(v: &Value) -> PreferredTerm {
        PreferredTerm {
            weight: v.get("weight").and_then(Value::as_i64).unwrap_or(0),
            preference: v.get("preference").map(NodeSelectorTerm::from_json).unwrap_or_default(),
        }
    }
}

/// `RequiredNodeAffinity.Match`: the node selector's labels all present with their values, and (when
/// set) one of the required terms matching.
pub fn required_matches(
    node_selector: &BTreeMap<String, String>,
    required: Option<&[NodeSelectorTerm]>,
    node: &NodeFacts,
) -> bool {
    if !node_selector.iter().all(|(k, v)| node.labels.get(k) == Some(v)) {
        return false;
    }
    match required {
        Some(terms) => terms.iter().any(|t| t.matches(node)),
        None => true,
    }
}

/// `PreferredSchedulingTerms.Score`: the summed weights of the matching terms (weight 0 or empty terms
/// never count).
pub fn preferred_score(terms: &[PreferredTerm], node: &NodeFacts) -> i64 {
    terms.iter().filter(|t| t.weight != 0 && t.preference.matches(node)).map(|t| t.weight).sum()
}

/// The node names the required terms restrict the pod to (NodeAffinity's `PreFilter`): `None` when some
/// term does not name nodes through `metadata.name In`; the union over terms of each term's intersection
/// otherwise (possibly empty: the terms conflict).
pub fn required_node_names(required: Option<&[NodeSelectorTerm]>) -> Option<std::collections::BTreeSet<String>> {
    let terms = required?;
    let mut union: Option<std::collections::BTreeSet<String>> = None;
    for term in terms {
        let mut names: Option<std::collections::BTreeSet<String>> = None;
        for r in term.match_fields.iter().filter(|r| r.key == "metadata.name" && r.operator == "In") {
            let set: std::collections::BTreeSet<String> = r.values.iter().cloned().collect();
            names = Some(match names {
                None => set,
                Some(prev) => prev.intersection(&set).cloned().collect(),
            });
        }
        let names = names?;
        union.get_or_insert_with(Default::default).extend(names);
    }
    union
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn node(name: &str, labels: &[(&str, &str)]) -> NodeFacts {
        NodeFacts::from_json(&json!({
            "metadata": {"name": name, "labels": labels.iter().map(|(k, v)| (k.to_string(), json!(v))).collect::<serde_json::Map<_, _>>()},
        }))
    }

    fn term(v: Value) -> NodeSelectorTerm {
        NodeSelectorTerm::from_json(&v)
    }

    #[test]
    fn every_operator_matches_as_upstreams() {
        let n = node("n1", &[("zone", "a"), ("cores", "8")]);
        let e = |key: &str, op: &str, values: &[&str]| {
            term(json!({"matchExpressions": [{"key": key, "operator": op, "values": values}]}))
        };
        let f = |op: &str, values: &[&str]| {
            term(json!({"matchFields": [{"key": "metadata.name", "operator": op, "values": values}]}))
        };
        let cases = [
            (e("zone", "In", &["a", "b"]), true),
            (e("zone", "In", &["b"]), false),
            (e("missing", "In", &["a"]), false),
            (e("zone", "NotIn", &["b"]), true),
            (e("zone", "NotIn", &["a"]), false),
            (e("missing", "NotIn", &["a"]), true),
            (e("zone", "Exists", &[]), true),
            (e("missing", "Exists", &[]), false),
            (e("missing", "DoesNotExist", &[]), true),
            (e("zone", "DoesNotExist", &[]), false),
            (e("cores", "Gt", &["4"]), true),
            (e("cores", "Gt", &["8"]), false),
            (e("cores", "Lt", &["9"]), true),
            (e("zone", "Gt", &["1"]), false),
            // Malformed requirements match nothing.
            (e("zone", "In", &[]), false),
            (e("zone", "Exists", &["a"]), false),
            (e("cores", "Gt", &["x"]), false),
            (e("zone", "Near", &["a"]), false),
            (f("In", &["n1"]), true),
            (f("In", &["n2"]), false),
            (f("NotIn", &["n2"]), true),
            (f("In", &["n1", "n2"]), false),
            (term(json!({"matchFields": [{"key": "metadata.uid", "operator": "In", "values": ["n1"]}]})), false),
            // An empty term matches nothing.
            (term(json!({})), false),
        ];
        for (t, want) in cases {
            assert_eq!(t.matches(&n), want, "{t:?}");
        }
    }

    #[test]
    fn selector_and_required_terms_combine() {
        let n = node("n1", &[("disk", "ssd")]);
        let ssd = BTreeMap::from([("disk".to_string(), "ssd".to_string())]);
        let hdd = BTreeMap::from([("disk".to_string(), "hdd".to_string())]);
        let yes = term(json!({"matchExpressions": [{"key": "disk", "operator": "Exists"}]}));
        let no = term(json!({"matchExpressions": [{"key": "gpu", "operator": "Exists"}]}));
        assert!(required_matches(&ssd, None, &n));
        assert!(!required_matches(&hdd, None, &n));
        assert!(required_matches(&ssd, Some(&[no.clone(), yes.clone()]), &n));
        assert!(!required_matches(&ssd, Some(std::slice::from_ref(&no)), &n));
        assert!(!required_matches(&BTreeMap::new(), Some(&[]), &n));
        let preferred = [
            PreferredTerm { weight: 5, preference: yes.clone() },
            PreferredTerm { weight: 7, preference: no },
            PreferredTerm { weight: 0, preference: yes.clone() },
            PreferredTerm { weight: 3, preference: yes },
        ];
        assert_eq!(preferred_score(&preferred, &n), 8);
    }

    #[test]
    fn required_names_narrow_the_nodes() {
        let by_name = |names: &[&str]| {
            term(json!({"matchFields": [{"key": "metadata.name", "operator": "In", "values": names}]}))
        };
        let labels = term(json!({"matchExpressions": [{"key": "a", "operator": "Exists"}]}));
        assert_eq!(required_node_names(None), None);
        assert_eq!(required_node_names(Some(&[by_name(&["n1"]), labels])), None);
        let got = required_node_names(Some(&[by_name(&["n1"]), by_name(&["n2"])])).unwrap();
        assert_eq!(got.into_iter().collect::<Vec<_>>(), vec!["n1", "n2"]);
        let both = term(json!({"matchFields": [
            {"key": "metadata.name", "operator": "In", "values": ["n1"]},
            {"key": "metadata.name", "operator": "In", "values": ["n2"]}]}));
        assert_eq!(required_node_names(Some(&[both])), Some(Default::default()));
    }
}

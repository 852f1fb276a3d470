//! Which names a CRD gets and what its conditions say, as apiextensions-apiserver's naming and establishing
//! controllers decide (`pkg/controller/status/naming_controller.go`, `pkg/controller/establish`): a pure
//! function of the CRD and the other CRDs of its group.
//!
//! A requested name is accepted when the CRD already holds it or no other CRD of the group holds it
//! (resource names: plural, singular, short names; kind names: kind and list kind). Any refusal makes
//! `NamesAccepted` False with the reason of the last name refused; once every name is accepted, the CRD is
//! `Established` (the establishing controller's step, taken at once: kubesim has no discovery lag to wait
//! out) and stays so.

use std::collections::BTreeSet;

use serde_json::{json, Map, Value};

use crate::registry::strategies::customresourcedefinitions::conditions::{self, condition, set_condition};

/// The status a CRD should have: its accepted names and conditions. `now` stamps conditions that change.
pub(crate) fn desired_status(crd: &Value, others: &[&Value], now: &str) -> Value {
    let group = crd.pointer("/spec/group").and_then(Value::as_str).unwrap_or("");
    let mut resources: BTreeSet<String> = BTreeSet::new();
    let mut kinds: BTreeSet<String> = BTreeSet::new();
    for other in others {
        if other.pointer("/spec/group").and_then(Value::as_str) != Some(group) {
            continue;
        }
        let accepted = other.pointer("/status/acceptedNames");
        let get = |f: &str| accepted.and_then(|a| a.get(f)).and_then(Value::as_str).unwrap_or("").to_string();
        resources.insert(get("plural"));
        resources.insert(get("singular"));
        for short in strings(accepted.and_then(|a| a.get("shortNames"))) {
            resources.insert(short);
        }
        kinds.insert(get("kind"));
        kinds.insert(get("listKind"));
    }
    resources.remove("");
    kinds.remove("");

    let requested = crd.pointer("/spec/names").cloned().unwrap_or_else(|| json!({}));
    let accepted = crd.pointer("/status/acceptedNames").cloned().unwrap_or_else(|| json!({}));
    let req = |f: &str| requested.get(f).and_then(Value::as_str).unwrap_or("").to_string();
    let acc = |f: &str| accepted.get(f).and_then(Value::as_str).unwrap_or("").to_string();
    let mut names: Map<String, Value> = accepted.as_object().cloned().unwrap_or_default();
    let mut refusal: Option<(&str, String)> = None;

    for (field, reason, used) in [
        ("plural", "PluralConflict", &resources),
        ("singular", "SingularConflict", &resources),
        ("kind", "KindConflict", &kinds),
        ("listKind", "ListKindConflict", &kinds),
    ] {
        if field == "kind" {
            // Short names come between singular and kind, as upstream checks them.
            let wanted = strings(requested.get("shortNames"));
            let held = strings(accepted.get("shortNames"));
            if wanted != held {
                let conflicts: Vec<String> = wanted
                    .iter()
                    .filter(|s| !held.contains(s) && resources.contains(*s))
                    .map(|s| format!("{s:?} is already in use"))
                    .collect();
                match conflicts.len() {
                    0 => {
                        names.insert("shortNames".into(), json!(wanted));
                    }
                    1 => refusal = Some(("ShortNamesConflict", conflicts[0].clone())),
                    _ => refusal = Some(("ShortNamesConflict", format!("[{}]", conflicts.join(", ")))),
                }
            }
        }
        let (wanted, held) = (req(field), acc(field));
        if wanted == held || !used.contains(&wanted) {
            names.insert(field.into(), wanted.into());
        } else {
            refusal = Some((reason, format!("{wanted:?} is already in use")));
        }
    }
    match requested.get("categories") {
        Some(c) => names.insert("categories".into(), c.clone()),
        None => names.remove("categories"),
    };
    if names.get("shortNames").is_some_and(|s| s.as_array().is_some_and(Vec::is_empty)) {
        names.remove("shortNames");
    }

    let names_accepted = match &refusal {
        None => condition("NamesAccepted", "True", "NoConflicts", "no conflicts found"),
        Some((reason, message)) => condition("NamesAccepted", "False", reason, message),
    };
    let established = if refusal.is_none() || conditions::established(crd) {
        condition("Established", "True", "InitialNamesAccepted", "the initial names have been accepted")
    } else {
        condition("Established", "False", "NotAccepted", "not all names are accepted")
    };

    let mut status = crd.get("status").cloned().unwrap_or_else(|| json!({}));
    status["acceptedNames"] = Value::Object(names);
    set_condition(&mut status, names_accepted, now);
    set_condition(&mut status, established, now);
    status
}

fn strings(value: Option<&Value>) -> Vec<String> {
    value
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(|s| s.as_str().map(str::to_string)).collect())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn crd(plural: &str, kind: &str, short: &[&str], accepted: Option<(&str, &str)>) -> Value {
        let mut crd = json!({
            "spec": {"group": "example.com", "names": {"plural": plural, "singular": kind.to_lowercase(), "kind": kind, "listKind": format!("{kind}List"), "shortNames": short}},
            "status": {"acceptedNames": {"plural": "", "kind": ""}},
        });
        if let Some((p, k)) = accepted {
            crd["status"]["acceptedNames"] = json!({"plural": p, "singular": k.to_lowercase(), "kind": k, "listKind": format!("{k}List"), "shortNames": short});
        }
        crd
    }

    fn conditions(status: &Value) -> Vec<(String, String, String)> {
        status["conditions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| {
                (
                    c["type"].as_str().unwrap().into(),
                    c["status"].as_str().unwrap().into(),
                    c["reason"].as_str().unwrap().into(),
                )
            })
            .collect()
    }

    #[test]
    fn a_fresh_crd_gets_its_names_and_is_established() {
        let status = desired_status(&crd("foos", "Foo", &["fo"], None), &[], "T");
        assert_eq!(status["acceptedNames"]["plural"], "foos");
        assert_eq!(status["acceptedNames"]["shortNames"], json!(["fo"]));
        assert_eq!(
            conditions(&status),
            [
                ("NamesAccepted".into(), "True".into(), "NoConflicts".into()),
                ("Established".into(), "True".into(), "InitialNamesAccepted".into())
            ]
        );
        assert_eq!(status["conditions"][0]["lastTransitionTime"], "T");
    }

    #[test]
    fn names_held_by_another_crd_of_the_group_are_refused() {
        let holder = crd("foos", "Foo", &["fo"], Some(("foos", "Foo")));
        let status = desired_status(&crd("bars", "Bar", &["fo"], None), &[&holder], "T");
        assert_eq!(conditions(&status)[0], ("NamesAccepted".into(), "False".into(), "ShortNamesConflict".into()));
        assert_eq!(status["conditions"][0]["message"], "\"fo\" is already in use");
        assert_eq!(conditions(&status)[1], ("Established".into(), "False".into(), "NotAccepted".into()));
        // The other names are accepted all the same.
        assert_eq!(status["acceptedNames"]["plural"], "bars");
        assert!(status["acceptedNames"].get("shortNames").is_none());

        let status = desired_status(&crd("foos", "Other", &[], None), &[&holder], "T");
        assert_eq!(conditions(&status)[0].2, "PluralConflict");
        assert_eq!(status["acceptedNames"]["plural"], "");
    }

    #[test]
    fn an_established_crd_keeps_its_transition_time_and_stays_established() {
        let mut c = crd("foos", "Foo", &[], None);
        c["status"] = desired_status(&c, &[], "T1");
        let again = desired_status(&c, &[], "T2");
        assert_eq!(again["conditions"][1]["lastTransitionTime"], "T1");
        assert_eq!(again, c["status"]);
    }
}

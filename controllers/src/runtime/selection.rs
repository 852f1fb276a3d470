//! kube-controller-manager's `--controllers` (1.32, `k8s.io/controller-manager/app/helper.go` and the
//! options' validation): a list of `*` (every controller that is on by default), `name` (on) and `-name`
//! (off), read in order, the first mention of a controller deciding; a name may be a controller's canonical
//! name (`namespace-controller`) or an alias (`namespace`); an unknown name is refused with upstream's text.

/// What the manager knows of one controller.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Descriptor {
    /// The canonical name (`garbage-collector-controller`).
    pub name: &'static str,
    /// Older names that still select it (`garbagecollector`).
    pub aliases: &'static [&'static str],
    /// Whether `*` leaves it off.
    pub disabled_by_default: bool,
}

/// The controllers a `--controllers` list turns on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Selection {
    /// The list with aliases replaced by canonical names.
    gates: Vec<String>,
    disabled_by_default: Vec<&'static str>,
}

impl Selection {
    /// Reads `--controllers` against the controllers `known`; every unknown name is reported, as
    /// upstream's validation aggregates them.
    pub fn parse(gates: &[String], known: &[Descriptor]) -> Result<Selection, String> {
        let canonical =
            |name: &str| known.iter().find(|d| d.name == name || d.aliases.contains(&name)).map(|d| d.name.to_string());
        let mut errors = Vec::new();
        let mut resolved = Vec::new();
        for gate in gates {
            let gate = gate.trim();
            if gate == "*" {
                resolved.push(gate.to_string());
                continue;
            }
            let (negated, name) = match gate.strip_prefix('-') {
                Some(name) => (true, name),
                None => (false, gate),
            };
            match canonical(name) {
                Some(name) if negated => resolved.push(format!("-{name}")),
                Some(name) => resolved.push(name),
                None => errors.push(format!("{name:?} is not in the list of known controllers")),
            }
        }
        if !errors.is_empty() {
            return Err(format!("validation failed for '--controllers': [{}]", errors.join(", ")));
        }
        let disabled_by_default = known.iter().filter(|d| d.disabled_by_default).map(|d| d.name).collect();
        Ok(Selection { gates: resolved, disabled_by_default })
    }

    /// `IsControllerEnabled`: the first gate naming it decides; otherwise `*` turns on those that are on by
    /// default; without `*`, nothing else is on.
    pub fn enabled(&self, name: &str) -> bool {
        let mut star = false;
        for gate in &self.gates {
            if gate == name {
                return true;
            }
            if gate.strip_prefix('-') == Some(name) {
                return false;
            }
            star |= gate == "*";
        }
        star && !self.disabled_by_default.contains(&name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const KNOWN: &[Descriptor] = &[
        Descriptor { name: "namespace-controller", aliases: &["namespace"], disabled_by_default: false },
        Descriptor { name: "garbage-collector-controller", aliases: &["garbagecollector"], disabled_by_default: false },
        Descriptor { name: "bootstrap-signer-controller", aliases: &["bootstrapsigner"], disabled_by_default: true },
    ];

    fn gates(list: &str) -> Vec<String> {
        list.split(',').map(String::from).collect()
    }

    #[test]
    fn star_names_and_negations() {
        // (--controllers, namespace, garbage collector, bootstrap signer)
        let cases = [
            ("*", true, true, false),
            ("*,-namespace", false, true, false),
            ("-namespace-controller,*", false, true, false),
            ("namespace", true, false, false),
            ("*,bootstrapsigner", true, true, true),
            ("garbagecollector,-garbagecollector", false, true, false),
            ("", false, false, false),
        ];
        for (list, ns, gc, bs) in cases {
            let list = if list.is_empty() { Vec::new() } else { gates(list) };
            let s = Selection::parse(&list, KNOWN).unwrap();
            assert_eq!(
                (
                    s.enabled("namespace-controller"),
                    s.enabled("garbage-collector-controller"),
                    s.enabled("bootstrap-signer-controller")
                ),
                (ns, gc, bs),
                "{list:?}"
            );
        }
    }

    #[test]
    fn unknown_names_are_refused_with_upstreams_text() {
        let err = Selection::parse(&gates("*,nope,-nada"), KNOWN).unwrap_err();
        assert_eq!(
            err,
            r#"validation failed for '--controllers': ["nope" is not in the list of known controllers, "nada" is not in the list of known controllers]"#
        );
    }
}

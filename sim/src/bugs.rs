//! Every bug switch of every component, in one place for the harness: the scenario language (`[cluster]
//! bugs = [...]`), the CLI (`kubesim bugs`) and the README's table read this list, while each switch is
//! declared once, beside the code it changes, in its component (`fake_etcd::bug`, `apiserver::bug`, the scenario
//! informers' `crate::kube::reflector::Bug`, the controller runtime's `controllers::bug`).
//! [`Bugs`] is what a cluster description carries: one typed set per component, handed to each member's
//! and each apiserver's configuration.

use kubesim_failpoints::Bug as _;

/// The switches on, per component.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Bugs {
    pub etcd: fake_etcd::bug::Bugs,
    pub apiserver: apiserver::bug::Bugs,
    /// The scenario informers' (client-go's reflector, `crate::kube::reflector`).
    pub informer: crate::kube::reflector::Bugs,
    /// The controller managers' runtime (`controllers::bug`).
    pub controllers: controllers::bug::Bugs,
}

/// One switch, as listings show it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Switch {
    /// The component it lives in (`fake-etcd`, `apiserver`).
    pub component: &'static str,
    pub name: &'static str,
    pub issue: &'static str,
    pub what: &'static str,
}

/// Every switch, component by component, each in its declaration order.
pub fn all() -> Vec<Switch> {
    let etcd = fake_etcd::bug::Bug::ALL.iter().map(|b| Switch {
        component: "fake-etcd",
        name: b.name(),
        issue: b.issue(),
        what: b.what(),
    });
    let apiserver = apiserver::bug::Bug::ALL.iter().map(|b| Switch {
        component: "apiserver",
        name: b.name(),
        issue: b.issue(),
        what: b.what(),
    });
    let informer = crate::kube::reflector::Bug::ALL.iter().map(|b| Switch {
        component: "informer",
        name: b.name(),
        issue: b.issue(),
        what: b.what(),
    });
    let controllers = controllers::bug::Bug::ALL.iter().map(|b| Switch {
        component: "controllers",
        name: b.name(),
        issue: b.issue(),
        what: b.what(),
    });
    etcd.chain(apiserver).chain(informer).chain(controllers).collect()
}

/// The switches as a Markdown table (`kubesim bugs`, and the README's table, which a test holds equal).
pub fn markdown_table() -> String {
    let mut out = String::from("| switch | component | upstream issue | with the switch on |\n|---|---|---|---|\n");
    for s in all() {
        out.push_str(&format!("| `{}` | {} | {} | {} |\n", s.name, s.component, s.issue, s.what));
    }
    out
}

/// A name that is no switch of any component: the message lists them all.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownSwitch(pub String);

impl std::fmt::Display for UnknownSwitch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let known: Vec<String> = all().iter().map(|s| format!("{:?}", s.name)).collect();
        write!(f, "unknown bug {:?}; expected one of {}", self.0, known.join(", "))
    }
}

impl Bugs {
    /// Turns on the switch called `name`, in whichever component declares it.
    pub fn turn_on(&mut self, name: &str) -> Result<(), UnknownSwitch> {
        if let Ok(bug) = name.parse::<fake_etcd::bug::Bug>() {
            self.etcd.insert(bug);
        } else if let Ok(bug) = name.parse::<apiserver::bug::Bug>() {
            self.apiserver.insert(bug);
        } else if let Ok(bug) = name.parse::<crate::kube::reflector::Bug>() {
            self.informer.insert(bug);
        } else if let Ok(bug) = name.parse::<controllers::bug::Bug>() {
            self.controllers.insert(bug);
        } else {
            return Err(UnknownSwitch(name.to_string()));
        }
        Ok(())
    }

    /// The names of the switches on, component by component.
    pub fn names(&self) -> Vec<&'static str> {
        let etcd = self.etcd.iter().map(|b| b.name());
        etcd.chain(self.apiserver.iter().map(|b| b.name()))
            .chain(self.informer.iter().map(|b| b.name()))
            .chain(self.controllers.iter().map(|b| b.name()))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_reach_their_component_and_unknown_ones_list_every_switch() {
        let mut bugs = Bugs::default();
        bugs.turn_on("skip-sync").unwrap();
        bugs.turn_on("stale-suggestion-trusted").unwrap();
        assert!(bugs.etcd.has(fake_etcd::bug::Bug::SkipSync));
        assert!(bugs.apiserver.has(apiserver::bug::Bug::StaleSuggestionTrusted));
        assert_eq!(bugs.names(), ["skip-sync", "stale-suggestion-trusted"]);
        let err = bugs.turn_on("skip-syncs").unwrap_err().to_string();
        assert!(err.starts_with("unknown bug \"skip-syncs\"; expected one of \"restore-lowers-watchers\""), "{err}");
        let last = all().last().expect("switches are declared").name;
        assert!(err.ends_with(&format!("{last:?}")), "{err}");
    }

    #[test]
    fn every_switch_has_a_distinct_name_an_issue_and_a_sentence() {
        let switches = all();
        for s in &switches {
            assert!(!s.issue.is_empty() && s.what.len() > 20, "{s:?}");
            assert_eq!(switches.iter().filter(|o| o.name == s.name).count(), 1, "{} is declared twice", s.name);
        }
    }
}

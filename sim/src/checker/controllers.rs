//! The controller managers' guarantee: `OneManagerActsAtATime`. Once a manager has taken the lease, no
//! other manager's controllers write until that one's term is over (judged for each lease on its own: the
//! controller managers', and the schedulers' beside them): a write by a manager that is not the
//! one that most recently started leading acts beside the leader (kubernetes #67651's split brain). A pure
//! function of the managers' log (`history::controllers`), in the order the simulation saw the acts.

use std::collections::BTreeMap;

use crate::history::controllers::{ManagerAct, ManagerEvent};

/// The guarantee's statement, as findings quote it.
pub const STATEMENT: &str =
    "no controller manager's controllers write after another manager has taken the lease, until it leads again";

/// One write that broke the guarantee.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Violation {
    pub details: String,
}

/// Every write sent by a manager other than the one that most recently took its role's lease.
pub fn one_manager_acts_at_a_time(log: &[ManagerEvent]) -> Vec<Violation> {
    let mut leaders: BTreeMap<&str, (&str, u64)> = BTreeMap::new();
    let mut out = Vec::new();
    for event in log {
        let leader = leaders.get(event.role.as_str()).copied();
        match &event.what {
            ManagerAct::Leading => {
                leaders.insert(&event.role, (&event.manager, event.at_ms));
            }
            ManagerAct::Stopped | ManagerAct::Deleted { .. } => {}
            ManagerAct::Write { method, path } => match leader {
                Some((name, _)) if name == event.manager => {}
                Some((name, since_ms)) => out.push(Violation {
                    details: format!(
                        "{}{} sent {method} {path} at {} ms, after {name} took the lease at {since_ms} ms",
                        event.manager,
                        of_role(&event.role),
                        event.at_ms
                    ),
                }),
                None => out.push(Violation {
                    details: format!(
                        "{}{} sent {method} {path} at {} ms, before any manager led",
                        event.manager,
                        of_role(&event.role),
                        event.at_ms
                    ),
                }),
            },
        }
    }
    out
}

/// How a finding names a manager's role: nothing for the controller manager's (as before schedulers ran),
/// the lease otherwise.
fn of_role(role: &str) -> String {
    if role == CONTROLLER_MANAGER {
        String::new()
    } else {
        format!(" ({role})")
    }
}

/// The controller managers' role, by their lease.
pub const CONTROLLER_MANAGER: &str = "kube-controller-manager";

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(at_ms: u64, manager: &str, what: ManagerAct) -> ManagerEvent {
        ManagerEvent { at_ms, manager: manager.into(), role: CONTROLLER_MANAGER.into(), what }
    }

    fn scheduler(event: ManagerEvent) -> ManagerEvent {
        ManagerEvent { role: "kube-scheduler".into(), ..event }
    }

    fn write(at_ms: u64, manager: &str) -> ManagerEvent {
        ev(
            at_ms,
            manager,
            ManagerAct::Write { method: "POST".into(), path: "/api/v1/namespaces/a/serviceaccounts".into() },
        )
    }

    #[test]
    fn handovers_pass_and_a_write_after_another_took_the_lease_fails() {
        let clean = [
            ev(0, "m1", ManagerAct::Leading),
            write(1, "m1"),
            ev(20, "m1", ManagerAct::Stopped),
            ev(30, "m2", ManagerAct::Leading),
            write(31, "m2"),
            ev(40, "m1", ManagerAct::Leading),
            write(41, "m1"),
        ];
        assert_eq!(one_manager_acts_at_a_time(&clean), []);
        // m1 was paused past its lease: m2 took over, and m1 wrote when it woke.
        let split =
            [ev(0, "m1", ManagerAct::Leading), ev(30, "m2", ManagerAct::Leading), write(31, "m2"), write(32, "m1")];
        let found = one_manager_acts_at_a_time(&split);
        assert_eq!(found.len(), 1);
        assert_eq!(
            found[0].details,
            "m1 sent POST /api/v1/namespaces/a/serviceaccounts at 32 ms, after m2 took the lease at 30 ms"
        );
        assert_eq!(one_manager_acts_at_a_time(&[write(1, "m1")]).len(), 1, "a write before anyone led");
    }

    #[test]
    fn each_lease_is_judged_on_its_own() {
        // m1 leads the controllers and m2 the scheduler: both write, neither breaks the other's lease.
        let apart = [
            ev(0, "m1", ManagerAct::Leading),
            scheduler(ev(1, "m2", ManagerAct::Leading)),
            write(2, "m1"),
            scheduler(write(3, "m2")),
        ];
        assert_eq!(one_manager_acts_at_a_time(&apart), []);
        // m1's scheduler writes after m2's took the scheduler's lease.
        let split = [
            scheduler(ev(0, "m1", ManagerAct::Leading)),
            scheduler(ev(30, "m2", ManagerAct::Leading)),
            scheduler(write(31, "m1")),
        ];
        let found = one_manager_acts_at_a_time(&split);
        assert_eq!(
            found.iter().map(|v| v.details.as_str()).collect::<Vec<_>>(),
            ["m1 (kube-scheduler) sent POST /api/v1/namespaces/a/serviceaccounts at 31 ms, after m2 took the lease at 30 ms"]
        );
    }
}

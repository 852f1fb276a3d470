//! `SimError`: a simulation that cannot be run as described. Every variant is found before the run starts
//! and names the problem, so that a bad description never turns into a confusing run.

use std::fmt;

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SimError {
    /// A cluster needs at least one fake-etcd member.
    NoMembers,
    /// A workload needs at least one client.
    NoClients,
    /// A fault or failpoint names a node the cluster does not have.
    UnknownNode { name: String, context: String, known: Vec<String> },
    /// A failpoint name that fake-etcd does not define.
    UnknownFailpoint { name: String, known: Vec<String> },
    /// A failpoint armed on a node that is not a fake-etcd member.
    FailpointOnClient { node: String, failpoint: String },
    /// A number outside the range the harness supports.
    OutOfRange { what: String, value: String, allowed: String },
}

impl fmt::Display for SimError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SimError::NoMembers => f.write_str("the cluster has zero fake-etcd members; it needs at least one"),
            SimError::NoClients => f.write_str("the simulation has zero clients; the workload needs at least one"),
            SimError::UnknownNode { name, context, known } => {
                write!(f, "{context} names node {name:?}, which the cluster does not have (nodes: {})", known.join(" "))
            }
            SimError::UnknownFailpoint { name, known } => {
                write!(f, "no failpoint is named {name:?} (known: {})", known.join(", "))
            }
            SimError::FailpointOnClient { node, failpoint } => {
                write!(
                    f,
                    "failpoint {failpoint} is armed on {node}, which is a client; failpoints live in fake-etcd members"
                )
            }
            SimError::OutOfRange { what, value, allowed } => write!(f, "{what} is {value}; allowed: {allowed}"),
        }
    }
}

impl std::error::Error for SimError {}

//! The shell's own log records, proposed through Raft beside the client commands as etcd proposes its own:
//! each member publishes its attributes (name, client URLs) when it starts, the first leader records the
//! cluster version, and every Alarm request is a proposal. They change no key and no revision, but they take
//! log indexes, which is why a fresh single-member etcd reports raft index 4, and so does fake-etcd.

use serde::{Deserialize, Serialize};

use crate::types::MemberId;

/// The cluster version the first leader records (etcd 3.4 records "3.4.0").
pub(crate) const CLUSTER_VERSION: &str = "3.4.0";

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) enum Internal {
    /// A member's attributes, as etcd's `publish` proposes them after every start.
    Publish {
        member: u64,
        name: String,
        client_urls: Vec<String>,
    },
    ClusterVersion(String),
    /// An Alarm request: fake-etcd raises no alarms, but the request takes a log entry as in etcd.
    Alarm,
}

impl Internal {
    pub(crate) fn publish(member: MemberId, name: &str, client_urls: &[String]) -> Internal {
        Internal::Publish { member: member.0, name: name.to_string(), client_urls: client_urls.to_vec() }
    }

    pub(crate) fn encode(&self) -> Vec<u8> {
        bincode::serialize(self).expect("serialising a small enum to a Vec cannot fail")
    }

    /// `None` for bytes this version did not write: a record from a newer member is skipped, not fatal.
    pub(crate) fn decode(bytes: &[u8]) -> Option<Internal> {
        bincode::deserialize(bytes).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_round_trip() {
        for r in [Internal::publish(MemberId(7), "a", &["http://x".into()]), Internal::Alarm] {
            assert_eq!(Internal::decode(&r.encode()), Some(r));
        }
    }
}

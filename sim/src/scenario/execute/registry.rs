//! The cluster's objects as etcd holds them, read once the run has settled, for the checkers that judge
//! what the controllers left behind (`checker::controllers`): every key under `/registry/` as of a
//! revision, decoded (the apiserver stores JSON), straight from the first member that answers. Reading etcd
//! rather than an apiserver keeps the judge independent of the watch cache and of the apiserver under test.

use std::collections::BTreeMap;
use std::time::Duration;

use etcd_proto::etcdserverpb as pb;
use serde_json::Value;

/// The prefix under which the apiserver keeps every object.
pub const PREFIX: &str = "/registry/";

/// How many keys one range asks for: pages keep each answer small under the simulated network.
const PAGE: i64 = 500;

/// Every object as of one revision.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Registry {
    /// The revision read at (the store's revision when read at the latest).
    pub revision: i64,
    /// Each key's object. Values that are not JSON (none the apiserver writes) are left out.
    pub objects: BTreeMap<String, Value>,
}

/// Why the registry could not be read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ReadError {
    /// etcd compacted the revision asked for.
    Compacted,
    /// No member answered, with the last reason.
    Unreadable(String),
}

impl std::fmt::Display for ReadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ReadError::Compacted => f.write_str("etcd compacted that revision"),
            ReadError::Unreadable(why) => write!(f, "etcd could not be read ({why})"),
        }
    }
}

impl Registry {
    /// The object whose `metadata.uid` is `uid`, with its key.
    pub fn by_uid(&self, uid: &str) -> Option<(&str, &Value)> {
        self.objects
            .iter()
            .find(|(_, o)| o.pointer("/metadata/uid").and_then(Value::as_str) == Some(uid))
            .map(|(k, o)| (k.as_str(), o))
    }

    /// The objects of `kind` (their stored `kind` field), in key order.
    pub fn of_kind<'a>(&'a self, kind: &'a str) -> impl Iterator<Item = (&'a str, &'a Value)> + 'a {
        self.objects
            .iter()
            .filter(move |(_, o)| o.get("kind").and_then(Value::as_str) == Some(kind))
            .map(|(k, o)| (k.as_str(), o))
    }

    /// The objects in namespace `namespace` (their `metadata.namespace`), in key order.
    pub fn in_namespace<'a>(&'a self, namespace: &'a str) -> impl Iterator<Item = (&'a str, &'a Value)> + 'a {
        self.objects
            .iter()
            .filter(move |(_, o)| o.pointer("/metadata/namespace").and_then(Value::as_str) == Some(namespace))
            .map(|(k, o)| (k.as_str(), o))
    }
}

/// Every object as of `revision` (0: the latest), from the first of `endpoints` that answers. Call it from a
/// node of the simulation (the control node): the reads go over its network.
pub async fn read(endpoints: &[String], timeout: Duration, revision: i64) -> Result<Registry, ReadError> {
    let mut last = "no member answered".to_string();
    for endpoint in endpoints {
        match read_from(endpoint, timeout, revision).await {
            Ok(registry) => return Ok(registry),
            Err(ReadError::Compacted) => return Err(ReadError::Compacted),
            Err(ReadError::Unreadable(why)) => last = why,
        }
    }
    Err(ReadError::Unreadable(last))
}

/// Reads the whole prefix from one member, page by page, every page at the first page's revision.
async fn read_from(endpoint: &str, timeout: Duration, revision: i64) -> Result<Registry, ReadError> {
    let mut kv = pb::kv_client::KvClient::new(crate::client::channel(endpoint));
    let end = fake_etcd::mvcc::prefix_end(PREFIX.as_bytes());
    let mut registry = Registry { revision, objects: BTreeMap::new() };
    let mut from = PREFIX.as_bytes().to_vec();
    loop {
        let request = pb::RangeRequest {
            key: from.clone(),
            range_end: end.clone(),
            revision: registry.revision,
            limit: PAGE,
            ..Default::default()
        };
        let answer = match tokio::time::timeout(timeout, kv.range(request)).await {
            Ok(Ok(r)) => r.into_inner(),
            Ok(Err(status)) if status.message().contains("compacted") => return Err(ReadError::Compacted),
            Ok(Err(status)) => return Err(ReadError::Unreadable(status.message().to_string())),
            Err(_) => return Err(ReadError::Unreadable(format!("no answer within {}ms", timeout.as_millis()))),
        };
        if registry.revision == 0 {
            registry.revision = answer.header.as_ref().map_or(0, |h| h.revision);
        }
        for kv in &answer.kvs {
            if let Ok(object) = serde_json::from_slice::<Value>(&kv.value) {
                registry.objects.insert(String::from_utf8_lossy(&kv.key).into_owned(), object);
            }
        }
        match answer.kvs.last() {
            Some(last) if answer.more => {
                from = last.key.clone();
                from.push(0);
            }
            _ => return Ok(registry),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn objects_are_found_by_uid_kind_and_namespace() {
        let mut registry = Registry::default();
        let pod = json!({"kind": "Pod", "metadata": {"name": "p", "namespace": "a", "uid": "u1"}});
        let ns = json!({"kind": "Namespace", "metadata": {"name": "a", "uid": "u2"}});
        registry.objects.insert("/registry/pods/a/p".into(), pod.clone());
        registry.objects.insert("/registry/namespaces/a".into(), ns);
        assert_eq!(registry.by_uid("u1"), Some(("/registry/pods/a/p", &pod)));
        assert_eq!(registry.by_uid("u3"), None);
        assert_eq!(registry.of_kind("Namespace").map(|(k, _)| k).collect::<Vec<_>>(), ["/registry/namespaces/a"]);
        assert_eq!(registry.in_namespace("a").count(), 1);
    }
}

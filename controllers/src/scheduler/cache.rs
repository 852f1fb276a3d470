//! The scheduler's cache (`pkg/scheduler/internal/cache/cache.go` and `framework/types.go`'s `NodeInfo`,
//! 1.32): every node with the pods on it and what they request, including pods the scheduler has assumed
//! onto a node before the apiserver's answer and the informer confirm the binding. An assumed pod counts
//! on its node at once, so that the next pod's cycle never places a second pod into the same room; a
//! binding that fails forgets it again. In 1.32 an assumed pod never expires (`durationToExpireAssumedPod`
//! is 0), so neither does one here.
//!
//! A node deleted while pods are still on it stays as a ghost (no node) until they are gone, as upstream's;
//! the [`Cache::snapshot`] holds only real nodes, in name order (upstream interleaves zones in the order
//! nodes were added; kubesim's nodes carry no zones, so only the order differs).

use std::collections::{BTreeMap, BTreeSet};

use super::facts::{HostPort, NodeFacts, PodFacts};
use super::resources::Resource;

/// One node and what is placed on it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct NodeInfo {
    /// `None` for a node deleted while pods remained on it.
    pub node: Option<NodeFacts>,
    /// The pods on the node (bound or assumed), by key.
    pub pods: BTreeMap<String, PodFacts>,
    /// Summed requests of the pods (`Requested`), with `allowed_pods` unused.
    pub requested: Resource,
    /// Summed cpu and memory with the non-zero defaults (`NonZeroRequested`).
    pub non_zero_milli_cpu: i64,
    pub non_zero_memory_bytes: i64,
    /// Host ports in use (`UsedPorts`).
    pub used_ports: BTreeSet<HostPort>,
}

impl NodeInfo {
    pub fn new(node: NodeFacts) -> NodeInfo {
        NodeInfo { node: Some(node), ..NodeInfo::default() }
    }

    /// The node's name (empty for a ghost).
    pub fn name(&self) -> &str {
        self.node.as_ref().map(|n| n.name.as_str()).unwrap_or("")
    }

    pub fn add_pod(&mut self, pod: PodFacts) {
        self.requested.add(&pod.requests);
        self.requested.allowed_pods = 0;
        self.non_zero_milli_cpu += pod.non_zero_milli_cpu;
        self.non_zero_memory_bytes += pod.non_zero_memory_bytes;
        self.used_ports.extend(pod.host_ports.iter().cloned());
        self.pods.insert(pod.key.clone(), pod);
    }

    pub fn remove_pod(&mut self, key: &str) -> Option<PodFacts> {
        let pod = self.pods.remove(key)?;
        self.requested.sub(&pod.requests);
        self.requested.allowed_pods = 0;
        self.requested.scalar.retain(|_, v| *v != 0);
        self.non_zero_milli_cpu -= pod.non_zero_milli_cpu;
        self.non_zero_memory_bytes -= pod.non_zero_memory_bytes;
        // Ports are a set: rebuild it from the pods that remain, which may share a port spec.
        self.used_ports = self.pods.values().flat_map(|p| p.host_ports.iter().cloned()).collect();
        Some(pod)
    }
}

/// Why the cache refused a change.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CacheError {
    /// `AssumePod` of a pod the cache already holds.
    AlreadyInCache(String),
    /// `ForgetPod` or `FinishBinding` of a pod not assumed.
    NotAssumed(String),
}

#[derive(Clone, Debug)]
struct PodState {
    node: String,
    assumed: bool,
}

/// The node cache with assumed pods.
#[derive(Clone, Debug, Default)]
pub struct Cache {
    nodes: BTreeMap<String, NodeInfo>,
    pods: BTreeMap<String, PodState>,
}

impl Cache {
    fn node_entry(&mut self, name: &str) -> &mut NodeInfo {
        self.nodes.entry(name.to_string()).or_default()
    }

    fn place(&mut self, pod: PodFacts) {
        let node = pod.node_name.clone();
        self.node_entry(&node).add_pod(pod);
    }

    fn unplace(&mut self, key: &str, node: &str) {
        if let Some(info) = self.nodes.get_mut(node) {
            info.remove_pod(key);
            if info.node.is_none() && info.pods.is_empty() {
                self.nodes.remove(node);
            }
        }
    }

    /// `AssumePod`: `pod` (its `node_name` the chosen node) counts on that node from now on.
    pub fn assume_pod(&mut self, pod: PodFacts) -> Result<(), CacheError> {
        if self.pods.contains_key(&pod.key) {
            return Err(CacheError::AlreadyInCache(pod.key));
        }
        self.pods.insert(pod.key.clone(), PodState { node: pod.node_name.clone(), assumed: true });
        self.place(pod);
        Ok(())
    }

    /// `FinishBinding`: the binding was accepted; the pod stays assumed until the informer confirms it.
    pub fn finish_binding(&mut self, key: &str) -> Result<(), CacheError> {
        match self.pods.get(key) {
            Some(state) if state.assumed => Ok(()),
            _ => Err(CacheError::NotAssumed(key.into())),
        }
    }

    /// `ForgetPod`: the binding failed; the assumed pod no longer counts.
    pub fn forget_pod(&mut self, key: &str) -> Result<(), CacheError> {
        match self.pods.get(key) {
            Some(state) if state.assumed => {
                let node = state.node.clone();
                self.pods.remove(key);
                self.unplace(key, &node);
                Ok(())
            }
            _ => Err(CacheError::NotAssumed(key.into())),
        }
    }

    /// Whether `key` is assumed and not yet confirmed.
    pub fn is_assumed(&self, key: &str) -> bool {
        self.pods.get(key).is_some_and(|s| s.assumed)
    }

    /// `AddPod`/`UpdatePod`: the informer shows `pod` bound to its node; an assumed pod is confirmed (and
    /// moved, should the apiserver have put it elsewhere).
    pub fn add_or_update_pod(&mut self, pod: PodFacts) {
        if let Some(state) = self.pods.remove(&pod.key) {
            self.unplace(&pod.key, &state.node);
        }
        self.pods.insert(pod.key.clone(), PodState { node: pod.node_name.clone(), assumed: false });
        self.place(pod);
    }

    /// `RemovePod`: the pod is gone (deleted, or finished).
    pub fn remove_pod(&mut self, key: &str) {
        if let Some(state) = self.pods.remove(key) {
            self.unplace(key, &state.node);
        }
    }

    /// `AddNode`/`UpdateNode`.
    pub fn add_or_update_node(&mut self, node: NodeFacts) {
        let name = node.name.clone();
        self.node_entry(&name).node = Some(node);
    }

    /// `RemoveNode`: the node goes; its pods keep a ghost entry until they are removed.
    pub fn remove_node(&mut self, name: &str) {
        if let Some(info) = self.nodes.get_mut(name) {
            info.node = None;
            if info.pods.is_empty() {
                self.nodes.remove(name);
            }
        }
    }

    /// The node of `name`, if it is a real one.
    pub fn node(&self, name: &str) -> Option<&NodeInfo> {
        self.nodes.get(name).filter(|n| n.node.is_some())
    }

    /// `UpdateSnapshot`: the real nodes, in name order. Borrowed, not copied: a scheduling cycle runs to
    /// its decision without the cache changing under it (no informer event is handled in between), so the
    /// cache itself is the consistent view upstream's generation-numbered snapshot exists to provide, and
    /// a cycle costs a pointer per node rather than a copy of every node with all its pods.
    pub fn snapshot(&self) -> Vec<&NodeInfo> {
        self.nodes.values().filter(|n| n.node.is_some()).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn node(name: &str) -> NodeFacts {
        NodeFacts::from_json(
            &json!({"metadata": {"name": name}, "status": {"allocatable": {"cpu": "2", "pods": "10"}}}),
        )
    }

    fn pod(name: &str, node: &str, cpu: &str) -> PodFacts {
        PodFacts::from_json(&json!({
            "metadata": {"namespace": "ns", "name": name},
            "spec": {"nodeName": node, "containers": [{"resources": {"requests": {"cpu": cpu}},
                     "ports": [{"hostPort": 80}]}]},
        }))
    }

    #[test]
    fn an_assumed_pod_counts_until_forgotten_or_confirmed() {
        let mut cache = Cache::default();
        cache.add_or_update_node(node("n1"));
        cache.assume_pod(pod("a", "n1", "500m")).unwrap();
        assert!(cache.is_assumed("ns/a"));
        assert_eq!(cache.node("n1").unwrap().requested.milli_cpu, 500);
        assert_eq!(cache.assume_pod(pod("a", "n1", "500m")), Err(CacheError::AlreadyInCache("ns/a".into())));
        cache.finish_binding("ns/a").unwrap();
        // Still counted after the binding, before the informer confirms.
        assert_eq!(cache.snapshot()[0].requested.milli_cpu, 500);
        cache.forget_pod("ns/a").unwrap();
        assert_eq!(cache.node("n1").unwrap().requested.milli_cpu, 0);
        assert!(cache.node("n1").unwrap().used_ports.is_empty());
        assert_eq!(cache.forget_pod("ns/a"), Err(CacheError::NotAssumed("ns/a".into())));

        cache.assume_pod(pod("b", "n1", "1")).unwrap();
        cache.add_or_update_pod(pod("b", "n1", "1"));
        assert!(!cache.is_assumed("ns/b"));
        assert_eq!(cache.node("n1").unwrap().requested.milli_cpu, 1000);
        assert_eq!(cache.node("n1").unwrap().pods.len(), 1);
        // A confirmed pod is not forgotten by a late binding failure.
        assert_eq!(cache.forget_pod("ns/b"), Err(CacheError::NotAssumed("ns/b".into())));
    }

    #[test]
    fn the_informer_may_confirm_a_pod_elsewhere() {
        let mut cache = Cache::default();
        cache.add_or_update_node(node("n1"));
        cache.add_or_update_node(node("n2"));
        cache.assume_pod(pod("a", "n1", "1")).unwrap();
        cache.add_or_update_pod(pod("a", "n2", "1"));
        assert_eq!(cache.node("n1").unwrap().requested.milli_cpu, 0);
        assert_eq!(cache.node("n2").unwrap().requested.milli_cpu, 1000);
        cache.remove_pod("ns/a");
        assert_eq!(cache.node("n2").unwrap().requested.milli_cpu, 0);
    }

    #[test]
    fn a_removed_node_lingers_as_a_ghost_while_pods_remain() {
        let mut cache = Cache::default();
        cache.add_or_update_node(node("n1"));
        cache.add_or_update_pod(pod("a", "n1", "1"));
        cache.remove_node("n1");
        assert!(cache.snapshot().is_empty());
        assert!(cache.node("n1").is_none());
        // The node coming back finds its pods still counted.
        cache.add_or_update_node(node("n1"));
        assert_eq!(cache.node("n1").unwrap().requested.milli_cpu, 1000);
        cache.remove_node("n1");
        cache.remove_pod("ns/a");
        cache.add_or_update_node(node("n1"));
        assert_eq!(cache.node("n1").unwrap().requested.milli_cpu, 0);
    }
}

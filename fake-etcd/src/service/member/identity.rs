//! Member and cluster ids, derived exactly as etcd derives them, so that a fake-etcd member started with
//! the same flags as a real one reports the same ids (etcdctl prints them, clients compare them).
//!
//! etcd: member id = the first 8 bytes (big endian) of SHA-1(sorted peer URLs concatenated + cluster token);
//! cluster id = the first 8 bytes of SHA-1(the sorted member ids, each as 8 big-endian bytes).

use sha1::{Digest, Sha1};

use crate::types::{ClusterId, MemberId};

/// etcd's default `--initial-cluster-token`.
pub const DEFAULT_CLUSTER_TOKEN: &str = "etcd-cluster";

pub(crate) fn member_id(peer_urls: &[String], cluster_token: &str) -> MemberId {
    let mut urls = peer_urls.to_vec();
    urls.sort();
    let mut hasher = Sha1::new();
    for url in &urls {
        hasher.update(url.as_bytes());
    }
    hasher.update(cluster_token.as_bytes());
    MemberId(first_u64(&hasher.finalize()))
}

pub(crate) fn cluster_id(members: &[MemberId]) -> ClusterId {
    let mut ids: Vec<u64> = members.iter().map(|m| m.0).collect();
    ids.sort_unstable();
    let mut hasher = Sha1::new();
    for id in ids {
        hasher.update(id.to_be_bytes());
    }
    ClusterId(first_u64(&hasher.finalize()))
}

fn first_u64(digest: &[u8]) -> u64 {
    let mut first = [0u8; 8];
    first.copy_from_slice(&digest[..8]);
    u64::from_be_bytes(first)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The ids real etcd 3.4.23 reported for `--initial-cluster r1=http://127.0.0.1:23800`
    /// (measured against etcd 3.4.23's `member list`).
    #[test]
    fn ids_match_real_etcd() {
        let member = member_id(&["http://127.0.0.1:23800".to_string()], DEFAULT_CLUSTER_TOKEN);
        assert_eq!(member, MemberId(3319814642761637952));
        assert_eq!(format!("{member}"), "2e1259d415f2a040");
        assert_eq!(cluster_id(&[member]), ClusterId(324952591200643719));
    }

    #[test]
    fn peer_url_order_does_not_matter() {
        let a = member_id(&["http://b:2380".into(), "http://a:2380".into()], "t");
        let b = member_id(&["http://a:2380".into(), "http://b:2380".into()], "t");
        assert_eq!(a, b);
        assert_ne!(a, member_id(&["http://a:2380".into(), "http://b:2380".into()], "other-token"));
    }
}

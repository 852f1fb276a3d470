//! Finds the real etcd and etcdctl binaries that the tests against real peers compare fake-etcd with.
//!
//! A missing binary is a failure with instructions, never a skip: a suite that silently passes on a machine
//! without etcd would prove nothing.

use std::path::PathBuf;

/// The Debian packages that provide the real peers (CI installs them with apt-get).
pub const DEBIAN_PACKAGES: &str = "etcd-server (/usr/bin/etcd) and etcd-client (/usr/bin/etcdctl)";

/// The real etcd 3.4.23 server binary.
pub fn etcd() -> PathBuf {
    find("etcd")
}

/// The real etcdctl 3.4.23 client binary.
pub fn etcdctl() -> PathBuf {
    find("etcdctl")
}

/// Looks a binary up on PATH and panics with the packages to install when it is absent.
fn find(name: &str) -> PathBuf {
    let path = std::env::var_os("PATH").unwrap_or_default();
    for dir in std::env::split_paths(&path) {
        let candidate = dir.join(name);
        if candidate.is_file() {
            return candidate;
        }
    }
    panic!(
        "`{name}` is not on PATH. The tests against real peers need etcd 3.4.23 and etcdctl 3.4.23: \
         install the Debian packages {DEBIAN_PACKAGES}, e.g. \
         `apt-get install -y etcd-server etcd-client`"
    );
}

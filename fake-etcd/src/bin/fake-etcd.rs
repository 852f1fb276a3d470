//! The `fake-etcd` binary: serves one member on real sockets.

fn main() {}

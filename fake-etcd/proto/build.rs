//! Compiles kubesim's etcd .proto files with madsim-tonic-build, which emits both the real tonic code and the
//! simulation stubs (picked by `tonic::include_proto!` according to `cfg(madsim)`).
//!
//! protoc comes from the `protoc-bin-vendored` crate unless the caller already set `PROTOC`, so that a fresh
//! machine builds without installing a system package.

fn main() -> Result<(), Box<dyn std::error::Error>> {
    if std::env::var_os("PROTOC").is_none() {
        let protoc = protoc_bin_vendored::protoc_bin_path()?;
        // SAFETY: build scripts are single-threaded; nothing else reads the environment concurrently.
        unsafe { std::env::set_var("PROTOC", protoc) };
    }
    // `kubesim/peer.proto` is fake-etcd's own member-to-member protocol, not part of etcd's contract.
    let protos = ["proto/etcd/kv.proto", "proto/etcd/auth.proto", "proto/etcd/rpc.proto", "proto/kubesim/peer.proto"];
    tonic_build::configure().build_client(true).build_server(true).compile_protos(&protos, &["proto"])?;
    for p in protos {
        println!("cargo:rerun-if-changed={p}");
    }
    Ok(())
}

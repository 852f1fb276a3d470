//! `kubesim-apiserver`: kube-apiserver's REST API on a real socket, for kubectl, client-go-style clients,
//! the Python client and kube-rs. By default it embeds a single fake-etcd member in the same process, so
//! that `cargo run --release --bin kubesim-apiserver` is all a newcomer types; `--etcd-servers` points it
//! at an external etcd (real etcd 3.4, or a fake-etcd cluster) instead. Flags take kube-apiserver's names.
//!
//! SIGTERM or SIGINT drains: readiness fails, the listener closes, watches end cleanly, in-flight requests
//! finish, then the embedded etcd stops.
//!
//! Files: `args` (the flags), `kubeconfig` (`--write-kubeconfig`), `tls` (serving with a certificate),
//! `embedded` (the in-process fake-etcd member), `control_plane` (the controllers, scheduler and simulated
//! nodes around the server).

#[cfg(not(madsim))]
mod args;
#[cfg(not(madsim))]
mod control_plane;
#[cfg(not(madsim))]
mod embedded;
#[cfg(not(madsim))]
mod kubeconfig;
#[cfg(not(madsim))]
mod run;
#[cfg(not(madsim))]
mod tls;

#[cfg(not(madsim))]
fn main() -> std::process::ExitCode {
    run::main()
}

#[cfg(madsim)]
fn main() {
    eprintln!("kubesim-apiserver serves real sockets; under --cfg madsim apiservers are built by the sim crate");
    std::process::exit(2);
}

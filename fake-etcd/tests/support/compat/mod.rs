//! The etcdctl compatibility harness: script parsing, running a script against a server, normalizing the
//! transcript (`kubesim_testsupport::line_diff` diffs two). Used by `tests/etcdctl_compat.rs` only.

pub mod normalize;
pub mod run;
pub mod script;

use normalize::Ports;

use crate::support::{Disk, Peer, Server};

/// Starts a fresh `peer`, runs `script` against it, and returns the normalized transcript.
pub fn transcript(script: &script::Script, peer: &Peer) -> String {
    let server = Server::start(peer, Disk::Temp);
    let raw = run::run(script, &server);
    normalize::normalize(&raw, &Ports { client: server.client_port, peer: server.peer_port })
}

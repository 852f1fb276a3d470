//! Hands out loopback ports that no other server of this process is using and that nothing else holds.
//!
//! Ports come from 21000-22999, below Linux's ephemeral range (32768-60999), so no outgoing connection of
//! this machine (etcdctl's, or a member's to its peers) is ever given one of them. Within one process a
//! counter makes every port unique, so tests running on parallel threads never collide. Separate test
//! processes (cargo runs test binaries one after another, nextest runs them side by side) start at an offset
//! derived from their pid, and every candidate is probed with a bind first, so a port some other program
//! holds is skipped. A port can still be taken between the probe and the server's own bind; the server
//! starter retries with fresh ports in that case.

use std::net::TcpListener;
use std::sync::atomic::{AtomicU32, Ordering};

const FIRST: u32 = 21000;
const COUNT: u32 = 2000;

/// How many ports this process has handed out so far.
static NEXT: AtomicU32 = AtomicU32::new(0);

/// Returns a loopback port that is free at the time of the call and never returned before by this process.
pub fn free_port() -> u16 {
    let offset = std::process::id().wrapping_mul(97) % COUNT;
    for _ in 0..COUNT {
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let port = (FIRST + (offset + n) % COUNT) as u16;
        if TcpListener::bind(("127.0.0.1", port)).is_ok() {
            return port;
        }
    }
    panic!("no free loopback port left in {FIRST}-{}", FIRST + COUNT - 1);
}

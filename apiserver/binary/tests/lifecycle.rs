//! The binary's life as an operator sees it: it starts and prints where it serves, SIGTERM drains it (a
//! watch ends cleanly, the process exits 0), and with `--etcd-data-dir` nothing it acknowledged is lost
//! across a restart.
#![cfg(not(madsim))]

#[path = "support/spawn.rs"]
mod spawn;

use std::io::{BufReader, Read, Write};
use std::net::TcpStream;
use std::process::Child;
use std::time::Duration;

use spawn::request;

/// A running binary, killed on drop if still alive.
struct Running {
    child: Child,
    addr: String,
    _stdout: BufReader<std::process::ChildStdout>,
}

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start(args: &[&str]) -> Running {
    let spawn::Spawned { child, url, stdout } = spawn::spawn(args);
    let addr = url.trim_start_matches("http://").trim_start_matches("https://").to_string();
    let running = Running { child, addr, _stdout: stdout };
    for _ in 0..500 {
        if request(&running.addr, "GET", "/readyz", "").starts_with("HTTP/1.1 200") {
            return running;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    panic!("the binary never became ready");
}

fn sigterm(child: &Child) {
    // SAFETY: kill(2) with a valid pid and signal has no memory effects.
    let rc = unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGTERM) };
    assert_eq!(rc, 0, "SIGTERM could not be sent");
}

/// Waits for the process to exit, at most `limit`; its exit status.
fn wait_exit(child: &mut Child, limit: Duration) -> Option<std::process::ExitStatus> {
    let steps = limit.as_millis() / 20;
    for _ in 0..steps {
        if let Some(status) = child.try_wait().expect("try_wait") {
            return Some(status);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    None
}

#[test]
fn sigterm_ends_watches_cleanly_and_exits() {
    let mut server = start(&[]);
    let mut watch = TcpStream::connect(&server.addr).unwrap();
    watch.write_all(b"GET /api/v1/namespaces/default/configmaps?watch=true HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
    let mut head = [0u8; 16];
    watch.read_exact(&mut head).unwrap();
    assert!(head.starts_with(b"HTTP/1.1 200"));
    sigterm(&server.child);
    let mut rest = Vec::new();
    watch.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    watch.read_to_end(&mut rest).expect("the watch ends instead of hanging");
    assert!(
        rest.ends_with(b"0\r\n\r\n"),
        "the watch's chunked body did not end cleanly: {:?}",
        String::from_utf8_lossy(&rest)
    );
    let status = wait_exit(&mut server.child, Duration::from_secs(10)).expect("the process did not exit after SIGTERM");
    assert!(status.success(), "exit status {status}");
}

#[test]
fn acknowledged_writes_survive_a_restart_on_the_same_data_dir() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().to_str().unwrap();
    let mut first = start(&["--etcd-data-dir", data]);
    let cm = r#"{"metadata":{"name":"kept"},"data":{"k":"v"}}"#;
    let answer = request(&first.addr, "POST", "/api/v1/namespaces/default/configmaps", cm);
    assert!(answer.starts_with("HTTP/1.1 201"), "{answer}");
    sigterm(&first.child);
    assert!(wait_exit(&mut first.child, Duration::from_secs(10)).is_some_and(|s| s.success()));
    let second = start(&["--etcd-data-dir", data]);
    let answer = request(&second.addr, "GET", "/api/v1/namespaces/default/configmaps/kept", "");
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    assert!(answer.contains(r#""k":"v""#), "{answer}");
}

//! The `fake-etcd` binary as an operator runs it: it refuses flags that cannot work before serving anything,
//! and it stops cleanly (exit 0) on SIGTERM and SIGINT.
#![cfg(not(madsim))]

use std::io::{BufRead, BufReader};
use std::net::TcpListener;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

fn fake_etcd() -> Command {
    Command::new(env!("CARGO_BIN_EXE_fake-etcd"))
}

/// (flags, a phrase the error must contain). Each must exit 1 at once, naming the problem.
#[test]
fn refuses_flags_that_cannot_work() {
    let cases: &[(&[&str], &str)] = &[
        (&["--listen-client-urls", "https://127.0.0.1:1"], "TLS is not supported"),
        (&["--listen-client-urls", "127.0.0.1:1"], "must start with http://"),
        (&["--listen-client-urls", ""], "names no URL"),
        (&["--name", "a", "--initial-cluster", "b=http://127.0.0.1:2380"], "couldn't find local name \"a\""),
        (
            &[
                "--name",
                "a",
                "--initial-advertise-peer-urls",
                "http://127.0.0.1:2380",
                "--initial-cluster",
                "a=http://127.0.0.1:9",
            ],
            "must match",
        ),
        (
            &["--name", "a", "--initial-cluster", "a=http://localhost:2380,b=http://localhost:2380"],
            "more than one member",
        ),
        (&["--name", "a", "--initial-cluster", "a=localhost:2380"], "must start with http://"),
        (&["--name", "a", "--initial-cluster", "a"], "name=url"),
    ];
    for (flags, phrase) in cases {
        let out = fake_etcd().args(*flags).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{flags:?} should be refused; stderr: {stderr}");
        assert!(stderr.contains(phrase), "{flags:?}: expected {phrase:?} in {stderr}");
    }
}

#[test]
fn unknown_flags_are_usage_errors() {
    let out = fake_etcd().arg("--no-such-flag").output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--no-such-flag"));
}

/// Starts the binary, waits until it logs that it serves, sends `signal`, and expects exit 0 with the signal
/// named in the shutdown log line.
fn stops_cleanly_on(signal: &str, name: &str) {
    let port = free_port();
    let mut child = fake_etcd()
        .args(["--listen-client-urls", &format!("http://127.0.0.1:{port}")])
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let serving = lines.by_ref().map_while(Result::ok).any(|l| l.contains("serving client requests"));
    assert!(serving, "fake-etcd never said it was serving");
    // The listener is bound once the server future runs; wait until the port accepts.
    let deadline = Instant::now() + Duration::from_secs(10);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < deadline, "port {port} never accepted a connection");
        std::thread::sleep(Duration::from_millis(20));
    }
    let status = Command::new("kill").args([signal, &child.id().to_string()]).status().unwrap();
    assert!(status.success());
    let rest: Vec<String> = lines.map_while(Result::ok).collect();
    let exit = child.wait().unwrap();
    assert_eq!(exit.code(), Some(0), "exit after {signal}; log: {rest:#?}");
    assert!(rest.iter().any(|l| l.contains("shutting down") && l.contains(name)), "log: {rest:#?}");
}

#[test]
fn stops_cleanly_on_sigterm() {
    stops_cleanly_on("-TERM", "SIGTERM");
}

#[test]
fn stops_cleanly_on_sigint() {
    stops_cleanly_on("-INT", "SIGINT");
}

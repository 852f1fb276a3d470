//! Starting the `kubesim-apiserver` binary the way the tests of this package do (a free port, quiet logs,
//! the caller's flags, and the URL it prints on its start-up line), and the plain request they send it.

use std::ffi::OsStr;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, ChildStdout, Command, Stdio};

/// The started process, the URL of its start-up line and the rest of its standard output (kept open, so
/// that the binary never writes to a closed pipe).
pub struct Spawned {
    pub child: Child,
    pub url: String,
    pub stdout: BufReader<ChildStdout>,
}

/// Starts the binary with `--secure-port 0 --log-level error` and `args`, and reads its start-up line.
/// The binary starts bare (`--controllers= --scheduler=false --nodes=0`), as these tests' expectations were
/// written for a server on which nothing but requests acts; a test that wants the controllers passes
/// `--controllers=*`, which adds them (the flag's lists append), and `--scheduler=true` or `--nodes=N`,
/// which override.
pub fn spawn<S: AsRef<OsStr>>(args: &[S]) -> Spawned {
    let mut child = Command::new(env!("CARGO_BIN_EXE_kubesim-apiserver"))
        .args(["--secure-port", "0", "--log-level", "error", "--controllers=", "--scheduler=false", "--nodes=0"])
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("the binary starts");
    let mut stdout = BufReader::new(child.stdout.take().expect("piped"));
    let mut first = String::new();
    stdout.read_line(&mut first).expect("a start-up line");
    let url = first
        .split_whitespace()
        .find(|w| w.starts_with("http"))
        .unwrap_or_else(|| panic!("no URL in the start-up line {first:?}"))
        .to_string();
    Spawned { child, url, stdout }
}

/// One plain-HTTP request with `Connection: close`; the whole answer, or "" if the server is not there.
#[allow(dead_code)] // Not every test file sends requests this way.
pub fn request(addr: &str, method: &str, path: &str, body: &str) -> String {
    let Ok(mut stream) = TcpStream::connect(addr) else { return String::new() };
    let head = format!(
        "{method} {path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    let _ = stream.write_all(head.as_bytes());
    let _ = stream.write_all(body.as_bytes());
    let mut answer = String::new();
    let _ = stream.read_to_string(&mut answer);
    answer
}

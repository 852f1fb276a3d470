//! Starting the `kubesim-apiserver` binary the way the tests of this package do: a free port, quiet logs,
//! the caller's flags, and the URL it prints on its start-up line.

use std::ffi::OsStr;
use std::io::{BufRead, BufReader};
use std::process::{Child, ChildStdout, Command, Stdio};

/// The started process, the URL of its start-up line and the rest of its standard output (kept open, so
/// that the binary never writes to a closed pipe).
pub struct Spawned {
    pub child: Child,
    pub url: String,
    pub stdout: BufReader<ChildStdout>,
}

/// Starts the binary with `--secure-port 0 --log-level error` and `args`, and reads its start-up line.
pub fn spawn<S: AsRef<OsStr>>(args: &[S]) -> Spawned {
    let mut child = Command::new(env!("CARGO_BIN_EXE_kubesim-apiserver"))
        .args(["--secure-port", "0", "--log-level", "error"])
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

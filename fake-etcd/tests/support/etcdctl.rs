//! Runs the real etcdctl 3.4.23 against one endpoint and captures what a user would see.

use std::io::Write;
use std::process::{Command, Stdio};

use super::tools;

/// Everything one etcdctl invocation printed, and how it ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CmdOutput {
    pub stdout: String,
    pub stderr: String,
    /// The exit code; 128 + N when a signal N ended the process (as a shell reports it).
    pub code: i32,
}

/// A hang guard for commands that carry no timeout of their own: long enough for any legitimate command,
/// short enough that a server that never answers fails the test instead of stalling it.
const GUARD_SECS: &str = "60";

/// Runs `etcdctl --endpoints=<endpoint> <args>`, feeding `stdin` if given; when `args` carry their own
/// `--endpoints`, those are used instead.
///
/// With `timeout_secs`, the command runs under coreutils `timeout`, exactly as in the recorded transcript
/// (`timeout 3 etcdctl … watch …`), so a command that is still running then ends with exit code 124.
/// The environment is cleared except for PATH and `ETCDCTL_API=3`, so no ETCDCTL_* variable of the calling
/// shell changes what etcdctl does.
pub fn run(endpoint: &str, args: &[String], stdin: Option<&str>, timeout_secs: Option<&str>) -> CmdOutput {
    let etcdctl = tools::etcdctl();
    let mut cmd = Command::new("timeout");
    // `-k 5`: a command that ignores the SIGTERM (etcdctl elect resigns first, and hangs if its server is
    // gone) is killed 5 s later, so no etcdctl outlives its test.
    match timeout_secs {
        Some(secs) => cmd.args(["-k", "5", secs]),
        None => cmd.args(["-k", "5", GUARD_SECS]),
    };
    cmd.arg(&etcdctl);
    if !args.iter().any(|a| a.starts_with("--endpoints")) {
        cmd.arg(format!("--endpoints={endpoint}"));
    }
    cmd.args(args);
    cmd.env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("ETCDCTL_API", "3")
        .stdin(if stdin.is_some() { Stdio::piped() } else { Stdio::null() })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().unwrap_or_else(|e| panic!("cannot run {}: {e}", etcdctl.display()));
    if let Some(input) = stdin {
        let mut pipe = child.stdin.take().expect("stdin was piped");
        // etcdctl may exit before reading all of its input (e.g. on a parse error); a broken pipe is then
        // part of the observed behaviour, not a harness failure.
        let _ = pipe.write_all(input.as_bytes());
    }
    let out = child.wait_with_output().expect("waiting for etcdctl");
    let code = match out.status.code() {
        Some(code) => code,
        None => {
            use std::os::unix::process::ExitStatusExt;
            128 + out.status.signal().unwrap_or(0)
        }
    };
    CmdOutput {
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        code,
    }
}

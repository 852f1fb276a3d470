//! Runs `kubesim` itself as a child process, which is how the commands that need many runs keep them
//! apart: static state survives between runs in one process (ARCHITECTURE.md, Determinism), a separate process has none.
//!
//! The child's stdout and stderr go to anonymous temporary files rather than pipes, so that a chatty child
//! can never block on a full pipe while the parent is busy with its siblings, and the parent needs no
//! reader thread. Both are read once the child has exited.

use std::ffi::OsStr;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::process::{Child, Command, ExitStatus, Stdio};

/// A child `kubesim` that is running.
pub struct Running {
    child: Child,
    stdout: File,
    stderr: File,
}

/// What a child left behind when it exited.
pub struct Finished {
    pub status: ExitStatus,
    pub stdout: String,
    pub stderr: String,
}

/// Starts `kubesim ARGS` (this very binary) with its output captured.
pub fn spawn<I, S>(args: I) -> std::io::Result<Running>
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    let exe = std::env::current_exe()?;
    let stdout = tempfile::tempfile()?;
    let stderr = tempfile::tempfile()?;
    let child = Command::new(exe)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::from(stdout.try_clone()?))
        .stderr(Stdio::from(stderr.try_clone()?))
        .spawn()?;
    Ok(Running { child, stdout, stderr })
}

impl Running {
    /// The child's output if it has exited, without blocking.
    pub fn try_finish(&mut self) -> std::io::Result<Option<Finished>> {
        match self.child.try_wait()? {
            Some(status) => self.collect(status).map(Some),
            None => Ok(None),
        }
    }

    /// Waits for the child to exit.
    pub fn finish(mut self) -> std::io::Result<Finished> {
        let status = self.child.wait()?;
        self.collect(status)
    }

    fn collect(&mut self, status: ExitStatus) -> std::io::Result<Finished> {
        Ok(Finished { status, stdout: read_all(&mut self.stdout)?, stderr: read_all(&mut self.stderr)? })
    }
}

fn read_all(f: &mut File) -> std::io::Result<String> {
    f.seek(SeekFrom::Start(0))?;
    let mut bytes = Vec::new();
    f.read_to_end(&mut bytes)?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

impl Finished {
    /// The exit code, when the child exited rather than being killed by a signal.
    pub fn code(&self) -> Option<i32> {
        self.status.code()
    }

    /// The last `n` lines of stderr, for reporting a child that went wrong.
    pub fn stderr_tail(&self, n: usize) -> String {
        let lines: Vec<&str> = self.stderr.lines().collect();
        lines[lines.len().saturating_sub(n)..].join("\n")
    }

    /// How the child ended, in words: `exit code 101`, `killed by signal 9`.
    pub fn ending(&self) -> String {
        if let Some(code) = self.status.code() {
            return format!("exit code {code}");
        }
        #[cfg(unix)]
        {
            use std::os::unix::process::ExitStatusExt;
            if let Some(signal) = self.status.signal() {
                return format!("killed by signal {signal}");
            }
        }
        self.status.to_string()
    }
}

//! Runs one kubectl script against a fresh `kubesim-apiserver` and renders what happened in the script's
//! own format: the script's comments and commands as written, each command followed by what it printed
//! (normalized) and its exit code when not 0.
//!
//! Every script gets its own server (`--secure-port 0`, in-memory embedded etcd), its own kubeconfig,
//! its own `HOME` (so kubectl's discovery and OpenAPI caches start empty) and its own scratch directory
//! as working directory and `TMPDIR`. kubectl runs with a cleared environment: `PATH`, `HOME`,
//! `KUBECONFIG`, `TMPDIR` and the `NAME=value` words the command line starts with.
#![cfg(not(madsim))]

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command as Process, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use super::normalize::{self, Context};
use super::script::{Command, Invocation, Item, Script};

/// The kubectl under test: Google's dispatcher, which runs its built-in kubectl 1.32.4 because the server
/// reports minor version 32.
pub const KUBECTL: &str = "/usr/bin/kubectl";

/// How long after its foreground command starts the first background command runs; the foreground
/// command (a watch) has listed and started watching by then.
const BACKGROUND_DELAY: Duration = Duration::from_secs(1);

/// A command still running after this long is killed and its transcript says so; no script command
/// should come near it (a kubectl that waits for something the server never does would otherwise hang
/// the test).
const COMMAND_LIMIT: Duration = Duration::from_secs(30);

/// A running server, killed on drop.
pub struct Server {
    child: Child,
    pub port: u16,
    /// Where the server's standard error goes; shown when a script fails.
    pub stderr_path: PathBuf,
    _stdout: BufReader<std::process::ChildStdout>,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Server {
    /// Starts the binary in `dir`, writing its kubeconfig to `dir/kubeconfig`, and waits for `/readyz`.
    pub fn start(dir: &Path) -> Result<Server, String> {
        let stderr_path = dir.join("server.stderr");
        let stderr = std::fs::File::create(&stderr_path).map_err(|e| e.to_string())?;
        // Bare (no controllers, scheduler or nodes): the transcripts were recorded against a kube-apiserver with no controller
        // manager beside it.
        let mut child = Process::new(env!("CARGO_BIN_EXE_kubesim-apiserver"))
            .args([
                "--secure-port",
                "0",
                "--log-level",
                "error",
                "--controllers=",
                "--scheduler=false",
                "--nodes=0",
                "--write-kubeconfig",
            ])
            .arg(dir.join("kubeconfig"))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(stderr)
            .spawn()
            .map_err(|e| format!("the binary does not start: {e}"))?;
        let mut stdout = BufReader::new(child.stdout.take().expect("piped"));
        let mut first = String::new();
        stdout.read_line(&mut first).map_err(|e| format!("no start-up line: {e}"))?;
        // "kubesim-apiserver: serving on http://127.0.0.1:PORT (…)".
        let port = first
            .split_whitespace()
            .find_map(|w| w.strip_prefix("http://127.0.0.1:"))
            .and_then(|p| p.parse().ok())
            .ok_or_else(|| format!("no http://127.0.0.1:PORT in the start-up line {first:?}"))?;
        let server = Server { child, port, stderr_path, _stdout: stdout };
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if readyz(port) {
                return Ok(server);
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        Err("the server did not answer /readyz with 200 within 10 s".into())
    }

    /// The last lines the server wrote on standard error.
    pub fn stderr_tail(&self) -> String {
        let text = std::fs::read_to_string(&self.stderr_path).unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        lines[lines.len().saturating_sub(20)..].join("\n")
    }
}

fn readyz(port: u16) -> bool {
    let Ok(mut stream) = TcpStream::connect(("127.0.0.1", port)) else { return false };
    let _ = stream.write_all(b"GET /readyz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    let mut answer = String::new();
    let _ = stream.read_to_string(&mut answer);
    answer.starts_with("HTTP/1.1 200")
}

/// What one kubectl invocation printed.
pub struct Output {
    pub stdout: String,
    pub stderr: String,
    /// The exit code; `None` when killed by a signal.
    pub code: Option<i32>,
    /// Whether the runner killed it at [`COMMAND_LIMIT`].
    pub killed: bool,
}

/// One script's scratch space and server.
pub struct Run {
    pub server: Server,
    dir: PathBuf,
    vars: BTreeMap<String, String>,
}

impl Run {
    pub fn start(dir: &Path) -> Result<Run, String> {
        std::fs::create_dir_all(dir.join("home")).map_err(|e| e.to_string())?;
        std::fs::create_dir_all(dir.join("tmp")).map_err(|e| e.to_string())?;
        let server = Server::start(dir)?;
        Ok(Run { server, dir: dir.to_path_buf(), vars: BTreeMap::new() })
    }

    /// Runs every step of `script` and returns the rendered, normalized transcript.
    pub fn transcript(&mut self, script: &Script) -> String {
        let tmp = self.dir.to_string_lossy().into_owned();
        let cx = Context { port: self.server.port, tmp: &tmp, generated: &script.generated };
        let mut out = String::new();
        for item in &script.items {
            match item {
                Item::Text(line) => writeln!(out, "{line}").unwrap(),
                Item::Step(command) => self.step(command, &cx, &mut out),
            }
        }
        out
    }

    fn step(&mut self, command: &Command, cx: &Context<'_>, out: &mut String) {
        let stdin = command.stdin.as_deref().map(|s| self.substitute(s));
        let this: &Run = self;
        let (fg, bg) = std::thread::scope(|scope| {
            let background = scope.spawn(|| {
                if command.background.is_empty() {
                    return Vec::new();
                }
                std::thread::sleep(BACKGROUND_DELAY);
                command.background.iter().map(|b| this.kubectl(&b.invocation, None)).collect::<Vec<_>>()
            });
            let fg = this.kubectl(&command.invocation, stdin.as_deref());
            (fg, background.join().expect("background commands panicked"))
        });
        writeln!(out, "$ {}", command.raw).unwrap();
        for line in command.stdin.iter().flat_map(|s| s.lines()) {
            if line.is_empty() {
                writeln!(out, "<").unwrap();
            } else {
                writeln!(out, "< {line}").unwrap();
            }
        }
        let mut stdout = fg.stdout.clone();
        for var in &command.captures {
            writeln!(out, "! capture {var}").unwrap();
            let value = fg.stdout.trim().to_string();
            // The captured value is the point of the command; it shows by name, not as the varying text.
            if !value.is_empty() {
                stdout = stdout.replace(&value, &format!("${{{var}}}"));
            }
            self.vars.insert(var.clone(), value);
        }
        record(out, &Output { stdout, ..fg }, cx);
        for (background, output) in command.background.iter().zip(&bg) {
            writeln!(out, "& {}", background.raw).unwrap();
            record(out, output, cx);
        }
    }

    /// Replaces every `${NAME}` that a capture set; others stay as written.
    fn substitute(&self, text: &str) -> String {
        let mut text = text.to_string();
        for (name, value) in &self.vars {
            text = text.replace(&format!("${{{name}}}"), value);
        }
        text
    }

    fn kubectl(&self, invocation: &Invocation, stdin: Option<&str>) -> Output {
        let mut process = Process::new(KUBECTL);
        process
            .args(invocation.args.iter().map(|a| self.substitute(a)))
            .current_dir(&self.dir)
            .env_clear()
            .env("PATH", "/usr/local/bin:/usr/bin:/bin")
            .env("HOME", self.dir.join("home"))
            .env("KUBECONFIG", self.dir.join("kubeconfig"))
            .env("TMPDIR", self.dir.join("tmp"))
            .stdin(if stdin.is_some() { Stdio::piped() } else { Stdio::null() })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        for (name, value) in &invocation.env {
            process.env(name, self.substitute(value));
        }
        let mut child = match process.spawn() {
            Ok(child) => child,
            Err(e) => {
                return Output {
                    stdout: String::new(),
                    stderr: format!("cannot run {KUBECTL}: {e}\n"),
                    code: None,
                    killed: false,
                }
            }
        };
        if let Some(text) = stdin {
            let mut pipe = child.stdin.take().expect("piped");
            let text = text.to_string();
            std::thread::spawn(move || {
                let _ = pipe.write_all(text.as_bytes());
            });
        }
        let stdout = drain(child.stdout.take().expect("piped"));
        let stderr = drain(child.stderr.take().expect("piped"));
        let (status, killed) = wait_at_most(&mut child, COMMAND_LIMIT);
        Output {
            stdout: stdout.join().expect("stdout reader"),
            stderr: stderr.join().expect("stderr reader"),
            code: status.code(),
            killed,
        }
    }
}

fn drain(mut pipe: impl Read + Send + 'static) -> std::thread::JoinHandle<String> {
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        let _ = pipe.read_to_end(&mut bytes);
        String::from_utf8_lossy(&bytes).into_owned()
    })
}

fn wait_at_most(child: &mut Child, limit: Duration) -> (ExitStatus, bool) {
    let deadline = Instant::now() + limit;
    loop {
        if let Some(status) = child.try_wait().expect("try_wait") {
            return (status, false);
        }
        if Instant::now() >= deadline {
            let _ = child.kill();
            return (child.wait().expect("wait"), true);
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Writes one command's normalized output lines and its exit line.
fn record(out: &mut String, output: &Output, cx: &Context<'_>) {
    for (stream, text) in [("1", &output.stdout), ("2", &output.stderr)] {
        let text = normalize::normalize(text, cx);
        for line in text.lines() {
            if line.is_empty() {
                writeln!(out, "{stream}|").unwrap();
            } else {
                writeln!(out, "{stream}| {line}").unwrap();
            }
        }
        if !text.is_empty() && !text.ends_with('\n') {
            writeln!(out, "{stream}\\ no newline at end").unwrap();
        }
    }
    if output.killed {
        writeln!(out, "= killed after {} s", COMMAND_LIMIT.as_secs()).unwrap();
    } else {
        match output.code {
            Some(0) => {}
            Some(code) => writeln!(out, "= exit {code}").unwrap(),
            None => writeln!(out, "= killed by a signal").unwrap(),
        }
    }
}

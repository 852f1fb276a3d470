//! Runs one etcdctl script against one server and writes down everything etcdctl printed.
//!
//! The transcript format, one block per command:
//!
//! ```text
//! $ <command as written in the script>
//! 1| <a stdout line>
//! 2| <a stderr line>
//! = exit <code>
//! ```
//!
//! with `&` blocks for background commands after their foreground command, and a `1\` or `2\` line when the
//! stream does not end with a newline.

use std::collections::BTreeMap;
use std::fmt::Write;
use std::time::Duration;

use super::script::{Command, Script, Step};
use crate::support::etcdctl::{self, CmdOutput};
use crate::support::Server;

/// How long after its foreground command starts a background command runs (as in the transcript's
/// `( sleep 1; etcdctl put … ) & timeout 3 etcdctl watch …`).
const BACKGROUND_DELAY: Duration = Duration::from_secs(1);

/// Runs `script` against `server` and returns the raw (not yet normalized) transcript.
pub fn run(script: &Script, server: &Server) -> String {
    let endpoint = server.endpoint();
    let mut vars: BTreeMap<String, String> = BTreeMap::from([("CLIENT_URL".to_string(), server.url())]);
    let mut transcript = String::new();
    let mut last_stdout = String::new();
    for step in &script.steps {
        match step {
            Step::Run(command) => {
                let (out, background) = run_command(&endpoint, command, &vars);
                record(&mut transcript, "$", &command.raw, &out);
                for (bg, bg_out) in command.background.iter().zip(&background) {
                    record(&mut transcript, "&", &bg.raw, bg_out);
                }
                last_stdout = out.stdout;
            }
            Step::Capture { var, regex } => {
                let re = regex::Regex::new(regex).expect("checked when parsed");
                match re.captures(&last_stdout).and_then(|c| c.get(1)) {
                    Some(m) => {
                        vars.insert(var.clone(), m.as_str().to_string());
                    }
                    // Recorded rather than panicking: the other side may capture fine, and the transcript
                    // diff then shows where the outputs parted.
                    None => writeln!(transcript, "! capture {var} failed: no match for {regex}").unwrap(),
                }
            }
            Step::Sleep(secs) => std::thread::sleep(Duration::from_secs_f64(*secs)),
        }
    }
    transcript
}

/// Runs a foreground command and its background commands; returns their outputs.
fn run_command(endpoint: &str, command: &Command, vars: &BTreeMap<String, String>) -> (CmdOutput, Vec<CmdOutput>) {
    let args: Vec<String> = command.args.iter().map(|a| substitute(a, vars)).collect();
    let stdin = command.stdin.as_ref().map(|s| substitute(s, vars));
    let background: Vec<Vec<String>> =
        command.background.iter().map(|bg| bg.args.iter().map(|a| substitute(a, vars)).collect()).collect();
    std::thread::scope(|scope| {
        let bg = scope.spawn(|| {
            if background.is_empty() {
                return Vec::new();
            }
            std::thread::sleep(BACKGROUND_DELAY);
            background.iter().map(|args| etcdctl::run(endpoint, args, None, None)).collect()
        });
        let out = etcdctl::run(endpoint, &args, stdin.as_deref(), command.timeout.as_deref());
        (out, bg.join().expect("background commands panicked"))
    })
}

/// Replaces every `${NAME}` whose NAME is set; unset ones stay as written, so the transcript shows them.
fn substitute(text: &str, vars: &BTreeMap<String, String>) -> String {
    let mut out = text.to_string();
    for (name, value) in vars {
        out = out.replace(&format!("${{{name}}}"), value);
    }
    out
}

fn record(transcript: &mut String, marker: &str, raw: &str, out: &CmdOutput) {
    writeln!(transcript, "{marker} {raw}").unwrap();
    for (stream, text) in [("1", &out.stdout), ("2", &out.stderr)] {
        for line in text.lines() {
            writeln!(transcript, "{stream}| {line}").unwrap();
        }
        if !text.is_empty() && !text.ends_with('\n') {
            writeln!(transcript, "{stream}\\ no newline at end").unwrap();
        }
    }
    writeln!(transcript, "= exit {}", out.code).unwrap();
}

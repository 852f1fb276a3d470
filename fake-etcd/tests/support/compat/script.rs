//! Parses the etcdctl compatibility scripts in `tests/etcdctl/*.txt`.
//!
//! A script is one behaviour, written as the etcdctl commands a user would type:
//!
//! ```text
//! # what the script shows and why (required first line)
//! $ put foo bar -w json              run `etcdctl --endpoints=<server> put foo bar -w json`
//! $ [timeout 3] watch k1 --rev 2     run it under `timeout 3` (exit code 124 if still running then)
//! < mod("k1") > "0"                  a line of standard input for the command above (`<` alone: empty line)
//! & put w/a 1                        a background command: the `&` lines of a command run one after another,
//!                                    starting one second after it, while it is still running
//! ! capture LEASE lease ([0-9a-f]+)  set ${LEASE} to group 1 of this regex on the previous command's stdout
//! ! sleep 3.5                        wait (only for lease expiry, which is real time on both sides)
//! ```
//!
//! `${NAME}` is substituted in arguments, standard input and background commands; `${CLIENT_URL}` is
//! preset to the server's `http://127.0.0.1:<port>`. Commands get `--endpoints=127.0.0.1:<port>` unless they
//! name their own `--endpoints`. Arguments are split like a shell does: by blanks, with '…' and "…" quoting
//! and backslash escapes.

use std::path::Path;

/// One parsed script.
#[derive(Clone, Debug)]
pub struct Script {
    /// The file name without `.txt`.
    pub name: String,
    /// The first comment line, without `# `.
    pub title: String,
    pub steps: Vec<Step>,
}

#[derive(Clone, Debug)]
pub enum Step {
    Run(Command),
    /// Sets a variable from the previous command's stdout.
    Capture {
        var: String,
        regex: String,
    },
    /// Waits this many seconds.
    Sleep(f64),
}

/// One foreground etcdctl invocation with its input and background commands.
#[derive(Clone, Debug)]
pub struct Command {
    /// The script line after `$ `, as written (the transcript shows this, not the substituted form, so that
    /// real and fake transcripts stay comparable).
    pub raw: String,
    /// Seconds for coreutils `timeout`, as written (e.g. "3" or "2.5").
    pub timeout: Option<String>,
    pub args: Vec<String>,
    /// Standard input, one `\n`-terminated line per `<` line.
    pub stdin: Option<String>,
    pub background: Vec<Background>,
}

/// A command that runs while its foreground command is running.
#[derive(Clone, Debug)]
pub struct Background {
    pub raw: String,
    pub args: Vec<String>,
}

/// Reads and parses one script file; panics with `file:line` on a malformed line.
pub fn load(path: &Path) -> Script {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    let name = path.file_stem().and_then(|s| s.to_str()).expect("UTF-8 file name").to_string();
    parse(&name, &path.display().to_string(), &text)
}

fn parse(name: &str, file: &str, text: &str) -> Script {
    let mut lines = text.lines().enumerate();
    let title = match lines.next() {
        Some((_, first)) if first.starts_with("# ") => first[2..].trim().to_string(),
        _ => panic!("{file}:1: a script must open with a `# ` line saying what it shows and why"),
    };
    let mut steps: Vec<Step> = Vec::new();
    for (index, line) in lines {
        let at = format!("{file}:{}", index + 1);
        if line.trim().is_empty() || line.starts_with('#') {
            continue;
        } else if let Some(rest) = line.strip_prefix("$ ") {
            steps.push(Step::Run(parse_command(rest, &at)));
        } else if line == "<" || line.starts_with("< ") {
            let command = last_command(&mut steps).unwrap_or_else(|| panic!("{at}: `<` must follow a `$` line"));
            let input = command.stdin.get_or_insert_with(String::new);
            input.push_str(line.get(2..).unwrap_or(""));
            input.push('\n');
        } else if let Some(rest) = line.strip_prefix("& ") {
            let command = last_command(&mut steps).unwrap_or_else(|| panic!("{at}: `&` must follow a `$` line"));
            command.background.push(Background { raw: rest.to_string(), args: split_words(rest, &at) });
        } else if let Some(rest) = line.strip_prefix("! capture ") {
            let (var, regex) = rest.split_once(' ').unwrap_or_else(|| panic!("{at}: `! capture NAME REGEX`"));
            regex::Regex::new(regex).unwrap_or_else(|e| panic!("{at}: bad regex: {e}"));
            steps.push(Step::Capture { var: var.to_string(), regex: regex.to_string() });
        } else if let Some(rest) = line.strip_prefix("! sleep ") {
            let secs = rest.trim().parse().unwrap_or_else(|e| panic!("{at}: `! sleep SECONDS`: {e}"));
            steps.push(Step::Sleep(secs));
        } else {
            panic!("{at}: unknown line (expected `# `, `$ `, `< `, `& `, `! capture`, `! sleep`): {line}");
        }
    }
    assert!(steps.iter().any(|s| matches!(s, Step::Run(_))), "{file}: the script runs no command");
    Script { name: name.to_string(), title, steps }
}

/// The command that `<` and `&` lines belong to: the step just before them.
fn last_command(steps: &mut [Step]) -> Option<&mut Command> {
    match steps.last_mut() {
        Some(Step::Run(command)) => Some(command),
        _ => None,
    }
}

fn parse_command(rest: &str, at: &str) -> Command {
    let mut timeout = None;
    let mut words = rest;
    if let Some(after) = rest.strip_prefix("[timeout ") {
        let (secs, tail) = after.split_once(']').unwrap_or_else(|| panic!("{at}: `[timeout SECONDS]` is not closed"));
        secs.parse::<f64>().unwrap_or_else(|e| panic!("{at}: bad timeout {secs:?}: {e}"));
        timeout = Some(secs.to_string());
        words = tail;
    }
    Command { raw: rest.to_string(), timeout, args: split_words(words, at), stdin: None, background: Vec::new() }
}

/// Splits a command line into words the way a POSIX shell would for these simple cases.
fn split_words(line: &str, at: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word: Option<String> = None;
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            ' ' | '\t' => words.extend(word.take()),
            '\'' => {
                let w = word.get_or_insert_with(String::new);
                loop {
                    match chars.next() {
                        Some('\'') => break,
                        Some(c) => w.push(c),
                        None => panic!("{at}: unclosed '"),
                    }
                }
            }
            '"' => {
                let w = word.get_or_insert_with(String::new);
                loop {
                    match chars.next() {
                        Some('"') => break,
                        Some('\\') => w.push(chars.next().unwrap_or_else(|| panic!("{at}: dangling \\"))),
                        Some(c) => w.push(c),
                        None => panic!("{at}: unclosed \""),
                    }
                }
            }
            '\\' => {
                word.get_or_insert_with(String::new).push(chars.next().unwrap_or_else(|| panic!("{at}: dangling \\")))
            }
            c => word.get_or_insert_with(String::new).push(c),
        }
    }
    words.extend(word);
    words
}

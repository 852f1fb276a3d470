//! Parses the kubectl transcripts in `tests/kubectl/*.txt`: the commands to run, with their standard
//! input, background commands and captures, and the lines around them that the runner prints back as
//! they are. The expected output lines are not parsed into the steps: the runner renders the actual run
//! in the script's own format, and the two texts are compared whole (see `tests/kubectl/README.md`).
//!
//! ```text
//! # a comment (kept in the rendered transcript)
//! ! generated gen-                    names `gen-` + five generated characters show as `gen-<suffix>`
//! $ kubectl get cm a -o yaml          a foreground command
//! < apiVersion: v1                    a line of its standard input
//! ! capture RV                        sets ${RV} to its standard output, trimmed
//! 1| a line it printed on stdout
//! 2| a line it printed on stderr
//! 1\ no newline at end                its stdout did not end with a newline
//! = exit 1                            its exit code, when not 0
//! & kubectl create cm b               a background command, run while the foreground one runs
//! ```

use std::path::Path;

/// One parsed script.
#[derive(Clone, Debug)]
pub struct Script {
    /// The file name without `.txt`.
    pub name: String,
    /// The first comment line, without `# `.
    pub title: String,
    /// The script's text as written (the expected transcript).
    pub text: String,
    pub items: Vec<Item>,
    /// Name prefixes whose generated five-character suffixes are normalized.
    pub generated: Vec<String>,
}

/// A piece of the script, in file order.
#[derive(Clone, Debug)]
pub enum Item {
    /// A comment, a blank line or a script-wide directive, printed back as written.
    Text(String),
    Step(Command),
}

/// One foreground command with its input, captures and background commands.
#[derive(Clone, Debug)]
pub struct Command {
    /// The line after `$ `, as written.
    pub raw: String,
    pub invocation: Invocation,
    /// Standard input, one `\n`-terminated line per `<` line; `None` without `<` lines.
    pub stdin: Option<String>,
    /// Variables to set from this command's standard output.
    pub captures: Vec<String>,
    pub background: Vec<Background>,
}

/// A command that runs while its foreground command runs.
#[derive(Clone, Debug)]
pub struct Background {
    pub raw: String,
    pub invocation: Invocation,
}

/// What to execute: `NAME=value` words before the program are its environment.
#[derive(Clone, Debug)]
pub struct Invocation {
    pub env: Vec<(String, String)>,
    /// The arguments after `kubectl`.
    pub args: Vec<String>,
}

/// Reads and parses one script file; panics with the file and line on a malformed script.
pub fn load(path: &Path) -> Script {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    let name = path.file_stem().expect("a file name").to_string_lossy().into_owned();
    parse(&name, &text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

pub fn parse(name: &str, text: &str) -> Result<Script, String> {
    let title = text
        .lines()
        .next()
        .and_then(|l| l.strip_prefix("# "))
        .ok_or("the first line must be a `# ` comment saying what the script shows")?
        .to_string();
    let mut items: Vec<Item> = Vec::new();
    let mut generated = Vec::new();
    // Whether the last item is a command that may still take `<`, `!`, `&` and output lines.
    let mut open = false;
    for (index, line) in text.lines().enumerate() {
        let line_no = index + 1;
        let err = |what: &str| format!("line {line_no}: {what}: {line:?}");
        let current = match items.last_mut() {
            Some(Item::Step(command)) if open => Some(command),
            _ => None,
        };
        if let Some(raw) = line.strip_prefix("$ ") {
            let invocation = parse_invocation(raw).map_err(|e| err(&e))?;
            items.push(Item::Step(Command {
                raw: raw.to_string(),
                invocation,
                stdin: None,
                captures: Vec::new(),
                background: Vec::new(),
            }));
            open = true;
        } else if let Some(raw) = line.strip_prefix("& ") {
            let command = current.ok_or_else(|| err("a background command must follow a `$` command"))?;
            let invocation = parse_invocation(raw).map_err(|e| err(&e))?;
            command.background.push(Background { raw: raw.to_string(), invocation });
        } else if line == "<" || line.starts_with("< ") {
            let command = current.ok_or_else(|| err("standard input must follow a `$` command"))?;
            if !command.background.is_empty() {
                return Err(err("standard input must come before the background commands"));
            }
            let stdin = command.stdin.get_or_insert_with(String::new);
            stdin.push_str(line.get(2..).unwrap_or(""));
            stdin.push('\n');
        } else if let Some(var) = line.strip_prefix("! capture ") {
            let command = current.ok_or_else(|| err("a capture must follow a `$` command"))?;
            if !var.chars().all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_') || var.is_empty() {
                return Err(err("a variable name is upper case letters, digits and `_`"));
            }
            command.captures.push(var.to_string());
        } else if let Some(prefix) = line.strip_prefix("! generated ") {
            if prefix.is_empty() || prefix.contains(' ') {
                return Err(err("`! generated` takes one name prefix"));
            }
            generated.push(prefix.to_string());
            items.push(Item::Text(line.to_string()));
            open = false;
        } else if is_output(line) {
            if current.is_none() {
                return Err(err("an output line must follow a command"));
            }
        } else if line.is_empty() || line.starts_with('#') {
            items.push(Item::Text(line.to_string()));
            open = false;
        } else {
            return Err(err("not a script line (see tests/kubectl/README.md)"));
        }
    }
    if !items.iter().any(|i| matches!(i, Item::Step(_))) {
        return Err("no `$` command".into());
    }
    Ok(Script { name: name.to_string(), title, text: text.to_string(), items, generated })
}

/// Whether the line is one the runner writes for a command's result.
fn is_output(line: &str) -> bool {
    ["1|", "2|", "1\\ ", "2\\ ", "= "].iter().any(|p| line.starts_with(p))
}

fn parse_invocation(raw: &str) -> Result<Invocation, String> {
    let words = split_words(raw)?;
    let mut env = Vec::new();
    let mut rest = words.into_iter().peekable();
    while let Some(word) = rest.peek() {
        match word.split_once('=') {
            Some((name, value))
                if !name.is_empty()
                    && name.chars().all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_') =>
            {
                env.push((name.to_string(), value.to_string()));
                rest.next();
            }
            _ => break,
        }
    }
    match rest.next().as_deref() {
        Some("kubectl") => Ok(Invocation { env, args: rest.collect() }),
        Some(other) => Err(format!("only kubectl runs here, not {other:?}")),
        None => Err("an empty command".into()),
    }
}

/// Splits a command line into words as a POSIX shell does for the forms used here: blanks separate
/// words, '…' quotes literally, "…" quotes with `\"` and `\\` escapes, and a backslash outside quotes
/// escapes the next character.
pub fn split_words(line: &str) -> Result<Vec<String>, String> {
    let mut words = Vec::new();
    let mut word: Option<String> = None;
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            ' ' | '\t' => {
                if let Some(w) = word.take() {
                    words.push(w);
                }
            }
            '\'' => {
                let w = word.get_or_insert_with(String::new);
                loop {
                    match chars.next() {
                        Some('\'') => break,
                        Some(c) => w.push(c),
                        None => return Err("an unterminated '".into()),
                    }
                }
            }
            '"' => {
                let w = word.get_or_insert_with(String::new);
                loop {
                    match chars.next() {
                        Some('"') => break,
                        Some('\\') => match chars.next() {
                            Some(c @ ('"' | '\\' | '$')) => w.push(c),
                            Some(c) => {
                                w.push('\\');
                                w.push(c);
                            }
                            None => return Err("an unterminated \"".into()),
                        },
                        Some(c) => w.push(c),
                        None => return Err("an unterminated \"".into()),
                    }
                }
            }
            '\\' => {
                let escaped = chars.next().ok_or("a trailing backslash")?;
                word.get_or_insert_with(String::new).push(escaped);
            }
            c => word.get_or_insert_with(String::new).push(c),
        }
    }
    words.extend(word);
    Ok(words)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_split_like_a_shell() {
        assert_eq!(
            split_words(r#"patch cm a -p '{"data":{"k":"v"}}' "x y" a\ b"#).unwrap(),
            vec!["patch", "cm", "a", "-p", r#"{"data":{"k":"v"}}"#, "x y", "a b"]
        );
    }
}

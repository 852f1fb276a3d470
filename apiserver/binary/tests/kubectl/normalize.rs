//! Rewrites what kubectl printed so that two runs against correct servers print the same text.
//!
//! Only values that legitimately differ from run to run are rewritten, each to a fixed placeholder:
//! - the server's port (`127.0.0.1:<port>`) and the script's scratch directory (`<tmp>`);
//! - object uids (`<uid>`) and resourceVersions written as `resourceVersion: "N"` or
//!   `"resourceVersion": "N"` (`<rv>`); a value a script captured shows as `${NAME}` in the output of the
//!   command it was captured from;
//! - timestamps, in RFC 3339 (`2024-01-02T03:04:05Z`) and in `describe`'s RFC 1123 form
//!   (`Tue, 02 Jan 2024 03:04:05 +0000`), as `<timestamp>`;
//! - ages, the words kube's `HumanDuration` writes (`0s`, `5m3s`, `2d`, `<invalid>`), as `<age>`; the blanks
//!   after an age grow or shrink so that the next column of a table keeps its position;
//! - the five characters the server appends to a `generateName`, for the prefixes a script lists with
//!   `! generated PREFIX`, as `<suffix>`;
//! - the random number in the name of the file `kubectl edit` leaves behind (`kubectl-edit-<n>.yaml`);
//! - the date, time and process id at the start of client-go's log lines (`E1125 11:45:43.890722   15465 `)
//!   as `E0000 00:00:00.000000 <pid> `.
//!
//! Everything else, the exact texts of errors, column widths and the order of lines included, must match.

/// What one run's output may contain that varies between runs.
pub struct Context<'a> {
    pub port: u16,
    pub tmp: &'a str,
    pub generated: &'a [String],
}

/// Returns `text` (one stream of one command) with the varying values replaced.
pub fn normalize(text: &str, cx: &Context<'_>) -> String {
    let mut out = String::with_capacity(text.len());
    for (i, line) in text.split('\n').enumerate() {
        if i > 0 {
            out.push('\n');
        }
        out.push_str(&normalize_line(line, cx));
    }
    out
}

fn normalize_line(line: &str, cx: &Context<'_>) -> String {
    let line = line.replace(&format!("127.0.0.1:{}", cx.port), "127.0.0.1:<port>");
    let line = if cx.tmp.is_empty() { line } else { line.replace(cx.tmp, "<tmp>") };
    let line = klog_header(&line);
    let line = replace_matches(&line, uid_at, "<uid>");
    let line = replace_matches(&line, rfc3339_at, "<timestamp>");
    let line = replace_matches(&line, rfc1123_at, "<timestamp>");
    let line = resource_versions(&line);
    let line = generated_names(&line, cx.generated);
    let line = edit_file_names(&line);
    ages(&line)
}

/// `kubectl-edit-1378455728.yaml` (kubectl picks the number at random) as `kubectl-edit-<n>.yaml`.
fn edit_file_names(line: &str) -> String {
    const PREFIX: &str = "kubectl-edit-";
    let Some(start) = line.find(PREFIX).map(|i| i + PREFIX.len()) else { return line.to_string() };
    let digits = line[start..].bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 {
        return line.to_string();
    }
    format!("{}<n>{}", &line[..start], &line[start + digits..])
}

/// Replaces every match of `matcher` (which returns the length of a match starting at a byte offset) by
/// `placeholder`. Matches start only at character boundaries that do not continue a word.
fn replace_matches(line: &str, matcher: fn(&[u8]) -> Option<usize>, placeholder: &str) -> String {
    let bytes = line.as_bytes();
    let mut out = String::with_capacity(line.len());
    let mut i = 0;
    while i < bytes.len() {
        let starts_word = i == 0 || !bytes[i - 1].is_ascii_alphanumeric();
        if starts_word {
            if let Some(len) = matcher(&bytes[i..]) {
                let ends_word = bytes.get(i + len).is_none_or(|b| !b.is_ascii_alphanumeric());
                if ends_word {
                    out.push_str(placeholder);
                    i += len;
                    continue;
                }
            }
        }
        let ch = line[i..].chars().next().expect("in bounds");
        out.push(ch);
        i += ch.len_utf8();
    }
    out
}

/// Matches bytes against a shape: `h` a lowercase hex digit, `9` a decimal digit, `A` an ASCII letter,
/// `s` a sign, anything else itself.
fn shape(bytes: &[u8], pattern: &str) -> bool {
    bytes.len() >= pattern.len()
        && pattern.bytes().zip(bytes).all(|(p, &b)| match p {
            b'h' => b.is_ascii_digit() || (b'a'..=b'f').contains(&b),
            b'9' => b.is_ascii_digit(),
            b'A' => b.is_ascii_alphabetic(),
            b's' => b == b'+' || b == b'-',
            _ => p == b,
        })
}

fn uid_at(bytes: &[u8]) -> Option<usize> {
    const UID: &str = "hhhhhhhh-hhhh-hhhh-hhhh-hhhhhhhhhhhh";
    shape(bytes, UID).then_some(UID.len())
}

/// `2024-01-02T03:04:05Z`, with optional fractional seconds and a numeric offset instead of `Z`.
fn rfc3339_at(bytes: &[u8]) -> Option<usize> {
    const DATE_TIME: &str = "9999-99-99T99:99:99";
    if !shape(bytes, DATE_TIME) {
        return None;
    }
    let mut len = DATE_TIME.len();
    if bytes.get(len) == Some(&b'.') {
        len += 1;
        while bytes.get(len).is_some_and(u8::is_ascii_digit) {
            len += 1;
        }
    }
    if bytes.get(len) == Some(&b'Z') {
        Some(len + 1)
    } else if shape(&bytes[len..], "s99:99") {
        Some(len + 6)
    } else {
        None
    }
}

/// `Tue, 02 Jan 2024 03:04:05 +0000`, as `describe` prints times.
fn rfc1123_at(bytes: &[u8]) -> Option<usize> {
    const RFC1123Z: &str = "AAA, 99 AAA 9999 99:99:99 s9999";
    shape(bytes, RFC1123Z).then_some(RFC1123Z.len())
}

/// `resourceVersion: "12"` (YAML) and `"resourceVersion": "12"` (JSON).
fn resource_versions(line: &str) -> String {
    let mut out = line.to_string();
    for key in ["resourceVersion: \"", "\"resourceVersion\": \""] {
        let mut from = 0;
        while let Some(pos) = out[from..].find(key) {
            let start = from + pos + key.len();
            let digits = out[start..].bytes().take_while(u8::is_ascii_digit).count();
            if digits > 0 && out[start + digits..].starts_with('"') {
                out.replace_range(start..start + digits, "<rv>");
                from = start + "<rv>".len();
            } else {
                from = start;
            }
        }
    }
    out
}

/// The characters the apiserver draws a generateName suffix from (`utilrand.String`).
const SUFFIX_ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";

fn generated_names(line: &str, prefixes: &[String]) -> String {
    let mut out = line.to_string();
    for prefix in prefixes {
        let mut from = 0;
        while let Some(pos) = out[from..].find(prefix.as_str()) {
            let start = from + pos + prefix.len();
            let suffix = out.as_bytes()[start..].iter().take(5).filter(|b| SUFFIX_ALPHABET.contains(b)).count();
            let ends = out.as_bytes().get(start + 5).is_none_or(|b| !b.is_ascii_alphanumeric());
            if suffix == 5 && ends {
                out.replace_range(start..start + 5, "<suffix>");
                from = start + "<suffix>".len();
            } else {
                from = start;
            }
        }
    }
    out
}

/// klog's header: a severity letter, `MMDD hh:mm:ss.uuuuuu`, blanks, the pid, a blank.
fn klog_header(line: &str) -> String {
    let bytes = line.as_bytes();
    if bytes.len() < 23 || !b"IWEF".contains(&bytes[0]) || !shape(&bytes[1..], "9999 99:99:99.999999 ") {
        return line.to_string();
    }
    let rest = &line[22..];
    let blanks = rest.len() - rest.trim_start_matches(' ').len();
    let pid = rest[blanks..].bytes().take_while(u8::is_ascii_digit).count();
    if pid == 0 || !rest[blanks + pid..].starts_with(' ') {
        return line.to_string();
    }
    format!("{}0000 00:00:00.000000 <pid> {}", &line[..1], &rest[blanks + pid + 1..])
}

/// Whether a word is an age as kube's `duration.HumanDuration` writes it (`0s`, `2m3s`, `5h`, `3d4h`,
/// `2y10d`), or one of its two special values.
fn is_age(word: &str) -> bool {
    if word == "<invalid>" || word == "<unknown>" {
        return true;
    }
    let mut units = "ydhms".chars();
    let mut rest = word;
    let mut parts = 0;
    while !rest.is_empty() {
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        let Some(unit) = rest[digits..].chars().next() else { return false };
        // Units must come in decreasing order, each at most once.
        if digits == 0 || !units.any(|u| u == unit) {
            return false;
        }
        rest = &rest[digits + 1..];
        parts += 1;
    }
    parts > 0
}

/// Replaces ages by `<age>`, keeping the start of the next column where it was.
fn ages(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut rest = line;
    let mut pending_shift: isize = 0;
    while !rest.is_empty() {
        let blanks = rest.len() - rest.trim_start_matches(' ').len();
        if blanks > 0 {
            let width = if rest.len() == blanks { blanks as isize } else { (blanks as isize + pending_shift).max(1) };
            out.extend(std::iter::repeat_n(' ', width as usize));
            rest = &rest[blanks..];
            pending_shift = 0;
            continue;
        }
        let word_len = rest.find(' ').unwrap_or(rest.len());
        let word = &rest[..word_len];
        if is_age(word) {
            out.push_str("<age>");
            pending_shift = word.len() as isize - "<age>".len() as isize;
        } else {
            out.push_str(word);
            pending_shift = 0;
        }
        rest = &rest[word_len..];
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cx() -> Context<'static> {
        Context { port: 4321, tmp: "/tmp/.tmpXYZ", generated: &[] }
    }

    #[test]
    fn ages_keep_the_next_column_in_place() {
        let cx = cx();
        assert_eq!(normalize("a      1      0s", &cx), "a      1      <age>");
        assert_eq!(
            normalize("p   0/1     Pending   0          12s   <none>   <none>", &cx),
            "p   0/1     Pending   0          <age> <none>   <none>"
        );
        assert_eq!(normalize("x   Active   2m3s", &cx), "x   Active   <age>");
        assert_eq!(normalize("k1: 5x", &cx), "k1: 5x");
        assert!(!is_age("s") && !is_age("5") && !is_age("3s5m") && !is_age("1s1s"));
    }

    #[test]
    fn ids_times_and_versions_become_placeholders() {
        let cx = cx();
        assert_eq!(
            normalize(r#"  "uid": "1f08163f-811b-4c94-82b6-8e7c1a46f903", "resourceVersion": "6","#, &cx),
            r#"  "uid": "<uid>", "resourceVersion": "<rv>","#
        );
        assert_eq!(
            normalize(r#"  creationTimestamp: "2026-11-25T11:45:40Z""#, &cx),
            r#"  creationTimestamp: "<timestamp>""#
        );
        assert_eq!(normalize("Created:  Wed, 25 Nov 2026 11:45:41 +0000", &cx), "Created:  <timestamp>");
        assert_eq!(normalize(r#""resourceVersion": """#, &cx), r#""resourceVersion": """#);
        assert_eq!(normalize("http://127.0.0.1:4321/api", &cx), "http://127.0.0.1:<port>/api");
        assert_eq!(
            normalize(r#"E1125 11:45:43.890722   15465 reflector.go:166] "x""#, &cx),
            r#"E0000 00:00:00.000000 <pid> reflector.go:166] "x""#
        );
    }

    #[test]
    fn generated_suffixes_only_for_listed_prefixes() {
        let generated = ["gen-".to_string()];
        let cx = Context { port: 1, tmp: "", generated: &generated };
        assert_eq!(normalize("configmap/gen-x7b2q created", &cx), "configmap/gen-<suffix> created");
        assert_eq!(normalize("configmap/other-x7b2q created", &cx), "configmap/other-x7b2q created");
    }
}

//! Rewrites a raw etcdctl transcript so that two correct servers produce the same text.
//!
//! Only values that legitimately differ between two etcd members are rewritten: the ports they listen on,
//! their cluster, member and lease ids, timings, database sizes and hashes, and the timestamps and
//! connection names in clientv3's warn-log lines. Ids become `<id1>`, `<id2>`, … in order of first
//! appearance (hex and decimal spellings of one id get one placeholder), so that which ids are equal is
//! still checked. The keys attached to a lease are listed in sorted order, because etcd lists them from a Go
//! map, in an order that changes from run to run. Everything else, revisions, raft terms and indexes, TTLs
//! and error texts included, must match exactly.

use std::collections::BTreeMap;

use regex::{Captures, Regex};

/// The ports a transcript's server listened on.
pub struct Ports {
    pub client: u16,
    pub peer: u16,
}

/// Returns the normalized transcript.
pub fn normalize(raw: &str, ports: &Ports) -> String {
    let text = normalize_ports(raw, ports);
    let text = normalize_log_lines(&text);
    let text = normalize_measurements(&text);
    let text = normalize_ids(&text);
    let text = sort_lease_keys(&text);
    normalize_tables(&text)
}

/// `lease timetolive --keys` prints the attached keys as `"keys":[…]` (json) or `attached keys([…])`.
fn sort_lease_keys(text: &str) -> String {
    let json = Regex::new(r#""keys":\[([^\]]*)\]"#).unwrap();
    let simple = Regex::new(r"attached keys\(\[([^\]]*)\]\)").unwrap();
    let sorted = |list: &str, sep: &str| {
        let mut items: Vec<&str> = list.split(sep).collect();
        items.sort_unstable();
        items.join(sep)
    };
    let text = json.replace_all(text, |c: &Captures| format!(r#""keys":[{}]"#, sorted(&c[1], ",")));
    simple.replace_all(&text, |c: &Captures| format!("attached keys([{}])", sorted(&c[1], " "))).into_owned()
}

/// Each server's own ports become `<client-port>` and `<peer-port>`.
fn normalize_ports(text: &str, ports: &Ports) -> String {
    let re = Regex::new(r"127\.0\.0\.1:(\d+)\b").unwrap();
    re.replace_all(text, |c: &Captures| match c[1].parse::<u16>() {
        Ok(p) if p == ports.client => "127.0.0.1:<client-port>".to_string(),
        Ok(p) if p == ports.peer => "127.0.0.1:<peer-port>".to_string(),
        _ => c[0].to_string(),
    })
    .into_owned()
}

/// clientv3's zap warn lines carry a wall-clock timestamp and a per-process connection name.
fn normalize_log_lines(text: &str) -> String {
    let ts = Regex::new(r#""ts":"[^"]*""#).unwrap();
    let target = Regex::new(r#""target":"endpoint://client-[^"]*""#).unwrap();
    let text = ts.replace_all(text, r#""ts":"<ts>""#);
    target.replace_all(&text, r#""target":"<target>""#).into_owned()
}

/// Latencies (`took`), database sizes and hashes depend on timing and on the storage engine's layout.
fn normalize_measurements(text: &str) -> String {
    let rules = [
        (r"took = [0-9.]+[a-zµ]+", "took = <took>"),
        (r#""took":"[^"]*""#, r#""took":"<took>""#),
        (r"\b\d+(\.\d+)? (B|kB|MB|GB)\b", "<size>"),
        (r#""(dbSize|dbSizeInUse|totalSize)":\d+"#, r#""$1":<size>"#),
        (r#""hash":\d+"#, r#""hash":<hash>"#),
        // `endpoint hashkv` in the simple format: `<endpoint>, <hash>`.
        (r"(?m)^(1\| \S+:<client-port>), \d+$", "$1, <hash>"),
    ];
    let mut text = text.to_string();
    for (pattern, replacement) in rules {
        text = Regex::new(pattern).unwrap().replace_all(&text, replacement).into_owned();
    }
    text
}

/// Cluster, member and lease ids, in decimal (JSON and `-w fields`) and in hex (simple and table formats).
fn normalize_ids(text: &str) -> String {
    let re = Regex::new(concat!(
        r#""(?:cluster_id|member_id|leader|ID|id|lease)":(?P<json>\d+)"#,
        r#"|"(?:ClusterID|MemberID|Lease)" : (?P<fields>\d+)"#,
        r"|\b(?P<hex>[0-9a-f]{8,16})\b",
    ))
    .unwrap();
    let mut ids: BTreeMap<u64, usize> = BTreeMap::new();
    re.replace_all(text, |c: &Captures| {
        let whole = c.get(0).unwrap();
        let (digits, value) = if let Some(m) = c.name("json").or_else(|| c.name("fields")) {
            (m, m.as_str().parse::<u64>().ok())
        } else {
            let m = c.name("hex").unwrap();
            // Etcdctl prints ids as 16 hex digits (leases) or without leading zeros (members); a run of
            // 8+ decimal digits without a letter is a number such as a hash, not an id.
            let is_id = m.as_str().len() == 16 || m.as_str().bytes().any(|b| b.is_ascii_alphabetic());
            (m, if is_id { u64::from_str_radix(m.as_str(), 16).ok() } else { None })
        };
        match value {
            Some(v) if v != 0 => {
                let next = ids.len() + 1;
                let n = *ids.entry(v).or_insert(next);
                let start = digits.start() - whole.start();
                format!("{}<id{n}>", &whole.as_str()[..start])
            }
            _ => whole.as_str().to_string(),
        }
    })
    .into_owned()
}

/// Table columns are as wide as their widest cell, and normalized cells have other widths than the
/// originals, so runs of padding are collapsed.
fn normalize_tables(text: &str) -> String {
    let dashes = Regex::new(r"-{2,}").unwrap();
    let blanks = Regex::new(r" {2,}").unwrap();
    text.lines()
        .map(|line| {
            if line.starts_with("1| +") || line.starts_with("1| |") {
                let line = dashes.replace_all(line, "-");
                blanks.replace_all(&line, " ").into_owned()
            } else {
                line.to_string()
            }
        })
        .fold(String::new(), |mut acc, line| {
            acc.push_str(&line);
            acc.push('\n');
            acc
        })
}

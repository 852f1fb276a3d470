//! String formats: which `format`s a CRD's validator checks (upstream `pkg/apiserver/validation/formats.go`,
//! `supportedFormats`; every other format, `int32` and `double` included, is stripped and never checked), and
//! how each is checked (kube-openapi's `strfmt` registry: `default.go`, `date.go`, `time.go`, `duration.go`,
//! `bson.go`, which lean on Go's `net`, `net/mail`, `net/url`, `time` and govalidator).

use std::net::Ipv6Addr;
use std::sync::OnceLock;

use regex::Regex;

/// The formats upstream keeps, after its normalisation that drops dashes (`date-time` is `datetime`).
const SUPPORTED: &[&str] = &[
    "bsonobjectid",
    "uri",
    "email",
    "hostname",
    "ipv4",
    "ipv6",
    "cidr",
    "mac",
    "uuid",
    "uuid3",
    "uuid4",
    "uuid5",
    "isbn",
    "isbn10",
    "isbn13",
    "creditcard",
    "ssn",
    "hexcolor",
    "rgbcolor",
    "byte",
    "password",
    "date",
    "duration",
    "datetime",
];

fn normalize(format: &str) -> String {
    format.replace('-', "")
}

/// Whether the validator checks `format` at all.
pub(super) fn supported(format: &str) -> bool {
    !format.is_empty() && SUPPORTED.contains(&normalize(format).as_str())
}

/// A regex compiled on first use; the patterns are constants, so compiling cannot fail.
macro_rules! rx {
    ($pat:expr) => {{
        static RX: OnceLock<Regex> = OnceLock::new();
        RX.get_or_init(|| Regex::new($pat).expect("constant pattern"))
    }};
}

/// Whether `data` is valid for the (supported) `format`.
pub(super) fn validates(format: &str, data: &str) -> bool {
    match normalize(format).as_str() {
        "bsonobjectid" => data.len() == 24 && data.bytes().all(|b| b.is_ascii_hexdigit()),
        "uri" => is_request_uri(data),
        "email" => is_email(data),
        "hostname" => is_hostname(data),
        "ipv4" => parse_ipv4_sloppy(data).is_some() || (data.contains('.') && data.parse::<Ipv6Addr>().is_ok()),
        "ipv6" => data.contains(':') && (data.parse::<Ipv6Addr>().is_ok()),
        "cidr" => is_cidr(data),
        "mac" => is_mac(data),
        "uuid" => rx!(r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$").is_match(data),
        "uuid3" => rx!(r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?3[0-9a-f]{3}-?[0-9a-f]{4}-?[0-9a-f]{12}$").is_match(data),
        "uuid4" => rx!(r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?4[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$").is_match(data),
        "uuid5" => rx!(r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?5[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$").is_match(data),
        "isbn" => is_isbn10(data) || is_isbn13(data),
        "isbn10" => is_isbn10(data),
        "isbn13" => is_isbn13(data),
        "creditcard" => is_credit_card(data),
        "ssn" => data.is_empty() || rx!(r"^\d{3}[- ]?\d{2}[- ]?\d{4}$").is_match(data),
        "hexcolor" => rx!(r"^#?([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$").is_match(data),
        "rgbcolor" => {
            let byte = r"(0|[1-9]\d?|1\d\d?|2[0-4]\d|25[0-5])";
            static RX: OnceLock<Regex> = OnceLock::new();
            RX.get_or_init(|| {
                Regex::new(&format!(r"^rgb\(\s*{byte}\s*,\s*{byte}\s*,\s*{byte}\s*\)$")).expect("constant")
            })
            .is_match(data)
        }
        "byte" => {
            rx!(r"^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=|[A-Za-z0-9+/]{4})$").is_match(data)
        }
        "password" => true,
        "date" => is_date(data),
        "duration" => is_duration(data),
        "datetime" => is_date_time(data),
        _ => false,
    }
}

/// `time.Parse("2006-01-02", s)`: four-digit year, two-digit month and day, a real calendar day.
fn is_date(s: &str) -> bool {
    let b = s.as_bytes();
    if b.len() != 10 || b[4] != b'-' || b[7] != b'-' {
        return false;
    }
    let num = |r: std::ops::Range<usize>| -> Option<u32> {
        let part = &s[r];
        part.bytes().all(|c| c.is_ascii_digit()).then(|| part.parse().ok()).flatten()
    };
    let (Some(y), Some(m), Some(d)) = (num(0..4), num(5..7), num(8..10)) else { return false };
    let leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    let days = match m {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return false,
    };
    (1..=days).contains(&d)
}

/// strfmt's `IsDateTime`: a date, a `t` (any case), then `hh:mm:ss[.frac](z|±hh:mm)` with hours at most 23
/// and minutes and seconds at most 59.
fn is_date_time(s: &str) -> bool {
    if s.len() < 4 {
        return false;
    }
    let lower = s.to_lowercase();
    let parts: Vec<&str> = lower.split('t').collect();
    if parts.len() < 2 || !is_date(parts[0]) {
        return false;
    }
    let re = rx!(r"^([0-9]{2}):([0-9]{2}):([0-9]{2})(.[0-9]+)?(z|([+-][0-9]{2}:[0-9]{2}))$");
    match re.captures(parts[1]) {
        Some(c) => &c[1] <= "23" && &c[2] <= "59" && &c[3] <= "59",
        None => false,
    }
}

/// strfmt's `ParseDuration`: Go's `time.ParseDuration`, else one or more `<digits><unit>` with the long
/// unit names (`3 days`, `1hr`).
fn is_duration(s: &str) -> bool {
    if is_go_duration(s) {
        return true;
    }
    let units: &[&[&str]] = &[
        &["ns", "nano"],
        &["us", "µs", "micro"],
        &["ms", "milli"],
        &["s", "sec"],
        &["m", "min"],
        &["h", "hr", "hour"],
        &["d", "day"],
        &["w", "wk", "week"],
    ];
    let mut ok = false;
    for c in rx!(r"((\d+)\s*([A-Za-zµ]+))").captures_iter(s) {
        if c[2].parse::<i64>().is_err() {
            return false;
        }
        let unit = c[3].trim().to_lowercase();
        for variants in units {
            let last = variants.len() - 1;
            for (i, v) in variants.iter().enumerate() {
                if (i == last && unit.starts_with(v)) || v.eq_ignore_ascii_case(&unit) {
                    ok = true;
                }
            }
        }
    }
    ok
}

/// Go's `time.ParseDuration` syntax: `[-+]` then one or more `<decimal><unit>`, or a bare `0`.
fn is_go_duration(s: &str) -> bool {
    let s = s.strip_prefix(['-', '+']).unwrap_or(s);
    if s == "0" {
        return true;
    }
    !s.is_empty() && rx!(r"^(?:(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:ns|us|µs|μs|ms|s|m|h))+$").is_match(s)
}

/// strfmt's `IsHostname`: its pattern, at most 255 bytes, labels of at most 63 bytes.
fn is_hostname(s: &str) -> bool {
    let re = rx!(
        r"^([a-zA-Z0-9\p{S}\p{L}]((-?[a-zA-Z0-9\p{S}\p{L}]{0,62})?)|([a-zA-Z0-9\p{S}\p{L}](([a-zA-Z0-9-\p{S}\p{L}]{0,61}[a-zA-Z0-9\p{S}\p{L}])?)(\.)){1,}([a-zA-Z\p{L}]){2,63})$"
    );
    re.is_match(s) && s.len() <= 255 && s.split('.').all(|p| p.len() <= 63)
}

/// `netutils.ParseIPSloppy` of an IPv4 address: four decimal octets, leading zeros tolerated.
fn parse_ipv4_sloppy(s: &str) -> Option<[u8; 4]> {
    let parts: Vec<&str> = s.split('.').collect();
    if parts.len() != 4 {
        return None;
    }
    let mut out = [0u8; 4];
    for (o, p) in out.iter_mut().zip(&parts) {
        if p.is_empty() || p.len() > 3 || !p.bytes().all(|c| c.is_ascii_digit()) {
            return None;
        }
        *o = p.parse::<u16>().ok().filter(|v| *v <= 255)? as u8;
    }
    Some(out)
}

/// `netutils.ParseCIDRSloppy`: an address and a prefix length within its family's bits.
fn is_cidr(s: &str) -> bool {
    let Some((ip, bits)) = s.split_once('/') else { return false };
    if bits.is_empty() || bits.len() > 3 || !bits.bytes().all(|c| c.is_ascii_digit()) {
        return false;
    }
    let bits: u32 = bits.parse().unwrap_or(u32::MAX);
    if parse_ipv4_sloppy(ip).is_some() {
        bits <= 32
    } else {
        ip.parse::<Ipv6Addr>().is_ok() && bits <= 128
    }
}

/// Go's `net.ParseMAC`: 6, 8 or 20 octets as `xx:xx..`, `xx-xx..` or `xxxx.xxxx..`.
fn is_mac(s: &str) -> bool {
    let hex = |p: &str, n: usize| p.len() == n && p.bytes().all(|c| c.is_ascii_hexdigit());
    let octets = if s.len() >= 14 && s.as_bytes()[4] == b'.' {
        let groups: Vec<&str> = s.split('.').collect();
        if !groups.iter().all(|g| hex(g, 4)) {
            return false;
        }
        groups.len() * 2
    } else if s.len() >= 14 && (s.as_bytes()[2] == b':' || s.as_bytes()[2] == b'-') {
        let sep = s.as_bytes()[2] as char;
        let groups: Vec<&str> = s.split(sep).collect();
        if !groups.iter().all(|g| hex(g, 2)) {
            return false;
        }
        groups.len()
    } else {
        return false;
    };
    matches!(octets, 6 | 8 | 20)
}

/// An approximation of `net/mail.ParseAddress` for bare addresses and `Name <addr>` forms: a non-empty
/// local part and a domain, without spaces in the address.
fn is_email(s: &str) -> bool {
    let addr = match (s.find('<'), s.ends_with('>')) {
        (Some(i), true) => &s[i + 1..s.len() - 1],
        _ => s.trim(),
    };
    let Some((local, domain)) = addr.rsplit_once('@') else { return false };
    let ok = |p: &str| !p.is_empty() && !p.chars().any(|c| c.is_whitespace() || c == '<' || c == '>' || c == '@');
    ok(local) && ok(domain) && !domain.starts_with('.') && !domain.ends_with('.') && !domain.contains("..")
}

/// An approximation of govalidator's `IsRequestURI` (`url.ParseRequestURI`): an absolute URI with a scheme,
/// or an absolute path; no spaces or control characters.
fn is_request_uri(s: &str) -> bool {
    if s.is_empty() || s.chars().any(|c| c.is_control() || c == ' ') {
        return false;
    }
    if s.starts_with('/') {
        return true;
    }
    match s.split_once(':') {
        Some((scheme, _)) => {
            let mut chars = scheme.chars();
            chars.next().is_some_and(|c| c.is_ascii_alphabetic())
                && chars.all(|c| c.is_ascii_alphanumeric() || c == '+' || c == '-' || c == '.')
        }
        None => false,
    }
}

/// govalidator's `IsISBN10`: ten characters after dropping spaces and dashes, the last possibly `X`, with
/// a weighted checksum divisible by 11.
fn is_isbn10(s: &str) -> bool {
    let d: Vec<char> = s.chars().filter(|c| *c != ' ' && *c != '-').collect();
    if d.len() != 10 || !d[..9].iter().all(char::is_ascii_digit) || !(d[9].is_ascii_digit() || d[9] == 'X') {
        return false;
    }
    let sum: u32 = d
        .iter()
        .enumerate()
        .map(|(i, c)| (i as u32 + 1) * if *c == 'X' { 10 } else { c.to_digit(10).unwrap_or(0) })
        .sum();
    sum.is_multiple_of(11)
}

/// govalidator's `IsISBN13`: thirteen digits after dropping spaces and dashes, with the alternating 1/3
/// weighted checksum.
fn is_isbn13(s: &str) -> bool {
    let d: Vec<u32> = s.chars().filter(|c| *c != ' ' && *c != '-').filter_map(|c| c.to_digit(10)).collect();
    let raw = s.chars().filter(|c| *c != ' ' && *c != '-').count();
    if d.len() != 13 || raw != 13 {
        return false;
    }
    let sum: u32 = d[..12].iter().enumerate().map(|(i, v)| if i % 2 == 0 { *v } else { v * 3 }).sum();
    (10 - sum % 10) % 10 == d[12]
}

/// govalidator's `IsCreditCard`: the digits (other characters dropped) match a known issuer's pattern and
/// pass the Luhn check.
fn is_credit_card(s: &str) -> bool {
    let digits: String = s.chars().filter(char::is_ascii_digit).collect();
    let re = rx!(
        r"^(?:4[0-9]{12}(?:[0-9]{3})?|5[1-5][0-9]{14}|(222[1-9]|22[3-9][0-9]|2[3-6][0-9]{2}|27[01][0-9]|2720)[0-9]{12}|6(?:011|5[0-9][0-9])[0-9]{12}|3[47][0-9]{13}|3(?:0[0-5]|[68][0-9])[0-9]{11}|(?:2131|1800|35\d{3})\d{11}|6[27][0-9]{14})$"
    );
    if !re.is_match(&digits) {
        return false;
    }
    let mut sum = 0;
    for (i, c) in digits.chars().rev().enumerate() {
        let mut v = c.to_digit(10).unwrap_or(0);
        if i % 2 == 1 {
            v *= 2;
            if v > 9 {
                v -= 9;
            }
        }
        sum += v;
    }
    sum.is_multiple_of(10)
}

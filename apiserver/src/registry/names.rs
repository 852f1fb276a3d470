//! Object names: the DNS-1123 checks kube applies to names (subdomain for most resources, label for
//! namespaces), with apimachinery's exact messages, and `generateName` expansion.

use rand::RngCore;

/// The longest DNS-1123 subdomain.
pub(crate) const DNS1123_SUBDOMAIN_MAX_LENGTH: usize = 253;
/// The longest DNS-1123 label.
pub(crate) const DNS1123_LABEL_MAX_LENGTH: usize = 63;

const SUBDOMAIN_MESSAGE: &str = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, \
'-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation \
is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";

const LABEL_MESSAGE: &str = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', \
and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is \
'[a-z0-9]([-a-z0-9]*[a-z0-9])?')";

const DNS1035_MESSAGE: &str = "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start \
with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for \
validation is '[a-z]([-a-z0-9]*[a-z0-9])?')";

/// How a resource checks its names: `(name, is_prefix) -> messages`, apimachinery's `ValidateNameFunc`.
pub(crate) type NameCheck = fn(&str, bool) -> Vec<String>;

/// Whether `s` is one DNS label's worth of characters: lower-case alphanumerics and '-', alphanumeric at
/// both ends.
fn is_label_shaped(s: &str) -> bool {
    let alnum = |c: u8| c.is_ascii_lowercase() || c.is_ascii_digit();
    let bytes = s.as_bytes();
    !bytes.is_empty()
        && alnum(bytes[0])
        && alnum(bytes[bytes.len() - 1])
        && bytes.iter().all(|&c| alnum(c) || c == b'-')
}

fn max_len(max: usize) -> String {
    format!("must be no more than {max} characters")
}

/// `IsDNS1123Label`.
pub(crate) fn dns1123_label(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if value.len() > DNS1123_LABEL_MAX_LENGTH {
        errs.push(max_len(DNS1123_LABEL_MAX_LENGTH));
    }
    if !is_label_shaped(value) {
        errs.push(LABEL_MESSAGE.to_string());
    }
    errs
}

/// `IsDNS1035Label`: a label that starts with a letter (service names, which become DNS names and
/// environment variable prefixes).
pub(crate) fn dns1035_label(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if value.len() > DNS1123_LABEL_MAX_LENGTH {
        errs.push(max_len(DNS1123_LABEL_MAX_LENGTH));
    }
    if !is_label_shaped(value) || !value.as_bytes()[0].is_ascii_lowercase() {
        errs.push(DNS1035_MESSAGE.to_string());
    }
    errs
}

/// `IsDNS1123Subdomain`.
pub(crate) fn dns1123_subdomain(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if value.len() > DNS1123_SUBDOMAIN_MAX_LENGTH {
        errs.push(max_len(DNS1123_SUBDOMAIN_MAX_LENGTH));
    }
    if !value.split('.').all(is_label_shaped) {
        errs.push(SUBDOMAIN_MESSAGE.to_string());
    }
    errs
}

/// `qualifiedNameFmt`: a label key's name part.
const QUALIFIED_NAME_REGEX: &str = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]";
const QUALIFIED_NAME_MESSAGE: &str = "must consist of alphanumeric characters, '-', '_' or '.', and must start and \
end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is \
'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
const LABEL_VALUE_MESSAGE: &str = "a valid label must be an empty string or consist of alphanumeric characters, \
'-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or \
'12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";
/// The longest name part of a qualified name, and the longest label value.
const QUALIFIED_NAME_MAX_LENGTH: usize = 63;

/// Whether `s` matches [`QUALIFIED_NAME_REGEX`].
fn is_qualified_name_part(s: &str) -> bool {
    let alnum = |c: u8| c.is_ascii_alphanumeric();
    let b = s.as_bytes();
    !b.is_empty()
        && alnum(b[0])
        && alnum(b[b.len() - 1])
        && b.iter().all(|&c| alnum(c) || matches!(c, b'-' | b'_' | b'.'))
}

/// `IsQualifiedName`: a label key or annotation key, an optional DNS subdomain prefix and '/' before a
/// name part.
pub(crate) fn qualified_name(value: &str) -> Vec<String> {
    let parts: Vec<&str> = value.split('/').collect();
    let mut errs = Vec::new();
    let name = match parts.as_slice() {
        [name] => *name,
        [prefix, name] => {
            if prefix.is_empty() {
                errs.push("prefix part must be non-empty".to_string());
            } else {
                errs.extend(dns1123_subdomain(prefix).into_iter().map(|m| format!("prefix part {m}")));
            }
            *name
        }
        _ => {
            debug_assert!(QUALIFIED_NAME_MESSAGE.contains(QUALIFIED_NAME_REGEX));
            return vec![format!(
                "a qualified name {QUALIFIED_NAME_MESSAGE} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
            )];
        }
    };
    if name.is_empty() {
        errs.push("name part must be non-empty".to_string());
    } else if name.len() > QUALIFIED_NAME_MAX_LENGTH {
        errs.push(format!("name part {}", max_len(QUALIFIED_NAME_MAX_LENGTH)));
    }
    if !is_qualified_name_part(name) {
        errs.push(format!("name part {QUALIFIED_NAME_MESSAGE}"));
    }
    errs
}

/// `IsValidLabelValue`: empty, or a qualified name part of at most 63 characters.
pub(crate) fn label_value(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if value.len() > QUALIFIED_NAME_MAX_LENGTH {
        errs.push(max_len(QUALIFIED_NAME_MAX_LENGTH));
    }
    if !value.is_empty() && !is_qualified_name_part(value) {
        errs.push(LABEL_VALUE_MESSAGE.to_string());
    }
    errs
}

/// A `generateName` prefix may end in '-' (the random suffix follows), so kube checks it with that dash
/// masked (`maskTrailingDash`).
fn mask_trailing_dash(name: &str, is_prefix: bool) -> String {
    if is_prefix && name.len() > 1 && name.ends_with('-') {
        format!("{}a", &name[..name.len() - 1])
    } else {
        name.to_string()
    }
}

/// `NameIsDNSSubdomain`: configmaps, pods and most resources.
pub fn name_is_dns_subdomain(name: &str, is_prefix: bool) -> Vec<String> {
    dns1123_subdomain(&mask_trailing_dash(name, is_prefix))
}

/// `NameIsDNSLabel`: namespaces (and the namespace of every namespaced object).
pub(crate) fn name_is_dns_label(name: &str, is_prefix: bool) -> Vec<String> {
    dns1123_label(&mask_trailing_dash(name, is_prefix))
}

/// `apimachineryvalidation.NameIsDNS1035Label`: services.
pub(crate) fn name_is_dns1035_label(name: &str, is_prefix: bool) -> Vec<String> {
    dns1035_label(&mask_trailing_dash(name, is_prefix))
}

/// `path.ValidatePathSegmentName`: what every name must satisfy to be a URL path segment and an etcd key
/// segment, checked for every resource after its own name check.
pub(crate) fn path_segment_name(name: &str, is_prefix: bool) -> Vec<String> {
    let mut errs = Vec::new();
    if !is_prefix {
        for bad in [".", ".."] {
            if name == bad {
                errs.push(format!("may not be '{bad}'"));
            }
        }
    }
    for bad in ["/", "%"] {
        if name.contains(bad) {
            errs.push(format!("may not contain '{bad}'"));
        }
    }
    errs
}

/// The longest prefix kept from a `generateName` (63 minus the suffix).
const GENERATED_PREFIX_MAX: usize = 58;
/// The length of the random suffix.
const GENERATED_SUFFIX_LEN: usize = 5;
/// The suffix alphabet of apimachinery's `utilrand.String`: no vowels (no words), no look-alikes.
const SUFFIX_ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";

/// `SimpleNameGenerator.GenerateName`: the prefix cut to 58 bytes, then 5 characters drawn from `rng`.
pub(crate) fn generate_name(prefix: &str, rng: &mut dyn RngCore) -> String {
    let mut cut = prefix.len().min(GENERATED_PREFIX_MAX);
    while !prefix.is_char_boundary(cut) {
        cut -= 1;
    }
    let mut name = prefix[..cut].to_string();
    for _ in 0..GENERATED_SUFFIX_LEN {
        let idx = (rng.next_u32() as usize) % SUFFIX_ALPHABET.len();
        name.push(SUFFIX_ALPHABET[idx] as char);
    }
    name
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dns_checks() {
        assert!(name_is_dns_subdomain("a.b-c", false).is_empty());
        assert_eq!(name_is_dns_subdomain("A", false), vec![SUBDOMAIN_MESSAGE.to_string()]);
        assert!(name_is_dns_subdomain("web-", true).is_empty());
        assert_eq!(name_is_dns_subdomain("web-", false).len(), 1);
        assert_eq!(name_is_dns_label("a.b", false), vec![LABEL_MESSAGE.to_string()]);
        assert_eq!(name_is_dns_label(&"a".repeat(64), false), vec![max_len(63)]);
        assert!(name_is_dns1035_label("web-1", false).is_empty());
        assert_eq!(name_is_dns1035_label("1web", false), vec![DNS1035_MESSAGE.to_string()]);
        assert!(name_is_dns1035_label("web-", true).is_empty());
        assert_eq!(path_segment_name("..", false), vec!["may not be '..'".to_string()]);
    }
}

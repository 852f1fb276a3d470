//! [`ResourceVersion`]: the etcd revision as Kubernetes parses and prints it.
//!
//! kube-apiserver's resourceVersion is opaque to clients but, for the etcd3 store, it is the decimal etcd
//! revision. Parsing follows its versioner: `""` and `"0"` both mean 0 ("no particular version"), anything
//! else must be an unsigned decimal integer, or the request fails with an invalid-value error whose text is
//! Go's `strconv.ParseUint` error (clients see it inside "invalid resource version: ...").

use std::fmt;

use crate::storage::error::StorageError;

/// An etcd revision as a Kubernetes resourceVersion. `ResourceVersion(0)` means "unset / any".
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ResourceVersion(pub u64);

impl ResourceVersion {
    /// Parses a resourceVersion string as kube-apiserver's etcd versioner does.
    pub(crate) fn parse(text: &str) -> Result<ResourceVersion, StorageError> {
        if text.is_empty() || text == "0" {
            return Ok(ResourceVersion(0));
        }
        // Go's ParseUint accepts ASCII digits only: no sign, no whitespace, no underscores in base 10.
        let invalid = |why: &str| StorageError::InvalidResourceVersion {
            value: text.to_string(),
            reason: format!("strconv.ParseUint: parsing {}: {why}", crate::go_text::quote(text)),
        };
        if !text.bytes().all(|b| b.is_ascii_digit()) {
            return Err(invalid("invalid syntax"));
        }
        text.parse::<u64>().map(ResourceVersion).map_err(|_| invalid("value out of range"))
    }

    /// The revision as etcd's signed revision field carries it. Revisions above `i64::MAX` cannot exist in
    /// etcd; they saturate, so that etcd answers with its future-revision error.
    pub(crate) fn revision(self) -> i64 {
        i64::try_from(self.0).unwrap_or(i64::MAX)
    }

    /// The resourceVersion of an etcd revision (negative revisions do not occur in responses).
    pub(crate) fn from_revision(revision: i64) -> ResourceVersion {
        ResourceVersion(u64::try_from(revision).unwrap_or(0))
    }
}

impl fmt::Display for ResourceVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_like_the_kubernetes_versioner() {
        let cases: &[(&str, Result<u64, &str>)] = &[
            ("", Ok(0)),
            ("0", Ok(0)),
            ("1", Ok(1)),
            ("007", Ok(7)),
            ("18446744073709551615", Ok(u64::MAX)),
            ("abc", Err(r#"strconv.ParseUint: parsing "abc": invalid syntax"#)),
            ("-1", Err(r#"strconv.ParseUint: parsing "-1": invalid syntax"#)),
            ("+5", Err(r#"strconv.ParseUint: parsing "+5": invalid syntax"#)),
            (" 5", Err(r#"strconv.ParseUint: parsing " 5": invalid syntax"#)),
            ("18446744073709551616", Err(r#"strconv.ParseUint: parsing "18446744073709551616": value out of range"#)),
        ];
        for (text, want) in cases {
            let got = ResourceVersion::parse(text);
            match (got, want) {
                (Ok(rv), Ok(n)) => assert_eq!(rv.0, *n, "{text:?}"),
                (Err(StorageError::InvalidResourceVersion { reason, .. }), Err(msg)) => assert_eq!(reason, *msg),
                (got, want) => panic!("{text:?}: got {got:?}, want {want:?}"),
            }
        }
    }

    #[test]
    fn invalid_text_reads_as_kube_apiserver_prints_it() {
        let err = ResourceVersion::parse("abc").unwrap_err();
        assert_eq!(
            err.to_string(),
            r#"resourceVersion: Invalid value: "abc": strconv.ParseUint: parsing "abc": invalid syntax"#
        );
    }
}

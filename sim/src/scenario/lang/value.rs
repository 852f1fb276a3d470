//! Values as a scenario writes them: a number or an expression in text ([`Value`]), and the four keys that
//! say which keys an operation covers ([`KeyFields`]). Nothing here judges a value; validation does.

use serde::{Deserialize, Serialize};
use toml::Spanned;

/// A number, or text: an expression (`">= rev_of(create) + 1"`) where a number is expected, plain text
/// where text is (a compared value).
#[derive(Clone, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(untagged)]
pub enum Value {
    Number(i64),
    Text(String),
}

/// For `skip_serializing_if`: a flag left at its default is not written back.
pub fn is_false(b: &bool) -> bool {
    !*b
}

/// Which keys an operation covers is said by four keys every key-range operation has: `key` alone is one
/// key; with `prefix = true`, every key under it; with `range_end`, `[key, range_end)`; with
/// `from_key = true`, every key from `key` on. They are spelled out in each table (no serde `flatten`, which
/// would lose toml's error locations) and read through this view.
pub struct KeyFields<'a> {
    pub key: &'a Spanned<String>,
    pub range_end: Option<&'a Spanned<String>>,
    pub prefix: bool,
    pub from_key: bool,
}

/// Gives a table with `key`, `range_end`, `prefix` and `from_key` its [`KeyFields`] view.
#[macro_export]
macro_rules! key_fields {
    ($($t:ty),*) => {$(
        impl $t {
            pub fn keys(&self) -> $crate::scenario::lang::value::KeyFields<'_> {
                $crate::scenario::lang::value::KeyFields {
                    key: &self.key,
                    range_end: self.range_end.as_ref(),
                    prefix: self.prefix,
                    from_key: self.from_key,
                }
            }
        }
    )*};
}

//! Bug switches: each puts back one historical bug, in the component where the bug lived, so that a
//! scenario can show the race failing with the switch on and passing with it off.
//!
//! A component declares its switches once with [`bugs!`]: the enum, each switch's stable name, the upstream
//! issue it reproduces and one sentence on what goes wrong. A [`BugSet`] of them is handed to the
//! component through its configuration (never a global), and the code at the bug asks
//! [`BugSet::has`]. The harness parses names into sets ([`BugSet::parse`]) and lists every switch of every
//! component from the same declarations, so a switch's name, issue and text are written in one place.

use std::collections::BTreeSet;
use std::fmt;

/// A component's set of bug switches.
pub trait Bug: Copy + Ord + fmt::Debug + Send + Sync + 'static {
    /// Every switch, in declaration order (the order listings and error messages use).
    const ALL: &'static [Self];

    /// The stable name scenarios and the CLI use (`restore-lowers-watchers`).
    fn name(self) -> &'static str;

    /// The upstream issue the switch reproduces (`etcd #15271`).
    fn issue(self) -> &'static str;

    /// What goes wrong with the switch on, in one sentence.
    fn what(self) -> &'static str;
}

/// Declares a component's bug switches: the enum, `ALL`, and each switch's name, upstream issue and
/// description, with the [`Bug`], `Display` and `FromStr` impls.
///
/// ```
/// kubesim_failpoints::bugs! {
///     /// The example component's historical bugs.
///     pub enum Bug {
///         /// Forgets to sync.
///         SkipSync => ("skip-sync", "etcd #14370", "acknowledges a write before it is durable"),
///     }
/// }
/// assert_eq!("skip-sync".parse::<Bug>(), Ok(Bug::SkipSync));
/// assert_eq!(kubesim_failpoints::Bug::issue(Bug::SkipSync), "etcd #14370");
/// ```
#[macro_export]
macro_rules! bugs {
    (
        $(#[$meta:meta])*
        $vis:vis enum $name:ident {
            $($(#[$vmeta:meta])* $variant:ident => ($text:literal, $issue:literal, $what:literal),)+
        }
    ) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
        $vis enum $name {
            $($(#[$vmeta])* $variant,)+
        }

        impl $crate::Bug for $name {
            const ALL: &'static [$name] = &[$($name::$variant,)+];

            fn name(self) -> &'static str {
                match self {
                    $($name::$variant => $text,)+
                }
            }

            fn issue(self) -> &'static str {
                match self {
                    $($name::$variant => $issue,)+
                }
            }

            fn what(self) -> &'static str {
                match self {
                    $($name::$variant => $what,)+
                }
            }
        }

        impl ::std::fmt::Display for $name {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                f.write_str($crate::Bug::name(*self))
            }
        }

        impl ::std::str::FromStr for $name {
            type Err = $crate::UnknownBug;

            fn from_str(s: &str) -> Result<$name, $crate::UnknownBug> {
                <$name as $crate::Bug>::ALL
                    .iter()
                    .copied()
                    .find(|b| $crate::Bug::name(*b) == s)
                    .ok_or_else(|| $crate::UnknownBug {
                        name: s.to_string(),
                        known: <$name as $crate::Bug>::ALL.iter().map(|b| $crate::Bug::name(*b)).collect(),
                    })
            }
        }
    };
}

/// A bug switch name that names no switch of the component asked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownBug {
    pub name: String,
    /// The names the component does define.
    pub known: Vec<&'static str>,
}

impl fmt::Display for UnknownBug {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let known: Vec<String> = self.known.iter().map(|k| format!("{k:?}")).collect();
        write!(f, "unknown bug {:?}; expected one of {}", self.name, known.join(", "))
    }
}

impl std::error::Error for UnknownBug {}

/// The switches turned on for one component; empty (the fixed behaviour everywhere) by default.
#[derive(Clone, PartialEq, Eq)]
pub struct BugSet<B: Bug> {
    on: BTreeSet<B>,
}

impl<B: Bug> Default for BugSet<B> {
    fn default() -> BugSet<B> {
        BugSet { on: BTreeSet::new() }
    }
}

impl<B: Bug> BugSet<B> {
    /// No switch on.
    pub fn none() -> BugSet<B> {
        BugSet::default()
    }

    /// Exactly `bugs` on.
    pub fn of(bugs: &[B]) -> BugSet<B> {
        BugSet { on: bugs.iter().copied().collect() }
    }

    /// Whether `bug` is on: the question the code at the bug asks.
    pub fn has(&self, bug: B) -> bool {
        self.on.contains(&bug)
    }

    pub fn insert(&mut self, bug: B) {
        self.on.insert(bug);
    }

    pub fn is_empty(&self) -> bool {
        self.on.is_empty()
    }

    /// The switches on, in declaration order.
    pub fn iter(&self) -> impl Iterator<Item = B> + '_ {
        self.on.iter().copied()
    }
}

impl<B: Bug> fmt::Debug for BugSet<B> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_set().entries(self.on.iter().map(|b| b.name())).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    crate::bugs! {
        /// Two switches of a made-up component.
        enum Example {
            First => ("first", "kubernetes #1", "does the first wrong thing"),
            Second => ("second", "etcd #2", "does the second wrong thing"),
        }
    }

    #[test]
    fn switches_parse_and_list_from_their_one_declaration() {
        assert_eq!("second".parse::<Example>(), Ok(Example::Second));
        let err = "third".parse::<Example>().unwrap_err();
        assert_eq!(err.to_string(), "unknown bug \"third\"; expected one of \"first\", \"second\"");
        assert_eq!(Example::ALL, &[Example::First, Example::Second]);
        assert_eq!(Example::First.issue(), "kubernetes #1");
        let mut set = BugSet::none();
        assert!(!set.has(Example::First));
        set.insert(Example::Second);
        assert!(set.has(Example::Second) && !set.has(Example::First));
        assert_eq!(format!("{set:?}"), "{\"second\"}");
    }
}

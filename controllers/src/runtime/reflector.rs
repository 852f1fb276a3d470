//! client-go's reflector, as a sans-IO state machine (`tools/cache/reflector.go`): which resourceVersion the
//! next list asks for, how each list and watch event moves the last synced resourceVersion, and what an
//! error makes it do next. The shell ([`super::informer`]) sends the requests and feeds the answers in;
//! this core decides, so that its rules are tested on their own and the same seed makes the same choices.
//!
//! The rules (client-go 1.32):
//! - the first list asks for resourceVersion "0" (whatever the cache has, `Any` semantics); every later
//!   list asks for the last synced resourceVersion (`NotOlderThan`, kubernetes PR #83520), unless that
//!   resourceVersion was found unavailable (a 410 `Expired`/`Gone`, or a 504 whose cause is
//!   `ResourceVersionTooLarge`), in which case it asks for "" (a consistent read);
//! - a watch starts from the last synced resourceVersion, with bookmarks; every event moves it;
//! - a watch that ends cleanly is reopened from there; one that fails with 410 forces a relist (from "");
//!   any other failure backs off and reopens;
//! - with streaming lists (client-go's `WatchListClient` feature), a (re)list is a watch with
//!   `sendInitialEvents=true`: its initial events stand for the list, and the `k8s.io/initial-events-end`
//!   bookmark's resourceVersion is the list's. It asks for "" the first time and after a 410 or a
//!   too-large resourceVersion (which it retries at once); any other failure falls back to one ordinary
//!   list, so that the informer makes progress against a server that cannot stream.
//!
//! [`RelistFrom::Zero`] is the bug switch of kubernetes #59848 (a restarted informer lists from "0" and
//! may be served a lagging cache's past): the fix is to list consistently (streaming lists, `""`).

kubesim_failpoints::bugs! {
    /// A historical client-go reflector bug kubesim's informers can put back.
    pub enum Bug {
        /// A (re)started reflector's first list asks for "0" ([`RelistFrom::Zero`]) instead of reading
        /// consistently.
        ListAtRvZero => (
            "list-at-rv-zero",
            "kubernetes #59848",
            "a (re)started informer's first list asks for resourceVersion \"0\", which any apiserver may answer from its watch cache however far behind, so an informer that restarts can believe an older state than it had already seen"
        ),
    }
}

/// The reflector's switches on.
pub type Bugs = kubesim_failpoints::BugSet<Bug>;

impl RelistFrom {
    /// Where a reflector with `bugs` reads its first list from: consistently, unless the switch puts back
    /// client-go's "0".
    pub fn with(bugs: &Bugs) -> RelistFrom {
        if bugs.has(Bug::ListAtRvZero) {
            RelistFrom::Zero
        } else {
            RelistFrom::Consistent
        }
    }
}

/// What a list or a watch asks for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Request {
    /// `GET ...?resourceVersion=RV` (paged by the shell): "0", "" or a synced resourceVersion.
    List { resource_version: String },
    /// `GET ...?watch=true&resourceVersion=RV&allowWatchBookmarks=true`.
    Watch { resource_version: String },
    /// A streaming list: `GET ...?watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&
    /// resourceVersion=RV&allowWatchBookmarks=true`, whose watch goes on once the initial events end.
    WatchList { resource_version: String },
}

/// How a watch or a list ended, as the reflector tells errors apart.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Failure {
    /// 410 `Expired` or `Gone`: the resourceVersion is too old.
    Expired,
    /// 504 with cause `ResourceVersionTooLarge`: the server's cache is behind the resourceVersion asked.
    TooLarge,
    /// Anything else (a transport error, a 5xx, a 429).
    Other,
}

/// Where the first list of a (re)started reflector reads from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RelistFrom {
    /// "0", client-go's choice: fast, served by any cache, possibly from the past.
    Zero,
    /// "", a consistent read (what `WatchListClient` and consistent lists give).
    Consistent,
}

/// The reflector's state.
#[derive(Clone, Debug)]
pub struct Reflector {
    /// The resourceVersion of the last list or event the reflector processed ("" before the first).
    last_synced: String,
    /// Whether `last_synced` was found unavailable, so that the next list reads consistently.
    unavailable: bool,
    first_list: RelistFrom,
    /// Whether a list is due (at the start, and after a watch expired).
    needs_list: bool,
    /// Whether lists are streamed (watch-lists) rather than read page by page.
    streaming: bool,
    /// Whether the last watch-list failed in a way that sends this round to an ordinary list.
    fallback_to_list: bool,
}

impl Reflector {
    pub fn new(first_list: RelistFrom) -> Reflector {
        Reflector {
            last_synced: String::new(),
            unavailable: false,
            first_list,
            needs_list: true,
            streaming: false,
            fallback_to_list: false,
        }
    }

    /// A reflector whose lists are streamed (client-go's `WatchListClient`).
    pub fn streaming(first_list: RelistFrom) -> Reflector {
        Reflector { streaming: true, ..Reflector::new(first_list) }
    }

    /// The request to make next.
    pub fn next(&self) -> Request {
        if self.needs_list && self.streaming && !self.fallback_to_list {
            // `watchList`: the last synced resourceVersion unless it is unavailable; "" at first, which the
            // server answers consistently. client-go never streams from "0".
            let resource_version = if self.unavailable { String::new() } else { self.last_synced.clone() };
            return Request::WatchList { resource_version };
        }
        if self.needs_list {
            return Request::List { resource_version: self.relist_resource_version() };
        }
        Request::Watch { resource_version: self.last_synced.clone() }
    }

    /// `relistResourceVersion`.
    fn relist_resource_version(&self) -> String {
        if self.unavailable {
            return String::new();
        }
        if self.last_synced.is_empty() {
            return match self.first_list {
                RelistFrom::Zero => "0".into(),
                RelistFrom::Consistent => String::new(),
            };
        }
        self.last_synced.clone()
    }

    /// A list succeeded at `resource_version`: the store is replaced, and a watch from there follows.
    /// A streaming list's initial events ended at its bookmark's resourceVersion counts the same way.
    pub fn listed(&mut self, resource_version: &str) {
        self.last_synced = resource_version.to_string();
        self.unavailable = false;
        self.needs_list = false;
        self.fallback_to_list = false;
    }

    /// A streaming list ended before its initial events did: a 410 or a too-large resourceVersion is
    /// retried from "" (`isErrorRetriableWithSideEffectsFn`); anything else sends this round to an ordinary
    /// list.
    pub fn watch_list_failed(&mut self, failure: &Failure) {
        match failure {
            Failure::Expired | Failure::TooLarge => self.unavailable = true,
            Failure::Other => self.fallback_to_list = true,
        }
    }

    /// A watch event (or bookmark) at `resource_version` was processed.
    pub fn observed(&mut self, resource_version: &str) {
        if !resource_version.is_empty() {
            self.last_synced = resource_version.to_string();
        }
    }

    /// A list failed.
    pub fn list_failed(&mut self, failure: &Failure) {
        if matches!(failure, Failure::Expired | Failure::TooLarge) {
            self.unavailable = true;
        }
    }

    /// A watch ended: cleanly (`None`, it is reopened from the last synced resourceVersion) or with a
    /// failure (410 forces a relist).
    pub fn watch_ended(&mut self, failure: Option<&Failure>) {
        match failure {
            Some(Failure::Expired) => {
                self.unavailable = true;
                self.needs_list = true;
                self.fallback_to_list = false;
            }
            Some(Failure::TooLarge) => {
                self.needs_list = true;
                self.fallback_to_list = false;
            }
            Some(Failure::Other) | None => {}
        }
    }

    /// The process restarted (a controller crash): everything is forgotten, as a new reflector starts.
    pub fn restart(&mut self) {
        *self = Reflector { streaming: self.streaming, ..Reflector::new(self.first_list) };
    }

    pub fn last_synced(&self) -> &str {
        &self.last_synced
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(rv: &str) -> Request {
        Request::List { resource_version: rv.into() }
    }

    fn watch(rv: &str) -> Request {
        Request::Watch { resource_version: rv.into() }
    }

    #[test]
    fn lists_from_zero_then_watches_from_the_list() {
        let mut r = Reflector::new(RelistFrom::Zero);
        assert_eq!(r.next(), list("0"));
        r.listed("10");
        assert_eq!(r.next(), watch("10"));
        r.observed("12");
        r.watch_ended(None);
        assert_eq!(r.next(), watch("12"), "a clean end reopens from the last event");
    }

    #[test]
    fn an_expired_watch_relists_consistently_and_a_too_large_list_too() {
        let mut r = Reflector::new(RelistFrom::Zero);
        r.listed("10");
        r.watch_ended(Some(&Failure::Expired));
        assert_eq!(r.next(), list(""), "after 410 the last synced resourceVersion is unavailable");
        r.listed("20");
        r.observed("25");
        r.watch_ended(Some(&Failure::TooLarge));
        assert_eq!(r.next(), list("25"), "a relist asks for the last synced resourceVersion");
        r.list_failed(&Failure::TooLarge);
        assert_eq!(r.next(), list(""));
    }

    fn watch_list(rv: &str) -> Request {
        Request::WatchList { resource_version: rv.into() }
    }

    #[test]
    fn a_streaming_reflector_lists_by_watch_list_and_falls_back_on_other_errors() {
        let mut r = Reflector::streaming(RelistFrom::Zero);
        assert_eq!(r.next(), watch_list(""), "the first streaming list reads consistently, never from \"0\"");
        r.watch_list_failed(&Failure::Other);
        assert_eq!(r.next(), list("0"), "an unexpected failure falls back to one ordinary list");
        r.listed("10");
        assert_eq!(r.next(), watch("10"));
        r.watch_ended(Some(&Failure::Expired));
        assert_eq!(r.next(), watch_list(""), "after 410 the next round streams again, consistently");
        r.watch_list_failed(&Failure::TooLarge);
        assert_eq!(r.next(), watch_list(""), "a too-large resourceVersion is retried as a stream");
        r.listed("20");
        r.observed("24");
        r.watch_ended(Some(&Failure::TooLarge));
        assert_eq!(r.next(), watch_list("24"), "a relist streams from the last synced resourceVersion");
        r.restart();
        assert_eq!(r.next(), watch_list(""), "a restarted reflector still streams");
    }

    #[test]
    fn a_restart_forgets_and_lists_from_where_the_switch_says() {
        let mut zero = Reflector::new(RelistFrom::Zero);
        zero.listed("30");
        zero.restart();
        assert_eq!(zero.next(), list("0"), "kubernetes #59848: the restarted informer may read the past");
        let mut fixed = Reflector::new(RelistFrom::Consistent);
        fixed.listed("30");
        fixed.restart();
        assert_eq!(fixed.next(), list(""));
    }
}

//! The Cacher's bug switches shown on its shared state and its watchers directly, without etcd, timers or
//! sleeps: each test applies events, starts watches and dispatches bookmarks in the order the Cacher's tasks
//! could, and reads what a watcher's client receives until its stream ends (the state dropped). The
//! switches that need etcd or the Cacher's tasks are shown in `apiserver/tests/bug_switches.rs`.

use serde_json::json;
use tokio::sync::mpsc;
use tokio::time::Instant;

use super::cache_watcher::CacheWatcher;
use super::config::CacherConfig;
use super::state::{CacherState, Input, Start, WATCHER_INPUT_CAPACITY};
use crate::bug::{Bug, Bugs};
use crate::storage::object::{Object as _, SharedObject};
use crate::storage::options::SelectionPredicate;
use crate::storage::resource_version::ResourceVersion;
use crate::storage::status::GroupResource;
use crate::storage::watch::{CachedEvent, EventKind, WatchEvent};

fn config(bugs: &[Bug]) -> CacherConfig {
    let mut config = CacherConfig::new("/pods", GroupResource::new("", "pods"));
    config.bugs = Bugs::of(bugs);
    config
}

fn event(kind: EventKind, name: &str, rv: u64) -> CachedEvent {
    CachedEvent {
        kind,
        key: format!("/pods/ns/{name}"),
        object: json!({"metadata": {"name": name, "resourceVersion": rv.to_string()}}).into(),
        prev_object: None,
        resource_version: ResourceVersion(rv),
    }
}

/// A client watch of every pod, started on `state` in generation 1 as `Cacher::watch_objects` starts one
/// (its watcher task spawned), and the client's end of it.
fn watch(state: &mut CacherState, config: &CacherConfig, start: Start) -> mpsc::Receiver<WatchEvent> {
    let (input_tx, input) = mpsc::channel(WATCHER_INPUT_CAPACITY);
    let started = state.start_watch(1, start, input_tx, None).unwrap().expect("registered on generation 1");
    let (out, events) = mpsc::channel(100);
    let watcher = CacheWatcher {
        key_prefix: "/pods/".into(),
        predicate: SelectionPredicate::default(),
        allow_bookmarks: true,
        position: started.position,
        advance_past_initial: !config.bugs.has(Bug::WatcherResendsInitialEvents),
        end_on_bookmark: None,
        out,
        failpoints: config.failpoints.clone(),
    };
    tokio::spawn(watcher.run(started.initial, None, input));
    events
}

fn rv_of(obj: &SharedObject) -> u64 {
    obj.value().resource_version().parse().expect("objects carry their resourceVersion")
}

/// Everything the client receives until the stream ends, as `(type, resourceVersion)`.
async fn received(mut events: mpsc::Receiver<WatchEvent>) -> Vec<(&'static str, u64)> {
    let mut got = Vec::new();
    while let Some(event) = events.recv().await {
        got.push(match event {
            WatchEvent::Added(obj) => ("ADDED", rv_of(&obj)),
            WatchEvent::Modified(obj) => ("MODIFIED", rv_of(&obj)),
            WatchEvent::Deleted(obj) => ("DELETED", rv_of(&obj)),
            WatchEvent::Bookmark(rv) => ("BOOKMARK", rv.0),
            WatchEvent::InitialEventsEnd(rv) => ("END", rv.0),
            WatchEvent::Error(status) => panic!("unexpected ERROR event {status:?}"),
        });
    }
    got
}

/// `watcher-resends-initial-events` (kubernetes PR #73845): the reflector applies a@11, a watch from 10 (or
/// from "0") starts, and only then is a@11 dispatched. Fixed, applying and dispatching are one step, so the
/// watch gets a@11 once, from its initial events; with the switch on it gets a@11 again from the
/// dispatcher, and the watch goes back from 11 to 11 before it moves on.
#[tokio::test]
async fn watcher_resends_initial_events_switch() {
    let cases: [(Start, bool, &[(&str, u64)]); 4] = [
        (Start::After(ResourceVersion(10)), false, &[("ADDED", 11), ("MODIFIED", 12)]),
        (Start::After(ResourceVersion(10)), true, &[("ADDED", 11), ("ADDED", 11), ("MODIFIED", 12)]),
        (Start::After(ResourceVersion(0)), false, &[("ADDED", 11), ("MODIFIED", 12)]),
        (Start::After(ResourceVersion(0)), true, &[("ADDED", 11), ("ADDED", 11), ("MODIFIED", 12)]),
    ];
    for (start, bug, expected) in cases {
        let config = config(if bug { &[Bug::WatcherResendsInitialEvents] } else { &[] });
        let mut state = CacherState::new(&config, Instant::now());
        state.replace(vec![], ResourceVersion(10));
        state.apply(event(EventKind::Added, "a", 11)).unwrap();
        let events = watch(&mut state, &config, start);
        state.dispatch_undispatched();
        state.apply(event(EventKind::Modified, "a", 12)).unwrap();
        state.dispatch_undispatched();
        drop(state);
        assert_eq!(received(events).await, expected, "{start:?}, switch {bug}");
    }
}

/// The watcher's half of the same fix on its own: fed an event its initial events already covered, the
/// fixed watcher drops it, while with the switch on it forwards it.
#[tokio::test]
async fn a_watcher_drops_what_its_initial_events_covered_unless_switched() {
    for bug in [false, true] {
        let (input_tx, input) = mpsc::channel(WATCHER_INPUT_CAPACITY);
        let (out, events) = mpsc::channel(100);
        let watcher = CacheWatcher {
            key_prefix: "/pods/".into(),
            predicate: SelectionPredicate::default(),
            allow_bookmarks: true,
            position: ResourceVersion(10),
            advance_past_initial: !bug,
            end_on_bookmark: None,
            out,
            failpoints: crate::failpoint::Failpoints::new(),
        };
        let initial = vec![event(EventKind::Added, "a", 11)];
        input_tx.send(Input::Event(event(EventKind::Added, "a", 11).into())).await.unwrap();
        drop(input_tx);
        watcher.run(initial, None, input).await;
        let expected: &[(&str, u64)] = if bug { &[("ADDED", 11), ("ADDED", 11)] } else { &[("ADDED", 11)] };
        assert_eq!(received(events).await, expected, "switch {bug}");
    }
}

/// `bookmarks-from-zero-after-init` (kubernetes #125288): right after the first list at 10 the resource is
/// idle. Fixed, a watcher due a bookmark gets one at 10; with the switch on the dispatcher's last processed
/// resourceVersion is still 0 and nobody gets a bookmark, until an event (or a progress notification) moves
/// it.
#[test]
fn bookmarks_from_zero_after_init_switch() {
    let frequency = std::time::Duration::from_secs(60);
    for bug in [false, true] {
        let config = config(if bug { &[Bug::BookmarksFromZeroAfterInit] } else { &[] });
        let now = Instant::now();
        let mut state = CacherState::new(&config, now);
        state.replace(vec![], ResourceVersion(10));
        let (input_tx, mut input) = mpsc::channel(WATCHER_INPUT_CAPACITY);
        state.start_watch(1, Start::After(ResourceVersion(10)), input_tx, Some(now)).unwrap().unwrap();
        state.dispatch_bookmarks(now, frequency);
        let idle = input.try_recv().ok().map(|i| format!("{i:?}"));
        assert_eq!(idle, (!bug).then(|| "Bookmark(ResourceVersion(10))".to_string()), "switch {bug}: idle");

        state.progress(ResourceVersion(12));
        state.dispatch_bookmarks(now + frequency, frequency);
        let moved = input.try_recv().ok().map(|i| format!("{i:?}"));
        assert_eq!(moved.as_deref(), Some("Bookmark(ResourceVersion(12))"), "switch {bug}: after progress");
    }
}

/// `before-bookmark-send`: dropped once, the watcher skips that bookmark and forwards the next; as an error,
/// it ends the watch there.
#[tokio::test]
async fn the_bookmark_failpoint_skips_one_bookmark_or_ends_the_watch() {
    use crate::failpoint::{Action, Arm, Failpoints, Point};
    for (action, expected) in [(Action::Drop, vec![("BOOKMARK", 13)]), (Action::Error, vec![])] {
        let (input_tx, input) = mpsc::channel(WATCHER_INPUT_CAPACITY);
        let (out, events) = mpsc::channel(100);
        let failpoints = Failpoints::new();
        failpoints.arm(Point::BeforeBookmarkSend, Arm { action: action.clone(), skip: 0, times: Some(1) });
        let watcher = CacheWatcher {
            key_prefix: "/pods/".into(),
            predicate: SelectionPredicate::default(),
            allow_bookmarks: true,
            position: ResourceVersion(10),
            advance_past_initial: true,
            end_on_bookmark: None,
            out,
            failpoints,
        };
        input_tx.send(Input::Bookmark(ResourceVersion(12))).await.unwrap();
        input_tx.send(Input::Bookmark(ResourceVersion(13))).await.unwrap();
        drop(input_tx);
        watcher.run(Vec::new(), None, input).await;
        let expected: Vec<(&str, u64)> = expected;
        assert_eq!(received(events).await, expected, "{action:?}");
    }
}

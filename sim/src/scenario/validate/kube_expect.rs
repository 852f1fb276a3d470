//! What a `kube` step expects: the HTTP code, a refusal's reason and message, values at JSON pointers in
//! the answer, the answer's resourceVersion, a list's names, and a watch's events, each checked against
//! what the step's verb can answer.

use toml::Spanned;

use super::names::Names;
use super::{Result, Source};
use crate::scenario::plan::{KubeExpect, KubePlan, WatchEventExpect};
use crate::scenario::syntax::{self, Verb};

/// The event types a watch can deliver, as the API spells them.
const EVENT_TYPES: [&str; 5] = ["ADDED", "MODIFIED", "DELETED", "BOOKMARK", "ERROR"];

/// The expectation keys a `kube` step of `verb` can meet.
pub(super) fn allowed(verb: Verb) -> &'static [&'static str] {
    match verb {
        Verb::List => &["outcome", "code", "reason", "message", "fields", "rv", "items"],
        Verb::Watch => &["outcome", "code", "reason", "message", "watch_events"],
        Verb::Deletecollection => &["outcome", "code", "reason", "message", "fields", "items"],
        _ => &["outcome", "code", "reason", "message", "fields", "rv"],
    }
}

/// A `kube` step's expectations.
pub(super) fn kube_expect(src: &Source, names: &Names, plan: &KubePlan, r: &syntax::Expect) -> Result<KubeExpect> {
    let fields = match &r.fields {
        None => Vec::new(),
        Some(map) => {
            let mut out = Vec::new();
            for (pointer, value) in map.get_ref() {
                if !pointer.starts_with('/') {
                    let msg = format!("`fields` key {pointer:?} is not a JSON pointer; expected one starting with `/`");
                    return Err(src.err(map.span(), msg));
                }
                let value = serde_json::to_value(value).map_err(|e| src.err(map.span(), e.to_string()))?;
                out.push((pointer.clone(), value));
            }
            out
        }
    };
    let watch_events = match &r.watch_events {
        None => None,
        Some(list) => Some(list.get_ref().iter().map(|e| watch_event(src, names, plan, e)).collect::<Result<_>>()?),
    };
    Ok(KubeExpect {
        code: r.code.as_ref().map(|c| c.get_ref().0.clone()),
        reason: r.reason.as_ref().map(|s| s.get_ref().clone()),
        message: r.message.as_ref().map(|s| s.get_ref().clone()),
        fields,
        rv: r.rv.as_ref().map(|v| names.expr(src, v)).transpose()?,
        items: r.items.as_ref().map(|i| i.get_ref().clone()),
        watch_events,
    })
}

/// Whether a `kube` step's expectations say it must be refused: only codes of 300 or more, or a reason.
pub(super) fn expects_refusal(r: &syntax::Expect) -> bool {
    r.code.as_ref().is_some_and(|c| c.get_ref().0.iter().all(|c| *c >= 300)) || r.reason.is_some()
}

/// Whether they accept a refusal as well as success (`code = [200, 409]`): then neither outcome is implied.
pub(super) fn accepts_both(r: &syntax::Expect) -> bool {
    r.code.as_ref().is_some_and(|c| {
        let codes = &c.get_ref().0;
        codes.iter().any(|c| *c < 300) && codes.iter().any(|c| *c >= 300)
    })
}

fn watch_event(
    src: &Source,
    names: &Names,
    plan: &KubePlan,
    e: &Spanned<syntax::ExpectWatchEvent>,
) -> Result<WatchEventExpect> {
    let x = e.get_ref();
    let kind = x.kind.get_ref().as_str();
    if !EVENT_TYPES.contains(&kind) {
        return Err(src.err(x.kind.span(), format!("event type {kind:?}; expected one of {}", EVENT_TYPES.join(", "))));
    }
    let object_event = matches!(kind, "ADDED" | "MODIFIED" | "DELETED");
    if x.name.is_some() && !object_event {
        return Err(src.err(e.span(), format!("a {kind} event names no object: drop `name`")));
    }
    if x.initial_events_end.is_some() && kind != "BOOKMARK" {
        return Err(src.err(e.span(), "`initial_events_end` is a bookmark's"));
    }
    if x.initial_events_end == Some(true) && !plan.send_initial_events {
        return Err(
            src.err(e.span(), "only a watch with `send_initial_events = true` gets the initial-events-end bookmark")
        );
    }
    if kind == "BOOKMARK" && !plan.allow_watch_bookmarks {
        return Err(src.err(e.span(), "bookmarks come only to a watch with `allow_watch_bookmarks = true`"));
    }
    if x.code.is_some() && kind != "ERROR" {
        return Err(src.err(e.span(), "`code` is an ERROR event's"));
    }
    Ok(WatchEventExpect {
        kind: kind.to_string(),
        name: x.name.clone(),
        rv: x.rv.as_ref().map(|v| names.expr(src, v)).transpose()?,
        initial_events_end: x.initial_events_end,
        code: x.code,
    })
}

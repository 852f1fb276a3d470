//! Judges what a request to an apiserver got ([`answer`]: a `kube` step's, or a controller's last attempt):
//! the outcome, the HTTP code, a refusal's reason and message, values at JSON pointers and pointers that
//! must hold something or nothing, the answer's resourceVersion and a list's names in order; and a watch's
//! events side by side with the expected ones ([`watch_events`]).

use serde_json::Value;

use crate::scenario::lang::expectations::{Expectations, WatchEventExpect};
use crate::scenario::steps::judging::{shown, StepJudge};
use crate::scenario::steps::observed::{KubeEvent, KubeResult};

/// An HTTP answer against the expectations of the step that got it.
pub fn answer(j: &mut StepJudge<'_>, result: &KubeResult, e: &Expectations) {
    let got = match &result.answer {
        Ok((code, body)) => answer_summary(*code, body),
        Err(why) => format!("no answer: {why}"),
    };
    if let Some(want) = e.outcome {
        let (ok, error, unknown) = match &result.answer {
            Ok((code, _)) if (200..300).contains(code) => (true, false, false),
            // Like an etcd availability error, a 429 or a 5xx leaves the outcome as unknown as silence
            // does: the apiserver may have written before it answered (a timeout after the etcd write).
            Ok((code, _)) if *code == 429 || *code >= 500 => (false, true, true),
            Ok(_) => (false, true, false),
            Err(_) => (false, false, true),
        };
        j.outcome(want, &got, ok, unknown, error, false);
    }
    let k = &e.kube;
    let Ok((code, body)) = &result.answer else {
        let wants_answer = k.code.is_some()
            || k.reason.is_some()
            || k.message.is_some()
            || k.message_contains.is_some()
            || !k.fields.is_empty()
            || !k.non_empty.is_empty()
            || !k.absent.is_empty()
            || k.rv.is_some()
            || k.items.is_some();
        if wants_answer {
            j.fail("", "an answer", got);
        }
        return;
    };
    if let Some(want) = &k.code {
        let shown: Vec<String> = want.iter().map(u16::to_string).collect();
        j.push("code", format!("code {}", shown.join("|")), want.contains(code), format!("got {got}"));
    }
    let refused = !(200..300).contains(code);
    // Beside codes that accept success (`code = [200, 409]`), a refusal's words judge only a refusal.
    let only_if_refused = k.code.as_ref().is_some_and(|c| c.iter().any(|c| (200..300).contains(c)));
    let status_field = |f: &str| match body.get("kind").and_then(Value::as_str) {
        Some("Status") => body.get(f).and_then(Value::as_str).unwrap_or("").to_string(),
        _ => String::new(),
    };
    let refusal = |j: &mut StepJudge<'_>, key: &'static str, what: String, check: &dyn Fn(&str) -> bool, field: &str| {
        if only_if_refused && !refused {
            j.push(key, what, true, format!("got {got}: not refused, so not asked"));
            return;
        }
        let actual = status_field(field);
        j.push(key, what, check(&actual), format!("got {actual:?}"));
    };
    if let Some(want) = &k.reason {
        refusal(j, "reason", format!("reason {want:?}"), &|a| a == want, "reason");
    }
    if let Some(want) = &k.message {
        refusal(j, "message", format!("message {want:?}"), &|a| a == want, "message");
    }
    if let Some(want) = &k.message_contains {
        refusal(j, "message_contains", format!("message contains {want:?}"), &|a| a.contains(want.as_str()), "message");
    }
    for (pointer, want) in &k.fields {
        let what = format!("{pointer} = {want}");
        match body.pointer(pointer) {
            Some(actual) => j.push("fields", what, actual == want, format!("got {actual}")),
            None => j.fail("fields", &what, "absent".into()),
        }
    }
    for pointer in &k.non_empty {
        let what = format!("{pointer} is not empty");
        match body.pointer(pointer) {
            Some(v) if !is_empty(v) => j.push("non_empty", what, true, format!("got {}", short(v))),
            Some(v) => j.fail("non_empty", &what, format!("got {v}")),
            None => j.fail("non_empty", &what, "absent".into()),
        }
    }
    for pointer in &k.absent {
        let what = format!("{pointer} is absent");
        match body.pointer(pointer) {
            None | Some(Value::Null) => j.push("absent", what, true, "absent"),
            Some(v) => j.fail("absent", &what, format!("got {}", short(v))),
        }
    }
    if let Some(want) = &k.rv {
        let rv = body.pointer("/metadata/resourceVersion").and_then(Value::as_str).unwrap_or("");
        match rv.parse::<i64>() {
            Ok(actual) => j.number("rv", want, actual),
            Err(_) => j.fail("rv", &format!("rv {}", shown(want)), format!("got resourceVersion {rv:?}")),
        }
    }
    if let Some(want) = &k.items {
        let names: Vec<String> = body
            .get("items")
            .and_then(Value::as_array)
            .map(|items| items.iter().map(|i| meta(i, "name").to_string()).collect())
            .unwrap_or_default();
        j.push("items", format!("items {want:?}"), *want == names, format!("got {names:?}"));
    }
}

/// Whether a JSON value holds nothing: null, `""`, `[]` or `{}`.
fn is_empty(v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::String(s) => s.is_empty(),
        Value::Array(a) => a.is_empty(),
        Value::Object(o) => o.is_empty(),
        _ => false,
    }
}

/// A value in at most 60 characters, for a finding's detail.
fn short(v: &Value) -> String {
    let s = v.to_string();
    if s.chars().count() <= 60 {
        s
    } else {
        format!("{}...", s.chars().take(57).collect::<String>())
    }
}

/// A watch's events against the expected sequence, side by side where they differ.
pub fn watch_events(j: &mut StepJudge<'_>, want: &[WatchEventExpect], got: &[KubeEvent]) {
    let expected: Vec<String> = want.iter().map(|x| show_watch_event_expect(j, x)).collect();
    let actual: Vec<String> = got.iter().map(KubeEvent::describe).collect();
    let matches: Vec<bool> = want.iter().zip(got).map(|(x, ev)| watch_event_matches(j, x, ev)).collect();
    j.sequence("watch_events", "watch_events", "events", &expected, &actual, &|i| {
        matches.get(i).copied().unwrap_or(false)
    });
}

fn watch_event_matches(j: &StepJudge<'_>, x: &WatchEventExpect, ev: &KubeEvent) -> bool {
    let rv_ok =
        x.rv.as_ref()
            .is_none_or(|e| ev.rv.parse::<i64>().ok().is_some_and(|rv| e.matches(rv, j.env).unwrap_or(false)));
    x.kind == ev.kind
        && x.name.as_ref().is_none_or(|n| *n == ev.name)
        && rv_ok
        && x.initial_events_end.is_none_or(|end| end == ev.initial_events_end)
        && x.code.is_none_or(|c| Some(c) == ev.code)
}

fn show_watch_event_expect(j: &StepJudge<'_>, x: &WatchEventExpect) -> String {
    let mut s = x.kind.clone();
    if let Some(n) = &x.name {
        s.push(' ');
        s.push_str(n);
    }
    j.show_num(&mut s, "rv", &x.rv);
    if x.initial_events_end == Some(true) {
        s.push_str(" initial-events-end");
    }
    if let Some(c) = x.code {
        s.push_str(&format!(" code={c}"));
    }
    s
}

/// An answer in a few words: its code, and a refusal's reason or an object's resourceVersion.
fn answer_summary(code: u16, body: &Value) -> String {
    if body.get("kind").and_then(Value::as_str) == Some("Status") && !(200..300).contains(&code) {
        let reason = body.get("reason").and_then(Value::as_str).unwrap_or("");
        return format!("{code} {reason}");
    }
    match meta(body, "resourceVersion") {
        "" => format!("{code}"),
        rv => format!("{code} rv={rv}"),
    }
}

fn meta<'a>(v: &'a Value, field: &str) -> &'a str {
    v.get("metadata").and_then(|m| m.get(field)).and_then(Value::as_str).unwrap_or("")
}

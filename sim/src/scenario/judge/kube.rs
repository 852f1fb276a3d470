//! Judges a `kube` step: the HTTP answer's code, a refusal's reason and message, values at JSON pointers,
//! the answer's resourceVersion, a list's names in order, and a watch's events side by side with the
//! expected ones.

use serde_json::Value;

use super::{shown, side_by_side, StepJudge};
use crate::scenario::execute::{KubeEvent, KubeResult};
use crate::scenario::plan::{Expectations, WatchEventExpect};

impl StepJudge<'_> {
    pub(super) fn kube(&mut self, result: &KubeResult, e: &Expectations) {
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
            self.outcome(want, &got, ok, unknown, error, false);
        }
        let k = &e.kube;
        let Ok((code, body)) = &result.answer else {
            if k.code.is_some() || k.reason.is_some() || !k.fields.is_empty() || k.rv.is_some() || k.items.is_some() {
                self.fail("an answer", got);
            }
            return;
        };
        if let Some(want) = &k.code {
            let shown: Vec<String> = want.iter().map(u16::to_string).collect();
            self.push(format!("code {}", shown.join("|")), want.contains(code), format!("got {got}"));
        }
        let status_field = |f: &str| match body.get("kind").and_then(Value::as_str) {
            Some("Status") => body.get(f).and_then(Value::as_str).unwrap_or("").to_string(),
            _ => String::new(),
        };
        if let Some(want) = &k.reason {
            self.text("reason", want, &status_field("reason"));
        }
        if let Some(want) = &k.message {
            self.text("message", want, &status_field("message"));
        }
        for (pointer, want) in &k.fields {
            let what = format!("{pointer} = {want}");
            match body.pointer(pointer) {
                Some(actual) => self.push(what, actual == want, format!("got {actual}")),
                None => self.fail(&what, "absent".into()),
            }
        }
        if let Some(want) = &k.rv {
            let rv = body.pointer("/metadata/resourceVersion").and_then(Value::as_str).unwrap_or("");
            match rv.parse::<i64>() {
                Ok(actual) => self.number("rv", want, actual),
                Err(_) => self.fail(&format!("rv {}", shown(want)), format!("got resourceVersion {rv:?}")),
            }
        }
        if let Some(want) = &k.items {
            let names: Vec<String> = body
                .get("items")
                .and_then(Value::as_array)
                .map(|items| items.iter().map(|i| meta(i, "name").to_string()).collect())
                .unwrap_or_default();
            self.push(format!("items {want:?}"), *want == names, format!("got {names:?}"));
        }
        if let Some(want) = &k.watch_events {
            self.watch_events(want, &result.events);
        }
    }

    fn watch_events(&mut self, want: &[WatchEventExpect], got: &[KubeEvent]) {
        let expected: Vec<String> = want.iter().map(|x| self.show_watch_event_expect(x)).collect();
        let actual: Vec<String> = got.iter().map(KubeEvent::describe).collect();
        let bad: Vec<usize> = (0..want.len().max(got.len()))
            .filter(|&i| match (want.get(i), got.get(i)) {
                (Some(x), Some(ev)) => !self.watch_event_matches(x, ev),
                _ => true,
            })
            .collect();
        let pass = bad.is_empty();
        let detail = if pass { format!("got {} events", got.len()) } else { side_by_side(&expected, &actual, &bad) };
        self.push("watch_events", pass, detail);
    }

    fn watch_event_matches(&self, x: &WatchEventExpect, ev: &KubeEvent) -> bool {
        let rv_ok =
            x.rv.as_ref()
                .is_none_or(|e| ev.rv.parse::<i64>().ok().is_some_and(|rv| e.matches(rv, self.env).unwrap_or(false)));
        x.kind == ev.kind
            && x.name.as_ref().is_none_or(|n| *n == ev.name)
            && rv_ok
            && x.initial_events_end.is_none_or(|end| end == ev.initial_events_end)
            && x.code.is_none_or(|c| Some(c) == ev.code)
    }

    fn show_watch_event_expect(&self, x: &WatchEventExpect) -> String {
        let mut s = x.kind.clone();
        if let Some(n) = &x.name {
            s.push(' ');
            s.push_str(n);
        }
        self.show_num(&mut s, "rv", &x.rv);
        if x.initial_events_end == Some(true) {
            s.push_str(" initial-events-end");
        }
        if let Some(c) = x.code {
            s.push_str(&format!(" code={c}"));
        }
        s
    }
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

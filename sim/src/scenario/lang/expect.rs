//! What a step's client must observe, as written: `expect = { ... }` with one key per thing to check
//! (outcome, error, revision, key-values, events, ...; for `kube` steps the HTTP code, status, fields and
//! resourceVersion; for informers what they synced and held), each optional, and the shapes of its nested
//! entries. This is the whole vocabulary; which keys a step judges is its kind's to say
//! (`crate::scenario::steps`), and a key a step does not judge is refused before the run.

use serde::{Deserialize, Serialize};
use toml::Spanned;

use super::value::Value;

/// What the step's client must observe. Every key is optional; what is left out is not checked.
#[derive(Clone, Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Expect {
    /// `ok`, `error`, `unknown` (no answer, or an availability error such as a connection reset, which
    /// leaves the outcome unknown), `not-sent`, or `ok-or-unknown`. Default: `ok`, or `error` when `error`
    /// is given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outcome: Option<Spanned<ExpectOutcome>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<Spanned<ExpectError>>,
    /// The response header's revision.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revision: Option<Spanned<Value>>,
    /// get: the exact list of key-values returned.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kvs: Option<Spanned<Vec<ExpectKv>>>,
    /// get: the count; delete: the number deleted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub count: Option<Spanned<Value>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub more: Option<Spanned<bool>>,
    /// txn: which branch ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub succeeded: Option<Spanned<bool>>,
    /// put/delete with prev_kv: the previous value (`""` for none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prev_value: Option<Spanned<String>>,
    /// lease_grant, lease_keep_alive, lease_time_to_live: the TTL in the answer (-1: the lease is gone).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttl_s: Option<Spanned<Value>>,
    /// lease_time_to_live with `keys = true`: the keys attached to the lease, in order.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub keys: Option<Spanned<Vec<String>>>,
    /// lease_leases: the leases listed, by their `lease_grant` steps (in any order; every lease listed must
    /// be one of these, and each of these must be listed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub leases: Option<Spanned<Vec<Spanned<String>>>>,
    /// auth `user-list`, `role-list`: the names listed; `user-get`: the user's roles; `role-get`: the role's
    /// permissions as `read /a` or `readwrite [/a, /b)`; each in etcd's order.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub names: Option<Spanned<Vec<String>>>,
    /// txn: what each operation of the branch that ran returned, in order.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub responses: Option<Spanned<Vec<Spanned<ExpectResponse>>>>,
    /// watch: the exact sequence of events delivered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub events: Option<Spanned<Vec<Spanned<ExpectEvent>>>>,
    /// watch: whether the server canceled it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub canceled: Option<Spanned<bool>>,
    /// watch: the compact revision it was canceled with (implies `canceled = true`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compact_revision: Option<Spanned<Value>>,
    /// watch: the cancel reason text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cancel_reason: Option<Spanned<String>>,
    /// watch: how many progress notifications arrived.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub progress_count: Option<Spanned<Value>>,
    /// watch: what each progress notification's revision must satisfy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub progress_revision: Option<Spanned<Value>>,

    /// kube: the HTTP status code, or the codes one of which it must be (`code = [200, 409]`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<Spanned<Codes>>,
    /// kube: a refusal's `Status.reason` (`Conflict`, `NotFound`, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<Spanned<String>>,
    /// kube: a refusal's `Status.message`, exactly.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<Spanned<String>>,
    /// kube: a refusal's `Status.message` contains this text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message_contains: Option<Spanned<String>>,
    /// kube: JSON pointers into the answer and the values they must hold (`"/data/k" = "v"`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fields: Option<Spanned<std::collections::BTreeMap<String, toml::Value>>>,
    /// kube: JSON pointers that must hold something in the answer (not null, not `""`, `[]` or `{}`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub non_empty: Option<Spanned<Vec<String>>>,
    /// kube: JSON pointers that must be absent from the answer (or null).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub absent: Option<Spanned<Vec<String>>>,
    /// kube: the answer's resourceVersion (an object's, or a list's), an expression; informer: the newest
    /// resourceVersion it was told by the end of the run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rv: Option<Spanned<Value>>,
    /// kube list: the names listed, in order.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub items: Option<Spanned<Vec<String>>>,
    /// kube watch: every event delivered, in order.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub watch_events: Option<Spanned<Vec<Spanned<ExpectWatchEvent>>>>,
    /// controller: how many read-modify-write attempts it made (an expression).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attempts: Option<Spanned<Value>>,

    /// informer: whether it synced (its first list came back).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub synced: Option<Spanned<bool>>,
    /// informer: how many times it listed again after its first list (an expression).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub relists: Option<Spanned<Value>>,
    /// informer: how many 410 Gone (`Expired`) answers its lists and watches got (an expression).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expired: Option<Spanned<Value>>,
    /// informer: the names in its store at the end of the run, in order.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub store: Option<Spanned<Vec<String>>>,

    /// move_leader: the member that leads once the step is done.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub leader: Option<Spanned<String>>,
    /// move_leader: whether another member leads than before the step.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub leader_changed: Option<Spanned<bool>>,
}

/// One entry of a txn's `responses`: what one operation of the branch that ran returned. Each key is
/// optional, as in `expect`, and must fit the operation at its position.
#[derive(Clone, Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ExpectResponse {
    /// get: the exact list of key-values returned.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kvs: Option<Spanned<Vec<ExpectKv>>>,
    /// get: the count; delete: the number deleted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub count: Option<Spanned<Value>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub more: Option<Spanned<bool>>,
    /// put/delete with prev_kv: the previous value (`""` for none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prev_value: Option<Spanned<String>>,
    /// A nested txn: which branch ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub succeeded: Option<Spanned<bool>>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ExpectOutcome {
    Ok,
    Error,
    Unknown,
    NotSent,
    OkOrUnknown,
}

/// `error = { code = "OutOfRange", message = "etcdserver: mvcc: required revision has been compacted" }`.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ExpectError {
    pub code: Spanned<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

#[derive(Clone, Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ExpectKv {
    pub key: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub create_revision: Option<Spanned<Value>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mod_revision: Option<Spanned<Value>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<Spanned<Value>>,
    /// The `lease_grant` step whose lease the key must carry.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lease: Option<Spanned<String>>,
}

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ExpectEvent {
    #[serde(rename = "type")]
    pub kind: EventType,
    pub key: Spanned<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mod_revision: Option<Spanned<Value>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub create_revision: Option<Spanned<Value>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<Spanned<Value>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prev_value: Option<String>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum EventType {
    Put,
    Delete,
}

/// `code = 409` or `code = [200, 409]`: the HTTP codes a `kube` step may get.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(into = "Vec<u16>")]
pub struct Codes(pub Vec<u16>);

impl From<Codes> for Vec<u16> {
    fn from(c: Codes) -> Vec<u16> {
        c.0
    }
}

impl<'de> Deserialize<'de> for Codes {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Codes, D::Error> {
        struct Visitor;
        impl<'de> serde::de::Visitor<'de> for Visitor {
            type Value = Codes;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("an HTTP code (100 to 599) or a list of them")
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<Codes, E> {
                code(v).map(|c| Codes(vec![c]))
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Codes, A::Error> {
                let mut out = Vec::new();
                while let Some(v) = seq.next_element::<i64>()? {
                    out.push(code(v)?);
                }
                if out.is_empty() {
                    return Err(serde::de::Error::custom("an empty list of codes; expected at least one"));
                }
                Ok(Codes(out))
            }
        }
        fn code<E: serde::de::Error>(v: i64) -> Result<u16, E> {
            match u16::try_from(v) {
                Ok(c) if (100..600).contains(&c) => Ok(c),
                _ => Err(E::custom(format!("{v} is not an HTTP code; expected 100 to 599"))),
            }
        }
        d.deserialize_any(Visitor)
    }
}

/// One event a `kube` watch must deliver, in order.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ExpectWatchEvent {
    /// `ADDED`, `MODIFIED`, `DELETED`, `BOOKMARK` or `ERROR`.
    #[serde(rename = "type")]
    pub kind: Spanned<String>,
    /// The object's name (not for bookmarks and errors).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The event's resourceVersion, an expression.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rv: Option<Spanned<Value>>,
    /// A bookmark: whether it is the `k8s.io/initial-events-end` one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub initial_events_end: Option<bool>,
    /// An ERROR event: its Status code (410 for a resourceVersion too old).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<u16>,
}

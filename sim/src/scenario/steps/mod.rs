//! The step kinds: one module per kind of step (`put`, `watch`, `kube`, `informer`, `wait`, ...), each
//! holding everything the language knows about it: its table as the file writes it, its validation into a
//! plan, its text in traces and snapshots, how it runs, which expectation keys it judges and how. They are
//! registered in one table, [`step_kinds!`] below; a new kind of step is one new module and one line there.
//!
//! The table makes the two enums the rest of the language speaks, [`OpSyntax`] (a step's operation as
//! written) and [`Op`] (as validated), and the dispatch from them to each kind's [`StepKind`] functions. A
//! step's table ([`Step`]) is read key by key: the keys every step shares, and the one operation key, whose
//! value the kind's own serde struct reads (so toml still points at the exact place of a mistake).
//!
//! What the kinds share sits beside them: the run's context ([`ctx`]), the board the clients coordinate
//! through ([`board`]), what steps observed ([`observed`]), the connections of Kubernetes clients
//! ([`kube_conn`]), the KV requests and their judging ([`kv`]), the expectations' validation
//! ([`expect`]), the judge's helpers ([`judging`]) and the text helpers ([`text`]). None of these depends on
//! a kind.
//!
//! Every expectation key a kind accepts is judged: [`StepKind::variants`] lists them, validation refuses
//! any other at its line and column, the judge fails a written key that produced no finding, and
//! `sim/tests/expect_keys.rs` runs, for each kind and each key, a scenario whose wrong value must fail.

pub mod board;
pub mod ctx;
pub mod expect;
pub mod judging;
pub mod kube_conn;
pub mod kv;
pub mod observed;
pub mod text;

use std::fmt::{self, Formatter};
use std::ops::Range;

use serde::de::{self, DeserializeOwned, MapAccess, Visitor};
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use toml::Spanned;

use crate::scenario::lang::expect::Expect;
use crate::scenario::lang::expectations::Expectations;
use crate::scenario::lang::names::{Gives, Names};
use crate::scenario::lang::source::{Result, Source};
use ctx::{Finished, RunCx};
use judging::StepJudge;
use observed::Observed;

/// Which clients may run a kind of step.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ClientKind {
    /// A client of an etcd member (KV, lease, watch, auth, maintenance requests).
    Etcd,
    /// A Kubernetes client (requests to apiservers).
    Kube,
    /// Either (waits, sleeps, restarts of a process).
    Any,
}

/// What validating a step's operation may read: the file (for errors), the step names, the apiservers'
/// catalog (for resources), and the step itself.
pub struct PlanCx<'a> {
    pub src: &'a Source<'a>,
    pub names: &'a Names<'a>,
    pub catalog: &'a apiserver::apis::Catalog,
    /// The cluster's members, by name (`etcd-1`..).
    pub members: &'a [String],
    /// The whole step table, for errors about the step and for its name.
    pub step: &'a Spanned<Step>,
}

impl PlanCx<'_> {
    /// The step's name, if it has one.
    pub fn name(&self) -> Option<&Spanned<String>> {
        self.step.get_ref().name.as_ref()
    }
}

/// One kind of step. Implemented once per module of this folder and registered in [`step_kinds!`].
pub trait StepKind: Clone + fmt::Debug + Sized {
    /// The operation's key in a `[[client.step]]` table.
    const KEY: &'static str;
    /// Which clients may run it.
    const CLIENT: ClientKind;
    /// What a named step of this kind gives the steps that name it.
    const GIVES: Gives;
    /// The operation as the file writes it (a serde struct with `deny_unknown_fields` and spans).
    type Syntax: Clone + fmt::Debug + Serialize + DeserializeOwned;

    /// Every variant of the kind with the expectation keys it judges (one entry for most kinds; a `kube`
    /// step's keys depend on its verb). The table test walks these.
    fn variants() -> &'static [(&'static str, &'static [&'static str])];

    /// Which of [`Self::variants`] this step is.
    fn variant(&self) -> &'static str {
        Self::variants()[0].0
    }

    /// The resources it names, which the apiservers must serve.
    fn resources(_syntax: &Self::Syntax) -> Vec<&Spanned<String>> {
        Vec::new()
    }

    /// Validates the operation into the kind's plan.
    fn plan(cx: &PlanCx, syntax: &Spanned<Self::Syntax>) -> Result<Self>;

    /// Checks of the expectations that depend on the plan (a get's `kvs` on keys it covers, a watch's
    /// events of types it lets through), filling in what only the kind can read. The keys themselves have
    /// been checked against [`Self::variants`] and parsed into `parsed` already.
    fn check_expect(&self, _cx: &PlanCx, _written: &Spanned<Expect>, _parsed: &mut Expectations) -> Result<()> {
        Ok(())
    }

    /// The request as the trace and the snapshot show it, numbers taken from other steps by name.
    fn text(&self, f: &mut Formatter<'_>) -> fmt::Result;

    /// Runs the step: what its client observed, the revision `rev_of` gets, the lease a grant got.
    #[allow(async_fn_in_trait)]
    async fn run(&self, cx: &mut RunCx<'_>) -> Finished;

    /// Judges what the step observed: each written key of `expect` gives at least one finding (with that
    /// key), and a kind may add findings of its own whatever `expect` says (an informer's guarantees).
    fn judge(&self, j: &mut StepJudge<'_>, observed: &Observed, expect: Option<&Expectations>);

    /// The step's result as the snapshot shows it, when the kind says it better than the generic words for
    /// what it observed.
    fn outcome(&self, _observed: &Observed) -> Option<String> {
        None
    }
}

/// A kind as the table lists it: for the table test, the reference and error messages.
#[derive(Clone, Copy, Debug)]
pub struct KindInfo {
    pub key: &'static str,
    pub client: ClientKind,
    pub variants: &'static [(&'static str, &'static [&'static str])],
}

/// The keys every step has beside its one operation.
const COMMON: [&str; 4] = ["name", "after", "at_ms", "expect"];

macro_rules! step_kinds {
    ($($module:ident :: $kind:ident,)*) => {
        $(pub mod $module;)*

        /// A step's operation, validated: one variant per kind, holding the kind's plan.
        #[derive(Clone, Debug)]
        pub enum Op {
            $($kind($module::$kind),)*
        }

        /// A step's operation as the file writes it (boxed: the kinds' tables differ much in size).
        #[derive(Clone, Debug)]
        pub enum OpSyntax {
            $($kind(Box<Spanned<<$module::$kind as StepKind>::Syntax>>),)*
        }

        /// Every key a step table may have: the shared ones, then each kind's, in the table's order.
        pub const FIELDS: &[&str] = &[
            COMMON[0], COMMON[1], COMMON[2], COMMON[3],
            $(<$module::$kind as StepKind>::KEY,)*
        ];

        /// Every kind, in the table's order.
        pub fn kinds() -> Vec<KindInfo> {
            vec![$(KindInfo {
                key: <$module::$kind as StepKind>::KEY,
                client: <$module::$kind as StepKind>::CLIENT,
                variants: <$module::$kind as StepKind>::variants(),
            },)*]
        }

        impl OpSyntax {
            /// Reads the value of operation key `key` from a step table being deserialized.
            fn next_value<'de, A: MapAccess<'de>>(key: &str, map: &mut A) -> std::result::Result<OpSyntax, A::Error> {
                $(if key == <$module::$kind as StepKind>::KEY {
                    return Ok(OpSyntax::$kind(Box::new(map.next_value()?)));
                })*
                Err(de::Error::unknown_field(key, FIELDS))
            }

            fn serialize_into<M: SerializeMap>(&self, map: &mut M) -> std::result::Result<(), M::Error> {
                match self {
                    $(OpSyntax::$kind(s) => map.serialize_entry(<$module::$kind as StepKind>::KEY, s),)*
                }
            }

            /// The operation's key.
            pub fn key(&self) -> &'static str {
                match self {
                    $(OpSyntax::$kind(_) => <$module::$kind as StepKind>::KEY,)*
                }
            }

            /// Where the operation's value is in the file.
            pub fn span(&self) -> Range<usize> {
                match self {
                    $(OpSyntax::$kind(s) => s.span(),)*
                }
            }

            /// What a named step of this kind gives the steps that name it.
            pub fn gives(&self) -> Gives {
                match self {
                    $(OpSyntax::$kind(_) => <$module::$kind as StepKind>::GIVES,)*
                }
            }

            /// Which clients may run it.
            pub fn client(&self) -> ClientKind {
                match self {
                    $(OpSyntax::$kind(_) => <$module::$kind as StepKind>::CLIENT,)*
                }
            }

            /// The resources it names.
            pub fn resources(&self) -> Vec<&Spanned<String>> {
                match self {
                    $(OpSyntax::$kind(s) => <$module::$kind as StepKind>::resources(s.get_ref()),)*
                }
            }

            /// Validates it into a plan.
            pub fn plan(&self, cx: &PlanCx) -> Result<Op> {
                match self {
                    $(OpSyntax::$kind(s) => Ok(Op::$kind(<$module::$kind as StepKind>::plan(cx, s)?)),)*
                }
            }
        }

        impl Op {
            /// The operation's key in the file (`put`, `lease_grant`).
            pub fn keyword(&self) -> &'static str {
                match self {
                    $(Op::$kind(_) => <$module::$kind as StepKind>::KEY,)*
                }
            }

            /// Which clients may run it.
            pub fn client(&self) -> ClientKind {
                match self {
                    $(Op::$kind(_) => <$module::$kind as StepKind>::CLIENT,)*
                }
            }

            /// The variant of its kind this step is, and the expectation keys that variant judges.
            pub fn judged(&self) -> (&'static str, &'static [&'static str]) {
                let (variant, all) = match self {
                    $(Op::$kind(p) => (p.variant(), <$module::$kind as StepKind>::variants()),)*
                };
                let keys = all.iter().find(|(v, _)| *v == variant).map_or(&[][..], |(_, k)| *k);
                (variant, keys)
            }

            /// Checks the expectations against the plan.
            pub fn check_expect(&self, cx: &PlanCx, written: &Spanned<Expect>, parsed: &mut Expectations) -> Result<()> {
                match self {
                    $(Op::$kind(p) => p.check_expect(cx, written, parsed),)*
                }
            }

            /// The request as the trace shows it.
            pub fn write_text(&self, f: &mut Formatter<'_>) -> fmt::Result {
                match self {
                    $(Op::$kind(p) => p.text(f),)*
                }
            }

            /// Runs it.
            pub async fn run(&self, cx: &mut RunCx<'_>) -> Finished {
                match self {
                    $(Op::$kind(p) => p.run(cx).await,)*
                }
            }

            /// Judges what it observed.
            pub fn judge(&self, j: &mut StepJudge<'_>, observed: &Observed, expect: Option<&Expectations>) {
                match self {
                    $(Op::$kind(p) => p.judge(j, observed, expect),)*
                }
            }

            /// Its result as the snapshot shows it, when the kind words it itself.
            pub fn outcome(&self, observed: &Observed) -> Option<String> {
                match self {
                    $(Op::$kind(p) => p.outcome(observed),)*
                }
            }
        }
    };
}

// The table: one line per kind of step, in the order the language reference lists them.
step_kinds! {
    get::Get,
    put::Put,
    delete::Delete,
    txn::Txn,
    compact::Compact,
    lease_grant::LeaseGrant,
    lease_revoke::LeaseRevoke,
    lease_keep_alive::LeaseKeepAlive,
    lease_time_to_live::LeaseTimeToLive,
    lease_leases::LeaseLeases,
    watch::Watch,
    watch_progress::WatchProgress,
    watch_cancel::WatchCancel,
    sleep_ms::SleepMs,
    wait::Wait,
    kube::Kube,
    informer::Informer,
    informer_restart::InformerRestart,
    controller::Controller,
    auth::Auth,
    move_leader::MoveLeader,
}

impl Op {
    /// The request as the trace and the snapshot show it.
    pub fn text(&self) -> String {
        crate::describe::FromFn(|f: &mut Formatter<'_>| self.write_text(f)).to_string()
    }

    /// Whether an etcd step writes, compacts, or reads keys under `/registry/`: what a KV history that
    /// leaves out the apiservers' own writes cannot explain.
    pub fn touches_registry(&self) -> bool {
        let registry = crate::history::KeySpan::prefix("/registry/");
        match self {
            Op::Get(g) => g.span.overlaps(&registry),
            Op::Watch(w) => w.span.overlaps(&registry),
            Op::Put(_) | Op::Delete(_) | Op::Txn(_) | Op::Compact(_) | Op::LeaseRevoke(_) => true,
            _ => false,
        }
    }
}

/// `[[client.step]]`: one operation, with when it may start and what its client must observe. Read key by
/// key: the keys every step shares, and operation keys, whose values their kinds read. Validation insists
/// on exactly one operation.
#[derive(Clone, Debug, Default)]
pub struct Step {
    /// Names the step for `after`, `rev_of(..)`, `lease`, `watch` and the report.
    pub name: Option<Spanned<String>>,
    /// Steps (of any client) that must have completed before this one starts.
    pub after: Vec<Spanned<String>>,
    /// Not before this simulated time (milliseconds since the run started).
    pub at_ms: Option<u64>,
    /// The operation keys given, in the file's order (exactly one is valid).
    pub ops: Vec<OpSyntax>,
    pub expect: Option<Spanned<Expect>>,
}

/// A key of a step table: a shared one or an operation's.
enum StepField {
    Name,
    After,
    AtMs,
    Expect,
    Op(&'static str),
}

impl<'de> Deserialize<'de> for StepField {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<StepField, D::Error> {
        struct FieldVisitor;
        impl Visitor<'_> for FieldVisitor {
            type Value = StepField;
            fn expecting(&self, f: &mut Formatter<'_>) -> fmt::Result {
                f.write_str("a step key")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> std::result::Result<StepField, E> {
                match v {
                    "name" => Ok(StepField::Name),
                    "after" => Ok(StepField::After),
                    "at_ms" => Ok(StepField::AtMs),
                    "expect" => Ok(StepField::Expect),
                    _ => match FIELDS[COMMON.len()..].iter().find(|k| **k == v) {
                        Some(k) => Ok(StepField::Op(k)),
                        None => Err(E::unknown_field(v, FIELDS)),
                    },
                }
            }
        }
        d.deserialize_identifier(FieldVisitor)
    }
}

impl<'de> Deserialize<'de> for Step {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Step, D::Error> {
        struct StepVisitor;
        impl<'de> Visitor<'de> for StepVisitor {
            type Value = Step;
            fn expecting(&self, f: &mut Formatter<'_>) -> fmt::Result {
                f.write_str("a step table")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> std::result::Result<Step, A::Error> {
                let mut step = Step::default();
                while let Some(field) = map.next_key::<StepField>()? {
                    match field {
                        StepField::Name => step.name = Some(map.next_value()?),
                        StepField::After => step.after = map.next_value()?,
                        StepField::AtMs => step.at_ms = Some(map.next_value()?),
                        StepField::Expect => step.expect = Some(map.next_value()?),
                        StepField::Op(key) => step.ops.push(OpSyntax::next_value(key, &mut map)?),
                    }
                }
                Ok(step)
            }
        }
        d.deserialize_struct("Step", FIELDS, StepVisitor)
    }
}

impl Serialize for Step {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(None)?;
        if let Some(name) = &self.name {
            map.serialize_entry("name", name)?;
        }
        if !self.after.is_empty() {
            map.serialize_entry("after", &self.after)?;
        }
        if let Some(at) = &self.at_ms {
            map.serialize_entry("at_ms", at)?;
        }
        for op in &self.ops {
            op.serialize_into(&mut map)?;
        }
        if let Some(e) = &self.expect {
            map.serialize_entry("expect", e)?;
        }
        map.end()
    }
}

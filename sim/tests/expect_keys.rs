//! `cargo sim-test --test expect_keys`: proves that every expectation key a step kind accepts is judged.
//! It walks the step kinds' table (`sim::scenario::steps::kinds`), and for each kind, each variant and each
//! key it judges finds the case in `tests/data/expect-keys.toml` whose scenario gives that key a wrong value;
//! the run must fail, and fail on that key (a finding with that key fails; no finding of another key does,
//! but the outcome a key implies).
//! A key without a case, or a case for a key the table does not have, fails the table test.

#[cfg(madsim)]
fn main() -> std::process::ExitCode {
    proofs::main()
}

#[cfg(not(madsim))]
fn main() {}

#[cfg(madsim)]
mod proofs {
    use std::collections::{BTreeMap, BTreeSet};

    use libtest_mimic::{Arguments, Failed, Trial};
    use serde::Deserialize;
    use sim::scenario::{judge, parse, run};

    #[derive(Deserialize)]
    struct Data {
        base: BTreeMap<String, String>,
        case: Vec<Case>,
    }

    #[derive(Clone, Deserialize)]
    struct Case {
        kind: String,
        variant: String,
        key: String,
        base: String,
        steps: String,
    }

    fn data() -> Data {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/expect-keys.toml");
        toml::from_str(&std::fs::read_to_string(path).expect("the cases file")).expect("the cases file parses")
    }

    pub fn main() -> std::process::ExitCode {
        let args = Arguments::from_args();
        let data = data();
        let mut trials = vec![Trial::test("table::every_judged_key_has_a_case_and_every_case_a_key", {
            let cases: Vec<Case> = data.case.clone();
            move || coverage(&cases)
        })];
        for c in &data.case {
            let Some(base) = data.base.get(&c.base) else {
                let name = format!("{}::{}::{}", c.kind, c.variant, c.key);
                let base = c.base.clone();
                trials.push(Trial::test(name, move || Err(format!("no base is named {base:?}").into())));
                continue;
            };
            let text = base.replace("{steps}", &c.steps);
            let c = c.clone();
            trials.push(Trial::test(format!("{}::{}::{}", c.kind, c.variant, c.key), move || prove(&c, &text)));
        }
        libtest_mimic::run(&args, trials).exit_code()
    }

    /// Every (kind, variant, key) the table judges has a case, and every case names one the table has.
    fn coverage(cases: &[Case]) -> Result<(), Failed> {
        let mut judged = BTreeSet::new();
        for kind in sim::scenario::steps::kinds() {
            for (variant, keys) in kind.variants {
                for key in *keys {
                    judged.insert((kind.key.to_string(), variant.to_string(), key.to_string()));
                }
            }
        }
        let proven: BTreeSet<(String, String, String)> =
            cases.iter().map(|c| (c.kind.clone(), c.variant.clone(), c.key.clone())).collect();
        let missing: Vec<_> = judged.difference(&proven).collect();
        let stale: Vec<_> = proven.difference(&judged).collect();
        if missing.is_empty() && stale.is_empty() {
            Ok(())
        } else {
            Err(format!("keys without a case: {missing:?}; cases of no judged key: {stale:?}").into())
        }
    }

    /// The keys whose value implies an outcome (`error` implies `outcome = "error"`).
    const IMPLY_OUTCOME: [&str; 5] = ["error", "code", "reason", "message", "message_contains"];

    /// The case's scenario validates, runs, and fails on its key alone.
    fn prove(c: &Case, text: &str) -> Result<(), Failed> {
        let path = format!("expect-keys/{}-{}-{}.toml", c.kind, c.variant, c.key);
        let scenario = parse(&path, text).map_err(|e| format!("the case does not validate: {e}"))?;
        // The case's step: one of its kind and variant that expects the key.
        let steps = scenario.clients.iter().flat_map(|s| &s.steps);
        let found = steps
            .filter(|s| s.op.keyword() == c.kind && s.op.judged().0 == c.variant)
            .any(|s| s.expect.as_ref().is_some_and(|e| e.written.contains(c.key.as_str())));
        if !found {
            return Err(format!("the case has no `{}` step ({}) expecting `{}`", c.kind, c.variant, c.key).into());
        }
        let judgement = judge::judge(&scenario, &run(&scenario, 1));
        let failed: Vec<String> =
            judgement.failures().map(|f| format!("[{}] {}: {}", f.key, f.what, f.detail)).collect();
        let on_key = judgement.failures().any(|f| f.key == c.key);
        let elsewhere: Vec<&String> =
            // A key that implies the outcome (an etcd error, an HTTP code or a refusal's words) fails the
            // implied outcome beside itself.
            judgement
                .failures()
                .zip(&failed)
                .filter(|(f, _)| f.key != c.key && !(f.key == "outcome" && IMPLY_OUTCOME.contains(&c.key.as_str())))
                .map(|(_, s)| s)
                .collect();
        if !on_key {
            return Err(format!("a wrong `{}` did not fail the run on that key; failures: {failed:?}", c.key).into());
        }
        if !elsewhere.is_empty() {
            return Err(format!(
                "the case fails on other keys too, so it proves nothing about `{}`: {elsewhere:?}",
                c.key
            )
            .into());
        }
        if judgement.checks.iter().any(|ch| !ch.pass()) || judgement.timed_out || !judgement.panics.is_empty() {
            return Err("the case fails a check, times out or panics besides its key".into());
        }
        Ok(())
    }
}

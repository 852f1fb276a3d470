//! The `kubesim` commands that drive other runs, tested as a user runs them: as processes, by exit code,
//! output and the files they write. `sweep` (pass, fail, shards merged, invalid input), `check-determinism`
//! and `shrink`, over the small scenarios in `tests/data/`: `put-then-get.toml` passes, and
//! `injected-watch-drop.toml` fails Reliable through a failpoint that drops watch responses. And the
//! README's main job: `kubesim run` prints what the README shows it printing, down to the trace hash.
#![cfg(madsim)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;
use sim::scenario::shrink::Size;

fn kubesim(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_kubesim")).args(args).output().expect("run kubesim")
}

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data").join(name)
}

fn passing() -> String {
    data("put-then-get.toml").display().to_string()
}

fn failing() -> String {
    data("injected-watch-drop.toml").display().to_string()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Exit code, stdout and stderr, for assertion messages.
fn shown(out: &Output) -> String {
    format!("{}\nstdout:\n{}\nstderr:\n{}", out.status, text(&out.stdout), text(&out.stderr))
}

fn read_json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).expect("the summary was written")).expect("the summary is JSON")
}

/// Every (file, seed, passed, trace hash) of a sweep summary, sorted.
fn seed_results(summary: &Value) -> Vec<(String, u64, bool, String)> {
    let mut out = Vec::new();
    for s in summary["scenarios"].as_array().unwrap() {
        for r in s["seeds"].as_array().unwrap() {
            out.push((
                s["file"].as_str().unwrap().to_string(),
                r["seed"].as_u64().unwrap(),
                r["passed"].as_bool().unwrap(),
                r["trace_hash"].as_str().unwrap_or("").to_string(),
            ));
        }
    }
    out.sort();
    out
}

#[test]
fn a_sweep_of_a_passing_scenario_exits_0_with_a_summary_of_every_seed() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("sweep.json");
    let out = kubesim(&["sweep", &passing(), "--seeds", "1..3", "--jobs", "2", "--json", json.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", shown(&out));
    let results = seed_results(&read_json(&json));
    assert_eq!(results.iter().map(|r| r.1).collect::<Vec<_>>(), vec![1, 2, 3]);
    assert!(results.iter().all(|r| r.2 && r.3.len() == 16), "{results:?}");
    let stdout = text(&out.stdout);
    assert!(stdout.contains("put-then-get") && stdout.contains("total"), "{stdout}");
}

#[test]
fn a_sweep_with_a_failing_seed_exits_1_and_prints_its_replay_command() {
    let out = kubesim(&["sweep", &failing(), "--seeds", "1..2", "--jobs", "2"]);
    assert_eq!(out.status.code(), Some(1), "{}", shown(&out));
    let stdout = text(&out.stdout);
    assert!(stdout.contains(&format!("cargo kubesim run {} --seed 1", failing())), "{stdout}");
    assert!(stdout.contains("Reliable must hold"), "{stdout}");
}

#[test]
fn shards_merged_give_the_unsharded_sweep() {
    let dir = tempfile::tempdir().unwrap();
    let path = |name: &str| dir.path().join(name).display().to_string();
    let sweep = |extra: &[&str], json: &str| {
        let mut args = vec!["sweep", "--seeds", "1..5", "--jobs", "2", "--json", json];
        args.extend_from_slice(extra);
        let (pass, fail) = (passing(), failing());
        args.extend([pass.as_str(), fail.as_str()]);
        let out = kubesim(&args);
        assert_eq!(out.status.code(), Some(1), "the failing scenario fails: {}", shown(&out));
    };
    sweep(&[], &path("whole.json"));
    sweep(&["--shard", "1/2"], &path("one.json"));
    sweep(&["--shard", "2/2"], &path("two.json"));
    let one = seed_results(&read_json(Path::new(&path("one.json"))));
    let two = seed_results(&read_json(Path::new(&path("two.json"))));
    assert_eq!(one.len() + two.len(), 10, "each shard runs its share: {one:?} {two:?}");

    let merged = kubesim(&["sweep", "--merge", &path("one.json"), &path("two.json"), "--json", &path("merged.json")]);
    assert_eq!(merged.status.code(), Some(1), "a failed seed makes the merge fail: {}", shown(&merged));
    let whole = seed_results(&read_json(Path::new(&path("whole.json"))));
    assert_eq!(seed_results(&read_json(Path::new(&path("merged.json")))), whole);
    // The merged table's total line equals the unsharded sweep's.
    let total = |s: &str| {
        s.lines().find(|l| l.starts_with("total")).map(|l| l.split_whitespace().take(4).collect::<Vec<_>>().join(" "))
    };
    let unsharded = kubesim(&["sweep", "--merge", &path("whole.json")]);
    assert_eq!(total(&text(&merged.stdout)), total(&text(&unsharded.stdout)));
}

#[test]
fn an_invalid_scenario_exits_2_with_its_location_before_anything_runs() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.toml");
    std::fs::write(&bad, "# A typo.\n[scenario]\nseeds = 2\nseedz = 3\n").unwrap();
    let json = dir.path().join("sweep.json");
    let out = kubesim(&["sweep", &passing(), bad.to_str().unwrap(), "--json", json.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "{}", shown(&out));
    let stderr = text(&out.stderr);
    assert!(stderr.contains(&format!("{}:4:1:", bad.display())), "{stderr}");
    assert!(!json.exists(), "nothing runs, so no summary is written");
}

#[test]
fn check_determinism_runs_a_seed_in_two_processes() {
    let out = kubesim(&["check-determinism", &failing(), "--seed", "2"]);
    assert_eq!(out.status.code(), Some(0), "{}", shown(&out));
    let stdout = text(&out.stdout);
    let hash = stdout.trim().strip_prefix("deterministic: ").unwrap_or_else(|| panic!("{stdout}"));
    let run = kubesim(&["run", &failing(), "--seed", "2", "--hash-only"]);
    assert_eq!(text(&run.stdout).trim(), hash);
}

#[test]
fn shrink_makes_a_failing_scenario_smaller_and_it_still_fails_the_same_check() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("dropped.toml");
    std::fs::copy(failing(), &file).unwrap();
    let out = kubesim(&["shrink", file.to_str().unwrap(), "--seed", "2"]);
    assert_eq!(out.status.code(), Some(0), "{}", shown(&out));
    let shrunk = dir.path().join("dropped.shrunk.toml");
    let text_shrunk = std::fs::read_to_string(&shrunk).expect("written beside the input");
    assert!(text_shrunk.starts_with("# Reproduces Reliable must hold"), "{text_shrunk}");
    assert!(text_shrunk.lines().next().unwrap().contains("seed 2"), "{text_shrunk}");

    let before = Size::of(&sim::scenario::load(&file).unwrap().file);
    let after = Size::of(&sim::scenario::load(&shrunk).unwrap().file);
    // Issue 15's goal: with other seeds allowed, this failure shrinks to at most a fifth of its operations.
    assert!(after.workload_ops * 5 <= before.workload_ops, "not small enough: {before} -> {after}\n{text_shrunk}");

    // The shrunk file fails on its canonical seed: 2, or the seed a reduction moved to.
    let run = kubesim(&["run", shrunk.to_str().unwrap(), "--json"]);
    assert_eq!(run.status.code(), Some(1), "{}", shown(&run));
    let summary: Value = serde_json::from_str(text(&run.stdout).trim()).unwrap();
    let failures: Vec<&str> = summary["failures"].as_array().unwrap().iter().map(|f| f.as_str().unwrap()).collect();
    assert_eq!(failures.len(), 1, "{failures:?}");
    assert!(failures[0].starts_with("Reliable must hold"), "{failures:?}");
}

#[test]
fn shrink_refuses_a_passing_seed() {
    let out = kubesim(&["shrink", &passing(), "--seed", "1", "--out", "/dev/null"]);
    assert_eq!(out.status.code(), Some(1), "{}", shown(&out));
    assert!(text(&out.stderr).contains("passes"), "{}", shown(&out));
}

/// A zoo entry shrinks with its switch on (`--zoo`), into the author's file less what the failure did not
/// need: its comments stay, and the replay command and the file's first line carry the switch.
#[test]
fn shrink_with_a_bug_switch_keeps_the_switch_and_the_authors_comments() {
    let dir = tempfile::tempdir().unwrap();
    let zoo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenarios/zoo/crash-keeps-acknowledged-writes.toml");
    let out_file = dir.path().join("crash.shrunk.toml");
    let out =
        kubesim(&["shrink", zoo.to_str().unwrap(), "--zoo", "--seed-tries", "0", "--out", out_file.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", shown(&out));
    assert!(text(&out.stdout).contains("--seed 1 --zoo`"), "{}", shown(&out));
    let shrunk = std::fs::read_to_string(&out_file).unwrap();
    assert!(shrunk.lines().next().unwrap().ends_with("with --zoo)."), "{shrunk}");
    assert!(shrunk.contains("\n# How: the apiserver's writes (a pod created and bound, a configmap)"), "{shrunk}");
    let with = kubesim(&["run", out_file.to_str().unwrap(), "--zoo", "--json"]);
    assert_eq!(with.status.code(), Some(1), "{}", shown(&with));
    let without = kubesim(&["run", out_file.to_str().unwrap(), "--json"]);
    assert_eq!(without.status.code(), Some(0), "{}", shown(&without));
}

/// The console block that shows the main job: the lines after its `$ cargo kubesim run` line.
fn shown_in_readme(readme: &str) -> (String, Vec<String>) {
    let start = "$ cargo kubesim run scenarios/";
    let at = readme.find(start).expect("the README shows the main job");
    let block = &readme[at..readme[at..].find("\n```").map_or(readme.len(), |end| at + end)];
    let mut lines = block.lines();
    let command = lines.next().expect("the command line").trim_start_matches("$ cargo kubesim run ").to_string();
    (command, lines.map(str::to_string).collect())
}

#[test]
fn the_readme_shows_what_the_main_job_prints() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let (file, expected) = shown_in_readme(&readme);
    let out =
        Command::new(env!("CARGO_BIN_EXE_kubesim")).current_dir(&root).args(["run", file.as_str()]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let printed: Vec<String> = String::from_utf8_lossy(&out.stdout).lines().map(str::to_string).collect();
    // Each line the README shows is printed, after the one before it; `...` skips any number of lines.
    let mut from = 0;
    for line in expected.iter().filter(|l| l.as_str() != "...") {
        match printed[from..].iter().position(|p| p == line) {
            Some(i) => from += i + 1,
            None => panic!(
                "README.md shows {line:?}, which `kubesim run {file}` does not print (after line {from}); the run \
                 prints:\n{}",
                printed.join("\n")
            ),
        }
    }
}

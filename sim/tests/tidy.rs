//! Mechanical checks of the rules in ARCHITECTURE.md, so that reviewers do not have to remember them:
//! dependency directions between crates, a `//!` doc on every Rust file, no source of nondeterminism
//! in library code, and the structural rules of `tidy/structure.rs` (no module cycles inside a crate, no
//! `#[path]` into another crate, no source file over 800 lines). Runs in the real build (it reads files;
//! nothing to simulate).
#![cfg(not(madsim))]

#[path = "tidy/structure.rs"]
mod structure;

use std::fs;
use std::path::{Path, PathBuf};

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            if path.file_name().is_some_and(|n| n == "target") {
                continue;
            }
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

fn all_rust_files() -> Vec<PathBuf> {
    let mut files = Vec::new();
    // The fuzz targets (a workspace of their own) keep the same rules, and so do the leaf crates under crates/.
    for krate in ["crates", "fake-etcd", "apiserver", "controllers", "sim", "fuzz"] {
        rust_files(&repo_root().join(krate), &mut files);
    }
    files.sort();
    files
}

/// The workspace dependencies a crate's Cargo.toml names in `section` ("dependencies" or "dev-dependencies").
fn workspace_deps(manifest: &str, section: &str) -> Vec<String> {
    let text = fs::read_to_string(repo_root().join(manifest)).unwrap();
    let crates = [
        "etcd-proto",
        "kubesim-failpoints",
        "kubesim-testsupport",
        "fake-etcd",
        "apiserver",
        "kubesim-controllers",
        "sim",
    ];
    let header = format!("[{section}]");
    let mut in_section = false;
    let mut deps = Vec::new();
    for line in text.lines().map(str::trim) {
        if line.starts_with('[') {
            in_section = line == header;
            continue;
        }
        if !in_section {
            continue;
        }
        if let Some(name) = line.split(['=', '.']).next().map(str::trim) {
            if crates.contains(&name) {
                deps.push(name.to_string());
            }
        }
    }
    deps
}

#[test]
fn crate_dependencies_point_the_right_way() {
    // (manifest, allowed in [dependencies], allowed in [dev-dependencies]).
    let cases: &[(&str, &[&str], &[&str])] = &[
        // fake-etcd depends on no workspace crate but the wire contract and the failpoint registry.
        // Its tests may use the shared test support, which depends on no workspace crate.
        (
            "fake-etcd/Cargo.toml",
            &["etcd-proto", "kubesim-failpoints"],
            &["etcd-proto", "kubesim-failpoints", "kubesim-testsupport"],
        ),
        // The wire contract and the failpoint registry depend on nothing of ours.
        ("fake-etcd/proto/Cargo.toml", &[], &[]),
        ("crates/failpoints/Cargo.toml", &[], &[]),
        // Test support is only ever a dev-dependency, and itself depends on nothing of ours.
        ("crates/testsupport/Cargo.toml", &[], &[]),
        // The apiserver reaches its store only through the wire API, never through fake-etcd; only its
        // tests may start a fake-etcd member in-process.
        (
            "apiserver/Cargo.toml",
            &["etcd-proto", "kubesim-failpoints"],
            &["etcd-proto", "fake-etcd", "kubesim-testsupport"],
        ),
        // The controllers reach the apiserver only through its HTTP API (the library's `ApiServer::handle` in
        // the binary), never its registry or storage, and never etcd.
        // Its end-to-end tests may start an apiserver over an in-process fake-etcd member.
        ("controllers/Cargo.toml", &["apiserver", "kubesim-failpoints"], &["kubesim-testsupport", "fake-etcd"]),
        (
            "sim/Cargo.toml",
            &["etcd-proto", "kubesim-failpoints", "fake-etcd", "apiserver", "kubesim-controllers"],
            &["kubesim-testsupport"],
        ),
        // The apiserver binary embeds a fake-etcd member by default: the only crate beside sim that may
        // depend on fake-etcd, and the library above never does.
        (
            "apiserver/binary/Cargo.toml",
            &["apiserver", "fake-etcd", "etcd-proto", "kubesim-controllers"],
            &["kubesim-testsupport"],
        ),
    ];
    for (manifest, allowed, allowed_dev) in cases {
        for (section, allowed) in [("dependencies", allowed), ("dev-dependencies", allowed_dev)] {
            for dep in workspace_deps(manifest, section) {
                assert!(allowed.contains(&dep.as_str()), "{manifest} [{section}] has {dep}; allowed: {allowed:?}");
            }
        }
    }
}

#[test]
fn every_rust_file_opens_with_a_module_doc() {
    let mut missing = Vec::new();
    for file in all_rust_files() {
        let text = fs::read_to_string(&file).unwrap();
        let first = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
        if !first.starts_with("//!") {
            missing.push(file.display().to_string());
        }
    }
    assert!(missing.is_empty(), "files without a leading //! doc saying their job: {missing:#?}");
}

/// Sources of nondeterminism the determinism rules ban (ARCHITECTURE.md, Cross-cutting concerns), and the few places allowed to use one, with why.
/// The last field says whether the ban also covers real-build test files (`#![cfg(not(madsim))]`), which
/// drive real processes and sockets and so must wait on real time; randomness stays banned everywhere.
const BANNED: &[(&str, &[(&str, &str)], bool)] = &[
    ("thread_rng", &[], true),
    ("from_entropy", &[], true),
    ("rand::random", &[], true),
    ("OsRng", &[], true),
    ("#[ignore]", &[], true),
    ("std::thread::spawn", &[], false),
    // tokio's watch channel picks a waiter shard with tokio's thread-local RNG, whose state carries over
    // between runs in one process: two runs of one seed then wake tasks in different orders.
    ("sync::watch", &[], false),
    // std's clock is real in both builds (madsim's and tokio's are simulated under --cfg madsim); any
    // line naming both `std::time` and `Instant` counts, whatever the import form.
    (
        "std::time::Instant",
        &[
            // The checker's timing test prints how long a check takes and asserts nothing on it.
            ("sim/src/checker/linearizable/timing.rs", "prints the checker's wall time"),
            // `kubesim bench` measures seeds per second on the real clock, outside any simulation.
            ("sim/src/bin/kubesim/main.rs", "benchmark timing only"),
            // `kubesim sweep` measures seeds per second and each seed's process, in the parent, which runs
            // no simulation (each seed runs in a child process).
            ("sim/src/bin/kubesim/sweep_cmd.rs", "seeds/s of child processes only"),
            // hyper's `Timer` trait names std's Instant; the timer converts it to the runtime's clock
            // (madsim's under simulation) and never reads std's.
            ("apiserver/src/endpoints/serve.rs", "hyper's Timer signature"),
        ],
        false,
    ),
    // The real binary seeds lease ids from the wall clock, as etcd does; simulations never run it.
    (
        "SystemTime",
        &[
            ("fake-etcd/src/bin/fake-etcd.rs", "real-build binary"),
            // The apiserver binary stamps objects with real time and seeds uids from it; simulations build
            // their apiservers with the simulated clock instead.
            ("apiserver/binary/src/run.rs", "real-build binary"),
            ("apiserver/binary/src/embedded.rs", "real-build binary"),
        ],
        false,
    ),
];

#[test]
fn no_nondeterminism_in_sources() {
    let root = repo_root();
    let this_file = root.join("sim/tests/tidy.rs");
    let mut found = Vec::new();
    for file in all_rust_files() {
        if file == this_file {
            continue;
        }
        let rel = file.strip_prefix(&root).unwrap().display().to_string();
        let text = fs::read_to_string(&file).unwrap();
        // Real-build tests drive real processes and sockets, and so does the shared test support crate.
        let real_build_test = (text.contains("#![cfg(not(madsim))]") && rel.contains("/tests/"))
            || rel.starts_with("crates/testsupport/");
        for (needle, allowed, in_real_tests) in BANNED {
            if allowed.iter().any(|(path, _why)| *path == rel) || (real_build_test && !in_real_tests) {
                continue;
            }
            for (n, line) in text.lines().enumerate() {
                let hit = line.contains(needle)
                    || (*needle == "std::time::Instant" && line.contains("std::time::") && line.contains("Instant"));
                if hit && !line.trim_start().starts_with("//") {
                    found.push(format!("{rel}:{}: {needle}", n + 1));
                }
            }
        }
        // Every select! must be biased: tokio picks unbiased branches with a process-global RNG.
        let selects = text.matches("select! {").count();
        let biased = text.matches("biased;").count();
        if selects > biased {
            found.push(format!("{rel}: {selects} select! but {biased} biased;"));
        }
    }
    assert!(found.is_empty(), "nondeterminism hazards (ARCHITECTURE.md, Determinism): {found:#?}");
}

/// Every crate of the workspace: its directory, and where its library sources are.
const CRATES: &[&str] = &[
    "crates/failpoints",
    "crates/testsupport",
    "fake-etcd",
    "fake-etcd/proto",
    "apiserver",
    "apiserver/binary",
    "controllers",
    "sim",
    "fuzz",
];

#[test]
fn no_module_cycles_inside_a_crate() {
    let mut found = Vec::new();
    for krate in CRATES {
        let src = repo_root().join(krate).join("src");
        found.extend(structure::cycles(&structure::Crate::read(&src)));
    }
    assert!(found.is_empty(), "module cycles (move the shared item where both sides can depend on it): {found:#?}");
}

#[test]
fn no_folder_cycles_inside_a_crate() {
    let mut found = Vec::new();
    for krate in CRATES {
        let src = repo_root().join(krate).join("src");
        found.extend(
            structure::folder_cycles(&structure::Crate::read(&src)).into_iter().map(|c| format!("{krate}: {c}")),
        );
    }
    assert!(found.is_empty(), "folder cycles (a folder is a layer: move what both sides need below both): {found:#?}");
}

#[test]
fn no_path_attribute_leaves_its_crate() {
    let mut found = Vec::new();
    for file in all_rust_files() {
        let text = fs::read_to_string(&file).unwrap();
        // The crate a file belongs to is the deepest crate directory above it.
        let krate = CRATES
            .iter()
            .map(|c| repo_root().join(c))
            .filter(|c| file.starts_with(c))
            .max_by_key(|c| c.as_os_str().len());
        if let Some(krate) = krate {
            found.extend(structure::paths_leaving_crate(&file, &text, &krate));
        }
    }
    assert!(
        found.is_empty(),
        "#[path] across crates hides a dependency; share it through kubesim-testsupport: {found:#?}"
    );
}

#[test]
fn no_source_file_over_800_lines() {
    let found = structure::oversized(&repo_root(), &all_rust_files());
    assert!(found.is_empty(), "files over {} lines (cut them along their seams): {found:#?}", structure::MAX_LINES);
}

/// Words that cite the team's documents outside the repository; the repository must stand alone, so code,
/// docs and scenarios cite upstream issues and this repository's files instead.
const OUTSIDE_CITATIONS: &[&str] = &["DESIGN.md", "races-catalog", "shared/reference", "apiserver-semantics.md"];

fn text_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        if path.is_dir() {
            if name != "target" && !name.starts_with('.') || name == ".cargo" || name == ".ci" {
                text_files(&path, out);
            }
        } else if ["rs", "md", "toml", "sh", "txt"].iter().any(|e| name.ends_with(&format!(".{e}"))) || name == "run" {
            out.push(path);
        }
    }
}

#[test]
fn nothing_cites_documents_outside_the_repository() {
    let mut files = Vec::new();
    text_files(&repo_root(), &mut files);
    let this_file = repo_root().join("sim/tests/tidy.rs");
    let mut found = Vec::new();
    for file in files.into_iter().filter(|f| *f != this_file) {
        let text = fs::read_to_string(&file).unwrap_or_default();
        for (n, line) in text.lines().enumerate() {
            if let Some(word) = OUTSIDE_CITATIONS.iter().find(|w| line.contains(*w)) {
                found.push(format!("{}:{}: {word}", file.strip_prefix(repo_root()).unwrap().display(), n + 1));
            }
        }
    }
    assert!(found.is_empty(), "cite upstream issues and this repository's files instead: {found:#?}");
}

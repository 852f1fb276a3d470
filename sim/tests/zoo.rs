//! The bug zoo (`scenarios/zoo/`), as the README promises it: `kubesim zoo` runs every entry over seeds
//! 1..=100 with its switch on, each entry must be caught on some seed (its scenario still shows its race),
//! and the README's table is exactly that output, catch rates included, so a scenario or component change
//! that moves a rate fails here until the README says so. That every entry passes with its switch off is
//! the scenarios test's job: zoo files are scenarios like any other, run over their default seeds there.
//!
//! The rates are deterministic (each seed replays exactly), so the equality is exact.
#![cfg(madsim)]

use std::path::Path;
use std::process::Command;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("sim/ is in the workspace root")
}

#[test]
fn every_zoo_entry_is_caught_and_the_readme_shows_the_rates() {
    let out = Command::new(env!("CARGO_BIN_EXE_kubesim"))
        .current_dir(root())
        .args(["zoo", "scenarios/zoo", "--seeds", "100"])
        .output()
        .expect("run kubesim zoo");
    let table = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "an entry was never caught with its switch on ({}):\n{table}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    let readme = std::fs::read_to_string(root().join("README.md")).expect("README.md");
    assert!(
        readme.contains(&table),
        "README.md's bug zoo table differs from `cargo kubesim zoo`; replace it with:\n{table}"
    );
}

#[test]
fn a_zoo_entry_that_no_longer_shows_its_race_fails_the_zoo() {
    // A passing scenario made a zoo entry of a switch it never exercises: never caught, exit code 1.
    let dir = tempfile::tempdir().expect("a temporary directory");
    let text = std::fs::read_to_string(root().join("sim/tests/data/put-then-get.toml")).expect("the data file");
    let entry = text.replacen("[scenario]\n", "[scenario]\nbug = \"skip-sync\"\nrace = \"lost writes\"\n", 1);
    assert_ne!(entry, text, "put-then-get.toml has a [scenario] table to extend");
    std::fs::write(dir.path().join("never-caught.toml"), entry).expect("write the entry");
    let out = Command::new(env!("CARGO_BIN_EXE_kubesim"))
        .current_dir(root())
        .args(["zoo", &dir.path().display().to_string(), "--seeds", "3"])
        .output()
        .expect("run kubesim zoo");
    assert_eq!(out.status.code(), Some(1), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stdout).contains("| lost writes | etcd #14370 |"));
    assert!(String::from_utf8_lossy(&out.stderr).contains("never caught `skip-sync` in 3 seeds"));
}

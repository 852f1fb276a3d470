//! The README's main job stays true: `cargo kubesim run scenarios/watch-across-compaction.toml`, as the
//! README shows it, prints the README's lines in the README's order (its `...` stand for lines left out),
//! down to the trace hash. A change that moves the trace fails here until the README shows the new run.
#![cfg(madsim)]

use std::path::Path;
use std::process::Command;

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
    let out = Command::new(env!("CARGO_BIN_EXE_kubesim")).current_dir(&root).args(["run", &file]).output().unwrap();
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

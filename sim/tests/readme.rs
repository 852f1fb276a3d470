//! The README's generated parts stay true: its table of bug switches is exactly what `kubesim bugs`
//! prints from the components' declarations, so a switch added, renamed or reworded in code fails here
//! until the README shows it.
#![cfg(not(madsim))]

use std::path::Path;

#[test]
fn the_readme_lists_every_bug_switch_as_the_code_declares_it() {
    let readme = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../README.md")).unwrap();
    let table = sim::bugs::markdown_table();
    assert!(
        readme.contains(&table),
        "README.md's bug switch table differs from the declarations; replace it with `cargo kubesim bugs`:\n{table}"
    );
}

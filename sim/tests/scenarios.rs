//! `cargo sim-test --test scenarios`: every file under `scenarios/` over its default seeds, one test per
//! (file, seed), each run twice with the traces compared byte for byte, the canonical seed's outcome held
//! to `snapshots/<scenario>.snap` (`sim::testing`, which users' own scenario folders use the same way).
//! `KUBESIM_SEED=N` pins one seed; a name filter after `--` picks scenarios (`-- zoo/`, `-- watch-across`).

#[cfg(madsim)]
fn main() -> std::process::ExitCode {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("sim/ is in the workspace root");
    sim::testing::Suite::new(root).main()
}

#[cfg(not(madsim))]
fn main() {}

//! What every benchmark's `main` reads first: whether `cargo bench` runs it (`--bench`, or a plain test run
//! of the bench target without it) and how long each measurement lasts (`KUBESIM_BENCH_SECS`; 3 s under
//! `cargo bench`, 0.2 s otherwise). Shared by fake-etcd's and the apiserver's benchmarks.

/// How a benchmark run was asked for.
pub struct BenchRun {
    /// `cargo bench` (full sizes), rather than `cargo test` building the bench target (small sizes).
    pub benchmarking: bool,
    /// Seconds per measurement.
    pub secs: f64,
}

/// Reads the command line and `KUBESIM_BENCH_SECS`, and says so when the build is not optimized.
pub fn bench_run() -> BenchRun {
    if cfg!(debug_assertions) {
        println!("note: built without optimizations (run through `cargo bench` for release figures)");
    }
    let benchmarking = std::env::args().any(|a| a == "--bench");
    let default_secs = if benchmarking { 3.0 } else { 0.2 };
    let secs = std::env::var("KUBESIM_BENCH_SECS")
        .ok()
        .map_or(default_secs, |s| s.parse::<f64>().expect("KUBESIM_BENCH_SECS"));
    BenchRun { benchmarking, secs }
}

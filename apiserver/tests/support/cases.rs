//! Running table-driven cases: each case under a time limit, a panic caught and turned into a failure line,
//! and one assertion at the end that lists every failed case. Shared by the conformance and registry suites.

use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::time::Duration;

use futures::FutureExt;

/// The longest a case may take; a watch that never delivers must fail, not hang.
pub const CASE_TIMEOUT: Duration = Duration::from_secs(30);

/// Runs one case; `Some(line)` says how it failed.
pub async fn run_case(name: &str, case: impl Future<Output = ()>) -> Option<String> {
    match tokio::time::timeout(CASE_TIMEOUT, AssertUnwindSafe(case).catch_unwind()).await {
        Ok(Ok(())) => None,
        Ok(Err(panic)) => Some(format!("{name}: {}", panic_text(&panic))),
        Err(_) => Some(format!("{name}: timed out after {CASE_TIMEOUT:?}")),
    }
}

/// Fails with every failure line, after saying how many cases ran.
pub fn assert_all_passed(suite: &str, total: usize, failures: &[String]) {
    eprintln!("{suite}: {total} cases, {} failed", failures.len());
    assert!(failures.is_empty(), "{suite}: {} of {total} cases failed:\n{}", failures.len(), failures.join("\n"));
}

fn panic_text(panic: &Box<dyn std::any::Any + Send>) -> String {
    panic
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_else(|| "panic".into())
}

//! The endpoints beside the API: `/version`, the health checks (`/healthz`, `/livez`, `/readyz`, each with
//! `?verbose`, `?exclude=NAME` and `/NAME` for one check) and `/metrics`, as kube-apiserver answers them
//! (k8s.io/apiserver `pkg/server/healthz`).
//!
//! Checks: `ping` (always ok), `log` (always ok), `etcd` (a read from etcd answers), and for readiness also
//! `etcd-readiness`, `informer-sync` (every watch cache has listed) and `shutdown` (not draining). A
//! failure answers 500 with every check's line and `reason withheld`, as upstream does for its public
//! endpoints.

use bytes::Bytes;
use http::{Response, StatusCode};

use crate::endpoints::query::Query;
use crate::endpoints::response::full;
use crate::endpoints::{ApiServer, Body};

/// `version.Info`, its fields in Go's order.
#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct VersionInfo<'a> {
    major: &'a str,
    minor: &'a str,
    emulation_major: &'a str,
    emulation_minor: &'a str,
    min_compatibility_major: &'a str,
    min_compatibility_minor: &'a str,
    git_version: &'a str,
    git_commit: &'a str,
    git_tree_state: &'a str,
    build_date: &'a str,
    go_version: &'a str,
    compiler: &'a str,
    platform: &'a str,
}

/// `/version`.
pub(crate) fn version(server: &ApiServer) -> Response<Body> {
    let v = &server.config.version;
    let minor_before = format!("{}", v.minor.parse::<u32>().map_or(0, |m| m.saturating_sub(1)));
    let platform = format!("{}/{}", std::env::consts::OS, go_arch(std::env::consts::ARCH));
    let doc = VersionInfo {
        major: &v.major,
        minor: &v.minor,
        emulation_major: &v.major,
        emulation_minor: &v.minor,
        min_compatibility_major: &v.major,
        min_compatibility_minor: &minor_before,
        git_version: &v.git_version,
        git_commit: "kubesim",
        git_tree_state: "clean",
        build_date: "1970-01-01T00:00:00Z",
        go_version: "none (kubesim is written in Rust)",
        compiler: "rustc",
        platform: &platform,
    };
    let body = serde_json::to_vec_pretty(&doc).expect("version serializes");
    Response::builder()
        .status(StatusCode::OK)
        .header("Content-Type", "application/json")
        .body(full(Bytes::from(body)))
        .expect("valid headers")
}

/// Go's name for an architecture (`x86_64` is `amd64`).
fn go_arch(arch: &str) -> &str {
    match arch {
        "x86_64" => "amd64",
        "aarch64" => "arm64",
        other => other,
    }
}

/// Which health endpoint a request is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Probe {
    Healthz,
    Livez,
    Readyz,
}

impl Probe {
    fn name(self) -> &'static str {
        match self {
            Probe::Healthz => "healthz",
            Probe::Livez => "livez",
            Probe::Readyz => "readyz",
        }
    }

    fn checks(self) -> &'static [&'static str] {
        match self {
            Probe::Healthz | Probe::Livez => &["ping", "log", "etcd", SYSTEM_NAMESPACES_HOOK],
            Probe::Readyz => {
                &["ping", "log", "etcd", "etcd-readiness", "informer-sync", SYSTEM_NAMESPACES_HOOK, "shutdown"]
            }
        }
    }
}

/// The post-start hook that creates the system namespaces.
const SYSTEM_NAMESPACES_HOOK: &str = "poststarthook/start-system-namespaces-controller";

async fn run_check(server: &ApiServer, check: &str) -> Result<(), String> {
    match check {
        SYSTEM_NAMESPACES_HOOK if !server.system_namespaces.load(std::sync::atomic::Ordering::SeqCst) => {
            Err("not finished".into())
        }
        "etcd" | "etcd-readiness" => server.health.etcd().await,
        "informer-sync" if !server.health.caches_synced() => Err("not all watch caches have synced".into()),
        "shutdown" if server.shutdown.draining() => Err("process is shutting down".into()),
        _ => Ok(()),
    }
}

/// `/healthz`, `/livez`, `/readyz`, or one check under them (`/readyz/etcd`); `None` for a check that
/// does not exist.
pub(crate) async fn health(
    server: &ApiServer,
    probe: Probe,
    check: Option<&str>,
    query: &Query,
) -> Option<Response<Body>> {
    if let Some(check) = check {
        let check = if check == "poststarthook" { SYSTEM_NAMESPACES_HOOK } else { check };
        if !probe.checks().contains(&check) {
            return None;
        }
        return Some(match run_check(server, check).await {
            Ok(()) => text(StatusCode::OK, "ok".into()),
            Err(err) => text(StatusCode::INTERNAL_SERVER_ERROR, format!("internal server error: {err}\n")),
        });
    }
    let excluded: Vec<String> =
        query.all("exclude").into_iter().flat_map(|e| e.split(',').map(str::to_string).collect::<Vec<_>>()).collect();
    let mut out = String::new();
    let mut failed = false;
    for check in probe.checks() {
        if excluded.iter().any(|e| e == check) {
            out.push_str(&format!("[+]{check} excluded: ok\n"));
            continue;
        }
        match run_check(server, check).await {
            Ok(()) => out.push_str(&format!("[+]{check} ok\n")),
            Err(_) => {
                failed = true;
                out.push_str(&format!("[-]{check} failed: reason withheld\n"));
            }
        }
    }
    let unknown: Vec<String> =
        excluded.iter().filter(|e| !probe.checks().contains(&e.as_str())).map(|e| format!("{e:?}")).collect();
    if !unknown.is_empty() {
        out.push_str(&format!("warn: some health checks cannot be excluded: no matches for {}\n", unknown.join(",")));
    }
    if failed {
        return Some(text(StatusCode::INTERNAL_SERVER_ERROR, format!("{out}{} check failed\n", probe.name())));
    }
    if query.first("verbose").is_none() {
        return Some(text(StatusCode::OK, "ok".into()));
    }
    Some(text(StatusCode::OK, format!("{out}{} check passed\n", probe.name())))
}

/// `/metrics`.
pub(crate) fn metrics(server: &ApiServer) -> Response<Body> {
    Response::builder()
        .status(StatusCode::OK)
        .header("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
        .body(full(Bytes::from(server.metrics.render())))
        .expect("valid headers")
}

fn text(status: StatusCode, body: String) -> Response<Body> {
    Response::builder()
        .status(status)
        .header("Content-Type", "text/plain; charset=utf-8")
        .header("X-Content-Type-Options", "nosniff")
        .body(full(Bytes::from(body)))
        .expect("valid headers")
}

//! The PyPI `kubernetes` client (37.0.2) against the binary: each test starts a fresh server that writes its
//! kubeconfig, and runs one script of `tests/python/` that loads that kubeconfig as is and checks what the
//! client sees against kube-apiserver's answers (CRUD of configmaps, namespaces, pods and deployments,
//! strategic merge patch, list paging, watches, resourceVersion semantics, the dynamic client, the HTTPS
//! kubeconfig). A script that fails fails its test with the script's transcript.
//!
//! The interpreter is `$KUBESIM_PYTHON` (scripts/test-all.sh points it at its virtualenv); without it, the
//! tests create `target/pyvenv` with the client installed, once, under a lock file.
#![cfg(not(madsim))]

mod real_clients;
#[path = "support/spawn.rs"]
mod spawn;

use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::Duration;

use real_clients::{Deadline, Server};

/// The client version the scripts are written against.
const CLIENT: &str = "kubernetes==37.0.2";
/// How long one script may run before its test fails.
const SCRIPT_LIMIT: Duration = Duration::from_secs(60);

/// The Python interpreter with the client installed.
fn python() -> &'static Path {
    static PYTHON: OnceLock<PathBuf> = OnceLock::new();
    PYTHON.get_or_init(|| match std::env::var_os("KUBESIM_PYTHON") {
        Some(path) => PathBuf::from(path),
        None => ensure_venv(),
    })
}

/// Creates `<target>/pyvenv` with the client unless it is there already; its interpreter. A lock file
/// keeps concurrent test processes from creating it at once.
fn ensure_venv() -> PathBuf {
    // CARGO_TARGET_TMPDIR is `<target dir>/tmp` for integration tests.
    let target = Path::new(env!("CARGO_TARGET_TMPDIR")).parent().expect("the target directory");
    let venv = target.join("pyvenv");
    let python = venv.join("bin").join("python");
    let lock = File::create(target.join("pyvenv.lock")).expect("the virtualenv's lock file");
    // SAFETY: flock(2) on a file descriptor this function owns; the lock is released when `lock` closes.
    let rc = unsafe { libc::flock(std::os::fd::AsRawFd::as_raw_fd(&lock), libc::LOCK_EX) };
    assert_eq!(rc, 0, "locking {}: {}", target.join("pyvenv.lock").display(), std::io::Error::last_os_error());
    if has_client(&python) {
        return python;
    }
    run(Command::new("python3").args(["-m", "venv"]).arg(&venv), "creating the virtualenv");
    run(Command::new(venv.join("bin").join("pip")).args(["install", "-q", CLIENT]), "installing the client");
    assert!(has_client(&python), "{CLIENT} is not importable from {} after installing it", python.display());
    python
}

/// Whether `python` imports the client at the expected version.
fn has_client(python: &Path) -> bool {
    let version = CLIENT.rsplit('=').next().expect("a pinned version");
    let probe = format!("import kubernetes, sys; sys.exit(kubernetes.__version__ != {version:?})");
    Command::new(python).args(["-c", &probe]).stderr(Stdio::null()).status().is_ok_and(|s| s.success())
}

fn run(command: &mut Command, what: &str) {
    let out = command.output().unwrap_or_else(|e| panic!("{what}: {e}"));
    assert!(
        out.status.success(),
        "{what} failed ({}):\n{}{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Runs `tests/python/<name>.py` against a fresh plain-HTTP server; fails with its transcript unless it
/// exits 0 after printing its final `ok`.
fn script(name: &str) {
    script_against(name, Server::start());
}

/// [`script`] against `server`.
fn script_against(name: &str, server: Server) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests").join("python").join(format!("{name}.py"));
    let mut child = Command::new(python())
        .arg(&path)
        .arg(&server.kubeconfig)
        .env("PYTHONUNBUFFERED", "1")
        .env("PYTHONDONTWRITEBYTECODE", "1")
        // The dynamic client caches discovery in the temporary directory: the test's own.
        .env("TMPDIR", server.kubeconfig.parent().expect("the kubeconfig's directory"))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("running {} {}: {e}", python().display(), path.display()));
    let stdout = reader(child.stdout.take().expect("piped"));
    let stderr = reader(child.stderr.take().expect("piped"));
    let deadline = Deadline::after(SCRIPT_LIMIT);
    let status = loop {
        if let Some(status) = child.try_wait().expect("waiting for the script") {
            break Some(status);
        }
        if deadline.passed() {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let transcript = format!(
        "--- {name}.py against {} ---\n{}{}",
        server.url,
        stdout.join().expect("stdout reader"),
        stderr.join().expect("stderr reader")
    );
    match status {
        None => panic!("{name}.py did not finish within {SCRIPT_LIMIT:?}\n{transcript}"),
        Some(status) if !status.success() => panic!("{name}.py failed ({status})\n{transcript}"),
        Some(_) => {
            assert!(transcript.trim_end().ends_with("\nok"), "{name}.py exited 0 without its final ok\n{transcript}")
        }
    }
}

/// Reads a pipe to its end on a thread, so that a chatty script never blocks on a full pipe.
fn reader(mut pipe: impl Read + Send + 'static) -> std::thread::JoinHandle<String> {
    std::thread::spawn(move || {
        let mut text = String::new();
        let _ = pipe.read_to_string(&mut text);
        text
    })
}

#[test]
fn configmaps_crud_json_patch_and_merge_patch() {
    script("configmaps");
}

#[test]
fn a_dict_patch_is_a_strategic_merge_patch() {
    script("strategic_merge_patch");
}

#[test]
fn namespaces_lifecycle() {
    script("namespaces");
}

#[test]
fn pods_defaults_updates_status_and_deletion() {
    script("pods");
}

#[test]
fn apps_v1_deployments_with_scale_and_status() {
    script("deployments");
}

#[test]
fn list_paging_with_limit_and_continue() {
    script("paging");
}

#[test]
fn watch_stream_sees_changes_made_meanwhile() {
    script("watch");
}

#[test]
fn resource_version_conflicts_and_reads() {
    script("resource_version");
}

#[test]
fn dynamic_client_discovers_and_serves_configmaps() {
    script("dynamic_client");
}

#[test]
fn server_side_apply_with_the_dynamic_client() {
    script("server_side_apply");
}

#[test]
fn custom_resources_with_the_dynamic_client() {
    script("custom_resources");
}

#[test]
fn an_https_kubeconfig_with_ca_data_and_a_token_works_as_written() {
    script_against("https", Server::start_tls());
}

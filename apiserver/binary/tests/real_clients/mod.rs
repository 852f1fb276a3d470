//! What the real-client tests (`python_client.rs`, `kube_rs.rs`) share: a running `kubesim-apiserver` on a
//! free port with the kubeconfig it wrote (over plain HTTP, or over HTTPS with a certificate from a test CA),
//! and a deadline for waits that must never hang a test.
#![cfg(not(madsim))]
// Each test binary that includes this module uses a part of it.
#![allow(dead_code)]

use std::io::BufReader;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdout};
use std::time::{Duration, Instant};

/// A running binary on an in-memory embedded etcd, killed on drop; its kubeconfig lives in a temporary
/// directory of its own, which a test may also use and which is removed on drop.
pub struct Server {
    child: Child,
    /// The server's URL, as its start-up line printed it.
    pub url: String,
    /// The kubeconfig `--write-kubeconfig` wrote.
    pub kubeconfig: PathBuf,
    pub dir: tempfile::TempDir,
    // Kept open so that the binary's later lines never meet a closed pipe.
    _stdout: BufReader<ChildStdout>,
}

impl Server {
    /// Runs the machine's kubectl with this server's kubeconfig (and a home of its own, so that no cache
    /// or config of the user's leaks in), feeding it `stdin`.
    pub fn kubectl(&self, args: &[&str], stdin: Option<&str>) -> std::process::Output {
        use std::io::Write;
        let mut child = std::process::Command::new("kubectl")
            .arg(format!("--kubeconfig={}", self.kubeconfig.display()))
            .env("HOME", self.dir.path())
            .args(args)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("kubectl runs");
        let mut input = child.stdin.take().expect("kubectl's stdin");
        input.write_all(stdin.unwrap_or("").as_bytes()).expect("writing kubectl's stdin");
        drop(input);
        child.wait_with_output().expect("kubectl ends")
    }

    /// Starts the binary with `--secure-port 0 --write-kubeconfig DIR/kubeconfig` and waits until it is ready
    /// (its bootstrap has created the system namespaces), at most 30 seconds.
    pub fn start() -> Server {
        let server = Server::spawn(tempfile::tempdir().expect("a temporary directory"), &[]);
        server.wait_ready();
        server
    }

    /// Starts the binary serving HTTPS with a certificate for 127.0.0.1 from a test CA; the kubeconfig it
    /// writes trusts that chain and carries a token. Returns once it listens: the caller waits for
    /// readiness through its own client (this module speaks no TLS).
    pub fn start_tls() -> Server {
        Server::start_tls_with(|_| Vec::new())
    }

    /// [`Server::start_tls`] with more flags, which `extra` makes given the server's directory (where it may
    /// write files the flags name: a token file, a client CA).
    pub fn start_tls_with(extra: impl FnOnce(&Path) -> Vec<std::ffi::OsString>) -> Server {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let (cert, key) = serving_certificate(dir.path());
        let more = extra(dir.path());
        let mut args: Vec<&std::ffi::OsStr> =
            vec!["--tls-cert-file".as_ref(), cert.as_os_str(), "--tls-private-key-file".as_ref(), key.as_os_str()];
        args.extend(more.iter().map(|a| a.as_os_str()));
        let server = Server::spawn(dir, &args);
        assert!(server.url.starts_with("https://"), "a TLS server's URL: {}", server.url);
        server
    }

    fn spawn(dir: tempfile::TempDir, args: &[&std::ffi::OsStr]) -> Server {
        let kubeconfig = dir.path().join("kubeconfig");
        let mut all: Vec<&std::ffi::OsStr> = vec!["--write-kubeconfig".as_ref(), kubeconfig.as_os_str()];
        all.extend_from_slice(args);
        let super::spawn::Spawned { child, url, stdout } = super::spawn::spawn(&all);
        assert!(kubeconfig.exists(), "--write-kubeconfig wrote no file at {}", kubeconfig.display());
        Server { child, url, kubeconfig, dir, _stdout: stdout }
    }

    /// Polls `/readyz` until it answers 200.
    fn wait_ready(&self) {
        let addr = self.url.trim_start_matches("http://").to_string();
        let deadline = Deadline::after(Duration::from_secs(30));
        loop {
            if http_status(&addr, "/readyz") == Some(200) {
                return;
            }
            deadline.check("the binary to become ready");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Writes a CA certificate and a serving certificate for 127.0.0.1 and localhost signed by it into `dir`:
/// the chain (serving certificate, then the CA) and the serving key, as PEM; their paths.
fn serving_certificate(dir: &Path) -> (PathBuf, PathBuf) {
    use rcgen::{
        BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair, KeyUsagePurpose,
    };
    let ca_key = KeyPair::generate().expect("a CA key");
    let mut ca = CertificateParams::new(Vec::<String>::new()).expect("CA parameters");
    ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca.distinguished_name.push(DnType::CommonName, "kubesim test CA");
    ca.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign, KeyUsagePurpose::DigitalSignature];
    let ca_cert = ca.self_signed(&ca_key).expect("the CA certificate");
    let issuer = Issuer::new(ca, ca_key);
    let key = KeyPair::generate().expect("a serving key");
    let mut serving =
        CertificateParams::new(vec!["127.0.0.1".to_string(), "localhost".to_string()]).expect("serving parameters");
    serving.distinguished_name.push(DnType::CommonName, "kubesim-apiserver");
    serving.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
    let cert = serving.signed_by(&key, &issuer).expect("the serving certificate");
    let (cert_path, key_path) = (dir.join("tls.crt"), dir.join("tls.key"));
    std::fs::write(&cert_path, cert.pem() + &ca_cert.pem()).expect("writing the certificate chain");
    std::fs::write(&key_path, key.serialize_pem()).expect("writing the key");
    (cert_path, key_path)
}

/// The status code of a plain-HTTP GET, or None if nothing answered.
fn http_status(addr: &str, path: &str) -> Option<u16> {
    use std::io::{Read, Write};
    let mut stream = std::net::TcpStream::connect(addr).ok()?;
    stream.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    write!(stream, "GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").ok()?;
    let mut answer = String::new();
    stream.read_to_string(&mut answer).ok()?;
    answer.split_whitespace().nth(1)?.parse().ok()
}

/// A point in time after which a wait fails its test with a message instead of hanging it.
pub struct Deadline {
    end: Instant,
}

impl Deadline {
    pub fn after(limit: Duration) -> Deadline {
        Deadline { end: Instant::now() + limit }
    }

    /// Whether the deadline has passed.
    pub fn passed(&self) -> bool {
        Instant::now() >= self.end
    }

    /// Panics, naming what was awaited, once the deadline has passed.
    pub fn check(&self, awaited: &str) {
        assert!(!self.passed(), "timed out waiting for {awaited}");
    }
}

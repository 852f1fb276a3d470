//! The flags, named as kube-apiserver names them where it has one.

use std::path::PathBuf;
use std::time::Duration;

use clap::Parser;

#[derive(Parser, Debug, Clone)]
#[command(
    name = "kubesim-apiserver",
    version,
    about = "kube-apiserver's REST API over an embedded fake-etcd member (default) or an external etcd"
)]
pub struct Args {
    /// The IP address on which to listen.
    #[arg(long, default_value = "127.0.0.1")]
    pub bind_address: String,
    /// The port on which to serve (HTTP, or HTTPS when --tls-cert-file is given); 0 picks a free one.
    #[arg(long, default_value_t = 6443)]
    pub secure_port: u16,
    /// etcd servers to connect with (scheme://ip:port, comma separated); without it, an embedded
    /// single-member fake-etcd serves the apiserver. Requests are spread over every server; one that fails
    /// is left until it recovers, reads are retried on the next.
    #[arg(long, value_delimiter = ',')]
    pub etcd_servers: Vec<String>,
    /// kubesim's own: how long start-up waits for one of --etcd-servers to accept a connection before it
    /// gives up, in seconds (kube-apiserver waits a minute).
    #[arg(long = "etcd-connect-wait-seconds", default_value_t = 60)]
    pub etcd_connect_wait_s: u64,
    /// The prefix to prepend to all resource paths in etcd.
    #[arg(long, default_value = "/registry")]
    pub etcd_prefix: String,
    /// The embedded fake-etcd's data directory (its state survives restarts); in memory without it.
    #[arg(long)]
    pub etcd_data_dir: Option<PathBuf>,
    /// A CIDR notation IP range from which to assign service cluster IPs.
    #[arg(long, default_value = "10.0.0.0/24")]
    pub service_cluster_ip_range: String,
    /// Amount of time to retain events (e.g. "1h", "90s").
    #[arg(long, default_value = "1h", value_parser = parse_duration)]
    pub event_ttl: Duration,
    /// Enable the watch cache.
    #[arg(long, default_value_t = true, action = clap::ArgAction::Set)]
    pub watch_cache: bool,
    /// An optional field indicating the minimum number of seconds a handler must keep a request open before
    /// timing it out (watches last between this and twice this when the client gives no timeout).
    #[arg(long, default_value_t = 1800)]
    pub min_request_timeout: u64,
    /// An optional field indicating the duration a handler must keep a request open before timing it out.
    #[arg(long, default_value = "1m", value_parser = parse_duration)]
    pub request_timeout: Duration,
    /// File containing the default x509 certificate for HTTPS (serves plain HTTP without it).
    #[arg(long)]
    pub tls_cert_file: Option<PathBuf>,
    /// File containing the default x509 private key matching --tls-cert-file.
    #[arg(long)]
    pub tls_private_key_file: Option<PathBuf>,
    /// Enables anonymous requests: a request no authenticator rejects runs as `system:anonymous` in
    /// `system:unauthenticated`.
    #[arg(long, default_value_t = true, action = clap::ArgAction::Set)]
    pub anonymous_auth: bool,
    /// A CSV file of static bearer tokens: `token,user,uid[,"group1,group2"]`.
    #[arg(long)]
    pub token_auth_file: Option<PathBuf>,
    /// A PEM bundle of certificate authorities: a client certificate signed by one authenticates as its
    /// common name, in its organizations as groups (needs --tls-cert-file).
    #[arg(long)]
    pub client_ca_file: Option<PathBuf>,
    /// Ordered list of authorizers: AlwaysAllow, AlwaysDeny, Node, RBAC (comma separated).
    #[arg(long, default_value = "AlwaysAllow")]
    pub authorization_mode: String,
    /// Admission plugins to enable beyond the default set (comma separated).
    #[arg(long, value_delimiter = ',')]
    pub enable_admission_plugins: Vec<String>,
    /// Admission plugins to disable from the default set (comma separated).
    #[arg(long, value_delimiter = ',')]
    pub disable_admission_plugins: Vec<String>,
    /// The private key service account tokens are signed with (ECDSA P-256, PEM); without it, each start
    /// draws a key of its own.
    #[arg(long)]
    pub service_account_signing_key_file: Option<PathBuf>,
    /// Public (or private) keys, PEM, whose tokens also authenticate.
    #[arg(long)]
    pub service_account_key_file: Vec<PathBuf>,
    /// The issuer (`iss`) of service account tokens, and their default audience.
    #[arg(long, default_value = apiserver::registry::tokens::DEFAULT_ISSUER)]
    pub service_account_issuer: String,
    /// The controllers to run in-process, kube-controller-manager's syntax: `*` (every controller on by
    /// default), `name` (on), `-name` (off), comma separated; the default runs them all, like a small real
    /// cluster, and an empty list (`--controllers=`) none: the bare apiserver.
    #[arg(long, value_delimiter = ',', default_value = "*")]
    pub controllers: Vec<String>,
    /// Whether the in-process controller manager takes the `kube-system/kube-controller-manager` Lease
    /// before its controllers run, as kube-controller-manager does.
    #[arg(long, default_value_t = true, action = clap::ArgAction::Set)]
    pub leader_elect: bool,
    /// Whether to run kube-scheduler's default profile in-process (leader-elected over
    /// `kube-system/kube-scheduler` when `--leader-elect` is on): pods are bound to nodes.
    #[arg(long, default_value_t = true, action = clap::ArgAction::Set, overrides_with = "scheduler")]
    pub scheduler: bool,
    /// How many simulated nodes to run in-process, as kwok simulates them (`node-1` ..): registered Nodes
    /// with heartbeats, whose kubelet stand-ins run bound pods through their phases. 0 runs none.
    #[arg(long, default_value_t = 3, overrides_with = "nodes")]
    pub nodes: usize,
    /// Write a kubeconfig for this server to PATH (kubectl, kube-rs and the Python client load it as is).
    #[arg(long)]
    pub write_kubeconfig: Option<PathBuf>,
    /// Log level: debug, info, warn, error.
    #[arg(long, default_value = "info")]
    pub log_level: String,
}

/// Parses Go-style durations: `90s`, `5m`, `1h`, `1h30m`, `500ms`.
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let mut total = Duration::ZERO;
    let mut rest = text.trim();
    if rest.is_empty() {
        return Err("empty duration".into());
    }
    while !rest.is_empty() {
        let digits = rest.find(|c: char| !c.is_ascii_digit() && c != '.').unwrap_or(rest.len());
        let (number, tail) = rest.split_at(digits);
        let value: f64 = number.parse().map_err(|_| format!("invalid duration {text:?}"))?;
        let unit_len = tail.find(|c: char| c.is_ascii_digit()).unwrap_or(tail.len());
        let (unit, tail) = tail.split_at(unit_len);
        let secs = match unit {
            "h" => value * 3600.0,
            "m" => value * 60.0,
            "s" => value,
            "ms" => value / 1000.0,
            _ => return Err(format!("invalid duration {text:?}: unknown unit {unit:?}")),
        };
        total += Duration::from_secs_f64(secs);
        rest = tail;
    }
    Ok(total)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_parse_as_go_writes_them() {
        assert_eq!(parse_duration("1h"), Ok(Duration::from_secs(3600)));
        assert_eq!(parse_duration("1h30m"), Ok(Duration::from_secs(5400)));
        assert_eq!(parse_duration("500ms"), Ok(Duration::from_millis(500)));
        assert!(parse_duration("5 days").is_err());
        assert!(parse_duration("").is_err());
    }
}

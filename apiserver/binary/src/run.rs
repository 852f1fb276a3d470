//! Start-up and shutdown: the etcd connection (embedded member or `--etcd-servers`), the server's
//! assembly, the system namespaces, the listener (plain or TLS), the start-up lines, and the drain on
//! SIGTERM or SIGINT.

use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use apiserver::admission::AdmissionConfig;
use apiserver::apis::Catalog;
use apiserver::endpoints::authn::{Authentication, ClientCa, ClientCertificates, TokenFile};
use apiserver::endpoints::serve::serve_with;
use apiserver::endpoints::ServerConfig;
use apiserver::registry::authorizer::Modes;
use apiserver::registry::services::allocator::Range;
use apiserver::registry::tokens::ServiceAccountTokens;
use apiserver::registry::user::UserInfo;
use apiserver::registry::{Clock, SystemFields};
use apiserver::server::{self, ServerOptions};
use apiserver::storage::etcd3::EtcdClient;
use clap::Parser;
use rand::SeedableRng;

use crate::args::Args;
use crate::control_plane::{Components, Tokens};
use crate::embedded::Embedded;
use crate::{kubeconfig, tls};

/// The wall clock: the real binary stamps objects with real time.
struct WallClock;

impl Clock for WallClock {
    fn now_unix_s(&self) -> i64 {
        SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs() as i64)
    }
}

pub fn main() -> std::process::ExitCode {
    let args = Args::parse();
    let filter = tracing_subscriber::EnvFilter::try_new(format!("{0},h2=warn,hyper=warn,tower=warn", args.log_level))
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr).init();
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(rt) => rt,
        Err(err) => {
            eprintln!("kubesim-apiserver: starting the runtime: {err}");
            return std::process::ExitCode::FAILURE;
        }
    };
    match runtime.block_on(run(args)) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(msg) => {
            eprintln!("kubesim-apiserver: {msg}");
            std::process::ExitCode::FAILURE
        }
    }
}

/// kube-apiserver's start-up wait for etcd: every second, a TCP dial of each endpoint (1 s timeout), until
/// one answers; after a minute it gives up (`preflight.EtcdConnection`, `etcdRetryLimit` × `etcdRetryInterval`).
async fn wait_for_etcd(endpoints: &[String], limit: Duration) -> Result<(), String> {
    let mut addresses = Vec::new();
    for url in endpoints {
        let (_, address) = apiserver::storage::etcd3::client::parse(url).map_err(|e| e.to_string())?;
        addresses.push(address);
    }
    let deadline = tokio::time::Instant::now() + limit;
    loop {
        for address in &addresses {
            let dial = tokio::net::TcpStream::connect(address.as_str());
            if let Ok(Ok(_)) = tokio::time::timeout(Duration::from_secs(1), dial).await {
                return Ok(());
            }
        }
        if tokio::time::Instant::now() >= deadline {
            return Err("error waiting for etcd connection: timed out waiting for the condition".into());
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
}

async fn run(args: Args) -> Result<(), String> {
    if args.tls_cert_file.is_some() != args.tls_private_key_file.is_some() {
        return Err("--tls-cert-file and --tls-private-key-file go together".into());
    }
    let embedded =
        if args.etcd_servers.is_empty() { Some(Embedded::start(args.etcd_data_dir.as_deref()).await?) } else { None };
    let etcd_servers = match &embedded {
        Some(e) => vec![e.endpoint.clone()],
        None => args.etcd_servers.clone(),
    };
    let seed = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_nanos() as u64);
    let client = EtcdClient::new(&etcd_servers, seed).map_err(|e| e.to_string())?;
    wait_for_etcd(&etcd_servers, Duration::from_secs(args.etcd_connect_wait_s)).await?;

    let listener = tokio::net::TcpListener::bind((args.bind_address.as_str(), args.secure_port))
        .await
        .map_err(|e| format!("listening on {}:{}: {e}", args.bind_address, args.secure_port))?;
    let addr = listener.local_addr().map_err(|e| e.to_string())?;
    if args.client_ca_file.is_some() && args.tls_cert_file.is_none() {
        return Err("--client-ca-file needs --tls-cert-file: client certificates come with TLS".into());
    }
    let tls = match (&args.tls_cert_file, &args.tls_private_key_file) {
        (Some(cert), Some(key)) => Some(tls::acceptor(cert, key, args.client_ca_file.is_some())?),
        _ => None,
    };
    let selection = controllers::runtime::selection::Selection::parse(
        &args.controllers.iter().filter(|c| !c.is_empty()).cloned().collect::<Vec<_>>(),
        &controllers::kcm::descriptors(),
    )?;
    let (authentication, admin_token, tokens) = authentication(&args, seed)?;
    let scheme = if tls.is_some() { "https" } else { "http" };
    let url = format!("{scheme}://{addr}");

    // Uids, generated names and the etcd client's first endpoint only need to differ between runs here: the
    // wall clock seeds them.
    let system = SystemFields::new(Box::new(rand_chacha::ChaCha8Rng::seed_from_u64(seed)), Arc::new(WallClock));
    let config = ServerConfig {
        min_request_timeout: Duration::from_secs(args.min_request_timeout),
        request_timeout: args.request_timeout,
        advertise_address: addr.to_string(),
        seed,
        service_account_tokens: Arc::new(service_account_tokens(&args, seed)?),
        authentication,
        authorization: Modes::parse(&args.authorization_mode).map_err(|e| format!("--authorization-mode: {e}"))?,
        admission: AdmissionConfig::from_flags(&args.enable_admission_plugins, &args.disable_admission_plugins)?,
        ..ServerConfig::default()
    };
    let options = ServerOptions {
        etcd_prefix: args.etcd_prefix.clone(),
        watch_cache: args.watch_cache,
        // Only fake-etcd is known to answer progress requests correctly; kube-apiserver trusts etcd's
        // only from 3.4.31 and 3.5.13 on, and the etcd a user points at may be older.
        request_watch_progress: embedded.is_some(),
        config,
        event_ttl_s: args.event_ttl.as_secs() as i64,
        service_cluster_ip_range: Range::parse_cidr(&args.service_cluster_ip_range)
            .map_err(|err| format!("--service-cluster-ip-range: {err}"))?,
        ..ServerOptions::default()
    };
    let server = server::build(Catalog::builtin(), client, options, system, Arc::new(WallClock));
    let bootstrap = tokio::spawn(server::bootstrap(server.clone()));
    let root_ca = tls.as_ref().map(|(_, pem)| String::from_utf8_lossy(pem).into_owned()).unwrap_or_default();
    let manager = tokio::spawn(crate::control_plane::run(
        server.clone(),
        tokens,
        selection,
        Components::of(&args),
        seed,
        root_ca,
        Arc::new(|| SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_micros() as i64)),
    ));

    if let Some(path) = &args.write_kubeconfig {
        kubeconfig::write(path, &url, tls.as_ref().map(|(_, pem)| pem.as_slice()), &admin_token)?;
    }
    let etcd_note = match &embedded {
        Some(e) => format!(
            "embedded fake-etcd at {}, {}",
            e.endpoint,
            args.etcd_data_dir.as_ref().map_or("data in memory".into(), |d| format!("data in {}", d.display()))
        ),
        None => format!("etcd at {}", etcd_servers.join(",")),
    };
    println!("kubesim-apiserver: serving on {url} ({etcd_note})");
    match &args.write_kubeconfig {
        Some(path) => println!("kubesim-apiserver: export KUBECONFIG={}", path.display()),
        None => {
            let insecure = if tls.is_some() { " --insecure-skip-tls-verify" } else { "" };
            println!("kubesim-apiserver: kubectl --server={url}{insecure} --token={admin_token} get namespaces")
        }
    }

    let shutdown = shutdown_signal();
    match tls {
        None => {
            serve_with(server.clone(), listener, shutdown, |stream, _| async move {
                Some((stream, ClientCertificates::default()))
            })
            .await
        }
        Some((acceptor, _)) => {
            serve_with(server.clone(), listener, shutdown, move |stream, peer| {
                let acceptor = acceptor.clone();
                async move {
                    match acceptor.accept(stream).await {
                        Ok(tls) => {
                            let chain = tls.get_ref().1.peer_certificates().unwrap_or_default();
                            let chain = ClientCertificates(chain.iter().map(|c| c.as_ref().to_vec()).collect());
                            Some((tls, chain))
                        }
                        Err(err) => {
                            tracing::debug!(%peer, "TLS handshake failed: {err}");
                            None
                        }
                    }
                }
            })
            .await
        }
    }
    bootstrap.abort();
    manager.abort();
    let _ = manager.await;
    // The embedded etcd stops once its clients have gone: the server's stores, caches and their watches.
    drop(server);
    if let Some(embedded) = embedded {
        if tokio::time::timeout(Duration::from_secs(5), embedded.stop()).await.is_err() {
            tracing::warn!("the embedded etcd did not stop within 5s");
        }
    }
    println!("kubesim-apiserver: stopped");
    Ok(())
}

/// The service account token keys of the flags. Without `--service-account-signing-key-file` each start
/// draws its own key, so a token outlives neither a restart nor the process (the embedded etcd does not
/// either, by default).
fn service_account_tokens(args: &Args, seed: u64) -> Result<ServiceAccountTokens, String> {
    let read =
        |path: &std::path::Path| std::fs::read_to_string(path).map_err(|e| format!("reading {}: {e}", path.display()));
    let mut tokens = match &args.service_account_signing_key_file {
        Some(path) => ServiceAccountTokens::from_pem(&read(path)?, &args.service_account_issuer)
            .map_err(|e| format!("--service-account-signing-key-file {}: {e}", path.display()))?,
        None if args.service_account_issuer != apiserver::registry::tokens::DEFAULT_ISSUER => {
            return Err("--service-account-issuer needs --service-account-signing-key-file".into())
        }
        None => ServiceAccountTokens::from_seed(seed),
    };
    for path in &args.service_account_key_file {
        tokens = tokens
            .with_verification_keys(&read(path)?)
            .map_err(|e| format!("--service-account-key-file {}: {e}", path.display()))?;
    }
    Ok(tokens)
}

/// A token drawn from the seed and a purpose.
fn token(seed: u64, purpose: u64) -> String {
    use rand::RngCore;
    let mut bytes = [0u8; 24];
    rand_chacha::ChaCha8Rng::seed_from_u64(seed ^ purpose).fill_bytes(&mut bytes);
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The authenticators of the flags, the admin token the kubeconfig carries, and the control plane's:
/// drawn from the seed, in `system:masters`, so that the kubeconfig and the components work whatever
/// `--authorization-mode` says (the controller manager as `system:kube-controller-manager`, the scheduler
/// as `system:kube-scheduler`, the simulated kubelets as `system:node:kubesim` in `system:nodes` too;
/// upstream's per-controller service accounts, their `system:controller:*` roles and the Node authorizer
/// are not modelled).
fn authentication(args: &Args, seed: u64) -> Result<(Authentication, String, Tokens), String> {
    let admin_token = token(seed, 0x6b75_6265_7369_6d00);
    let control_plane = Tokens {
        controller_manager: token(seed, 0x6b63_6d00_0000_0000),
        scheduler: token(seed, 0x7363_6865_6400_0000),
        nodes: token(seed, 0x6e6f_6465_7300_0000),
    };
    let in_masters = |name: &str| UserInfo {
        username: name.into(),
        uid: String::new(),
        groups: vec!["system:masters".into()],
        extra: Default::default(),
    };
    let mut tokens = TokenFile::single(&admin_token, in_masters("kubesim-admin"));
    tokens.extend(TokenFile::single(&control_plane.controller_manager, in_masters("system:kube-controller-manager")));
    tokens.extend(TokenFile::single(&control_plane.scheduler, in_masters("system:kube-scheduler")));
    let mut node = in_masters("system:node:kubesim");
    node.groups.insert(0, "system:nodes".into());
    tokens.extend(TokenFile::single(&control_plane.nodes, node));
    if let Some(path) = &args.token_auth_file {
        let text = std::fs::read_to_string(path).map_err(|e| format!("reading {}: {e}", path.display()))?;
        tokens.extend(TokenFile::parse(&path.display().to_string(), &text)?);
    }
    let client_ca = match &args.client_ca_file {
        Some(path) => {
            let pem = std::fs::read(path).map_err(|e| format!("reading {}: {e}", path.display()))?;
            Some(ClientCa::from_pem(&path.display().to_string(), &pem)?)
        }
        None => None,
    };
    Ok((Authentication { anonymous: args.anonymous_auth, tokens, client_ca }, admin_token, control_plane))
}

async fn shutdown_signal() {
    use tokio::signal::unix::{signal, SignalKind};
    let Ok(mut term) = signal(SignalKind::terminate()) else {
        let _ = tokio::signal::ctrl_c().await;
        return;
    };
    let name = tokio::select! {
        biased;
        _ = tokio::signal::ctrl_c() => "SIGINT",
        _ = term.recv() => "SIGTERM",
    };
    tracing::info!(signal = name, "draining");
}

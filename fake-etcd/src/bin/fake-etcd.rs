//! The `fake-etcd` binary: one member on real sockets, configured with etcd's flag names. With
//! `--initial-cluster a=URL,b=URL,...` members form a Raft cluster over their peer listeners
//! (`--listen-peer-urls`), as etcd's do.
//!
//! With `--data-dir` the member's Raft state (hard state, log, snapshot) is written and fsynced there on
//! every sync, so a member killed with SIGKILL and started again on the same directory keeps every write it
//! acknowledged (`service::member::data_dir`); without it the member keeps its state in memory and a restarted
//! process starts empty. Under `--cfg madsim` members are built by the `sim` crate instead, and this binary
//! only says so.

#[cfg(not(madsim))]
mod real {
    use std::net::{SocketAddr, ToSocketAddrs};
    use std::time::{Duration, SystemTime, UNIX_EPOCH};

    use clap::Parser;
    use fake_etcd::service::member::data_dir::{DataDir, Identity};
    use fake_etcd::service::member::identity::DEFAULT_CLUSTER_TOKEN;
    use fake_etcd::service::{serve_listener, serve_peers, Member, MemberConfig};

    #[derive(Parser, Debug)]
    #[command(name = "fake-etcd", version, about = "An etcd v3 compatible key-value server")]
    struct Args {
        /// Human-readable name for this member.
        #[arg(long, default_value = "default")]
        name: String,
        /// Path to the data directory (Raft hard state, log and snapshot); without it, state is kept in memory.
        #[arg(long)]
        data_dir: Option<std::path::PathBuf>,
        /// URLs to listen on for client traffic (comma-separated, http only).
        #[arg(long, default_value = "http://127.0.0.1:2379")]
        listen_client_urls: String,
        /// Client URLs to advertise to the rest of the cluster (defaults to the listen URLs).
        #[arg(long)]
        advertise_client_urls: Option<String>,
        /// URLs to listen on for peer traffic (used when the initial cluster has more than one member).
        #[arg(long, default_value = "http://localhost:2380")]
        listen_peer_urls: String,
        /// This member's peer URLs; with the cluster token they determine the member id, as in etcd.
        #[arg(long, default_value = "http://localhost:2380")]
        initial_advertise_peer_urls: String,
        /// Initial cluster configuration: `name=peer-url,...`, this member included.
        #[arg(long)]
        initial_cluster: Option<String>,
        /// Accepted for compatibility ("new" or "existing").
        #[arg(long, default_value = "new")]
        initial_cluster_state: String,
        #[arg(long, default_value = DEFAULT_CLUSTER_TOKEN)]
        initial_cluster_token: String,
        /// Maximum client request size in bytes the server will accept.
        #[arg(long, default_value_t = etcd_proto::DEFAULT_MAX_REQUEST_BYTES)]
        max_request_bytes: usize,
        /// Maximum number of operations permitted in a transaction.
        #[arg(long, default_value_t = fake_etcd::apply::validate::DEFAULT_MAX_TXN_OPS)]
        max_txn_ops: usize,
        /// Time (in milliseconds) for an election to time out; sets the minimum lease TTL.
        #[arg(long, default_value_t = 1000)]
        election_timeout: u64,
        /// Time (in milliseconds) of a heartbeat interval: one Raft tick.
        #[arg(long, default_value_t = 100)]
        heartbeat_interval: u64,
        /// Number of committed transactions to trigger a snapshot to disk.
        #[arg(long, default_value_t = 100_000)]
        snapshot_count: u64,
        /// Enable the Raft pre-vote algorithm to prevent disruption when a partitioned member rejoins.
        #[arg(long, default_value_t = false)]
        pre_vote: bool,
        /// Whether a starting member fast-forwards its election clock once its peers are reachable, to speed
        /// up the first election ("--initial-election-tick-advance=false" turns it off, as in etcd).
        #[arg(long, default_value_t = true, action = clap::ArgAction::Set, num_args = 0..=1, default_missing_value = "true")]
        initial_election_tick_advance: bool,
        /// Duration of periodic watch progress notifications (e.g. "10m", "500ms").
        #[arg(long, default_value = "10m")]
        experimental_watch_progress_notify_interval: humantime::Duration,
        /// The bcrypt cost of password hashes (4 to 31).
        #[arg(long, default_value_t = fake_etcd::auth::password::DEFAULT_BCRYPT_COST)]
        bcrypt_cost: u32,
        /// Seconds a simple auth token lives after its last use.
        #[arg(long, default_value_t = fake_etcd::auth::SIMPLE_TOKEN_TTL_S as u64)]
        auth_token_ttl: u64,
        /// Log level: debug, info, warn, error.
        #[arg(long, default_value = "info")]
        log_level: String,
        /// Accepted for compatibility; fake-etcd always logs through `tracing`.
        #[arg(long)]
        logger: Option<String>,
    }

    fn split_urls(list: &str) -> Vec<String> {
        list.split(',').map(|s| s.trim().to_string()).filter(|s| !s.is_empty()).collect()
    }

    /// Resolves an etcd listen URL (`http://host:port`) to socket addresses.
    fn listen_addrs(url: &str) -> Result<Vec<SocketAddr>, String> {
        let rest = url.strip_prefix("http://").ok_or_else(|| {
            if url.starts_with("https://") {
                format!("listen URL {url:?}: TLS is not supported by fake-etcd; use http://")
            } else {
                format!("listen URL {url:?} must start with http://")
            }
        })?;
        let host_port = rest.trim_end_matches('/');
        let addrs: Vec<SocketAddr> =
            host_port.to_socket_addrs().map_err(|e| format!("listen URL {url:?}: {e}"))?.collect();
        // "localhost" resolves to both families; etcd listens on the first, and so do we.
        addrs.into_iter().next().map(|a| vec![a]).ok_or_else(|| format!("listen URL {url:?} resolves to nothing"))
    }

    /// The initial cluster as (name, peer URLs, client URLs) per member, in the order first named. Checks what
    /// etcd checks at start-up: this member is listed, with exactly the peer URLs it advertises.
    fn initial_cluster(
        args: &Args,
        peer_urls: &[String],
        client_urls: &[String],
    ) -> Result<Vec<(String, Vec<String>, Vec<String>)>, String> {
        let Some(spec) = &args.initial_cluster else {
            return Ok(vec![(args.name.clone(), peer_urls.to_vec(), client_urls.to_vec())]);
        };
        let mut members: Vec<(String, Vec<String>, Vec<String>)> = Vec::new();
        for entry in spec.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            let (name, url) = entry
                .split_once('=')
                .ok_or_else(|| format!("--initial-cluster entry {entry:?} is not of the form name=url"))?;
            if !url.starts_with("http://") {
                return Err(format!("--initial-cluster entry {entry:?}: peer URLs must start with http://"));
            }
            match members.iter_mut().find(|m| m.0 == name) {
                Some(m) => m.1.push(url.to_string()),
                None => members.push((name.to_string(), vec![url.to_string()], Vec::new())),
            }
        }
        let Some(mine) = members.iter_mut().find(|m| m.0 == args.name) else {
            return Err(format!(
                "couldn't find local name {:?} in the initial cluster configuration {spec:?}",
                args.name
            ));
        };
        let mut listed_sorted = mine.1.clone();
        listed_sorted.sort();
        let mut advertised = peer_urls.to_vec();
        advertised.sort();
        if listed_sorted != advertised {
            return Err(format!(
                "--initial-cluster has {}={:?} but --initial-advertise-peer-urls is {:?}; they must match",
                args.name, mine.1, peer_urls
            ));
        }
        mine.2 = client_urls.to_vec();
        let mut all_urls: Vec<&String> = members.iter().flat_map(|m| &m.1).collect();
        all_urls.sort();
        if let Some(w) = all_urls.windows(2).find(|w| w[0] == w[1]) {
            return Err(format!("--initial-cluster names peer URL {} for more than one member", w[0]));
        }
        Ok(members)
    }

    pub fn main() -> std::process::ExitCode {
        let args = Args::parse();
        let filter = tracing_subscriber::EnvFilter::try_new(format!("fake_etcd={0},{0}", args.log_level))
            .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
        tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr).init();
        match run(args) {
            Ok(()) => std::process::ExitCode::SUCCESS,
            Err(msg) => {
                eprintln!("fake-etcd: {msg}");
                std::process::ExitCode::FAILURE
            }
        }
    }

    fn run(args: Args) -> Result<(), String> {
        let listen = split_urls(&args.listen_client_urls);
        let mut addrs = Vec::new();
        for url in &listen {
            addrs.extend(listen_addrs(url)?);
        }
        if addrs.is_empty() {
            return Err("--listen-client-urls names no URL".to_string());
        }
        let advertise = args.advertise_client_urls.as_deref().map(split_urls).unwrap_or_else(|| listen.clone());
        let peer_urls = split_urls(&args.initial_advertise_peer_urls);
        let cluster = initial_cluster(&args, &peer_urls, &advertise)?;
        let multi = cluster.len() > 1;
        let mut peer_addrs = Vec::new();
        if multi {
            for url in split_urls(&args.listen_peer_urls) {
                peer_addrs.extend(listen_addrs(&url)?);
            }
            if peer_addrs.is_empty() {
                return Err("--listen-peer-urls names no URL".to_string());
            }
        }

        let mut config = MemberConfig::member_of(&args.name, &cluster, &args.initial_cluster_token)?;
        config.max_request_bytes = args.max_request_bytes;
        config.max_txn_ops = args.max_txn_ops;
        if !(4..=31).contains(&args.bcrypt_cost) {
            return Err(format!("--bcrypt-cost must be between 4 and 31, got {}", args.bcrypt_cost));
        }
        config.bcrypt_cost = args.bcrypt_cost;
        config.auth_token_ttl_s = args.auth_token_ttl as i64;
        config.election_timeout = Duration::from_millis(args.election_timeout);
        config.progress_notify_interval = *args.experimental_watch_progress_notify_interval;
        // The real build's lease ids are seeded from the wall clock, as etcd's are, so that a restarted
        // member does not reuse ids; simulations seed them from simulated time instead.
        let start_ms = SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_millis() as u64).unwrap_or(0);

        if args.heartbeat_interval == 0 || args.election_timeout < 5 * args.heartbeat_interval {
            return Err(format!(
                "--election-timeout[{}ms] should be at least 5 times as --heartbeat-interval[{}ms]",
                args.election_timeout, args.heartbeat_interval
            ));
        }
        config.raft.tick_interval = Duration::from_millis(args.heartbeat_interval);
        config.raft.election_tick = (args.election_timeout / args.heartbeat_interval) as usize;
        // Members started together must not all time out together: spread the fixed timeout over
        // [election_tick, 2 * election_tick) by the start time, as raft-rs would by chance.
        config.raft.election_timeout_tick = config.raft.election_tick + (start_ms as usize % config.raft.election_tick);
        // The later timeouts come from a stream seeded by the start time and the member's id, so that
        // members started in the same millisecond still draw apart.
        config.raft.election_seed = start_ms ^ config.member_id.0.rotate_left(32);
        config.raft.pre_vote = args.pre_vote;
        config.raft.initial_election_tick_advance = args.initial_election_tick_advance;
        config.raft.snapshot_threshold_entries = args.snapshot_count.max(1);
        if let Some(dir) = &args.data_dir {
            let identity = Identity { member: config.member_id, cluster: config.cluster_id };
            config.disk = DataDir::open(dir, identity).map_err(|e| e.to_string())?;
        }
        // Role changes go to the log, as etcd logs "elected leader".
        config.observer = fake_etcd::service::RaftObserver::new(|line| tracing::info!("raft: {line}"));

        // One thread, as the member's work is serialized by its lock anyway: every request and the Raft loop
        // would otherwise hop between worker threads, and those wakeups cost more than the work (measured
        // with `cargo bench -p fake-etcd --bench vs_etcd`: 16-client puts went from 12k to 18k ops/s).
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| format!("starting the runtime: {e}"))?;
        runtime.block_on(async move {
            let member = Member::new(config, start_ms).map_err(|e| format!("starting the member: {e}"))?;
            let c = member.config();
            tracing::info!(
                name = %c.name, member_id = %c.member_id, cluster_id = format!("{:x}", c.cluster_id.0),
                data_dir = args.data_dir.as_ref().map_or("(in memory)".into(), |d| d.display().to_string()),
                "starting fake-etcd"
            );
            let (stop_tx, _) = tokio::sync::broadcast::channel::<()>(1);
            let mut servers = Vec::new();
            for addr in addrs {
                let mut stop = stop_tx.subscribe();
                let member = member.clone();
                tracing::info!(%addr, "serving client requests");
                servers.push(tokio::spawn(async move {
                    let listener =
                        tokio::net::TcpListener::bind(addr).await.map_err(|e| format!("serving on {addr}: {e}"))?;
                    serve_listener(member, listener, async move {
                        let _ = stop.recv().await;
                    })
                    .await
                    .map_err(|e| format!("serving on {addr}: {e}"))
                }));
            }
            for addr in peer_addrs {
                let mut stop = stop_tx.subscribe();
                let member = member.clone();
                tracing::info!(%addr, "serving peer traffic");
                servers.push(tokio::spawn(async move {
                    serve_peers(member, addr, async move {
                        let _ = stop.recv().await;
                    })
                    .await
                    .map_err(|e| format!("serving peers on {addr}: {e}"))
                }));
            }
            let signal = shutdown_signal();
            tokio::pin!(signal);
            let mut first_error = None;
            tokio::select! {
                biased;
                sig = &mut signal => tracing::info!(signal = sig, "shutting down"),
                res = futures::future::select_all(servers.iter_mut()) => {
                    first_error = Some(match res.0 {
                        Ok(Ok(())) => "a server stopped unexpectedly".to_string(),
                        Ok(Err(e)) => e,
                        Err(e) => format!("a server task failed: {e}"),
                    });
                }
            }
            let _ = stop_tx.send(());
            for s in servers {
                let _ = s.await;
            }
            first_error.map_or(Ok(()), Err)
        })
    }

    async fn shutdown_signal() -> &'static str {
        use tokio::signal::unix::{signal, SignalKind};
        let mut term = match signal(SignalKind::terminate()) {
            Ok(s) => s,
            Err(_) => {
                let _ = tokio::signal::ctrl_c().await;
                return "SIGINT";
            }
        };
        tokio::select! {
            biased;
            _ = tokio::signal::ctrl_c() => "SIGINT",
            _ = term.recv() => "SIGTERM",
        }
    }
}

#[cfg(not(madsim))]
fn main() -> std::process::ExitCode {
    real::main()
}

#[cfg(madsim)]
fn main() {
    eprintln!("fake-etcd: this binary serves real sockets; under --cfg madsim members are built by the sim crate");
    std::process::exit(2);
}

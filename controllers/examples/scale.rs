//! A measurement, not a test: how long the control plane takes to bring a Deployment of N replicas up over
//! M simulated nodes, in this process, as the `kubesim-apiserver` binary runs it (an apiserver over an
//! embedded fake-etcd member, the controller manager's controllers, the scheduler and a node fleet, each
//! with its own informers, reached through `ApiServer::handle`). It prints the progress every few seconds
//! and then the wall time until every replica is available, and the process's peak RSS.
//!
//! `cargo run --release -p kubesim-controllers --example scale -- [replicas] [nodes] [controllers]`, where
//! `controllers` is `--controllers`' list (default `*`, every controller; `replicaset,deployment` for only
//! the two the rollout needs).

#[cfg(not(madsim))]
fn main() {
    scale::main();
}

#[cfg(madsim)]
fn main() {
    eprintln!(
        "the scale measurement runs a real apiserver on real sockets; it has nothing to do in the simulation build"
    );
}

#[cfg(not(madsim))]
mod scale {
    use std::sync::Arc;
    use std::sync::OnceLock;
    use std::time::Duration;

    // Real time in this build, as the benches measure it; std's clock is banned from sources by sim/tests/tidy.rs.
    use tokio::time::Instant;

    use apiserver::apis::Catalog;
    use apiserver::registry::system::{Clock, SystemFields};
    use apiserver::server::{self, ServerOptions};
    use controllers::client::{Client, Transport};
    use controllers::manager::{self, Config, Role};
    use controllers::nodes::{self, Fleet, NodeTemplate};
    use controllers::runtime::events::Recorder;
    use controllers::runtime::informer::Informers;
    use controllers::runtime::leader::ElectorConfig;
    use controllers::runtime::selection::Selection;
    use fake_etcd::service::{serve_listener, Member, MemberConfig};
    use rand::SeedableRng;
    use serde_json::json;

    /// The time of day the run pretends to start at (2025-06-15T00:00:00Z): the clock then advances with the
    /// process's real time, so that objects' timestamps and the controllers' waits agree with tokio's timers.
    const START_UNIX_S: i64 = 1_750_000_000;

    fn started() -> Instant {
        static STARTED: OnceLock<Instant> = OnceLock::new();
        *STARTED.get_or_init(Instant::now)
    }

    /// The apiserver's clock: [`START_UNIX_S`] plus the real time since the process started.
    struct RunClock;

    impl Clock for RunClock {
        fn now_unix_s(&self) -> i64 {
            now_unix_us() / 1_000_000
        }
    }

    fn now_unix_us() -> i64 {
        START_UNIX_S * 1_000_000 + started().elapsed().as_micros() as i64
    }

    /// The process's peak resident set (`VmHWM`), as /proc shows it.
    fn peak_rss() -> String {
        std::fs::read_to_string("/proc/self/status")
            .ok()
            .and_then(|s| s.lines().find(|l| l.starts_with("VmHWM")).map(|l| l.split_whitespace().skip(1).collect()))
            .unwrap_or_default()
    }

    #[tokio::main(flavor = "multi_thread", worker_threads = 2)]
    pub async fn main() {
        started();
        let args: Vec<String> = std::env::args().skip(1).collect();
        let replicas: u64 = args.first().and_then(|a| a.parse().ok()).unwrap_or(1000);
        let node_count: usize = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(10);
        let gates: Vec<String> =
            args.get(2).map_or_else(|| vec!["*".into()], |g| g.split(',').map(String::from).collect());
        let selection = Selection::parse(&gates, &controllers::kcm::descriptors()).expect("known controllers");

        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("a loopback port");
        let endpoint = format!("http://{}", listener.local_addr().expect("a bound address"));
        let config =
            MemberConfig::single("scale", vec!["http://127.0.0.1:2380".into()], vec![endpoint.clone()], "scale");
        let member = Member::new(config, 0).expect("a fresh member opens");
        tokio::spawn(serve_listener(member, listener, std::future::pending()));
        let etcd = apiserver::storage::etcd3::EtcdClient::new(&[endpoint], 7).expect("a valid endpoint");
        let system = SystemFields::new(Box::new(rand_chacha::ChaCha8Rng::seed_from_u64(7)), Arc::new(RunClock));
        let server = server::build(Catalog::builtin(), etcd, ServerOptions::default(), system, Arc::new(RunClock));
        server::bootstrap(server.clone()).await;
        assert!(server::wait_until_ready(&server, Duration::from_secs(30)).await, "the apiserver never got ready");

        let client = |agent: &str| Arc::new(Client::new(Transport::InProcess(server.clone()), None, agent));
        let now: Arc<dyn Fn() -> i64 + Send + Sync> = Arc::new(now_unix_us);
        let config = |role: Role, seed: u64| Config {
            role,
            leader_elect: false,
            election: ElectorConfig::new("scale"),
            seed,
            root_ca: String::new(),
            now_unix_us: now.clone(),
            observer: None,
            bugs: Default::default(),
        };
        tokio::spawn(manager::run(client("kube-controller-manager"), config(Role::ControllerManager(selection), 1)));
        tokio::spawn(manager::run(client("kube-scheduler"), config(Role::Scheduler, 2)));
        let kubelet = client("kubelet");
        let nodes_ctx = controllers::kcm::Context {
            informers: Arc::new(Informers::new(kubelet.clone(), 3)),
            events: Recorder::new(kubelet.clone(), "kubelet", now.clone()),
            client: kubelet,
            seed: 3,
            root_ca: String::new(),
            now_unix_us: now.clone(),
            bugs: Default::default(),
        };
        tokio::spawn(nodes::run(nodes_ctx, Fleet { first: 1, count: node_count, template: NodeTemplate::default() }));

        let admin = client("admin");
        loop {
            let nodes = admin.get("/api/v1/nodes").await.expect("nodes are listed");
            if nodes["items"].as_array().map_or(0, Vec::len) >= node_count {
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }

        let deployment = json!({
            "apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "big", "namespace": "default"},
            "spec": {
                "replicas": replicas,
                "selector": {"matchLabels": {"app": "big"}},
                "template": {
                    "metadata": {"labels": {"app": "big"}},
                    "spec": {"containers": [{"name": "x", "image": "x"}]},
                },
            },
        });
        let start = Instant::now();
        admin
            .create("/apis/apps/v1/namespaces/default/deployments", &deployment)
            .await
            .expect("the deployment is created");
        let path = "/apis/apps/v1/namespaces/default/deployments/big";
        let mut last_print = Instant::now();
        loop {
            let d = admin.get(path).await.expect("the deployment is read");
            let available = d.pointer("/status/availableReplicas").and_then(|v| v.as_u64()).unwrap_or(0);
            if available >= replicas {
                break;
            }
            if last_print.elapsed() >= Duration::from_secs(5) {
                let status = &d["status"];
                println!(
                    "{:>6.1}s replicas={} updated={} ready={} available={} rss_peak={}",
                    start.elapsed().as_secs_f64(),
                    status["replicas"],
                    status["updatedReplicas"],
                    status["readyReplicas"],
                    available,
                    peak_rss()
                );
                last_print = Instant::now();
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        let elapsed = start.elapsed().as_secs_f64();
        println!(
            "replicas={replicas} nodes={node_count} controllers={} available after {elapsed:.1}s ({:.1} pods/s), peak RSS {}",
            gates.join(","),
            replicas as f64 / elapsed,
            peak_rss()
        );
        std::process::exit(0);
    }
}

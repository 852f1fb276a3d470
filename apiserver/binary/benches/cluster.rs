//! The binary as a small cluster (issue 28's figures): how long a 3-replica Deployment takes from
//! `kubectl create` to `kubectl rollout status` returning, and how long 10,000 pods take to be scheduled,
//! run and become available over 100 simulated nodes, with the process's peak memory. The real
//! `kubesim-apiserver` process runs its controllers, scheduler and nodes (`--nodes N`) on loopback; the
//! rollout is driven by kubectl 1.32 as a user drives it, the large Deployment by HTTP requests.
//!
//! Run: `cargo bench -p kubesim-apiserver --bench cluster` (`KUBESIM_BENCH_PODS` and `KUBESIM_BENCH_NODES`
//! set the large run's size, default 10,000 over 100; `KUBESIM_BENCH_LIMIT_S` how long it may take before
//! the bench reports how far it got, default 900; `KUBESIM_BENCH_ONLY=rollout,scale` picks sections).
//! Without cargo bench's `--bench` argument every measurement runs once on small sizes, to check that it
//! works. No timing is asserted.

#[cfg(not(madsim))]
fn main() {
    bench::main();
}

#[cfg(madsim)]
fn main() {
    eprintln!(
        "the cluster benchmark runs real processes on real sockets; it has nothing to do in the simulation build"
    );
}

#[cfg(not(madsim))]
mod bench {
    use std::io::{BufRead, BufReader};
    use std::path::{Path, PathBuf};
    use std::process::{Child, Command, Output, Stdio};
    use std::time::Duration;

    use kubesim_testsupport::{bench_run, BenchRun};
    use serde_json::{json, Value};
    // Real time in this build; std's clock is banned from sources by sim/tests/tidy.rs.
    use tokio::time::Instant;

    /// A running apiserver process with its kubeconfig, killed on drop.
    struct Cluster {
        url: String,
        kubeconfig: PathBuf,
        child: Child,
        _dir: tempfile::TempDir,
        /// Its standard output, kept open: the process writes to it again when it stops.
        _stdout: BufReader<std::process::ChildStdout>,
    }

    impl Drop for Cluster {
        fn drop(&mut self) {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }

    impl Cluster {
        /// Starts the binary with its defaults (every controller, the scheduler) and `nodes` simulated
        /// nodes; returns once `/readyz` answers and every node is Ready.
        fn start(nodes: usize) -> Cluster {
            let dir = tempfile::tempdir().expect("a temporary directory");
            let kubeconfig = dir.path().join("kubeconfig");
            let mut child = Command::new(env!("CARGO_BIN_EXE_kubesim-apiserver"))
                .args(["--secure-port", "0", "--log-level", "error", "--nodes", &nodes.to_string()])
                .arg("--write-kubeconfig")
                .arg(&kubeconfig)
                .stdout(Stdio::piped())
                .stderr(Stdio::null())
                .spawn()
                .expect("the apiserver starts");
            let mut first = String::new();
            let mut stdout = BufReader::new(child.stdout.take().expect("piped stdout"));
            stdout.read_line(&mut first).expect("a start-up line");
            let url = first
                .split([' ', ',', '(', ')'])
                .find(|w| w.starts_with("http://"))
                .unwrap_or_else(|| panic!("no server URL in {first:?}"))
                .to_string();
            let cluster = Cluster { url, kubeconfig, child, _dir: dir, _stdout: stdout };
            cluster.wait_for("nodes to be Ready", Duration::from_secs(120), |c| {
                let nodes_ready = c
                    .get("/api/v1/nodes")
                    .and_then(|list| list.get("items").and_then(Value::as_array).cloned())
                    .map(|items| items.iter().filter(|n| node_ready(n)).count());
                (nodes_ready == Some(nodes)).then_some(())
            });
            cluster
        }

        fn kubectl(&self, args: &[&str]) -> Output {
            Command::new("kubectl")
                .arg(format!("--kubeconfig={}", self.kubeconfig.display()))
                .env("HOME", self.kubeconfig.parent().unwrap_or(Path::new("/tmp")))
                .args(args)
                .output()
                .expect("kubectl runs")
        }

        /// `GET path` over the kubeconfig's credentials, through kubectl's raw mode; `None` on any error.
        fn get(&self, path: &str) -> Option<Value> {
            let out = self.kubectl(&["get", "--raw", path]);
            out.status.success().then(|| serde_json::from_slice(&out.stdout).ok()).flatten()
        }

        fn wait_for<T>(&self, what: &str, limit: Duration, check: impl Fn(&Cluster) -> Option<T>) -> T {
            let started = Instant::now();
            loop {
                if let Some(value) = check(self) {
                    return value;
                }
                assert!(started.elapsed() < limit, "{what} within {limit:?} ({})", self.url);
                std::thread::sleep(Duration::from_millis(50));
            }
        }

        /// The process's peak resident memory (`VmHWM`), in MiB.
        fn peak_rss_mib(&self) -> f64 {
            let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).unwrap_or_default();
            let kib: f64 = status
                .lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .and_then(|v| v.split_whitespace().next()?.parse().ok())
                .unwrap_or(0.0);
            kib / 1024.0
        }
    }

    fn node_ready(node: &Value) -> bool {
        node.pointer("/status/conditions")
            .and_then(Value::as_array)
            .is_some_and(|conditions| conditions.iter().any(|c| c["type"] == "Ready" && c["status"] == "True"))
    }

    pub fn main() {
        let BenchRun { benchmarking, .. } = bench_run();
        let env = |name: &str, default: usize| std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default);
        let (rollouts, pods, nodes) = if benchmarking {
            (10, env("KUBESIM_BENCH_PODS", 10_000), env("KUBESIM_BENCH_NODES", 100))
        } else {
            (1, 60, 3)
        };
        let limit = Duration::from_secs(env("KUBESIM_BENCH_LIMIT_S", 900) as u64);
        let only = std::env::var("KUBESIM_BENCH_ONLY").unwrap_or_default();
        let wanted = |section: &str| only.is_empty() || only.split(',').any(|s| s == section);
        println!("cluster: load average at start {}", load_average());
        if wanted("rollout") {
            rollout(rollouts);
        }
        if wanted("scale") {
            scale(pods, nodes, limit);
        }
        println!("cluster: load average at end {}", load_average());
    }

    fn load_average() -> String {
        let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
        load.split_whitespace().take(3).collect::<Vec<_>>().join(" ")
    }

    /// `kubectl create deployment` then `kubectl rollout status`, timed together, `runs` times on one
    /// cluster of three nodes (each run its own Deployment).
    fn rollout(runs: usize) {
        let cluster = Cluster::start(3);
        let mut times = Vec::new();
        for i in 0..runs {
            let name = format!("web-{i}");
            let started = Instant::now();
            let created = cluster.kubectl(&["create", "deployment", &name, "--image=nginx", "--replicas=3"]);
            assert!(created.status.success(), "{}", String::from_utf8_lossy(&created.stderr));
            let rolled = cluster.kubectl(&["rollout", "status", &format!("deployment/{name}"), "--timeout=60s"]);
            assert!(rolled.status.success(), "{}", String::from_utf8_lossy(&rolled.stderr));
            times.push(started.elapsed());
        }
        times.sort();
        let ms = |d: Duration| d.as_secs_f64() * 1e3;
        println!(
            "3-replica Deployment, kubectl create to rollout status done: median {:.0} ms, min {:.0} ms, max {:.0} ms ({runs} runs)",
            ms(times[times.len() / 2]),
            ms(times[0]),
            ms(times[times.len() - 1])
        );
    }

    /// A Deployment of `pods` replicas over `nodes` nodes: the wall time until every pod is available (or
    /// how many were after `limit`), the rate, and the process's peak memory.
    fn scale(pods: usize, nodes: usize, limit: Duration) {
        let cluster = Cluster::start(nodes);
        let deployment = json!({
            "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "big", "namespace": "default"},
            "spec": {"replicas": pods, "selector": {"matchLabels": {"app": "big"}},
                     "template": {"metadata": {"labels": {"app": "big"}},
                                  "spec": {"containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": "1m"}}}]}}}
        });
        let file = cluster.kubeconfig.with_file_name("big.json");
        std::fs::write(&file, deployment.to_string()).expect("write the manifest");
        let started = Instant::now();
        let created = cluster.kubectl(&["create", "-f", &file.display().to_string()]);
        assert!(created.status.success(), "{}", String::from_utf8_lossy(&created.stderr));
        let mut last_report = Instant::now();
        let available = loop {
            let available = cluster
                .get("/apis/apps/v1/namespaces/default/deployments/big")
                .and_then(|d| d.pointer("/status/availableReplicas").and_then(Value::as_u64))
                .unwrap_or(0) as usize;
            if available >= pods || started.elapsed() >= limit {
                break available;
            }
            if last_report.elapsed() >= Duration::from_secs(60) {
                println!(
                    "  {:.0} s: {available} of {pods} available, peak RSS {:.0} MiB",
                    started.elapsed().as_secs_f64(),
                    cluster.peak_rss_mib()
                );
                last_report = Instant::now();
            }
            std::thread::sleep(Duration::from_millis(500));
        };
        let secs = started.elapsed().as_secs_f64();
        println!(
            "{pods} pods over {nodes} nodes: {available} available after {secs:.1} s ({:.1} pods/s), peak RSS {:.0} MiB{}",
            available as f64 / secs,
            cluster.peak_rss_mib(),
            if available < pods { " (stopped at the limit)" } else { "" }
        );
    }
}

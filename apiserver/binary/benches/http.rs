//! The apiserver binary over HTTP (issue 11's figures): start-up time, request rates and latencies, a LIST
//! of 10,000 objects from the watch cache against one from etcd, and one write fanned out to 1,000
//! watchers. Each measurement runs the real `kubesim-apiserver` process on loopback, over its embedded
//! fake-etcd and over Debian's real etcd 3.4.23 (data dir on tmpfs), with the same client load.
//!
//! Run: `cargo bench -p kubesim-apiserver --bench http` (`KUBESIM_BENCH_SECS` sets the seconds per rate
//! measurement, default 3). Without cargo bench's `--bench` argument (as `cargo test --benches` runs it),
//! every measurement runs briefly on small sizes, to check that it works. No timing is asserted.

#[cfg(not(madsim))]
fn main() {
    bench::main();
}

#[cfg(madsim)]
fn main() {
    eprintln!("the http benchmark runs real processes on real sockets; it has nothing to do in the simulation build");
}

#[cfg(not(madsim))]
mod bench {
    use std::io::{BufRead, BufReader};
    use std::path::Path;
    use std::process::{Child, Command, Stdio};
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;
    use std::time::Duration;

    use bytes::Bytes;
    use http_body_util::{BodyExt, Full};
    use hyper_util::client::legacy::connect::HttpConnector;
    use hyper_util::client::legacy::Client;
    use hyper_util::rt::TokioExecutor;
    use kubesim_testsupport::{bench_run, BenchRun, RealEtcd};
    // Real time in this build; std's clock is banned from sources by sim/tests/tidy.rs.
    use tokio::time::Instant;

    type HttpClient = Client<HttpConnector, Full<Bytes>>;

    struct Settings {
        duration: Duration,
        starts: usize,
        list_objects: usize,
        watchers: usize,
        fanout_writes: usize,
    }

    /// A running apiserver process, killed on drop.
    struct Apiserver {
        url: String,
        /// The etcd it uses: its embedded member's URL, or the one it was given.
        etcd: String,
        child: Child,
        /// Its standard output, kept open: the process writes to it again when it stops.
        _stdout: BufReader<std::process::ChildStdout>,
    }

    impl Drop for Apiserver {
        fn drop(&mut self) {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }

    /// Starts the binary with `args` on a free port; returns it once `/readyz` answers 200, with the time
    /// from spawning the process to that answer.
    async fn start(client: &HttpClient, args: &[&str]) -> (Apiserver, Duration) {
        let started = Instant::now();
        // Bare (no controllers, scheduler or nodes): the figures measure the apiserver and its store, not the controllers.
        let mut child = Command::new(env!("CARGO_BIN_EXE_kubesim-apiserver"))
            .args(["--secure-port", "0", "--log-level", "error", "--controllers=", "--scheduler=false", "--nodes=0"])
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("the apiserver starts");
        let mut first = String::new();
        let mut stdout = BufReader::new(child.stdout.take().expect("piped stdout"));
        stdout.read_line(&mut first).expect("a start-up line");
        let urls: Vec<String> =
            first.split([' ', ',', '(', ')']).filter(|w| w.starts_with("http://")).map(str::to_string).collect();
        assert!(urls.len() >= 2, "no server and etcd URL in {first:?}");
        let server = Apiserver { url: urls[0].clone(), etcd: urls[1].clone(), child, _stdout: stdout };
        loop {
            if status(client, &format!("{}/readyz", server.url)).await == 200 {
                return (server, started.elapsed());
            }
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
    }

    async fn status(client: &HttpClient, url: &str) -> u16 {
        match client.get(url.parse().expect("a valid URL")).await {
            Ok(response) => {
                let code = response.status().as_u16();
                let _ = response.into_body().collect().await;
                code
            }
            Err(_) => 0,
        }
    }

    /// Sends a request and reads the whole answer; panics on a transport error or an unexpected code.
    async fn send(client: &HttpClient, method: &str, url: &str, body: Option<String>, want: u16) -> Bytes {
        let mut request = http::Request::builder().method(method).uri(url).header("Accept", "application/json");
        if body.is_some() {
            request = request.header("Content-Type", "application/json");
        }
        let request = request.body(Full::new(Bytes::from(body.unwrap_or_default()))).expect("a valid request");
        let response = client.request(request).await.expect("the request is answered");
        let code = response.status().as_u16();
        let bytes = response.into_body().collect().await.expect("the answer is read").to_bytes();
        assert_eq!(code, want, "{method} {url}: {}", String::from_utf8_lossy(&bytes));
        bytes
    }

    fn configmap(name: &str, payload: &str) -> String {
        format!(
            r#"{{"apiVersion":"v1","kind":"ConfigMap","metadata":{{"name":"{name}"}},"data":{{"payload":"{payload}"}}}}"#
        )
    }

    /// Completed requests and their latencies.
    #[derive(Default)]
    struct Measured {
        secs: f64,
        latencies: Vec<Duration>,
    }

    impl Measured {
        fn per_sec(&self) -> f64 {
            self.latencies.len() as f64 / self.secs
        }

        fn quantile_ms(&self, q: f64) -> f64 {
            let mut sorted = self.latencies.clone();
            sorted.sort();
            if sorted.is_empty() {
                return f64::NAN;
            }
            let rank = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
            sorted[rank - 1].as_secs_f64() * 1e3
        }
    }

    /// Runs `clients` loops of `op(client_index, request_index)` for `duration`.
    async fn measure<F, Fut>(clients: usize, duration: Duration, op: F) -> Measured
    where
        F: Fn(usize, usize) -> Fut + Send + Sync + 'static,
        Fut: std::future::Future<Output = ()> + Send,
    {
        let op = Arc::new(op);
        let stop = Arc::new(AtomicBool::new(false));
        let started = Instant::now();
        let mut tasks = Vec::new();
        for c in 0..clients {
            let (op, stop) = (op.clone(), stop.clone());
            tasks.push(tokio::spawn(async move {
                let mut latencies = Vec::new();
                let mut i = 0;
                while !stop.load(Ordering::Relaxed) {
                    let t = Instant::now();
                    op(c, i).await;
                    latencies.push(t.elapsed());
                    i += 1;
                }
                latencies
            }));
        }
        tokio::time::sleep(duration).await;
        stop.store(true, Ordering::Relaxed);
        let mut measured = Measured::default();
        for t in tasks {
            measured.latencies.extend(t.await.expect("a client task"));
        }
        measured.secs = started.elapsed().as_secs_f64();
        measured
    }

    pub fn main() {
        let BenchRun { benchmarking, secs } = bench_run();
        let settings = if benchmarking {
            Settings {
                duration: Duration::from_secs_f64(secs),
                starts: 20,
                list_objects: 10_000,
                watchers: 1_000,
                fanout_writes: 5,
            }
        } else {
            Settings {
                duration: Duration::from_secs_f64(secs),
                starts: 3,
                list_objects: 200,
                watchers: 20,
                fanout_writes: 2,
            }
        };
        let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("a runtime");
        runtime.block_on(run(settings));
    }

    fn load_average() -> String {
        let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
        load.split_whitespace().take(3).collect::<Vec<_>>().join(" ")
    }

    async fn run(settings: Settings) {
        let client: HttpClient = Client::builder(TokioExecutor::new()).build_http();
        println!("http: load average at start {}", load_average());
        let etcd = RealEtcd::start_in("bench", Path::new("/dev/shm"));

        // `KUBESIM_BENCH_ONLY=startup,rates,list,fanout` picks sections (all by default).
        let only = std::env::var("KUBESIM_BENCH_ONLY").unwrap_or_default();
        let wanted = |section: &str| only.is_empty() || only.split(',').any(|s| s == section);
        if wanted("startup") {
            for (label, args) in
                [("embedded fake-etcd", vec![]), ("real etcd 3.4.23", vec!["--etcd-servers", etcd.endpoint.as_str()])]
            {
                let mut times = Vec::new();
                for i in 0..settings.starts {
                    // Each start against real etcd uses a prefix of its own, so that none sees another's objects.
                    let prefix = format!("/bench-start-{i}");
                    let mut all: Vec<&str> = args.clone();
                    if !args.is_empty() {
                        all.extend(["--etcd-prefix", prefix.as_str()]);
                    }
                    let (_server, took) = start(&client, &all).await;
                    times.push(took);
                }
                let m = Measured { secs: 1.0, latencies: times };
                println!(
                    "start to /readyz 200, {label}: median {:.1} ms, p90 {:.1} ms, max {:.1} ms ({} starts)",
                    m.quantile_ms(0.5),
                    m.quantile_ms(0.9),
                    m.quantile_ms(1.0),
                    settings.starts
                );
            }
        }
        if wanted("rates") {
            for (label, args) in [
                ("fake-etcd", vec![]),
                ("etcd 3.4.23", vec!["--etcd-servers", etcd.endpoint.as_str(), "--etcd-prefix", "/bench-rates"]),
            ] {
                let (server, _) = start(&client, &args).await;
                rates(&client, &server.url, label, &settings).await;
                drop(server);
            }
        }
        if wanted("list") {
            for (label, etcd_args) in
                [("fake-etcd", vec![]), ("etcd 3.4.23", vec!["--etcd-servers", etcd.endpoint.as_str()])]
            {
                list_from_cache_and_etcd(&client, label, &etcd_args, &settings).await;
            }
        }
        if wanted("fanout") {
            fanout(&client, &settings).await;
        }
        println!("http: load average at end {}", load_average());
    }

    /// Creates, consistent gets and gets from the watch cache, with 1 and 16 clients.
    async fn rates(client: &HttpClient, url: &str, label: &str, settings: &Settings) {
        let base = format!("{url}/api/v1/namespaces/default/configmaps");
        send(client, "POST", &base, Some(configmap("target", "x")), 201).await;
        for clients in [1, 16] {
            let rows: Vec<(&str, Measured)> = vec![
                ("create", {
                    let (client, base) = (client.clone(), base.clone());
                    let tag = format!("{clients}");
                    measure(clients, settings.duration, move |c, i| {
                        let (client, base, tag) = (client.clone(), base.clone(), tag.clone());
                        async move {
                            send(&client, "POST", &base, Some(configmap(&format!("c{tag}-{c}-{i}"), "x")), 201).await;
                        }
                    })
                    .await
                }),
                ("get, consistent (resourceVersion \"\")", {
                    let (client, url) = (client.clone(), format!("{base}/target"));
                    measure(clients, settings.duration, move |_, _| {
                        let (client, url) = (client.clone(), url.clone());
                        async move {
                            send(&client, "GET", &url, None, 200).await;
                        }
                    })
                    .await
                }),
                ("get, from the watch cache (resourceVersion 0)", {
                    let (client, url) = (client.clone(), format!("{base}/target?resourceVersion=0"));
                    measure(clients, settings.duration, move |_, _| {
                        let (client, url) = (client.clone(), url.clone());
                        async move {
                            send(&client, "GET", &url, None, 200).await;
                        }
                    })
                    .await
                }),
            ];
            for (what, m) in rows {
                println!(
                    "{label:<11} {what:<46} {clients:>2} clients: {:>8.0} /s  p50 {:>7.3} ms  p99 {:>7.3} ms",
                    m.per_sec(),
                    m.quantile_ms(0.5),
                    m.quantile_ms(0.99)
                );
            }
        }
    }

    /// A LIST of `list_objects` configmaps from a server with the watch cache (resourceVersion 0) and from
    /// one without it (every list reads etcd), over the same etcd.
    async fn list_from_cache_and_etcd(client: &HttpClient, label: &str, etcd_args: &[&str], settings: &Settings) {
        let prefix = format!("/bench-list-{}", label.replace([' ', '.'], "-"));
        let mut cached_args: Vec<&str> = etcd_args.to_vec();
        cached_args.extend(["--etcd-prefix", prefix.as_str()]);
        let (cached, _) = start(client, &cached_args).await;
        let base = format!("{}/api/v1/namespaces/default/configmaps", cached.url);
        // Fill with 16 writers; each object about 1 KiB, as a typical configmap.
        let payload = "x".repeat(1000);
        let per = settings.list_objects.div_ceil(16);
        let mut writers = Vec::new();
        for w in 0..16 {
            let (client, base, payload) = (client.clone(), base.clone(), payload.clone());
            writers.push(tokio::spawn(async move {
                for i in 0..per {
                    send(&client, "POST", &base, Some(configmap(&format!("l{w}-{i}"), &payload)), 201).await;
                }
            }));
        }
        for w in writers {
            w.await.expect("a writer");
        }
        // A second server without the watch cache over the same etcd (for fake-etcd: the first server's
        // embedded member) reads every list from etcd.
        let etcd = cached.etcd.clone();
        let uncached =
            start(client, &["--etcd-servers", etcd.as_str(), "--etcd-prefix", prefix.as_str(), "--watch-cache=false"])
                .await
                .0;
        let from_cache = format!("{base}?resourceVersion=0");
        let from_etcd = format!("{}/api/v1/namespaces/default/configmaps", uncached.url);
        let bytes = send(client, "GET", &from_cache, None, 200).await.len();
        let mut rows = Vec::new();
        for (what, url) in [("from the watch cache", from_cache), ("from etcd", from_etcd)] {
            let (client, url) = (client.clone(), url.clone());
            let m = measure(1, settings.duration, move |_, _| {
                let (client, url) = (client.clone(), url.clone());
                async move {
                    send(&client, "GET", &url, None, 200).await;
                }
            })
            .await;
            rows.push((what, m));
        }
        for (what, m) in &rows {
            println!(
                "{label:<11} LIST of {} configmaps ({:.1} MB) {what:<21}: {:>6.1} /s  p50 {:>8.1} ms  p99 {:>8.1} ms",
                settings.list_objects,
                bytes as f64 / 1e6,
                m.per_sec(),
                m.quantile_ms(0.5),
                m.quantile_ms(0.99)
            );
        }
        println!(
            "{label:<11} LIST from the watch cache is {:.1}x faster than from etcd (by median latency)",
            rows[1].1.quantile_ms(0.5) / rows[0].1.quantile_ms(0.5)
        );
    }

    /// One write fanned out to `watchers` watches, each on its own connection: the time from sending the
    /// write to each watcher's receipt of its event.
    async fn fanout(client: &HttpClient, settings: &Settings) {
        let (server, _) = start(client, &[]).await;
        let base = format!("{}/api/v1/namespaces/default/configmaps", server.url);
        let mut latencies = Vec::new();
        for round in 0..settings.fanout_writes {
            let rv = {
                let bytes = send(client, "GET", &format!("{base}?limit=1"), None, 200).await;
                let v: serde_json::Value = serde_json::from_slice(&bytes).expect("a list");
                v["metadata"]["resourceVersion"].as_str().unwrap_or("0").to_string()
            };
            let name = format!("fan-{round}");
            let (ready_tx, mut ready_rx) = tokio::sync::mpsc::channel::<()>(settings.watchers);
            let go = Arc::new(tokio::sync::Notify::new());
            let sent_at = Arc::new(std::sync::Mutex::new(None::<Instant>));
            let mut watchers = Vec::new();
            for _ in 0..settings.watchers {
                let url = format!("{base}?watch=true&resourceVersion={rv}&fieldSelector=metadata.name%3D{name}");
                let (ready_tx, sent_at) = (ready_tx.clone(), sent_at.clone());
                // One client (one connection pool) per watcher: each watch holds its connection.
                let client: HttpClient = Client::builder(TokioExecutor::new()).build_http();
                watchers.push(tokio::spawn(async move {
                    let response = client.get(url.parse().expect("a URL")).await.expect("the watch starts");
                    assert_eq!(response.status(), 200);
                    let _ = ready_tx.send(()).await;
                    let mut body = response.into_body();
                    while let Some(frame) = body.frame().await {
                        if frame.expect("a frame").data_ref().is_some_and(|d| !d.is_empty()) {
                            let at = sent_at.lock().expect("not poisoned").expect("the write was sent");
                            return at.elapsed();
                        }
                    }
                    panic!("the watch ended without the event");
                }));
            }
            for _ in 0..settings.watchers {
                ready_rx.recv().await.expect("a watcher is ready");
            }
            go.notify_waiters();
            *sent_at.lock().expect("not poisoned") = Some(Instant::now());
            send(client, "POST", &base, Some(configmap(&name, "x")), 201).await;
            for w in watchers {
                latencies.push(w.await.expect("a watcher"));
            }
        }
        let m = Measured { secs: 1.0, latencies };
        println!(
            "fake-etcd   one write to {} watchers ({} writes): delivery p50 {:.1} ms, p99 {:.1} ms, max {:.1} ms",
            settings.watchers,
            settings.fanout_writes,
            m.quantile_ms(0.5),
            m.quantile_ms(0.99),
            m.quantile_ms(1.0)
        );
    }
}

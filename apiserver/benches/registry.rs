//! The registry and the watch cache on fake-etcd against real etcd 3.4.23 (issue 6's figures).
//!
//! Run: `cargo bench -p apiserver --bench registry`. Each server is measured in turn with the same load:
//! fake-etcd in-process (on its own runtime, data in memory) and real etcd 3.4.23 as a child process with
//! its data dir on tmpfs (/dev/shm), so neither side pays for fsync; both on loopback. Measured, through the
//! registry `Store` of configmaps (namespace admission included):
//! - creates (`Store` over `Etcd3Store`; a Cacher writes to etcd the same way) with 1 and 16 clients;
//! - gets without a resourceVersion (a quorum read from etcd) and with resourceVersion "0" (from the
//!   Cacher's watch cache), with 1 and 16 clients;
//! - a LIST of 10,000 configmaps from etcd (`Etcd3Store`, resourceVersion ""), from the watch cache
//!   (Cacher, resourceVersion "0"), and a consistent LIST through the Cacher (resourceVersion ""), which
//!   comes from the cache when etcd's progress requests are trusted (fake-etcd) and from etcd otherwise
//!   (real etcd 3.4.23, as kube-apiserver 1.33 does).
//!
//! Each row shows requests per second with the median and 99th-percentile latency, and the ratio fake-etcd /
//! etcd of requests per second; the LIST section also shows how many times faster the cache answers than
//! etcd. `KUBESIM_BENCH_SECS` sets the seconds per measurement (default 3; the whole run takes about 25
//! times that plus the 10,000 creates per server). Run without cargo bench's `--bench` argument (as `cargo
//! test --benches` does), it only checks that every measurement runs, with 0.2 s each and 300 objects.
//!
//! No timing is asserted: the machine is shared, and the figures are for reading. Any request error fails
//! the run, because the speed of failing requests would mean nothing.

#[cfg(not(madsim))]
#[path = "../tests/support/etcd_server.rs"]
mod etcd_server;

#[cfg(not(madsim))]
fn main() {
    bench::main();
}

#[cfg(madsim)]
fn main() {
    eprintln!(
        "the registry benchmark measures real sockets and processes; it has nothing to do in the simulation build"
    );
}

#[cfg(not(madsim))]
mod bench {
    use std::future::Future;
    use std::path::Path;
    use std::pin::Pin;
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    use std::sync::Arc;
    use std::time::Duration;

    // Real time in this build (the benchmark has nothing to do in the simulation build); std's clock is
    // banned from sources by sim/tests/tidy.rs.
    use tokio::time::Instant;

    use apiserver::registry::strategies::{configmaps, namespaces};
    use apiserver::registry::{FixedClock, ListRequest, RegistryError, Resource, Store, Strategy, SystemFields};
    use apiserver::storage::cacher::{Cacher, CacherConfig};
    use apiserver::storage::etcd3::{Etcd3Config, Etcd3Store};
    use apiserver::storage::{GetOptions, Storage};
    use rand::SeedableRng;
    use serde_json::{json, Value};

    use crate::etcd_server::{self, Server};
    use kubesim_testsupport::{bench_run, BenchRun};

    /// The namespace the LIST and get measurements read, filled to `Settings::list_objects` configmaps.
    const LIST_NS: &str = "list";
    /// The namespace the create measurement writes to.
    const CREATE_NS: &str = "create";
    const CLIENTS: [usize; 2] = [1, 16];

    struct Settings {
        duration: Duration,
        list_objects: usize,
    }

    /// One measurement: completed requests in the measured time and their latencies.
    #[derive(Default)]
    struct Measured {
        secs: f64,
        latencies: Vec<Duration>,
    }

    impl Measured {
        fn per_sec(&self) -> f64 {
            self.latencies.len() as f64 / self.secs
        }

        /// The latency at quantile `q` (nearest rank), in milliseconds.
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

    /// The rows of one server, in the order they are printed.
    struct Results {
        rows: Vec<(String, Measured)>,
        object_bytes: usize,
    }

    pub fn main() {
        let BenchRun { benchmarking, secs } = bench_run();
        let settings =
            Settings { duration: Duration::from_secs_f64(secs), list_objects: if benchmarking { 10_000 } else { 300 } };
        let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
        println!(
            "registry: {secs} s per measurement, {} configmaps listed, loopback, real etcd's data dir on tmpfs, load average at start {}",
            settings.list_objects,
            load.split_whitespace().take(3).collect::<Vec<_>>().join(" ")
        );
        let etcd = run_on(Server::RealEtcd, &settings);
        let fake = run_on(Server::FakeEtcd, &settings);
        print_table(&etcd, &fake);
        let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
        println!("load average at end {}", load.split_whitespace().take(3).collect::<Vec<_>>().join(" "));
    }

    /// Starts `server` on a runtime of its own (fake-etcd runs in-process and must not share the client's
    /// threads' run queue), then measures it from a client runtime of two threads.
    fn run_on(server: Server, settings: &Settings) -> Results {
        let server_rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("bench-server")
            .enable_all()
            .build()
            .expect("server runtime");
        let running = server_rt.block_on(etcd_server::start_in(server, "bench", Path::new("/dev/shm")));
        let client_rt =
            tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("client runtime");
        let results = client_rt.block_on(measure_all(&running.endpoint, server, settings));
        drop(client_rt);
        drop(running);
        drop(server_rt);
        results
    }

    fn label(server: Server) -> &'static str {
        match server {
            Server::RealEtcd => "etcd",
            Server::FakeEtcd => "fake-etcd",
        }
    }

    async fn etcd3(endpoint: &str, resource: &Resource) -> Etcd3Store {
        let config = Etcd3Config::new("/registry/", resource.group_resource());
        Etcd3Store::connect(endpoint, config).await.expect("connect to etcd")
    }

    async fn cacher(endpoint: &str, resource: &Resource, server: Server) -> Cacher {
        let mut config = CacherConfig::new(&format!("/{}", resource.etcd_prefix), resource.group_resource());
        // kube-apiserver 1.33 trusts RequestWatchProgress only from etcd 3.4.31+/3.5.13+ (ARCHITECTURE.md).
        config.request_watch_progress = matches!(server, Server::FakeEtcd);
        let cacher = Cacher::new(etcd3(endpoint, resource).await, config);
        assert!(cacher.wait_ready(Duration::from_secs(30)).await, "the cacher never became ready");
        cacher
    }

    /// The registries of namespaces and configmaps over `ns` and `cm`.
    fn registries<S: Storage + Clone>(ns: S, cm: S) -> (Store<S>, Store<S>) {
        let system =
            SystemFields::new(Box::new(rand_chacha::ChaCha8Rng::seed_from_u64(1)), Arc::new(FixedClock(1_700_000_000)));
        let namespaces =
            Store::new(namespaces::resource(), Arc::new(namespaces::Namespaces), ns.clone(), system.clone(), None);
        let strategy: Arc<dyn Strategy> = Arc::new(configmaps::ConfigMaps);
        (namespaces, Store::new(configmaps::resource(), strategy, cm, system, Some(ns)))
    }

    /// A small configmap, as most are: one key of 32 bytes.
    fn configmap(name: &str) -> Value {
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "labels": {"app": "bench"}},
               "data": {"key": "v".repeat(32)}})
    }

    async fn measure_all(endpoint: &str, server: Server, settings: &Settings) -> Results {
        let (cm, ns) = (configmaps::resource(), namespaces::resource());
        let (etcd_namespaces, etcd_cms) = registries(etcd3(endpoint, &ns).await, etcd3(endpoint, &cm).await);
        for name in [LIST_NS, CREATE_NS] {
            etcd_namespaces.create("", json!({"metadata": {"name": name}})).await.expect("create a namespace");
        }
        let (_, cached_cms) = registries(cacher(endpoint, &ns, server).await, cacher(endpoint, &cm, server).await);
        let mut rows = Vec::new();
        let name = label(server);
        eprintln!("{name}: creates");
        // One counter for both client counts, so that every create names a new object.
        let counter = Arc::new(AtomicUsize::new(0));
        for clients in CLIENTS {
            let (store, counter) = (etcd_cms.clone(), counter.clone());
            let m = measure(clients, settings.duration, move |_| {
                let store = store.clone();
                let i = counter.fetch_add(1, Ordering::Relaxed);
                Box::pin(async move { store.create(CREATE_NS, configmap(&format!("c-{i}"))).await.map(drop) })
            })
            .await;
            rows.push((format!("create x{clients}"), m));
        }
        eprintln!("{name}: filling {LIST_NS} with {} configmaps", settings.list_objects);
        fill(&etcd_cms, settings.list_objects).await;
        let object_bytes = etcd_cms
            .get(LIST_NS, "o-0", &GetOptions::default())
            .await
            .map(|o| serde_json::to_vec(&o).expect("JSON").len())
            .expect("get o-0");
        let n = settings.list_objects;
        eprintln!("{name}: gets");
        rows.extend(gets("get (etcd)", &etcd_cms, "", n, settings).await);
        rows.extend(gets("get rv=0 (cache)", &cached_cms, "0", n, settings).await);
        wait_for_cache(&cached_cms, n).await;
        eprintln!("{name}: lists");
        rows.push(("list (etcd)".into(), lists(&etcd_cms, "", n, settings).await));
        rows.push(("list rv=0 (cache)".into(), lists(&cached_cms, "0", n, settings).await));
        rows.push(("list consistent (cacher)".into(), lists(&cached_cms, "", n, settings).await));
        Results { rows, object_bytes }
    }

    /// Gets of random objects among the `n` of the list namespace with resourceVersion `rv`, from 1 and 16
    /// clients.
    async fn gets<S: Storage + Clone + 'static>(
        what: &str,
        store: &Store<S>,
        rv: &str,
        n: usize,
        settings: &Settings,
    ) -> Vec<(String, Measured)> {
        let mut rows = Vec::new();
        for clients in CLIENTS {
            let store = store.clone();
            let opts = GetOptions { resource_version: rv.into() };
            let m = measure(clients, settings.duration, move |i| {
                let (store, opts) = (store.clone(), opts.clone());
                Box::pin(async move { store.get(LIST_NS, &format!("o-{}", (i * 7919) % n), &opts).await.map(drop) })
            })
            .await;
            rows.push((format!("{what} x{clients}"), m));
        }
        rows
    }

    /// Lists of the whole list namespace with resourceVersion `rv`, one at a time; each must return all `n`.
    async fn lists<S: Storage + Clone + 'static>(
        store: &Store<S>,
        rv: &str,
        n: usize,
        settings: &Settings,
    ) -> Measured {
        let store = store.clone();
        let request = ListRequest { resource_version: rv.into(), ..ListRequest::default() };
        measure(1, settings.duration, move |_| {
            let (store, request) = (store.clone(), request.clone());
            Box::pin(async move {
                let list = store.list(LIST_NS, &request).await?;
                assert_eq!(list.items.len(), n, "a list of {LIST_NS} returned {} items", list.items.len());
                Ok(())
            })
        })
        .await
    }

    /// Creates `o-0` .. `o-<n-1>` in the list namespace from 16 concurrent tasks.
    async fn fill(store: &Store<Etcd3Store>, n: usize) {
        let next = Arc::new(AtomicUsize::new(0));
        let tasks: Vec<_> = (0..16)
            .map(|_| {
                let (store, next) = (store.clone(), next.clone());
                tokio::spawn(async move {
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        if i >= n {
                            break;
                        }
                        store.create(LIST_NS, configmap(&format!("o-{i}"))).await.expect("fill create");
                    }
                })
            })
            .collect();
        for task in tasks {
            task.await.expect("fill task");
        }
    }

    /// Waits until the watch cache holds all `n` objects, so that the cache measurements read a full cache.
    async fn wait_for_cache(store: &Store<Cacher>, n: usize) {
        let any = ListRequest { resource_version: "0".into(), ..ListRequest::default() };
        for _ in 0..600 {
            if store.list(LIST_NS, &any).await.expect("list from the cache").items.len() == n {
                return;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        panic!("the watch cache never caught up with {n} objects");
    }

    type Request = Pin<Box<dyn Future<Output = Result<(), RegistryError>> + Send>>;

    /// Runs `clients` tasks, each issuing one request at a time, for `duration`, and records every latency.
    /// Requests that complete after the stop flag are not counted, so every client counts the same window.
    async fn measure<F>(clients: usize, duration: Duration, request: F) -> Measured
    where
        F: Fn(usize) -> Request + Send + Sync + 'static,
    {
        let request = Arc::new(request);
        let stop = Arc::new(AtomicBool::new(false));
        let started = Instant::now();
        let tasks: Vec<_> = (0..clients)
            .map(|id| {
                let (request, stop) = (request.clone(), stop.clone());
                tokio::spawn(async move {
                    let mut latencies = Vec::new();
                    let mut i = id * 1_000_003;
                    while !stop.load(Ordering::Relaxed) {
                        let t = Instant::now();
                        let result = request(i).await;
                        if stop.load(Ordering::Relaxed) {
                            break;
                        }
                        if let Err(err) = result {
                            panic!("a request failed: {}", serde_json::to_string(&err.to_status()).unwrap());
                        }
                        latencies.push(t.elapsed());
                        i += 1;
                        // A read from the watch cache completes without waiting, so without this a client
                        // would never give its thread back, and neither the other clients nor the stop
                        // timer would run.
                        tokio::task::yield_now().await;
                    }
                    latencies
                })
            })
            .collect();
        tokio::time::sleep(duration).await;
        stop.store(true, Ordering::Relaxed);
        let secs = started.elapsed().as_secs_f64();
        let mut m = Measured { secs, latencies: Vec::new() };
        for task in tasks {
            m.latencies.extend(task.await.expect("a client task panicked"));
        }
        // The window is the measured duration: a request still running at the stop is not counted.
        m.secs = m.secs.min(duration.as_secs_f64()).max(1e-9);
        m
    }

    fn print_table(etcd: &Results, fake: &Results) {
        println!("one configmap is {} bytes of JSON as stored", etcd.object_bytes);
        println!(
            "{:<26} {:>10} {:>9} {:>9} {:>12} {:>9} {:>9} {:>10}",
            "request", "etcd /s", "p50 ms", "p99 ms", "fake-etcd /s", "p50 ms", "p99 ms", "fake/etcd"
        );
        for ((what, a), (_, b)) in etcd.rows.iter().zip(&fake.rows) {
            println!(
                "{:<26} {:>10.0} {:>9.3} {:>9.3} {:>12.0} {:>9.3} {:>9.3} {:>10.2}",
                what,
                a.per_sec(),
                a.quantile_ms(0.5),
                a.quantile_ms(0.99),
                b.per_sec(),
                b.quantile_ms(0.5),
                b.quantile_ms(0.99),
                b.per_sec() / a.per_sec()
            );
        }
        println!("LIST from the watch cache against LIST from etcd (median latency, etcd / cache):");
        for results in [("etcd", etcd), ("fake-etcd", fake)] {
            let median = |what: &str| {
                results.1.rows.iter().find(|(w, _)| w == what).map_or(f64::NAN, |(_, m)| m.quantile_ms(0.5))
            };
            println!(
                "  on {:<10} rv=0 from the cache {:>6.1}x faster, consistent through the Cacher {:>6.1}x",
                results.0,
                median("list (etcd)") / median("list rv=0 (cache)"),
                median("list (etcd)") / median("list consistent (cacher)")
            );
        }
    }
}

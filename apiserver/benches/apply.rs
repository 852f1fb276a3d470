//! Server-side apply against an update of the same object (issue 14's figure): a ConfigMap of 100 fields,
//! one field changed per request, through the registry `Store` over `Etcd3Store`, one client, on fake-etcd
//! in-process and on real etcd 3.4.23 (data dir on tmpfs), each in turn. Rows:
//! - `update`: a PUT-like update by one field manager (its changes recorded in `managedFields`);
//! - `apply`: a server-side apply by one manager of the whole 100-field configuration;
//! - `apply, no change`: the same configuration applied again (read, merged, found unchanged, not written);
//! - and, without storage, the field manager's own work per request (`managed_fields::update` and `apply`).
//!
//! Run: `cargo bench -p apiserver --bench apply` (`KUBESIM_BENCH_SECS` per row, default 3). Built by
//! `cargo test --benches`, it only checks that every row runs (0.2 s each). Nothing is asserted on time.

#[cfg(not(madsim))]
#[path = "../tests/support/etcd_server.rs"]
mod etcd_server;

#[cfg(not(madsim))]
fn main() {
    bench::main();
}

#[cfg(madsim)]
fn main() {
    eprintln!("the apply benchmark measures real sockets and processes; it has nothing to do in the simulation build");
}

#[cfg(not(madsim))]
mod bench {
    use std::path::Path;
    use std::sync::Arc;
    use std::time::Duration;

    // Real time in this build; std's clock is banned from sources by sim/tests/tidy.rs.
    use tokio::time::Instant;

    use apiserver::registry::managed_fields::path::FieldSet;
    use apiserver::registry::managed_fields::shape::Shape;
    use apiserver::registry::managed_fields::{self, Writer};
    use apiserver::registry::options::{CreateOptions, UpdateOptions};
    use apiserver::registry::schema::schemas;
    use apiserver::registry::strategies::{configmaps, namespaces};
    use apiserver::registry::{ApplyRequest, FixedClock, Store, Strategy, SystemFields};
    use apiserver::storage::etcd3::{Etcd3Config, Etcd3Store};
    use kubesim_testsupport::{bench_run, BenchRun};
    use rand::SeedableRng;
    use serde_json::{json, Map, Value};

    use crate::etcd_server::{self, Server};

    const FIELDS: usize = 100;
    const NS: &str = "apply";

    /// The 100-field ConfigMap `name` whose field `changed` holds `value`.
    fn configmap(name: &str, changed: usize, value: usize) -> Value {
        let data: Map<String, Value> = (0..FIELDS)
            .map(|i| {
                let v = if i == changed { format!("value-{value}") } else { format!("value-{i}") };
                (format!("field-{i:03}"), Value::from(v))
            })
            .collect();
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": data})
    }

    /// Latencies of one row, sorted.
    struct Row {
        name: String,
        latencies: Vec<Duration>,
    }

    impl Row {
        fn quantile_ms(&self, q: f64) -> f64 {
            let i = ((self.latencies.len() as f64 - 1.0) * q).round() as usize;
            self.latencies[i].as_secs_f64() * 1e3
        }
    }

    /// Runs `request` one at a time for `secs`.
    async fn measure<F, Fut>(name: &str, secs: f64, mut request: F) -> Row
    where
        F: FnMut(usize) -> Fut,
        Fut: std::future::Future<Output = ()>,
    {
        let started = Instant::now();
        let mut latencies = Vec::new();
        let mut i = 0;
        while started.elapsed().as_secs_f64() < secs {
            let t = Instant::now();
            request(i).await;
            latencies.push(t.elapsed());
            i += 1;
        }
        latencies.sort();
        Row { name: name.to_string(), latencies }
    }

    pub fn main() {
        let BenchRun { secs, .. } = bench_run();
        let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
        println!(
            "apply: a ConfigMap of {FIELDS} fields, one changed per request, one client, {secs} s per row, load average {}",
            load.split_whitespace().take(3).collect::<Vec<_>>().join(" ")
        );
        let mut rows = Vec::new();
        for server in [Server::FakeEtcd, Server::RealEtcd] {
            rows.extend(run_on(server, secs));
        }
        rows.extend(field_manager_alone(secs));
        println!("{:<32} {:>9} {:>9} {:>9}", "row", "requests", "p50 ms", "p99 ms");
        for row in &rows {
            println!(
                "{:<32} {:>9} {:>9.3} {:>9.3}",
                row.name,
                row.latencies.len(),
                row.quantile_ms(0.5),
                row.quantile_ms(0.99)
            );
        }
        for pair in rows.chunks(3).filter(|c| c.len() == 3) {
            println!(
                "{}: apply / update p50 {:.2}x, p99 {:.2}x",
                pair[0].name.split(',').next().unwrap_or(""),
                pair[1].quantile_ms(0.5) / pair[0].quantile_ms(0.5),
                pair[1].quantile_ms(0.99) / pair[0].quantile_ms(0.99)
            );
        }
    }

    fn run_on(server: Server, secs: f64) -> Vec<Row> {
        let server_rt =
            tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().expect("server runtime");
        let running = server_rt.block_on(etcd_server::start_in(server, "apply-bench", Path::new("/dev/shm")));
        let client_rt =
            tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().expect("client runtime");
        let label = match server {
            Server::FakeEtcd => "fake-etcd",
            Server::RealEtcd => "etcd",
        };
        let rows = client_rt.block_on(measure_on(&running.endpoint, label, secs));
        drop(client_rt);
        drop(running);
        drop(server_rt);
        rows
    }

    async fn measure_on(endpoint: &str, label: &str, secs: f64) -> Vec<Row> {
        let system =
            SystemFields::new(Box::new(rand_chacha::ChaCha8Rng::seed_from_u64(1)), Arc::new(FixedClock(1_700_000_000)));
        let store = |resource: apiserver::registry::Resource| async move {
            Etcd3Store::connect(endpoint, Etcd3Config::new("/registry/", resource.group_resource()))
                .await
                .expect("connect to etcd")
        };
        let ns_storage = store(namespaces::resource()).await;
        let namespaces = Store::new(
            namespaces::resource(),
            Arc::new(namespaces::Namespaces),
            ns_storage.clone(),
            system.clone(),
            None,
        );
        namespaces.create("", json!({"metadata": {"name": NS}})).await.expect("namespace");
        let strategy: Arc<dyn Strategy> = Arc::new(configmaps::ConfigMaps);
        let cms =
            Store::new(configmaps::resource(), strategy, store(configmaps::resource()).await, system, Some(ns_storage));
        let updater = UpdateOptions { field_manager: Some("updater".into()), ..UpdateOptions::default() };
        let created = CreateOptions { field_manager: Some("updater".into()), ..CreateOptions::default() };
        cms.create_with(NS, configmap("updated", 0, 0), &created).await.expect("create");
        let update = measure(&format!("{label}, update"), secs, |i| {
            let (cms, updater) = (&cms, &updater);
            async move {
                cms.update_with(NS, "updated", configmap("updated", i % FIELDS, i), updater).await.expect("update");
            }
        })
        .await;
        let request = ApplyRequest { name: "applied", sub: None, manager: "applier", force: false };
        let plain = UpdateOptions::default();
        let apply = measure(&format!("{label}, apply"), secs, |i| {
            let (cms, request, plain) = (&cms, &request, &plain);
            async move {
                cms.apply(NS, configmap("applied", i % FIELDS, i), request, plain).await.expect("apply");
            }
        })
        .await;
        let same = measure(&format!("{label}, apply, no change"), secs, |_| {
            let (cms, request, plain) = (&cms, &request, &plain);
            async move {
                cms.apply(NS, configmap("applied", 0, 0), request, plain).await.expect("apply");
            }
        })
        .await;
        vec![update, apply, same]
    }

    /// The field manager's own work per request, on the same objects, without storage or the registry.
    fn field_manager_alone(secs: f64) -> Vec<Row> {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
        rt.block_on(async {
            let shape = Shape::root(schemas().kind("", "v1", "ConfigMap"));
            let none = FieldSet::default();
            let writer = Writer { manager: "m", subresource: "", api_version: "v1", now: "2023-11-14T22:13:20Z" };
            let mut live = managed_fields::update(&Value::Null, &configmap("x", 0, 0), &writer, &shape, &none);
            let update = measure("field manager alone, update", secs, |i| {
                let next = managed_fields::update(&live, &configmap("x", i % FIELDS, i), &writer, &shape, &none);
                live = next;
                async {}
            })
            .await;
            let mut live = managed_fields::apply(&Value::Null, &configmap("x", 0, 0), &writer, false, &shape, &none)
                .expect("apply");
            let apply = measure("field manager alone, apply", secs, |i| {
                let next = managed_fields::apply(&live, &configmap("x", i % FIELDS, i), &writer, false, &shape, &none)
                    .expect("apply");
                live = next;
                async {}
            })
            .await;
            vec![update, apply]
        })
    }
}

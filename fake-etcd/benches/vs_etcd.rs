//! Throughput of fake-etcd against real etcd 3.4.23, the same client load on both in one run.
//!
//! Run: `cargo bench -p fake-etcd --bench vs_etcd`. Cargo builds the `fake-etcd` binary with the bench
//! profile (release) before the bench and hands its path in `CARGO_BIN_EXE_fake-etcd`, so nothing needs
//! building by hand. Real etcd keeps its data dir on tmpfs (/dev/shm), so neither side pays for fsync;
//! both listen on loopback. For each workload (put, range, txn in the apiserver's create-if-absent /
//! compare-and-swap shape) and each client count (1 and 16 connections, each issuing one request at a
//! time), the servers are loaded for a fixed time in turn, and the table shows ops/s and the ratio
//! fake-etcd / etcd. `KUBESIM_BENCH_SECS` sets the seconds per measurement (default 3; the whole run takes
//! about 12 times that plus startup). `KUBESIM_UNDER_TEST=etcd` puts real etcd on both sides.
//! `KUBESIM_BENCH_MEMBERS=3` runs both sides as 3-member clusters on loopback (each connection is given
//! every member's endpoint, and the client spreads its requests over them). Run without
//! cargo bench's `--bench` argument (as `cargo test --benches` does), it only checks that every workload
//! runs, with 0.2 s per measurement.
//!
//! No timing is asserted: the machine is shared, and the figures are for reading. Any request error fails
//! the run, because throughput of failing requests would mean nothing.

#[cfg(not(madsim))]
#[path = "../tests/support/mod.rs"]
mod support;

#[cfg(not(madsim))]
fn main() {
    bench::main();
}

#[cfg(madsim)]
fn main() {
    eprintln!("vs_etcd measures real processes on real sockets; it has nothing to do in the simulation build");
}

#[cfg(not(madsim))]
mod bench {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;
    use std::time::Duration;

    use etcd_client::{Client, Compare, CompareOp, GetOptions, Txn, TxnOp, TxnOpResponse};

    use crate::support::{Disk, Peer, Server};
    use kubesim_testsupport::{bench_run, BenchRun};

    #[derive(Clone, Copy, Debug)]
    enum Workload {
        /// Puts of 128-byte values over 1,000 keys per client.
        Put,
        /// Linearizable single-key gets of the 1,000 keys the setup wrote.
        Range,
        /// `if mod_revision(key) == known then put else get`, over 64 keys per client: the first round is
        /// create-if-absent (known = 0), later rounds compare-and-swap.
        Txn,
    }

    const WORKLOADS: [Workload; 3] = [Workload::Put, Workload::Range, Workload::Txn];
    const CLIENTS: [usize; 2] = [1, 16];
    const RANGE_KEYS: usize = 1000;
    const TXN_KEYS: usize = 64;

    /// One measurement: completed requests and failed requests in the measured time.
    struct Measured {
        ops: u64,
        errors: u64,
        first_error: Option<String>,
    }

    pub fn main() {
        let BenchRun { secs, .. } = bench_run();
        let duration = Duration::from_secs_f64(secs);
        let under_test = Peer::under_test();
        let members: usize = std::env::var("KUBESIM_BENCH_MEMBERS")
            .ok()
            .map_or(1, |s| s.parse().expect("KUBESIM_BENCH_MEMBERS: a number of members, 1 to 5"));
        // Servers are started on this thread and stay on it (see support::server).
        let real = Server::start_cluster(&Peer::RealEtcd, Disk::Tmpfs, members);
        let other = Server::start_cluster(&under_test, Disk::Tmpfs, members);
        let (real, other) = (real.as_slice(), other.as_slice());
        let runtime =
            tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("tokio runtime");

        println!("vs_etcd: {secs} s per measurement, {members} member(s) per side, loopback, data dirs on tmpfs");
        println!(
            "{:<8} {:>7} {:>14} {:>16} {:>10}",
            "workload",
            "clients",
            "etcd ops/s",
            format!("{} ops/s", under_test.label()),
            "fake/etcd"
        );
        let mut failed = Vec::new();
        runtime.block_on(async {
            for servers in [real, other] {
                setup(servers).await;
            }
            for workload in WORKLOADS {
                for clients in CLIENTS {
                    let a = measure(real, workload, clients, duration).await;
                    let b = measure(other, workload, clients, duration).await;
                    let (ra, rb) = (a.ops as f64 / secs, b.ops as f64 / secs);
                    println!(
                        "{:<8} {:>7} {:>14.0} {:>16.0} {:>10.2}",
                        format!("{workload:?}").to_lowercase(),
                        clients,
                        ra,
                        rb,
                        if ra > 0.0 { rb / ra } else { f64::NAN }
                    );
                    for (servers, m) in [(real, &a), (other, &b)] {
                        if m.errors > 0 {
                            failed.push(format!(
                                "{workload:?} x{clients} on {}: {} errors, first: {}",
                                servers[0].peer.label(),
                                m.errors,
                                m.first_error.as_deref().unwrap_or("?")
                            ));
                        }
                    }
                }
            }
        });
        if !failed.is_empty() {
            eprintln!("requests failed during the benchmark:\n{}", failed.join("\n"));
            std::process::exit(1);
        }
    }

    /// One connection given every member's endpoint.
    async fn connect(servers: &[Server]) -> Client {
        let urls: Vec<String> = servers.iter().map(Server::url).collect();
        Client::connect(urls.clone(), None)
            .await
            .unwrap_or_else(|e| panic!("connecting to {} at {urls:?}: {e}", servers[0].peer.label()))
    }

    /// Writes the keys the range workload reads.
    async fn setup(servers: &[Server]) {
        let mut client = connect(servers).await;
        for i in 0..RANGE_KEYS {
            client.put(format!("bench/range/{i:04}"), vec![b'r'; 128], None).await.expect("setup put");
        }
    }

    /// Runs `clients` connections against `server` for `duration` and counts their requests.
    async fn measure(servers: &[Server], workload: Workload, clients: usize, duration: Duration) -> Measured {
        let mut connections = Vec::new();
        for _ in 0..clients {
            connections.push(connect(servers).await);
        }
        let stop = Arc::new(AtomicBool::new(false));
        let tasks: Vec<_> = connections
            .into_iter()
            .enumerate()
            .map(|(id, client)| tokio::spawn(run_client(client, id, workload, stop.clone())))
            .collect();
        tokio::time::sleep(duration).await;
        stop.store(true, Ordering::Relaxed);
        let mut total = Measured { ops: 0, errors: 0, first_error: None };
        for task in tasks {
            let m = task.await.expect("client task");
            total.ops += m.ops;
            total.errors += m.errors;
            total.first_error = total.first_error.or(m.first_error);
        }
        total
    }

    /// One connection issuing one request at a time until told to stop. Requests that complete after the
    /// stop flag are not counted, so every client counts the same window.
    async fn run_client(mut client: Client, id: usize, workload: Workload, stop: Arc<AtomicBool>) -> Measured {
        let mut m = Measured { ops: 0, errors: 0, first_error: None };
        let mut known_mod = vec![0i64; TXN_KEYS];
        let value = vec![b'v'; 128];
        let mut i = 0usize;
        while !stop.load(Ordering::Relaxed) {
            let result: Result<(), etcd_client::Error> = match workload {
                Workload::Put => {
                    client.put(format!("bench/put/{id}/{}", i % 1000), value.clone(), None).await.map(drop)
                }
                Workload::Range => {
                    let key = format!("bench/range/{:04}", (i * 7 + id * 131) % RANGE_KEYS);
                    client.get(key, None::<GetOptions>).await.map(drop)
                }
                Workload::Txn => {
                    let slot = i % TXN_KEYS;
                    let key = format!("bench/txn/{id}/{slot}");
                    let txn = Txn::new()
                        .when([Compare::mod_revision(key.clone(), CompareOp::Equal, known_mod[slot])])
                        .and_then([TxnOp::put(key.clone(), value.clone(), None)])
                        .or_else([TxnOp::get(key, None)]);
                    client.txn(txn).await.map(|resp| {
                        known_mod[slot] = if resp.succeeded() {
                            resp.header().map_or(0, |h| h.revision())
                        } else {
                            match resp.op_responses().first() {
                                Some(TxnOpResponse::Get(get)) => get.kvs().first().map_or(0, |kv| kv.mod_revision()),
                                _ => 0,
                            }
                        };
                    })
                }
            };
            if stop.load(Ordering::Relaxed) {
                break;
            }
            match result {
                Ok(()) => m.ops += 1,
                Err(e) => {
                    m.errors += 1;
                    m.first_error.get_or_insert_with(|| e.to_string());
                }
            }
            i += 1;
        }
        m
    }
}

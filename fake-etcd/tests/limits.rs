//! Limits under load: what the `fake-etcd` binary does when clients push it to and past the sizes real
//! deployments reach, each case on a real member process and, where an outcome can be compared, beside real
//! etcd 3.4.23 on the same inputs, asserting the same outcome.
//!
//! The cases: ten thousand watchers on one watch stream and over a hundred, a LIST of about 1 GiB with the
//! client's default decoding limit and paged, floods of requests over `--max-request-bytes` and
//! `--max-txn-ops`, a watch stream nobody reads, ten thousand leases expiring together, and a thousand TCP
//! connections that never speak.
//!
//! Each test prints one `FIGURE <name>: <values>` line (see it with `--nocapture`) with what it measured:
//! the member's memory as its VmRSS and VmHWM from `/proc/<pid>/status`, counts and durations. Durations are
//! printed, never asserted; memory is asserted only where the point of the case is that it stays bounded,
//! with generous bounds explained where they are set.
#![cfg(not(madsim))]

mod support;

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use etcd_client::{
    Client, Error, GetOptions, GetResponse, PutOptions, Txn, TxnOp, WatchOptions, WatchRequestSender, WatchResponse,
    WatchResponseStream,
};
use support::{Disk, Peer, Server};

/// KiB in a MiB: `/proc` counts memory in KiB.
const KIB_PER_MIB: u64 = 1024;

// ---------------------------------------------------------------------------------------------------------
// Measuring a member.
// ---------------------------------------------------------------------------------------------------------

/// A member process's memory, in KiB as `/proc/<pid>/status` gives it.
#[derive(Clone, Copy, Debug)]
struct Memory {
    /// Resident set size now.
    rss_kib: u64,
    /// The peak resident set size since the process started.
    hwm_kib: u64,
}

impl Memory {
    fn of(pid: u32) -> Memory {
        let status = std::fs::read_to_string(format!("/proc/{pid}/status"))
            .unwrap_or_else(|e| panic!("reading /proc/{pid}/status: {e}"));
        let field = |name: &str| -> u64 {
            let line = status.lines().find(|l| l.starts_with(name)).unwrap_or_else(|| panic!("no {name} in status"));
            line.split_whitespace().nth(1).and_then(|n| n.parse().ok()).unwrap_or_else(|| panic!("bad {line:?}"))
        };
        Memory { rss_kib: field("VmRSS:"), hwm_kib: field("VmHWM:") }
    }
}

/// KiB as MiB with one decimal, for FIGURE lines.
fn mib(kib: u64) -> String {
    format!("{:.1}MiB", kib as f64 / KIB_PER_MIB as f64)
}

fn millis(d: Duration) -> String {
    format!("{}ms", d.as_millis())
}

/// The pid of `server`'s member process: the child of this test process whose command line names the
/// member's client URL (ports are unique, so exactly one matches). The harness keeps its `Child` private,
/// and reading `/proc` needs nothing more than the pid.
fn member_pid(server: &Server) -> u32 {
    let me = std::process::id();
    let url = server.url();
    let entries = std::fs::read_dir("/proc").expect("reading /proc");
    for entry in entries.flatten() {
        let Some(pid) = entry.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else { continue };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else { continue };
        // The command name in parentheses may hold spaces; the parent pid is the second field after it.
        let parent = stat.rsplit_once(')').and_then(|(_, rest)| rest.split_whitespace().nth(1));
        if parent.and_then(|p| p.parse::<u32>().ok()) != Some(me) {
            continue;
        }
        let Ok(cmdline) = std::fs::read(format!("/proc/{pid}/cmdline")) else { continue };
        if cmdline.split(|b| *b == 0).any(|arg| arg == url.as_bytes()) {
            return pid;
        }
    }
    panic!("no child process of {me} serves {url}");
}

/// A runtime with two workers, one per core of the machine these tests are sized for.
fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("tokio runtime")
}

async fn connect(server: &Server) -> Client {
    Client::connect([server.url()], None)
        .await
        .unwrap_or_else(|e| panic!("connecting to {} at {}: {e}", server.peer.label(), server.url()))
}

/// The end of the range of keys under `prefix` (the prefix with its last byte incremented).
fn prefix_end(prefix: &str) -> Vec<u8> {
    let mut end = prefix.as_bytes().to_vec();
    let last = end.last_mut().expect("a non-empty prefix");
    *last += 1;
    end
}

/// How many keys `prefix` holds now.
async fn count_under(client: &mut Client, prefix: &str) -> i64 {
    let options = GetOptions::new().with_prefix().with_count_only();
    client.get(prefix, Some(options)).await.unwrap_or_else(|e| panic!("counting {prefix}: {e}")).count()
}

/// A gRPC outcome in a form two servers can be compared by: the code and the message, with the numbers in
/// the message (sizes that differ by a header's few bytes) replaced by `N`.
fn outcome_class<T>(result: &Result<T, Error>) -> String {
    match result {
        Ok(_) => "ok".to_string(),
        Err(Error::GRpcStatus(status)) => {
            let numbers = regex::Regex::new("[0-9]+").expect("a valid regex");
            format!("{:?}: {}", status.code(), numbers.replace_all(status.message(), "N"))
        }
        Err(other) => format!("client error: {other}"),
    }
}

/// The first `n` problems of a list, for assertion messages that stay readable.
fn first(problems: &[String], n: usize) -> String {
    problems.iter().take(n).cloned().collect::<Vec<_>>().join("\n")
}

// ---------------------------------------------------------------------------------------------------------
// 1. Ten thousand watchers.
// ---------------------------------------------------------------------------------------------------------

const WATCHERS: usize = 10_000;
/// The watchers share these keys, a hundred watchers each, so that every watcher has events to get and
/// their order to keep: each key is written [`PUTS_PER_KEY`] times, 1,000 puts in all.
const WATCHED_KEYS: usize = 100;
const PUTS_PER_KEY: usize = 10;
/// Concurrent writers of the burst; each owns a tenth of the keys, so one key's puts stay in one order.
const BURST_WRITERS: usize = 10;
/// How long a stream's reader waits for the burst's events before it reports what is missing.
const DELIVERY_DEADLINE: Duration = Duration::from_secs(40);
/// After the last expected event, how long a reader keeps listening for duplicates.
const QUIET_PERIOD: Duration = Duration::from_millis(500);

fn watch_key(k: usize) -> String {
    format!("/limits/watch/{k:03}")
}

/// One watch stream with its watchers created.
struct OpenStream {
    /// Kept so that the stream's request side stays open while events arrive.
    sender: WatchRequestSender,
    responses: WatchResponseStream,
    /// The key each watch id watches, known from the order of the created responses (a stream answers its
    /// create requests in the order it received them).
    key_of: BTreeMap<i64, usize>,
}

/// What one stream received after its watchers were created.
struct Delivered {
    key_of: BTreeMap<i64, usize>,
    /// Per watch id, every event as (key, mod revision), in arrival order.
    events: BTreeMap<i64, Vec<(Vec<u8>, i64)>>,
    /// Anything but events: cancels, errors, an ended stream.
    surprises: Vec<String>,
    total: usize,
    /// When the last expected event arrived.
    complete_at: Option<Instant>,
}

/// Opens one stream and creates a watcher on `keys[i]` for each i; returns once every create is answered.
async fn open_stream(client: &Client, keys: Vec<usize>) -> OpenStream {
    let stream = client.watch_client().watch(watch_key(keys[0]), None).await.expect("opening a watch stream");
    let (mut sender, mut responses) = stream.split();
    // The creates are sent from their own task while this one reads the answers: a client that sends
    // thousands of requests before reading would fill the stream's flow-control window and stall both ends.
    let rest = keys[1..].to_vec();
    let sending = tokio::spawn(async move {
        for k in rest {
            sender.watch(watch_key(k), None).await.expect("sending a watch create request");
        }
        sender
    });
    let mut key_of = BTreeMap::new();
    for &k in &keys {
        let resp = responses.message().await.expect("a watch response").expect("the stream stays open");
        assert!(resp.created() && !resp.canceled(), "watch on {} not created: {resp:?}", watch_key(k));
        assert!(key_of.insert(resp.watch_id(), k).is_none(), "watch id {} given twice", resp.watch_id());
    }
    let sender = sending.await.expect("the create task");
    OpenStream { sender, responses, key_of }
}

/// Reads `stream` until `expected` events arrived (or the deadline passed), then for a quiet period more,
/// so that a duplicate sent after the last expected event is seen too.
async fn collect_events(mut stream: OpenStream, expected: usize) -> Delivered {
    let deadline = Instant::now() + DELIVERY_DEADLINE;
    let mut delivered = Delivered {
        key_of: stream.key_of,
        events: BTreeMap::new(),
        surprises: Vec::new(),
        total: 0,
        complete_at: None,
    };
    loop {
        let wait =
            if delivered.total < expected { deadline.saturating_duration_since(Instant::now()) } else { QUIET_PERIOD };
        match tokio::time::timeout(wait, stream.responses.message()).await {
            Ok(Ok(Some(resp))) => {
                record(&mut delivered, &resp);
                if delivered.total >= expected && delivered.complete_at.is_none() {
                    delivered.complete_at = Some(Instant::now());
                }
            }
            Ok(Ok(None)) => {
                delivered.surprises.push("the stream ended".to_string());
                break;
            }
            Ok(Err(e)) => {
                delivered.surprises.push(format!("stream error: {e}"));
                break;
            }
            Err(_) => break,
        }
    }
    drop(stream.sender);
    delivered
}

fn record(delivered: &mut Delivered, resp: &WatchResponse) {
    if resp.canceled() || resp.created() {
        delivered.surprises.push(format!("unexpected response: {resp:?}"));
    }
    let got = delivered.events.entry(resp.watch_id()).or_default();
    for event in resp.events() {
        let kv = event.kv().expect("an event carries its key-value");
        got.push((kv.key().to_vec(), kv.mod_revision()));
        delivered.total += 1;
    }
}

/// Writes every watched key [`PUTS_PER_KEY`] times from [`BURST_WRITERS`] concurrent clients; returns each
/// key's revisions in the order they were written.
async fn write_burst(client: &Client) -> BTreeMap<usize, Vec<i64>> {
    let writers: Vec<_> = (0..BURST_WRITERS)
        .map(|w| {
            let mut client = client.clone();
            tokio::spawn(async move {
                let mut written: BTreeMap<usize, Vec<i64>> = BTreeMap::new();
                for round in 0..PUTS_PER_KEY {
                    for k in (w..WATCHED_KEYS).step_by(BURST_WRITERS) {
                        let resp = client.put(watch_key(k), format!("round {round}"), None).await.expect("put");
                        written.entry(k).or_default().push(resp.header().expect("a header").revision());
                    }
                }
                written
            })
        })
        .collect();
    let mut all = BTreeMap::new();
    for writer in writers {
        all.extend(writer.await.expect("a writer task"));
    }
    all
}

/// Every way a stream's deliveries differ from "each watcher got each event of its key once, in order".
fn delivery_problems(stream: usize, delivered: &Delivered, written: &BTreeMap<usize, Vec<i64>>) -> Vec<String> {
    let mut problems: Vec<String> = delivered.surprises.iter().map(|s| format!("stream {stream}: {s}")).collect();
    for (id, k) in &delivered.key_of {
        let want: Vec<(Vec<u8>, i64)> = written[k].iter().map(|&rev| (watch_key(*k).into_bytes(), rev)).collect();
        let got = delivered.events.get(id).cloned().unwrap_or_default();
        if got != want {
            let revisions: Vec<i64> = got.iter().map(|e| e.1).collect();
            problems.push(format!(
                "stream {stream} watch {id} on {}: got revisions {revisions:?}, want {:?}",
                watch_key(*k),
                written[k]
            ));
        }
    }
    for id in delivered.events.keys().filter(|id| !delivered.key_of.contains_key(id)) {
        problems.push(format!("stream {stream}: events for watch id {id}, which was never created"));
    }
    problems
}

/// Creates [`WATCHERS`] watchers over `streams` streams of one client, writes the burst, and checks that
/// every watcher got every event of its key exactly once and in order; prints the figure `name`.
fn watchers_get_every_event_once(streams: usize, name: &str) {
    let server = Server::start(&Peer::fake(), Disk::Tmpfs);
    let pid = member_pid(&server);
    runtime().block_on(async {
        let client = connect(&server).await;
        let before = Memory::of(pid);
        let per_stream = WATCHERS / streams;
        let creating = Instant::now();
        let mut opened = Vec::new();
        for s in 0..streams {
            let keys = (s * per_stream..(s + 1) * per_stream).map(|g| g % WATCHED_KEYS).collect();
            opened.push(open_stream(&client, keys).await);
        }
        let create_time = creating.elapsed();
        let with_watchers = Memory::of(pid);
        // Every watcher's key is written PUTS_PER_KEY times, so each stream expects that many per watcher.
        let readers: Vec<_> =
            opened.into_iter().map(|o| tokio::spawn(collect_events(o, per_stream * PUTS_PER_KEY))).collect();
        let burst = Instant::now();
        let written = write_burst(&client).await;
        let write_time = burst.elapsed();
        let mut problems = Vec::new();
        let mut events = 0;
        let mut complete = Some(burst);
        for (s, reader) in readers.into_iter().enumerate() {
            let delivered = reader.await.expect("a reader task");
            events += delivered.total;
            complete = complete.zip(delivered.complete_at).map(|(a, b)| a.max(b));
            problems.extend(delivery_problems(s, &delivered, &written));
        }
        // From the first put until the last stream had all its events (a reader's quiet period aside).
        let delivery_time = complete.map_or_else(|| "incomplete".to_string(), |at| millis(at - burst));
        let after = Memory::of(pid);
        println!(
            "FIGURE {name}: watchers={WATCHERS} streams={streams} puts={} events_delivered={events} \
             rss_before={} rss_with_watchers={} rss_after_burst={} hwm={} create_time={} burst_write_time={} \
             burst_delivery_time={}",
            WATCHED_KEYS * PUTS_PER_KEY,
            mib(before.rss_kib),
            mib(with_watchers.rss_kib),
            mib(after.rss_kib),
            mib(after.hwm_kib),
            millis(create_time),
            millis(write_time),
            delivery_time
        );
        assert!(problems.is_empty(), "{} problems, the first:\n{}", problems.len(), first(&problems, 10));
        assert_eq!(events, WATCHERS * PUTS_PER_KEY, "every watcher gets each of its key's events");
    });
}

/// Ten thousand watchers on one gRPC watch stream, a hundred on each of a hundred keys, each get every event
/// of their key exactly once and in revision order when a burst of 1,000 puts (ten per key) arrives.
#[test]
fn ten_thousand_watchers_on_one_stream_each_get_every_event_once_in_order() {
    watchers_get_every_event_once(1, "watchers_one_stream");
}

/// The same ten thousand watchers spread over a hundred streams of one connection, a hundred watchers each,
/// also each get every event of their key exactly once and in order.
#[test]
fn ten_thousand_watchers_over_a_hundred_streams_each_get_every_event_once_in_order() {
    watchers_get_every_event_once(100, "watchers_hundred_streams");
}

// ---------------------------------------------------------------------------------------------------------
// 2. A LIST of about 1 GiB.
// ---------------------------------------------------------------------------------------------------------

const LIST_PREFIX: &str = "/limits/list/";
/// 1,024 values of 1 MiB: 1 GiB in all, each put well below the 1.5 MiB request limit.
const LIST_VALUES: usize = 1024;
const LIST_VALUE_BYTES: usize = 1024 * 1024;
/// Concurrent loaders per server.
const LIST_LOADERS: usize = 4;
/// Three 1 MiB values a page keep each response below the client's default 4 MiB decoding limit.
const LIST_PAGE: i64 = 3;

fn list_key(i: usize) -> String {
    format!("{LIST_PREFIX}{i:04}")
}

/// Value `i`: its index in the first bytes, then a filler that differs between neighbours, so that a value
/// served under the wrong key or cut short is caught.
fn list_value(i: usize) -> Vec<u8> {
    let mut value = vec![(i % 251) as u8; LIST_VALUE_BYTES];
    value[..8].copy_from_slice(&(i as u64).to_be_bytes());
    value
}

/// Puts every list value, from [`LIST_LOADERS`] concurrent tasks.
async fn load_list(client: &Client) {
    let loaders: Vec<_> = (0..LIST_LOADERS)
        .map(|l| {
            let mut client = client.clone();
            tokio::spawn(async move {
                for i in (l..LIST_VALUES).step_by(LIST_LOADERS) {
                    client.put(list_key(i), list_value(i), None).await.unwrap_or_else(|e| panic!("put {i}: {e}"));
                }
            })
        })
        .collect();
    for loader in loaders {
        loader.await.expect("a loader task");
    }
}

/// One Range over the whole prefix with the client's default decoding limit.
async fn list_everything(client: &mut Client) -> Result<GetResponse, Error> {
    client.get(LIST_PREFIX, Some(GetOptions::new().with_prefix())).await
}

/// What paging through the prefix [`LIST_PAGE`] keys at a time showed; two servers with the same data
/// must show the same.
#[derive(Debug, PartialEq, Eq)]
struct Paging {
    pages: usize,
    keys: usize,
    bytes: usize,
    /// Each page's `count` (the keys left in the range from the page's start) and `more`.
    counts: Vec<i64>,
    more: Vec<bool>,
}

/// Pages through the prefix and checks that each key comes once, in order, with its own value.
async fn page_through(client: &mut Client) -> Paging {
    let mut paging = Paging { pages: 0, keys: 0, bytes: 0, counts: Vec::new(), more: Vec::new() };
    let mut start = LIST_PREFIX.as_bytes().to_vec();
    loop {
        let options = GetOptions::new().with_range(prefix_end(LIST_PREFIX)).with_limit(LIST_PAGE);
        let page =
            client.get(start.clone(), Some(options)).await.unwrap_or_else(|e| panic!("page {}: {e}", paging.pages));
        paging.pages += 1;
        paging.counts.push(page.count());
        paging.more.push(page.more());
        for kv in page.kvs() {
            assert_eq!(kv.key(), list_key(paging.keys).as_bytes(), "keys come once each, in order");
            assert!(kv.value() == list_value(paging.keys).as_slice(), "{} holds its own value", list_key(paging.keys));
            paging.keys += 1;
            paging.bytes += kv.value().len();
        }
        match page.kvs().last() {
            Some(last) if page.more() => start = [last.key(), b"\0"].concat(),
            _ => return paging,
        }
    }
}

/// A LIST (Range over a prefix) whose response would be 1 GiB ends the same way on real etcd and on
/// fake-etcd when the client keeps its default 4 MiB decoding limit, and paging through the same 1 GiB
/// [`LIST_PAGE`] values at a time gives the same pages, every value intact, on both.
#[test]
fn a_one_gib_list_ends_alike_and_pages_alike_on_etcd_and_fake_etcd() {
    // Both data dirs on tmpfs: etcd's WAL and bolt file, and fake-etcd's Raft log, each take about 1 GiB,
    // and fsyncs to a real disk would take most of the time budget. etcd's default backend quota (2 GiB)
    // holds the 1 GiB with room to spare, so the harness's flags need no --quota-backend-bytes.
    let etcd = Server::start(&Peer::RealEtcd, Disk::Tmpfs);
    let fake = Server::start(&Peer::under_test(), Disk::Tmpfs);
    let (etcd_pid, fake_pid) = (member_pid(&etcd), member_pid(&fake));
    runtime().block_on(async {
        let (mut e, mut f) = (connect(&etcd).await, connect(&fake).await);
        let loading = Instant::now();
        tokio::join!(load_list(&e), load_list(&f));
        let load_time = loading.elapsed();
        let (etcd_loaded, fake_loaded) = (Memory::of(etcd_pid), Memory::of(fake_pid));

        // One after the other, so that each member's peak and time are its own.
        let timed = Instant::now();
        let etcd_full = list_everything(&mut e).await;
        let etcd_full_time = timed.elapsed();
        let timed = Instant::now();
        let fake_full = list_everything(&mut f).await;
        let fake_full_time = timed.elapsed();
        let (etcd_listed, fake_listed) = (Memory::of(etcd_pid), Memory::of(fake_pid));
        println!("full LIST on etcd: {}", outcome_class(&etcd_full));
        println!("full LIST on {}: {}", fake.peer.label(), outcome_class(&fake_full));

        let timed = Instant::now();
        let etcd_pages = page_through(&mut e).await;
        let etcd_paging_time = timed.elapsed();
        let timed = Instant::now();
        let fake_pages = page_through(&mut f).await;
        let fake_paging_time = timed.elapsed();
        let (etcd_paged, fake_paged) = (Memory::of(etcd_pid), Memory::of(fake_pid));
        println!(
            "FIGURE list_1gib: data={} values={LIST_VALUES} load_time_both={} etcd_rss_loaded={} \
             fake_rss_loaded={} full_list_etcd={} full_list_fake={} etcd_hwm_after_full={} fake_hwm_after_full={} \
             pages={} paging_etcd={} paging_fake={} etcd_hwm={} fake_hwm={} etcd_rss_end={} fake_rss_end={}",
            mib((LIST_VALUES * LIST_VALUE_BYTES) as u64 / 1024),
            millis(load_time),
            mib(etcd_loaded.rss_kib),
            mib(fake_loaded.rss_kib),
            millis(etcd_full_time),
            millis(fake_full_time),
            mib(etcd_listed.hwm_kib),
            mib(fake_listed.hwm_kib),
            fake_pages.pages,
            millis(etcd_paging_time),
            millis(fake_paging_time),
            mib(etcd_paged.hwm_kib),
            mib(fake_paged.hwm_kib),
            mib(etcd_paged.rss_kib),
            mib(fake_paged.rss_kib),
        );
        assert_eq!(outcome_class(&etcd_full), outcome_class(&fake_full), "the full LIST ends the same way");
        assert_eq!(etcd_pages, fake_pages, "paging shows the same pages");
        assert_eq!(fake_pages.keys, LIST_VALUES, "paging reaches every key");
        assert_eq!(fake_pages.bytes, LIST_VALUES * LIST_VALUE_BYTES, "paging reads every byte");
    });
}

// ---------------------------------------------------------------------------------------------------------
// 3. Floods past the request limits.
// ---------------------------------------------------------------------------------------------------------

const FLOOD_PREFIX: &str = "/limits/flood/";
const FLOOD_CLIENTS: usize = 64;
/// Each client sends this many oversized puts and as many oversized txns.
const FLOOD_ROUNDS: usize = 8;
/// Just above the default `--max-request-bytes` (1.5 MiB = 1,572,864 bytes) once the key and framing are
/// added, and below gRPC's own receive limit (2 MiB), so that etcd itself, not gRPC, refuses it.
const OVERSIZED_VALUE_BYTES: usize = 1_600_000;
/// One more than the default `--max-txn-ops` (128).
const OVERSIZED_TXN_OPS: usize = 129;

/// What one flood of a server showed.
struct Flood {
    /// How many requests ended each way, by kind and outcome class.
    outcomes: BTreeMap<String, usize>,
    /// Keys under the flood prefix afterwards.
    left_behind: i64,
    /// Whether a normal put and a get of it succeeded afterwards.
    serves_afterwards: bool,
    rss_before: Memory,
    after: Memory,
    time: Duration,
}

/// One client's share of a flood: oversized puts and txns with too many operations, in turns.
async fn flood_client(server_url: String, c: usize) -> Vec<String> {
    let mut client = Client::connect([server_url], None).await.expect("a flood client connects");
    let mut outcomes = Vec::new();
    for round in 0..FLOOD_ROUNDS {
        let key = format!("{FLOOD_PREFIX}put/{c}/{round}");
        let put = client.put(key, vec![b'x'; OVERSIZED_VALUE_BYTES], None).await;
        outcomes.push(format!("put: {}", outcome_class(&put)));
        let ops: Vec<TxnOp> = (0..OVERSIZED_TXN_OPS)
            .map(|op| TxnOp::put(format!("{FLOOD_PREFIX}txn/{c}/{round}/{op}"), "v", None))
            .collect();
        let txn = client.txn(Txn::new().and_then(ops)).await;
        outcomes.push(format!("txn: {}", outcome_class(&txn)));
    }
    outcomes
}

/// Floods `server` from [`FLOOD_CLIENTS`] concurrent clients, then looks at what is left.
fn flood(server: &Server) -> Flood {
    let pid = member_pid(server);
    runtime().block_on(async {
        let rss_before = Memory::of(pid);
        let started = Instant::now();
        let clients: Vec<_> = (0..FLOOD_CLIENTS).map(|c| tokio::spawn(flood_client(server.url(), c))).collect();
        let mut outcomes = BTreeMap::new();
        for client in clients {
            for outcome in client.await.expect("a flood client task") {
                *outcomes.entry(outcome).or_insert(0) += 1;
            }
        }
        let time = started.elapsed();
        let after = Memory::of(pid);
        let mut client = connect(server).await;
        let left_behind = count_under(&mut client, FLOOD_PREFIX).await;
        let put = client.put("/limits/after-flood", "fine", None).await;
        let get = client.get("/limits/after-flood", None).await;
        let serves_afterwards =
            put.is_ok() && get.is_ok_and(|g| g.kvs().first().is_some_and(|kv| kv.value() == b"fine"));
        Flood { outcomes, left_behind, serves_afterwards, rss_before, after, time }
    })
}

/// 64 concurrent clients flooding a member with puts just over `--max-request-bytes` and txns with one
/// operation more than `--max-txn-ops` get every request refused, with the same gRPC code and message from
/// fake-etcd as from real etcd; nothing of the flood is written, and a normal put succeeds afterwards.
#[test]
fn floods_past_the_request_limits_are_refused_as_etcd_refuses_them() {
    let etcd = Server::start(&Peer::RealEtcd, Disk::Tmpfs);
    let fake = Server::start(&Peer::under_test(), Disk::Tmpfs);
    // One flood after the other, so that each member has both cores and its peak is its own.
    let on_etcd = flood(&etcd);
    let on_fake = flood(&fake);
    println!(
        "FIGURE request_flood: clients={FLOOD_CLIENTS} requests_each={} put_bytes={OVERSIZED_VALUE_BYTES} \
         txn_ops={OVERSIZED_TXN_OPS} etcd_rss_before={} etcd_hwm={} etcd_time={} fake_rss_before={} fake_hwm={} \
         fake_rss_after={} fake_time={}",
        2 * FLOOD_ROUNDS,
        mib(on_etcd.rss_before.rss_kib),
        mib(on_etcd.after.hwm_kib),
        millis(on_etcd.time),
        mib(on_fake.rss_before.rss_kib),
        mib(on_fake.after.hwm_kib),
        mib(on_fake.after.rss_kib),
        millis(on_fake.time),
    );
    for (outcome, n) in &on_etcd.outcomes {
        println!("  etcd: {n} x {outcome}");
    }
    assert_eq!(on_etcd.outcomes, on_fake.outcomes, "fake-etcd refuses the flood as etcd does");
    let sent = FLOOD_CLIENTS * FLOOD_ROUNDS;
    let refused = |kind: &str| -> usize {
        on_fake.outcomes.iter().filter(|(o, _)| o.starts_with(kind) && !o.ends_with(": ok")).map(|(_, n)| n).sum()
    };
    assert_eq!(refused("put:"), sent, "every oversized put is refused");
    assert_eq!(refused("txn:"), sent, "every oversized txn is refused");
    for flood in [&on_etcd, &on_fake] {
        assert_eq!(flood.left_behind, 0, "nothing of the flood is written");
        assert!(flood.serves_afterwards, "a normal put and get succeed after the flood");
    }
}

// ---------------------------------------------------------------------------------------------------------
// 4. A watch stream nobody reads.
// ---------------------------------------------------------------------------------------------------------

const SLOW_PREFIX: &str = "/limits/slow/";
/// Watchers on the prefix in the one unread stream. Each put becomes one response per watcher, so the
/// responses a server would buffer without bound outweigh what the store itself keeps twentyfold, and an
/// unbounded buffer shows in the member's memory (see [`SLOW_GROWTH_BOUND_KIB`]).
const SLOW_WATCHERS: usize = 20;
const SLOW_PUTS: usize = 25_000;
const SLOW_VALUE_BYTES: usize = 1024;
const SLOW_WRITERS: usize = 16;
/// How much the member's peak memory may grow from before the writes until the consumer has read
/// everything. The store keeps every revision (nothing is compacted): 25,000 values of 1 KiB, about 25 MiB,
/// with the Raft log about as much again, index overheads, and a catch-up's events read from the store.
/// Real etcd grows by 160 to 190 MiB over the whole case. Buffering every unread response instead would take
/// 20 watchers x 25,000 events x over 1 KiB, above 500 MiB; 384 MiB lies between with room on both sides.
const SLOW_GROWTH_BOUND_KIB: u64 = 384 * KIB_PER_MIB;
/// How long the consumer may take to read everything once it starts.
const CATCH_UP_DEADLINE: Duration = Duration::from_secs(40);

fn slow_key(writer: usize, n: usize) -> String {
    format!("{SLOW_PREFIX}{writer:02}/{n:05}")
}

/// Puts [`SLOW_PUTS`] small values from [`SLOW_WRITERS`] concurrent clients; returns the key written at
/// each revision.
async fn write_many(client: &Client) -> BTreeMap<i64, String> {
    let writers: Vec<_> = (0..SLOW_WRITERS)
        .map(|w| {
            let mut client = client.clone();
            tokio::spawn(async move {
                let mut written = Vec::new();
                for n in (w..SLOW_PUTS).step_by(SLOW_WRITERS) {
                    let key = slow_key(w, n);
                    let resp = client.put(key.clone(), vec![b'v'; SLOW_VALUE_BYTES], None).await.expect("put");
                    written.push((resp.header().expect("a header").revision(), key));
                }
                written
            })
        })
        .collect();
    let mut all = BTreeMap::new();
    for writer in writers {
        all.extend(writer.await.expect("a writer task"));
    }
    all
}

/// What the slow consumer read once it started reading.
#[derive(Default)]
struct CaughtUp {
    /// Per watch id, (key, mod revision) of each event, in arrival order.
    events: BTreeMap<i64, Vec<(String, i64)>>,
    /// Watch ids canceled because the revisions they needed were compacted.
    compacted: Vec<i64>,
    surprises: Vec<String>,
    total: usize,
}

/// Reads the held stream until every watcher has `per_watcher` events (or was canceled by compaction).
async fn read_held_stream(responses: &mut WatchResponseStream, per_watcher: usize) -> CaughtUp {
    let deadline = Instant::now() + CATCH_UP_DEADLINE;
    let mut caught = CaughtUp::default();
    while caught.total + caught.compacted.len() * per_watcher < SLOW_WATCHERS * per_watcher {
        let wait = deadline.saturating_duration_since(Instant::now());
        let resp = match tokio::time::timeout(wait, responses.message()).await {
            Ok(Ok(Some(resp))) => resp,
            Ok(other) => {
                caught.surprises.push(format!("the stream ended: {other:?}"));
                break;
            }
            Err(_) => {
                caught.surprises.push(format!("only {} events within {CATCH_UP_DEADLINE:?}", caught.total));
                break;
            }
        };
        if resp.canceled() && resp.compact_revision() > 0 {
            caught.compacted.push(resp.watch_id());
            continue;
        }
        let got = caught.events.entry(resp.watch_id()).or_default();
        for event in resp.events() {
            let kv = event.kv().expect("an event carries its key-value");
            got.push((String::from_utf8_lossy(kv.key()).into_owned(), kv.mod_revision()));
            caught.total += 1;
        }
    }
    caught
}

/// One run of the slow consumer against one member.
struct SlowRun {
    before: Memory,
    after_writes: Memory,
    after_reading: Memory,
    write_time: Duration,
    read_time: Duration,
    ids: Vec<i64>,
    written: BTreeMap<i64, String>,
    caught: CaughtUp,
}

/// Opens [`SLOW_WATCHERS`] watchers on the prefix in one stream, holds the stream unread while
/// [`SLOW_PUTS`] puts land, then reads it.
fn hold_a_stream_while_writing(server: &Server) -> SlowRun {
    let pid = member_pid(server);
    runtime().block_on(async {
        // The watcher has its own connection: its unread data must not hold up the writer's responses in a
        // shared connection's flow-control window.
        let watcher = connect(server).await;
        let writer = connect(server).await;
        let options = || Some(WatchOptions::new().with_prefix());
        let (mut sender, mut responses) =
            watcher.watch_client().watch(SLOW_PREFIX, options()).await.expect("opening a watch stream").split();
        for _ in 1..SLOW_WATCHERS {
            sender.watch(SLOW_PREFIX, options()).await.expect("sending a watch create request");
        }
        let mut ids = Vec::new();
        while ids.len() < SLOW_WATCHERS {
            let resp = responses.message().await.expect("a watch response").expect("the stream stays open");
            assert!(resp.created() && !resp.canceled(), "watch not created: {resp:?}");
            ids.push(resp.watch_id());
        }
        // From here on the stream is held, never polled, while the writes land.
        let before = Memory::of(pid);
        let writing = Instant::now();
        let written = write_many(&writer).await;
        let write_time = writing.elapsed();
        let after_writes = Memory::of(pid);
        let reading = Instant::now();
        let caught = read_held_stream(&mut responses, SLOW_PUTS).await;
        let read_time = reading.elapsed();
        let after_reading = Memory::of(pid);
        drop(sender);
        SlowRun { before, after_writes, after_reading, write_time, read_time, ids, written, caught }
    })
}

/// Every watcher of the run that compaction did not cancel got every event once, in revision order.
fn assert_caught_up_exactly_once(label: &str, run: &SlowRun) {
    assert!(run.caught.surprises.is_empty(), "{label}: {:?}", run.caught.surprises);
    let want: Vec<(String, i64)> = run.written.iter().map(|(rev, key)| (key.clone(), *rev)).collect();
    for id in run.ids.iter().filter(|id| !run.caught.compacted.contains(id)) {
        let got = run.caught.events.get(id).map(Vec::as_slice).unwrap_or_default();
        let first_wrong = got.iter().zip(&want).position(|(g, w)| g != w);
        assert!(
            got == want.as_slice(),
            "{label} watch {id}: {} events, want {}; first difference at {first_wrong:?}",
            got.len(),
            want.len()
        );
    }
}

/// How much a run's peak memory grew over its memory before the writes, at `at`.
fn growth(run: &SlowRun, at: Memory) -> u64 {
    at.hwm_kib.saturating_sub(run.before.rss_kib)
}

/// A client watching a prefix (twenty watchers in one stream) that does not read its stream while 25,000
/// puts land does not make the member buffer without bound while the stream is held: fake-etcd's peak
/// memory grows by less than [`SLOW_GROWTH_BOUND_KIB`] over the writes and through the catch-up, on both. When the client then reads, every watcher gets every event exactly
/// once, in revision order, on both (slow watchers fall behind and catch up from the store), or, had the
/// revisions been compacted meanwhile, a compaction cancel.
#[test]
fn an_unread_watch_stream_keeps_memory_bounded_and_then_catches_up_exactly_once() {
    let etcd = Server::start(&Peer::RealEtcd, Disk::Tmpfs);
    let on_etcd = hold_a_stream_while_writing(&etcd);
    drop(etcd);
    let fake = Server::start(&Peer::under_test(), Disk::Tmpfs);
    let on_fake = hold_a_stream_while_writing(&fake);
    for (label, run) in [("etcd", &on_etcd), ("fake", &on_fake)] {
        println!(
            "FIGURE slow_consumer_{label}: watchers={SLOW_WATCHERS} puts={SLOW_PUTS} value_bytes={SLOW_VALUE_BYTES} \
             events_delivered={} compaction_cancels={} rss_before={} rss_after_writes={} hwm_after_writes={} \
             rss_after_reading={} hwm_after_reading={} write_time={} catch_up_time={}",
            run.caught.total,
            run.caught.compacted.len(),
            mib(run.before.rss_kib),
            mib(run.after_writes.rss_kib),
            mib(run.after_writes.hwm_kib),
            mib(run.after_reading.rss_kib),
            mib(run.after_reading.hwm_kib),
            millis(run.write_time),
            millis(run.read_time),
        );
    }
    assert_caught_up_exactly_once("etcd", &on_etcd);
    assert_caught_up_exactly_once(fake.peer.label(), &on_fake);
    let bound = mib(SLOW_GROWTH_BOUND_KIB);
    for (label, run) in [("etcd", &on_etcd), (fake.peer.label(), &on_fake)] {
        let held = growth(run, run.after_writes);
        assert!(held < SLOW_GROWTH_BOUND_KIB, "{label} grew by {} while held (bound {bound})", mib(held));
        // Once the client reads, a behind watcher is sent a batch of at most 1,000 revisions per round, and
        // only while the stream's queue has room (etcd: a 128-response channel, `syncWatchers` every 100 ms;
        // fake-etcd: `WatchHub::sync` with the outbox's room), so the backlog never sits in memory whole.
        let peak = growth(run, run.after_reading);
        assert!(peak < SLOW_GROWTH_BOUND_KIB, "{label} grew by {} through the catch-up (bound {bound})", mib(peak));
    }
}

// ---------------------------------------------------------------------------------------------------------
// 5. Ten thousand leases expiring together.
// ---------------------------------------------------------------------------------------------------------

const LEASE_PREFIX: &str = "/limits/lease/";
const LEASES: usize = 10_000;
/// Every lease's TTL. etcd's minimum with the default election timeout is 1.5 s, but granting ten thousand
/// leases takes seconds, so those granted so far must be kept alive meanwhile (see [`RENEW_EVERY`]); a
/// renewal round of several thousand leases takes up to a second on real etcd, and with 2 s a lease granted
/// just after a round began was found expired before the next round reached it. 5 s left the rounds room
/// on an idle machine but not beside a niced build, where a lease expired between two rounds; 10 s does.
const LEASE_TTL_S: i64 = 10;
/// Concurrent granters.
const LEASE_GRANTERS: usize = 64;
/// Keys are attached in txns of this many puts (the default `--max-txn-ops`), one lease per put.
const KEYS_PER_TXN: usize = 128;
/// Granting ten thousand leases takes seconds, about as long as their TTL, so the leases granted so far are
/// renewed this often (after each round ends) until the last key is attached, then all once more: from that
/// last renewal on they share one deadline.
const RENEW_EVERY: Duration = Duration::from_millis(400);
/// How long after the shared deadline the keys and leases may take to go (fake-etcd revokes expired
/// leases one proposal at a time, about 20 s for ten thousand with a debug build).
const EXPIRY_DEADLINE: Duration = Duration::from_secs(50);
const EXPIRY_POLL: Duration = Duration::from_millis(50);

fn lease_key(i: usize) -> String {
    format!("{LEASE_PREFIX}{i:05}")
}

/// Grants [`LEASES`] leases with the same TTL from [`LEASE_GRANTERS`] concurrent clients, adding each id to
/// `granted` as soon as it is granted, so that the renewer keeps it alive.
async fn grant_leases(client: &Client, granted: &Arc<Mutex<Vec<i64>>>) {
    let granters: Vec<_> = (0..LEASE_GRANTERS)
        .map(|g| {
            let (mut client, granted) = (client.clone(), granted.clone());
            tokio::spawn(async move {
                for i in (g..LEASES).step_by(LEASE_GRANTERS) {
                    let lease =
                        client.lease_grant(LEASE_TTL_S, None).await.unwrap_or_else(|e| panic!("grant {i}: {e}"));
                    assert_eq!(lease.ttl(), LEASE_TTL_S, "the lease gets the TTL asked for");
                    granted.lock().expect("the granted list").push(lease.id());
                }
            })
        })
        .collect();
    for granter in granters {
        granter.await.expect("a granter task");
    }
}

/// Attaches key `i` to lease `ids[i]`, [`KEYS_PER_TXN`] keys per txn.
async fn attach_keys(client: &mut Client, ids: &[i64]) {
    for (chunk, leases) in ids.chunks(KEYS_PER_TXN).enumerate() {
        let puts: Vec<TxnOp> = leases
            .iter()
            .enumerate()
            .map(|(j, &id)| {
                TxnOp::put(lease_key(chunk * KEYS_PER_TXN + j), "leased", Some(PutOptions::new().with_lease(id)))
            })
            .collect();
        client.txn(Txn::new().and_then(puts)).await.unwrap_or_else(|e| panic!("attaching keys, txn {chunk}: {e}"));
    }
}

/// Renews every lease of `ids` once on one keep-alive stream; returns when the last renewal was answered.
/// Each answer must carry the full TTL: a lease that expired before its renewal would answer with TTL 0.
async fn renew_all(client: &Client, ids: &[i64]) -> Instant {
    let (mut keeper, mut answers) = client.lease_client().keep_alive(ids[0]).await.expect("renewing the first lease");
    // The other renewals go on the same stream: the server renews whichever lease each request names, and
    // the keeper's id (a public field with etcd-client's `pub-response-field`) names the next one. They are
    // sent from their own task while this one reads the answers, so neither side's window fills.
    let rest: Vec<i64> = ids[1..].to_vec();
    let sending = tokio::spawn(async move {
        for id in rest {
            keeper.id = id;
            keeper.keep_alive().await.expect("sending a keep-alive");
        }
        keeper
    });
    // `keep_alive` has read the first lease's answer itself (and refused a TTL of 0); the rest come here.
    for _ in 1..ids.len() {
        let answer = answers.message().await.expect("a keep-alive answer").expect("the stream stays open");
        assert_eq!(answer.ttl(), LEASE_TTL_S, "lease {:x} is still alive when renewed", answer.id());
    }
    let renewed = Instant::now();
    drop(sending.await.expect("the keep-alive sender"));
    renewed
}

/// Renews the leases granted so far every [`RENEW_EVERY`] until `stop` is set.
async fn keep_granted_alive(client: Client, granted: Arc<Mutex<Vec<i64>>>, stop: Arc<AtomicBool>) {
    while !stop.load(Ordering::SeqCst) {
        let ids = granted.lock().expect("the granted list").clone();
        if !ids.is_empty() {
            renew_all(&client, &ids).await;
        }
        tokio::time::sleep(RENEW_EVERY).await;
    }
}

/// When, measured from `deadline`, the keys under the prefix and the leases were first seen all gone.
struct Expiry {
    keys_gone: Option<Duration>,
    leases_gone: Option<Duration>,
}

/// Polls until no key under the prefix and no lease is left, or [`EXPIRY_DEADLINE`] after `deadline`.
async fn wait_for_expiry(client: &mut Client, deadline: Instant) -> Expiry {
    let mut expiry = Expiry { keys_gone: None, leases_gone: None };
    let give_up = deadline + EXPIRY_DEADLINE;
    while Instant::now() < give_up && (expiry.keys_gone.is_none() || expiry.leases_gone.is_none()) {
        if expiry.keys_gone.is_none() && count_under(client, LEASE_PREFIX).await == 0 {
            expiry.keys_gone = Some(Instant::now().saturating_duration_since(deadline));
        }
        if expiry.leases_gone.is_none() && client.leases().await.expect("LeaseLeases").leases().is_empty() {
            expiry.leases_gone = Some(Instant::now().saturating_duration_since(deadline));
        }
        tokio::time::sleep(EXPIRY_POLL).await;
    }
    expiry
}

/// One run of the mass expiry against one member.
struct LeaseRun {
    grant_time: Duration,
    keys_before_deadline: i64,
    leases_before_deadline: usize,
    expiry: Expiry,
    keys_at_end: i64,
    leases_at_end: usize,
    before: Memory,
    granted: Memory,
    after: Memory,
}

/// Grants the leases and attaches their keys while keeping them alive, renews them all at once, and
/// watches them expire.
fn leases_expire_together(server: &Server) -> LeaseRun {
    let pid = member_pid(server);
    runtime().block_on(async {
        let mut client = connect(server).await;
        let before = Memory::of(pid);
        let granting = Instant::now();
        let (granted, stop) = (Arc::new(Mutex::new(Vec::new())), Arc::new(AtomicBool::new(false)));
        let renewer = tokio::spawn(keep_granted_alive(client.clone(), granted.clone(), stop.clone()));
        grant_leases(&client, &granted).await;
        let ids = granted.lock().expect("the granted list").clone();
        attach_keys(&mut client, &ids).await;
        stop.store(true, Ordering::SeqCst);
        renewer.await.expect("the renewer task");
        let grant_time = granting.elapsed();
        let deadline = renew_all(&client, &ids).await + Duration::from_secs(LEASE_TTL_S as u64);
        let granted = Memory::of(pid);
        let keys_before_deadline = count_under(&mut client, LEASE_PREFIX).await;
        let leases_before_deadline = client.leases().await.expect("LeaseLeases").leases().len();
        let expiry = wait_for_expiry(&mut client, deadline).await;
        let keys_at_end = count_under(&mut client, LEASE_PREFIX).await;
        let leases_at_end = client.leases().await.expect("LeaseLeases").leases().len();
        let after = Memory::of(pid);
        LeaseRun {
            grant_time,
            keys_before_deadline,
            leases_before_deadline,
            expiry,
            keys_at_end,
            leases_at_end,
            before,
            granted,
            after,
        }
    })
}

/// Ten thousand leases with the same 5 s TTL, each with a key attached and all renewed at once so that they
/// share one deadline, are all revoked once it passes, on real etcd and on fake-etcd alike: no key under
/// their prefix is left and LeaseLeases lists none. Until the deadline every key and lease is still there.
#[test]
fn ten_thousand_leases_expiring_together_take_all_their_keys_with_them() {
    let etcd = Server::start(&Peer::RealEtcd, Disk::Tmpfs);
    let on_etcd = leases_expire_together(&etcd);
    drop(etcd);
    let fake = Server::start(&Peer::under_test(), Disk::Tmpfs);
    let on_fake = leases_expire_together(&fake);
    let shown = |d: Option<Duration>| d.map_or_else(|| "never".to_string(), millis);
    for (label, run) in [("etcd", &on_etcd), ("fake", &on_fake)] {
        println!(
            "FIGURE lease_expiry_{label}: leases={LEASES} ttl={LEASE_TTL_S}s grant_and_attach_time={} \
             keys_before_deadline={} keys_gone_after_deadline={} leases_gone_after_deadline={} rss_before={} \
             rss_granted={} rss_after_expiry={} hwm={}",
            millis(run.grant_time),
            run.keys_before_deadline,
            shown(run.expiry.keys_gone),
            shown(run.expiry.leases_gone),
            mib(run.before.rss_kib),
            mib(run.granted.rss_kib),
            mib(run.after.rss_kib),
            mib(run.after.hwm_kib),
        );
    }
    for (label, run) in [("etcd", &on_etcd), (fake.peer.label(), &on_fake)] {
        assert_eq!(run.keys_before_deadline, LEASES as i64, "{label}: every key lives until the deadline");
        assert_eq!(run.leases_before_deadline, LEASES, "{label}: every lease lives until the deadline");
        assert!(run.expiry.keys_gone.is_some(), "{label}: keys left {EXPIRY_DEADLINE:?} after the deadline");
        assert!(run.expiry.leases_gone.is_some(), "{label}: leases listed {EXPIRY_DEADLINE:?} after the deadline");
        assert_eq!((run.keys_at_end, run.leases_at_end), (0, 0), "{label}: nothing comes back");
    }
}

// ---------------------------------------------------------------------------------------------------------
// 6. Connections that never speak.
// ---------------------------------------------------------------------------------------------------------

const IDLE_CONNECTIONS: usize = 1_000;
/// How long the idle connections are held before the member is asked to serve, so that it has accepted
/// them all and whatever it does with a silent connection has happened.
const IDLE_SETTLE: Duration = Duration::from_secs(2);
/// How much a member's memory may grow with the idle connections held. etcd grows by about 3 KiB a
/// connection. fake-etcd's client listener gives every accepted connection a 64 KiB read chunk at once
/// (`service/authority.rs`, `READ_CHUNK`), whether or not it ever sends a byte, so it grows by about
/// 78 KiB a connection, some 77 MiB here: bounded, but 25 times etcd's cost. 192 MiB (192 KiB a
/// connection) leaves that room to vary, and still catches a server that buffered megabytes per
/// connection or leaked per accept.
const IDLE_GROWTH_BOUND_KIB: u64 = 192 * KIB_PER_MIB;

/// What holding the idle connections did to one member.
struct IdleRun {
    before: Memory,
    held: Memory,
    serve_time: Duration,
    served: Result<(), String>,
    /// How many of the idle connections the member had closed by the end (read returned end of file).
    closed_by_server: usize,
}

/// Opens [`IDLE_CONNECTIONS`] TCP connections to the client port that send nothing, then, while they are
/// held, puts and gets a key from a normal client.
fn hold_idle_connections(server: &Server) -> IdleRun {
    let pid = member_pid(server);
    let before = Memory::of(pid);
    let idle: Vec<std::net::TcpStream> = (0..IDLE_CONNECTIONS)
        .map(|n| {
            std::net::TcpStream::connect(("127.0.0.1", server.client_port))
                .unwrap_or_else(|e| panic!("idle connection {n}: {e}"))
        })
        .collect();
    std::thread::sleep(IDLE_SETTLE);
    let held = Memory::of(pid);
    let serving = Instant::now();
    let served = runtime().block_on(async {
        let mut client = connect(server).await;
        client.put("/limits/idle", "still serving", None).await.map_err(|e| format!("put: {e}"))?;
        let got = client.get("/limits/idle", None).await.map_err(|e| format!("get: {e}"))?;
        match got.kvs().first().map(|kv| kv.value()) {
            Some(b"still serving") => Ok(()),
            other => Err(format!("get found {other:?}")),
        }
    });
    let serve_time = serving.elapsed();
    let closed_by_server = idle.iter().filter(|s| closed_by_peer(s)).count();
    IdleRun { before, held, serve_time, served, closed_by_server }
}

/// Whether the peer has closed `stream`: a non-blocking read finds end of file (or a reset).
fn closed_by_peer(stream: &std::net::TcpStream) -> bool {
    use std::io::Read;
    stream.set_nonblocking(true).expect("a non-blocking socket");
    let mut buf = [0u8; 64];
    match (&*stream).read(&mut buf) {
        Ok(0) => true,
        Ok(_) => false,
        Err(e) => e.kind() != std::io::ErrorKind::WouldBlock,
    }
}

/// A thousand TCP connections to the client port that never send a byte, held open, do not stop the member
/// from serving other clients (a put and a get succeed while they are held), and the member's memory grows
/// by less than [`IDLE_GROWTH_BOUND_KIB`] with them, on real etcd and on fake-etcd alike.
#[test]
fn a_thousand_silent_connections_do_not_stop_the_member_serving() {
    let etcd = Server::start(&Peer::RealEtcd, Disk::Tmpfs);
    let on_etcd = hold_idle_connections(&etcd);
    drop(etcd);
    let fake = Server::start(&Peer::under_test(), Disk::Tmpfs);
    let on_fake = hold_idle_connections(&fake);
    for (label, run) in [("etcd", &on_etcd), ("fake", &on_fake)] {
        println!(
            "FIGURE idle_connections_{label}: connections={IDLE_CONNECTIONS} rss_before={} rss_held={} hwm={} \
             put_get_time={} closed_by_server={}",
            mib(run.before.rss_kib),
            mib(run.held.rss_kib),
            mib(run.held.hwm_kib),
            millis(run.serve_time),
            run.closed_by_server,
        );
    }
    for (label, run) in [("etcd", &on_etcd), (fake.peer.label(), &on_fake)] {
        assert_eq!(run.served, Ok(()), "{label} serves with the silent connections held");
        let growth = run.held.rss_kib.saturating_sub(run.before.rss_kib);
        let bound = IDLE_GROWTH_BOUND_KIB;
        assert!(growth < bound, "{label} grew by {} (bound {})", mib(growth), mib(bound));
    }
}

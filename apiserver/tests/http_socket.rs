//! The HTTP server on a real socket, for what only a socket shows: clients that send their headers or body
//! too slowly, or open a connection and never speak; a client that goes away in the middle of a watch; and
//! a graceful shutdown that ends watches cleanly and lets in-flight requests finish.
#![cfg(not(madsim))]
#![allow(dead_code)]

#[path = "support/cases.rs"]
mod cases;
#[path = "support/etcd_server.rs"]
mod etcd_server;
#[path = "support/http_server.rs"]
mod http_server;
// The case tables are not run here; the server module refers to them.
mod http_cases;

use std::time::Duration;

use apiserver::endpoints::serve::serve;
use apiserver::endpoints::ServerConfig;
use http_server::{Cache, TestServer};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::oneshot;

/// A server on a loopback port; dropping `stop` starts its drain, `done` fires when it has drained.
struct Listening {
    addr: std::net::SocketAddr,
    stop: Option<oneshot::Sender<()>>,
    done: oneshot::Receiver<()>,
    _server: TestServer,
}

async fn listen(config: ServerConfig) -> Listening {
    let server = TestServer::start_with(Cache::On, config).await;
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (stop, stopped) = oneshot::channel::<()>();
    let (finished, done) = oneshot::channel::<()>();
    let api = server.server.clone();
    tokio::spawn(async move {
        serve(api, listener, async move {
            let _ = stopped.await;
        })
        .await;
        let _ = finished.send(());
    });
    Listening { addr, stop: Some(stop), done, _server: server }
}

/// Reads until the peer closes or `limit` passes; returns what came and whether it closed.
async fn read_until_closed(stream: &mut TcpStream, limit: Duration) -> (String, bool) {
    let mut all = Vec::new();
    let mut buf = [0u8; 4096];
    let deadline = tokio::time::Instant::now() + limit;
    loop {
        match tokio::time::timeout_at(deadline, stream.read(&mut buf)).await {
            Ok(Ok(0)) | Ok(Err(_)) => return (String::from_utf8_lossy(&all).into_owned(), true),
            Ok(Ok(n)) => all.extend_from_slice(&buf[..n]),
            Err(_) => return (String::from_utf8_lossy(&all).into_owned(), false),
        }
    }
}

/// One request over a fresh connection, `Connection: close`; the whole answer.
async fn roundtrip(addr: std::net::SocketAddr, request: &str) -> String {
    let mut stream = TcpStream::connect(addr).await.unwrap();
    stream.write_all(request.as_bytes()).await.unwrap();
    read_until_closed(&mut stream, Duration::from_secs(10)).await.0
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap()
}

#[test]
fn clients_that_send_headers_slowly_or_never_are_cut_off() {
    runtime().block_on(async {
        let config = ServerConfig { header_read_timeout: Duration::from_millis(300), ..ServerConfig::default() };
        let server = listen(config).await;
        let mut silent = TcpStream::connect(server.addr).await.unwrap();
        let mut slow = TcpStream::connect(server.addr).await.unwrap();
        slow.write_all(b"GET /version HTTP/1.1\r\nHost: x\r\n").await.unwrap();
        let (_, silent_closed) = read_until_closed(&mut silent, Duration::from_secs(5)).await;
        let (_, slow_closed) = read_until_closed(&mut slow, Duration::from_secs(5)).await;
        assert!(silent_closed, "a connection that never spoke stays open");
        assert!(slow_closed, "a connection that never finished its headers stays open");
        // The server still answers everyone else.
        let answer = roundtrip(server.addr, "GET /version HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").await;
        assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    });
}

#[test]
fn a_body_sent_too_slowly_gets_the_request_timeout() {
    runtime().block_on(async {
        let config = ServerConfig { request_timeout: Duration::from_millis(500), ..ServerConfig::default() };
        let server = listen(config).await;
        let mut stream = TcpStream::connect(server.addr).await.unwrap();
        let head = "POST /api/v1/namespaces/default/configmaps HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\nConnection: close\r\n\r\n{\"meta";
        stream.write_all(head.as_bytes()).await.unwrap();
        let (answer, _) = read_until_closed(&mut stream, Duration::from_secs(5)).await;
        assert!(answer.starts_with("HTTP/1.1 504"), "{answer}");
        assert!(answer.contains("Timeout: request did not complete within requested timeout"), "{answer}");
    });
}

/// The number of watches the server counts as open, from `/metrics`.
async fn open_watches(addr: std::net::SocketAddr) -> i64 {
    let answer = roundtrip(addr, "GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").await;
    answer
        .lines()
        .filter(|l| l.starts_with("apiserver_longrunning_requests{") && l.contains("verb=\"WATCH\""))
        .filter_map(|l| l.rsplit(' ').next()?.parse::<i64>().ok())
        .sum()
}

#[test]
fn a_client_gone_mid_watch_releases_its_watch() {
    runtime().block_on(async {
        let server = listen(ServerConfig::default()).await;
        let mut watch = TcpStream::connect(server.addr).await.unwrap();
        let request = "GET /api/v1/namespaces/default/configmaps?watch=true HTTP/1.1\r\nHost: x\r\n\r\n";
        watch.write_all(request.as_bytes()).await.unwrap();
        let mut head = [0u8; 64];
        let n = watch.read(&mut head).await.unwrap();
        assert!(String::from_utf8_lossy(&head[..n]).starts_with("HTTP/1.1 200"));
        assert_eq!(open_watches(server.addr).await, 1);
        drop(watch);
        let mut open = 1;
        for _ in 0..100 {
            open = open_watches(server.addr).await;
            if open == 0 {
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        assert_eq!(open, 0, "the watch of a client that went away is still open");
    });
}

#[test]
fn shutdown_ends_watches_cleanly_and_drains() {
    runtime().block_on(async {
        let mut server = listen(ServerConfig::default()).await;
        let mut watch = TcpStream::connect(server.addr).await.unwrap();
        let request = "GET /api/v1/namespaces/default/configmaps?watch=true HTTP/1.1\r\nHost: x\r\n\r\n";
        watch.write_all(request.as_bytes()).await.unwrap();
        let mut head = [0u8; 64];
        let _ = watch.read(&mut head).await.unwrap();
        drop(server.stop.take());
        let (rest, closed) = read_until_closed(&mut watch, Duration::from_secs(10)).await;
        assert!(closed, "the watch stayed open after shutdown");
        assert!(rest.ends_with("0\r\n\r\n"), "the watch's chunked body did not end cleanly: {rest:?}");
        tokio::time::timeout(Duration::from_secs(10), &mut server.done).await.expect("serve never returned").unwrap();
        assert!(TcpStream::connect(server.addr).await.is_err(), "the listener still accepts after the drain");
    });
}

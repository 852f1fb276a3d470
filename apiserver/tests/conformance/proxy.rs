//! [`Proxy`]: a loopback TCP proxy in front of the etcd server whose connections a case can cut, to break a
//! client's streams (the Cacher's etcd watch) while the server keeps running. New connections keep working,
//! so a client that reconnects gets through again, unless the case closes the proxy (`close`) until it
//! opens it again (`open`): meanwhile every new connection is dropped at once, as a server that is down.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinHandle;

/// A proxy to one server; stops when dropped.
pub struct Proxy {
    pub endpoint: String,
    connections: Arc<Mutex<Vec<JoinHandle<()>>>>,
    accept: JoinHandle<()>,
    closed: Arc<AtomicBool>,
}

impl Proxy {
    /// Listens on a free loopback port and forwards every connection to `target` (`http://host:port`).
    pub async fn start(target: &str) -> Proxy {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let endpoint = format!("http://{}", listener.local_addr().unwrap());
        let target = target.trim_start_matches("http://").to_string();
        let connections = Arc::new(Mutex::new(Vec::new()));
        let live = connections.clone();
        let closed = Arc::new(AtomicBool::new(false));
        let refusing = closed.clone();
        let accept = tokio::spawn(async move {
            while let Ok((mut inbound, _)) = listener.accept().await {
                if refusing.load(Ordering::SeqCst) {
                    drop(inbound);
                    continue;
                }
                let target = target.clone();
                let forward = tokio::spawn(async move {
                    if let Ok(mut outbound) = TcpStream::connect(&target).await {
                        let _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound).await;
                    }
                });
                live.lock().unwrap().push(forward);
            }
        });
        Proxy { endpoint, connections, accept, closed }
    }

    /// Cuts every open connection and drops every new one until [`Proxy::open`].
    pub fn close(&self) {
        self.closed.store(true, Ordering::SeqCst);
        self.cut();
    }

    /// Forwards new connections again.
    pub fn open(&self) {
        self.closed.store(false, Ordering::SeqCst);
    }

    /// Closes every open connection.
    pub fn cut(&self) {
        for connection in self.connections.lock().unwrap().drain(..) {
            connection.abort();
        }
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.accept.abort();
        self.cut();
    }
}

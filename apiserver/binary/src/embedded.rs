//! The embedded etcd: one fake-etcd member in this process, serving the etcd v3 API on a loopback port of
//! its own, so that the apiserver reaches it through the wire API exactly as it reaches an external etcd.

use std::path::Path;
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use fake_etcd::service::member::data_dir::{DataDir, Identity};
use fake_etcd::service::{serve_listener, Member, MemberConfig};
use tokio::sync::oneshot;

/// A running member; dropping it does not stop it: call [`Embedded::stop`].
pub struct Embedded {
    pub endpoint: String,
    stop: oneshot::Sender<()>,
    task: tokio::task::JoinHandle<()>,
}

impl Embedded {
    /// Starts a single member on a free loopback port, its state in `data_dir` or in memory.
    pub async fn start(data_dir: Option<&Path>) -> Result<Embedded, String> {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .map_err(|e| format!("binding the embedded etcd's port: {e}"))?;
        let port = listener.local_addr().map_err(|e| e.to_string())?.port();
        let endpoint = format!("http://127.0.0.1:{port}");
        let mut config = MemberConfig::single(
            "kubesim",
            vec!["http://127.0.0.1:2380".into()],
            vec![endpoint.clone()],
            "kubesim-apiserver",
        );
        if let Some(dir) = data_dir {
            let identity = Identity { member: config.member_id, cluster: config.cluster_id };
            config.disk = DataDir::open(dir, identity).map_err(|e| format!("the etcd data dir: {e}"))?;
        }
        // Lease ids are seeded from the wall clock, as etcd seeds them, so a restart does not reuse them.
        let start_ms = SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_millis() as u64).unwrap_or(0);
        let member: Arc<Member> =
            Member::new(config, start_ms).map_err(|e| format!("starting the embedded etcd: {e}"))?;
        let (stop, stopped) = oneshot::channel::<()>();
        let task = tokio::spawn(async move {
            let shutdown = async move {
                let _ = stopped.await;
            };
            if let Err(err) = serve_listener(member, listener, shutdown).await {
                tracing::error!("embedded etcd stopped: {err}");
            }
        });
        Ok(Embedded { endpoint, stop, task })
    }

    /// Stops the member and waits for it.
    pub async fn stop(self) {
        let _ = self.stop.send(());
        let _ = self.task.await;
    }
}

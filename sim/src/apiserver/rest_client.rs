//! A minimal Kubernetes REST client over HTTP/1.1 for simulated clients: hyper's client connection over the
//! runtime's TCP (madsim's under simulation), with the apiserver's executor. Real client libraries (kube-rs,
//! client-go) run on real tokio and cannot run under madsim; this one sends what they send (JSON bodies,
//! `Accept: application/json`) and reads what the server answers, objects, `Status` errors and watch streams.
//!
//! A client keeps one connection for its requests and opens one per watch. A request whose future is dropped
//! (the recorder's timeout) takes its connection with it, so the next request starts on a fresh one.

use std::net::SocketAddr;
use std::sync::Mutex;

use apiserver::endpoints::quiet_flush::QuietFlush;
use apiserver::endpoints::serve::RuntimeExecutor;
use bytes::{Bytes, BytesMut};
use http::{Method, Request, StatusCode};
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::client::conn::http1::{self, SendRequest};
use hyper_util::rt::TokioIo;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Status;
use serde_json::Value;

/// The user agent simulated clients send.
const USER_AGENT: &str = "kubesim-client/v0.1.0 (madsim) kubernetes/sim";

/// Why a request got no object.
#[derive(Clone, Debug)]
pub enum ClientError {
    /// The server answered with this `Status`.
    Status(Box<Status>),
    /// No answer: the connection could not be made or broke.
    Transport(String),
}

impl ClientError {
    /// The error as the `Status` a client library would report (a transport failure as a 503 without a
    /// reason, the way client-go surfaces a broken connection to retry logic).
    pub fn to_status(&self) -> Status {
        match self {
            ClientError::Status(status) => (**status).clone(),
            ClientError::Transport(message) => Status {
                code: Some(503),
                message: Some(message.clone()),
                status: Some("Failure".into()),
                ..Status::default()
            },
        }
    }
}

/// One client's connection to one apiserver.
pub struct KubeClient {
    addr: SocketAddr,
    /// The idle connection, if any; taken for the length of a request.
    idle: Mutex<Option<SendRequest<Full<Bytes>>>>,
    /// The bearer token every request carries (`Authorization: Bearer ..`); without one the client is
    /// anonymous.
    token: Option<String>,
}

impl KubeClient {
    pub fn new(addr: SocketAddr) -> KubeClient {
        KubeClient { addr, idle: Mutex::new(None), token: None }
    }

    /// The same client, its requests carrying `token`.
    pub fn with_token(mut self, token: Option<String>) -> KubeClient {
        self.token = token;
        self
    }

    /// A client of the same apiserver with the same credentials, on connections of its own.
    pub fn fresh(&self) -> KubeClient {
        KubeClient::new(self.addr).with_token(self.token.clone())
    }

    /// The apiserver's address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    async fn connect(&self) -> Result<SendRequest<Full<Bytes>>, ClientError> {
        let stream = tokio::net::TcpStream::connect(self.addr)
            .await
            .map_err(|e| ClientError::Transport(format!("dial {}: {e}", self.addr)))?;
        let (send, connection) = http1::handshake(TokioIo::new(QuietFlush::new(stream)))
            .await
            .map_err(|e| ClientError::Transport(format!("handshake: {e}")))?;
        hyper::rt::Executor::execute(&RuntimeExecutor, async move {
            let _ = connection.await;
        });
        Ok(send)
    }

    fn request(&self, method: Method, path: &str, body: Option<&Value>, content_type: &str) -> Request<Full<Bytes>> {
        let mut builder = Request::builder()
            .method(method)
            .uri(path)
            .header("Host", "apiserver")
            .header("Accept", "application/json")
            // client-go's form (`binary/version (os/arch) kubernetes/commit`): the server names the field
            // manager of a write without `fieldManager` after the part before the first `/`.
            .header("User-Agent", USER_AGENT);
        if let Some(token) = &self.token {
            builder = builder.header("Authorization", format!("Bearer {token}"));
        }
        let bytes = match body {
            Some(body) => {
                builder = builder.header("Content-Type", content_type);
                Bytes::from(serde_json::to_vec(body).expect("JSON values serialize"))
            }
            None => Bytes::new(),
        };
        builder.body(Full::new(bytes)).expect("the client builds valid requests")
    }

    /// Sends a request and reads the answer: the object, or the `Status` of an error.
    pub async fn send(&self, method: Method, path: &str, body: Option<&Value>) -> Result<Value, ClientError> {
        let (code, value) = self.exchange(method, path, body, "application/json").await?;
        if (200..300).contains(&code) {
            Ok(value)
        } else {
            let status: Status = serde_json::from_value(value).map_err(|e| ClientError::Transport(e.to_string()))?;
            Err(ClientError::Status(Box::new(status)))
        }
    }

    /// Sends a request with a body of `content_type` and reads the whole answer: its status code and its
    /// JSON (an object, a list, or a `Status`). Only a request that got no answer is an error.
    pub async fn exchange(
        &self,
        method: Method,
        path: &str,
        body: Option<&Value>,
        content_type: &str,
    ) -> Result<(u16, Value), ClientError> {
        let idle = self.idle.lock().expect("the connection slot is never poisoned").take();
        let mut conn = match idle {
            Some(conn) if !conn.is_closed() => conn,
            _ => self.connect().await?,
        };
        let response = conn
            .send_request(self.request(method, path, body, content_type))
            .await
            .map_err(|e| ClientError::Transport(format!("request: {e}")))?;
        let status = response.status();
        let bytes = response
            .into_body()
            .collect()
            .await
            .map_err(|e| ClientError::Transport(format!("reading the answer: {e}")))?
            .to_bytes();
        *self.idle.lock().expect("the connection slot is never poisoned") = Some(conn);
        let value: Value = serde_json::from_slice(&bytes)
            .map_err(|e| ClientError::Transport(format!("an answer that is not JSON ({status}): {e}")))?;
        Ok((status.as_u16(), value))
    }

    /// Opens a watch on a connection of its own; the stream yields its events.
    pub async fn watch(&self, path: &str) -> Result<WatchStream, ClientError> {
        let mut conn = self.connect().await?;
        let response = conn
            .send_request(self.request(Method::GET, path, None, "application/json"))
            .await
            .map_err(|e| ClientError::Transport(format!("watch: {e}")))?;
        if response.status() != StatusCode::OK {
            let bytes = response.into_body().collect().await.map(|c| c.to_bytes()).unwrap_or_default();
            let status: Status = serde_json::from_slice(&bytes)
                .map_err(|e| ClientError::Transport(format!("a watch refusal that is not a Status: {e}")))?;
            return Err(ClientError::Status(Box::new(status)));
        }
        Ok(WatchStream { body: response.into_body(), buffer: BytesMut::new(), _conn: conn })
    }
}

/// One event of a watch stream.
#[derive(Clone, Debug, PartialEq)]
pub struct StreamEvent {
    /// `ADDED`, `MODIFIED`, `DELETED`, `BOOKMARK` or `ERROR`.
    pub kind: String,
    pub object: Value,
}

/// The events of one watch, read line by line from its chunked body.
pub struct WatchStream {
    body: Incoming,
    buffer: BytesMut,
    _conn: SendRequest<Full<Bytes>>,
}

impl WatchStream {
    /// The next event; `None` once the server has ended the stream (or it broke).
    pub async fn next(&mut self) -> Option<StreamEvent> {
        loop {
            if let Some(at) = self.buffer.iter().position(|b| *b == b'\n') {
                let line = self.buffer.split_to(at + 1);
                let mut value: Value = serde_json::from_slice(&line[..at]).ok()?;
                let kind = value.get("type").and_then(Value::as_str).unwrap_or_default().to_string();
                let object = value.get_mut("object").map(Value::take).unwrap_or(Value::Null);
                return Some(StreamEvent { kind, object });
            }
            let frame = self.body.frame().await?.ok()?;
            if let Ok(data) = frame.into_data() {
                self.buffer.extend_from_slice(&data);
            }
        }
    }
}

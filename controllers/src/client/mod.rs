//! The controllers' Kubernetes client: JSON over the apiserver's HTTP API, as client-go sends it.
//!
//! Requests go through a [`Transport`]: in-process through `ApiServer::handle` (the binary's controllers,
//! which still pass authentication, authorization and admission as any request does), or over HTTP/1.1 on
//! a socket (the simulation's controller managers, on nodes of their own, where faults reach them). A
//! client keeps one idle connection for requests and opens one per watch, so that a request whose future is
//! dropped takes its connection with it.
//!
//! Files: `watch` (a watch's event stream), `error` (`ClientError`, and which errors are worth a retry),
//! `resource` (`ApiResource` and its paths), `discovery` (the preferred resources of every group), `observe`
//! (what a client tells a recorder of its writes).
//!
//! A client may carry a fence: a leading controller manager's controllers write only while the fence says
//! the lease is surely still theirs, and a write past it fails at once, never reaching the server.

pub mod discovery;
mod error;
pub mod observe;
pub mod resource;
mod watch;

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use apiserver::endpoints::quiet_flush::QuietFlush;
use apiserver::endpoints::serve::RuntimeExecutor;
use apiserver::endpoints::ApiServer;
use bytes::Bytes;
use http::{Method, Request, Response, StatusCode};
use http_body_util::combinators::UnsyncBoxBody;
use http_body_util::{BodyExt, Full};
use hyper::client::conn::http1::{self, SendRequest};
use hyper_util::rt::TokioIo;
use serde_json::Value;

pub use error::ClientError;
pub use resource::ApiResource;
pub use watch::{WatchEvent, WatchStream};

/// A response body, whichever transport carried it.
type Body = UnsyncBoxBody<Bytes, String>;

/// The content type of a JSON merge patch (`kubectl patch --type merge`).
pub const MERGE_PATCH: &str = "application/merge-patch+json";
/// The content type of a strategic merge patch, which the garbage collector sends.
pub const STRATEGIC_MERGE_PATCH: &str = "application/strategic-merge-patch+json";
/// The content type of a JSON patch (RFC 6902).
pub const JSON_PATCH: &str = "application/json-patch+json";

/// How requests reach the apiserver.
#[derive(Clone)]
pub enum Transport {
    /// Straight into the server's request handler, in the same process.
    InProcess(Arc<ApiServer>),
    /// HTTP/1.1 over TCP (madsim's under simulation).
    Http(SocketAddr),
}

/// Whether writes may go out now.
pub type Fence = Arc<dyn Fn() -> bool + Send + Sync>;

/// One controller manager's connection to its apiserver.
pub struct Client {
    /// Writes are refused while this says no (a manager that may have lost its lease).
    fence: Option<Fence>,
    /// Told of every write sent.
    observer: Option<Arc<dyn observe::Observer>>,
    transport: Transport,
    /// The bearer token every request carries.
    token: Option<String>,
    /// client-go's form (`binary/version (os/arch) kubernetes/commit`): the server names the field manager
    /// of a write without `fieldManager` after the part before the first `/`.
    user_agent: String,
    /// The idle HTTP connection, if any; taken for the length of a request.
    idle: Mutex<Option<SendRequest<Full<Bytes>>>>,
}

impl Client {
    /// A client of the apiserver `transport` reaches, its requests carrying `token`, naming itself
    /// `agent` in its user agent (kube-controller-manager's is `kube-controller-manager`).
    pub fn new(transport: Transport, token: Option<String>, agent: &str) -> Client {
        Client {
            fence: None,
            observer: None,
            transport,
            token,
            user_agent: format!("{agent}/v1.32.0 (linux/amd64) kubernetes/kubesim"),
            idle: Mutex::new(None),
        }
    }

    /// The same client, its writes told to `observer`.
    pub fn with_observer(mut self, observer: Option<Arc<dyn observe::Observer>>) -> Client {
        self.observer = observer;
        self
    }

    /// Whoever is told of this client's writes, for a controller that reports more than the write (the
    /// garbage collector's deletes).
    pub fn observer(&self) -> Option<&Arc<dyn observe::Observer>> {
        self.observer.as_ref()
    }

    /// A client of the same apiserver, on connections of its own, whose writes go out only while `fence`
    /// allows them.
    pub fn fenced(&self, fence: Fence) -> Client {
        Client { fence: Some(fence), ..self.fresh() }
    }

    /// A client of the same apiserver with the same credentials, on connections of its own.
    pub fn fresh(&self) -> Client {
        Client {
            fence: self.fence.clone(),
            observer: self.observer.clone(),
            transport: self.transport.clone(),
            token: self.token.clone(),
            user_agent: self.user_agent.clone(),
            idle: Mutex::new(None),
        }
    }

    fn request(&self, method: Method, path: &str, body: Option<&Value>, content_type: &str) -> Request<Full<Bytes>> {
        let mut builder = Request::builder()
            .method(method)
            .uri(path)
            .header("Host", "apiserver")
            .header("Accept", "application/json")
            .header("User-Agent", &self.user_agent);
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

    async fn connect(addr: SocketAddr) -> Result<SendRequest<Full<Bytes>>, ClientError> {
        let stream = tokio::net::TcpStream::connect(addr)
            .await
            .map_err(|e| ClientError::Transport(format!("dial {addr}: {e}")))?;
        let (send, connection) = http1::handshake(TokioIo::new(QuietFlush::new(stream)))
            .await
            .map_err(|e| ClientError::Transport(format!("handshake: {e}")))?;
        hyper::rt::Executor::execute(&RuntimeExecutor, async move {
            let _ = connection.await;
        });
        Ok(send)
    }

    /// Sends one request; `keep` says whether its connection may serve the next request (not a watch's).
    async fn send(&self, req: Request<Full<Bytes>>, keep: bool) -> Result<Response<Body>, ClientError> {
        match &self.transport {
            Transport::InProcess(server) => {
                let response = server.clone().handle(req).await;
                Ok(response.map(|b| b.map_err(|never| match never {}).boxed_unsync()))
            }
            Transport::Http(addr) => {
                let idle = if keep { self.idle.lock().expect("never poisoned").take() } else { None };
                let mut conn = match idle {
                    Some(conn) if !conn.is_closed() => conn,
                    _ => Self::connect(*addr).await?,
                };
                let response =
                    conn.send_request(req).await.map_err(|e| ClientError::Transport(format!("request: {e}")))?;
                if keep {
                    *self.idle.lock().expect("never poisoned") = Some(conn);
                    Ok(response.map(|b| b.map_err(|e| e.to_string()).boxed_unsync()))
                } else {
                    // The watch's connection lives as long as its body: the connection task ends when the
                    // body and the sender are both dropped.
                    Ok(response.map(move |b| {
                        let _conn = conn;
                        b.map_err(|e| e.to_string()).boxed_unsync()
                    }))
                }
            }
        }
    }

    /// Sends a request and reads its whole answer: the object, or the error `Status`.
    pub async fn call(
        &self,
        method: Method,
        path: &str,
        body: Option<&Value>,
        content_type: &str,
    ) -> Result<Value, ClientError> {
        if method != Method::GET {
            if self.fence.as_ref().is_some_and(|fence| !fence()) {
                return Err(ClientError::Fenced);
            }
            if let Some(observer) = &self.observer {
                observer.write_sent(method.as_str(), path);
            }
        }
        let response = self.send(self.request(method, path, body, content_type), true).await?;
        let status = response.status();
        let bytes = response
            .into_body()
            .collect()
            .await
            .map_err(|e| ClientError::Transport(format!("reading the answer: {e}")))?
            .to_bytes();
        let value: Value = serde_json::from_slice(&bytes)
            .map_err(|e| ClientError::Transport(format!("an answer that is not JSON ({status}): {e}")))?;
        if status.is_success() {
            Ok(value)
        } else {
            Err(ClientError::from_status(status.as_u16(), value))
        }
    }

    /// `GET path`.
    pub async fn get(&self, path: &str) -> Result<Value, ClientError> {
        self.call(Method::GET, path, None, "application/json").await
    }

    /// `POST path` with `body`.
    pub async fn create(&self, path: &str, body: &Value) -> Result<Value, ClientError> {
        self.call(Method::POST, path, Some(body), "application/json").await
    }

    /// `PUT path` with `body`.
    pub async fn update(&self, path: &str, body: &Value) -> Result<Value, ClientError> {
        self.call(Method::PUT, path, Some(body), "application/json").await
    }

    /// `PATCH path` with `patch` of `content_type`.
    pub async fn patch(&self, path: &str, patch: &Value, content_type: &str) -> Result<Value, ClientError> {
        self.call(Method::PATCH, path, Some(patch), content_type).await
    }

    /// `DELETE path` with `options` (a `DeleteOptions` body: propagation policy, preconditions).
    pub async fn delete(&self, path: &str, options: Option<&Value>) -> Result<Value, ClientError> {
        self.call(Method::DELETE, path, options, "application/json").await
    }

    /// Opens a watch (`path` carries `watch=true` and its parameters) on a connection of its own.
    pub async fn watch(&self, path: &str) -> Result<WatchStream, ClientError> {
        let response = self.send(self.request(Method::GET, path, None, "application/json"), false).await?;
        if response.status() != StatusCode::OK {
            let code = response.status().as_u16();
            let bytes = response.into_body().collect().await.map(|c| c.to_bytes()).unwrap_or_default();
            let value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
            return Err(ClientError::from_status(code, value));
        }
        Ok(WatchStream::new(response.into_body()))
    }
}

/// Everything but RFC 3986's unreserved characters, as Go's `url.QueryEscape` escapes them.
const ESCAPED: &percent_encoding::AsciiSet =
    &percent_encoding::NON_ALPHANUMERIC.remove(b'-').remove(b'_').remove(b'.').remove(b'~');

/// `s` escaped for a path segment or a query string's value.
pub fn query_escape(s: &str) -> String {
    percent_encoding::utf8_percent_encode(s, ESCAPED).to_string()
}

//! Calling a webhook over HTTP: where a `clientConfig` points (sans IO: upstream's `util/webhook/client.go`
//! and, for services, `util/proxy/proxy.go`'s `ResolveEndpoint`), and the POST itself (the async shell):
//! one connection per call over the runtime's `TcpStream` (madsim's under simulation), hyper's HTTP/1.1
//! client, the webhook's timeout around connect, request and response.
//!
//! `https` is TLS (rustls with ring) trusting the `caBundle` only, in the real build. The simulation has
//! no certificates, so under madsim an `https` webhook is spoken to in plain HTTP; errors still quote the
//! `https://` URL upstream would. A `url` of `http://` is spoken to in plain HTTP in both builds (the
//! API refuses such URLs when a configuration is written; tests that build configurations directly use
//! them).
//!
//! A service reference is resolved through the service's `Endpoints` object as kube-apiserver does with
//! `--enable-aggregator-routing`: the first subset with addresses and a port named as the service's port,
//! its first address (upstream picks one at random).
//!
//! Errors are Go's: `Post "<url>?timeout=10s": dial tcp 127.0.0.1:1: connect: connection refused`,
//! `...: context deadline exceeded`, `...: dial tcp <addr>: i/o timeout`, `...: EOF`.

use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper_util::rt::TokioIo;
use serde_json::Value;
use tokio::io::{AsyncRead, AsyncWrite};

use super::review::HttpAnswer;
use crate::go_text::quote;

/// Where a webhook call goes.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Endpoint {
    /// The URL as upstream's errors quote it, timeout parameter included.
    pub(crate) url: String,
    pub(crate) tls: bool,
    /// The TLS server name and `Host` header's host.
    pub(crate) server_name: String,
    pub(crate) host_header: String,
    pub(crate) path_and_query: String,
    /// `host:port` to connect to, or why the service could not be resolved (reported as the dial's error).
    pub(crate) dial: Result<String, String>,
    pub(crate) ca_bundle: Vec<u8>,
}

/// Go's `time.Duration.String()` of whole seconds: `10s`, `1m0s`.
fn go_seconds(secs: u64) -> String {
    match (secs / 3600, secs / 60 % 60, secs % 60) {
        (0, 0, s) => format!("{s}s"),
        (0, m, s) => format!("{m}m{s}s"),
        (h, m, s) => format!("{h}h{m}m{s}s"),
    }
}

/// The request path as client-go builds it from the configured one: `path.Join("/", p)`.
fn clean_path(path: &str) -> String {
    let mut parts: Vec<&str> = Vec::new();
    for segment in path.split('/') {
        match segment {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            s => parts.push(s),
        }
    }
    format!("/{}", parts.join("/"))
}

/// The endpoint of a `clientConfig.url`. A scheme other than `http` and `https` fails as Go's transport fails
/// it, when the call is made.
pub(crate) fn from_url(url: &str, ca_bundle: Vec<u8>, timeout_s: u64) -> Endpoint {
    let (scheme, rest) = url.split_once("://").unwrap_or(("", url));
    let scheme = scheme.to_ascii_lowercase();
    let rest = rest.split(['?', '#']).next().unwrap_or("");
    let (host, path) = match rest.find('/') {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, ""),
    };
    let tls = scheme != "http";
    let has_port = host.rsplit_once(':').is_some_and(|(h, p)| !p.is_empty() && (!h.contains(':') || h.ends_with(']')));
    let dial = match scheme.as_str() {
        "http" | "https" if has_port => Ok(host.to_string()),
        "http" | "https" => Ok(format!("{host}:{}", if tls { 443 } else { 80 })),
        other => Err(format!("unsupported protocol scheme {}", quote(other))),
    };
    let server_name = match host.rsplit_once(':') {
        Some((h, _)) if has_port => h.trim_matches(['[', ']']).to_string(),
        _ => host.trim_matches(['[', ']']).to_string(),
    };
    let path_and_query = format!("{}?timeout={}", clean_path(path), go_seconds(timeout_s));
    Endpoint {
        url: format!("{scheme}://{host}{path_and_query}"),
        tls,
        server_name,
        host_header: host.to_string(),
        path_and_query,
        dial,
        ca_bundle,
    }
}

/// The endpoint of a `clientConfig.service` (its port defaulted to 443), given where the service resolved.
pub(crate) fn from_service(
    service: &Value,
    ca_bundle: Vec<u8>,
    timeout_s: u64,
    dial: Result<String, String>,
) -> Endpoint {
    let field = |k: &str| service.get(k).and_then(Value::as_str).unwrap_or("");
    let port = service.get("port").and_then(Value::as_i64).unwrap_or(443);
    let server_name = format!("{}.{}.svc", field("name"), field("namespace"));
    let host = format!("{server_name}:{port}");
    let path_and_query = format!("{}?timeout={}", clean_path(field("path")), go_seconds(timeout_s));
    Endpoint {
        url: format!("https://{host}{path_and_query}"),
        tls: true,
        server_name,
        host_header: host,
        path_and_query,
        dial,
        ca_bundle,
    }
}

/// `ResolveEndpoint`: the address of a service's port among its endpoints. `service` and `endpoints` are
/// the stored objects, `None` when absent.
pub(crate) fn resolve_service(
    name: &str,
    port: i64,
    service: Option<&Value>,
    endpoints: Option<&Value>,
) -> Result<String, String> {
    let service = service.ok_or_else(|| format!("service {} not found", quote(name)))?;
    let kind = service.pointer("/spec/type").and_then(Value::as_str).unwrap_or("ClusterIP");
    if !matches!(kind, "ClusterIP" | "LoadBalancer" | "NodePort") {
        return Err(format!("unsupported service type {}", quote(kind)));
    }
    let ports = service.pointer("/spec/ports").and_then(Value::as_array).map_or(&[][..], Vec::as_slice);
    let port_name = ports
        .iter()
        .find(|p| p.get("port").and_then(Value::as_i64) == Some(port))
        .map(|p| p.get("name").and_then(Value::as_str).unwrap_or(""))
        .ok_or_else(|| format!("no service port {port} found for service {}", quote(name)))?;
    let endpoints = endpoints.ok_or_else(|| format!("endpoints {} not found", quote(name)))?;
    let unavailable = || format!("no endpoints available for service {}", quote(name));
    let subsets = endpoints.get("subsets").and_then(Value::as_array).map_or(&[][..], Vec::as_slice);
    for subset in subsets {
        let ip = subset.pointer("/addresses/0/ip").and_then(Value::as_str);
        let Some(ip) = ip else { continue };
        let subset_ports = subset.get("ports").and_then(Value::as_array).map_or(&[][..], Vec::as_slice);
        let matching = subset_ports.iter().find(|p| p.get("name").and_then(Value::as_str).unwrap_or("") == port_name);
        if let Some(p) = matching.and_then(|p| p.get("port")).and_then(Value::as_i64) {
            return Ok(if ip.contains(':') { format!("[{ip}]:{p}") } else { format!("{ip}:{p}") });
        }
    }
    Err(unavailable())
}

/// Go's dial error for a failed connect.
fn dial_error(addr: &str, err: &std::io::Error) -> String {
    match err.kind() {
        std::io::ErrorKind::ConnectionRefused => format!("dial tcp {addr}: connect: connection refused"),
        _ => format!("dial tcp {addr}: {err}"),
    }
}

/// POSTs `body` to the endpoint within `timeout`; the error is what upstream wraps as
/// `failed to call webhook: <error>`.
pub(crate) async fn post(endpoint: &Endpoint, body: Vec<u8>, timeout: Duration) -> Result<HttpAnswer, String> {
    let wrap = |e: String| format!("Post {}: {e}", quote(&endpoint.url));
    let addr = endpoint.dial.clone().map_err(wrap)?;
    let start = tokio::time::Instant::now();
    let stream = match tokio::time::timeout(timeout, tokio::net::TcpStream::connect(addr.as_str())).await {
        Err(_) => return Err(wrap(format!("dial tcp {addr}: i/o timeout"))),
        Ok(Err(e)) => return Err(wrap(dial_error(&addr, &e))),
        Ok(Ok(stream)) => stream,
    };
    let remaining = timeout.saturating_sub(start.elapsed());
    match tokio::time::timeout(remaining, exchange(endpoint, stream, body)).await {
        Err(_) => Err(wrap("context deadline exceeded".into())),
        Ok(answer) => answer.map_err(wrap),
    }
}

#[cfg(not(madsim))]
async fn exchange(endpoint: &Endpoint, stream: tokio::net::TcpStream, body: Vec<u8>) -> Result<HttpAnswer, String> {
    if endpoint.tls {
        let stream = tls::connect(endpoint, stream).await?;
        return http1(endpoint, stream, body).await;
    }
    http1(endpoint, stream, body).await
}

#[cfg(madsim)]
async fn exchange(endpoint: &Endpoint, stream: tokio::net::TcpStream, body: Vec<u8>) -> Result<HttpAnswer, String> {
    http1(endpoint, stream, body).await
}

/// hyper's text for a transport error, with Go's where they differ (a connection closed before an answer is
/// Go's `EOF`).
fn hyper_error(err: &hyper::Error) -> String {
    if err.is_incomplete_message() || err.is_canceled() {
        return "EOF".into();
    }
    err.to_string()
}

/// One HTTP/1.1 request and its answer over `stream`; the connection is driven until the answer's body is
/// read, then dropped.
async fn http1<S>(endpoint: &Endpoint, stream: S, body: Vec<u8>) -> Result<HttpAnswer, String>
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let (mut sender, conn) =
        hyper::client::conn::http1::handshake(TokioIo::new(stream)).await.map_err(|e| hyper_error(&e))?;
    let request = http::Request::builder()
        .method(http::Method::POST)
        .uri(endpoint.path_and_query.as_str())
        .header(http::header::HOST, endpoint.host_header.as_str())
        .header(http::header::CONTENT_TYPE, "application/json")
        .header(http::header::ACCEPT, "application/json, */*")
        .body(Full::new(Bytes::from(body)))
        .map_err(|e| e.to_string())?;
    let call = async move {
        let response = sender.send_request(request).await.map_err(|e| hyper_error(&e))?;
        let status = response.status().as_u16();
        let content_type =
            response.headers().get(http::header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).map(str::to_string);
        let body = response.into_body().collect().await.map_err(|e| hyper_error(&e))?.to_bytes().to_vec();
        Ok::<_, String>(HttpAnswer { status, content_type, body })
    };
    let mut conn = std::pin::pin!(conn);
    let mut call = std::pin::pin!(call);
    tokio::select! {
        biased;
        answer = &mut call => answer,
        closed = &mut conn => match closed {
            Err(e) => Err(hyper_error(&e)),
            Ok(()) => call.await,
        },
    }
}

#[cfg(not(madsim))]
mod tls {
    //! The TLS client of an `https` webhook: the `caBundle`'s certificates are the only roots.

    use std::sync::Arc;

    use tokio_rustls::rustls;
    use tokio_rustls::rustls::pki_types::{CertificateDer, ServerName};

    use super::Endpoint;

    /// Go's `crypto/tls` text for a certificate rustls refuses, for the common cases.
    fn tls_error(err: std::io::Error) -> String {
        let inner = err.get_ref().and_then(|e| e.downcast_ref::<rustls::Error>());
        match inner {
            Some(rustls::Error::InvalidCertificate(rustls::CertificateError::UnknownIssuer)) => {
                "tls: failed to verify certificate: x509: certificate signed by unknown authority".into()
            }
            Some(rustls::Error::InvalidCertificate(rustls::CertificateError::Expired)) => {
                "tls: failed to verify certificate: x509: certificate has expired or is not yet valid".into()
            }
            Some(e) => format!("tls: {e}"),
            None => err.to_string(),
        }
    }

    pub(super) async fn connect(
        endpoint: &Endpoint,
        stream: tokio::net::TcpStream,
    ) -> Result<tokio_rustls::client::TlsStream<tokio::net::TcpStream>, String> {
        let mut roots = rustls::RootCertStore::empty();
        let certs: Vec<CertificateDer<'static>> =
            rustls_pemfile::certs(&mut endpoint.ca_bundle.as_slice()).filter_map(Result::ok).collect();
        // A certificate rustls cannot parse is left out, as Go's `AppendCertsFromPEM` skips it.
        let _ = roots.add_parsable_certificates(certs);
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let mut config = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|e| e.to_string())?
            .with_root_certificates(roots)
            .with_no_client_auth();
        config.alpn_protocols = vec![b"http/1.1".to_vec()];
        let name = ServerName::try_from(endpoint.server_name.clone()).map_err(|e| e.to_string())?;
        tokio_rustls::TlsConnector::from(Arc::new(config)).connect(name, stream).await.map_err(tls_error)
    }
}

//! Serving connections: our own accept loop over the runtime's TCP listener (tokio's in the real build,
//! madsim's under simulation), hyper 1 connections (HTTP/1.1, and HTTP/2 with prior knowledge or over
//! TLS with ALPN) with an executor and a timer that spawn and sleep on the same runtime. hyper-util's
//! tokio executor and timer, and `axum::serve`, would call real tokio, which has no reactor under madsim.
//!
//! A client that sends its headers too slowly is cut off after `ServerConfig::header_read_timeout` (30 s,
//! hyper's header read timeout on our timer); one that sends its body too slowly gets the request
//! timeout's 504. Shutdown is graceful: the server stops accepting, open watches end cleanly (their chunked body
//! ends), every connection finishes its in-flight request, and [`serve`] returns when the last one has.

use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use hyper::rt::{Executor, Sleep, Timer};
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use hyper_util::server::conn::auto;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpListener;
use tokio::sync::Notify;

use crate::endpoints::authn::ClientCertificates;
use crate::endpoints::quiet_flush::QuietFlush;
use crate::endpoints::ApiServer;

/// Spawns hyper's background tasks on the current runtime.
#[derive(Clone, Copy, Debug, Default)]
pub struct RuntimeExecutor;

impl<F> Executor<F> for RuntimeExecutor
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    fn execute(&self, fut: F) {
        tokio::spawn(fut);
    }
}

/// hyper's timer on the current runtime's clock.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct RuntimeTimer;

struct RuntimeSleep(Pin<Box<tokio::time::Sleep>>);

impl Future for RuntimeSleep {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        self.0.as_mut().poll(cx)
    }
}

impl Sleep for RuntimeSleep {}

impl Timer for RuntimeTimer {
    fn sleep(&self, duration: Duration) -> Pin<Box<dyn Sleep>> {
        Box::pin(RuntimeSleep(Box::pin(tokio::time::sleep(duration))))
    }

    // madsim's `tokio::time::Instant` is std's, so the conversion only converts in the real build.
    #[allow(clippy::useless_conversion)]
    fn sleep_until(&self, deadline: Instant) -> Pin<Box<dyn Sleep>> {
        Box::pin(RuntimeSleep(Box::pin(tokio::time::sleep_until(deadline.into()))))
    }

    fn reset(&self, sleep: &mut Pin<Box<dyn Sleep>>, new_deadline: Instant) {
        *sleep = self.sleep_until(new_deadline);
    }
}

/// A stream whose first read fails if no byte arrives within the deadline. hyper-util's protocol
/// detection waits for the first bytes before hyper's own header timeout starts, so a client that opens a
/// connection and never speaks would otherwise hold it forever.
struct FirstByteDeadline<S> {
    inner: S,
    deadline: Option<Pin<Box<tokio::time::Sleep>>>,
}

impl<S> FirstByteDeadline<S> {
    fn new(inner: S, limit: Duration) -> FirstByteDeadline<S> {
        FirstByteDeadline { inner, deadline: Some(Box::pin(tokio::time::sleep(limit))) }
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for FirstByteDeadline<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let polled = Pin::new(&mut self.inner).poll_read(cx, buf);
        match &polled {
            Poll::Ready(Ok(())) if buf.filled().len() > before => self.deadline = None,
            Poll::Pending => {
                if let Some(deadline) = self.deadline.as_mut() {
                    if deadline.as_mut().poll(cx).is_ready() {
                        let err =
                            std::io::Error::new(std::io::ErrorKind::TimedOut, "no request within the header timeout");
                        return Poll::Ready(Err(err));
                    }
                }
            }
            _ => {}
        }
        polled
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for FirstByteDeadline<S> {
    fn poll_write(mut self: Pin<&mut Self>, cx: &mut Context<'_>, data: &[u8]) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write(cx, data)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }
}

/// Counts open connections, so that shutdown can wait for the last one.
#[derive(Default)]
struct Connections {
    open: AtomicUsize,
    closed: Notify,
}

impl Connections {
    async fn wait_idle(&self) {
        loop {
            let notified = self.closed.notified();
            if self.open.load(Ordering::SeqCst) == 0 {
                return;
            }
            notified.await;
        }
    }
}

struct ConnectionGuard(Arc<Connections>);

impl Drop for ConnectionGuard {
    fn drop(&mut self) {
        self.0.open.fetch_sub(1, Ordering::SeqCst);
        self.0.closed.notify_waiters();
    }
}

/// Serves `server` on `listener` until `shutdown` resolves, then drains: no new connections, watches
/// end, in-flight requests finish; returns once every connection has closed.
pub async fn serve(server: Arc<ApiServer>, listener: TcpListener, shutdown: impl Future<Output = ()>) {
    serve_with(server, listener, shutdown, |stream, _| async move { Some((stream, ClientCertificates::default())) })
        .await;
}

/// [`serve`] with a wrapper around each accepted stream (TLS, in the real binary), which also says what
/// client certificates the connection presented; a wrapper that fails drops the connection.
pub async fn serve_with<W, Fut, S>(
    server: Arc<ApiServer>,
    listener: TcpListener,
    shutdown: impl Future<Output = ()>,
    wrap: W,
) where
    W: Fn(tokio::net::TcpStream, SocketAddr) -> Fut,
    Fut: Future<Output = Option<(S, ClientCertificates)>> + Send + 'static,
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let connections = Arc::new(Connections::default());
    tokio::pin!(shutdown);
    loop {
        let accepted = tokio::select! {
            biased;
            () = &mut shutdown => break,
            accepted = listener.accept() => accepted,
        };
        let Ok((stream, peer)) = accepted else { continue };
        let _ = stream.set_nodelay(true);
        connections.open.fetch_add(1, Ordering::SeqCst);
        let guard = ConnectionGuard(connections.clone());
        let server = server.clone();
        let wrapped = wrap(stream, peer);
        tokio::spawn(async move {
            let _guard = guard;
            if let Some((stream, certificates)) = wrapped.await {
                serve_connection(server, stream, certificates).await;
            }
        });
    }
    server.begin_shutdown();
    connections.wait_idle().await;
}

/// Serves one connection until it closes or, once the server drains, its in-flight requests are done.
pub(crate) async fn serve_connection<S>(server: Arc<ApiServer>, stream: S, certificates: ClientCertificates)
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let mut builder = auto::Builder::new(RuntimeExecutor);
    builder.http1().timer(RuntimeTimer).header_read_timeout(server.config.header_read_timeout).keep_alive(true);
    builder.http2().timer(RuntimeTimer);
    let service_server = server.clone();
    let service = service_fn(move |mut req: http::Request<hyper::body::Incoming>| {
        let server = service_server.clone();
        req.extensions_mut().insert(certificates.clone());
        async move { Ok::<_, std::convert::Infallible>(server.handle(req).await) }
    });
    let stream = FirstByteDeadline::new(QuietFlush::new(stream), server.config.header_read_timeout);
    let connection = builder.serve_connection(TokioIo::new(stream), service);
    tokio::pin!(connection);
    tokio::select! {
        biased;
        _ = connection.as_mut() => return,
        () = server.shutdown.wait() => {}
    }
    connection.as_mut().graceful_shutdown();
    let _ = connection.await;
}

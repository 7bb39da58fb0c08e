//! The server's connections: accept, TLS (rustls, `--tls-cert`/`--tls-key`), HTTP/1.1 with
//! keep-alive, timeouts that a slow client cannot stretch, and a graceful shutdown.
//!
//! ```text
//! accept ─▶ [connection slot, else closed] ─▶ [TLS handshake within the header timeout]
//!        ─▶ the first request's head within the header timeout, else 408 and closed
//!        ─▶ hyper (HTTP/1.1; a later request's head, or an idle keep-alive, within the header
//!           timeout, else closed) ─▶ the app, with the client's address as `ConnectInfo`
//! ```
//!
//! hyper closes a connection whose head is late without an answer; the first request's head is
//! therefore read here, so that a slow client (slowloris) is told 408 with a reason.

use crate::limits::Limits;
use axum::Router;
use axum::extract::ConnectInfo;
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::path::Path;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, ReadBuf};
use tokio::net::TcpListener;
use tokio::sync::{Semaphore, watch};
use tokio::task::JoinSet;
use tower::ServiceExt;

/// Connections served at once; more are closed as soon as they are accepted.
pub const DEFAULT_MAX_CONNECTIONS: usize = 4096;

/// Longest request head read before hyper takes over (hyper answers 431 beyond its own limit).
const MAX_PEEKED_HEAD: usize = 64 * 1024;

/// How long a shutdown waits for requests in flight.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(30);

/// How the server listens.
#[derive(Clone)]
pub struct ServeOptions {
    /// Timeouts ([`Limits::header_timeout`]).
    pub limits: Limits,
    /// TLS, when the server speaks HTTPS.
    pub tls: Option<Arc<rustls::ServerConfig>>,
    /// Connections at once.
    pub max_connections: usize,
}

impl Default for ServeOptions {
    fn default() -> Self {
        Self {
            limits: Limits::default(),
            tls: None,
            max_connections: DEFAULT_MAX_CONNECTIONS,
        }
    }
}

/// Why TLS cannot be set up.
#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    /// A file cannot be read or holds no PEM item of the kind needed.
    #[error("cannot read {what} from {path}: {reason}")]
    Pem {
        /// `the certificate chain` or `the private key`.
        what: &'static str,
        /// The file.
        path: String,
        /// Why.
        reason: String,
    },
    /// rustls refused the pair.
    #[error("the certificate and key cannot be used: {0}")]
    Config(#[from] rustls::Error),
}

/// A TLS configuration from a PEM certificate chain and a PEM private key (PKCS#8, PKCS#1 or
/// SEC1), with the `ring` provider; HTTP/1.1 only.
///
/// # Errors
/// See [`TlsError`].
pub fn tls_config(cert: &Path, key: &Path) -> Result<Arc<rustls::ServerConfig>, TlsError> {
    use rustls::pki_types::pem::PemObject;
    use rustls::pki_types::{CertificateDer, PrivateKeyDer};
    let pem = |what, path: &Path, reason: String| TlsError::Pem {
        what,
        path: path.display().to_string(),
        reason,
    };
    let chain: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(cert)
        .map_err(|e| pem("the certificate chain", cert, e.to_string()))?
        .collect::<Result<_, _>>()
        .map_err(|e| pem("the certificate chain", cert, e.to_string()))?;
    if chain.is_empty() {
        return Err(pem(
            "the certificate chain",
            cert,
            "no CERTIFICATE block".to_owned(),
        ));
    }
    let key = PrivateKeyDer::from_pem_file(key)
        .map_err(|e| pem("the private key", key, e.to_string()))?;
    let mut config = rustls::ServerConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()?
    .with_no_client_auth()
    .with_single_cert(chain, key)?;
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(Arc::new(config))
}

/// Serves `app` on `listener` until `shutdown` completes, then lets requests in flight finish
/// (up to 30 s).
///
/// # Errors
/// When accepting fails for a reason other than a client's (the listener is gone).
pub async fn serve(
    listener: TcpListener,
    app: Router,
    options: ServeOptions,
    shutdown: impl Future<Output = ()> + Send,
) -> io::Result<()> {
    let slots = Arc::new(Semaphore::new(options.max_connections.max(1)));
    let acceptor = options.tls.clone().map(tokio_rustls::TlsAcceptor::from);
    let (stop, stopped) = watch::channel(false);
    let mut connections = JoinSet::new();
    tokio::pin!(shutdown);
    loop {
        let (stream, peer) = tokio::select! {
            () = &mut shutdown => break,
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                // A client that reset before accept, or descriptors running out for a moment.
                Err(e) if is_transient(&e) => {
                    tracing::warn!(error = %e, "accept failed; going on");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
                Err(e) => return Err(e),
            },
            Some(_) = connections.join_next(), if !connections.is_empty() => continue,
        };
        let Ok(slot) = Arc::clone(&slots).try_acquire_owned() else {
            tracing::warn!(%peer, "too many connections; closing a new one");
            drop(stream);
            continue;
        };
        let _ = stream.set_nodelay(true);
        let (app, acceptor, stopped) = (app.clone(), acceptor.clone(), stopped.clone());
        let header_timeout = options.limits.header_timeout;
        connections.spawn(async move {
            let _slot = slot;
            match acceptor {
                None => connection(stream, peer, app, header_timeout, stopped).await,
                Some(acceptor) => {
                    match tokio::time::timeout(header_timeout, acceptor.accept(stream)).await {
                        Ok(Ok(tls)) => connection(tls, peer, app, header_timeout, stopped).await,
                        Ok(Err(e)) => tracing::debug!(%peer, error = %e, "TLS handshake failed"),
                        Err(_) => tracing::debug!(%peer, "TLS handshake timed out"),
                    }
                }
            }
        });
    }
    let _ = stop.send(true);
    let _ = tokio::time::timeout(SHUTDOWN_GRACE, async {
        while connections.join_next().await.is_some() {}
    })
    .await;
    Ok(())
}

fn is_transient(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::ConnectionAborted
            | io::ErrorKind::ConnectionReset
            | io::ErrorKind::Interrupted
            | io::ErrorKind::WouldBlock
    ) || e.raw_os_error().is_some_and(|c| c == 23 || c == 24) // ENFILE, EMFILE
}

/// One connection: the first head within the timeout (else 408), then hyper.
async fn connection<S>(
    mut stream: S,
    peer: SocketAddr,
    app: Router,
    header_timeout: Duration,
    mut stopped: watch::Receiver<bool>,
) where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let head = match tokio::time::timeout(header_timeout, read_head(&mut stream)).await {
        Ok(Ok(Some(head))) => head,
        // Closed before a request, or broken.
        Ok(Ok(None) | Err(_)) => return,
        Err(_) => {
            tracing::debug!(%peer, "request head not sent in time; 408");
            let message = format!(
                "the request's head did not arrive within {} s\n",
                header_timeout.as_secs()
            );
            let answer = format!(
                "HTTP/1.1 408 Request Timeout\r\ncontent-type: text/plain; charset=utf-8\r\n\
                 content-length: {}\r\nconnection: close\r\n\r\n{message}",
                message.len()
            );
            let _ = tokio::time::timeout(Duration::from_secs(1), async {
                let _ = stream.write_all(answer.as_bytes()).await;
                let _ = stream.shutdown().await;
            })
            .await;
            return;
        }
    };
    let service = hyper::service::service_fn(move |mut request: hyper::Request<Incoming>| {
        request.extensions_mut().insert(ConnectInfo(peer));
        app.clone().oneshot(request.map(axum::body::Body::new))
    });
    let conn = hyper::server::conn::http1::Builder::new()
        .timer(TokioTimer::new())
        .header_read_timeout(header_timeout)
        .keep_alive(true)
        .serve_connection(TokioIo::new(Prefixed::new(head, stream)), service);
    tokio::pin!(conn);
    tokio::select! {
        result = conn.as_mut() => {
            if let Err(e) = result {
                tracing::debug!(%peer, error = %e, "connection ended with an error");
            }
        }
        () = async { let _ = stopped.wait_for(|s| *s).await; } => {
            conn.as_mut().graceful_shutdown();
            let _ = conn.await;
        }
    }
}

/// Reads until the end of a request head (`\r\n\r\n`) or [`MAX_PEEKED_HEAD`] bytes; `None`
/// when the client closed before sending anything.
async fn read_head<S: AsyncRead + Unpin>(stream: &mut S) -> io::Result<Option<Vec<u8>>> {
    let mut head = Vec::with_capacity(1024);
    let mut chunk = [0_u8; 4096];
    loop {
        let n = stream.read(&mut chunk).await?;
        if n == 0 {
            return Ok((!head.is_empty()).then_some(head));
        }
        let searched_from = head.len().saturating_sub(3);
        head.extend_from_slice(&chunk[..n]);
        if head[searched_from..].windows(4).any(|w| w == b"\r\n\r\n")
            || head.len() >= MAX_PEEKED_HEAD
        {
            return Ok(Some(head));
        }
    }
}

/// A stream whose first bytes were already read: they are read again first.
struct Prefixed<S> {
    prefix: Vec<u8>,
    at: usize,
    inner: S,
}

impl<S> Prefixed<S> {
    const fn new(prefix: Vec<u8>, inner: S) -> Self {
        Self {
            prefix,
            at: 0,
            inner,
        }
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for Prefixed<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        if self.at < self.prefix.len() {
            let n = buf.remaining().min(self.prefix.len() - self.at);
            let at = self.at;
            buf.put_slice(&self.prefix[at..at + n]);
            self.at += n;
            if self.at == self.prefix.len() {
                self.prefix = Vec::new();
                self.at = 0;
            }
            return Poll::Ready(Ok(()));
        }
        Pin::new(&mut self.inner).poll_read(cx, buf)
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for Prefixed<S> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, reason = "tests fail loudly")]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_prefixed_stream_reads_its_prefix_then_the_rest() {
        let (mut client, server) = tokio::io::duplex(64);
        client.write_all(b" world").await.unwrap();
        drop(client);
        let mut stream = Prefixed::new(b"hello".to_vec(), server);
        let mut all = String::new();
        stream.read_to_string(&mut all).await.unwrap();
        assert_eq!(all, "hello world");
    }

    #[tokio::test]
    async fn a_head_is_read_to_its_blank_line_even_split_across_reads() {
        let (mut client, mut server) = tokio::io::duplex(8);
        let writer = tokio::spawn(async move {
            client
                .write_all(b"GET / HTTP/1.1\r\nhost: x\r\n\r\nbody")
                .await
                .unwrap();
            client
        });
        let head = read_head(&mut server).await.unwrap().unwrap();
        assert!(head.windows(4).any(|w| w == b"\r\n\r\n"));
        drop(writer.await.unwrap());
        let (client, mut server) = tokio::io::duplex(8);
        drop(client);
        assert!(read_head(&mut server).await.unwrap().is_none());
    }
}

//! HTTPS serving: TLS (rustls) on a TCP listener, HTTP/1.1 and HTTP/2 via hyper, graceful shutdown.

use std::convert::Infallible;
use std::sync::Arc;

use hyper::service::service_fn;
use hyper_util::rt::{TokioExecutor, TokioIo};
use tokio::net::TcpListener;
use tokio_rustls::TlsAcceptor;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use rustls::pki_types::UnixTime;

use crate::auth::client_cert::ClientCertificate;
use crate::endpoints::{self, Api};

/// Concurrent streams an HTTP/2 client may open on one connection, as kube-apiserver allows.
pub const HTTP2_MAX_STREAMS: u32 = 250;

/// Accepts connections until `shutdown` is cancelled; connection tasks are tracked by `tasks`.
pub async fn run(
    listener: TcpListener,
    tls: Arc<rustls::ServerConfig>,
    api: Arc<Api>,
    shutdown: CancellationToken,
    tasks: TaskTracker,
) {
    let acceptor = TlsAcceptor::from(tls);
    // The handshake accepts any client certificate; whether the CA signed it is judged here,
    // once per connection, and an untrusted one is answered 401 like kube-apiserver does.
    let client_trust = match api.ca.client_trust() {
        Ok(trust) => trust,
        Err(error) => {
            tracing::error!(%error, "client certificate trust could not be built; not serving");
            return;
        }
    };
    loop {
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            _ = shutdown.cancelled() => return,
        };
        let Ok((tcp, _)) = accepted else { continue };
        // Latency matters more than throughput for API calls.
        let _ = tcp.set_nodelay(true);
        let acceptor = acceptor.clone();
        let client_trust = client_trust.clone();
        let api = api.clone();
        let shutdown = shutdown.clone();
        tasks.spawn(async move {
            let Ok(stream) = acceptor.accept(tcp).await else {
                return;
            };
            let http2 = stream.get_ref().1.alpn_protocol() == Some(b"h2");
            let _open = api.connections.opened(http2);
            let peer = stream
                .get_ref()
                .1
                .peer_certificates()
                .and_then(|chain| {
                    ClientCertificate::judge(client_trust.as_ref(), chain, UnixTime::now())
                })
                .map(Arc::new);
            let service = service_fn(move |request| {
                let api = api.clone();
                let peer = peer.clone();
                async move { Ok::<_, Infallible>(endpoints::handle(api, request, peer).await) }
            });
            let mut builder = hyper_util::server::conn::auto::Builder::new(TokioExecutor::new());
            // kube-apiserver v1.32 serves Go's default of 250 streams per HTTP/2 connection
            // (`--http2-max-streams-per-connection` 0); hyper's default would be 200.
            builder.http2().max_concurrent_streams(HTTP2_MAX_STREAMS);
            let connection = builder.serve_connection(TokioIo::new(stream), service);
            tokio::pin!(connection);
            tokio::select! {
                _ = connection.as_mut() => {}
                _ = shutdown.cancelled() => {
                    connection.as_mut().graceful_shutdown();
                    let _ = connection.await;
                }
            }
        });
    }
}

//! The one way seedlet builds a `kube::Client` from a `kube::Config`: kube's own stack (base URI,
//! authentication, extra headers, server-error retries, connect/read/write timeouts, rustls with
//! the configured CA, client certificate and server name), but with a connector that offers
//! HTTP/2 by ALPN.
//!
//! kube's default connector speaks HTTP/1.1 only, so every watch holds a TCP connection, a TLS
//! session and hyper's buffers of its own (about a hundred per agent). Over HTTP/2 — what
//! kube-apiserver and the sandbox prefer, and what client-go uses — all requests and watches to
//! one server share one connection. The connection is health-checked like client-go's: a PING
//! after 30 s without frames, closed when the answer takes longer than 15 s, so a half-open
//! connection cannot silently stall every watch at once. Stream windows are 4 MiB, the connection
//! window 1 GiB (client-go's values): a watch nobody reads holds at most its own window and does
//! not stall the others.
//!
//! kube-apiserver allows 250 concurrent streams per connection (Go's default). Requests past that
//! wait for a stream instead of opening a second connection (client-go would open one); a
//! seedlet daemon keeps about 60 watches per server, well below it.
//!
//! Configurations this builder does not cover fall back to kube's HTTP/1.1 stack unchanged: a
//! proxy (`proxy-url`) and `exec` credential plugins (whose certificate lifetime only kube's
//! builder can read).

use std::time::Duration;

use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::{TokioExecutor, TokioTimer};
use kube::client::retry::RetryPolicy;
use kube::client::{Body, ClientBuilder, ConfigExt};
use tower::util::BoxService;
use tower::{BoxError, ServiceBuilder, ServiceExt as _};

/// Idle time after which the connection is PINGed.
pub const HTTP2_PING_INTERVAL: Duration = Duration::from_secs(30);
/// Time a PING may take before the connection counts as dead and is closed.
pub const HTTP2_PING_TIMEOUT: Duration = Duration::from_secs(15);
/// Flow-control window of one stream (one request or watch).
pub const HTTP2_STREAM_WINDOW: u32 = 4 << 20;
/// Flow-control window of the connection.
pub const HTTP2_CONNECTION_WINDOW: u32 = 1 << 30;

/// Builds a client for `config` that uses HTTP/2 where the server offers it (see the module
/// docs for what falls back to kube's HTTP/1.1 stack).
///
/// # Errors
/// What kube reports for an unusable configuration (TLS material, authentication).
pub fn build(config: kube::Config) -> Result<kube::Client, kube::Error> {
    if config.proxy_url.is_some() || config.auth_info.exec.is_some() {
        return kube::Client::try_from(config);
    }
    let mut http = HttpConnector::new();
    http.enforce_http(false);
    http.set_nodelay(true);
    let mut tls = hyper_rustls::HttpsConnectorBuilder::new()
        .with_tls_config(config.rustls_client_config()?)
        .https_or_http();
    if let Some(server_name) = &config.tls_server_name {
        let name = server_name.clone().try_into().map_err(|e| {
            kube::Error::RustlsTls(kube::client::RustlsTlsError::InvalidServerName(e))
        })?;
        tls = tls.with_server_name_resolver(hyper_rustls::FixedServerNameResolver::new(name));
    }
    let mut connector =
        hyper_timeout::TimeoutConnector::new(tls.enable_all_versions().wrap_connector(http));
    connector.set_connect_timeout(config.connect_timeout);
    connector.set_read_timeout(config.read_timeout);
    connector.set_write_timeout(config.write_timeout);
    connector.set_reset_reader_on_write(config.reset_reader_on_write);
    let http_client = hyper_util::client::legacy::Client::builder(TokioExecutor::new())
        .timer(TokioTimer::new())
        .pool_timer(TokioTimer::new())
        .http2_keep_alive_interval(HTTP2_PING_INTERVAL)
        .http2_keep_alive_timeout(HTTP2_PING_TIMEOUT)
        .http2_keep_alive_while_idle(true)
        .http2_initial_stream_window_size(HTTP2_STREAM_WINDOW)
        .http2_initial_connection_window_size(HTTP2_CONNECTION_WINDOW)
        .build::<_, Body>(connector);
    let service = ServiceBuilder::new()
        .layer(config.base_uri_layer())
        .option_layer(
            config
                .default_retry
                .then(|| tower::retry::RetryLayer::new(RetryPolicy::server_retry())),
        )
        .option_layer(config.auth_layer()?)
        .layer(config.extra_headers_layer()?)
        .map_err(BoxError::from)
        .service(http_client)
        .map_response(|response| {
            response.map(|body| {
                Box::new(http_body_util::BodyExt::map_err(body, BoxError::from))
                    as Box<kube::client::DynBody>
            })
        });
    Ok(ClientBuilder::new(BoxService::new(service), config.default_namespace).build())
}

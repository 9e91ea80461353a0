//! Calling webhooks: one JSON POST over HTTPS (a CA bundle, optionally a client certificate or a
//! bearer token) or plain HTTP, with a timeout — what the authorization webhook and the
//! admission webhooks share. Connections are kept alive and reused, as kube-apiserver's client
//! does: a TLS handshake per call cost more CPU than the review itself (the garden bench's 250
//! authorizations per second).

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName};
use serde_json::Value;

/// Where and how to call a webhook.
pub struct Endpoint {
    host: String,
    port: u16,
    path: String,
    tls: Option<Arc<rustls::ClientConfig>>,
    token: Option<String>,
    timeout: Duration,
    server_name: Option<String>,
    idle: Mutex<Vec<Sender>>,
}

/// One HTTP/1.1 connection's request half.
type Sender = hyper::client::conn::http1::SendRequest<Full<Bytes>>;

/// Idle connections kept per endpoint; more concurrent calls open more, the surplus is closed.
const MAX_IDLE: usize = 32;

impl Endpoint {
    /// An endpoint for `url` (`https://host:port/path` or `http://...`); https needs `ca` (PEM).
    ///
    /// # Errors
    /// When the URL is not http(s), its port is invalid, or the TLS material does not load.
    pub fn new(
        url: &str,
        ca: Option<Vec<u8>>,
        client_cert: Option<(Vec<u8>, Vec<u8>)>,
        token: Option<String>,
        timeout: Duration,
    ) -> Result<Self, String> {
        let (https, rest) = if let Some(rest) = url.strip_prefix("https://") {
            (true, rest)
        } else if let Some(rest) = url.strip_prefix("http://") {
            (false, rest)
        } else {
            return Err(format!("server {url:?} is not an http(s) URL"));
        };
        let (authority, path) = rest
            .split_once('/')
            .map_or((rest, "/".to_string()), |(a, p)| (a, format!("/{p}")));
        let (host, port) = match authority.rsplit_once(':') {
            Some((host, port)) => (
                host.trim_matches(['[', ']']).to_string(),
                port.parse()
                    .map_err(|_| format!("server {url:?} has an invalid port"))?,
            ),
            None => (authority.to_string(), if https { 443 } else { 80 }),
        };
        let tls = if https {
            Some(client_config(ca, client_cert)?)
        } else {
            None
        };
        Ok(Endpoint {
            host,
            port,
            path,
            tls,
            token,
            timeout,
            server_name: None,
            idle: Mutex::new(Vec::new()),
        })
    }

    /// Verifies the server certificate for `name` instead of the URL's host (a service's
    /// `<name>.<namespace>.svc` when called at an endpoint address).
    pub fn with_server_name(mut self, name: String) -> Self {
        self.server_name = Some(name);
        self
    }

    /// POSTs `body` as JSON and parses the JSON answer (2xx only), within the timeout.
    ///
    /// # Errors
    /// A message naming what failed: connecting, TLS, the HTTP status, or the answer.
    pub async fn post_json(&self, body: &Value) -> Result<Value, String> {
        tokio::time::timeout(self.timeout, self.call(body))
            .await
            .map_err(|_| format!("the webhook did not answer within {:?}", self.timeout))?
    }

    async fn call(&self, review: &Value) -> Result<Value, String> {
        let body = Bytes::from(serde_json::to_vec(review).unwrap_or_default());
        // A kept-alive connection first; the server may have closed it meanwhile, which shows
        // as a send error before any answer: then a fresh connection (reviews are idempotent).
        while let Some(mut sender) = self.take_idle() {
            if sender.ready().await.is_err() {
                continue;
            }
            match self.send(&mut sender, body.clone()).await {
                Ok(answer) => {
                    self.keep(sender);
                    return answer;
                }
                Err(_) => continue,
            }
        }
        let mut sender = self.connect().await?;
        let answer = self
            .send(&mut sender, body)
            .await
            .map_err(|err| format!("call webhook: {err}"))?;
        self.keep(sender);
        answer
    }

    fn take_idle(&self) -> Option<Sender> {
        self.idle
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .pop()
    }

    fn keep(&self, sender: Sender) {
        if sender.is_closed() {
            return;
        }
        let mut idle = self.idle.lock().unwrap_or_else(PoisonError::into_inner);
        if idle.len() < MAX_IDLE {
            idle.push(sender);
        }
    }

    /// A new connection (TCP, then TLS when https) with its HTTP/1.1 handshake done.
    async fn connect(&self) -> Result<Sender, String> {
        let e = self;
        let tcp = tokio::net::TcpStream::connect((e.host.as_str(), e.port))
            .await
            .map_err(|err| format!("call webhook: {err}"))?;
        match &e.tls {
            Some(tls) => {
                let name =
                    ServerName::try_from(e.server_name.clone().unwrap_or_else(|| e.host.clone()))
                        .map_err(|err| format!("webhook host: {err}"))?;
                let stream = tokio_rustls::TlsConnector::from(tls.clone())
                    .connect(name, tcp)
                    .await
                    .map_err(|err| format!("call webhook: {err}"))?;
                handshake(stream).await
            }
            None => handshake(tcp).await,
        }
    }

    /// Sends one review on `sender`. The outer error is a transport failure (the connection is
    /// unusable); the inner result is the webhook's answer or why it is not one.
    async fn send(
        &self,
        sender: &mut Sender,
        body: Bytes,
    ) -> Result<Result<Value, String>, hyper::Error> {
        let e = self;
        let mut request = http::Request::post(&e.path)
            .header(http::header::HOST, format!("{}:{}", e.host, e.port))
            .header(http::header::CONTENT_TYPE, "application/json")
            .header(http::header::ACCEPT, "application/json");
        if let Some(token) = &e.token {
            request = request.header(http::header::AUTHORIZATION, format!("Bearer {token}"));
        }
        let request = match request.body(Full::new(body)) {
            Ok(request) => request,
            Err(err) => return Ok(Err(err.to_string())),
        };
        let response = sender.send_request(request).await?;
        let status = response.status();
        let bytes = match response.into_body().collect().await {
            Ok(collected) => collected.to_bytes(),
            Err(err) => return Ok(Err(format!("read webhook answer: {err}"))),
        };
        if !status.is_success() {
            return Ok(Err(format!("webhook answered {status}")));
        }
        Ok(serde_json::from_slice(&bytes)
            .map_err(|err| format!("webhook answer is not JSON: {err}")))
    }
}

/// The HTTP/1.1 handshake on `stream`; the connection runs in the background until dropped.
async fn handshake<S>(stream: S) -> Result<Sender, String>
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let io = hyper_util::rt::TokioIo::new(stream);
    let (sender, connection) = hyper::client::conn::http1::handshake(io)
        .await
        .map_err(|err| format!("call webhook: {err}"))?;
    tokio::spawn(connection);
    Ok(sender)
}

fn client_config(
    ca: Option<Vec<u8>>,
    client_cert: Option<(Vec<u8>, Vec<u8>)>,
) -> Result<Arc<rustls::ClientConfig>, String> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut roots = rustls::RootCertStore::empty();
    let ca = ca.ok_or("certificate-authority(-data) is required for an https server")?;
    for certificate in CertificateDer::pem_slice_iter(&ca) {
        let certificate = certificate.map_err(|_| "certificate-authority is not PEM")?;
        roots
            .add(certificate)
            .map_err(|e| format!("certificate-authority: {e}"))?;
    }
    let builder = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| e.to_string())?
        .with_root_certificates(roots);
    let config = match client_cert {
        Some((cert, key)) => {
            let chain: Vec<CertificateDer<'static>> = CertificateDer::pem_slice_iter(&cert)
                .collect::<Result<_, _>>()
                .map_err(|_| "client-certificate is not PEM")?;
            let key = PrivateKeyDer::from_pem_slice(&key)
                .map_err(|_| "client-key is not a PEM private key")?;
            builder
                .with_client_auth_cert(chain, key)
                .map_err(|e| format!("client certificate: {e}"))?
        }
        None => builder.with_no_client_auth(),
    };
    Ok(Arc::new(config))
}

#[cfg(test)]
impl Endpoint {
    /// Host, port, path, whether TLS is used and whether a token is sent.
    pub fn target(&self) -> (&str, u16, &str, bool, bool) {
        (
            &self.host,
            self.port,
            &self.path,
            self.tls.is_some(),
            self.token.is_some(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_split_into_host_port_and_path() {
        for (url, want) in [
            ("http://127.0.0.1:8080/check", ("127.0.0.1", 8080, "/check")),
            ("http://localhost", ("localhost", 80, "/")),
            ("http://[::1]:9/x/y", ("::1", 9, "/x/y")),
        ] {
            let e = Endpoint::new(url, None, None, None, Duration::from_secs(1)).expect(url);
            let (host, port, path, _, _) = e.target();
            assert_eq!((host, port, path), want, "{url}");
        }
        assert!(Endpoint::new("ftp://x", None, None, None, Duration::ZERO).is_err());
        assert!(
            Endpoint::new("https://x", None, None, None, Duration::ZERO).is_err(),
            "https needs a CA"
        );
    }
}

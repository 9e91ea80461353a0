//! The webhooks' serving certificate, kept current while serving: `tls.crt` and `tls.key` in
//! `webhooks.tls.serverCertDir` are re-read periodically and a changed pair replaces the one new
//! TLS handshakes present, as gardener-admission-controller's certificate watcher does. A rotated
//! Secret volume (or files replaced on a host) therefore needs no restart; a pair that cannot be
//! used is reported once and the last good certificate stays in use.

use std::path::{Path, PathBuf};
use std::sync::{Arc, PoisonError, RwLock};
use std::time::Duration;

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::server::{ClientHello, ResolvesServerCert};
use rustls::sign::CertifiedKey;
use seedlet_runtime::repeated::{Failure, RepeatedFailures};
use tokio_util::sync::CancellationToken;

use super::server::ServerError;

/// How often the files are compared with the certificate in use.
pub const RELOAD_INTERVAL: Duration = Duration::from_secs(10);

/// The certificate new handshakes present, and the file contents it came from.
#[derive(Debug)]
struct InUse {
    key: Arc<CertifiedKey>,
    files: (Vec<u8>, Vec<u8>),
}

/// The serving certificate of one directory.
#[derive(Debug)]
pub struct ServingCertificate {
    dir: PathBuf,
    in_use: RwLock<InUse>,
}

impl ServingCertificate {
    /// Loads `dir/tls.crt` (the chain, leaf first) and `dir/tls.key`.
    ///
    /// # Errors
    /// [`ServerError::Certificate`] naming the file and the problem (never key material).
    pub fn open(dir: &Path) -> Result<Arc<Self>, ServerError> {
        let files = read_files(dir)?;
        let key = certified_key(dir, &files)?;
        Ok(Arc::new(Self {
            dir: dir.to_owned(),
            in_use: RwLock::new(InUse { key, files }),
        }))
    }

    /// A rustls server configuration (HTTP/2 and HTTP/1.1) presenting the current certificate.
    ///
    /// # Errors
    /// [`ServerError::Certificate`] when the protocol versions cannot be set up.
    pub fn server_config(self: &Arc<Self>) -> Result<Arc<rustls::ServerConfig>, ServerError> {
        let mut config = rustls::ServerConfig::builder_with_provider(Arc::new(
            rustls::crypto::ring::default_provider(),
        ))
        .with_safe_default_protocol_versions()
        .map_err(|e| self.failure(e.to_string()))?
        .with_no_client_auth()
        .with_cert_resolver(self.clone());
        config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
        Ok(Arc::new(config))
    }

    /// Re-reads the files; `Ok(true)` when they changed and the new pair is now in use.
    ///
    /// # Errors
    /// [`ServerError::Certificate`] when the new files cannot be used (the old pair stays).
    pub fn refresh(&self) -> Result<bool, ServerError> {
        let files = read_files(&self.dir)?;
        if self.read_in_use().files == files {
            return Ok(false);
        }
        let key = certified_key(&self.dir, &files)?;
        *self.in_use.write().unwrap_or_else(PoisonError::into_inner) = InUse { key, files };
        Ok(true)
    }

    /// Refreshes every `every` until `stop`, logging a replacement at INFO and an unusable pair
    /// once per distinct problem.
    pub async fn keep_current(self: Arc<Self>, every: Duration, stop: CancellationToken) {
        let mut failures = RepeatedFailures::new();
        loop {
            tokio::select! {
                () = tokio::time::sleep(every) => {}
                () = stop.cancelled() => return,
            }
            match self.refresh() {
                Ok(replaced) => {
                    if replaced {
                        tracing::info!(dir = %self.dir.display(), "webhook serving certificate reloaded");
                    }
                    failures.succeeded();
                }
                Err(error) => {
                    let message = error.to_string();
                    match failures.failed(&message) {
                        Failure::New => {
                            tracing::warn!(error = %message, "webhook serving certificate not reloaded, the previous one stays in use")
                        }
                        Failure::Repeated => {
                            tracing::debug!(error = %message, "webhook serving certificate still not reloadable")
                        }
                    }
                }
            }
        }
    }

    fn read_in_use(&self) -> std::sync::RwLockReadGuard<'_, InUse> {
        self.in_use.read().unwrap_or_else(PoisonError::into_inner)
    }

    fn failure(&self, message: String) -> ServerError {
        ServerError::Certificate {
            dir: self.dir.display().to_string(),
            message,
        }
    }
}

impl ResolvesServerCert for ServingCertificate {
    fn resolve(&self, _client_hello: ClientHello<'_>) -> Option<Arc<CertifiedKey>> {
        Some(self.read_in_use().key.clone())
    }
}

fn read_files(dir: &Path) -> Result<(Vec<u8>, Vec<u8>), ServerError> {
    let read = |name: &str| {
        std::fs::read(dir.join(name)).map_err(|e| ServerError::Certificate {
            dir: dir.display().to_string(),
            message: format!("{name}: {e}"),
        })
    };
    Ok((read("tls.crt")?, read("tls.key")?))
}

/// The signing key and chain of a `(tls.crt, tls.key)` pair, checked to belong together.
fn certified_key(dir: &Path, files: &(Vec<u8>, Vec<u8>)) -> Result<Arc<CertifiedKey>, ServerError> {
    let fail = |message: String| ServerError::Certificate {
        dir: dir.display().to_string(),
        message,
    };
    let chain: Vec<CertificateDer<'static>> = CertificateDer::pem_slice_iter(&files.0)
        .collect::<Result<_, _>>()
        .map_err(|e| fail(format!("tls.crt: {e}")))?;
    if chain.is_empty() {
        return Err(fail("tls.crt holds no certificate".to_owned()));
    }
    let key = PrivateKeyDer::from_pem_slice(&files.1)
        .map_err(|_| fail("tls.key holds no PEM private key".to_owned()))?;
    let provider = rustls::crypto::ring::default_provider();
    CertifiedKey::from_der(chain, key, &provider)
        .map(Arc::new)
        .map_err(|e| fail(format!("certificate and key do not fit: {e}")))
}

#[cfg(test)]
#[path = "certificate_tests.rs"]
mod tests;

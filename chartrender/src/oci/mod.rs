//! Helm charts from OCI distribution registries: reference parsing, the pull (manifest → Helm chart layer, both
//! verified by digest) with anonymous, basic and bearer-token authentication, and a size-bounded cache of chart
//! archives keyed by layer digest.
//!
//! ```no_run
//! # async fn demo() -> Result<(), seedlet_chartrender::oci::OciError> {
//! use seedlet_chartrender::oci::{OciPuller, PullOptions, Reference};
//! let puller = OciPuller::new(PullOptions::default())?; // share it: holds the connection pool and cache
//! let reference = Reference::parse("oci://registry.example.com/charts/provider-local:1.2.3")?;
//! let pulled = puller.pull(&reference, None).await?;
//! let chart = seedlet_chartrender::Chart::from_archive(&pulled.archive, &Default::default());
//! # Ok(()) }
//! ```

mod cache;
mod client;
mod reference;

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

pub use client::OciPuller;
pub use reference::Reference;

/// Media type of the Helm chart layer in an OCI manifest.
pub const HELM_CHART_LAYER: &str = "application/vnd.cncf.helm.chart.content.v1.tar+gzip";
/// Media type of the Helm chart config blob.
pub const HELM_CONFIG: &str = "application/vnd.cncf.helm.config.v1+json";

/// How charts are pulled.
#[derive(Debug, Clone)]
pub struct PullOptions {
    /// Extra PEM CA certificates trusted besides the system roots (for HTTPS registries).
    pub ca_bundle: Option<Vec<u8>>,
    /// Largest chart layer accepted, in bytes.
    pub max_chart_bytes: u64,
    /// Largest manifest accepted, in bytes.
    pub max_manifest_bytes: u64,
    /// Total bytes of chart archives kept in the cache.
    pub cache_bytes: u64,
    /// Timeout of each HTTP request.
    pub timeout: Duration,
    /// Speak plain HTTP to registries on loopback addresses (Helm's `--plain-http` for them); HTTPS otherwise.
    pub plain_http_on_loopback: bool,
}

impl Default for PullOptions {
    fn default() -> Self {
        Self {
            ca_bundle: None,
            max_chart_bytes: 20 * 1024 * 1024,
            max_manifest_bytes: 4 * 1024 * 1024,
            cache_bytes: 64 * 1024 * 1024,
            timeout: Duration::from_secs(30),
            plain_http_on_loopback: true,
        }
    }
}

/// Registry credentials (from a pull Secret); the password is never printed.
#[derive(Clone, PartialEq, Eq)]
pub struct Credentials {
    /// User name.
    pub username: String,
    /// Password or token.
    pub password: String,
}

impl fmt::Debug for Credentials {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Credentials")
            .field("username", &self.username)
            .field("password", &"<redacted>")
            .finish()
    }
}

/// A pulled chart archive.
#[derive(Debug, Clone)]
pub struct PulledChart {
    /// The manifest's digest (`sha256:…`).
    pub manifest_digest: String,
    /// The chart layer's digest (`sha256:…`), verified against the archive.
    pub chart_digest: String,
    /// The `.tgz` chart archive.
    pub archive: Arc<[u8]>,
    /// Whether the archive came from the cache (the manifest is always fetched unless pinned by digest).
    pub from_cache: bool,
}

/// Why a pull failed; every variant names the registry and reference.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum OciError {
    /// The reference does not parse.
    #[error("invalid OCI reference {reference:?}: {reason}")]
    Reference {
        /// The text given.
        reference: String,
        /// What is wrong.
        reason: String,
    },
    /// The HTTP client could not be set up (CA bundle, TLS).
    #[error("setting up the OCI client: {0}")]
    Setup(String),
    /// A request could not be sent or its response not read.
    #[error("registry {registry}: {reference}: {what}: {source}")]
    Transport {
        /// Registry host.
        registry: String,
        /// The reference pulled.
        reference: String,
        /// What was being fetched.
        what: &'static str,
        /// The cause.
        #[source]
        source: reqwest::Error,
    },
    /// The registry refused the credentials (or asked for some and none were given).
    #[error(
        "registry {registry}: {reference}: {what}: authentication failed: HTTP {status}{detail}"
    )]
    Auth {
        /// Registry host.
        registry: String,
        /// The reference pulled.
        reference: String,
        /// What was being fetched.
        what: &'static str,
        /// HTTP status.
        status: u16,
        /// Extra explanation.
        detail: String,
    },
    /// The registry answered with an unexpected status (404 for a missing manifest).
    #[error("registry {registry}: {reference}: {what}: HTTP {status}{detail}")]
    Status {
        /// Registry host.
        registry: String,
        /// The reference pulled.
        reference: String,
        /// What was being fetched.
        what: &'static str,
        /// HTTP status.
        status: u16,
        /// The registry's error text, if any.
        detail: String,
    },
    /// The manifest is not an OCI/Docker image manifest or has no Helm chart layer.
    #[error("registry {registry}: {reference}: manifest: {reason}")]
    Manifest {
        /// Registry host.
        registry: String,
        /// The reference pulled.
        reference: String,
        /// What is wrong.
        reason: String,
    },
    /// Content does not match its digest.
    #[error(
        "registry {registry}: {reference}: {what} digest mismatch: expected {expected}, got {actual}"
    )]
    Digest {
        /// Registry host.
        registry: String,
        /// The reference pulled.
        reference: String,
        /// `manifest` or `chart layer`.
        what: &'static str,
        /// The digest asked for.
        expected: String,
        /// The digest of what arrived.
        actual: String,
    },
    /// The manifest or chart layer is bigger than allowed.
    #[error(
        "registry {registry}: {reference}: {what} of {size} bytes exceeds the limit of {limit} bytes"
    )]
    TooLarge {
        /// Registry host.
        registry: String,
        /// The reference pulled.
        reference: String,
        /// `manifest` or `chart layer`.
        what: &'static str,
        /// Declared or received size.
        size: u64,
        /// The limit.
        limit: u64,
    },
}

impl OciError {
    /// A CamelCase reason for conditions.
    pub fn reason(&self) -> &'static str {
        match self {
            OciError::Reference { .. } => "InvalidOCIReference",
            OciError::Setup(_) => "OCIClientSetupFailed",
            OciError::Transport { .. } => "OCIRegistryUnreachable",
            OciError::Auth { .. } => "OCIAuthenticationFailed",
            OciError::Status { .. } => "OCIPullFailed",
            OciError::Manifest { .. } => "OCIManifestInvalid",
            OciError::Digest { .. } => "OCIDigestMismatch",
            OciError::TooLarge { .. } => "OCIChartTooLarge",
        }
    }
}

/// `sha256:<hex>` of `data`.
pub(crate) fn sha256_digest(data: &[u8]) -> String {
    use sha2::Digest as _;
    format!("sha256:{}", hex::encode(sha2::Sha256::digest(data)))
}

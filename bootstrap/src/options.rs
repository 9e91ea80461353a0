//! What the garden identity needs to know: where credentials live, how long they are valid, how long to wait.

use std::path::PathBuf;
use std::time::Duration;

use crate::observer::StepObserver;

/// Default approval timeout: a CSR pending this long is abandoned and requested anew with a fresh key.
pub const DEFAULT_APPROVAL_TIMEOUT: Duration = Duration::from_secs(15 * 60);
/// Default pause between two failed rotation attempts (spec §2.3).
pub const DEFAULT_RETRY_INTERVAL: Duration = Duration::from_secs(10);
/// Default lower bound of the rotation jitter in percent of the validity.
pub const DEFAULT_JITTER_MIN_PERCENT: u8 = 70;
/// Default upper bound of the rotation jitter in percent of the validity.
pub const DEFAULT_JITTER_MAX_PERCENT: u8 = 90;

/// A Secret in the seed cluster.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SecretRef {
    /// Namespace of the Secret.
    pub namespace: String,
    /// Name of the Secret.
    pub name: String,
}

impl SecretRef {
    /// A reference to `namespace/name`.
    pub fn new(namespace: impl Into<String>, name: impl Into<String>) -> Self {
        Self {
            namespace: namespace.into(),
            name: name.into(),
        }
    }
}

impl std::fmt::Display for SecretRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.namespace, self.name)
    }
}

/// Where the bootstrap kubeconfig (bootstrap token or service-account token auth) comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BootstrapSource {
    /// Secret in the seed cluster, data key `kubeconfig`; deleted after a successful bootstrap.
    Secret(SecretRef),
    /// A file on disk (seedlet extension); left in place after a bootstrap, since it is not ours to delete.
    File(PathBuf),
}

/// Percent bounds of the rotation deadline within the certificate's validity (spec §2.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct JitterRange {
    /// Earliest rotation point, in percent of the validity.
    pub min_percent: u8,
    /// Latest rotation point (exclusive), in percent of the validity.
    pub max_percent: u8,
}

impl Default for JitterRange {
    fn default() -> Self {
        Self {
            min_percent: DEFAULT_JITTER_MIN_PERCENT,
            max_percent: DEFAULT_JITTER_MAX_PERCENT,
        }
    }
}

/// Everything the garden identity needs; the agent maps its `GardenletConfiguration` into this.
#[derive(Clone)]
pub struct BootstrapOptions {
    /// Name of the seed; the certificate's common name is `gardener.cloud:system:seed:<seed_name>`.
    pub seed_name: String,
    /// Seed-cluster Secret holding the certificate kubeconfig; enables bootstrap and rotation.
    pub kubeconfig_secret: Option<SecretRef>,
    /// Bootstrap kubeconfig used when the kubeconfig Secret holds no usable credential.
    pub bootstrap: Option<BootstrapSource>,
    /// Static garden kubeconfig file; used only when the Secret path yields nothing (spec §1.2 step 7).
    pub static_kubeconfig: Option<PathBuf>,
    /// Requested certificate validity, sent as `spec.expirationSeconds`; `None` leaves it to the signer.
    pub validity: Option<Duration>,
    /// Where within the validity the rotation happens.
    pub jitter: JitterRange,
    /// How long one CSR may stay unanswered before a new one with a fresh key is created.
    pub approval_timeout: Duration,
    /// Pause between failed rotation or re-bootstrap attempts.
    pub retry_interval: Duration,
    /// Optional progress hook, see [`StepObserver`].
    pub observer: Option<StepObserver>,
}

impl BootstrapOptions {
    /// Options for `seed_name` with every other field at its default (no Secrets, no static kubeconfig).
    pub fn new(seed_name: impl Into<String>) -> Self {
        Self {
            seed_name: seed_name.into(),
            kubeconfig_secret: None,
            bootstrap: None,
            static_kubeconfig: None,
            validity: None,
            jitter: JitterRange::default(),
            approval_timeout: DEFAULT_APPROVAL_TIMEOUT,
            retry_interval: DEFAULT_RETRY_INTERVAL,
            observer: None,
        }
    }
}

impl std::fmt::Debug for BootstrapOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BootstrapOptions")
            .field("seed_name", &self.seed_name)
            .field("kubeconfig_secret", &self.kubeconfig_secret)
            .field("bootstrap", &self.bootstrap)
            .field("static_kubeconfig", &self.static_kubeconfig)
            .field("validity", &self.validity)
            .field("jitter", &self.jitter)
            .field("approval_timeout", &self.approval_timeout)
            .field("retry_interval", &self.retry_interval)
            .field("observer", &self.observer.as_ref().map(|_| "<fn>"))
            .finish()
    }
}

//! Progress hooks: the identity reports each completed bootstrap step to an optional observer, which may stop
//! the flow there — used for progress logging and to inject crashes in crash-safety tests.

use std::ops::ControlFlow;
use std::sync::Arc;

/// A completed step of obtaining and storing a certificate, in the order they happen.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum BootstrapStep {
    /// A fresh key and PKCS#10 request exist (in memory only).
    KeyGenerated,
    /// The CertificateSigningRequest was created in the garden.
    CsrCreated {
        /// Its name.
        name: String,
    },
    /// The certificate was approved and issued.
    CertificateIssued {
        /// The CSR name.
        name: String,
    },
    /// The new kubeconfig is stored in the kubeconfig Secret.
    KubeconfigStored,
    /// The bootstrap Secret was deleted (only after a bootstrap from a Secret).
    BootstrapSecretDeleted,
}

/// Called after each [`BootstrapStep`]; returning `ControlFlow::Break(())` stops the flow with
/// [`crate::Error::Aborted`], exactly as if the process had died right after that step.
pub type StepObserver = Arc<dyn Fn(&BootstrapStep) -> ControlFlow<()> + Send + Sync>;

/// Reports `step` to `observer`, turning a break into [`crate::Error::Aborted`].
pub(crate) fn report(
    observer: Option<&StepObserver>,
    step: BootstrapStep,
) -> Result<(), crate::Error> {
    tracing::debug!(step = ?step, "bootstrap step done");
    match observer {
        Some(observer) if observer(&step).is_break() => Err(crate::Error::Aborted { step }),
        _ => Ok(()),
    }
}

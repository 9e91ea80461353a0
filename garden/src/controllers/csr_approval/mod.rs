//! CSR auto-approval controller (spec §3, gardener's `csr-autoapprove`): watches CertificateSigningRequests in
//! the garden; for the `kubernetes.io/kube-apiserver-client` signer it approves valid seed client requests
//! after a SubjectAccessReview for `create certificatesigningrequests/seedclient`, denies requests that claim the
//! seed identity but break a rule, and leaves all others alone. Writes only the `/approval` subresource in the
//! garden. No periodic requeue: decided CSRs are final, pending ones are retried after a delay
//! that depends on the failure ([`Reconciler::retry_after`](seedlet_runtime::controller::Reconciler::retry_after)).

pub mod rbac;
pub mod reconcile;
#[cfg(test)]
mod reconcile_tests;

use k8s_openapi::api::certificates::v1::CertificateSigningRequest;
use seedlet_runtime::controller::Triggers;
use seedlet_runtime::watch::concurrency;

pub use rbac::ensure_bootstrapper_rbac;
pub use reconcile::Error;

use crate::caches::{GardenCaches, controller};
use crate::context::GardenContext;
use crate::controllers::entry::GardenReconciler;

/// Controller name (logs, metrics label).
pub const NAME: &str = "csr-autoapprove";
/// Default parallel reconciles (`controllers.certificateSigningRequest.concurrentSyncs`).
pub const DEFAULT_CONCURRENT_SYNCS: u16 = 5;

/// The controller and what it needs.
#[derive(Clone)]
pub struct CsrApproval {
    /// Garden client with permission to read CSRs, create SubjectAccessReviews and update approvals.
    pub client: kube::Client,
    /// Parallel reconciles (`controllers.certificateSigningRequest.concurrentSyncs`).
    pub concurrency: u16,
    /// Events on the CSRs it decides (approved, denied, left for an operator).
    pub events: seedlet_runtime::events::Recorder,
}

impl GardenReconciler for CsrApproval {
    fn from_garden(garden: &GardenContext) -> Option<Self> {
        Some(Self {
            client: garden.client.clone(),
            concurrency: concurrency(i64::from(
                garden
                    .config
                    .controllers
                    .certificate_signing_request
                    .concurrent_syncs,
            )),
            events: garden.events.named(format!("{NAME}-controller")),
        })
    }

    fn triggers(&self, caches: &GardenCaches) -> Triggers<CertificateSigningRequest> {
        controller(&caches.all::<CertificateSigningRequest>())
    }
}

//! CSR auto-approval controller (spec §3, gardener's `csr-autoapprove`): watches CertificateSigningRequests in
//! the garden; for the `kubernetes.io/kube-apiserver-client` signer it approves valid seed client requests
//! after a SubjectAccessReview for `create certificatesigningrequests/seedclient`, denies requests that claim the
//! seed identity but break a rule, and leaves all others alone. Writes only the `/approval` subresource in the
//! garden. No periodic requeue: decided CSRs are final, pending ones are retried by `error_policy`.

pub mod rbac;
pub mod reconcile;
#[cfg(test)]
mod reconcile_tests;

use std::sync::Arc;

use k8s_openapi::api::certificates::v1::CertificateSigningRequest;
use seedlet_runtime::watch::{RunWith, Runner};
use tokio_util::sync::CancellationToken;

pub use rbac::ensure_bootstrapper_rbac;
pub use reconcile::{Error, error_policy, reconcile};

/// Controller name (logs, metrics label).
pub const NAME: &str = "csr-autoapprove";
/// Default parallel reconciles (`controllers.certificateSigningRequest.concurrentSyncs`).
pub const DEFAULT_CONCURRENT_SYNCS: u16 = 5;

/// Dependencies of the controller.
#[derive(Clone)]
pub struct Ctx {
    /// Garden client with permission to read CSRs, create SubjectAccessReviews and update approvals.
    pub client: kube::Client,
    /// Parallel reconciles.
    pub concurrent_syncs: u16,
    /// Events on the CSRs it decides (approved, denied, left for an operator).
    pub events: seedlet_runtime::events::Recorder,
}

/// Runs the controller on informers of its own until `stop` is cancelled (in-flight approvals
/// finish first; a test runs one controller alone this way).
pub async fn run(ctx: Arc<Ctx>, stop: CancellationToken) {
    let caches = crate::caches::GardenCaches::new(ctx.client.clone(), &stop);
    run_on(ctx, &caches, stop).await;
}

/// Runs the controller on the shared informers `caches` until `stop` is cancelled.
pub async fn run_on(ctx: Arc<Ctx>, caches: &crate::caches::GardenCaches, stop: CancellationToken) {
    let runner = Runner::new(NAME, stop).concurrency(ctx.concurrent_syncs);
    crate::caches::controller(&caches.all::<CertificateSigningRequest>())
        .run_with(runner, reconcile, error_policy, ctx)
        .await;
}

//! Reconcile of one CertificateSigningRequest: guard, classify (pure), SubjectAccessReview, approve or deny.

use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::authorization::v1::{
    ResourceAttributes, SubjectAccessReview, SubjectAccessReviewSpec,
};
use k8s_openapi::api::certificates::v1::{
    CertificateSigningRequest, CertificateSigningRequestCondition, CertificateSigningRequestStatus,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::Api;
use kube::api::PostParams;
use kube::runtime::controller::Action;
use seedlet_api::names::csr as csr_names;
use seedlet_runtime::controller::{Reason, Reconciler, routine_failure};
use seedlet_runtime::events::EventType;

use super::{CsrApproval, NAME};
use crate::seed_csr::{
    APPROVED_MESSAGE, APPROVED_REASON, Classification, DENIED_REASON, MANUAL_APPROVAL_REASON,
    SEED_CLIENT_SUBRESOURCE, classify, denied_message, needs_decision, request_facts,
};

/// Failures of one CSR reconcile.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The CSR has no name.
    #[error("certificatesigningrequest without name")]
    MissingName,
    /// `spec.request` is not a PEM certificate request.
    #[error("decode request of certificatesigningrequest {name}: {reason}")]
    DecodeRequest {
        /// CSR name.
        name: String,
        /// What could not be decoded.
        reason: String,
    },
    /// Creating the SubjectAccessReview failed.
    #[error("subjectaccessreview for certificatesigningrequest {name}")]
    SubjectAccessReview {
        /// CSR name.
        name: String,
        /// The API error.
        #[source]
        source: kube::Error,
    },
    /// The requester may not create `certificatesigningrequests/seedclient`; the CSR stays pending.
    #[error(
        "requester {user:?} of certificatesigningrequest {name} may not create certificatesigningrequests/seedclient"
    )]
    NotAllowed {
        /// CSR name.
        name: String,
        /// The requester.
        user: String,
    },
    /// Writing the approval or denial failed.
    #[error("update approval of certificatesigningrequest {name}")]
    UpdateApproval {
        /// CSR name.
        name: String,
        /// The API error.
        #[source]
        source: kube::Error,
    },
}

impl Reason for Error {
    fn reason(&self) -> &'static str {
        match self {
            Self::MissingName => "MissingName",
            Self::DecodeRequest { .. } => "DecodeRequestError",
            Self::SubjectAccessReview { .. } => "SubjectAccessReviewError",
            Self::NotAllowed { .. } => "NotAllowed",
            Self::UpdateApproval { .. } => "UpdateApprovalError",
        }
    }
}

impl Reconciler for CsrApproval {
    type Object = CertificateSigningRequest;
    type Error = Error;
    const NAME: &'static str = NAME;

    async fn reconcile(&self, csr: Arc<CertificateSigningRequest>) -> Result<Action, Error> {
        decide(&csr, self).await
    }

    /// Long for a request that cannot be decoded, short for failed API calls.
    fn retry_after(&self, error: &Error) -> Duration {
        match error {
            Error::NotAllowed { .. } => NOT_ALLOWED_RETRY,
            Error::DecodeRequest { .. } | Error::MissingName => Duration::from_secs(300),
            Error::SubjectAccessReview { .. } | Error::UpdateApproval { .. } => {
                Duration::from_secs(5)
            }
        }
    }

    fn concurrency(&self) -> u16 {
        self.concurrency
    }

    /// A requester without the permission is no failure of ours: an INFO line, and a slow retry
    /// (it may be granted later). Everything else takes the runtime's route.
    fn error_policy(&self, csr: &CertificateSigningRequest, error: &Error) -> Action {
        if let Error::NotAllowed { .. } = error {
            let name = csr.metadata.name.as_deref().unwrap_or_default();
            tracing::info!(certificate_signing_request = %name, error = %seedlet_runtime::error_chain(error), "certificatesigningrequest stays pending");
            return Action::requeue(NOT_ALLOWED_RETRY);
        }
        routine_failure(self, csr, error)
    }
}

/// Retry period of a CSR whose requester lacks the permission.
const NOT_ALLOWED_RETRY: Duration = Duration::from_secs(30);

/// Approves valid seed client requests whose requester passes the SubjectAccessReview, denies requests that
/// claim the seed identity but break a rule, leaves requests of the seeds group without the seed common
/// name pending for an operator, and leaves every other CSR untouched. Idempotent: decided CSRs
/// are skipped.
///
/// # Errors
/// [`Error::NotAllowed`] keeps the CSR pending and retries with backoff (the requester may be granted the
/// permission later); API errors are returned for the queue to retry.
async fn decide(csr: &CertificateSigningRequest, ctx: &CsrApproval) -> Result<Action, Error> {
    let name = csr.metadata.name.clone().ok_or(Error::MissingName)?;
    if !needs_decision(csr) {
        return Ok(Action::await_change());
    }
    let facts = request_facts(&csr.spec.request.0).map_err(|reason| Error::DecodeRequest {
        name: name.clone(),
        reason,
    })?;
    let usages = csr.spec.usages.clone().unwrap_or_default();
    let requester = csr.spec.username.clone().unwrap_or_default();
    match classify(&facts, &usages, &requester) {
        Classification::NotOurs => Ok(Action::await_change()),
        Classification::ManualApproval(why) => {
            // Logged once per version of the CSR: nothing requeues it.
            tracing::info!(certificate_signing_request = %name, user = %requester, reason = %why, "certificatesigningrequest stays pending");
            let note = format!("Left for manual approval: {why}");
            ctx.events
                .publish(
                    csr,
                    EventType::Normal,
                    MANUAL_APPROVAL_REASON,
                    "Reconcile",
                    &note,
                )
                .await;
            Ok(Action::await_change())
        }
        Classification::Invalid(failed_check) => {
            tracing::info!(certificate_signing_request = %name, check = %failed_check, "denying certificatesigningrequest");
            let message = denied_message(&failed_check);
            let condition = condition("Denied", DENIED_REASON, &message);
            write_condition(&ctx.client, csr, &name, condition).await?;
            ctx.events
                .publish(
                    csr,
                    EventType::Warning,
                    DENIED_REASON,
                    "Reconcile",
                    &message,
                )
                .await;
            Ok(Action::await_change())
        }
        Classification::SeedClient => {
            if !requester_allowed(&ctx.client, csr, &name).await? {
                return Err(Error::NotAllowed {
                    name,
                    user: requester,
                });
            }
            let condition = condition("Approved", APPROVED_REASON, APPROVED_MESSAGE);
            write_condition(&ctx.client, csr, &name, condition).await?;
            tracing::info!(certificate_signing_request = %name, user = %requester, "approved certificatesigningrequest");
            ctx.events
                .publish(
                    csr,
                    EventType::Normal,
                    APPROVED_REASON,
                    "Reconcile",
                    APPROVED_MESSAGE,
                )
                .await;
            Ok(Action::await_change())
        }
    }
}

/// Asks the garden whether the requester (user, uid, groups, extra of the CSR) may create
/// `certificatesigningrequests/seedclient`.
async fn requester_allowed(
    client: &kube::Client,
    csr: &CertificateSigningRequest,
    name: &str,
) -> Result<bool, Error> {
    let review = SubjectAccessReview {
        spec: SubjectAccessReviewSpec {
            user: csr.spec.username.clone(),
            uid: csr.spec.uid.clone(),
            groups: csr.spec.groups.clone(),
            extra: csr.spec.extra.clone(),
            resource_attributes: Some(ResourceAttributes {
                group: Some(csr_names::GROUP.to_owned()),
                resource: Some(csr_names::RESOURCE.to_owned()),
                subresource: Some(SEED_CLIENT_SUBRESOURCE.to_owned()),
                verb: Some("create".to_owned()),
                ..ResourceAttributes::default()
            }),
            ..SubjectAccessReviewSpec::default()
        },
        ..SubjectAccessReview::default()
    };
    let api: Api<SubjectAccessReview> = Api::all(client.clone());
    let answer = api
        .create(&PostParams::default(), &review)
        .await
        .map_err(|source| Error::SubjectAccessReview {
            name: name.to_owned(),
            source,
        })?;
    Ok(answer.status.is_some_and(|status| status.allowed))
}

fn condition(type_: &str, reason: &str, message: &str) -> CertificateSigningRequestCondition {
    let now = Time(jiff::Timestamp::now());
    CertificateSigningRequestCondition {
        type_: type_.to_owned(),
        status: "True".to_owned(),
        reason: Some(reason.to_owned()),
        message: Some(message.to_owned()),
        last_update_time: Some(now.clone()),
        last_transition_time: Some(now),
    }
}

/// Appends `condition` through the `/approval` subresource (PUT with the observed resourceVersion, so a
/// concurrent decision makes this fail with a conflict instead of overwriting it).
async fn write_condition(
    client: &kube::Client,
    csr: &CertificateSigningRequest,
    name: &str,
    condition: CertificateSigningRequestCondition,
) -> Result<(), Error> {
    let mut updated = csr.clone();
    updated.metadata.managed_fields = None;
    let status = updated
        .status
        .get_or_insert_with(CertificateSigningRequestStatus::default);
    status
        .conditions
        .get_or_insert_with(Vec::new)
        .push(condition);
    let api: Api<CertificateSigningRequest> = Api::all(client.clone());
    api.replace_subresource("approval", name, &PostParams::default(), &updated)
        .await
        .map_err(|source| Error::UpdateApproval {
            name: name.to_owned(),
            source,
        })?;
    Ok(())
}

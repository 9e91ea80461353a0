//! Requesting a certificate from the garden: create the CSR, watch it until it is issued, denied or failed,
//! and start over with a fresh key when nobody answers within the approval timeout (spec §1.3–1.4).

use std::time::Duration;

use futures::{StreamExt as _, TryStreamExt as _};
use k8s_openapi::api::certificates::v1::CertificateSigningRequest;
use kube::Api;
use kube::api::{PostParams, WatchEvent, WatchParams};

use crate::certificate::CertificateInfo;
use crate::csr::{PreparedRequest, PrivateKeyPem, Subject};
use crate::error::Error;
use crate::observer::{BootstrapStep, StepObserver, report};

/// Pause between GETs when the requester may not watch its CSR (fallback; spec §1.4 polls every 2 s).
const POLL_INTERVAL: Duration = Duration::from_secs(2);
/// Server-side timeout of one watch request (kube-apiserver's maximum is 30 min; stay well below).
const WATCH_TIMEOUT_SECONDS: u32 = 290;

/// An issued certificate with the key it belongs to.
#[derive(Clone, Debug)]
pub struct IssuedCertificate {
    /// The CSR as created, with `spec.username` etc. filled by the garden.
    pub csr: CertificateSigningRequest,
    /// `status.certificate`, verbatim.
    pub certificate_pem: Vec<u8>,
    /// The leaf of `certificate_pem`.
    pub info: CertificateInfo,
    /// The private key.
    pub key_pem: PrivateKeyPem,
}

/// What a CSR's status says right now.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CsrState {
    /// Neither decided nor issued yet (includes approved but not yet signed).
    Pending,
    /// Approved and the certificate is present.
    Issued(Vec<u8>),
    /// A `Denied` condition: reason and message.
    Denied(String, String),
    /// A `Failed` condition: reason and message.
    Failed(String, String),
}

/// Reads a CSR's state: conditions in order, first `Denied`/`Failed`/`Approved` wins; approved counts as issued
/// only once `status.certificate` is non-empty.
pub fn csr_state(csr: &CertificateSigningRequest) -> CsrState {
    let Some(status) = &csr.status else {
        return CsrState::Pending;
    };
    let mut approved = false;
    for condition in status.conditions.iter().flatten() {
        let reason = || condition.reason.clone().unwrap_or_default();
        let message = || condition.message.clone().unwrap_or_default();
        match condition.type_.as_str() {
            "Denied" => return CsrState::Denied(reason(), message()),
            "Failed" => return CsrState::Failed(reason(), message()),
            "Approved" => {
                approved = true;
                break;
            }
            _ => {}
        }
    }
    match &status.certificate {
        Some(certificate) if approved && !certificate.0.is_empty() => {
            CsrState::Issued(certificate.0.clone())
        }
        _ => CsrState::Pending,
    }
}

/// Requests a certificate for `subject` with `client`: fresh key and CSR per attempt; an attempt that sees no
/// decision within `approval_timeout` is abandoned (the CSR is left for the garden's CSR cleaner) and a new one
/// is made. Returns on issuance, denial, failure or an API error.
///
/// # Errors
/// [`Error::CsrDenied`], [`Error::CsrFailed`], [`Error::CsrReplaced`], [`Error::CreateCsr`], [`Error::WatchCsr`],
/// [`Error::CertificateMismatch`], key-generation errors, and [`Error::Aborted`] from the observer.
pub async fn request_certificate(
    client: &kube::Client,
    subject: &Subject,
    validity: Option<Duration>,
    approval_timeout: Duration,
    observer: Option<&StepObserver>,
) -> Result<IssuedCertificate, Error> {
    let api: Api<CertificateSigningRequest> = Api::all(client.clone());
    loop {
        let prepared = PreparedRequest::generate(subject)?;
        report(observer, BootstrapStep::KeyGenerated)?;
        let created = api
            .create(&PostParams::default(), &prepared.object(validity))
            .await
            .map_err(|source| Error::CreateCsr {
                name: prepared.name.clone(),
                source: Box::new(source),
            })?;
        tracing::info!(certificate_signing_request = %prepared.name, "created certificatesigningrequest");
        report(
            observer,
            BootstrapStep::CsrCreated {
                name: prepared.name.clone(),
            },
        )?;
        let uid = created.metadata.uid.clone().unwrap_or_default();
        let wait = wait_for_certificate(&api, &prepared.name, &uid);
        let Ok(certificate_pem) = tokio::time::timeout(approval_timeout, wait).await else {
            tracing::warn!(
                certificate_signing_request = %prepared.name,
                timeout_seconds = approval_timeout.as_secs(),
                "certificatesigningrequest not answered in time, requesting again with a fresh key"
            );
            continue;
        };
        let certificate_pem = certificate_pem?;
        let info = CertificateInfo::from_pem(&certificate_pem)?;
        if info.subject.common_name != subject.common_name {
            return Err(Error::CertificateMismatch {
                name: prepared.name,
                reason: format!("common name {:?}", info.subject.common_name),
            });
        }
        report(
            observer,
            BootstrapStep::CertificateIssued {
                name: prepared.name.clone(),
            },
        )?;
        return Ok(IssuedCertificate {
            csr: created,
            certificate_pem,
            info,
            key_pem: prepared.key_pem,
        });
    }
}

/// Waits until CSR `name` (with `uid`) is issued, denied or failed: one GET, then a watch on that name from the
/// GET's resourceVersion; a requester that may not watch falls back to polling.
async fn wait_for_certificate(
    api: &Api<CertificateSigningRequest>,
    name: &str,
    uid: &str,
) -> Result<Vec<u8>, Error> {
    let watch_error = |source| Error::WatchCsr {
        name: name.to_owned(),
        source: Box::new(source),
    };
    loop {
        let current = api.get(name).await.map_err(watch_error)?;
        if let Some(done) = decided(&current, name, uid)? {
            return Ok(done);
        }
        let resource_version = current
            .metadata
            .resource_version
            .clone()
            .unwrap_or_default();
        let params = WatchParams::default()
            .fields(&format!("metadata.name={name}"))
            .timeout(WATCH_TIMEOUT_SECONDS);
        let stream = match api.watch(&params, &resource_version).await {
            Ok(stream) => stream,
            Err(kube::Error::Api(status)) if matches!(status.code, 403 | 405) => {
                tokio::time::sleep(POLL_INTERVAL).await;
                continue;
            }
            Err(source) => return Err(watch_error(source)),
        };
        let mut stream = stream.boxed();
        while let Some(event) = stream.try_next().await.map_err(watch_error)? {
            match event {
                WatchEvent::Added(csr) | WatchEvent::Modified(csr) => {
                    if let Some(done) = decided(&csr, name, uid)? {
                        return Ok(done);
                    }
                }
                WatchEvent::Deleted(_) => {
                    return Err(Error::CsrReplaced {
                        name: name.to_owned(),
                    });
                }
                // 410 Gone or another watch-level error: start over with a fresh GET.
                WatchEvent::Error(_) => break,
                WatchEvent::Bookmark(_) => {}
            }
        }
    }
}

/// The certificate when `csr` is issued, an error when it is denied, failed or not ours, `None` when pending.
fn decided(
    csr: &CertificateSigningRequest,
    name: &str,
    uid: &str,
) -> Result<Option<Vec<u8>>, Error> {
    if csr.metadata.uid.as_deref().unwrap_or_default() != uid {
        return Err(Error::CsrReplaced {
            name: name.to_owned(),
        });
    }
    match csr_state(csr) {
        CsrState::Pending => Ok(None),
        CsrState::Issued(certificate) => Ok(Some(certificate)),
        CsrState::Denied(reason, message) => Err(Error::CsrDenied {
            name: name.to_owned(),
            reason,
            message,
        }),
        CsrState::Failed(reason, message) => Err(Error::CsrFailed {
            name: name.to_owned(),
            reason,
            message,
        }),
    }
}

#[cfg(test)]
mod tests {
    use k8s_openapi::ByteString;
    use k8s_openapi::api::certificates::v1::{
        CertificateSigningRequestCondition, CertificateSigningRequestStatus,
    };

    use super::*;

    fn csr(conditions: &[(&str, &str)], certificate: Option<&str>) -> CertificateSigningRequest {
        CertificateSigningRequest {
            status: Some(CertificateSigningRequestStatus {
                certificate: certificate.map(|c| ByteString(c.as_bytes().to_vec())),
                conditions: Some(
                    conditions
                        .iter()
                        .map(|(type_, reason)| CertificateSigningRequestCondition {
                            type_: (*type_).to_owned(),
                            status: "True".to_owned(),
                            reason: Some((*reason).to_owned()),
                            message: Some(format!("{reason} message")),
                            ..CertificateSigningRequestCondition::default()
                        })
                        .collect(),
                ),
            }),
            ..CertificateSigningRequest::default()
        }
    }

    #[test]
    fn state_is_pending_without_status_or_conditions() {
        assert_eq!(
            csr_state(&CertificateSigningRequest::default()),
            CsrState::Pending
        );
        assert_eq!(csr_state(&csr(&[], None)), CsrState::Pending);
    }

    #[test]
    fn state_is_pending_when_approved_but_not_issued() {
        assert_eq!(
            csr_state(&csr(&[("Approved", "AutoApproved")], None)),
            CsrState::Pending
        );
        assert_eq!(
            csr_state(&csr(&[("Approved", "AutoApproved")], Some(""))),
            CsrState::Pending
        );
    }

    #[test]
    fn state_is_issued_when_approved_and_certificate_present() {
        assert_eq!(
            csr_state(&csr(&[("Approved", "A")], Some("CERT"))),
            CsrState::Issued(b"CERT".to_vec())
        );
    }

    #[test]
    fn state_is_denied_or_failed_with_reason_and_message() {
        assert_eq!(
            csr_state(&csr(&[("Denied", "RequestDenied")], None)),
            CsrState::Denied("RequestDenied".into(), "RequestDenied message".into())
        );
        assert_eq!(
            csr_state(&csr(&[("Failed", "SignerError")], None)),
            CsrState::Failed("SignerError".into(), "SignerError message".into())
        );
    }

    #[test]
    fn state_follows_first_decisive_condition_in_order() {
        assert_eq!(
            csr_state(&csr(&[("Approved", "A"), ("Failed", "F")], Some("CERT"))),
            CsrState::Issued(b"CERT".to_vec())
        );
        assert_eq!(
            csr_state(&csr(&[("Failed", "F"), ("Approved", "A")], Some("CERT"))),
            CsrState::Failed("F".into(), "F message".into())
        );
    }

    #[test]
    fn certificate_is_rejected_when_uid_changed() {
        let mut object = csr(&[], None);
        object.metadata.uid = Some("new".into());
        assert!(matches!(
            decided(&object, "n", "old"),
            Err(Error::CsrReplaced { .. })
        ));
    }
}

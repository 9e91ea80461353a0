//! Pure decisions about seed client CertificateSigningRequests (spec §3): which requests are seed
//! client requests, which claim to be but break a rule, and what the approval/denial conditions
//! say. The CSR approval controller decides with them, and so do SeedRestriction and the
//! authorizer's graph, which therefore find them here rather than in the controller's folder.

use std::collections::BTreeSet;

use k8s_openapi::api::certificates::v1::CertificateSigningRequest;
use seedlet_api::names::{csr, reasons};
use x509_parser::extensions::{GeneralName, ParsedExtension};
use x509_parser::prelude::{FromDer, X509CertificationRequest};

/// Signer whose requests the approver handles; requests for other signers are never touched.
pub const KUBE_APISERVER_CLIENT_SIGNER: &str = csr::SIGNER;
/// CN prefix of seed client certificates.
pub const SEED_COMMON_NAME_PREFIX: &str = csr::SEED_CN_PREFIX;
/// The one organization of seed client certificates.
pub const SEED_ORGANIZATION: &str = csr::SEED_ORGANIZATION;
/// The usages a seed client request must have (as a set).
pub const SEED_CLIENT_USAGES: [&str; 3] = csr::USAGES;
/// Subresource the requester needs `create` permission on.
pub const SEED_CLIENT_SUBRESOURCE: &str = csr::SUBRESOURCE_SEED_CLIENT;
/// Approval condition reason.
pub const APPROVED_REASON: &str = reasons::CSR_AUTO_APPROVED;
/// Approval condition message.
pub const APPROVED_MESSAGE: &str = reasons::CSR_AUTO_APPROVED_MESSAGE;
/// Denial condition reason.
pub const DENIED_REASON: &str = reasons::CSR_REQUEST_DENIED;
/// Event reason for a request left pending for an operator's `kubectl certificate approve`.
pub const MANUAL_APPROVAL_REASON: &str = "ManualApprovalRequired";

/// The parts of a PKCS#10 request the checks look at.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RequestFacts {
    /// Subject common name (first one).
    pub common_name: String,
    /// Subject organizations, in order.
    pub organizations: Vec<String>,
    /// Number of DNS names, e-mail addresses and IP addresses requested.
    pub alternative_names: usize,
}

/// Reads the facts from a PEM `CERTIFICATE REQUEST`.
///
/// # Errors
/// A description of what could not be decoded.
pub fn request_facts(pem: &[u8]) -> Result<RequestFacts, String> {
    let (_, block) = x509_parser::pem::parse_x509_pem(pem).map_err(|e| format!("pem: {e}"))?;
    if block.label != "CERTIFICATE REQUEST" {
        return Err(format!("unexpected pem block {:?}", block.label));
    }
    let (_, request) =
        X509CertificationRequest::from_der(&block.contents).map_err(|e| format!("der: {e}"))?;
    let subject = &request.certification_request_info.subject;
    let text = |attribute: &x509_parser::x509::AttributeTypeAndValue<'_>| {
        attribute
            .as_str()
            .map(str::to_owned)
            .map_err(|e| format!("subject: {e}"))
    };
    let common_name = subject
        .iter_common_name()
        .next()
        .map(text)
        .transpose()?
        .unwrap_or_default();
    let organizations = subject
        .iter_organization()
        .map(text)
        .collect::<Result<Vec<_>, _>>()?;
    let mut alternative_names = 0;
    for extension in request.requested_extensions().into_iter().flatten() {
        if let ParsedExtension::SubjectAlternativeName(names) = extension {
            alternative_names += names
                .general_names
                .iter()
                .filter(|name| {
                    matches!(
                        name,
                        GeneralName::DNSName(_)
                            | GeneralName::RFC822Name(_)
                            | GeneralName::IPAddress(_)
                    )
                })
                .count();
        }
    }
    Ok(RequestFacts {
        common_name,
        organizations,
        alternative_names,
    })
}

/// What the approver makes of a request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Classification {
    /// A valid seed client request: check the requester with a SubjectAccessReview, then approve.
    SeedClient,
    /// Claims the seed identity (seed CN prefix or seed organization) but breaks the named rule: deny.
    Invalid(String),
    /// Carries the seeds group but not the seed common name prefix: the gardenlet document leaves
    /// such requests to an operator (`kubectl certificate approve`), so it stays pending and
    /// untouched; the text says why.
    ManualApproval(String),
    /// Not a seed client request at all (other users' certificates, shoot clients): leave alone.
    NotOurs,
}

/// Classifies a request. Upstream ignores every request that is not a valid seed client request; here a
/// request that claims the seed identity but breaks a rule is denied with the failed check instead, so that
/// it does not stay pending forever and its author learns why (the issue asks for this cleaner behaviour).
/// The exception is the seeds group with a common name outside the seed prefix: the gardenlet document
/// says such requests wait for manual approval, so they are [`Classification::ManualApproval`].
/// `requester` is `spec.username`: a seed may only request its own identity (upstream enforces that with
/// the `seedrestriction` admission plugin).
pub fn classify(facts: &RequestFacts, usages: &[String], requester: &str) -> Classification {
    let claims_seed = facts.common_name.starts_with(SEED_COMMON_NAME_PREFIX)
        || facts.organizations.iter().any(|o| o == SEED_ORGANIZATION);
    if !claims_seed {
        return Classification::NotOurs;
    }
    if facts.organizations != [SEED_ORGANIZATION] {
        return Classification::Invalid(format!(
            "organization must be exactly [{SEED_ORGANIZATION}], got {:?}",
            facts.organizations
        ));
    }
    let Some(seed_name) = facts.common_name.strip_prefix(SEED_COMMON_NAME_PREFIX) else {
        return Classification::ManualApproval(format!(
            "organization {SEED_ORGANIZATION} without common name prefix \
             {SEED_COMMON_NAME_PREFIX:?} (got {:?}): left for manual approval",
            facts.common_name
        ));
    };
    if seed_name.is_empty() {
        return Classification::Invalid("common name names no seed".to_owned());
    }
    if facts.alternative_names > 0 {
        return Classification::Invalid(
            "dns names, email addresses and ip addresses are not allowed".to_owned(),
        );
    }
    let requested: BTreeSet<&str> = usages.iter().map(String::as_str).collect();
    let required: BTreeSet<&str> = SEED_CLIENT_USAGES.into_iter().collect();
    if requested != required {
        return Classification::Invalid(format!(
            "usages must be exactly {required:?}, got {requested:?}"
        ));
    }
    if requester.starts_with(SEED_COMMON_NAME_PREFIX) && requester != facts.common_name {
        return Classification::Invalid(format!(
            "seed {requester:?} may only request its own identity"
        ));
    }
    Classification::SeedClient
}

/// Whether the approver has to look at this CSR at all: right signer, not yet approved or denied, no
/// certificate (`Failed` is not final here).
pub fn needs_decision(csr: &CertificateSigningRequest) -> bool {
    if csr.spec.signer_name != KUBE_APISERVER_CLIENT_SIGNER {
        return false;
    }
    let Some(status) = &csr.status else {
        return true;
    };
    if status.certificate.as_ref().is_some_and(|c| !c.0.is_empty()) {
        return false;
    }
    !status
        .conditions
        .iter()
        .flatten()
        .any(|c| c.type_ == "Approved" || c.type_ == "Denied")
}

/// The denial message naming the failed check.
pub fn denied_message(failed_check: &str) -> String {
    format!("Denying gardenlet client certificate ({failed_check})")
}

#[cfg(test)]
mod tests {
    use k8s_openapi::ByteString;
    use k8s_openapi::api::certificates::v1::{
        CertificateSigningRequestCondition, CertificateSigningRequestSpec,
        CertificateSigningRequestStatus,
    };
    use rcgen::{CertificateParams, DnType, KeyPair};

    use super::*;

    const SEED_CN: &str = "gardener.cloud:system:seed:s1";

    fn facts(common_name: &str, organizations: &[&str], alternative_names: usize) -> RequestFacts {
        RequestFacts {
            common_name: common_name.to_owned(),
            organizations: organizations.iter().map(|o| (*o).to_owned()).collect(),
            alternative_names,
        }
    }

    fn usages(list: &[&str]) -> Vec<String> {
        list.iter().map(|u| (*u).to_owned()).collect()
    }

    const GOOD_USAGES: [&str; 3] = ["digital signature", "key encipherment", "client auth"];

    /// Name, request facts, usages, requester, and `Ok` or a fragment of the failed check.
    type Case<'a> = (
        &'a str,
        RequestFacts,
        Vec<String>,
        &'a str,
        Result<(), &'a str>,
    );

    #[test]
    fn classification_table() {
        let bootstrap = "system:bootstrap:abc123";
        let cases: Vec<Case<'_>> = vec![
            (
                "valid seed request",
                facts(SEED_CN, &[SEED_ORGANIZATION], 0),
                usages(&GOOD_USAGES),
                bootstrap,
                Ok(()),
            ),
            (
                "duplicate usages are fine",
                facts(SEED_CN, &[SEED_ORGANIZATION], 0),
                usages(&[
                    "client auth",
                    "client auth",
                    "key encipherment",
                    "digital signature",
                ]),
                bootstrap,
                Ok(()),
            ),
            (
                "seed renewing itself",
                facts(SEED_CN, &[SEED_ORGANIZATION], 0),
                usages(&GOOD_USAGES),
                SEED_CN,
                Ok(()),
            ),
            (
                "two organizations",
                facts(SEED_CN, &[SEED_ORGANIZATION, "system:masters"], 0),
                usages(&GOOD_USAGES),
                bootstrap,
                Err("organization"),
            ),
            (
                "no organization",
                facts(SEED_CN, &[], 0),
                usages(&GOOD_USAGES),
                bootstrap,
                Err("organization"),
            ),
            (
                "empty seed name",
                facts("gardener.cloud:system:seed:", &[SEED_ORGANIZATION], 0),
                usages(&GOOD_USAGES),
                bootstrap,
                Err("names no seed"),
            ),
            (
                "alternative names",
                facts(SEED_CN, &[SEED_ORGANIZATION], 1),
                usages(&GOOD_USAGES),
                bootstrap,
                Err("dns names"),
            ),
            (
                "missing key encipherment",
                facts(SEED_CN, &[SEED_ORGANIZATION], 0),
                usages(&["digital signature", "client auth"]),
                bootstrap,
                Err("usages"),
            ),
            (
                "extra server auth",
                facts(SEED_CN, &[SEED_ORGANIZATION], 0),
                usages(&[
                    "digital signature",
                    "key encipherment",
                    "client auth",
                    "server auth",
                ]),
                bootstrap,
                Err("usages"),
            ),
            (
                "seed requesting another seed",
                facts(SEED_CN, &[SEED_ORGANIZATION], 0),
                usages(&GOOD_USAGES),
                "gardener.cloud:system:seed:other",
                Err("only request its own"),
            ),
        ];
        for (name, facts, usages, requester, expected) in cases {
            let got = classify(&facts, &usages, requester);
            match expected {
                Ok(()) => assert_eq!(got, Classification::SeedClient, "{name}"),
                Err(fragment) => match got {
                    Classification::Invalid(message) => {
                        assert!(message.contains(fragment), "{name}: {message}")
                    }
                    other => panic!("{name}: expected invalid, got {other:?}"),
                },
            }
        }
    }

    #[test]
    fn seeds_group_without_seed_prefix_waits_for_manual_approval() {
        for common_name in ["gardener.cloud:system:shoot:a:b", "alice", ""] {
            let got = classify(
                &facts(common_name, &[SEED_ORGANIZATION], 0),
                &usages(&GOOD_USAGES),
                "system:bootstrap:abc123",
            );
            match got {
                Classification::ManualApproval(why) => {
                    assert!(why.contains("manual approval"), "{common_name}: {why}")
                }
                other => panic!("{common_name}: expected manual approval, got {other:?}"),
            }
        }
    }

    #[test]
    fn requests_without_seed_claims_are_not_ours() {
        let plain = facts("alice", &["developers"], 2);
        assert_eq!(
            classify(&plain, &usages(&["client auth"]), "admin"),
            Classification::NotOurs
        );
        let shoot = facts(
            "gardener.cloud:system:shoot:ns:name",
            &["gardener.cloud:system:shoots"],
            0,
        );
        assert_eq!(
            classify(&shoot, &usages(&GOOD_USAGES), "system:bootstrap:x"),
            Classification::NotOurs
        );
    }

    fn csr(
        signer: &str,
        conditions: &[&str],
        certificate: Option<&str>,
    ) -> CertificateSigningRequest {
        CertificateSigningRequest {
            spec: CertificateSigningRequestSpec {
                signer_name: signer.to_owned(),
                ..Default::default()
            },
            status: Some(CertificateSigningRequestStatus {
                certificate: certificate.map(|c| ByteString(c.as_bytes().to_vec())),
                conditions: Some(
                    conditions
                        .iter()
                        .map(|t| CertificateSigningRequestCondition {
                            type_: (*t).to_owned(),
                            status: "True".to_owned(),
                            ..Default::default()
                        })
                        .collect(),
                ),
            }),
            ..Default::default()
        }
    }

    #[test]
    fn decision_is_needed_only_for_undecided_client_signer_requests() {
        assert!(needs_decision(&csr(
            KUBE_APISERVER_CLIENT_SIGNER,
            &[],
            None
        )));
        assert!(needs_decision(&csr(
            KUBE_APISERVER_CLIENT_SIGNER,
            &["Failed"],
            None
        )));
        assert!(!needs_decision(&csr(
            "kubernetes.io/kubelet-serving",
            &[],
            None
        )));
        assert!(!needs_decision(&csr(
            KUBE_APISERVER_CLIENT_SIGNER,
            &["Approved"],
            None
        )));
        assert!(!needs_decision(&csr(
            KUBE_APISERVER_CLIENT_SIGNER,
            &["Denied"],
            None
        )));
        assert!(!needs_decision(&csr(
            KUBE_APISERVER_CLIENT_SIGNER,
            &[],
            Some("CERT")
        )));
    }

    #[test]
    fn request_facts_reads_subject_and_counts_alternative_names() {
        let key = KeyPair::generate().unwrap();
        let mut params =
            CertificateParams::new(vec!["a.example".to_owned(), "10.0.0.1".to_owned()]).unwrap();
        params.distinguished_name.push(DnType::CommonName, SEED_CN);
        params
            .distinguished_name
            .push(DnType::OrganizationName, SEED_ORGANIZATION);
        let pem = params.serialize_request(&key).unwrap().pem().unwrap();
        let got = request_facts(pem.as_bytes()).unwrap();
        assert_eq!(got, facts(SEED_CN, &[SEED_ORGANIZATION], 2));
    }

    #[test]
    fn request_facts_fails_on_garbage() {
        assert!(request_facts(b"not a csr").is_err());
    }
}

//! Tests of CSR preparation and signing.

use super::*;

use rcgen::{CertificateParams, DistinguishedName, DnType, KeyPair};
use x509_parser::prelude::{FromDer, X509Certificate};

fn csr_request(common_name: &str, organization: Option<&str>) -> String {
    let key = KeyPair::generate().unwrap();
    let mut params = CertificateParams::default();
    params.distinguished_name = DistinguishedName::new();
    if let Some(org) = organization {
        params
            .distinguished_name
            .push(DnType::OrganizationName, org);
    }
    params
        .distinguished_name
        .push(DnType::CommonName, common_name);
    STANDARD.encode(params.serialize_request(&key).unwrap().pem().unwrap())
}

fn requester() -> UserInfo {
    UserInfo {
        username: "system:bootstrap:kc0001".into(),
        groups: vec!["system:bootstrappers".into(), "system:authenticated".into()],
        ..UserInfo::default()
    }
}

fn csr(name: &str, spec: Value) -> Value {
    json!({"apiVersion": "certificates.k8s.io/v1", "kind": "CertificateSigningRequest", "metadata": {"name": name}, "spec": spec})
}

fn now() -> jiff::Timestamp {
    "2024-05-01T12:00:00Z".parse().unwrap()
}

#[test]
fn create_fills_requester_and_clears_status() {
    let mut object = csr(
        "c",
        json!({
            "request": csr_request("someone", None),
            "signerName": KUBE_APISERVER_CLIENT_SIGNER,
            "usages": ["client auth"],
            "username": "forged",
            "uid": "forged",
            "extra": {"x": ["y"]}
        }),
    );
    object["status"] = json!({"conditions": [{"type": "Approved", "status": "True"}]});
    prepare_create(&mut object, &requester()).unwrap();
    assert_eq!(object["spec"]["username"], "system:bootstrap:kc0001");
    assert_eq!(
        object["spec"]["groups"],
        json!(["system:bootstrappers", "system:authenticated"])
    );
    assert!(object["spec"].get("uid").is_none());
    assert!(object["spec"].get("extra").is_none());
    assert_eq!(object["status"], json!({}));
}

#[test]
fn create_defaults_usages() {
    let mut object = csr(
        "c",
        json!({"request": csr_request("x", None), "signerName": KUBE_APISERVER_CLIENT_SIGNER}),
    );
    prepare_create(&mut object, &requester()).unwrap();
    assert_eq!(
        object["spec"]["usages"],
        json!(["digital signature", "key encipherment"])
    );
}

#[test]
fn create_rejects_short_expiration_with_kube_status() {
    let mut object = csr(
        "kc-csr-short",
        json!({"request": csr_request("x", None), "signerName": KUBE_APISERVER_CLIENT_SIGNER, "usages": ["client auth"], "expirationSeconds": 300}),
    );
    let status = prepare_create(&mut object, &requester()).unwrap_err();
    assert_eq!(
        status,
        json!({
            "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": "CertificateSigningRequest.certificates.k8s.io \"kc-csr-short\" is invalid: spec.expirationSeconds: Invalid value: 300: may not specify a duration less than 600 seconds (10 minutes)",
            "reason": "Invalid",
            "details": {
                "name": "kc-csr-short", "group": "certificates.k8s.io", "kind": "CertificateSigningRequest",
                "causes": [{"reason": "FieldValueInvalid", "message": "Invalid value: 300: may not specify a duration less than 600 seconds (10 minutes)", "field": "spec.expirationSeconds"}]
            },
            "code": 422
        })
    );
}

#[test]
fn create_rejects_garbage_request_and_non_base64() {
    let mut object = csr(
        "g",
        json!({"request": "bm90IGEgY3Ny", "signerName": KUBE_APISERVER_CLIENT_SIGNER, "usages": ["client auth"]}),
    );
    let status = prepare_create(&mut object, &requester()).unwrap_err();
    assert_eq!(status["details"]["causes"][0]["field"], "spec.request");
    let mut object = csr(
        "g",
        json!({"request": "!!!", "signerName": KUBE_APISERVER_CLIENT_SIGNER, "usages": ["client auth"]}),
    );
    assert_eq!(
        prepare_create(&mut object, &requester()).unwrap_err()["code"],
        400
    );
}

#[test]
fn create_accepts_server_usage_for_client_signer_like_kube_apiserver() {
    // kube-apiserver leaves signer-specific usages to the signer, which marks the CSR Failed.
    let mut object = csr(
        "u",
        json!({"request": csr_request("x", None), "signerName": KUBE_APISERVER_CLIENT_SIGNER, "usages": ["server auth"]}),
    );
    prepare_create(&mut object, &requester()).unwrap();
}

fn approved(spec: Value) -> Value {
    let mut object = csr("c", spec);
    object["status"] = json!({"conditions": [{"type": "Approved", "status": "True", "reason": "R", "message": "m"}]});
    object
}

#[test]
fn approved_request_is_issued_with_subject_and_expiration() {
    let ca = CertificateAuthority::generate("ca").unwrap();
    let object = approved(json!({
        "request": csr_request("gardener.cloud:system:seed:kc-seed", Some("gardener.cloud:system:seeds")),
        "signerName": KUBE_APISERVER_CLIENT_SIGNER,
        "usages": ["digital signature", "key encipherment", "client auth"],
        "expirationSeconds": 3600
    }));
    let certificate = issue_if_approved(&object, &ca).unwrap();
    let pem = STANDARD.decode(certificate).unwrap();
    use rustls::pki_types::pem::PemObject;
    let der = rustls::pki_types::CertificateDer::from_pem_slice(&pem).unwrap();
    let (_, cert) = X509Certificate::from_der(&der).unwrap();
    assert_eq!(
        cert.subject().to_string(),
        "O=gardener.cloud:system:seeds, CN=gardener.cloud:system:seed:kc-seed"
    );
    assert_eq!(
        cert.validity().not_after.timestamp() - cert.validity().not_before.timestamp(),
        3600 + 300
    );
}

#[test]
fn signer_skips_unapproved_denied_failed_issued_or_foreign_requests() {
    let ca = CertificateAuthority::generate("ca").unwrap();
    let spec = json!({"request": csr_request("x", None), "signerName": KUBE_APISERVER_CLIENT_SIGNER, "usages": ["client auth"]});
    let pending = csr("c", spec.clone());
    let mut denied = approved(spec.clone());
    denied["status"]["conditions"] = json!([{"type": "Denied", "status": "True"}]);
    let mut failed = approved(spec.clone());
    failed["status"]["conditions"]
        .as_array_mut()
        .unwrap()
        .push(json!({"type": "Failed", "status": "True"}));
    let mut issued = approved(spec.clone());
    issued["status"]["certificate"] = json!("Zm9v");
    let mut foreign = approved(spec);
    foreign["spec"]["signerName"] = json!("example.com/other");
    for object in [pending, denied, failed, issued, foreign] {
        assert_eq!(
            signer_outcome(&object, &ca),
            SignerOutcome::Skip,
            "{object}"
        );
    }
}

#[test]
fn signer_fails_requests_with_server_usages() {
    let ca = CertificateAuthority::generate("ca").unwrap();
    let object = approved(
        json!({"request": csr_request("x", None), "signerName": KUBE_APISERVER_CLIENT_SIGNER, "usages": ["server auth"]}),
    );
    assert_eq!(
        signer_outcome(&object, &ca),
        SignerOutcome::Fail {
            reason: "SignerValidationFailure".into(),
            message: "invalid usage for client certificate: server auth".into()
        }
    );
    assert_eq!(issue_if_approved(&object, &ca), None);
}

#[test]
fn validity_is_clamped_between_ten_minutes_and_a_year() {
    assert_eq!(validity(None), DEFAULT_VALIDITY);
    assert_eq!(validity(Some(3600)), Duration::from_secs(3600));
    assert_eq!(validity(Some(1)), MIN_VALIDITY);
    assert_eq!(validity(Some(i64::MAX)), DEFAULT_VALIDITY);
}

#[test]
fn approval_takes_only_conditions_and_fills_times() {
    let old = csr(
        "c",
        json!({"request": "cmVx", "signerName": KUBE_APISERVER_CLIENT_SIGNER, "usages": ["client auth"], "username": "u"}),
    );
    let mut new = csr(
        "c",
        json!({"request": "b3RoZXI=", "usages": ["server auth"]}),
    );
    new["status"] = json!({"conditions": [{"type": "Approved", "status": "True", "reason": "AutoApproved", "message": "ok"}]});
    prepare_approval_update(&old, &mut new, now()).unwrap();
    assert_eq!(new["spec"], old["spec"]);
    assert_eq!(
        new["status"]["conditions"][0]["lastUpdateTime"],
        "2024-05-01T12:00:00Z"
    );
    assert_eq!(
        new["status"]["conditions"][0]["lastTransitionTime"],
        "2024-05-01T12:00:00Z"
    );
}

#[test]
fn approval_after_denial_is_rejected() {
    let mut old = csr(
        "kc-csr-deny",
        json!({"signerName": KUBE_APISERVER_CLIENT_SIGNER}),
    );
    old["status"] = json!({"conditions": [{"type": "Denied", "status": "True", "reason": "NotAllowed", "message": "no", "lastUpdateTime": "2024-01-01T00:00:00Z", "lastTransitionTime": "2024-01-01T00:00:00Z"}]});
    let mut new = old.clone();
    new["status"] = json!({"conditions": [
        {"type": "Denied", "status": "True", "reason": "NotAllowed", "message": "no"},
        {"type": "Approved", "status": "True", "reason": "Late", "message": "late"}
    ]});
    let status = prepare_approval_update(&old, &mut new, now()).unwrap_err();
    assert_eq!(
        status["message"],
        "CertificateSigningRequest.certificates.k8s.io \"kc-csr-deny\" is invalid: status.conditions[1].type: Invalid value: \"Approved\": Approved and Denied conditions are mutually exclusive"
    );
    // The kept Denied condition keeps its original transition time.
    assert_eq!(
        new["status"]["conditions"][0]["lastTransitionTime"],
        "2024-01-01T00:00:00Z"
    );
}

#[test]
fn status_update_cannot_change_approval() {
    let mut old = csr("c", json!({"signerName": KUBE_APISERVER_CLIENT_SIGNER}));
    old["status"] = json!({"conditions": [{"type": "Approved", "status": "True", "lastUpdateTime": "t", "lastTransitionTime": "t"}]});
    let mut new = csr("c", json!({}));
    new["status"] =
        json!({"certificate": "Zm9v", "conditions": [{"type": "Denied", "status": "True"}]});
    prepare_status_update(&old, &mut new, now()).unwrap();
    assert_eq!(new["status"]["certificate"], "Zm9v");
    assert_eq!(new["status"]["conditions"].as_array().unwrap().len(), 1);
    assert_eq!(new["status"]["conditions"][0]["type"], "Approved");
}

#[test]
fn approving_needs_approve_permission_on_the_signer() {
    let object = csr("c", json!({"signerName": KUBE_APISERVER_CLIENT_SIGNER}));
    let approver = UserInfo {
        username: "approver".into(),
        ..UserInfo::default()
    };
    let denied = approval_admission(&object, &approver, &RbacSnapshot::default()).unwrap_err();
    assert_eq!(
        denied["message"],
        "certificatesigningrequests.certificates.k8s.io \"c\" is forbidden: user not permitted to approve requests with signerName \"kubernetes.io/kube-apiserver-client\""
    );
    let rbac = RbacSnapshot {
        cluster_roles: vec![
            json!({"metadata": {"name": "approver"}, "rules": [{"apiGroups": ["certificates.k8s.io"], "resources": ["signers"], "resourceNames": ["kubernetes.io/*"], "verbs": ["approve"]}]}),
        ],
        cluster_role_bindings: vec![
            json!({"metadata": {"name": "approver"}, "roleRef": {"kind": "ClusterRole", "name": "approver"}, "subjects": [{"kind": "User", "name": "approver"}]}),
        ],
        ..RbacSnapshot::default()
    };
    approval_admission(&object, &approver, &rbac).unwrap();
}

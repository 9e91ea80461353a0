//! Conformance-style tests of kube-apiserver behaviours clients depend on, through raw HTTP
//! requests (kube-rs's client, real TLS) against an in-process sandbox: CSR admission, server-side
//! printing (Tables), OpenAPI documents, the start-up/restart behaviours of a real control
//! plane, write limits, memory bounds and a fuzz target of generated requests. Expected answers
//! follow kube-apiserver v1.32's sources (cited per test).

mod fields;
mod fuzz;
mod kubernetes_service;
mod lifecycle;
mod limits;
mod memory;
mod metrics;
mod printing;
mod version;

use std::time::Duration;

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use http::{Method, Request, StatusCode};
use rustls_pki_types::pem::PemObject;
use seedlet_sandbox::Sandbox;
use serde_json::{Value, json};
use x509_parser::prelude::FromDer;

async fn sandbox(name: &str) -> Sandbox {
    Sandbox::builder()
        .name(name)
        .start()
        .await
        .expect("sandbox starts")
}

/// Sends one request as admin; returns status, content type and body (JSON when it parses,
/// else a string).
async fn send(
    sb: &Sandbox,
    method: Method,
    path: &str,
    accept: Option<&str>,
    body: Option<Value>,
) -> (StatusCode, String, Value) {
    let mut builder = Request::builder().method(method).uri(path);
    if let Some(accept) = accept {
        builder = builder.header(http::header::ACCEPT, accept);
    }
    let bytes = match body {
        Some(body) => {
            builder = builder.header(http::header::CONTENT_TYPE, "application/json");
            serde_json::to_vec(&body).expect("json body")
        }
        None => Vec::new(),
    };
    let request = builder.body(bytes).expect("request builds");
    let response = sb
        .client()
        .send(request.map(kube::client::Body::from))
        .await
        .expect("request sent");
    let status = response.status();
    let content_type = response
        .headers()
        .get(http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned();
    let bytes = http_body_util::BodyExt::collect(response.into_body())
        .await
        .expect("body read")
        .to_bytes();
    let value = serde_json::from_slice(&bytes)
        .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&bytes).into_owned()));
    (status, content_type, value)
}

/// A base64 PEM certificate request for CN `user`, O `groups`.
pub(crate) fn csr_request(user: &str, groups: &[&str]) -> String {
    let key = rcgen::KeyPair::generate().expect("key");
    let mut params = rcgen::CertificateParams::default();
    params.distinguished_name = rcgen::DistinguishedName::new();
    for group in groups {
        params
            .distinguished_name
            .push(rcgen::DnType::OrganizationName, *group);
    }
    params
        .distinguished_name
        .push(rcgen::DnType::CommonName, user);
    let pem = params
        .serialize_request(&key)
        .expect("request")
        .pem()
        .expect("pem");
    STANDARD.encode(pem)
}

pub(crate) fn csr(name: &str, signer: &str, request: &str, usages: Value) -> Value {
    json!({
        "apiVersion": "certificates.k8s.io/v1",
        "kind": "CertificateSigningRequest",
        "metadata": {"name": name},
        "spec": {"request": request, "signerName": signer, "usages": usages},
    })
}

const CSRS: &str = "/apis/certificates.k8s.io/v1/certificatesigningrequests";

/// plugin/pkg/admission/certificates/subjectrestriction: the kube-apiserver-client signer refuses
/// subjects in `system:masters` with admission's Forbidden; other signers and groups pass.
#[tokio::test]
async fn kube_apiserver_client_signer_refuses_system_masters() {
    let sb = sandbox("csr-masters").await;
    let client_signer = "kubernetes.io/kube-apiserver-client";
    let request = csr_request("mallory", &["system:masters"]);
    let (status, _, body) = send(
        &sb,
        Method::POST,
        CSRS,
        None,
        Some(csr(
            "masters",
            client_signer,
            &request,
            json!(["client auth"]),
        )),
    )
    .await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
    assert_eq!(
        body["message"],
        "certificatesigningrequests.certificates.k8s.io \"masters\" is forbidden: use of kubernetes.io/kube-apiserver-client signer with system:masters group is not allowed"
    );
    assert_eq!(body["reason"], "Forbidden");
    assert_eq!(
        body["details"],
        json!({"name": "masters", "group": "certificates.k8s.io", "kind": "certificatesigningrequests"})
    );
    let (status, _, _) = send(&sb, Method::GET, &format!("{CSRS}/masters"), None, None).await;
    assert_eq!(status, StatusCode::NOT_FOUND, "nothing was stored");

    // Another signer may carry the group; the client signer takes other groups.
    let (status, _, body) = send(
        &sb,
        Method::POST,
        CSRS,
        None,
        Some(csr(
            "other-signer",
            "example.com/signer",
            &request,
            json!(["client auth"]),
        )),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let ordinary = csr_request("alice", &["developers"]);
    let (status, _, body) = send(
        &sb,
        Method::POST,
        CSRS,
        None,
        Some(csr(
            "alice",
            client_signer,
            &ordinary,
            json!(["client auth"]),
        )),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    sb.shutdown().await;
}

/// pkg/apis/certificates/validation: validation (422) comes before admission (403), and duplicate
/// usages and bad signer names carry kube-apiserver's causes.
#[tokio::test]
async fn csr_validation_causes_come_before_admission() {
    let sb = sandbox("csr-validation").await;
    let request = csr_request("mallory", &["system:masters"]);
    let (status, _, body) = send(
        &sb,
        Method::POST,
        CSRS,
        None,
        Some(csr(
            "dup",
            "kubernetes.io/kube-apiserver-client",
            &request,
            json!(["client auth", "client auth"]),
        )),
    )
    .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    assert_eq!(
        body["details"]["causes"],
        json!([{"reason": "FieldValueDuplicate", "message": "Duplicate value: \"client auth\"", "field": "spec.usages[1]"}])
    );
    let (status, _, body) = send(
        &sb,
        Method::POST,
        CSRS,
        None,
        Some(csr("nodomain", "signer", &request, json!(["client auth"]))),
    )
    .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    assert_eq!(
        body["details"]["causes"],
        json!([{"reason": "FieldValueInvalid", "message": "Invalid value: \"signer\": must be a fully qualified domain and path of the form 'example.com/signer-name'", "field": "spec.signerName"}])
    );
    sb.shutdown().await;
}

async fn create(sb: &Sandbox, path: &str, body: Value) {
    let (status, _, answer) = send(sb, Method::POST, path, None, Some(body)).await;
    assert_eq!(status, StatusCode::CREATED, "create at {path}: {answer}");
}

/// A watch body as text: `send` parses a single-event stream as one JSON value.
fn stream_text(body: &Value) -> String {
    match body {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}

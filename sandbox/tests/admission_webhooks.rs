//! Admission webhooks: ValidatingWebhookConfiguration and MutatingWebhookConfiguration objects
//! in the sandbox send AdmissionReviews to a test webhook over TLS (URL and service references,
//! caBundle), with rules, namespace and object selectors, failure policies and timeouts, as
//! kube-apiserver does.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use bytes::Bytes;
use http::{Method, Request, Response, StatusCode};
use http_body_util::{BodyExt, Full};
use seedlet_sandbox::Sandbox;
use seedlet_sandbox::pki::CertificateAuthority;
use serde_json::{Value, json};

/// Reviews the test webhook received, by path.
#[derive(Default)]
struct Seen(Mutex<Vec<(String, Value)>>);

impl Seen {
    fn count(&self, path: &str) -> usize {
        self.0
            .lock()
            .expect("lock")
            .iter()
            .filter(|(p, _)| p == path)
            .count()
    }
    fn last(&self, path: &str) -> Value {
        self.0
            .lock()
            .expect("lock")
            .iter()
            .rev()
            .find(|(p, _)| p == path)
            .map(|(_, r)| r.clone())
            .expect("a review")
    }
}

/// The webhook's answer for a review at `path`.
async fn answer(path: &str, review: &Value) -> Value {
    let request = &review["request"];
    let uid = request["uid"].clone();
    let response = match path {
        "/validate" => {
            if request["object"]["data"]["bad"].is_string() {
                json!({"uid": uid, "allowed": false, "status": {"code": 403, "reason": "Forbidden", "message": "bad data"}})
            } else {
                json!({"uid": uid, "allowed": true})
            }
        }
        "/mutate" => {
            let patch = json!([{"op": "add", "path": "/metadata/annotations", "value": {"mutated-by": "webhook", "operation": request["operation"]}}]);
            json!({"uid": uid, "allowed": true, "patchType": "JSONPatch", "patch": STANDARD.encode(patch.to_string())})
        }
        "/slow" => {
            tokio::time::sleep(Duration::from_secs(3)).await;
            json!({"uid": uid, "allowed": true})
        }
        _ => json!({"uid": uid, "allowed": true}),
    };
    json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "response": response})
}

async fn serve_webhook(ca: &CertificateAuthority, seen: Arc<Seen>) -> u16 {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let port = listener.local_addr().expect("address").port();
    let acceptor = tokio_rustls::TlsAcceptor::from(ca.server_config().expect("server TLS"));
    tokio::spawn(async move {
        loop {
            let Ok((tcp, _)) = listener.accept().await else {
                return;
            };
            let acceptor = acceptor.clone();
            let seen = seen.clone();
            tokio::spawn(async move {
                let Ok(stream) = acceptor.accept(tcp).await else {
                    return;
                };
                let service =
                    hyper::service::service_fn(move |request: Request<hyper::body::Incoming>| {
                        let seen = seen.clone();
                        async move {
                            let path = request.uri().path().to_owned();
                            let bytes = request
                                .into_body()
                                .collect()
                                .await
                                .map(|b| b.to_bytes())
                                .unwrap_or_default();
                            let review: Value =
                                serde_json::from_slice(&bytes).unwrap_or(Value::Null);
                            seen.0
                                .lock()
                                .expect("lock")
                                .push((path.clone(), review.clone()));
                            let body = answer(&path, &review).await;
                            Ok::<_, std::convert::Infallible>(Response::new(Full::new(
                                Bytes::from(body.to_string()),
                            )))
                        }
                    });
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(hyper_util::rt::TokioIo::new(stream), service)
                    .await;
            });
        }
    });
    port
}

async fn send(
    sb: &Sandbox,
    method: Method,
    path: &str,
    content_type: &str,
    body: Option<Value>,
) -> (StatusCode, Value) {
    let request = Request::builder()
        .method(method)
        .uri(path)
        .header(http::header::CONTENT_TYPE, content_type)
        .body(body.map(|b| b.to_string().into_bytes()).unwrap_or_default())
        .expect("request");
    let response = sb
        .client()
        .send(request.map(kube::client::Body::from))
        .await
        .expect("sent");
    let status = response.status();
    let bytes = response
        .into_body()
        .collect()
        .await
        .expect("body")
        .to_bytes();
    (
        status,
        serde_json::from_slice(&bytes).unwrap_or(Value::Null),
    )
}

async fn post(sb: &Sandbox, path: &str, body: Value) -> (StatusCode, Value) {
    send(sb, Method::POST, path, "application/json", Some(body)).await
}

fn rule(resources: &[&str]) -> Value {
    json!([{"operations": ["CREATE", "UPDATE"], "apiGroups": [""], "apiVersions": ["v1"], "resources": resources}])
}

#[tokio::test]
async fn webhooks_validate_and_mutate_matching_requests() {
    let ca = CertificateAuthority::generate("webhook-ca").expect("CA");
    let seen = Arc::new(Seen::default());
    let port = serve_webhook(&ca, seen.clone()).await;
    let bundle = STANDARD.encode(ca.ca_pem());
    let sb = Sandbox::builder()
        .name("admission")
        .start()
        .await
        .expect("sandbox starts");
    post(
        &sb,
        "/api/v1/namespaces",
        json!({"metadata": {"name": "guarded", "labels": {"admission": "on"}}}),
    )
    .await;
    post(
        &sb,
        "/api/v1/namespaces",
        json!({"metadata": {"name": "open"}}),
    )
    .await;
    // The validating webhook is reached through a Service and its Endpoints: the sandbox's own
    // default/kubernetes (whose name the webhook's certificate carries), pointed at the webhook.
    let (status, body) = send(
        &sb,
        Method::PATCH,
        "/api/v1/namespaces/default/endpoints/kubernetes",
        "application/merge-patch+json",
        Some(json!({"subsets": [{"addresses": [{"ip": "127.0.0.1"}], "ports": [{"port": port}]}]})),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let (status, body) = post(&sb, "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations", json!({
        "metadata": {"name": "deny-bad"},
        "webhooks": [{"name": "deny.example.com", "admissionReviewVersions": ["v1"], "sideEffects": "None",
            "clientConfig": {"service": {"namespace": "default", "name": "kubernetes", "path": "/validate"}, "caBundle": bundle},
            "rules": rule(&["configmaps"]),
            "namespaceSelector": {"matchLabels": {"admission": "on"}},
            "objectSelector": {"matchExpressions": [{"key": "skip-webhooks", "operator": "DoesNotExist"}]}}],
    })).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let (status, body) = post(&sb, "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations", json!({
        "metadata": {"name": "annotate"},
        "webhooks": [{"name": "annotate.example.com", "admissionReviewVersions": ["v1"], "sideEffects": "None",
            "clientConfig": {"url": format!("https://127.0.0.1:{port}/mutate"), "caBundle": bundle},
            "rules": rule(&["configmaps"]),
            "namespaceSelector": {"matchLabels": {"admission": "on"}}}],
    })).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");

    let guarded = "/api/v1/namespaces/guarded/configmaps";
    let (status, denied) = post(
        &sb,
        guarded,
        json!({"metadata": {"name": "bad"}, "data": {"bad": "x"}}),
    )
    .await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{denied}");
    assert_eq!(
        denied["message"],
        "admission webhook \"deny.example.com\" denied the request: bad data"
    );
    assert_eq!(denied["reason"], "Forbidden");
    let review = seen.last("/validate");
    assert_eq!(review["apiVersion"], "admission.k8s.io/v1");
    assert_eq!(review["request"]["operation"], "CREATE");
    assert_eq!(review["request"]["namespace"], "guarded");
    assert_eq!(
        review["request"]["resource"],
        json!({"group": "", "version": "v1", "resource": "configmaps"})
    );
    assert_eq!(review["request"]["userInfo"]["username"], "admin");
    assert_eq!(
        review["request"]["object"]["metadata"]["annotations"]["mutated-by"], "webhook",
        "validating webhooks see the mutated object"
    );

    let (status, created) = post(
        &sb,
        guarded,
        json!({"metadata": {"name": "good"}, "data": {"k": "v"}}),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    assert_eq!(
        created["metadata"]["annotations"],
        json!({"mutated-by": "webhook", "operation": "CREATE"})
    );

    // A merge patch is admitted as an UPDATE of the patched object.
    let (status, patched) = send(
        &sb,
        Method::PATCH,
        &format!("{guarded}/good"),
        "application/merge-patch+json",
        Some(json!({"data": {"k": "w"}})),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{patched}");
    assert_eq!(
        (
            patched["data"]["k"].as_str(),
            patched["metadata"]["annotations"]["operation"].as_str()
        ),
        (Some("w"), Some("UPDATE"))
    );
    assert_eq!(
        seen.last("/validate")["request"]["oldObject"]["data"]["k"],
        "v"
    );
    let (status, _) = send(
        &sb,
        Method::PATCH,
        &format!("{guarded}/good"),
        "application/merge-patch+json",
        Some(json!({"data": {"bad": "now"}})),
    )
    .await;
    assert_eq!(
        status,
        StatusCode::FORBIDDEN,
        "a patch that makes the object bad is refused"
    );

    // Selectors: another namespace and an opted-out object are not sent.
    let before = (seen.count("/validate"), seen.count("/mutate"));
    let (status, _) = post(
        &sb,
        "/api/v1/namespaces/open/configmaps",
        json!({"metadata": {"name": "bad"}, "data": {"bad": "x"}}),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED);
    let (status, _) = post(&sb, guarded, json!({"metadata": {"name": "skipped", "labels": {"skip-webhooks": "yes"}}, "data": {"bad": "x"}})).await;
    assert_eq!(
        status,
        StatusCode::CREATED,
        "the object selector excludes it from validation"
    );
    assert_eq!(seen.count("/validate"), before.0, "neither was validated");
    assert_eq!(
        seen.count("/mutate"),
        before.1 + 1,
        "the mutating webhook has no object selector"
    );
    sb.shutdown().await;
}

#[tokio::test]
async fn failure_policy_and_timeouts_decide_about_unreachable_webhooks() {
    let ca = CertificateAuthority::generate("webhook-ca").expect("CA");
    let seen = Arc::new(Seen::default());
    let port = serve_webhook(&ca, seen.clone()).await;
    let bundle = STANDARD.encode(ca.ca_pem());
    let closed = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        listener.local_addr().expect("address").port()
    };
    let sb = Sandbox::builder()
        .name("admission-failures")
        .start()
        .await
        .expect("sandbox starts");
    let configuration = |name: &str,
                         url: String,
                         policy: &str,
                         resources: &[&str],
                         timeout: u64| {
        json!({
            "metadata": {"name": name},
            "webhooks": [{"name": format!("{name}.example.com"), "admissionReviewVersions": ["v1"], "sideEffects": "None",
                "failurePolicy": policy, "timeoutSeconds": timeout,
                "clientConfig": {"url": url, "caBundle": bundle}, "rules": rule(resources)}],
        })
    };
    let path = "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations";
    post(
        &sb,
        path,
        configuration(
            "closed-fail",
            format!("https://127.0.0.1:{closed}/x"),
            "Fail",
            &["secrets"],
            5,
        ),
    )
    .await;
    post(
        &sb,
        path,
        configuration(
            "closed-ignore",
            format!("https://127.0.0.1:{closed}/x"),
            "Ignore",
            &["configmaps"],
            5,
        ),
    )
    .await;
    post(
        &sb,
        path,
        configuration(
            "slow",
            format!("https://127.0.0.1:{port}/slow"),
            "Fail",
            &["services"],
            1,
        ),
    )
    .await;

    let (status, error) = post(
        &sb,
        "/api/v1/namespaces/default/secrets",
        json!({"metadata": {"name": "s"}}),
    )
    .await;
    assert_eq!(status, StatusCode::INTERNAL_SERVER_ERROR, "{error}");
    assert!(
        error["message"].as_str().is_some_and(|m| m.starts_with(
            "Internal error occurred: failed calling webhook \"closed-fail.example.com\""
        )),
        "{error}"
    );
    let (status, _) = post(
        &sb,
        "/api/v1/namespaces/default/configmaps",
        json!({"metadata": {"name": "c"}}),
    )
    .await;
    assert_eq!(
        status,
        StatusCode::CREATED,
        "failurePolicy Ignore lets it through"
    );
    let started = std::time::Instant::now();
    let (status, error) = post(
        &sb,
        "/api/v1/namespaces/default/services",
        json!({"metadata": {"name": "svc"}, "spec": {"ports": [{"port": 80}]}}),
    )
    .await;
    assert_eq!(status, StatusCode::INTERNAL_SERVER_ERROR, "{error}");
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "timeoutSeconds ends the call early"
    );
    assert_eq!(seen.count("/slow"), 1);
    sb.shutdown().await;
}

/// A dry run is admitted like any request, flagged `dryRun: true`; a webhook that may have side
/// effects refuses it (400) before being called, one declaring `NoneOnDryRun` is called.
#[tokio::test]
async fn dry_runs_reach_only_webhooks_without_side_effects() {
    let ca = CertificateAuthority::generate("webhook-ca").expect("CA");
    let seen = Arc::new(Seen::default());
    let port = serve_webhook(&ca, seen.clone()).await;
    let bundle = STANDARD.encode(ca.ca_pem());
    let sb = Sandbox::builder()
        .name("admission-dry-run")
        .start()
        .await
        .expect("sandbox starts");
    let webhook = |name: &str, path: &str, side_effects: &str, resources: &[&str]| {
        json!({"name": name, "admissionReviewVersions": ["v1"], "sideEffects": side_effects,
            "clientConfig": {"url": format!("https://127.0.0.1:{port}{path}"), "caBundle": bundle},
            "rules": rule(resources)})
    };
    let (status, body) = post(
        &sb,
        "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations",
        json!({
            "metadata": {"name": "checks"},
            "webhooks": [webhook("deny.example.com", "/validate", "None", &["configmaps"]),
                         webhook("audit.example.com", "/audit", "Some", &["secrets"]),
                         webhook("quiet.example.com", "/quiet", "NoneOnDryRun", &["services"])],
        }),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let (status, body) = post(
        &sb,
        "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations",
        json!({
            "metadata": {"name": "annotate"},
            "webhooks": [webhook("annotate.example.com", "/mutate", "None", &["configmaps"])],
        }),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");

    let maps = "/api/v1/namespaces/default/configmaps";
    let (status, denied) = post(
        &sb,
        &format!("{maps}?dryRun=All"),
        json!({"metadata": {"name": "bad"}, "data": {"bad": "x"}}),
    )
    .await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{denied}");
    assert_eq!(seen.last("/validate")["request"]["dryRun"], true);
    let (status, answered) = post(
        &sb,
        &format!("{maps}?dryRun=All"),
        json!({"metadata": {"name": "good"}, "data": {"k": "v"}}),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{answered}");
    assert_eq!(
        answered["metadata"]["annotations"]["mutated-by"], "webhook",
        "mutating webhooks change a dry run's answer"
    );
    assert_eq!(seen.last("/mutate")["request"]["dryRun"], true);
    let (status, _) = send(&sb, Method::GET, &format!("{maps}/good"), "", None).await;
    assert_eq!(status, StatusCode::NOT_FOUND, "nothing stored");

    let secrets = "/api/v1/namespaces/default/secrets";
    let (status, refused) = post(
        &sb,
        &format!("{secrets}?dryRun=All"),
        json!({"metadata": {"name": "s"}}),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{refused}");
    assert_eq!(
        refused["message"],
        "admission webhook \"audit.example.com\" does not support dry run"
    );
    assert_eq!(seen.count("/audit"), 0, "refused before the call");
    let (status, _) = post(&sb, secrets, json!({"metadata": {"name": "s"}})).await;
    assert_eq!(status, StatusCode::CREATED, "a real request is sent");
    assert_eq!(seen.count("/audit"), 1);

    let (status, body) = post(
        &sb,
        "/api/v1/namespaces/default/services?dryRun=All",
        json!({"metadata": {"name": "svc"}, "spec": {"ports": [{"port": 80}]}}),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    assert_eq!(seen.last("/quiet")["request"]["dryRun"], true);
    sb.shutdown().await;
}

//! The authorization webhook (`--authorization-mode=RBAC,Webhook` with
//! `--authorization-webhook-config-file`): a test webhook over HTTPS with its own CA and a bearer
//! token, asked only after RBAC has no opinion, with cached answers, the webhook's reason in the
//! 403, a failing webhook answered with 500 (legacy flags) or by its failure policy (structured
//! configuration), selectors sent for lists and watches, and a broken config refused at start.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use bytes::Bytes;
use http::{Request, Response, StatusCode};
use http_body_util::{BodyExt, Full};
use seedlet_sandbox::Sandbox;
use seedlet_sandbox::authz::webhook::{FailurePolicy, WebhookConfig};
use seedlet_sandbox::pki::CertificateAuthority;
use serde_json::{Value, json};

/// What the test webhook saw and how it behaves.
#[derive(Default)]
struct Webhook {
    reviews: Mutex<Vec<Value>>,
    authorizations: Mutex<Vec<String>>,
    failing: AtomicBool,
}

impl Webhook {
    fn answer(&self, review: Value) -> (u16, Value) {
        self.reviews.lock().expect("lock").push(review.clone());
        if self.failing.load(Ordering::SeqCst) {
            return (500, json!({"message": "broken"}));
        }
        let spec = &review["spec"];
        let attributes = &spec["resourceAttributes"];
        let allowed = spec["user"] == "webhook-user"
            && attributes["resource"] == "configmaps"
            && attributes["verb"] == "list";
        let status = if allowed {
            json!({"allowed": true})
        } else {
            json!({"allowed": false, "reason": "webhook says no"})
        };
        (
            200,
            json!({"apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview", "status": status}),
        )
    }

    fn count(&self) -> usize {
        self.reviews.lock().expect("lock").len()
    }
}

/// Serves the webhook over TLS on 127.0.0.1:0; returns its port.
async fn serve_webhook(ca: &CertificateAuthority, webhook: Arc<Webhook>) -> u16 {
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
            let webhook = webhook.clone();
            tokio::spawn(async move {
                let Ok(stream) = acceptor.accept(tcp).await else {
                    return;
                };
                let service =
                    hyper::service::service_fn(move |request: Request<hyper::body::Incoming>| {
                        let webhook = webhook.clone();
                        async move {
                            let authorization = request
                                .headers()
                                .get(http::header::AUTHORIZATION)
                                .and_then(|v| v.to_str().ok())
                                .unwrap_or_default()
                                .to_owned();
                            webhook
                                .authorizations
                                .lock()
                                .expect("lock")
                                .push(authorization);
                            let bytes = request
                                .into_body()
                                .collect()
                                .await
                                .map(|b| b.to_bytes())
                                .unwrap_or_default();
                            let review: Value =
                                serde_json::from_slice(&bytes).unwrap_or(Value::Null);
                            let (status, body) = webhook.answer(review);
                            let mut response =
                                Response::new(Full::new(Bytes::from(body.to_string())));
                            *response.status_mut() = StatusCode::from_u16(status).expect("status");
                            Ok::<_, std::convert::Infallible>(response)
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

fn kubeconfig(server: &str, ca_pem: &str) -> String {
    serde_json::to_string(&json!({
        "apiVersion": "v1", "kind": "Config",
        "clusters": [{"name": "authz", "cluster": {"server": server, "certificate-authority-data": STANDARD.encode(ca_pem)}}],
        "users": [{"name": "apiserver", "user": {"token": "webhook-token"}}],
        "contexts": [{"name": "webhook", "context": {"cluster": "authz", "user": "apiserver"}}],
        "current-context": "webhook",
    }))
    .expect("kubeconfig serializes")
}

async fn get(client: &kube::Client, path: &str) -> (StatusCode, Value) {
    let request = Request::get(path).body(Vec::new()).expect("request");
    let response = client
        .send(request.map(kube::client::Body::from))
        .await
        .expect("request sent");
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

#[tokio::test]
async fn rbac_first_then_the_webhook_with_cached_answers() {
    let ca = CertificateAuthority::generate("webhook-ca").expect("webhook CA");
    let webhook = Arc::new(Webhook::default());
    let port = serve_webhook(&ca, webhook.clone()).await;
    let dir = tempfile::tempdir().expect("temp dir");
    let config = dir.path().join("authz-webhook.kubeconfig");
    std::fs::write(
        &config,
        kubeconfig(&format!("https://127.0.0.1:{port}/authorize"), ca.ca_pem()),
    )
    .expect("config written");
    let sb = Sandbox::builder()
        .name("authz-webhook")
        .authorization_webhook(WebhookConfig {
            config_file: config.clone(),
            authorized_ttl: Duration::from_secs(60),
            unauthorized_ttl: Duration::from_millis(200),
            failure_policy: None,
        })
        .start()
        .await
        .expect("sandbox starts");
    let user = {
        let kubeconfig = sb.kubeconfig_for("webhook-user", &[]).expect("certificate");
        let config = kube::Config::from_custom_kubeconfig(kubeconfig, &Default::default())
            .await
            .expect("config");
        kube::Client::try_from(config).expect("client")
    };

    // RBAC allows discovery to every authenticated user: the webhook is not asked.
    assert_eq!(get(&user, "/api").await.0, StatusCode::OK);
    assert_eq!(get(&sb.client(), "/api/v1/secrets").await.0, StatusCode::OK);
    assert_eq!(webhook.count(), 0, "RBAC and system:masters decide first");

    let configmaps = "/api/v1/namespaces/default/configmaps";
    let (status, list) = get(&user, configmaps).await;
    assert_eq!(status, StatusCode::OK, "{list}");
    assert_eq!(webhook.count(), 1);
    let review = webhook.reviews.lock().expect("lock")[0].clone();
    assert_eq!(review["kind"], "SubjectAccessReview");
    assert_eq!(review["apiVersion"], "authorization.k8s.io/v1");
    assert_eq!(review["spec"]["user"], "webhook-user");
    assert_eq!(review["spec"]["groups"], json!(["system:authenticated"]));
    assert_eq!(
        review["spec"]["resourceAttributes"],
        json!({"namespace": "default", "verb": "list", "group": "", "version": "v1", "resource": "configmaps", "subresource": "", "name": ""})
    );
    assert_eq!(
        webhook.authorizations.lock().expect("lock")[0],
        "Bearer webhook-token"
    );
    assert_eq!(get(&user, configmaps).await.0, StatusCode::OK);
    assert_eq!(webhook.count(), 1, "an allowed answer is cached");

    let secrets = "/api/v1/namespaces/default/secrets";
    let (status, denied) = get(&user, secrets).await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    assert_eq!(
        denied["message"],
        "secrets is forbidden: User \"webhook-user\" cannot list resource \"secrets\" in API group \"\" in the namespace \"default\": webhook says no"
    );
    assert_eq!(get(&user, secrets).await.0, StatusCode::FORBIDDEN);
    assert_eq!(
        webhook.count(),
        2,
        "a denial is cached for the unauthorized TTL"
    );
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(get(&user, secrets).await.0, StatusCode::FORBIDDEN);
    assert_eq!(webhook.count(), 3, "and asked again after it");

    webhook.failing.store(true, Ordering::SeqCst);
    let (status, error) = get(&user, "/api/v1/namespaces/default/configmaps/x").await;
    assert_eq!(status, StatusCode::INTERNAL_SERVER_ERROR, "{error}");
    assert_eq!(error["reason"], "InternalError");
    assert_eq!(
        get(&user, configmaps).await.0,
        StatusCode::OK,
        "cached answers still count"
    );

    // A structured configuration's failure policy: with nothing after the webhook, Deny and
    // NoOpinion both end in a 403 naming the failure, never a 500.
    for policy in [FailurePolicy::Deny, FailurePolicy::NoOpinion] {
        sb.set_authorization_webhook(Some(&WebhookConfig {
            failure_policy: Some(policy),
            ..WebhookConfig::new(&config)
        }))
        .expect("reconfigured");
        let (status, error) = get(&user, "/api/v1/namespaces/default/configmaps/y").await;
        assert_eq!(status, StatusCode::FORBIDDEN, "{policy:?}: {error}");
        assert!(
            error["message"]
                .as_str()
                .unwrap_or_default()
                .contains("authorization webhook"),
            "{error}"
        );
    }

    // AuthorizeWithSelectors: a list's selectors reach the webhook, and a single-object watch
    // (`metadata.name=<x>`) carries the name.
    webhook.failing.store(false, Ordering::SeqCst);
    get(
        &user,
        "/api/v1/namespaces/default/pods?labelSelector=app%3Dweb&fieldSelector=spec.nodeName%3Dn1",
    )
    .await;
    get(
        &user,
        "/api/v1/namespaces/default/pods?watch=1&fieldSelector=metadata.name%3Dp1&timeoutSeconds=1",
    )
    .await;
    let reviews = webhook.reviews.lock().expect("lock").clone();
    let pods: Vec<&Value> = reviews
        .iter()
        .map(|r| &r["spec"]["resourceAttributes"])
        .filter(|a| a["resource"] == "pods")
        .collect();
    assert_eq!(pods.len(), 2, "{reviews:?}");
    assert_eq!(pods[0]["labelSelector"], json!({"rawSelector": "app=web"}));
    assert_eq!(
        pods[0]["fieldSelector"],
        json!({"rawSelector": "spec.nodeName=n1"})
    );
    assert_eq!(pods[1]["verb"], "watch");
    assert_eq!(pods[1]["name"], "p1");
    sb.shutdown().await;
}

#[tokio::test]
async fn a_broken_webhook_config_is_refused_at_start() {
    let dir = tempfile::tempdir().expect("temp dir");
    let config = dir.path().join("broken.kubeconfig");
    std::fs::write(
        &config,
        "clusters: [{name: a, cluster: {server: \"https://127.0.0.1:1\"}}]\n",
    )
    .expect("config written");
    let error = Sandbox::builder()
        .authorization_webhook(WebhookConfig::new(&config))
        .start()
        .await
        .err()
        .expect("an https server without a CA is refused");
    let chain = format!(
        "{error}: {}",
        std::error::Error::source(&error)
            .map(ToString::to_string)
            .unwrap_or_default()
    );
    assert!(
        chain.contains("broken.kubeconfig") && chain.contains("certificate-authority"),
        "{chain}"
    );
}

//! Start-up and restart behaviours: health and RBAC windows, watches from before a restart, kube-root-ca.crt, backdated certificates.

use super::*;

/// A kube client for a user with no groups beyond system:authenticated.
async fn user_client(sb: &Sandbox, user: &str) -> kube::Client {
    let kubeconfig = sb.kubeconfig_for(user, &[]).expect("user certificate");
    let config = kube::Config::from_custom_kubeconfig(kubeconfig, &Default::default())
        .await
        .expect("kubeconfig loads");
    kube::Client::try_from(config).expect("client builds")
}

async fn status_of(client: &kube::Client, path: &str) -> (StatusCode, String) {
    let request = Request::get(path).body(Vec::new()).expect("request builds");
    let response = client
        .send(request.map(kube::client::Body::from))
        .await
        .expect("request sent");
    let status = response.status();
    let bytes = http_body_util::BodyExt::collect(response.into_body())
        .await
        .expect("body read")
        .to_bytes();
    (status, String::from_utf8_lossy(&bytes).into_owned())
}

/// Waits until `check` holds (polling every 20 ms) or panics after `limit`.
async fn eventually<F, Fut>(limit: Duration, what: &str, mut check: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let deadline = tokio::time::Instant::now() + limit;
    while !check().await {
        assert!(
            tokio::time::Instant::now() < deadline,
            "timed out waiting: {what}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// A starting kube-apiserver: health checks answer 500 naming the failing
/// poststarthook/rbac/bootstrap-roles, and until RBAC is loaded everyone but system:masters is
/// forbidden; both end by themselves. Off by default.
#[tokio::test]
async fn startup_windows_fail_health_and_rbac_then_recover() {
    let startup = seedlet_sandbox::Startup {
        health_failing: Duration::from_millis(800),
        rbac_loading: Duration::from_millis(400),
    };
    let sb = Sandbox::builder()
        .name("startup")
        .startup(startup)
        .start()
        .await
        .expect("sandbox starts");
    let admin = sb.client();
    let viewer = user_client(&sb, "viewer").await;
    let (status, body) = status_of(&admin, "/healthz").await;
    assert_eq!(status, StatusCode::INTERNAL_SERVER_ERROR, "{body}");
    assert!(body.contains("[+]ping ok\n"), "{body}");
    assert!(
        body.contains("[-]poststarthook/rbac/bootstrap-roles failed: reason withheld\n"),
        "{body}"
    );
    assert!(body.ends_with("healthz check failed\n"), "{body}");
    let (status, body) = status_of(&admin, "/readyz").await;
    assert!(
        status == StatusCode::INTERNAL_SERVER_ERROR && body.ends_with("readyz check failed\n"),
        "{body}"
    );
    let (status, body) = status_of(&viewer, "/api").await;
    assert_eq!(status, StatusCode::FORBIDDEN, "RBAC not loaded yet: {body}");
    assert!(
        body.contains("forbidden: User \\\"viewer\\\" cannot get path \\\"/api\\\""),
        "{body}"
    );
    let (status, _) = status_of(&admin, "/api/v1/namespaces").await;
    assert_eq!(status, StatusCode::OK, "system:masters does not need RBAC");

    eventually(Duration::from_secs(5), "RBAC loaded", || async {
        status_of(&viewer, "/api").await.0 == StatusCode::OK
    })
    .await;
    eventually(Duration::from_secs(5), "healthy", || async {
        status_of(&admin, "/healthz").await == (StatusCode::OK, "ok".to_owned())
    })
    .await;
    sb.shutdown().await;

    let plain = sandbox("no-startup").await;
    assert_eq!(
        status_of(&plain.client(), "/healthz").await.0,
        StatusCode::OK
    );
    plain.shutdown().await;
}

/// After a restart kube-apiserver's watch cache starts at the current resourceVersion: watches
/// from before it get 410 Gone ("too old resource version"), from now on they work; open watches
/// end.
#[tokio::test]
async fn watches_from_before_a_restart_are_gone() {
    let sb = sandbox("restart").await;
    let path = "/api/v1/namespaces/default/configmaps";
    create(&sb, path, json!({"metadata": {"name": "before"}})).await;
    let (_, _, list) = send(&sb, Method::GET, path, None, None).await;
    let old = list["metadata"]["resourceVersion"]
        .as_str()
        .expect("rv")
        .to_owned();
    create(&sb, path, json!({"metadata": {"name": "later"}})).await;
    let (_, _, list) = send(&sb, Method::GET, path, None, None).await;
    let current = list["metadata"]["resourceVersion"]
        .as_str()
        .expect("rv")
        .to_owned();

    let (_, _, events) = send(
        &sb,
        Method::GET,
        &format!("{path}?watch=1&resourceVersion={old}&timeoutSeconds=1"),
        None,
        None,
    )
    .await;
    assert!(
        stream_text(&events).contains("\"ADDED\""),
        "before the restart the history is there: {events}"
    );

    sb.simulate_restart(seedlet_sandbox::Startup {
        health_failing: Duration::ZERO,
        rbac_loading: Duration::ZERO,
    });
    let (_, _, events) = send(
        &sb,
        Method::GET,
        &format!("{path}?watch=1&resourceVersion={old}&timeoutSeconds=1"),
        None,
        None,
    )
    .await;
    let text = stream_text(&events);
    let line: Value =
        serde_json::from_str(text.lines().next().expect("one event")).expect("event JSON");
    assert_eq!(line["type"], "ERROR");
    assert_eq!(line["object"]["code"], 410);
    assert_eq!(line["object"]["reason"], "Expired");
    assert!(
        line["object"]["message"]
            .as_str()
            .is_some_and(|m| m.starts_with(&format!("too old resource version: {old} ("))),
        "{line}"
    );

    let (_, _, events) = send(
        &sb,
        Method::GET,
        &format!("{path}?watch=1&resourceVersion={current}&timeoutSeconds=1"),
        None,
        None,
    )
    .await;
    assert_eq!(
        events,
        Value::String(String::new()),
        "a watch from the current version just waits"
    );
    sb.shutdown().await;
}

/// kube-controller-manager's root-ca-cert-publisher (opt-in): kube-root-ca.crt with the cluster CA
/// in every namespace, new ones included, recreated after a delete and reset after a change.
#[tokio::test]
async fn root_ca_configmaps_are_published_in_every_namespace() {
    let sb = Sandbox::builder()
        .name("root-ca")
        .publish_root_ca(true)
        .start()
        .await
        .expect("sandbox starts");
    let ca = sb.ca_cert_pem();
    let ca_in = |namespace: &str| {
        let sb = &sb;
        let path = format!("/api/v1/namespaces/{namespace}/configmaps/kube-root-ca.crt");
        async move {
            let (status, _, body) = send(sb, Method::GET, &path, None, None).await;
            (status == StatusCode::OK).then_some(body)
        }
    };
    for namespace in ["default", "kube-system", "kube-public", "kube-node-lease"] {
        eventually(Duration::from_secs(5), namespace, || async {
            ca_in(namespace).await.is_some()
        })
        .await;
    }
    let published = ca_in("default").await.expect("published");
    assert_eq!(published["data"], json!({"ca.crt": ca}));
    assert!(
        published["metadata"]["annotations"]["kubernetes.io/description"]
            .as_str()
            .is_some_and(|d| d.starts_with("Contains a CA bundle"))
    );

    create(
        &sb,
        "/api/v1/namespaces",
        json!({"metadata": {"name": "fresh"}}),
    )
    .await;
    eventually(Duration::from_secs(5), "new namespace", || async {
        ca_in("fresh").await.is_some()
    })
    .await;
    let path = "/api/v1/namespaces/fresh/configmaps/kube-root-ca.crt";
    let (status, _, _) = send(&sb, Method::DELETE, path, None, None).await;
    assert!(status.is_success());
    eventually(Duration::from_secs(5), "recreated", || async {
        ca_in("fresh").await.is_some()
    })
    .await;
    let mut changed = ca_in("fresh").await.expect("there");
    changed["data"]["ca.crt"] = json!("tampered");
    let (status, _, _) = send(&sb, Method::PUT, path, None, Some(changed)).await;
    assert_eq!(status, StatusCode::OK);
    eventually(Duration::from_secs(5), "reset", || async {
        ca_in("fresh")
            .await
            .is_some_and(|cm| cm["data"]["ca.crt"] == json!(ca))
    })
    .await;
    sb.shutdown().await;

    let plain = sandbox("no-root-ca").await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    let (status, _, _) = send(
        &plain,
        Method::GET,
        "/api/v1/namespaces/default/configmaps/kube-root-ca.crt",
        None,
        None,
    )
    .await;
    assert_eq!(status, StatusCode::NOT_FOUND, "off by default");
    plain.shutdown().await;
}

/// pkg/controller/certificates/signer: issued certificates start five minutes before signing
/// (clock skew between control plane and clients).
#[tokio::test]
async fn issued_certificates_are_backdated_five_minutes() {
    let sb = sandbox("backdate").await;
    let request = csr_request("alice", &["developers"]);
    create(
        &sb,
        CSRS,
        csr(
            "alice",
            "kubernetes.io/kube-apiserver-client",
            &request,
            json!(["client auth"]),
        ),
    )
    .await;
    let (_, _, mut object) = send(&sb, Method::GET, &format!("{CSRS}/alice"), None, None).await;
    object["status"]["conditions"] =
        json!([{"type": "Approved", "status": "True", "reason": "Test", "message": "ok"}]);
    let (status, _, body) = send(
        &sb,
        Method::PUT,
        &format!("{CSRS}/alice/approval"),
        None,
        Some(object),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let signed_at = jiff::Timestamp::now().as_second();
    let mut certificate = String::new();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    while certificate.is_empty() {
        assert!(
            tokio::time::Instant::now() < deadline,
            "no certificate issued"
        );
        let (_, _, object) = send(&sb, Method::GET, &format!("{CSRS}/alice"), None, None).await;
        certificate = object["status"]["certificate"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let pem = STANDARD.decode(certificate).expect("base64");
    let der = rustls_pki_types::CertificateDer::from_pem_slice(&pem).expect("PEM certificate");
    let (_, parsed) = x509_parser::certificate::X509Certificate::from_der(&der).expect("X.509");
    let not_before = parsed.validity().not_before.timestamp();
    assert!(
        (signed_at - 300 - 5..=signed_at - 300 + 1).contains(&not_before),
        "NotBefore {not_before} is five minutes before {signed_at}"
    );
    sb.shutdown().await;
}

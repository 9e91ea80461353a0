//! The CSR approver: forged requests are never approved, other signers are left alone.

use super::*;

/// Creates a CSR as `client` for `common_name`/`organizations` with `usages` and `signer`.
async fn create_csr(
    client: kube::Client,
    name: &str,
    cn: &str,
    orgs: &[&str],
    usages: &[&str],
    signer: &str,
) {
    let key = rcgen_like_request(cn, orgs);
    let csr = CertificateSigningRequest {
        metadata: named(name),
        spec: CertificateSigningRequestSpec {
            request: ByteString(key.into_bytes()),
            signer_name: signer.to_owned(),
            usages: Some(usages.iter().map(|u| (*u).to_owned()).collect()),
            ..CertificateSigningRequestSpec::default()
        },
        status: None,
    };
    Api::<CertificateSigningRequest>::all(client)
        .create(&PostParams::default(), &csr)
        .await
        .expect("csr created");
}

/// A PEM certificate request for the subject (generated through the bootstrap crate's key code).
fn rcgen_like_request(cn: &str, orgs: &[&str]) -> String {
    let subject = seedlet_bootstrap::csr::Subject {
        common_name: cn.to_owned(),
        organizations: orgs.iter().map(|o| (*o).to_owned()).collect(),
    };
    seedlet_bootstrap::csr::PreparedRequest::generate(&subject)
        .expect("request generated")
        .request_pem
}

fn decision(csr: &CertificateSigningRequest) -> Option<(String, String)> {
    let condition = csr.status.as_ref()?.conditions.as_ref()?.first()?;
    Some((
        condition.type_.clone(),
        condition.message.clone().unwrap_or_default(),
    ))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn forged_requests_are_never_approved_and_other_signers_untouched() {
    let env = Env::start().await;
    let _approver = env.start_approver();
    // A user that may create CSRs but lacks the seedclient permission.
    let roles: Api<ClusterRole> = Api::all(env.garden.client());
    let role = ClusterRole {
        metadata: named("csr-creator"),
        rules: Some(vec![PolicyRule {
            api_groups: Some(vec!["certificates.k8s.io".into()]),
            resources: Some(vec!["certificatesigningrequests".into()]),
            verbs: vec!["create".into(), "get".into()],
            ..PolicyRule::default()
        }]),
        ..ClusterRole::default()
    };
    roles
        .create(&PostParams::default(), &role)
        .await
        .expect("role created");
    let bindings: Api<ClusterRoleBinding> = Api::all(env.garden.client());
    let binding = ClusterRoleBinding {
        metadata: named("csr-creator"),
        role_ref: RoleRef {
            api_group: "rbac.authorization.k8s.io".into(),
            kind: "ClusterRole".into(),
            name: "csr-creator".into(),
        },
        subjects: Some(vec![RbacSubject {
            kind: "User".into(),
            name: "mallory".into(),
            ..RbacSubject::default()
        }]),
    };
    bindings
        .create(&PostParams::default(), &binding)
        .await
        .expect("binding created");
    let mallory_config = env
        .garden
        .kubeconfig_for("mallory", &[])
        .expect("mallory kubeconfig");
    let mallory = kube::Client::try_from(
        kube::Config::from_custom_kubeconfig(mallory_config, &Default::default())
            .await
            .expect("config"),
    )
    .expect("client");
    let admin = env.garden.client();
    let seeds = ["gardener.cloud:system:seeds"];
    let usages = ["digital signature", "key encipherment", "client auth"];
    let signer = "kubernetes.io/kube-apiserver-client";
    create_csr(
        admin.clone(),
        "wrong-cn",
        "gardener.cloud:system:shoot:a:b",
        &seeds,
        &usages,
        signer,
    )
    .await;
    // kube-apiserver's CertificateSubjectRestriction refuses system:masters for this signer
    // before any approver sees the request; a forged organisation that passes admission must
    // still be denied by the approver.
    let masters = CertificateSigningRequest {
        metadata: named("wrong-o-masters"),
        spec: CertificateSigningRequestSpec {
            request: ByteString(
                rcgen_like_request(
                    "gardener.cloud:system:seed:x",
                    &["gardener.cloud:system:seeds", "system:masters"],
                )
                .into_bytes(),
            ),
            signer_name: signer.to_owned(),
            usages: Some(usages.iter().map(|u| (*u).to_owned()).collect()),
            ..CertificateSigningRequestSpec::default()
        },
        status: None,
    };
    match Api::<CertificateSigningRequest>::all(admin.clone())
        .create(&PostParams::default(), &masters)
        .await
    {
        Err(kube::Error::Api(status)) => assert_eq!(status.code, 403, "{status:?}"),
        other => panic!("a system:masters CSR must be refused at admission: {other:?}"),
    }
    create_csr(
        admin.clone(),
        "wrong-o",
        "gardener.cloud:system:seed:x",
        &["gardener.cloud:system:seeds", "system:nodes"],
        &usages,
        signer,
    )
    .await;
    create_csr(
        admin.clone(),
        "server-auth",
        "gardener.cloud:system:seed:x",
        &seeds,
        &[
            "digital signature",
            "key encipherment",
            "client auth",
            "server auth",
        ],
        signer,
    )
    .await;
    create_csr(
        mallory,
        "no-permission",
        "gardener.cloud:system:seed:x",
        &seeds,
        &usages,
        signer,
    )
    .await;
    create_csr(
        admin.clone(),
        "other-signer",
        "gardener.cloud:system:seed:x",
        &seeds,
        &usages,
        "example.com/custom",
    )
    .await;
    create_csr(
        admin.clone(),
        "not-ours",
        "alice",
        &["developers"],
        &["client auth"],
        signer,
    )
    .await;

    eventually(Duration::from_secs(10), "denials", || async {
        let csrs = env
            .csrs()
            .list(&Default::default())
            .await
            .expect("listed")
            .items;
        csrs.iter()
            .filter(|c| decision(c).is_some_and(|(t, _)| t == "Denied"))
            .count()
            == 2
    })
    .await;
    // Give the approver time to (wrongly) act on the rest.
    tokio::time::sleep(Duration::from_secs(2)).await;
    let csrs = env
        .csrs()
        .list(&Default::default())
        .await
        .expect("listed")
        .items;
    let by_name = |name: &str| {
        csrs.iter()
            .find(|c| c.metadata.name.as_deref() == Some(name))
            .and_then(decision)
    };
    let denied = |name: &str, fragment: &str| {
        let (kind, message) = by_name(name).unwrap_or_default();
        assert_eq!(kind, "Denied", "{name}");
        assert!(message.contains(fragment), "{name}: {message}");
    };
    denied("wrong-o", "organization");
    denied("server-auth", "usages");
    assert_eq!(
        by_name("wrong-cn"),
        None,
        "the seeds group without the seed common name waits for manual approval"
    );
    assert_eq!(
        by_name("no-permission"),
        None,
        "stays pending without the seedclient permission"
    );
    assert_eq!(by_name("other-signer"), None, "other signers untouched");
    assert_eq!(by_name("not-ours"), None, "unrelated requests untouched");

    // Each decision is an Event on the CSR (cluster-scoped: namespace `default`), for `kubectl
    // describe csr`; untouched requests have none.
    let events = Api::<k8s_openapi::api::core::v1::Event>::namespaced(admin, "default")
        .list(&Default::default())
        .await
        .expect("events")
        .items;
    let reasons_of = |name: &str| {
        let mut reasons: Vec<(String, String)> = events
            .iter()
            .filter(|e| e.involved_object.name.as_deref() == Some(name))
            .map(|e| {
                (
                    e.type_.clone().unwrap_or_default(),
                    e.reason.clone().unwrap_or_default(),
                )
            })
            .collect();
        reasons.dedup();
        reasons
    };
    let denied_event = vec![("Warning".to_owned(), "RequestDenied".to_owned())];
    assert_eq!(reasons_of("wrong-o"), denied_event);
    assert_eq!(reasons_of("server-auth"), denied_event);
    assert_eq!(
        reasons_of("wrong-cn"),
        vec![("Normal".to_owned(), "ManualApprovalRequired".to_owned())]
    );
    assert!(reasons_of("other-signer").is_empty());
    assert!(reasons_of("not-ours").is_empty());
}

//! End-to-end tests of the garden identity: TLS bootstrap against a sandbox garden with the CSR approver,
//! rotation, the renew annotation, approval timeouts, forged requests and crash safety.

use std::collections::BTreeMap;
use std::ops::ControlFlow;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use k8s_openapi::ByteString;
use k8s_openapi::api::authorization::v1::{
    ResourceAttributes, SelfSubjectAccessReview, SelfSubjectAccessReviewSpec,
};
use k8s_openapi::api::certificates::v1::{
    CertificateSigningRequest, CertificateSigningRequestSpec,
};
use k8s_openapi::api::core::v1::{Namespace, Secret};
use k8s_openapi::api::rbac::v1::{
    ClusterRole, ClusterRoleBinding, PolicyRule, Role, RoleBinding, RoleRef, Subject as RbacSubject,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::Api;
use kube::api::{Patch, PatchParams, PostParams};
use seedlet_bootstrap::certificate::CertificateInfo;
use seedlet_bootstrap::kubeconfig::ParsedKubeconfig;
use seedlet_bootstrap::{
    BootstrapOptions, BootstrapSource, BootstrapStep, GardenIdentity, JitterRange, SecretRef,
};
use seedlet_garden::controllers::csr_approval::{self, Ctx};
use seedlet_sandbox::Sandbox;
use serde_json::json;

const NAMESPACE: &str = "garden";
const TOKEN_SECRET: &str = "0123456789abcdef";

struct Env {
    garden: Sandbox,
    seed: Sandbox,
}

impl Env {
    async fn start() -> Self {
        let garden = seedlet_testkit::start_sandbox("garden").await;
        let seed = seedlet_testkit::start_sandbox("seed").await;
        csr_approval::ensure_bootstrapper_rbac(&garden.client())
            .await
            .expect("bootstrapper rbac applied");
        let namespaces: Api<Namespace> = Api::all(seed.client());
        let namespace = Namespace {
            metadata: named(NAMESPACE),
            ..Namespace::default()
        };
        namespaces
            .create(&PostParams::default(), &namespace)
            .await
            .expect("seed namespace created");
        Self { garden, seed }
    }

    fn start_approver(&self) -> tokio::task::JoinHandle<()> {
        let ctx = Arc::new(Ctx {
            client: self.garden.client(),
            concurrent_syncs: 5,
            events: seedlet_runtime::events::Recorder::new(
                self.garden.client(),
                "csr-autoapprove-controller",
            ),
        });
        // The handle is aborted by the tests; the token is never cancelled.
        tokio::spawn(csr_approval::run(
            ctx,
            tokio_util::sync::CancellationToken::new(),
        ))
    }

    /// Creates bootstrap token `token_id` in the garden and the bootstrap Secret `name` in the seed.
    async fn bootstrap_secret(&self, token_id: &str, name: &str) {
        let token = Secret {
            metadata: ObjectMeta {
                name: Some(format!("bootstrap-token-{token_id}")),
                namespace: Some("kube-system".into()),
                ..ObjectMeta::default()
            },
            type_: Some("bootstrap.kubernetes.io/token".into()),
            string_data: Some(BTreeMap::from([
                ("token-id".to_owned(), token_id.to_owned()),
                ("token-secret".to_owned(), TOKEN_SECRET.to_owned()),
                (
                    "usage-bootstrap-authentication".to_owned(),
                    "true".to_owned(),
                ),
                ("usage-bootstrap-signing".to_owned(), "true".to_owned()),
            ])),
            ..Secret::default()
        };
        let tokens: Api<Secret> = Api::namespaced(self.garden.client(), "kube-system");
        tokens
            .create(&PostParams::default(), &token)
            .await
            .expect("bootstrap token created");
        let mut kubeconfig: serde_yaml::Value =
            serde_yaml::from_str(&self.garden.admin_kubeconfig_yaml())
                .expect("admin kubeconfig parses");
        kubeconfig["users"][0]["user"] =
            serde_yaml::to_value(json!({"token": format!("{token_id}.{TOKEN_SECRET}")}))
                .expect("token user");
        let text = serde_yaml::to_string(&kubeconfig).expect("kubeconfig serialises");
        let secret = Secret {
            metadata: ObjectMeta {
                name: Some(name.into()),
                namespace: Some(NAMESPACE.into()),
                ..ObjectMeta::default()
            },
            data: Some(BTreeMap::from([(
                "kubeconfig".to_owned(),
                ByteString(text.into_bytes()),
            )])),
            ..Secret::default()
        };
        self.secrets()
            .create(&PostParams::default(), &secret)
            .await
            .expect("bootstrap secret created");
    }

    fn secrets(&self) -> Api<Secret> {
        Api::namespaced(self.seed.client(), NAMESPACE)
    }

    fn csrs(&self) -> Api<CertificateSigningRequest> {
        Api::all(self.garden.client())
    }
}

fn named(name: &str) -> ObjectMeta {
    ObjectMeta {
        name: Some(name.to_owned()),
        ..ObjectMeta::default()
    }
}

fn options(seed: &str, kubeconfig_secret: &str, bootstrap_secret: &str) -> BootstrapOptions {
    let mut options = BootstrapOptions::new(seed);
    options.kubeconfig_secret = Some(SecretRef::new(NAMESPACE, kubeconfig_secret));
    options.bootstrap = Some(BootstrapSource::Secret(SecretRef::new(
        NAMESPACE,
        bootstrap_secret,
    )));
    options.validity = Some(Duration::from_secs(3600));
    options.retry_interval = Duration::from_millis(500);
    options
}

/// The certificate stored in the kubeconfig Secret.
async fn stored_certificate(env: &Env, name: &str) -> Option<(CertificateInfo, Secret)> {
    let secret = env
        .secrets()
        .get_opt(name)
        .await
        .expect("secret readable")?;
    let text = String::from_utf8(secret.data.as_ref()?.get("kubeconfig")?.0.clone())
        .expect("utf-8 kubeconfig");
    let parsed = ParsedKubeconfig::parse(&text, "test").expect("stored kubeconfig parses");
    let info = parsed
        .client_certificate("test")
        .expect("certificate parses")?;
    Some((info, secret))
}

/// Whether the garden authenticates `client` and lets it create seedclient CSRs.
async fn garden_accepts(client: kube::Client) -> bool {
    let api: Api<SelfSubjectAccessReview> = Api::all(client);
    let review = SelfSubjectAccessReview {
        spec: SelfSubjectAccessReviewSpec {
            resource_attributes: Some(ResourceAttributes {
                group: Some("certificates.k8s.io".into()),
                resource: Some("certificatesigningrequests".into()),
                subresource: Some("seedclient".into()),
                verb: Some("create".into()),
                ..ResourceAttributes::default()
            }),
            ..SelfSubjectAccessReviewSpec::default()
        },
        ..SelfSubjectAccessReview::default()
    };
    match api.create(&PostParams::default(), &review).await {
        Ok(answer) => answer.status.is_some_and(|s| s.allowed),
        Err(_) => false,
    }
}

async fn eventually<F, Fut>(timeout: Duration, what: &str, mut check: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let start = Instant::now();
    while !check().await {
        assert!(start.elapsed() < timeout, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fresh_bootstrap_stores_certificate_kubeconfig_and_removes_bootstrap_secret() {
    let env = Env::start().await;
    let _approver = env.start_approver();
    env.bootstrap_secret("aaa001", "bootstrap").await;

    let started = Instant::now();
    let identity = GardenIdentity::establish(
        env.seed.client(),
        options("seed-a", "kubeconfig", "bootstrap"),
    )
    .await
    .expect("bootstrap succeeds");
    let garden = identity.client();
    assert!(
        garden_accepts(garden.client()).await,
        "garden accepts the issued certificate"
    );
    let elapsed = started.elapsed();
    println!(
        "bootstrap time (start -> garden client ready): {} ms",
        elapsed.as_millis()
    );

    let (info, secret) = stored_certificate(&env, "kubeconfig")
        .await
        .expect("kubeconfig stored");
    assert_eq!(
        info.subject.common_name,
        "gardener.cloud:system:seed:seed-a"
    );
    assert_eq!(
        info.subject.organizations,
        vec!["gardener.cloud:system:seeds".to_owned()]
    );
    assert_eq!(
        secret
            .data
            .as_ref()
            .map(|d| d.keys().cloned().collect::<Vec<_>>()),
        Some(vec!["kubeconfig".to_owned()])
    );
    assert_eq!(garden.certificate_expiry(), Some(info.not_after));
    assert!(
        env.secrets()
            .get_opt("bootstrap")
            .await
            .expect("readable")
            .is_none(),
        "bootstrap secret deleted"
    );

    let csrs = env
        .csrs()
        .list(&Default::default())
        .await
        .expect("csrs listed");
    assert_eq!(csrs.items.len(), 1);
    let csr = &csrs.items[0];
    let name = csr.metadata.name.as_deref().unwrap_or_default();
    assert!(
        name.starts_with("seed-csr-") && name.len() == "seed-csr-".len() + 43,
        "{name}"
    );
    assert_eq!(
        csr.spec.username.as_deref(),
        Some("system:bootstrap:aaa001")
    );
    assert_eq!(csr.spec.expiration_seconds, Some(3600));
    let approved = csr
        .status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .and_then(|c| c.iter().find(|c| c.type_ == "Approved"));
    let approved = approved.expect("csr approved");
    assert_eq!(approved.reason.as_deref(), Some("AutoApproved"));
    assert_eq!(
        approved.message.as_deref(),
        Some("Auto approving gardenlet client certificate after SubjectAccessReview.")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stored_kubeconfig_is_used_without_csr_and_bootstrap_secret_is_left_alone() {
    let env = Env::start().await;
    let _approver = env.start_approver();
    env.bootstrap_secret("bbb001", "bootstrap").await;
    GardenIdentity::establish(
        env.seed.client(),
        options("seed-b", "kubeconfig", "bootstrap"),
    )
    .await
    .expect("first");
    env.bootstrap_secret("bbb002", "bootstrap").await;

    let identity = GardenIdentity::establish(
        env.seed.client(),
        options("seed-b", "kubeconfig", "bootstrap"),
    )
    .await
    .expect("second start uses the stored kubeconfig");
    assert!(garden_accepts(identity.client().client()).await);
    assert_eq!(
        env.csrs()
            .list(&Default::default())
            .await
            .expect("listed")
            .items
            .len(),
        1,
        "no second csr"
    );
    assert!(
        env.secrets()
            .get_opt("bootstrap")
            .await
            .expect("readable")
            .is_some(),
        "bootstrap secret left alone"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn renew_annotation_rotates_certificate_in_place_and_is_removed() {
    let env = Env::start().await;
    let _approver = env.start_approver();
    env.bootstrap_secret("ccc001", "bootstrap").await;
    let identity = GardenIdentity::establish(
        env.seed.client(),
        options("seed-c", "kubeconfig", "bootstrap"),
    )
    .await
    .expect("bootstrap succeeds");
    let garden = identity.client();
    let (before, _) = stored_certificate(&env, "kubeconfig")
        .await
        .expect("stored");
    let runner = tokio::spawn(identity.run());

    let patch =
        json!({"metadata": {"annotations": {"gardener.cloud/operation": "renew", "keep": "me"}}});
    env.secrets()
        .patch("kubeconfig", &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .expect("annotated");

    eventually(Duration::from_secs(20), "renewed certificate", || async {
        match stored_certificate(&env, "kubeconfig").await {
            Some((info, secret)) => {
                let annotations = secret.metadata.annotations.unwrap_or_default();
                info.serial != before.serial
                    && !annotations.contains_key("gardener.cloud/operation")
                    && annotations.get("keep").map(String::as_str) == Some("me")
            }
            None => false,
        }
    })
    .await;
    let (after, _) = stored_certificate(&env, "kubeconfig")
        .await
        .expect("stored");
    eventually(Duration::from_secs(5), "client swap", || async {
        garden.generation() >= 1
    })
    .await;
    assert_eq!(garden.certificate_expiry(), Some(after.not_after));
    assert!(
        garden_accepts(garden.client()).await,
        "garden accepts the rotated certificate"
    );
    let renewal_csr = env
        .csrs()
        .list(&Default::default())
        .await
        .expect("listed")
        .items
        .into_iter()
        .find(|csr| csr.spec.username.as_deref() == Some("gardener.cloud:system:seed:seed-c"));
    assert!(
        renewal_csr.is_some(),
        "renewal requested with the seed's own certificate"
    );
    runner.abort();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn certificate_rotates_at_jittered_deadline_without_restart() {
    let env = Env::start().await;
    let _approver = env.start_approver();
    env.bootstrap_secret("ddd001", "bootstrap").await;
    let mut options = options("seed-d", "kubeconfig", "bootstrap");
    // 600 s validity, backdated 300 s by the signer: D = 900 s, NotBefore = now - 300 s.
    // 34..35 % of 900 s = 306..315 s after NotBefore = 6..15 s from now.
    options.validity = Some(Duration::from_secs(600));
    options.jitter = JitterRange {
        min_percent: 34,
        max_percent: 35,
    };
    let identity = GardenIdentity::establish(env.seed.client(), options)
        .await
        .expect("bootstrap succeeds");
    let garden = identity.client();
    let (before, _) = stored_certificate(&env, "kubeconfig")
        .await
        .expect("stored");
    let runner = tokio::spawn(identity.run());

    eventually(Duration::from_secs(30), "rotation at deadline", || async {
        garden.generation() >= 1
    })
    .await;
    let (after, _) = stored_certificate(&env, "kubeconfig")
        .await
        .expect("stored");
    assert_ne!(after.serial, before.serial);
    assert!(
        garden_accepts(garden.client()).await,
        "garden calls keep working after rotation"
    );
    runner.abort();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pending_csr_is_replaced_after_approval_timeout_and_approver_finishes_it() {
    let env = Env::start().await;
    env.bootstrap_secret("eee001", "bootstrap").await;
    let created = Arc::new(AtomicUsize::new(0));
    let mut options = options("seed-e", "kubeconfig", "bootstrap");
    options.approval_timeout = Duration::from_secs(2);
    let counter = Arc::clone(&created);
    options.observer = Some(Arc::new(move |step: &BootstrapStep| {
        if matches!(step, BootstrapStep::CsrCreated { .. }) {
            counter.fetch_add(1, Ordering::SeqCst);
        }
        ControlFlow::Continue(())
    }));
    let establish = tokio::spawn(GardenIdentity::establish(env.seed.client(), options));
    eventually(Duration::from_secs(15), "a second csr", || async {
        created.load(Ordering::SeqCst) >= 2
    })
    .await;
    let csrs = env
        .csrs()
        .list(&Default::default())
        .await
        .expect("listed")
        .items;
    assert!(csrs.len() >= 2);
    assert!(csrs.iter().all(|c| {
        c.status
            .as_ref()
            .and_then(|s| s.conditions.as_ref())
            .is_none_or(Vec::is_empty)
    }));

    let _approver = env.start_approver();
    let identity = tokio::time::timeout(Duration::from_secs(15), establish)
        .await
        .expect("bootstrap finishes once the approver runs")
        .expect("task joins")
        .expect("bootstrap succeeds");
    assert!(garden_accepts(identity.client().client()).await);
}

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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bootstrap_interrupted_after_any_step_converges_on_restart() {
    let env = Env::start().await;
    let _approver = env.start_approver();
    let steps: [fn(&BootstrapStep) -> bool; 5] = [
        |s| matches!(s, BootstrapStep::KeyGenerated),
        |s| matches!(s, BootstrapStep::CsrCreated { .. }),
        |s| matches!(s, BootstrapStep::CertificateIssued { .. }),
        |s| matches!(s, BootstrapStep::KubeconfigStored),
        |s| matches!(s, BootstrapStep::BootstrapSecretDeleted),
    ];
    for (index, crash_after) in steps.into_iter().enumerate() {
        let token_id = format!("fff00{index}");
        let (kubeconfig, bootstrap) = (format!("kubeconfig-{index}"), format!("bootstrap-{index}"));
        env.bootstrap_secret(&token_id, &bootstrap).await;
        let seen = Arc::new(Mutex::new(Vec::new()));
        let mut crashing = options(&format!("seed-f{index}"), &kubeconfig, &bootstrap);
        let record = Arc::clone(&seen);
        crashing.observer = Some(Arc::new(move |step: &BootstrapStep| {
            record.lock().expect("lock").push(step.clone());
            if crash_after(step) {
                ControlFlow::Break(())
            } else {
                ControlFlow::Continue(())
            }
        }));
        let crashed = GardenIdentity::establish(env.seed.client(), crashing).await;
        assert!(crashed.is_err(), "step {index}: crash injected");

        let identity = GardenIdentity::establish(
            env.seed.client(),
            options(&format!("seed-f{index}"), &kubeconfig, &bootstrap),
        )
        .await
        .unwrap_or_else(|e| panic!("step {index}: restart converges: {e}"));
        assert!(
            garden_accepts(identity.client().client()).await,
            "step {index}: garden accepts"
        );
        let (info, _) = stored_certificate(&env, &kubeconfig)
            .await
            .expect("kubeconfig stored");
        assert_eq!(
            info.subject.common_name,
            format!("gardener.cloud:system:seed:seed-f{index}")
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn credential_rejected_by_garden_is_replaced_by_bootstrap() {
    let env = Env::start().await;
    let _approver = env.start_approver();
    env.bootstrap_secret("ggg001", "bootstrap").await;
    // A certificate the garden does not trust (issued by the seed's CA) but pointing at the garden.
    let mut foreign = env
        .seed
        .kubeconfig_for(
            "gardener.cloud:system:seed:seed-g",
            &["gardener.cloud:system:seeds"],
        )
        .expect("issued");
    let garden_cluster = env.garden.admin_kubeconfig().clusters[0].cluster.clone();
    foreign.clusters[0].cluster = garden_cluster;
    let text = serde_yaml::to_string(&foreign).expect("serialises");
    let secret = Secret {
        metadata: ObjectMeta {
            name: Some("kubeconfig".into()),
            namespace: Some(NAMESPACE.into()),
            ..ObjectMeta::default()
        },
        data: Some(BTreeMap::from([(
            "kubeconfig".to_owned(),
            ByteString(text.into_bytes()),
        )])),
        ..Secret::default()
    };
    env.secrets()
        .create(&PostParams::default(), &secret)
        .await
        .expect("foreign kubeconfig stored");

    let identity = GardenIdentity::establish(
        env.seed.client(),
        options("seed-g", "kubeconfig", "bootstrap"),
    )
    .await
    .expect("rejected credential replaced by bootstrap");
    assert!(garden_accepts(identity.client().client()).await);
    assert!(
        env.secrets()
            .get_opt("bootstrap")
            .await
            .expect("readable")
            .is_none(),
        "bootstrap used"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn seed_status_carries_client_certificate_expiration() {
    let env = Env::start().await;
    let _approver = env.start_approver();
    let crds: Api<k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition> =
        Api::all(env.garden.client());
    for crd in seedlet_api::crds::garden_crds() {
        crds.create(&PostParams::default(), &crd)
            .await
            .expect("crd created");
    }
    let seed_resource = kube::api::ApiResource {
        group: "core.gardener.cloud".into(),
        version: "v1beta1".into(),
        api_version: "core.gardener.cloud/v1beta1".into(),
        kind: "Seed".into(),
        plural: "seeds".into(),
    };
    let seeds: Api<kube::api::DynamicObject> = Api::all_with(env.garden.client(), &seed_resource);
    let seed: kube::api::DynamicObject = serde_json::from_value(json!({
        "apiVersion": "core.gardener.cloud/v1beta1", "kind": "Seed", "metadata": {"name": "seed-h"},
        "spec": {"provider": {"type": "local", "region": "local"}, "networks": {"pods": "10.1.0.0/16", "services": "10.2.0.0/16"}},
    }))
    .expect("seed object");
    eventually(Duration::from_secs(10), "seed crd served", || async {
        seeds.create(&PostParams::default(), &seed).await.is_ok()
    })
    .await;
    // What Gardener's seed authorizer grants a seed on its own Seed.
    let roles: Api<ClusterRole> = Api::all(env.garden.client());
    let role = ClusterRole {
        metadata: named("seed-status"),
        rules: Some(vec![PolicyRule {
            api_groups: Some(vec!["core.gardener.cloud".into()]),
            resources: Some(vec!["seeds/status".into()]),
            verbs: vec!["patch".into()],
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
        metadata: named("seed-status"),
        role_ref: RoleRef {
            api_group: "rbac.authorization.k8s.io".into(),
            kind: "ClusterRole".into(),
            name: "seed-status".into(),
        },
        subjects: Some(vec![RbacSubject {
            api_group: Some("rbac.authorization.k8s.io".into()),
            kind: "Group".into(),
            name: "gardener.cloud:system:seeds".into(),
            ..RbacSubject::default()
        }]),
    };
    bindings
        .create(&PostParams::default(), &binding)
        .await
        .expect("binding created");
    env.bootstrap_secret("hhh001", "bootstrap").await;
    let identity = GardenIdentity::establish(
        env.seed.client(),
        options("seed-h", "kubeconfig", "bootstrap"),
    )
    .await
    .expect("bootstrap succeeds");
    let expiry = identity
        .client()
        .certificate_expiry()
        .expect("certificate expiry known");
    let runner = tokio::spawn(identity.run());
    let expected = expiry.strftime("%Y-%m-%dT%H:%M:%SZ").to_string();
    eventually(
        Duration::from_secs(10),
        "seed status expiration",
        || async {
            let seed = seeds.get("seed-h").await.expect("seed readable");
            seed.data
                .pointer("/status/clientCertificateExpirationTimestamp")
                .and_then(|v| v.as_str())
                == Some(expected.as_str())
        },
    )
    .await;
    runner.abort();
}

/// The garden token Secret is deleted once the garden lets the seed delete it: the first attempt
/// is refused (the seed holds only the bootstrapper role), the retries go on in the background.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bootstrap_token_cleanup_is_retried_until_the_token_is_gone() {
    let env = Env::start().await;
    let _approver = env.start_approver();
    env.bootstrap_secret("ccc003", "bootstrap").await;
    let _identity = GardenIdentity::establish(
        env.seed.client(),
        options("seed-c", "kubeconfig", "bootstrap"),
    )
    .await
    .expect("bootstrap succeeds");
    let tokens: Api<Secret> = Api::namespaced(env.garden.client(), "kube-system");
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(
        tokens
            .get_opt("bootstrap-token-ccc003")
            .await
            .expect("readable")
            .is_some(),
        "the seed may not delete the token yet"
    );
    // The operator grants the deletion (as the seed authorizer does for Gardener-named tokens).
    let roles: Api<Role> = Api::namespaced(env.garden.client(), "kube-system");
    roles
        .create(
            &PostParams::default(),
            &serde_json::from_value(json!({"metadata": {"name": "delete-tokens"},
                "rules": [{"apiGroups": [""], "resources": ["secrets"], "verbs": ["delete"]}]}))
            .expect("role"),
        )
        .await
        .expect("role created");
    let bindings: Api<RoleBinding> = Api::namespaced(env.garden.client(), "kube-system");
    bindings
        .create(
            &PostParams::default(),
            &serde_json::from_value(json!({"metadata": {"name": "delete-tokens"},
                "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "delete-tokens"},
                "subjects": [{"kind": "User", "name": "gardener.cloud:system:seed:seed-c"}]}))
            .expect("binding"),
        )
        .await
        .expect("binding created");
    eventually(Duration::from_secs(15), "token deleted", || async {
        tokens
            .get_opt("bootstrap-token-ccc003")
            .await
            .expect("readable")
            .is_none()
    })
    .await;
}

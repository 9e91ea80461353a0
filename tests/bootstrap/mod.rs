//! End-to-end tests of the garden identity: TLS bootstrap against a sandbox garden with the CSR approver,
//! rotation, the renew annotation, approval timeouts, forged requests and crash safety.

mod approval;
mod recovery;

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
use seedlet_garden::controllers::csr_approval::{self, CsrApproval};
use seedlet_garden::controllers::entry::run_alone;
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
        let ctx = Arc::new(CsrApproval {
            client: self.garden.client(),
            concurrency: 5,
            events: seedlet_runtime::events::Recorder::new(
                self.garden.client(),
                "csr-autoapprove-controller",
            ),
        });
        // The handle is aborted by the tests; the token is never cancelled.
        tokio::spawn(run_alone(
            ctx,
            self.garden.client(),
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

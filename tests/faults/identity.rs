//! Garden identity for the fault suite: the bootstrap token and bootstrap kubeconfig an operator
//! hands a new seed, the seeds' RBAC a garden control plane installs, an agent configuration that
//! bootstraps, and probes of the stored certificate, the renew annotation and the CSRs.

use std::collections::BTreeMap;
use std::path::Path;

use k8s_openapi::ByteString;
use k8s_openapi::api::certificates::v1::CertificateSigningRequest;
use k8s_openapi::api::core::v1::Secret;
use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding};
use kube::Api;
use kube::api::{Patch, PatchParams, PostParams};
use seedlet_api::core::Seed;
use seedlet_bootstrap::certificate::CertificateInfo;
use seedlet_bootstrap::kubeconfig::ParsedKubeconfig;
use serde_json::json;

use super::common::{SEED, wait_for};
use super::env::{CONVERGE, Env, secret_data};

/// Seed Secret holding the bootstrap kubeconfig.
pub const BOOTSTRAP_SECRET: &str = "gardenlet-kubeconfig-bootstrap";
/// Seed Secret the agent stores its certificate kubeconfig in.
pub const KUBECONFIG_SECRET: &str = "gardenlet-kubeconfig";
const TOKEN_ID: &str = "fault1";
const TOKEN_SECRET: &str = "0123456789abcdef";

/// An agent configuration that bootstraps with the bootstrap Secret and stores its certificate in
/// [`KUBECONFIG_SECRET`]; short timers as in [`super::env::short_timer_config`]. With `seed_kubeconfig`
/// (for the `seedlet agent` process) the seed is reached through that file and the servers bind
/// ephemeral loopback ports.
pub fn bootstrap_agent_config(seed_kubeconfig: Option<&Path>) -> String {
    let seed_connection = seed_kubeconfig.map_or_else(String::new, |path| {
        format!("seedClientConnection:\n  kubeconfig: {}\n", path.display())
    });
    format!(
        r#"apiVersion: gardenlet.config.gardener.cloud/v1alpha1
kind: GardenletConfiguration
gardenClientConnection:
  bootstrapKubeconfig:
    name: {BOOTSTRAP_SECRET}
    namespace: garden
  kubeconfigSecret:
    name: {KUBECONFIG_SECRET}
    namespace: garden
  kubeconfigValidity:
    validity: 1h
{seed_connection}controllers:
  controllerInstallationCare:
    syncPeriod: 1s
  managedResource:
    syncPeriod: 2s
  seed:
    leaseResyncSeconds: 1
    leaseResyncMissThreshold: 5
leaderElection:
  leaderElect: false
logFormat: text
server:
  healthProbes:
    bindAddress: 127.0.0.1
    freePort: true
  metrics:
    bindAddress: 127.0.0.1
    freePort: true
seedConfig:
  metadata:
    name: {SEED}
    labels:
      env: test
  spec:
    provider:
      type: local
      region: local
      zones: [a, b]
    networks:
      pods: 10.1.0.0/16
      services: 10.2.0.0/16
"#
    )
}

/// The Seed (with cluster identity), the seeds' RBAC, a bootstrap token in the garden and the
/// bootstrap kubeconfig Secret in the seed.
pub async fn prepare_bootstrap(env: &Env) {
    env.create_seed().await;
    let garden = env.garden.client();
    let role: ClusterRole = serde_json::from_value(json!({
        "metadata": {"name": "gardener.cloud:system:seeds"},
        "rules": [{"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]}],
    }))
    .expect("role");
    Api::<ClusterRole>::all(garden.clone())
        .create(&PostParams::default(), &role)
        .await
        .expect("seeds role");
    let binding: ClusterRoleBinding = serde_json::from_value(json!({
        "metadata": {"name": "gardener.cloud:system:seeds"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "gardener.cloud:system:seeds"},
        "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": "gardener.cloud:system:seeds"}],
    }))
    .expect("binding");
    Api::<ClusterRoleBinding>::all(garden.clone())
        .create(&PostParams::default(), &binding)
        .await
        .expect("seeds binding");
    let token: Secret = serde_json::from_value(json!({
        "metadata": {"name": format!("bootstrap-token-{TOKEN_ID}"), "namespace": "kube-system"},
        "type": "bootstrap.kubernetes.io/token",
        "stringData": {
            "token-id": TOKEN_ID, "token-secret": TOKEN_SECRET,
            "usage-bootstrap-authentication": "true", "usage-bootstrap-signing": "true",
        },
    }))
    .expect("token");
    Api::<Secret>::namespaced(garden, "kube-system")
        .create(&PostParams::default(), &token)
        .await
        .expect("bootstrap token");
    // The admin kubeconfig (server and CA) with the bootstrap token as its user.
    let mut kubeconfig: serde_yaml::Value =
        serde_yaml::from_str(&env.garden.sandbox().admin_kubeconfig_yaml()).expect("kubeconfig");
    kubeconfig["users"][0]["user"] =
        serde_yaml::to_value(json!({"token": format!("{TOKEN_ID}.{TOKEN_SECRET}")})).expect("user");
    let kubeconfig = serde_yaml::to_string(&kubeconfig).expect("kubeconfig serialises");
    let secret = Secret {
        metadata: kube::api::ObjectMeta {
            name: Some(BOOTSTRAP_SECRET.into()),
            namespace: Some("garden".into()),
            ..Default::default()
        },
        data: Some(BTreeMap::from([(
            "kubeconfig".to_owned(),
            ByteString(kubeconfig.into_bytes()),
        )])),
        ..Secret::default()
    };
    Api::<Secret>::namespaced(env.seed.client(), "garden")
        .create(&PostParams::default(), &secret)
        .await
        .expect("bootstrap secret");
}

/// The stored certificate kubeconfig's text.
pub async fn stored_kubeconfig(seed: &kube::Client) -> Option<String> {
    let data = secret_data(seed, "garden", KUBECONFIG_SECRET).await?;
    String::from_utf8(data.get("kubeconfig")?.0.clone()).ok()
}

/// The certificate in the stored kubeconfig.
pub async fn stored_certificate(seed: &kube::Client) -> Option<CertificateInfo> {
    let text = stored_kubeconfig(seed).await?;
    ParsedKubeconfig::parse(&text, "stored")
        .ok()?
        .client_certificate("stored")
        .ok()?
}

/// Waits until a certificate kubeconfig is stored and the bootstrap Secret is gone.
pub async fn wait_bootstrapped(env: &Env) -> CertificateInfo {
    let seed = env.seed.client();
    wait_for("bootstrapped", CONVERGE, || async {
        let gone = secret_data(&seed, "garden", BOOTSTRAP_SECRET)
            .await
            .is_none();
        if !gone {
            return None;
        }
        stored_certificate(&seed).await
    })
    .await
}

/// Annotates the kubeconfig Secret with `gardener.cloud/operation=renew`.
pub async fn request_renewal(seed: &kube::Client) {
    let patch = json!({"metadata": {"annotations": {"gardener.cloud/operation": "renew"}}});
    Api::<Secret>::namespaced(seed.clone(), "garden")
        .patch(
            KUBECONFIG_SECRET,
            &PatchParams::default(),
            &Patch::Merge(&patch),
        )
        .await
        .expect("renew annotation set");
}

/// Whether the kubeconfig Secret still carries the renew annotation.
pub async fn renew_pending(seed: &kube::Client) -> bool {
    let Ok(Some(secret)) = Api::<Secret>::namespaced(seed.clone(), "garden")
        .get_opt(KUBECONFIG_SECRET)
        .await
    else {
        return true;
    };
    secret
        .metadata
        .annotations
        .is_some_and(|a| a.get("gardener.cloud/operation").map(String::as_str) == Some("renew"))
}

/// CertificateSigningRequests in the garden.
pub async fn csr_count(garden: &kube::Client) -> usize {
    Api::<CertificateSigningRequest>::all(garden.clone())
        .list(&Default::default())
        .await
        .expect("csrs listed")
        .items
        .len()
}

/// Whether the garden serves our Seed to a client built from the stored kubeconfig.
pub async fn garden_accepts_stored(env: &Env) -> bool {
    let Some(text) = stored_kubeconfig(&env.seed.client()).await else {
        return false;
    };
    let Ok(kubeconfig) = kube::config::Kubeconfig::from_yaml(&text) else {
        return false;
    };
    let Ok(config) = kube::Config::from_custom_kubeconfig(kubeconfig, &Default::default()).await
    else {
        return false;
    };
    let Ok(client) = kube::Client::try_from(config) else {
        return false;
    };
    Api::<Seed>::all(client).get(SEED).await.is_ok()
}

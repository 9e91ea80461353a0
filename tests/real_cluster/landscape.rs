//! A garden and seeds on real Kubernetes v1.32 control planes, wired as "Running on a real
//! landscape" in the README says: the garden's kube-apiserver asks `seedlet garden`'s seed
//! authorizer after RBAC (structured `--authorization-config` or the legacy flags), SeedRestriction
//! is registered from the garden chart's ValidatingWebhookConfiguration, and each daemon runs as a
//! process with a token of its chart's ServiceAccount and exactly the RBAC its chart renders.
//!
//! The control planes run no pods, so the charts' Deployments, Services and PodDisruptionBudgets
//! are not applied: the daemons run as the pods would (same configuration, same identity), on a
//! plain host, and the SeedRestriction registration names the webhook by URL instead of Service.

use std::path::Path;
use std::time::Duration;

use base64::Engine as _;
use seedlet_testkit::realkube::{
    Authorization, ControlPlane, ControlPlaneOptions, KubeAssets, client_from, free_port,
};
use serde_json::{Value, json};

use super::daemons::Daemon;
use crate::charts::{apply_all, render};

/// The garden namespace of both charts.
pub const NAMESPACE: &str = "garden";
/// The seeds the garden chart installs bootstrap tokens for.
pub const SEEDS: [&str; 2] = ["seed-a", "seed-b"];
/// The secret half of every bootstrap token.
const TOKEN_SECRET: &str = "f395accd246ae52d";
/// The agent chart's bootstrap kubeconfig Secret in the seed (deleted once bootstrapped).
pub const BOOTSTRAP_SECRET: &str = "gardenlet-kubeconfig-bootstrap";
/// The agent chart's certificate kubeconfig Secret in the seed.
pub const KUBECONFIG_SECRET: &str = "gardenlet-kubeconfig";

/// The id of seed `seed`'s bootstrap token as Gardener names it (`sha256("garden--<seed>")[:6]`),
/// the one token the seed authorizer lets the seed delete.
pub fn token_id(seed: &str) -> String {
    use sha2::Digest as _;
    hex::encode(sha2::Sha256::digest(format!("garden--{seed}")))[..6].to_owned()
}

/// Kinds a control plane without nodes has no use for: the daemons run as processes instead.
const WORKLOAD_KINDS: [&str; 4] = [
    "Deployment",
    "Service",
    "PodDisruptionBudget",
    "PriorityClass",
];

/// How the garden's kube-apiserver calls the seed authorizer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AuthorizerWiring {
    /// `--authorization-config` with RBAC, then the Webhook authorizer.
    Structured,
    /// `--authorization-mode=RBAC,Webhook --authorization-webhook-config-file=…`.
    LegacyFlags,
}

/// The garden: its control plane and `seedlet garden`.
pub struct Garden {
    /// The control plane.
    pub plane: ControlPlane,
    /// The admin client.
    pub admin: kube::Client,
    /// `seedlet garden`.
    pub controller: Daemon,
    /// Files: configurations, kubeconfigs, logs, webhook certificate.
    _files: tempfile::TempDir,
}

impl Garden {
    /// Starts the garden's control plane wired to the authorizer, applies the CRDs and the garden
    /// chart, and starts `seedlet garden` with its chart's configuration and identity.
    pub async fn start(assets: &KubeAssets, wiring: AuthorizerWiring) -> Garden {
        let files = tempfile::tempdir().expect("garden files");
        // The webhook port must be in the API server's configuration before the controller
        // (which needs the API server) can listen on it.
        let webhook_port = free_port();
        let ca_dir = files.path().join("ca");
        let authorization = authorizer_files(files.path(), webhook_port, &ca_dir, wiring);
        let mut options = ControlPlaneOptions::new("garden");
        options.authorization = authorization;
        // The authorizer's kubeconfig names the CA file before the control plane starts.
        options.ca_dir = Some(ca_dir);
        let plane = ControlPlane::start(assets, options).await;
        let admin = plane.admin_client().await;
        seedlet_testkit::install_crds(&admin, seedlet_api::crds::garden_crds()).await;
        for namespace in [NAMESPACE, "gardener-system-seed-lease"] {
            seedlet_testkit::ensure_namespace(&admin, namespace).await;
        }

        let tls = files.path().join("webhook-tls");
        std::fs::create_dir_all(&tls).expect("tls dir");
        let (chain, key) =
            plane.issue_serving_certificate("seedlet-garden-webhooks", &["127.0.0.1"]);
        std::fs::write(tls.join("tls.crt"), chain).expect("tls.crt");
        seedlet_testkit::realkube::write_private(&tls.join("tls.key"), &key);

        let tokens: Vec<Value> = SEEDS
            .iter()
            .map(|seed| json!({"id": token_id(seed), "secret": TOKEN_SECRET,
                "expiration": "2099-01-01T00:00:00Z", "description": format!("bootstrap of seed {seed}")}))
            .collect();
        let values = json!({
            "bootstrapTokens": tokens,
            "webhooks": {"tlsSecretName": "seedlet-garden-webhooks-tls",
                "caBundle": base64::engine::general_purpose::STANDARD.encode(plane.ca_pem())},
            "config": {"logLevel": "info", "logFormat": "json"},
        });
        let objects = render("seedlet-garden", &values).expect("garden chart renders");
        let objects = for_a_plain_host(objects, webhook_port);
        apply_all(&admin, &objects).await;

        let mut config = config_of(&objects, "seedlet-garden-config");
        free_servers(&mut config);
        config["webhooks"]["server"] = json!({"bindAddress": "127.0.0.1", "port": webhook_port});
        config["webhooks"]["tls"]["serverCertDir"] = json!(tls.display().to_string());
        let kubeconfig = plane
            .service_account_kubeconfig(NAMESPACE, "seedlet-garden")
            .await;
        let mut controller =
            Daemon::prepare("garden", files.path(), "garden", &config, &kubeconfig);
        controller.start();
        Garden {
            plane,
            admin,
            controller,
            _files: files,
        }
    }

    /// A kubeconfig for the garden whose user presents seed `seed`'s bootstrap token.
    pub fn bootstrap_kubeconfig(&self, seed: &str) -> String {
        let kubeconfig = self
            .plane
            .token_kubeconfig("bootstrap", &format!("{}.{TOKEN_SECRET}", token_id(seed)));
        serde_yaml::to_string(&kubeconfig).expect("kubeconfig yaml")
    }
}

/// One seed: its control plane and `seedlet agent`.
pub struct SeedCluster {
    /// The Seed's name.
    pub name: String,
    /// Held so that the seed's control plane lives as long as the seed.
    _plane: ControlPlane,
    /// The admin client.
    pub admin: kube::Client,
    /// `seedlet agent`.
    pub agent: Daemon,
    _files: tempfile::TempDir,
}

impl SeedCluster {
    /// Starts a seed control plane, applies the seed CRDs and the agent chart with `seed_spec`
    /// and a bootstrap kubeconfig for `garden`, and starts `seedlet agent` as the chart's
    /// ServiceAccount.
    pub async fn start(
        assets: &KubeAssets,
        garden: &Garden,
        name: &str,
        seed_spec: Value,
    ) -> SeedCluster {
        let files = tempfile::tempdir().expect("seed files");
        let plane = ControlPlane::start(assets, ControlPlaneOptions::new(name)).await;
        let admin = plane.admin_client().await;
        seedlet_testkit::install_crds(&admin, seedlet_api::crds::seed_crds()).await;
        seedlet_testkit::ensure_namespace(&admin, NAMESPACE).await;
        let values = json!({
            "bootstrap": {"kubeconfig": garden.bootstrap_kubeconfig(name), "secretName": BOOTSTRAP_SECRET},
            "gardenKubeconfigSecret": KUBECONFIG_SECRET,
            "config": {
                "logLevel": "info", "logFormat": "json",
                "seedConfig": {"metadata": {"name": name}, "spec": seed_spec},
            },
        });
        let objects = render("seedlet-agent", &values).expect("agent chart renders");
        let objects = for_a_plain_host(objects, 0);
        apply_all(&admin, &objects).await;
        let mut config = config_of(&objects, "seedlet-agent-config");
        free_servers(&mut config);
        let kubeconfig = plane
            .service_account_kubeconfig(NAMESPACE, "seedlet-agent")
            .await;
        let mut agent = Daemon::prepare("agent", files.path(), name, &config, &kubeconfig);
        agent.start();
        SeedCluster {
            name: name.to_owned(),
            _plane: plane,
            admin,
            agent,
            _files: files,
        }
    }
}

/// Writes the authorizer's webhook kubeconfig (and, structured, the AuthorizationConfiguration)
/// into `dir`; the kubeconfig trusts `ca_dir/ca.crt`, the garden CA the control plane makes there.
fn authorizer_files(
    dir: &Path,
    port: u16,
    ca_dir: &Path,
    wiring: AuthorizerWiring,
) -> Authorization {
    std::fs::create_dir_all(ca_dir).expect("ca dir");
    let kubeconfig = json!({
        "apiVersion": "v1", "kind": "Config",
        "clusters": [{"name": "seed-authorizer", "cluster": {
            "server": format!("https://127.0.0.1:{port}/webhooks/auth/seed"),
            "certificate-authority": ca_dir.join("ca.crt").display().to_string(),
        }}],
        "users": [{"name": "kube-apiserver", "user": {}}],
        "contexts": [{"name": "seed-authorizer", "context": {"cluster": "seed-authorizer", "user": "kube-apiserver"}}],
        "current-context": "seed-authorizer",
    });
    let kubeconfig_path = dir.join("seed-authorizer.kubeconfig");
    std::fs::write(&kubeconfig_path, kubeconfig.to_string()).expect("authorizer kubeconfig");
    match wiring {
        AuthorizerWiring::LegacyFlags => Authorization::LegacyWebhook(kubeconfig_path),
        AuthorizerWiring::Structured => {
            // As gardener-operator configures it: RBAC first, then the authorizer for seed
            // identities only, uncached, denying when it cannot be asked.
            let config = json!({
                "apiVersion": "apiserver.config.k8s.io/v1",
                "kind": "AuthorizationConfiguration",
                "authorizers": [
                    {"type": "RBAC", "name": "rbac"},
                    {"type": "Webhook", "name": "seed-authorizer", "webhook": {
                        "timeout": "10s",
                        "authorizedTTL": "1ns",
                        "unauthorizedTTL": "1ns",
                        "subjectAccessReviewVersion": "v1",
                        "matchConditionSubjectAccessReviewVersion": "v1",
                        "failurePolicy": "Deny",
                        "connectionInfo": {"type": "KubeConfigFile",
                            "kubeConfigFile": kubeconfig_path.display().to_string()},
                        "matchConditions": [{"expression":
                            "'gardener.cloud:system:seeds' in request.groups || request.groups.exists(g, g.startsWith('system:serviceaccounts:seed-'))"}],
                    }},
                ],
            });
            let path = dir.join("authorization-config.yaml");
            std::fs::write(&path, config.to_string()).expect("authorization config");
            Authorization::Structured(path)
        }
    }
}

/// The chart's objects without workloads, with SeedRestriction called by URL on `port`.
fn for_a_plain_host(objects: Vec<Value>, port: u16) -> Vec<Value> {
    objects
        .into_iter()
        .filter(|object| !WORKLOAD_KINDS.contains(&object["kind"].as_str().unwrap_or_default()))
        .map(|mut object| {
            if object["kind"] == "ValidatingWebhookConfiguration" {
                for webhook in object["webhooks"].as_array_mut().into_iter().flatten() {
                    let path = webhook["clientConfig"]["service"]["path"].clone();
                    let path = path.as_str().expect("the chart names a path");
                    webhook["clientConfig"]["url"] =
                        json!(format!("https://127.0.0.1:{port}{path}"));
                    if let Some(config) = webhook["clientConfig"].as_object_mut() {
                        config.remove("service");
                    }
                }
            }
            object
        })
        .collect()
}

/// The daemon configuration the chart's ConfigMap `name` holds.
fn config_of(objects: &[Value], name: &str) -> Value {
    let text = objects
        .iter()
        .find(|o| o["kind"] == "ConfigMap" && o["metadata"]["name"] == name)
        .and_then(|o| o["data"]["config.yaml"].as_str())
        .unwrap_or_else(|| panic!("ConfigMap {name} rendered"));
    serde_yaml::from_str(text).expect("config yaml")
}

/// Health and metrics servers on free loopback ports (the chart's fixed ports are for pods).
fn free_servers(config: &mut Value) {
    for server in ["healthProbes", "metrics"] {
        config["server"][server] = json!({"bindAddress": "127.0.0.1", "port": 0, "freePort": true});
    }
}

/// A kube client from a kubeconfig document in YAML.
pub async fn client_from_yaml(yaml: &str) -> kube::Client {
    client_from(serde_yaml::from_str(yaml).expect("kubeconfig")).await
}

/// How long the suite waits for the landscape to converge after a step.
pub const CONVERGE: Duration = Duration::from_secs(60);

//! The real-cluster suite's steps and probes: what each scenario creates, waits for and asserts,
//! each returning how long it took where the README reports the number.

use std::future::Future;
use std::time::{Duration, Instant};

use base64::Engine as _;
use k8s_openapi::api::certificates::v1::CertificateSigningRequest;
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::Secret;
use kube::Api;
use kube::api::{ApiResource, DynamicObject, GroupVersionKind, ListParams, Patch, PatchParams};
use seedlet_api::core::{ControllerInstallation, Seed};
use serde_json::{Value, json};

use super::daemons::{Daemon, repeated};
use super::landscape::{
    BOOTSTRAP_SECRET, CONVERGE, Garden, KUBECONFIG_SECRET, NAMESPACE, SeedCluster,
    client_from_yaml, token_id,
};

/// The extension chart the installation step registers (a ConfigMap with the greeting, a
/// Deployment with `replicaCount` replicas and an extra ConfigMap).
const CHART: &[u8] = include_bytes!("../fixtures/charts/ext-small-v1.tgz");

pub use seedlet_testkit::create_object as create;

/// Waits up to `timeout` for `check`; on timeout fails with the end of the daemons' logs.
pub async fn wait<F, Fut>(
    what: &str,
    timeout: Duration,
    daemons: &[&Daemon],
    mut check: F,
) -> Duration
where
    F: FnMut() -> Fut,
    Fut: Future<Output = bool>,
{
    wait_state(what, timeout, daemons, || {
        let done = check();
        async move {
            if done.await {
                Ok(())
            } else {
                Err(String::new())
            }
        }
    })
    .await
}

/// [`wait`] for a check that says what it saw when it is not satisfied yet; the last such
/// state is in the failure message.
pub async fn wait_state<F, Fut>(
    what: &str,
    timeout: Duration,
    daemons: &[&Daemon],
    mut check: F,
) -> Duration
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<(), String>>,
{
    let started = Instant::now();
    loop {
        let state = match check().await {
            Ok(()) => return started.elapsed(),
            Err(state) => state,
        };
        if started.elapsed() > timeout {
            let logs: Vec<String> = daemons
                .iter()
                .map(|d| {
                    format!(
                        "--- {} log ({}) ---\n{}",
                        d.role,
                        d.log.display(),
                        d.log_tail(40)
                    )
                })
                .collect();
            panic!(
                "timed out after {timeout:?} waiting for {what}; last seen: {state}\n{}",
                logs.join("\n")
            );
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Whether Seed `seed` has `GardenletReady=True`.
pub async fn gardenlet_ready(garden: &kube::Client, seed: &str) -> bool {
    let Ok(Some(seed)) = Api::<Seed>::all(garden.clone()).get_opt(seed).await else {
        return false;
    };
    seedlet_api::conditions::find(seed.conditions(), "GardenletReady")
        .is_some_and(|c| c.status.to_string() == "True")
}

/// Whether seed `seed`'s Lease was renewed after `since`.
pub async fn renewed_after(garden: &kube::Client, seed: &str, since: jiff::Timestamp) -> bool {
    Api::<Lease>::namespaced(garden.clone(), "gardener-system-seed-lease")
        .get_opt(seed)
        .await
        .ok()
        .flatten()
        .and_then(|lease| lease.spec?.renew_time)
        .is_some_and(|time| time.0 > since)
}

/// The number of CSRs in the garden.
pub async fn csr_count(garden: &kube::Client) -> usize {
    Api::<CertificateSigningRequest>::all(garden.clone())
        .list(&ListParams::default())
        .await
        .expect("CSRs listed")
        .items
        .len()
}

/// The certificate kubeconfig the agent stored in its seed (YAML), if any.
pub async fn stored_kubeconfig(seed: &kube::Client) -> Option<String> {
    let secret = Api::<Secret>::namespaced(seed.clone(), NAMESPACE)
        .get_opt(KUBECONFIG_SECRET)
        .await
        .ok()??;
    let bytes = secret.data?.get("kubeconfig")?.0.clone();
    String::from_utf8(bytes).ok()
}

/// The client certificate in the stored kubeconfig (base64 PEM as stored).
pub async fn stored_certificate(seed: &kube::Client) -> Option<String> {
    let yaml = stored_kubeconfig(seed).await?;
    let kubeconfig: kube::config::Kubeconfig = serde_yaml::from_str(&yaml).ok()?;
    kubeconfig
        .auth_infos
        .first()?
        .auth_info
        .as_ref()?
        .client_certificate_data
        .clone()
}

/// After bootstrap: the certificate kubeconfig is stored, the seed's bootstrap Secret and the
/// garden's bootstrap token are deleted.
pub async fn bootstrap_consumed(garden: &kube::Client, seed: &SeedCluster) {
    let secrets: Api<Secret> = Api::namespaced(seed.admin.clone(), NAMESPACE);
    let tokens: Api<Secret> = Api::namespaced(garden.clone(), "kube-system");
    let token = format!("bootstrap-token-{}", token_id(&seed.name));
    wait(
        "bootstrap credentials consumed",
        CONVERGE,
        &[&seed.agent],
        || async {
            stored_certificate(&seed.admin).await.is_some()
                && secrets
                    .get_opt(BOOTSTRAP_SECRET)
                    .await
                    .ok()
                    .flatten()
                    .is_none()
                && tokens.get_opt(&token).await.ok().flatten().is_none()
        },
    )
    .await;
}

/// Whether `result` is a 403.
pub fn forbidden<T: std::fmt::Debug>(result: Result<T, kube::Error>) -> bool {
    matches!(result, Err(kube::Error::Api(status)) if status.code == 403)
}

/// Each seed's certificate reaches its own Lease, backup Secret and installations, and gets 403
/// for the other seed's.
pub async fn seeds_reach_only_their_own(garden: &Garden, a: &SeedCluster, b: &SeedCluster) {
    for (own, other) in [(a, b), (b, a)] {
        let yaml = stored_kubeconfig(&own.admin)
            .await
            .expect("stored kubeconfig");
        let client = client_from_yaml(&yaml).await;
        let leases: Api<Lease> = Api::namespaced(client.clone(), "gardener-system-seed-lease");
        leases.get(&own.name).await.expect("own Lease readable");
        assert!(
            forbidden(leases.get(&other.name).await),
            "{}: other Lease",
            own.name
        );
        let secrets: Api<Secret> = Api::namespaced(client.clone(), NAMESPACE);
        secrets
            .get(&format!("backup-{}", own.name))
            .await
            .unwrap_or_else(|e| panic!("{}: own backup Secret readable: {e}", own.name));
        assert!(
            forbidden(secrets.get(&format!("backup-{}", other.name)).await),
            "{}: other backup Secret",
            own.name
        );
        let other_namespace: Api<Secret> =
            Api::namespaced(client.clone(), &format!("seed-{}", other.name));
        assert!(
            forbidden(other_namespace.list(&ListParams::default()).await),
            "{}: Secrets of seed-{}",
            own.name,
            other.name
        );
        let installations: Api<ControllerInstallation> = Api::all(client.clone());
        installations
            .list(&ListParams::default().fields(&format!("spec.seedRef.name={}", own.name)))
            .await
            .expect("own installations listable");
        assert!(
            forbidden(
                installations
                    .list(
                        &ListParams::default().fields(&format!("spec.seedRef.name={}", other.name))
                    )
                    .await
            ),
            "{}: other installations",
            own.name
        );
    }
    let _ = &garden.admin;
}

pub fn dynamic(group: &str, version: &str, kind: &str, plural: &str) -> ApiResource {
    ApiResource::from_gvk_with_plural(&GroupVersionKind::gvk(group, version, kind), plural)
}

/// The garden BackupBucket of `seed` appears and the agent writes the extension BackupBucket
/// into the seed with the credentials copied next to it.
pub async fn backup_bucket_reaches_the_seed(garden: &kube::Client, seed: &SeedCluster) {
    let garden_buckets: Api<DynamicObject> = Api::all_with(
        garden.clone(),
        &dynamic(
            "core.gardener.cloud",
            "v1beta1",
            "BackupBucket",
            "backupbuckets",
        ),
    );
    let seed_buckets: Api<DynamicObject> = Api::all_with(
        seed.admin.clone(),
        &dynamic(
            "extensions.gardener.cloud",
            "v1alpha1",
            "BackupBucket",
            "backupbuckets",
        ),
    );
    let seed_secrets: Api<Secret> = Api::namespaced(seed.admin.clone(), NAMESPACE);
    let what = format!(
        "{}'s BackupBucket in the seed with its credentials",
        seed.name
    );
    wait(&what, CONVERGE, &[&seed.agent], || async {
        let Ok(list) = garden_buckets.list(&ListParams::default()).await else {
            return false;
        };
        let Some(bucket) = list
            .items
            .iter()
            .find(|b| b.data["spec"]["seedName"] == seed.name.as_str())
        else {
            return false;
        };
        let name = bucket.metadata.name.clone().unwrap_or_default();
        let Ok(Some(extension)) = seed_buckets.get_opt(&name).await else {
            return false;
        };
        let secret = extension.data["spec"]["secretRef"]["name"]
            .as_str()
            .unwrap_or_default();
        !secret.is_empty() && seed_secrets.get_opt(secret).await.ok().flatten().is_some()
    })
    .await;
}

/// Registers the extension chart as `provider-local` (a v1 `helm.rawChart` ControllerDeployment;
/// OnDemand: the Seeds' provider and backup need it), as `networking-calico` (a v1beta1
/// `providerConfig` ControllerDeployment; policy Always) and as `extension-oci` (a v1
/// `helm.ociRepository` on `registry` with a pull secret the seed may read only through the
/// deployment; policy Always); waits until seed `seed`'s installation of each is Installed and
/// Healthy with the chart's objects in the seed. Returns how long that took.
pub async fn extensions_install(
    garden: &Garden,
    seed: &SeedCluster,
    registry: &crate::registry::Registry,
) -> Duration {
    let (controller, garden) = (&garden.controller, &garden.admin);
    let chart = base64::engine::general_purpose::STANDARD.encode(CHART);
    let values = json!({"replicaCount": 0, "greeting": "real"});
    let provider_kinds = [
        "BackupBucket",
        "BackupEntry",
        "Bastion",
        "ControlPlane",
        "DNSRecord",
        "Infrastructure",
        "OperatingSystemConfig",
        "Worker",
    ];
    let basic = base64::engine::general_purpose::STANDARD.encode("puller:s3cret");
    registry
        .push_chart(
            "charts/ext-small",
            "1.0.0",
            CHART,
            Some(&format!("Basic {basic}")),
        )
        .await;
    let docker_config =
        json!({"auths": {registry.host.clone(): {"username": "puller", "password": "s3cret"}}});
    let objects = [
        json!({"apiVersion": "v1", "kind": "Secret", "type": "kubernetes.io/dockerconfigjson",
            "metadata": {"name": "chart-pull", "namespace": NAMESPACE,
                         "labels": {"gardener.cloud/role": "helm-pull-secret"}},
            "data": {".dockerconfigjson": base64::engine::general_purpose::STANDARD.encode(docker_config.to_string())}}),
        json!({"apiVersion": "core.gardener.cloud/v1", "kind": "ControllerDeployment",
            "metadata": {"name": "provider-local"}, "helm": {"rawChart": chart, "values": values}}),
        json!({"apiVersion": "core.gardener.cloud/v1beta1", "kind": "ControllerDeployment",
            "metadata": {"name": "networking-calico"}, "type": "helm",
            "providerConfig": {"chart": chart, "values": values}}),
        json!({"apiVersion": "core.gardener.cloud/v1", "kind": "ControllerDeployment",
            "metadata": {"name": "extension-oci"},
            "helm": {"ociRepository": {"repository": format!("{}/charts/ext-small", registry.host),
                                       "tag": "1.0.0", "pullSecretRef": {"name": "chart-pull"}},
                     "values": values}}),
        registration(
            "provider-local",
            "OnDemand",
            &provider_kinds.map(|kind| (kind, "local")),
        ),
        registration("networking-calico", "Always", &[("Network", "calico")]),
        registration("extension-oci", "Always", &[("Extension", "oci")]),
    ];
    let started = Instant::now();
    crate::charts::apply_all(garden, &objects).await;
    let installations: Api<ControllerInstallation> = Api::all(garden.clone());
    for registration in ["provider-local", "networking-calico", "extension-oci"] {
        let what = format!(
            "{}'s installation of {registration} Installed and Healthy",
            seed.name
        );
        wait_state(&what, CONVERGE, &[&seed.agent, controller], || async {
            let list = installations
                .list(&ListParams::default().fields(&format!("spec.seedRef.name={}", seed.name)))
                .await
                .map_err(|error| error.to_string())?;
            let ci = list
                .items
                .iter()
                .find(|ci| ci.spec.registration_ref.name == registration)
                .ok_or("no installation")?;
            let conditions: Vec<String> = ci
                .conditions()
                .iter()
                .map(|c| format!("{}={} {}: {}", c.type_, c.status, c.reason, c.message))
                .collect();
            let ready = ["Installed", "Healthy"].iter().all(|t| {
                seedlet_api::conditions::find(ci.conditions(), t)
                    .is_some_and(|c| c.status.to_string() == "True")
            });
            if ready {
                Ok(())
            } else {
                Err(conditions.join("; "))
            }
        })
        .await;
    }
    started.elapsed()
}

fn registration(name: &str, policy: &str, resources: &[(&str, &str)]) -> Value {
    let resources: Vec<Value> = resources
        .iter()
        .map(|(kind, type_)| json!({"kind": kind, "type": type_}))
        .collect();
    json!({"apiVersion": "core.gardener.cloud/v1beta1", "kind": "ControllerRegistration",
        "metadata": {"name": name},
        "spec": {"resources": resources,
                 "deployment": {"policy": policy, "deploymentRefs": [{"name": name}]}}})
}

/// Asks for a new certificate with `gardener.cloud/operation=renew` on the stored kubeconfig
/// Secret; returns how long until the new one was stored and the annotation removed.
pub async fn renew(garden: &kube::Client, seed: &SeedCluster) -> Duration {
    let before = stored_certificate(&seed.admin)
        .await
        .expect("a stored certificate");
    let csrs = csr_count(garden).await;
    let started = Instant::now();
    let secrets: Api<Secret> = Api::namespaced(seed.admin.clone(), NAMESPACE);
    secrets
        .patch(
            KUBECONFIG_SECRET,
            &PatchParams::default(),
            &Patch::Merge(
                json!({"metadata": {"annotations": {"gardener.cloud/operation": "renew"}}}),
            ),
        )
        .await
        .expect("renew requested");
    let took = wait(
        "the renewed certificate",
        CONVERGE,
        &[&seed.agent],
        || async {
            let Ok(Some(secret)) = secrets.get_opt(KUBECONFIG_SECRET).await else {
                return false;
            };
            let pending = secret
                .metadata
                .annotations
                .as_ref()
                .is_some_and(|a| a.contains_key("gardener.cloud/operation"));
            !pending
                && stored_certificate(&seed.admin)
                    .await
                    .is_some_and(|c| c != before)
        },
    )
    .await;
    assert_eq!(csr_count(garden).await, csrs + 1, "one CSR for the renewal");
    let _ = started;
    took
}

/// SIGKILLs the agent and starts it again: the stored certificate is used (no new CSR) and the
/// Lease is renewed. Returns the time from the restart to the renewal.
pub async fn agent_killed(garden: &kube::Client, seed: &mut SeedCluster) -> Duration {
    let csrs = csr_count(garden).await;
    let certificate = stored_certificate(&seed.admin).await;
    seed.agent.kill().await;
    seed.agent.start();
    let since = jiff::Timestamp::now();
    let took = wait(
        "the Lease after the agent's restart",
        CONVERGE,
        &[&seed.agent],
        || renewed_after(garden, &seed.name, since),
    )
    .await;
    assert!(seed.agent.alive(), "the restarted agent runs");
    assert_eq!(
        csr_count(garden).await,
        csrs,
        "no CSR after a restart with a stored certificate"
    );
    assert_eq!(
        stored_certificate(&seed.admin).await,
        certificate,
        "certificate kept"
    );
    took
}

/// Lets the landscape run for `period` and fails when a WARN or ERROR line repeats in any log
/// or any WARN or ERROR line reports a refusal (403).
pub async fn steady_state(garden: &Garden, seeds: &[&SeedCluster], period: Duration) {
    let mut daemons: Vec<&Daemon> = vec![&garden.controller];
    daemons.extend(seeds.iter().map(|seed| &seed.agent));
    let positions: Vec<u64> = daemons.iter().map(|d| d.log_position()).collect();
    tokio::time::sleep(period).await;
    let mut failures = Vec::new();
    for (daemon, position) in daemons.iter().zip(positions) {
        let problems = daemon.problems_since(position);
        for line in &problems {
            println!(
                "real-cluster: steady state: {} logged {line:?}",
                daemon.role
            );
        }
        for (line, count) in repeated(&problems) {
            failures.push(format!("{} logged {count}× {line:?}", daemon.role));
        }
        // Each daemon holds exactly its chart's RBAC (and a seed what the authorizer grants):
        // a refusal in steady state is a missing rule, whether it repeats or not.
        for line in problems.iter().filter(|line| {
            let text = format!("{} {}", line.message, line.error).to_ascii_lowercase();
            text.contains("forbidden") || text.contains("403")
        }) {
            failures.push(format!("{} was refused: {line:?}", daemon.role));
        }
    }
    assert!(
        failures.is_empty(),
        "repeated WARN/ERROR lines in {period:?} of steady state:\n{}",
        failures.join("\n")
    );
    println!("real-cluster: {period:?} steady state without a repeated WARN or ERROR line");
}

/// gardenlet's six egress policies in the seed's `garden` namespace; the runtime API server's
/// policy names the address and port the real kube-apiserver advertises in `default/kubernetes`.
pub async fn network_policies(seed: &SeedCluster) {
    use k8s_openapi::api::core::v1::Endpoints;
    use k8s_openapi::api::networking::v1::NetworkPolicy;
    let endpoints = Api::<Endpoints>::namespaced(seed.admin.clone(), "default")
        .get("kubernetes")
        .await
        .expect("the real API server keeps default/kubernetes");
    let subset = &endpoints.subsets.expect("subsets")[0];
    let address = &subset.addresses.as_ref().expect("addresses")[0].ip;
    let port = subset.ports.as_ref().expect("ports")[0].port;
    let policies: Api<NetworkPolicy> = Api::namespaced(seed.admin.clone(), NAMESPACE);
    let mut want = [
        "deny-all",
        "allow-to-runtime-apiserver",
        "allow-to-public-networks",
        "allow-to-private-networks",
        "allow-to-blocked-cidrs",
        "allow-to-dns",
    ];
    want.sort_unstable();
    wait_state(
        "the six network policies in garden",
        CONVERGE,
        &[&seed.agent],
        || async {
            let list = policies
                .list(&ListParams::default())
                .await
                .map_err(|e| e.to_string())?;
            let mut names: Vec<String> = list
                .items
                .iter()
                .filter_map(|p| p.metadata.name.clone())
                .collect();
            names.sort();
            if names != want {
                return Err(format!("{names:?}"));
            }
            let api_server = list
                .items
                .iter()
                .find(|p| p.metadata.name.as_deref() == Some("allow-to-runtime-apiserver"))
                .and_then(|p| serde_json::to_value(&p.spec).ok())
                .unwrap_or_default();
            let egress = &api_server["egress"][0];
            let matches = egress["to"][0]["ipBlock"]["cidr"] == format!("{address}/32").as_str()
                && egress["ports"][0]["port"] == port;
            if matches {
                Ok(())
            } else {
                Err(format!("allow-to-runtime-apiserver egress {egress}"))
            }
        },
    )
    .await;
}

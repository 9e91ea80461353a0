//! A Shoot's life on a real seed: Project and (namespaced) CloudProfile, the Shoot's Cluster and
//! control-plane namespace, an extension's state reaching the garden's ShootState (readable by
//! the Shoot's seed only), a Bastion deployed into the seed, and the deletion taking all of it.

use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::Namespace;
use kube::Api;
use kube::api::{DynamicObject, Patch, PatchParams};
use seedlet_api::core::{Shoot, ShootState};
use seedlet_api::operations::Bastion;
use serde_json::json;

use super::checks::{create, dynamic, forbidden, stored_kubeconfig, wait, wait_state};
use super::daemons::Daemon;
use super::landscape::{CONVERGE, SeedCluster, client_from_yaml};

const PROJECT_NAMESPACE: &str = "garden-dev";
const SHOOT: &str = "real";
const TECHNICAL_ID: &str = "shoot--dev--real";
const BASTION: &str = "real-bastion";

/// Whether `name` can be read through `api` now (any error counts as "not there").
async fn exists<K>(api: &Api<K>, name: &str) -> bool
where
    K: kube::Resource + Clone + serde::de::DeserializeOwned + std::fmt::Debug,
{
    api.get_opt(name).await.ok().flatten().is_some()
}

/// Project, CloudProfile and Shoot `real` on `seed`: the Cluster, the control-plane namespace and
/// (once an extension reports state) the ShootState appear; deleting the Shoot removes the
/// extension object, the namespace, the Cluster, the ShootState and the Shoot itself. Returns
/// (creation → Cluster and namespace, deletion → everything gone).
pub async fn shoot_lifecycle(
    garden: &kube::Client,
    seed: &SeedCluster,
    other: &SeedCluster,
) -> (Duration, Duration) {
    let agent = [&seed.agent];
    project_and_profiles(garden, &agent).await;
    let created = shoot_reaches_the_seed(garden, seed, &agent).await;
    extension_state_reaches_the_garden(garden, seed, &agent).await;
    let care = super::care::extension_report_reaches_the_shoot(garden, seed, TECHNICAL_ID).await;
    println!("real-cluster: extension health report → Shoot conditions in {care:?}");
    only_the_shoots_seed_reads_its_state(seed, other).await;
    bastion_reaches_the_seed(garden, seed, &agent).await;
    let deleted = deletion_takes_everything(garden, seed, &agent).await;
    (created, deleted)
}

/// The Project `dev`, the CloudProfile `local` and the NamespacedCloudProfile `custom` (whose
/// status, the merged profile, the garden controller writes under the chart's RBAC).
async fn project_and_profiles(garden: &kube::Client, agent: &[&Daemon]) {
    let objects = [
        json!({"apiVersion": "core.gardener.cloud/v1beta1", "kind": "Project",
            "metadata": {"name": "dev"}, "spec": {"namespace": PROJECT_NAMESPACE}}),
        json!({"apiVersion": "core.gardener.cloud/v1beta1", "kind": "CloudProfile",
            "metadata": {"name": "local"},
            "spec": {"type": "local", "kubernetes": {"versions": [{"version": "1.32.0"}]},
                     "regions": [{"name": "local"}],
                     "machineImages": [{"name": "local", "versions": [{"version": "1.0.0"}]}],
                     "machineTypes": [{"name": "local", "cpu": "1", "gpu": "0", "memory": "1Gi", "usable": true}]}}),
    ];
    crate::charts::apply_all(garden, &objects).await;
    let namespaces: Api<Namespace> = Api::all(garden.clone());
    wait("the Project's namespace", CONVERGE, agent, || async {
        exists(&namespaces, PROJECT_NAMESPACE).await
    })
    .await;
    let namespaced_profiles: Api<DynamicObject> = Api::namespaced_with(
        garden.clone(),
        PROJECT_NAMESPACE,
        &dynamic(
            "core.gardener.cloud",
            "v1beta1",
            "NamespacedCloudProfile",
            "namespacedcloudprofiles",
        ),
    );
    crate::charts::apply_all(
        garden,
        &[
            json!({"apiVersion": "core.gardener.cloud/v1beta1", "kind": "NamespacedCloudProfile",
            "metadata": {"name": "custom", "namespace": PROJECT_NAMESPACE},
            "spec": {"parent": {"kind": "CloudProfile", "name": "local"},
                     "machineTypes": [{"name": "big", "cpu": "8", "gpu": "0", "memory": "32Gi"}]}}),
        ],
    )
    .await;
    wait(
        "the NamespacedCloudProfile's status",
        CONVERGE,
        agent,
        || async {
            namespaced_profiles
                .get_opt("custom")
                .await
                .ok()
                .flatten()
                .is_some_and(|p| p.data["status"]["cloudProfileSpec"]["machineTypes"].is_array())
        },
    )
    .await;
}

fn clusters(seed: &SeedCluster) -> Api<DynamicObject> {
    Api::all_with(
        seed.admin.clone(),
        &dynamic(
            "extensions.gardener.cloud",
            "v1alpha1",
            "Cluster",
            "clusters",
        ),
    )
}

/// The seed's extension objects of `kind` in the Shoot's control-plane namespace.
fn in_control_plane(seed: &SeedCluster, kind: &str, plural: &str) -> Api<DynamicObject> {
    Api::namespaced_with(
        seed.admin.clone(),
        TECHNICAL_ID,
        &dynamic("extensions.gardener.cloud", "v1alpha1", kind, plural),
    )
}

/// Creates Shoot `real` (on the NamespacedCloudProfile) and waits for its Cluster, which must
/// carry the merged profile, and its control-plane namespace; returns how long that took.
async fn shoot_reaches_the_seed(
    garden: &kube::Client,
    seed: &SeedCluster,
    agent: &[&Daemon],
) -> Duration {
    let started = Instant::now();
    create::<Shoot>(
        Api::namespaced(garden.clone(), PROJECT_NAMESPACE),
        json!({"apiVersion": "core.gardener.cloud/v1beta1", "kind": "Shoot",
            "metadata": {"name": SHOOT, "namespace": PROJECT_NAMESPACE},
            "spec": {"cloudProfile": {"kind": "NamespacedCloudProfile", "name": "custom"}, "provider": {"type": "local"},
                     "region": "local", "networking": {"type": "calico"},
                     "kubernetes": {"version": "1.32.0"}, "seedName": seed.name}}),
    )
    .await;
    let clusters = clusters(seed);
    let seed_namespaces: Api<Namespace> = Api::all(seed.admin.clone());
    wait(
        "the Shoot's Cluster (with the merged profile) and namespace",
        CONVERGE,
        agent,
        || async {
            clusters
                .get_opt(TECHNICAL_ID)
                .await
                .ok()
                .flatten()
                .is_some_and(|cluster| {
                    cluster.data["spec"]["cloudProfile"]
                        .to_string()
                        .contains("\"big\"")
                })
                && exists(&seed_namespaces, TECHNICAL_ID).await
        },
    )
    .await;
    started.elapsed()
}

/// An Extension in the control-plane namespace reports state: the agent writes it into the
/// garden's ShootState.
async fn extension_state_reaches_the_garden(
    garden: &kube::Client,
    seed: &SeedCluster,
    agent: &[&Daemon],
) {
    let extensions = in_control_plane(seed, "Extension", "extensions");
    extensions
        .patch(
            "small",
            &PatchParams::apply("real-cluster-test"),
            &Patch::Apply(
                json!({"apiVersion": "extensions.gardener.cloud/v1alpha1", "kind": "Extension",
                "metadata": {"name": "small", "namespace": TECHNICAL_ID},
                "spec": {"type": "small-v1"}}),
            ),
        )
        .await
        .expect("extension created");
    extensions
        .patch_status(
            "small",
            &PatchParams::default(),
            &Patch::Merge(json!({"status": {"state": {"generation": 1}}})),
        )
        .await
        .expect("extension state");
    let states: Api<ShootState> = Api::namespaced(garden.clone(), PROJECT_NAMESPACE);
    wait("the ShootState", CONVERGE, agent, || async {
        exists(&states, SHOOT).await
    })
    .await;
}

/// The other seed may not read this Shoot's state (403 from the seed authorizer); the Shoot's
/// own seed may.
async fn only_the_shoots_seed_reads_its_state(seed: &SeedCluster, other: &SeedCluster) {
    for (reader, allowed) in [(seed, true), (other, false)] {
        let yaml = stored_kubeconfig(&reader.admin)
            .await
            .expect("stored kubeconfig");
        let client = client_from_yaml(&yaml).await;
        let answer = Api::<ShootState>::namespaced(client, PROJECT_NAMESPACE)
            .get(SHOOT)
            .await;
        assert_eq!(
            answer.is_ok(),
            allowed,
            "{} reads the ShootState: {answer:?}",
            reader.name
        );
        assert!(
            allowed || forbidden(answer),
            "{}: 403 for another seed's ShootState",
            reader.name
        );
    }
}

/// A Bastion for the Shoot: the agent deploys the extension Bastion into the control-plane
/// namespace (no bastion extension runs here to answer it); the Shoot's deletion takes it along.
async fn bastion_reaches_the_seed(garden: &kube::Client, seed: &SeedCluster, agent: &[&Daemon]) {
    create::<Bastion>(
        Api::namespaced(garden.clone(), PROJECT_NAMESPACE),
        json!({"apiVersion": "operations.gardener.cloud/v1alpha1", "kind": "Bastion",
            "metadata": {"name": BASTION, "namespace": PROJECT_NAMESPACE},
            "spec": {"shootRef": {"name": SHOOT}, "seedName": seed.name, "providerType": "local",
                     "sshPublicKey": "ssh-ed25519 AAAAC3Nza user@host",
                     "ingress": [{"ipBlock": {"cidr": "192.0.2.0/24"}}]}}),
    )
    .await;
    let extension_bastions = in_control_plane(seed, "Bastion", "bastions");
    wait("the extension Bastion", CONVERGE, agent, || async {
        exists(&extension_bastions, BASTION).await
    })
    .await;
}

/// Deletes the Shoot and waits until the Shoot, its Bastion, Cluster, control-plane namespace
/// and ShootState are gone; returns how long that took.
async fn deletion_takes_everything(
    garden: &kube::Client,
    seed: &SeedCluster,
    agent: &[&Daemon],
) -> Duration {
    let shoots: Api<Shoot> = Api::namespaced(garden.clone(), PROJECT_NAMESPACE);
    let states: Api<ShootState> = Api::namespaced(garden.clone(), PROJECT_NAMESPACE);
    let bastions: Api<Bastion> = Api::namespaced(garden.clone(), PROJECT_NAMESPACE);
    let clusters = clusters(seed);
    let seed_namespaces: Api<Namespace> = Api::all(seed.admin.clone());
    let deleting = Instant::now();
    shoots
        .delete(SHOOT, &Default::default())
        .await
        .expect("shoot deleted");
    wait_state(
        "Shoot, Bastion, Cluster, namespace, extension and ShootState gone",
        CONVERGE,
        agent,
        || async {
            let left = [
                ("Shoot", exists(&shoots, SHOOT).await),
                ("Cluster", exists(&clusters, TECHNICAL_ID).await),
                ("namespace", exists(&seed_namespaces, TECHNICAL_ID).await),
                ("ShootState", exists(&states, SHOOT).await),
                ("Bastion", exists(&bastions, BASTION).await),
            ];
            let left: Vec<&str> = left
                .iter()
                .filter(|(_, there)| *there)
                .map(|(what, _)| *what)
                .collect();
            if left.is_empty() {
                Ok(())
            } else {
                Err(format!("still there: {}", left.join(", ")))
            }
        },
    )
    .await;
    deleting.elapsed()
}

//! Worker-pool objects: the ContainerRuntimes per pool and runtime (spec §3.3 step 17) and the
//! Worker with one entry per pool (step 20).

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use seedlet_api::core::Shoot;
use serde_json::{Value, json};

use super::osc::POOL_LABEL;
use super::secret_ref;

/// Where container runtimes install their binaries.
pub const CONTAINER_RUNTIME_BINARY_PATH: &str = "/var/bin/containerruntimes";

/// One ContainerRuntime per pool × `cri.containerRuntimes[]`: name `<type>-<pool>`.
pub fn container_runtimes(shoot: &Shoot) -> BTreeMap<String, Value> {
    let mut out = BTreeMap::new();
    for worker in &shoot.spec.provider.workers {
        let Some(cri) = &worker.cri else { continue };
        for runtime in &cri.container_runtimes {
            let mut spec = json!({
                "type": runtime.type_,
                "binaryPath": CONTAINER_RUNTIME_BINARY_PATH,
                "workerPool": {
                    "name": worker.name,
                    "selector": {"matchLabels": {
                        POOL_LABEL: worker.name,
                        "worker.garden.sapcloud.io/group": worker.name,
                    }},
                },
            });
            if let Some(config) = &runtime.provider_config {
                spec["providerConfig"] = config.clone();
            }
            out.insert(format!("{}-{}", runtime.type_, worker.name), spec);
        }
    }
    out
}

/// The Worker spec: provider type, region, credentials, the Infrastructure's provider status
/// and one pool per `spec.provider.workers[]`; `user_data` maps a pool to the Secret name of its
/// init OSC's cloud config. gardenlet adds node templates, machine-controller-manager settings
/// and cluster-autoscaler options from the CloudProfile; those are left out.
pub fn worker_spec(
    shoot: &Shoot,
    namespace: &str,
    infrastructure_status: Option<&Value>,
    user_data: &BTreeMap<String, String>,
    ssh_public_key: Option<&str>,
) -> Value {
    let kubernetes_version = shoot
        .spec
        .kubernetes
        .as_ref()
        .and_then(|k| k.version.clone());
    let pools: Vec<Value> = shoot
        .spec
        .provider
        .workers
        .iter()
        .map(|worker| {
            let mut labels = worker.labels.clone();
            labels.insert("node.kubernetes.io/role".into(), "node".into());
            labels.insert(POOL_LABEL.into(), worker.name.clone());
            labels.insert("worker.garden.sapcloud.io/group".into(), worker.name.clone());
            if let Some(arch) = &worker.machine.architecture {
                labels.insert("kubernetes.io/arch".into(), arch.clone());
            }
            let image = worker.machine.image.as_ref();
            let mut pool = json!({
                "name": worker.name,
                "minimum": worker.minimum.unwrap_or(0),
                "maximum": worker.maximum.unwrap_or(0),
                "maxSurge": worker.max_surge.clone().unwrap_or(IntOrString::Int(0)),
                "maxUnavailable": worker.max_unavailable.clone().unwrap_or(IntOrString::Int(0)),
                "annotations": worker.annotations,
                "labels": labels,
                "taints": worker.taints,
                "machineType": worker.machine.type_,
                "machineImage": {
                    "name": image.map(|i| i.name.clone()).unwrap_or_default(),
                    "version": image.and_then(|i| i.version.clone()).unwrap_or_default(),
                },
                "userDataSecretRef": {
                    "name": user_data.get(&worker.name).cloned().unwrap_or_default(),
                    "key": "cloud_config",
                },
                "zones": worker.zones,
            });
            if let Some(config) = &worker.provider_config {
                pool["providerConfig"] = config.clone();
            }
            if let Some(volume) = &worker.volume {
                pool["volume"] = json!({"type": volume.type_, "size": volume.size, "encrypted": volume.encrypted});
            }
            if let Some(arch) = &worker.machine.architecture {
                pool["architecture"] = json!(arch);
            }
            let version = worker.kubernetes.as_ref().and_then(|k| k.version.clone()).or_else(|| kubernetes_version.clone());
            if let Some(version) = version {
                pool["kubernetesVersion"] = json!(version);
            }
            if let Some(priority) = worker.priority {
                pool["priority"] = json!(priority);
            }
            pool
        })
        .collect();
    let mut spec = json!({
        "type": shoot.spec.provider.type_,
        "region": shoot.spec.region,
        "secretRef": secret_ref(namespace),
        "pools": pools,
    });
    if let Some(status) = infrastructure_status {
        spec["infrastructureProviderStatus"] = status.clone();
    }
    if let Some(key) = ssh_public_key {
        spec["sshPublicKey"] = json!(key);
    }
    spec
}

//! OperatingSystemConfigs per worker pool (spec §3.3 step 18): `<key>-init` (purpose
//! `provision`) and `<key>-original` (purpose `reconcile`), where the key carries a hash of what
//! forces new nodes.
//!
//! Contents are a documented minimum. seedlet renders, for `provision`, one unit
//! `gardener-node-init.service` and, for `reconcile`, `kubelet.service` and `containerd.service`
//! with the CRI config `containerd` + cgroup driver `systemd`. gardenlet additionally renders the
//! gardener-node-agent bootstrap script and its configuration file, kubelet configuration and
//! bootstrap kubeconfig files, containerd drop-ins and registry mirrors, the sandbox image,
//! CA bundles, sysctls, journald/valitail and node-local-dns files; those need the secrets
//! manager and shoot API server seedlet does not run, so a real OS extension working with
//! these objects gets no bootable node configuration from them.

use seedlet_api::core::{Shoot, Worker};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

/// The two OperatingSystemConfigs of one pool.
#[derive(Debug, Clone, PartialEq)]
pub struct OscPair {
    /// Pool name.
    pub pool: String,
    /// `<key>-init` and its spec.
    pub init: (String, Value),
    /// `<key>-original` and its spec.
    pub original: (String, Value),
}

/// Label naming the pool on pool-scoped objects.
pub const POOL_LABEL: &str = "worker.gardener.cloud/pool";

/// The OSCs of every pool with a machine image.
pub fn operating_system_configs(shoot: &Shoot) -> Vec<OscPair> {
    shoot
        .spec
        .provider
        .workers
        .iter()
        .filter_map(|worker| {
            let image = worker.machine.image.as_ref()?;
            let key = pool_key(shoot, worker);
            let base = |purpose: &str| {
                let mut spec = json!({"type": image.name, "purpose": purpose});
                if let Some(config) = &image.provider_config {
                    spec["providerConfig"] = config.clone();
                }
                spec
            };
            let mut init = base("provision");
            init["units"] =
                json!([{"name": "gardener-node-init.service", "command": "start", "enable": true}]);
            init["files"] = json!([]);
            let mut original = base("reconcile");
            original["units"] = json!([
                {"name": "containerd.service", "command": "start", "enable": true},
                {"name": "kubelet.service", "command": "start", "enable": true},
            ]);
            original["files"] = json!([]);
            original["criConfig"] = json!({"name": "containerd", "cgroupDriver": "systemd"});
            Some(OscPair {
                pool: worker.name.clone(),
                init: (format!("{key}-init"), init),
                original: (format!("{key}-original"), original),
            })
        })
        .collect()
}

/// `gardener-node-agent-<pool>-<16 hex>`: a SHA-256 over the Kubernetes minor version, machine
/// type, image name and version, volume size and type and the CRI name (gardenlet hashes more
/// inputs, e.g. credential rotation times and the kubelet configuration).
pub fn pool_key(shoot: &Shoot, worker: &Worker) -> String {
    let version = worker
        .kubernetes
        .as_ref()
        .and_then(|k| k.version.clone())
        .or_else(|| {
            shoot
                .spec
                .kubernetes
                .as_ref()
                .and_then(|k| k.version.clone())
        })
        .unwrap_or_default();
    let minor: String = version.split('.').take(2).collect::<Vec<_>>().join(".");
    let image = worker.machine.image.as_ref();
    let volume = worker.volume.as_ref();
    let inputs = [
        minor.as_str(),
        worker.machine.type_.as_str(),
        image.map_or("", |i| i.name.as_str()),
        image.and_then(|i| i.version.as_deref()).unwrap_or(""),
        volume.map_or("", |v| v.size.as_str()),
        volume.and_then(|v| v.type_.as_deref()).unwrap_or(""),
        worker
            .cri
            .as_ref()
            .map_or("containerd", |c| c.name.as_str()),
    ];
    let mut hasher = Sha256::new();
    for input in inputs {
        hasher.update(input.as_bytes());
        hasher.update([0]);
    }
    let digest = hex::encode(hasher.finalize());
    format!("gardener-node-agent-{}-{}", worker.name, &digest[..16])
}

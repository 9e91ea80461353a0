//! The extension objects a Shoot wants in its control-plane namespace (spec §3.3, §3.4), as pure
//! builders: each returns the object's name and its wanted `spec` (plus labels where upstream
//! sets them). The flow deploys them through `extension_sync::object`.
//!
//! What gardenlet computes from components seedlet does not deploy (kube-apiserver load
//! balancer addresses, secrets-manager CAs, the full node-agent configuration) is either left
//! out or replaced by a documented minimum; see [`osc`] for the OperatingSystemConfig contents.

pub mod osc;
pub mod pools;

use std::collections::{BTreeMap, BTreeSet};

use seedlet_api::core::{ControllerRegistration, Seed, Shoot};
use serde_json::{Value, json};

pub use osc::{OscPair, operating_system_configs};
pub use pools::{container_runtimes, worker_spec};

/// Name of the Secret holding the infrastructure credentials in the control-plane namespace.
pub const CLOUDPROVIDER_SECRET: &str = "cloudprovider";
/// Label value of `gardener.cloud/purpose` on that Secret.
pub const PURPOSE_CLOUDPROVIDER: &str = "cloudprovider";
/// `gardener.cloud/purpose`.
pub const PURPOSE_LABEL: &str = "gardener.cloud/purpose";

/// The shoot's name (the name of its Infrastructure, ControlPlane, Network and Worker).
pub fn shoot_name(shoot: &Shoot) -> &str {
    shoot.metadata.name.as_deref().unwrap_or_default()
}

/// `secretRef` to the `cloudprovider` Secret of `namespace`.
pub fn secret_ref(namespace: &str) -> Value {
    json!({"name": CLOUDPROVIDER_SECRET, "namespace": namespace})
}

/// The Infrastructure spec: provider type, `infrastructureConfig`, region and the credentials.
pub fn infrastructure_spec(shoot: &Shoot, namespace: &str) -> Value {
    let mut spec = json!({
        "type": shoot.spec.provider.type_,
        "region": shoot.spec.region,
        "secretRef": secret_ref(namespace),
    });
    if let Some(config) = &shoot.spec.provider.infrastructure_config {
        spec["providerConfig"] = config.clone();
    }
    spec
}

/// The ControlPlane spec: provider type, `controlPlaneConfig`, region, credentials and the
/// Infrastructure's `status.providerStatus`.
pub fn control_plane_spec(
    shoot: &Shoot,
    namespace: &str,
    infrastructure_status: Option<&Value>,
) -> Value {
    let mut spec = json!({
        "type": shoot.spec.provider.type_,
        "region": shoot.spec.region,
        "secretRef": secret_ref(namespace),
    });
    if let Some(config) = &shoot.spec.provider.control_plane_config {
        spec["providerConfig"] = config.clone();
    }
    if let Some(status) = infrastructure_status {
        spec["infrastructureProviderStatus"] = status.clone();
    }
    spec
}

/// The Network spec: networking type and config, IP families, and the first pod and service
/// CIDR (the second one when exactly two families are used and the first is IPv6); `None`
/// without `spec.networking.type`.
pub fn network_spec(shoot: &Shoot) -> Option<Value> {
    let networking = shoot.spec.networking.as_ref()?;
    let type_ = networking.type_.as_ref()?;
    let families = if networking.ip_families.is_empty() {
        vec!["IPv4".to_owned()]
    } else {
        networking.ip_families.clone()
    };
    let status = shoot.status.as_ref().and_then(|s| s.networking.as_ref());
    let pick = |spec: Option<&String>, observed: &[String]| -> Option<String> {
        let mut all: Vec<String> = spec.into_iter().cloned().collect();
        for cidr in observed {
            if !all.contains(cidr) {
                all.push(cidr.clone());
            }
        }
        let index = usize::from(families.len() == 2 && families[0] == "IPv6" && all.len() > 1);
        all.get(index).cloned()
    };
    let mut spec = json!({"type": type_, "ipFamilies": families});
    if let Some(config) = &networking.provider_config {
        spec["providerConfig"] = config.clone();
    }
    if let Some(pods) = pick(
        networking.pods.as_ref(),
        status.map(|s| s.pods.as_slice()).unwrap_or_default(),
    ) {
        spec["podCIDR"] = json!(pods);
    }
    if let Some(services) = pick(
        networking.services.as_ref(),
        status.map(|s| s.services.as_slice()).unwrap_or_default(),
    ) {
        spec["serviceCIDR"] = json!(services);
    }
    Some(spec)
}

/// The wanted Extension objects (name = type): auto-enabled registrations plus
/// `spec.extensions[]` minus disabled ones; providerConfig from the shoot's entry. Types no
/// registration serves are left out, as upstream does.
pub fn extensions(
    shoot: &Shoot,
    registrations: &[impl AsRef<ControllerRegistration>],
) -> BTreeMap<String, Value> {
    let registered: BTreeSet<&str> = registrations
        .iter()
        .flat_map(|r| r.as_ref().spec.resources.iter())
        .filter(|resource| resource.kind == "Extension")
        .map(|resource| resource.type_.as_str())
        .collect();
    crate::required_extensions::required_extension_types(shoot, registrations)
        .into_iter()
        .filter(|type_| registered.contains(type_.as_str()))
        .map(|type_| {
            let mut spec = json!({"type": type_});
            if let Some(config) = shoot
                .spec
                .extensions
                .iter()
                .find(|e| e.type_ == type_)
                .and_then(|e| e.provider_config.clone())
            {
                spec["providerConfig"] = config;
            }
            (type_, spec)
        })
        .collect()
}

/// A DNSRecord spec (`<shoot>-internal`/`-external`): provider type, record name, type from the
/// address (A, AAAA or CNAME), the address as value, the TTL and the credentials Secret.
pub fn dns_record_spec(
    provider: &str,
    name: &str,
    address: &str,
    ttl: i64,
    secret: &str,
    namespace: &str,
) -> Value {
    let record_type = match address.parse::<std::net::IpAddr>() {
        Ok(std::net::IpAddr::V4(_)) => "A",
        Ok(std::net::IpAddr::V6(_)) => "AAAA",
        Err(_) => "CNAME",
    };
    json!({
        "type": provider,
        "name": name,
        "recordType": record_type,
        "values": [address],
        "ttl": ttl,
        "secretRef": {"name": secret, "namespace": namespace},
    })
}

/// The core BackupEntry of a shoot on a seed with backup: name `<technicalID>--<uid>`, bucket =
/// the Seed's UID, owned (not blocking) by the Shoot. `None` without seed backup or shoot UID.
pub fn backup_entry(
    shoot: &Shoot,
    seed: &Seed,
    technical_id: &str,
    timestamp: &str,
) -> Option<Value> {
    seed.spec.backup.as_ref()?;
    let uid = shoot
        .status
        .as_ref()
        .and_then(|s| s.uid.clone())
        .or_else(|| shoot.metadata.uid.clone())?;
    let bucket = seed.metadata.uid.clone()?;
    let mut entry_annotations = json!({
        "gardener.cloud/operation": "reconcile",
        "gardener.cloud/timestamp": timestamp,
    });
    if let Some(purpose) = &shoot.spec.purpose {
        entry_annotations["shoot.gardener.cloud/purpose"] = json!(purpose);
    }
    Some(json!({
        "apiVersion": "core.gardener.cloud/v1beta1",
        "kind": "BackupEntry",
        "metadata": {
            "name": format!("{technical_id}--{uid}"),
            "namespace": shoot.metadata.namespace,
            "annotations": entry_annotations,
            "ownerReferences": [{
                "apiVersion": "core.gardener.cloud/v1beta1", "kind": "Shoot",
                "name": shoot.metadata.name, "uid": shoot.metadata.uid,
                "controller": true, "blockOwnerDeletion": false,
            }],
        },
        "spec": {"bucketName": bucket, "seedName": shoot.spec.seed_name},
    }))
}

#[cfg(test)]
#[path = "tests.rs"]
mod tests;

//! The `Kind/type` combinations a Seed needs extension controllers for (spec §3.1 step 2), from
//! its Shoots, BackupBuckets, BackupEntries and its own spec. Pure: no client, no clock.

use std::collections::{BTreeMap, BTreeSet};

use seedlet_api::core::{BackupBucket, BackupEntry, ControllerRegistration, Seed, Shoot};
use seedlet_api::extensions::ExtensionKind;

/// DNS provider type that never needs a DNSRecord controller.
pub const DNS_UNMANAGED: &str = "unmanaged";
/// Cluster type of `autoEnable` for shoots.
pub const CLUSTER_TYPE_SHOOT: &str = "shoot";
/// Cluster type of `autoEnable` for seeds.
pub const CLUSTER_TYPE_SEED: &str = "seed";

pub use seedlet_api::extensions::kind_type;

/// Everything the wanted set is computed from.
#[derive(Debug, Clone, Copy)]
pub struct Inputs<'a> {
    /// The Seed.
    pub seed: &'a Seed,
    /// Shoots with `spec.seedName` or `status.seedName` equal to the Seed's name.
    pub shoots: &'a [Shoot],
    /// All BackupBuckets (filtered here by `spec.seedName`).
    pub buckets: &'a [BackupBucket],
    /// BackupEntries with `spec.seedName` equal to the Seed's name.
    pub entries: &'a [BackupEntry],
    /// All ControllerRegistrations (for auto-enabled extensions).
    pub registrations: &'a [ControllerRegistration],
}

/// The wanted `Kind/type` set W of a Seed: backups, every Shoot's needs and the Seed's own.
pub fn wanted_kind_types(inputs: &Inputs<'_>) -> BTreeSet<String> {
    let seed_name = inputs.seed.metadata.name.as_deref().unwrap_or_default();
    let mut wanted = backup_kind_types(seed_name, inputs.buckets, inputs.entries);
    for shoot in inputs.shoots {
        wanted.extend(shoot_kind_types(shoot, inputs.seed, inputs.registrations));
    }
    wanted.extend(seed_kind_types(inputs.seed, inputs.registrations));
    wanted
}

/// `BackupBucket/<provider>` of the Seed's buckets and `BackupEntry/<bucket provider>` of its
/// entries; an entry whose bucket is unknown is skipped.
pub fn backup_kind_types(
    seed_name: &str,
    buckets: &[BackupBucket],
    entries: &[BackupEntry],
) -> BTreeSet<String> {
    let bucket_types: BTreeMap<&str, &str> = buckets
        .iter()
        .filter_map(|bucket| {
            Some((
                bucket.metadata.name.as_deref()?,
                bucket.spec.provider.type_.as_str(),
            ))
        })
        .collect();
    let mut wanted = BTreeSet::new();
    for bucket in buckets {
        if bucket.spec.seed_name.as_deref() == Some(seed_name) {
            wanted.insert(kind_type(
                ExtensionKind::BackupBucket,
                &bucket.spec.provider.type_,
            ));
        }
    }
    for entry in entries {
        if entry.spec.seed_name.as_deref() != Some(seed_name) {
            continue;
        }
        if let Some(type_) = bucket_types.get(entry.spec.bucket_name.as_str()) {
            wanted.insert(kind_type(ExtensionKind::BackupEntry, type_));
        }
    }
    wanted
}

/// What one Shoot needs (upstream `ComputeRequiredExtensionsForShoot`).
///
/// The internal domain comes from `seed.spec.dns.internal` only; upstream's legacy fallback to a
/// `gardener.cloud/role=internal-domain` Secret is not supported.
pub fn shoot_kind_types(
    shoot: &Shoot,
    seed: &Seed,
    registrations: &[ControllerRegistration],
) -> BTreeSet<String> {
    let mut wanted = BTreeSet::new();
    let workerless = shoot.is_workerless();
    if let Some(backup) = &seed.spec.backup {
        wanted.insert(kind_type(ExtensionKind::BackupBucket, &backup.provider));
        wanted.insert(kind_type(ExtensionKind::BackupEntry, &backup.provider));
    }
    wanted.insert(kind_type(
        ExtensionKind::ControlPlane,
        &seed.spec.provider.type_,
    ));
    let provider = &shoot.spec.provider.type_;
    if !workerless {
        wanted.insert(kind_type(ExtensionKind::ControlPlane, provider));
        wanted.insert(kind_type(ExtensionKind::Infrastructure, provider));
        wanted.insert(kind_type(ExtensionKind::Worker, provider));
        if let Some(network) = shoot
            .spec
            .networking
            .as_ref()
            .and_then(|n| n.type_.as_deref())
        {
            wanted.insert(kind_type(ExtensionKind::Network, network));
        }
    }
    let mut disabled = BTreeSet::new();
    for extension in &shoot.spec.extensions {
        if extension.is_disabled() {
            disabled.insert(extension.type_.as_str());
        } else {
            wanted.insert(kind_type(ExtensionKind::Extension, &extension.type_));
        }
    }
    for pool in &shoot.spec.provider.workers {
        if let Some(image) = &pool.machine.image {
            wanted.insert(kind_type(ExtensionKind::OperatingSystemConfig, &image.name));
        }
        for runtime in pool.cri.iter().flat_map(|cri| &cri.container_runtimes) {
            wanted.insert(kind_type(ExtensionKind::ContainerRuntime, &runtime.type_));
        }
    }
    for type_ in shoot_dns_record_types(shoot, seed) {
        wanted.insert(kind_type(ExtensionKind::DnsRecord, &type_));
    }
    for resource in registrations.iter().flat_map(|r| &r.spec.resources) {
        if resource.kind != ExtensionKind::Extension.as_str()
            || !resource.auto_enabled_for(CLUSTER_TYPE_SHOOT)
            || disabled.contains(resource.type_.as_str())
            || (workerless && resource.workerless_supported != Some(true))
        {
            continue;
        }
        wanted.insert(kind_type(ExtensionKind::Extension, &resource.type_));
    }
    wanted
}

/// DNS provider types of a Shoot: primary providers, the Seed's internal domain, and the
/// external domain (the matching Seed default domain, else the primary provider). `unmanaged`
/// never counts.
fn shoot_dns_record_types(shoot: &Shoot, seed: &Seed) -> BTreeSet<String> {
    let mut types = BTreeSet::new();
    let dns = shoot.spec.dns.as_ref();
    let primary = dns.and_then(|dns| {
        dns.providers
            .iter()
            .find(|provider| provider.primary == Some(true))
            .and_then(|provider| provider.type_.clone())
    });
    if let Some(primary) = &primary {
        types.insert(primary.clone());
    }
    if let Some(internal) = &seed.spec.dns.internal {
        types.insert(internal.type_.clone());
    }
    if let Some(domain) = dns.and_then(|dns| dns.domain.as_deref()) {
        let default = seed.spec.dns.defaults.iter().flatten().find(|default| {
            domain == default.domain || domain.ends_with(&format!(".{}", default.domain))
        });
        match (default, &primary) {
            (Some(default), _) => {
                types.insert(default.type_.clone());
            }
            (None, Some(primary)) => {
                types.insert(primary.clone());
            }
            (None, None) => {}
        }
    }
    types.remove(DNS_UNMANAGED);
    types.remove("");
    types
}

/// What the Seed itself needs (upstream `ComputeRequiredExtensionsForSeed`); nothing while the
/// Seed is being deleted.
pub fn seed_kind_types(seed: &Seed, registrations: &[ControllerRegistration]) -> BTreeSet<String> {
    let mut wanted = BTreeSet::new();
    if seed.metadata.deletion_timestamp.is_some() {
        return wanted;
    }
    if let Some(provider) = &seed.spec.dns.provider {
        wanted.insert(kind_type(ExtensionKind::DnsRecord, &provider.type_));
    }
    let mut disabled = BTreeSet::new();
    for extension in &seed.spec.extensions {
        if extension.is_disabled() {
            disabled.insert(extension.type_.as_str());
        } else {
            wanted.insert(kind_type(ExtensionKind::Extension, &extension.type_));
        }
    }
    for resource in registrations.iter().flat_map(|r| &r.spec.resources) {
        if resource.kind == ExtensionKind::Extension.as_str()
            && resource.auto_enabled_for(CLUSTER_TYPE_SEED)
            && !disabled.contains(resource.type_.as_str())
        {
            wanted.insert(kind_type(ExtensionKind::Extension, &resource.type_));
        }
    }
    let provider = &seed.spec.provider.type_;
    for kind in [
        ExtensionKind::ControlPlane,
        ExtensionKind::Infrastructure,
        ExtensionKind::Worker,
    ] {
        wanted.insert(kind_type(kind, provider));
    }
    wanted
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn seed(spec: serde_json::Value) -> Seed {
        let mut base = json!({
            "provider": {"type": "local", "region": "r"},
            "networks": {"pods": "10.0.0.0/16", "services": "10.1.0.0/16"}
        });
        if let (Some(base), Some(extra)) = (base.as_object_mut(), spec.as_object()) {
            base.extend(extra.clone());
        }
        serde_json::from_value(json!({"metadata": {"name": "s1"}, "spec": base})).unwrap()
    }

    fn shoot(spec: serde_json::Value) -> Shoot {
        serde_json::from_value(
            json!({"metadata": {"name": "sh", "namespace": "garden-dev"}, "spec": spec}),
        )
        .unwrap()
    }

    fn registration(resources: serde_json::Value) -> ControllerRegistration {
        serde_json::from_value(json!({"metadata": {"name": "r"}, "spec": {"resources": resources}}))
            .unwrap()
    }

    fn set(items: &[&str]) -> BTreeSet<String> {
        items.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn shoot_with_workers_needs_provider_network_os_runtime_and_extensions() {
        let shoot = shoot(json!({
            "region": "r",
            "provider": {"type": "aws", "workers": [{
                "name": "w", "machine": {"type": "m", "image": {"name": "gardenlinux"}},
                "cri": {"name": "containerd", "containerRuntimes": [{"type": "gvisor"}]}
            }]},
            "networking": {"type": "calico"},
            "extensions": [{"type": "shoot-dns-service"}, {"type": "off", "disabled": true}],
            "dns": {"domain": "a.example.com", "providers": [{"type": "aws-route53", "primary": true}]}
        }));
        let got = shoot_kind_types(&shoot, &seed(json!({})), &[]);
        assert_eq!(
            got,
            set(&[
                "ContainerRuntime/gvisor",
                "ControlPlane/aws",
                "ControlPlane/local",
                "DNSRecord/aws-route53",
                "Extension/shoot-dns-service",
                "Infrastructure/aws",
                "Network/calico",
                "OperatingSystemConfig/gardenlinux",
                "Worker/aws",
            ])
        );
    }

    #[test]
    fn workerless_shoot_needs_only_seed_control_plane_and_workerless_auto_extensions() {
        let shoot = shoot(
            json!({"region": "r", "provider": {"type": "aws"}, "networking": {"type": "calico"}}),
        );
        let registrations = [registration(json!([
            {"kind": "Extension", "type": "auto", "autoEnable": ["shoot"]},
            {"kind": "Extension", "type": "auto-wl", "autoEnable": ["shoot"], "workerlessSupported": true}
        ]))];
        let got = shoot_kind_types(&shoot, &seed(json!({})), &registrations);
        assert_eq!(got, set(&["ControlPlane/local", "Extension/auto-wl"]));
    }

    #[test]
    fn auto_enabled_extension_is_not_wanted_when_shoot_disables_it() {
        let shoot = shoot(
            json!({"region": "r", "provider": {"type": "aws", "workers": [{"name": "w", "machine": {"type": "m"}}]},
            "extensions": [{"type": "auto", "disabled": true}]}),
        );
        let registrations = [registration(
            json!([{"kind": "Extension", "type": "auto", "autoEnable": ["shoot"]}]),
        )];
        let got = shoot_kind_types(&shoot, &seed(json!({})), &registrations);
        assert!(!got.contains("Extension/auto"), "{got:?}");
    }

    #[test]
    fn seed_backup_and_dns_domains_are_wanted_for_each_shoot() {
        let seed = seed(json!({
            "backup": {"provider": "s3"},
            "dns": {"internal": {"type": "internal-dns", "domain": "internal.example.com"},
                    "defaults": [{"type": "default-dns", "domain": "example.com"}]}
        }));
        let shoot = shoot(json!({"region": "r", "provider": {"type": "aws"},
            "dns": {"domain": "a.example.com", "providers": [{"type": "unmanaged", "primary": true}]}}));
        let got = shoot_kind_types(&shoot, &seed, &[]);
        assert_eq!(
            got,
            set(&[
                "BackupBucket/s3",
                "BackupEntry/s3",
                "ControlPlane/local",
                "DNSRecord/default-dns",
                "DNSRecord/internal-dns"
            ])
        );
    }

    #[test]
    fn external_domain_falls_back_to_primary_provider_when_no_default_matches() {
        let seed =
            seed(json!({"dns": {"defaults": [{"type": "default-dns", "domain": "example.com"}]}}));
        let shoot = shoot(json!({"region": "r", "provider": {"type": "aws"},
            "dns": {"domain": "a.other.org", "providers": [{"type": "gcp-dns", "primary": true}, {"type": "secondary"}]}}));
        let got = shoot_kind_types(&shoot, &seed, &[]);
        assert!(got.contains("DNSRecord/gcp-dns"));
        assert!(!got.contains("DNSRecord/default-dns"));
        assert!(!got.contains("DNSRecord/secondary"));
    }

    #[test]
    fn seed_needs_its_provider_dns_and_seed_extensions_unless_deleting() {
        let registrations = [registration(json!([
            {"kind": "Extension", "type": "seed-auto", "autoEnable": ["seed"]},
            {"kind": "Extension", "type": "shoot-auto", "autoEnable": ["shoot"]}
        ]))];
        let mut seed =
            seed(json!({"dns": {"provider": {"type": "route53"}}, "extensions": [{"type": "x"}]}));
        let got = seed_kind_types(&seed, &registrations);
        assert_eq!(
            got,
            set(&[
                "ControlPlane/local",
                "DNSRecord/route53",
                "Extension/seed-auto",
                "Extension/x",
                "Infrastructure/local",
                "Worker/local"
            ])
        );
        seed.metadata.deletion_timestamp = Some(
            k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(jiff::Timestamp::UNIX_EPOCH),
        );
        assert!(seed_kind_types(&seed, &registrations).is_empty());
    }

    #[test]
    fn backups_count_only_for_this_seed_and_entries_use_their_bucket_type() {
        let bucket = |name: &str, seed: &str, type_: &str| -> BackupBucket {
            serde_json::from_value(json!({"metadata": {"name": name},
                "spec": {"provider": {"type": type_, "region": "r"}, "seedName": seed}}))
            .unwrap()
        };
        let entry = |bucket: &str, seed: &str| -> BackupEntry {
            serde_json::from_value(json!({"metadata": {"name": "e", "namespace": "ns"},
                "spec": {"bucketName": bucket, "seedName": seed}}))
            .unwrap()
        };
        let buckets = [bucket("b1", "s1", "s3"), bucket("b2", "other", "gcs")];
        let entries = [
            entry("b2", "s1"),
            entry("missing", "s1"),
            entry("b1", "other"),
        ];
        assert_eq!(
            backup_kind_types("s1", &buckets, &entries),
            set(&["BackupBucket/s3", "BackupEntry/gcs"])
        );
    }

    #[test]
    fn wanted_set_unions_backups_shoots_and_seed() {
        let seed = seed(json!({}));
        let shoots = [shoot(json!({"region": "r", "provider": {"type": "aws"}}))];
        let got = wanted_kind_types(&Inputs {
            seed: &seed,
            shoots: &shoots,
            buckets: &[],
            entries: &[],
            registrations: &[],
        });
        assert_eq!(
            got,
            set(&["ControlPlane/local", "Infrastructure/local", "Worker/local"])
        );
    }
}

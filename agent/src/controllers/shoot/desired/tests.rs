//! Tests of the desired extension objects.

use std::collections::BTreeMap;

use seedlet_api::core::{ControllerRegistration, Seed, Shoot};
use serde_json::{Value, json};

use super::*;

const NS: &str = "shoot--dev--s";

fn shoot(extra_spec: Value, status: Value) -> Shoot {
    let mut spec = json!({
        "region": "local",
        "kubernetes": {"version": "1.32.3"},
        "networking": {"type": "calico", "pods": "10.3.0.0/16", "services": "10.4.0.0/16"},
        "provider": {"type": "local", "infrastructureConfig": {"kind": "InfraConfig"},
            "controlPlaneConfig": {"kind": "CPConfig"},
            "workers": [{"name": "pool-a", "minimum": 1, "maximum": 3,
                "machine": {"type": "m1", "image": {"name": "gardenlinux", "version": "1.0"}},
                "cri": {"name": "containerd", "containerRuntimes": [{"type": "gvisor"}]},
                "volume": {"size": "20Gi", "type": "ssd"}}]},
    });
    if let (Some(spec), Some(extra)) = (spec.as_object_mut(), extra_spec.as_object()) {
        spec.extend(extra.clone());
    }
    serde_json::from_value(json!({
        "metadata": {"name": "s", "namespace": "garden-dev", "uid": "shoot-uid"},
        "spec": spec, "status": status,
    }))
    .unwrap()
}

#[test]
fn infrastructure_and_control_plane_carry_provider_config_region_and_credentials() {
    let shoot = shoot(json!({}), json!({}));
    assert_eq!(
        infrastructure_spec(&shoot, NS),
        json!({"type": "local", "region": "local", "providerConfig": {"kind": "InfraConfig"},
               "secretRef": {"name": "cloudprovider", "namespace": NS}})
    );
    let status = json!({"vpc": "v"});
    let control_plane = control_plane_spec(&shoot, NS, Some(&status));
    assert_eq!(control_plane["providerConfig"], json!({"kind": "CPConfig"}));
    assert_eq!(control_plane["infrastructureProviderStatus"], status);
    assert!(
        control_plane_spec(&shoot, NS, None)
            .get("infrastructureProviderStatus")
            .is_none()
    );
}

#[test]
fn network_picks_cidrs_by_ip_family() {
    let cases = [
        (
            json!({}),
            json!({}),
            Some(
                json!({"type": "calico", "ipFamilies": ["IPv4"], "podCIDR": "10.3.0.0/16", "serviceCIDR": "10.4.0.0/16"}),
            ),
        ),
        (
            json!({"networking": {"type": "calico", "ipFamilies": ["IPv6", "IPv4"], "pods": "fd00::/48"}}),
            json!({"networking": {"pods": ["10.9.0.0/16"]}}),
            Some(
                json!({"type": "calico", "ipFamilies": ["IPv6", "IPv4"], "podCIDR": "10.9.0.0/16"}),
            ),
        ),
        (
            json!({"networking": {"pods": "10.3.0.0/16"}}),
            json!({}),
            None,
        ),
    ];
    for (spec, status, want) in cases {
        assert_eq!(network_spec(&shoot(spec.clone(), status)), want, "{spec}");
    }
}

#[test]
fn container_runtimes_are_per_pool_and_runtime() {
    let runtimes = container_runtimes(&shoot(json!({}), json!({})));
    assert_eq!(runtimes.keys().collect::<Vec<_>>(), ["gvisor-pool-a"]);
    let spec = &runtimes["gvisor-pool-a"];
    assert_eq!(spec["binaryPath"], "/var/bin/containerruntimes");
    assert_eq!(
        spec["workerPool"]["selector"]["matchLabels"]["worker.gardener.cloud/pool"],
        "pool-a"
    );
}

#[test]
fn operating_system_configs_come_in_pairs_keyed_by_what_forces_new_nodes() {
    let base = shoot(json!({}), json!({}));
    let pairs = operating_system_configs(&base);
    assert_eq!(pairs.len(), 1);
    let pair = &pairs[0];
    assert!(
        pair.init.0.starts_with("gardener-node-agent-pool-a-") && pair.init.0.ends_with("-init")
    );
    assert_eq!(
        pair.init.0.len(),
        "gardener-node-agent-pool-a-".len() + 16 + "-init".len()
    );
    assert_eq!(pair.init.1["purpose"], "provision");
    assert_eq!(pair.original.1["purpose"], "reconcile");
    assert_eq!(pair.original.1["criConfig"]["name"], "containerd");
    // A patch version bump keeps the key; a minor bump changes it.
    let patch = shoot(json!({"kubernetes": {"version": "1.32.9"}}), json!({}));
    let minor = shoot(json!({"kubernetes": {"version": "1.33.0"}}), json!({}));
    assert_eq!(operating_system_configs(&patch)[0].init.0, pair.init.0);
    assert_ne!(operating_system_configs(&minor)[0].init.0, pair.init.0);
}

#[test]
fn worker_pools_carry_labels_image_and_user_data() {
    let shoot = shoot(json!({}), json!({}));
    let user_data = BTreeMap::from([("pool-a".to_owned(), "cloud-config-pool-a".to_owned())]);
    let spec = worker_spec(&shoot, NS, None, &user_data, None);
    let pool = &spec["pools"][0];
    assert_eq!(pool["minimum"], 1);
    assert_eq!(pool["maximum"], 3);
    assert_eq!(pool["maxSurge"], 0);
    assert_eq!(pool["labels"]["worker.gardener.cloud/pool"], "pool-a");
    assert_eq!(pool["labels"]["node.kubernetes.io/role"], "node");
    assert_eq!(
        pool["machineImage"],
        json!({"name": "gardenlinux", "version": "1.0"})
    );
    assert_eq!(
        pool["userDataSecretRef"],
        json!({"name": "cloud-config-pool-a", "key": "cloud_config"})
    );
    assert_eq!(pool["kubernetesVersion"], "1.32.3");
    assert_eq!(spec["secretRef"]["name"], "cloudprovider");
}

#[test]
fn extensions_are_auto_enabled_plus_explicit_minus_disabled_and_registered_only() {
    let registration: ControllerRegistration = serde_json::from_value(json!({
        "metadata": {"name": "r"},
        "spec": {"resources": [
            {"kind": "Extension", "type": "shoot-dns", "autoEnable": ["shoot"]},
            {"kind": "Extension", "type": "shoot-cert"},
            {"kind": "Extension", "type": "auditing", "autoEnable": ["shoot"]},
        ]},
    }))
    .unwrap();
    let shoot = shoot(
        json!({"extensions": [
            {"type": "shoot-cert", "providerConfig": {"issuer": "x"}},
            {"type": "auditing", "disabled": true},
            {"type": "unknown"},
        ]}),
        json!({}),
    );
    let wanted = extensions(&shoot, &[std::sync::Arc::new(registration)]);
    assert_eq!(
        wanted.keys().collect::<Vec<_>>(),
        ["shoot-cert", "shoot-dns"]
    );
    assert_eq!(
        wanted["shoot-cert"]["providerConfig"],
        json!({"issuer": "x"})
    );
    assert!(wanted["shoot-dns"].get("providerConfig").is_none());
}

#[test]
fn dns_records_take_the_record_type_from_the_address() {
    for (address, record_type) in [
        ("10.0.0.1", "A"),
        ("fd00::1", "AAAA"),
        ("lb.example.com", "CNAME"),
    ] {
        let spec = dns_record_spec(
            "local",
            "api.s.dev.internal.example.com",
            address,
            120,
            "dnsrecord-s-internal",
            NS,
        );
        assert_eq!(spec["recordType"], record_type, "{address}");
        assert_eq!(spec["values"], json!([address]));
        assert_eq!(spec["ttl"], 120);
    }
}

#[test]
fn backup_entry_needs_seed_backup_and_names_bucket_by_seed_uid() {
    let seed = |backup: Value| -> Seed {
        serde_json::from_value(json!({
            "metadata": {"name": "local", "uid": "seed-uid"},
            "spec": {"provider": {"type": "local", "region": "r"}, "networks": {"pods": "10.1.0.0/16", "services": "10.2.0.0/16"}, "backup": backup},
        }))
        .unwrap()
    };
    let shoot = shoot(
        json!({"seedName": "local", "purpose": "evaluation"}),
        json!({"uid": "status-uid"}),
    );
    let entry = backup_entry(&shoot, &seed(json!({"provider": "local"})), NS, "t").unwrap();
    assert_eq!(entry["metadata"]["name"], format!("{NS}--status-uid"));
    assert_eq!(
        entry["spec"],
        json!({"bucketName": "seed-uid", "seedName": "local"})
    );
    assert_eq!(
        entry["metadata"]["annotations"]["shoot.gardener.cloud/purpose"],
        "evaluation"
    );
    assert_eq!(
        entry["metadata"]["ownerReferences"][0]["blockOwnerDeletion"],
        false
    );
    assert!(backup_entry(&shoot, &seed(Value::Null), NS, "t").is_none());
}

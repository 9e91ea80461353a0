//! What the shared Cluster informer of the seed keeps of a Cluster: only the embedded shoot's
//! identity, as JSON text, instead of the whole embedded CloudProfile, Seed and Shoot (every other
//! cache drops just `metadata.managedFields`, [`seedlet_runtime::watch::slim`]). Its two readers,
//! the Cluster teardown and the ShootState sync, read a Cluster only through
//! `ShootRef::of_cluster`, which reads the text as it reads an embedded shoot.

use seedlet_api::extensions::Cluster;
use seedlet_runtime::watch::slim;
use serde_json::{Map, Value};

/// The Cluster as the teardown and the ShootState sync read it (through `ShootRef::of_cluster`):
/// its own metadata without managedFields, and of the embedded shoot only `metadata.{name,namespace,
/// deletionTimestamp}` and `status.lastOperation`. The embedded CloudProfile and Seed, the rest of
/// the shoot and the providers' configs were about nine tenths of the cached bytes. The identity
/// is kept as its compact JSON text (a string value in `spec.shoot`): as four small maps it took
/// about 2 KB per Cluster, ten times its text, because the store keeps a clone of each object and
/// a cloned `serde_json` map (an `IndexMap`) reserves as many entries as its index table holds.
pub fn identity_view(cluster: &mut Cluster) {
    slim(cluster);
    cluster.spec.cloud_profile = Value::Null;
    cluster.spec.seed = None;
    let shoot = std::mem::take(&mut cluster.spec.shoot);
    cluster.spec.shoot = Value::String(shoot_identity(shoot).to_string());
}

/// The identity of an embedded shoot: what [`identity_view`] keeps.
fn shoot_identity(mut shoot: Value) -> Value {
    let mut kept = Map::new();
    if let Some(metadata) = shoot.get_mut("metadata").and_then(Value::as_object_mut) {
        let mut identity = Map::new();
        for key in ["name", "namespace", "deletionTimestamp"] {
            if let Some(value) = metadata.remove(key) {
                identity.insert(key.to_owned(), value);
            }
        }
        kept.insert("metadata".to_owned(), Value::Object(identity));
    }
    if let Some(operation) = shoot
        .get_mut("status")
        .and_then(|status| status.get_mut("lastOperation"))
        .map(Value::take)
    {
        let mut status = Map::new();
        status.insert("lastOperation".to_owned(), operation);
        kept.insert("status".to_owned(), Value::Object(status));
    }
    Value::Object(kept)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::cluster_shoot::ShootRef;

    fn cluster(shoot: Value) -> Cluster {
        serde_json::from_value(json!({
            "apiVersion": "extensions.gardener.cloud/v1alpha1",
            "kind": "Cluster",
            "metadata": {"name": "shoot--dev--a", "resourceVersion": "7",
                         "managedFields": [{"manager": "seedlet-agent"}]},
            "spec": {
                "cloudProfile": {"kind": "CloudProfile", "spec": {"regions": [{"name": "r"}]}},
                "seed": {"kind": "Seed", "status": {"conditions": [{"type": "GardenletReady"}]}},
                "shoot": shoot,
            },
        }))
        .unwrap()
    }

    fn full_shoot(deleting: bool) -> Value {
        let mut shoot = json!({
            "apiVersion": "core.gardener.cloud/v1beta1",
            "kind": "Shoot",
            "metadata": {"name": "a", "namespace": "garden-dev", "uid": "u",
                         "labels": {"x": "y"}, "annotations": {"a": "b"}},
            "spec": {"provider": {"type": "local", "workers": [{"name": "w"}]}, "region": "r"},
            "status": {"technicalID": "shoot--dev--a",
                       "lastOperation": {"type": "Migrate", "state": "Processing",
                                         "progress": 40, "description": "d",
                                         "lastUpdateTime": "2026-01-01T00:00:00Z"},
                       "conditions": [{"type": "APIServerAvailable", "status": "True"}]},
        });
        if deleting {
            shoot["metadata"]["deletionTimestamp"] = json!("2026-01-01T00:00:00Z");
        }
        shoot
    }

    #[test]
    fn identity_view_reads_as_the_same_shoot_ref_as_the_full_cluster() {
        for deleting in [false, true] {
            let full = cluster(full_shoot(deleting));
            let mut view = full.clone();
            identity_view(&mut view);
            assert_eq!(ShootRef::of_cluster(&view), ShootRef::of_cluster(&full));
            assert!(ShootRef::of_cluster(&view).is_some());
            assert_eq!(view.metadata.name, full.metadata.name);
            assert_eq!(view.metadata.resource_version.as_deref(), Some("7"));
            assert!(view.metadata.managed_fields.is_none());
        }
    }

    #[test]
    fn identity_view_drops_the_embedded_profile_seed_and_shoot_body() {
        let mut view = cluster(full_shoot(false));
        identity_view(&mut view);
        assert_eq!(view.spec.cloud_profile, Value::Null);
        assert!(view.spec.seed.is_none());
        let Value::String(text) = &view.spec.shoot else {
            panic!("the identity is kept as text: {}", view.spec.shoot);
        };
        assert_eq!(
            serde_json::from_str::<Value>(text).unwrap(),
            json!({
                "metadata": {"name": "a", "namespace": "garden-dev"},
                "status": {"lastOperation": {"type": "Migrate", "state": "Processing",
                                             "progress": 40, "description": "d",
                                             "lastUpdateTime": "2026-01-01T00:00:00Z"}},
            })
        );
    }

    #[test]
    fn identity_view_of_a_cluster_without_shoot_identity_stays_without_one() {
        let full = cluster(json!({"spec": {}}));
        let mut view = full.clone();
        identity_view(&mut view);
        assert!(ShootRef::of_cluster(&view).is_none());
        assert!(ShootRef::of_cluster(&full).is_none());
    }
}

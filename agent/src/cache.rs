//! What the agent's reflector caches keep of an object. Every cached object loses
//! `metadata.managedFields` (no controller reads them; the Cluster sync drops them when embedding
//! anyway), and the Cluster teardown's cache keeps only the embedded shoot's identity instead of
//! the whole embedded CloudProfile, Seed and Shoot. Chain [`slim`] (or a kind's own view) with
//! `WatchStreamExt::modify` between the watch and `.reflect`.

use std::fmt::Debug;

use kube::runtime::controller::Controller;
use kube::runtime::{WatchStreamExt, reflector, watcher};
use kube::{Api, Resource};
use seedlet_api::extensions::Cluster;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use crate::watch_backoff::{NoTriggerBackoff, watch_backoff};

/// Drops what no agent controller reads from a cached object: `metadata.managedFields`.
pub fn slim<K: Resource>(object: &mut K) {
    object.meta_mut().managed_fields = None;
}

/// The Cluster as the teardown reads it (through `ShootRef::of_cluster`): its own metadata
/// without managedFields, and of the embedded shoot only `metadata.{name,namespace,
/// deletionTimestamp}` and `status.lastOperation`. The embedded CloudProfile and Seed, the rest of
/// the shoot and the providers' configs were about nine tenths of the cached bytes.
pub fn teardown_view(cluster: &mut Cluster) {
    slim(cluster);
    cluster.spec.cloud_profile = Value::Null;
    cluster.spec.seed = None;
    let shoot = std::mem::take(&mut cluster.spec.shoot);
    cluster.spec.shoot = shoot_identity(shoot);
}

/// The identity of an embedded shoot: what [`teardown_view`] keeps.
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

/// A controller over `api` whose cache holds the objects after `view` (e.g. [`slim`]); like
/// [`crate::watch_backoff::controller`], its watch backs off with [`watch_backoff`] and the
/// controller adds no trigger backoff on top.
pub fn controller<K>(api: Api<K>, config: watcher::Config, view: fn(&mut K)) -> Controller<K>
where
    K: Resource<DynamicType = ()> + Clone + DeserializeOwned + Debug + Send + Sync + 'static,
{
    let (reader, writer) = reflector::store();
    let objects = watcher(api, config)
        .backoff(watch_backoff())
        .modify(view)
        .reflect(writer)
        .applied_objects();
    Controller::for_stream(objects, reader).trigger_backoff(NoTriggerBackoff)
}

#[cfg(test)]
mod tests {
    use seedlet_api::core::Shoot;
    use serde_json::json;

    use super::*;
    use crate::shootstate::schedule::ShootRef;

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
    fn slim_drops_managed_fields_and_keeps_everything_else() {
        let mut shoot: Shoot = serde_json::from_value(json!({
            "metadata": {"name": "a", "namespace": "garden-dev", "resourceVersion": "3",
                         "managedFields": [{"manager": "x"}]},
            "spec": {"provider": {"type": "local"}, "region": "r"},
        }))
        .unwrap();
        let mut expected = shoot.clone();
        expected.metadata.managed_fields = None;
        slim(&mut shoot);
        assert_eq!(shoot, expected);
    }

    #[test]
    fn teardown_view_reads_as_the_same_shoot_ref_as_the_full_cluster() {
        for deleting in [false, true] {
            let full = cluster(full_shoot(deleting));
            let mut view = full.clone();
            teardown_view(&mut view);
            assert_eq!(ShootRef::of_cluster(&view), ShootRef::of_cluster(&full));
            assert!(ShootRef::of_cluster(&view).is_some());
            assert_eq!(view.metadata.name, full.metadata.name);
            assert_eq!(view.metadata.resource_version.as_deref(), Some("7"));
            assert!(view.metadata.managed_fields.is_none());
        }
    }

    #[test]
    fn teardown_view_drops_the_embedded_profile_seed_and_shoot_body() {
        let mut view = cluster(full_shoot(false));
        teardown_view(&mut view);
        assert_eq!(view.spec.cloud_profile, Value::Null);
        assert!(view.spec.seed.is_none());
        assert_eq!(
            view.spec.shoot,
            json!({
                "metadata": {"name": "a", "namespace": "garden-dev"},
                "status": {"lastOperation": {"type": "Migrate", "state": "Processing",
                                             "progress": 40, "description": "d",
                                             "lastUpdateTime": "2026-01-01T00:00:00Z"}},
            })
        );
    }

    #[test]
    fn teardown_view_of_a_cluster_without_shoot_identity_stays_without_one() {
        let full = cluster(json!({"spec": {}}));
        let mut view = full.clone();
        teardown_view(&mut view);
        assert!(ShootRef::of_cluster(&view).is_none());
        assert!(ShootRef::of_cluster(&full).is_none());
    }
}

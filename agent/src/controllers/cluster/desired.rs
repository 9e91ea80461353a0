//! Pure Cluster-sync decisions: which shoots belong to this seed, their technical ID, the desired
//! `Cluster` spec, the control-plane namespace's labels and annotations (spec §1.6).

use std::collections::{BTreeMap, BTreeSet};
use std::hash::{Hash, Hasher};

use seedlet_api::core::{Project, Seed, Shoot};
use seedlet_api::extensions::{ClusterSpec, embed};
use seedlet_api::names::{annotations, labels};
use serde_json::Value;

/// High-availability failure tolerance that spreads over zones.
const FAILURE_TOLERANCE_ZONE: &str = "zone";
/// Zones a `zone` control plane spreads over.
const ZONES_FOR_ZONE_TOLERANCE: usize = 3;

/// Whether the shoot's control plane is (or is being moved) on `seed`: `spec.seedName`, or during
/// a migration `status.seedName`.
pub fn is_scheduled_to(shoot: &Shoot, seed: &str) -> bool {
    shoot.spec.seed_name.as_deref() == Some(seed)
        || shoot
            .status
            .as_ref()
            .and_then(|status| status.seed_name.as_deref())
            == Some(seed)
}

/// The name of the Project whose `spec.namespace` is `namespace`.
pub fn project_of<'a>(
    projects: impl IntoIterator<Item = &'a Project>,
    namespace: &str,
) -> Option<String> {
    projects
        .into_iter()
        .find(|project| project.spec.namespace.as_deref() == Some(namespace))
        .and_then(|project| project.metadata.name.clone())
}

/// The control-plane namespace (= Cluster name): the stored technical ID wins, which keeps the
/// pre-2018 shape `shoot-<project>-<name>`; otherwise `shoot--<project>--<name>`.
pub fn control_plane_namespace(shoot: &Shoot, project: &str) -> String {
    shoot.technical_id(project)
}

/// The Cluster spec: the three embedded objects.
///
/// # Errors
/// When an object cannot be encoded (not for well-formed Gardener types).
pub fn cluster_spec(
    shoot: &Shoot,
    seed: &Seed,
    cloud_profile: Value,
) -> Result<ClusterSpec, serde_json::Error> {
    Ok(ClusterSpec {
        cloud_profile,
        seed: Some(embed(seed)?),
        shoot: embed(shoot)?,
    })
}

/// The namespace labels of spec §1.6 as a merge-patch map: desired values, and `null` for
/// `extensions.gardener.cloud/<type>` labels of types no longer required.
pub fn namespace_labels(
    shoot: &Shoot,
    seed: &Seed,
    extension_types: &BTreeSet<String>,
    existing: &BTreeMap<String, String>,
) -> BTreeMap<String, Option<String>> {
    let mut out: BTreeMap<String, Option<String>> = existing
        .keys()
        .filter(|key| key.starts_with(labels::EXTENSION_TYPE_PREFIX))
        .map(|key| (key.clone(), None))
        .collect();
    let mut set = |key: &str, value: &str| {
        out.insert(key.to_owned(), Some(value.to_owned()));
    };
    set(labels::ROLE, labels::ROLE_SHOOT);
    set(labels::SEED_PROVIDER, &seed.spec.provider.type_);
    set(labels::SHOOT_PROVIDER, &shoot.spec.provider.type_);
    if let Some(network) = shoot
        .spec
        .networking
        .as_ref()
        .and_then(|networking| networking.type_.as_deref())
    {
        set(labels::NETWORKING_PROVIDER, network);
    }
    for type_ in extension_types {
        set(&format!("{}{type_}", labels::EXTENSION_TYPE_PREFIX), "true");
    }
    let backup = seed
        .spec
        .backup
        .as_ref()
        .map_or(seed.spec.provider.type_.as_str(), |backup| {
            backup.provider.as_str()
        });
    set(labels::BACKUP_PROVIDER, backup);
    set(labels::POD_SECURITY_ENFORCE, "privileged");
    set(labels::HA_CONSIDER, "true");
    out
}

/// `spec.controlPlane.highAvailability.failureTolerance.type` (`node`, `zone`), or `""`.
pub fn failure_tolerance_type(shoot: &Shoot) -> &str {
    shoot
        .spec
        .control_plane
        .as_ref()
        .and_then(|control_plane| control_plane.high_availability.as_ref())
        .map_or("", |availability| {
            availability.failure_tolerance.type_.as_str()
        })
}

/// The namespace annotations of spec §1.6: the shoot UID, the failure tolerance type and the
/// zones. Zones are kept while the tolerance type is unchanged; otherwise 3 zones for `zone` and
/// 1 else are chosen from the seed's zones, rotated by a hash of the namespace name so that
/// control planes spread deterministically.
pub fn namespace_annotations(
    shoot: &Shoot,
    seed: &Seed,
    namespace: &str,
    existing: &BTreeMap<String, String>,
) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    if let Some(uid) = shoot
        .status
        .as_ref()
        .and_then(|status| status.uid.as_deref())
    {
        out.insert(annotations::SHOOT_UID.to_owned(), uid.to_owned());
    }
    let tolerance = failure_tolerance_type(shoot);
    out.insert(
        annotations::HA_FAILURE_TOLERANCE_TYPE.to_owned(),
        tolerance.to_owned(),
    );
    let unchanged = existing
        .get(annotations::HA_FAILURE_TOLERANCE_TYPE)
        .map(String::as_str)
        == Some(tolerance);
    match existing.get(annotations::HA_ZONES) {
        Some(zones) if unchanged => {
            out.insert(annotations::HA_ZONES.to_owned(), zones.clone());
        }
        _ => {
            let count = if tolerance == FAILURE_TOLERANCE_ZONE {
                ZONES_FOR_ZONE_TOLERANCE
            } else {
                1
            };
            let zones = choose_zones(&seed.spec.provider.zones, count, namespace);
            if !zones.is_empty() {
                out.insert(annotations::HA_ZONES.to_owned(), zones.join(","));
            }
        }
    }
    out
}

/// `count` distinct zones (fewer if the seed has fewer), starting at a position derived from
/// `key`.
pub fn choose_zones(zones: &[String], count: usize, key: &str) -> Vec<String> {
    let mut sorted: Vec<&String> = zones.iter().collect::<BTreeSet<_>>().into_iter().collect();
    if sorted.is_empty() {
        return Vec::new();
    }
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    key.hash(&mut hasher);
    let start = usize::try_from(hasher.finish() % sorted.len() as u64).unwrap_or(0);
    sorted.rotate_left(start);
    let mut chosen: Vec<String> = sorted.into_iter().take(count).cloned().collect();
    chosen.sort();
    chosen
}

#[cfg(test)]
mod tests {
    use seedlet_api::names::technical_id;
    use serde_json::json;

    use super::*;

    fn shoot(value: Value) -> Shoot {
        serde_json::from_value(value).unwrap()
    }

    fn base_shoot() -> Shoot {
        shoot(json!({
            "metadata": {"name": "foo", "namespace": "garden-dev", "uid": "u1"},
            "spec": {"provider": {"type": "aws"}, "region": "eu", "seedName": "local",
                     "networking": {"type": "calico"},
                     "extensions": [{"type": "shoot-dns"}, {"type": "auto", "disabled": true}]},
            "status": {"uid": "u1"}
        }))
    }

    fn seed(backup: Option<&str>) -> Seed {
        let mut value = json!({
            "metadata": {"name": "local"},
            "spec": {"provider": {"type": "local", "region": "r", "zones": ["c", "a", "b", "d"]},
                     "networks": {"pods": "10.0.0.0/16", "services": "10.1.0.0/16"}}
        });
        if let Some(provider) = backup {
            value["spec"]["backup"] = json!({"provider": provider});
        }
        serde_json::from_value(value).unwrap()
    }

    #[test]
    fn shoot_is_scheduled_by_spec_or_during_migration_by_status() {
        let mut shoot = base_shoot();
        assert!(is_scheduled_to(&shoot, "local"));
        shoot.spec.seed_name = Some("other".into());
        assert!(!is_scheduled_to(&shoot, "local"));
        shoot.status.as_mut().unwrap().seed_name = Some("local".into());
        assert!(is_scheduled_to(&shoot, "local"));
    }

    #[test]
    fn control_plane_namespace_keeps_the_legacy_technical_id() {
        let mut shoot = base_shoot();
        assert_eq!(control_plane_namespace(&shoot, "dev"), "shoot--dev--foo");
        shoot.status.as_mut().unwrap().technical_id = Some("shoot-dev-foo".into());
        assert_eq!(control_plane_namespace(&shoot, "dev"), "shoot-dev-foo");
        assert_eq!(
            crate::cluster_shoot::stored_technical_id(&shoot),
            Some("shoot-dev-foo")
        );
        assert_eq!(technical_id::short("shoot-dev-foo"), "dev-foo");
        assert!(technical_id::is_shoot_namespace("shoot-dev-foo"));
        assert!(technical_id::is_shoot_namespace("shoot--dev--foo"));
    }

    #[test]
    fn project_of_finds_the_project_owning_the_namespace() {
        let project = |name: &str, namespace: &str| {
            let mut project = Project::new(name, Default::default());
            project.spec.namespace = Some(namespace.into());
            project
        };
        let projects = [project("dev", "garden-dev"), project("ops", "garden-ops")];
        assert_eq!(project_of(&projects, "garden-ops").as_deref(), Some("ops"));
        assert_eq!(project_of(&projects, "garden-x"), None);
    }

    #[test]
    fn cluster_spec_embeds_full_objects_with_type_meta() {
        let spec =
            cluster_spec(&base_shoot(), &seed(None), json!({"kind": "CloudProfile"})).unwrap();
        assert_eq!(spec.shoot["kind"], "Shoot");
        assert_eq!(spec.shoot["apiVersion"], "core.gardener.cloud/v1beta1");
        assert_eq!(spec.seed.as_ref().unwrap()["kind"], "Seed");
        assert_eq!(spec.shoot["status"]["uid"], "u1");
    }

    #[test]
    fn namespace_labels_follow_the_spec_table_and_remove_stale_extension_labels() {
        let existing = BTreeMap::from([
            (
                "extensions.gardener.cloud/old".to_owned(),
                "true".to_owned(),
            ),
            ("custom".to_owned(), "kept".to_owned()),
        ]);
        let types = BTreeSet::from(["shoot-dns".to_owned()]);
        let labels = namespace_labels(&base_shoot(), &seed(None), &types, &existing);
        let get = |key: &str| labels.get(key).cloned().flatten();
        assert_eq!(get("gardener.cloud/role").as_deref(), Some("shoot"));
        assert_eq!(
            get("seed.gardener.cloud/provider").as_deref(),
            Some("local")
        );
        assert_eq!(get("shoot.gardener.cloud/provider").as_deref(), Some("aws"));
        assert_eq!(
            get("networking.shoot.gardener.cloud/provider").as_deref(),
            Some("calico")
        );
        assert_eq!(
            get("extensions.gardener.cloud/shoot-dns").as_deref(),
            Some("true")
        );
        assert_eq!(labels.get("extensions.gardener.cloud/old"), Some(&None));
        assert_eq!(
            get("backup.gardener.cloud/provider").as_deref(),
            Some("local")
        );
        assert_eq!(
            get("pod-security.kubernetes.io/enforce").as_deref(),
            Some("privileged")
        );
        assert!(!labels.contains_key("custom"));
        let with_backup = namespace_labels(&base_shoot(), &seed(Some("s3")), &types, &existing);
        assert_eq!(
            with_backup.get("backup.gardener.cloud/provider"),
            Some(&Some("s3".to_owned()))
        );
    }

    #[test]
    fn namespace_annotations_pick_three_zones_for_zone_tolerance_and_keep_them_while_unchanged() {
        let mut shoot = base_shoot();
        shoot.spec.control_plane = Some(
            serde_json::from_value(
                json!({"highAvailability": {"failureTolerance": {"type": "zone"}}}),
            )
            .unwrap(),
        );
        let fresh = namespace_annotations(&shoot, &seed(None), "shoot--dev--foo", &BTreeMap::new());
        assert_eq!(
            fresh["high-availability-config.resources.gardener.cloud/failure-tolerance-type"],
            "zone"
        );
        assert_eq!(fresh["shoot.gardener.cloud/uid"], "u1");
        let zones = &fresh["high-availability-config.resources.gardener.cloud/zones"];
        assert_eq!(zones.split(',').count(), 3);
        let existing = BTreeMap::from([
            (
                annotations::HA_FAILURE_TOLERANCE_TYPE.to_owned(),
                "zone".to_owned(),
            ),
            (annotations::HA_ZONES.to_owned(), "x,y,z".to_owned()),
        ]);
        let kept = namespace_annotations(&shoot, &seed(None), "shoot--dev--foo", &existing);
        assert_eq!(kept[annotations::HA_ZONES], "x,y,z");
        let single =
            namespace_annotations(&base_shoot(), &seed(None), "shoot--dev--foo", &existing);
        assert_eq!(single[annotations::HA_FAILURE_TOLERANCE_TYPE], "");
        assert_eq!(single[annotations::HA_ZONES].split(',').count(), 1);
    }

    #[test]
    fn choose_zones_is_deterministic_and_bounded_by_the_seed_zones() {
        let zones: Vec<String> = ["a", "b"].iter().map(|z| (*z).to_owned()).collect();
        assert_eq!(choose_zones(&zones, 3, "x"), ["a", "b"]);
        assert_eq!(choose_zones(&zones, 1, "k"), choose_zones(&zones, 1, "k"));
        assert!(choose_zones(&[], 1, "k").is_empty());
    }
}

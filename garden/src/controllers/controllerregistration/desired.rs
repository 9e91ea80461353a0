//! Pure decisions of the seed reconciler (spec §3.1 steps 3–6): which ControllerRegistrations a
//! Seed wants, seed selector matching, the desired ControllerInstallation spec, its hash labels,
//! and which existing installations go away.

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use seedlet_api::common::ObjectReference;
use seedlet_api::conditions;
use seedlet_api::core::{
    ControllerDeployment, ControllerDeploymentPolicy, ControllerInstallation,
    ControllerInstallationSpec, ControllerRegistration, Seed,
};
use seedlet_api::names::{condition_types, labels};
use sha2::{Digest, Sha256};

use super::wanted::kind_type;

/// Why no set of registrations can be computed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WantedError {
    /// A wanted `Kind/type` is served by no registration.
    #[error(
        "need to install an extension controller for {0:?} but no appropriate ControllerRegistration found"
    )]
    NoRegistration(String),
}

/// Inputs of [`wanted_registrations`] besides the registrations themselves.
#[derive(Debug, Clone, Copy)]
pub struct Demand<'a> {
    /// The Seed.
    pub seed: &'a Seed,
    /// The wanted `Kind/type` set W.
    pub kind_types: &'a BTreeSet<String>,
    /// Number of Shoots on the Seed.
    pub shoot_count: usize,
    /// Installations of this Seed (their `Required=True` keeps their registration wanted).
    pub installations: &'a [ControllerInstallation],
}

/// The names of the registrations R the Seed wants: `Always` ones (unless the Seed is being
/// deleted), `AlwaysExceptNoShoots` ones when it has Shoots, every registration serving a wanted
/// `Kind/type`, and those of installations still `Required`; finally only those whose
/// `seedSelector` matches the Seed's labels.
///
/// # Errors
/// [`WantedError::NoRegistration`] for a wanted `Kind/type` no registration serves.
pub fn wanted_registrations(
    registrations: &[ControllerRegistration],
    demand: &Demand<'_>,
) -> Result<BTreeSet<String>, WantedError> {
    let seed_deleting = demand.seed.metadata.deletion_timestamp.is_some();
    let mut wanted = BTreeSet::new();
    let mut serving: BTreeMap<String, Vec<&str>> = BTreeMap::new();
    for registration in registrations {
        let Some(name) = registration.metadata.name.as_deref() else {
            continue;
        };
        let deleting = registration.metadata.deletion_timestamp.is_some();
        let policy_wants = match registration.policy() {
            ControllerDeploymentPolicy::Always => !seed_deleting && !deleting,
            ControllerDeploymentPolicy::AlwaysExceptNoShoots => demand.shoot_count > 0 && !deleting,
            ControllerDeploymentPolicy::OnDemand => false,
        };
        if policy_wants {
            wanted.insert(name.to_owned());
        }
        for resource in &registration.spec.resources {
            serving
                .entry(kind_type(&resource.kind, &resource.type_))
                .or_default()
                .push(name);
        }
    }
    for kind_type in demand.kind_types {
        let names = serving
            .get(kind_type)
            .ok_or_else(|| WantedError::NoRegistration(kind_type.clone()))?;
        wanted.extend(names.iter().map(|name| (*name).to_owned()));
    }
    for installation in demand.installations {
        let required = conditions::find(installation.conditions(), condition_types::REQUIRED)
            .is_some_and(|c| c.is_true());
        if required {
            wanted.insert(installation.spec.registration_ref.name.clone());
        }
    }
    let seed_labels = demand.seed.metadata.labels.clone().unwrap_or_default();
    let selectors: BTreeMap<&str, Option<&LabelSelector>> = registrations
        .iter()
        .filter_map(|r| {
            let selector = r
                .spec
                .deployment
                .as_ref()
                .and_then(|d| d.seed_selector.as_ref());
            Some((r.metadata.name.as_deref()?, selector))
        })
        .collect();
    wanted.retain(|name| {
        selectors
            .get(name.as_str())
            .is_none_or(|selector| selector_matches(*selector, &seed_labels))
    });
    Ok(wanted)
}

/// Whether `labels` match a Kubernetes label selector; an absent selector matches everything, an
/// empty one too. An unknown operator never matches.
pub fn selector_matches(
    selector: Option<&LabelSelector>,
    labels: &BTreeMap<String, String>,
) -> bool {
    let Some(selector) = selector else {
        return true;
    };
    let labels_match = selector
        .match_labels
        .iter()
        .flatten()
        .all(|(key, value)| labels.get(key) == Some(value));
    let expressions_match = selector
        .match_expressions
        .iter()
        .flatten()
        .all(|expression| {
            let values = expression.values.as_deref().unwrap_or_default();
            let value = labels.get(&expression.key);
            match expression.operator.as_str() {
                "In" => value.is_some_and(|v| values.contains(v)),
                "NotIn" => value.is_none_or(|v| !values.contains(v)),
                "Exists" => value.is_some(),
                "DoesNotExist" => value.is_none(),
                _ => false,
            }
        });
    labels_match && expressions_match
}

/// A reference by name and resource version, as the seed reconciler writes them.
pub fn versioned_reference(name: &str, resource_version: Option<&str>) -> ObjectReference {
    ObjectReference {
        name: name.to_owned(),
        resource_version: resource_version.map(str::to_owned),
        ..ObjectReference::default()
    }
}

/// The desired spec of the installation of `registration` on `seed`: `registrationRef`, `seedRef`,
/// `deploymentRef` (name and resource version each) and `resourceRefs` (already resolved).
pub fn desired_spec(
    registration: &ControllerRegistration,
    deployment: Option<&ControllerDeployment>,
    seed: &Seed,
    resource_refs: Vec<ObjectReference>,
) -> ControllerInstallationSpec {
    let reference = |meta: &kube::api::ObjectMeta| {
        versioned_reference(
            meta.name.as_deref().unwrap_or_default(),
            meta.resource_version.as_deref(),
        )
    };
    ControllerInstallationSpec {
        registration_ref: reference(&registration.metadata),
        deployment_ref: deployment.map(|deployment| reference(&deployment.metadata)),
        seed_ref: Some(reference(&seed.metadata)),
        shoot_ref: None,
        resource_refs,
        extra: Default::default(),
    }
}

/// The hash labels of an installation: `seed-spec-hash`, `registration-spec-hash` and, with a
/// deployment, `deployment-hash`, each the first 16 hex digits of the SHA-256 of the JSON form.
///
/// Upstream hashes only string, bool and map values of the JSON (lists and numbers are skipped);
/// seedlet hashes the whole JSON so that every change shows. gardenlet ignores these labels.
pub fn hash_labels(
    registration: &ControllerRegistration,
    deployment: Option<&ControllerDeployment>,
    seed: &Seed,
) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    out.insert(labels::SEED_SPEC_HASH.to_owned(), short_hash(&seed.spec));
    out.insert(
        labels::REGISTRATION_SPEC_HASH.to_owned(),
        short_hash(&registration.spec),
    );
    if let Some(deployment) = deployment {
        out.insert(
            labels::DEPLOYMENT_HASH.to_owned(),
            short_hash(&deployment.spec),
        );
    }
    out
}

/// First 16 hex digits of the SHA-256 of `value`'s JSON encoding.
pub fn short_hash<T: serde::Serialize>(value: &T) -> String {
    // Serializing plain API structs to a Vec cannot fail; an empty input still hashes.
    let bytes = serde_json::to_vec(value).unwrap_or_default();
    let digest = Sha256::digest(&bytes);
    digest
        .iter()
        .take(8)
        .map(|byte| format!("{byte:02x}"))
        .collect()
}

/// Keeps the current installation's `seedRef`, `registrationRef` and `deploymentRef` (with their
/// old resource versions) in `spec` while the matching hash label (`seed-spec-hash`,
/// `registration-spec-hash`, `deployment-hash`) in `labels` is unchanged.
///
/// [QUIRK] upstream writes the objects' latest resource versions on every reconcile and gardenlet
/// redeploys on each change, so every Seed status write (ExtensionsReady, other conditions) and
/// every finalizer added to a registration redeploys all installations of the Seed — quadratic
/// work when many extensions are registered. Here only spec changes move the references; the agent
/// watches the Seed's labels, annotations and cluster identity itself.
pub fn keep_unchanged_references(
    current: &ControllerInstallation,
    labels: &BTreeMap<String, String>,
    spec: &mut ControllerInstallationSpec,
) {
    let current_labels = current.metadata.labels.clone().unwrap_or_default();
    let unchanged = |label: &str| {
        labels
            .get(label)
            .is_some_and(|hash| current_labels.get(label) == Some(hash))
    };
    let same_name = |a: Option<&ObjectReference>, b: Option<&ObjectReference>| matches!((a, b), (Some(a), Some(b)) if a.name == b.name);
    if unchanged(labels::SEED_SPEC_HASH)
        && same_name(current.spec.seed_ref.as_ref(), spec.seed_ref.as_ref())
    {
        spec.seed_ref.clone_from(&current.spec.seed_ref);
    }
    if unchanged(labels::REGISTRATION_SPEC_HASH)
        && current.spec.registration_ref.name == spec.registration_ref.name
    {
        spec.registration_ref = current.spec.registration_ref.clone();
    }
    if unchanged(labels::DEPLOYMENT_HASH)
        && same_name(
            current.spec.deployment_ref.as_ref(),
            spec.deployment_ref.as_ref(),
        )
    {
        spec.deployment_ref.clone_from(&current.spec.deployment_ref);
    }
}

/// Names of this Seed's installations whose registration is not wanted any more.
pub fn obsolete_installations<'a>(
    installations: &'a [ControllerInstallation],
    wanted: &BTreeSet<String>,
) -> Vec<&'a ControllerInstallation> {
    installations
        .iter()
        .filter(|installation| !wanted.contains(&installation.spec.registration_ref.name))
        .collect()
}

#[cfg(test)]
mod tests {
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelectorRequirement, Time};
    use serde_json::json;

    use super::*;

    fn registration(
        name: &str,
        policy: Option<&str>,
        resources: serde_json::Value,
    ) -> ControllerRegistration {
        let mut deployment = json!({"deploymentRefs": [{"name": name}]});
        if let Some(policy) = policy {
            deployment["policy"] = json!(policy);
        }
        serde_json::from_value(json!({"metadata": {"name": name, "resourceVersion": "7"},
            "spec": {"resources": resources, "deployment": deployment}}))
        .unwrap()
    }

    fn seed(labels: serde_json::Value) -> Seed {
        serde_json::from_value(json!({"metadata": {"name": "s1", "labels": labels, "resourceVersion": "3"},
            "spec": {"provider": {"type": "local", "region": "r"}, "networks": {"pods": "p", "services": "s"}}}))
        .unwrap()
    }

    fn installation(registration: &str, required: Option<&str>) -> ControllerInstallation {
        let conditions = required
            .map(|status| {
                json!([{"type": "Required", "status": status, "reason": "r", "message": "m",
                    "lastTransitionTime": "2024-01-01T00:00:00Z", "lastUpdateTime": "2024-01-01T00:00:00Z"}])
            })
            .unwrap_or(json!([]));
        serde_json::from_value(json!({"metadata": {"name": format!("{registration}-abc")},
            "spec": {"registrationRef": {"name": registration}, "seedRef": {"name": "s1"}},
            "status": {"conditions": conditions}}))
        .unwrap()
    }

    fn names(items: &[&str]) -> BTreeSet<String> {
        items.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn wanted_registrations_follow_policy_kind_types_and_required() {
        let registrations = [
            registration(
                "always",
                Some("Always"),
                json!([{"kind": "Extension", "type": "a"}]),
            ),
            registration(
                "except",
                Some("AlwaysExceptNoShoots"),
                json!([{"kind": "Extension", "type": "b"}]),
            ),
            registration(
                "on-demand",
                None,
                json!([{"kind": "Worker", "type": "local"}]),
            ),
            registration("unused", None, json!([{"kind": "Extension", "type": "u"}])),
            registration(
                "still-required",
                None,
                json!([{"kind": "Extension", "type": "r"}]),
            ),
        ];
        let seed = seed(json!({}));
        let installations = [
            installation("still-required", Some("True")),
            installation("unused", Some("False")),
        ];
        let kind_types = names(&["Worker/local"]);
        let cases = [
            (0, names(&["always", "on-demand", "still-required"])),
            (
                2,
                names(&["always", "except", "on-demand", "still-required"]),
            ),
        ];
        for (shoot_count, expected) in cases {
            let demand = Demand {
                seed: &seed,
                kind_types: &kind_types,
                shoot_count,
                installations: &installations,
            };
            assert_eq!(
                wanted_registrations(&registrations, &demand).unwrap(),
                expected,
                "shoots={shoot_count}"
            );
        }
    }

    #[test]
    fn wanted_registrations_fail_when_no_registration_serves_a_kind_type() {
        let seed = seed(json!({}));
        let kind_types = names(&["Network/calico"]);
        let demand = Demand {
            seed: &seed,
            kind_types: &kind_types,
            shoot_count: 1,
            installations: &[],
        };
        let error = wanted_registrations(&[], &demand).unwrap_err();
        assert_eq!(
            error.to_string(),
            "need to install an extension controller for \"Network/calico\" but no appropriate ControllerRegistration found"
        );
    }

    #[test]
    fn always_registrations_are_not_wanted_while_seed_or_registration_is_deleting() {
        let mut deleting = registration("deleting", Some("Always"), json!([]));
        deleting.metadata.deletion_timestamp = Some(Time(jiff::Timestamp::UNIX_EPOCH));
        let registrations = [registration("always", Some("Always"), json!([])), deleting];
        let mut seed = seed(json!({}));
        let empty = BTreeSet::new();
        let demand = |seed: &Seed| -> BTreeSet<String> {
            wanted_registrations(
                &registrations,
                &Demand {
                    seed,
                    kind_types: &empty,
                    shoot_count: 0,
                    installations: &[],
                },
            )
            .unwrap()
        };
        assert_eq!(demand(&seed), names(&["always"]));
        seed.metadata.deletion_timestamp = Some(Time(jiff::Timestamp::UNIX_EPOCH));
        assert!(demand(&seed).is_empty());
    }

    #[test]
    fn seed_selector_filters_wanted_registrations() {
        let mut selective = registration("selective", Some("Always"), json!([]));
        if let Some(deployment) = selective.spec.deployment.as_mut() {
            deployment.seed_selector = Some(LabelSelector {
                match_labels: Some([("env".to_owned(), "prod".to_owned())].into()),
                match_expressions: None,
            });
        }
        let registrations = [selective];
        let empty = BTreeSet::new();
        for (labels, expected) in [
            (json!({"env": "prod"}), names(&["selective"])),
            (json!({"env": "dev"}), names(&[])),
        ] {
            let seed = seed(labels);
            let demand = Demand {
                seed: &seed,
                kind_types: &empty,
                shoot_count: 0,
                installations: &[],
            };
            assert_eq!(
                wanted_registrations(&registrations, &demand).unwrap(),
                expected
            );
        }
    }

    #[test]
    fn selector_matches_labels_and_every_operator() {
        let labels: BTreeMap<String, String> = [("env".to_owned(), "prod".to_owned())].into();
        let expression = |operator: &str, values: &[&str]| LabelSelector {
            match_labels: None,
            match_expressions: Some(vec![LabelSelectorRequirement {
                key: "env".into(),
                operator: operator.into(),
                values: Some(values.iter().map(|v| (*v).to_owned()).collect()),
            }]),
        };
        let cases = [
            (None, true),
            (Some(LabelSelector::default()), true),
            (Some(expression("In", &["prod", "x"])), true),
            (Some(expression("In", &["dev"])), false),
            (Some(expression("NotIn", &["prod"])), false),
            (Some(expression("NotIn", &["dev"])), true),
            (Some(expression("Exists", &[])), true),
            (Some(expression("DoesNotExist", &[])), false),
            (Some(expression("Bogus", &[])), false),
        ];
        for (selector, expected) in cases {
            assert_eq!(
                selector_matches(selector.as_ref(), &labels),
                expected,
                "{selector:?}"
            );
        }
    }

    #[test]
    fn desired_spec_references_registration_deployment_and_seed_with_versions() {
        let registration = registration("ext", None, json!([]));
        let mut deployment = ControllerDeployment::default();
        deployment.metadata.name = Some("ext".into());
        deployment.metadata.resource_version = Some("9".into());
        let spec = desired_spec(
            &registration,
            Some(&deployment),
            &seed(json!({})),
            Vec::new(),
        );
        assert_eq!(spec.registration_ref, versioned_reference("ext", Some("7")));
        assert_eq!(
            spec.deployment_ref,
            Some(versioned_reference("ext", Some("9")))
        );
        assert_eq!(spec.seed_ref, Some(versioned_reference("s1", Some("3"))));
    }

    #[test]
    fn hash_labels_are_sixteen_hex_digits_and_change_with_the_spec() {
        let registration = registration("ext", None, json!([]));
        let seed_a = seed(json!({}));
        let mut seed_b = seed_a.clone();
        seed_b.spec.provider.region = "other".into();
        let a = hash_labels(&registration, None, &seed_a);
        let b = hash_labels(&registration, None, &seed_b);
        assert_eq!(a.len(), 2);
        assert!(
            a.values()
                .all(|v| v.len() == 16 && v.chars().all(|c| c.is_ascii_hexdigit()))
        );
        assert_ne!(a[labels::SEED_SPEC_HASH], b[labels::SEED_SPEC_HASH]);
        assert_eq!(
            a[labels::REGISTRATION_SPEC_HASH],
            b[labels::REGISTRATION_SPEC_HASH]
        );
    }

    #[test]
    fn references_keep_their_versions_until_a_spec_hash_changes() {
        let registration = registration("ext", None, json!([]));
        let mut seed = seed(json!({}));
        let deployment: ControllerDeployment =
            serde_json::from_value(json!({"metadata": {"name": "ext", "resourceVersion": "9"}}))
                .unwrap();
        let labels = hash_labels(&registration, Some(&deployment), &seed);
        let mut current = ControllerInstallation::new(
            "ext-abc",
            desired_spec(&registration, Some(&deployment), &seed, Vec::new()),
        );
        current.metadata.labels = Some(labels.clone());

        // Only resource versions moved (status writes, finalizers): references stay as they are.
        seed.metadata.resource_version = Some("4".into());
        let mut newer_registration = registration.clone();
        newer_registration.metadata.resource_version = Some("8".into());
        let mut spec = desired_spec(&newer_registration, Some(&deployment), &seed, Vec::new());
        keep_unchanged_references(&current, &labels, &mut spec);
        assert_eq!(spec.seed_ref, current.spec.seed_ref);
        assert_eq!(spec.registration_ref, current.spec.registration_ref);
        assert_eq!(spec.deployment_ref, current.spec.deployment_ref);

        // The Seed's spec changed: its reference takes the new version, the others stay.
        seed.spec.provider.region = "elsewhere".into();
        let labels = hash_labels(&newer_registration, Some(&deployment), &seed);
        let mut spec = desired_spec(&newer_registration, Some(&deployment), &seed, Vec::new());
        keep_unchanged_references(&current, &labels, &mut spec);
        assert_eq!(
            spec.seed_ref.and_then(|r| r.resource_version).as_deref(),
            Some("4")
        );
        assert_eq!(spec.registration_ref, current.spec.registration_ref);
    }

    #[test]
    fn obsolete_installations_are_those_of_unwanted_registrations() {
        let installations = [installation("keep", None), installation("drop", None)];
        let obsolete = obsolete_installations(&installations, &names(&["keep"]));
        assert_eq!(obsolete.len(), 1);
        assert_eq!(obsolete[0].spec.registration_ref.name, "drop");
    }
}

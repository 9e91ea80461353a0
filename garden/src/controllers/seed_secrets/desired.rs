//! Which garden Secrets are mirrored into `seed-<name>` (spec §6.3) and what the mirror of one
//! looks like. Pure.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::Secret;
use kube::api::ObjectMeta;
use seedlet_api::names::labels;

/// Roles that are never mirrored.
pub const EXCLUDED_ROLES: [&str; 6] = [
    "kubeconfig",
    "ssh-keypair",
    "monitoring",
    "helm-pull-secret",
    "oci-ca-bundle",
    "resource-reference",
];

/// The label selector of the list calls: the role label exists (exclusions are applied in code).
pub const ROLE_EXISTS: &str = labels::ROLE;

/// Whether a Secret with these labels is mirrored: a `gardener.cloud/role` outside
/// [`EXCLUDED_ROLES`].
pub fn selected(object_labels: &BTreeMap<String, String>) -> bool {
    object_labels
        .get(labels::ROLE)
        .is_some_and(|role| !EXCLUDED_ROLES.contains(&role.as_str()))
}

/// `seed-<name>`.
pub fn namespace_name(seed: &str) -> String {
    format!(
        "{}{seed}",
        seedlet_api::names::namespaces::SEED_NAMESPACE_PREFIX
    )
}

/// The mirror of `source` in `namespace`: same name; labels, annotations, type and data replaced.
pub fn mirror(source: &Secret, namespace: &str) -> Secret {
    Secret {
        metadata: ObjectMeta {
            name: source.metadata.name.clone(),
            namespace: Some(namespace.to_owned()),
            labels: source.metadata.labels.clone(),
            annotations: source.metadata.annotations.clone(),
            ..ObjectMeta::default()
        },
        type_: source.type_.clone(),
        data: source.data.clone(),
        ..Secret::default()
    }
}

/// Whether `existing` already equals the mirror `wanted` (labels, annotations, type, data).
pub fn up_to_date(existing: &Secret, wanted: &Secret) -> bool {
    let or_empty = |map: &Option<BTreeMap<String, String>>| map.clone().unwrap_or_default();
    or_empty(&existing.metadata.labels) == or_empty(&wanted.metadata.labels)
        && or_empty(&existing.metadata.annotations) == or_empty(&wanted.metadata.annotations)
        && existing.type_.as_deref().unwrap_or("Opaque")
            == wanted.type_.as_deref().unwrap_or("Opaque")
        && existing.data.clone().unwrap_or_default() == wanted.data.clone().unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with_role(role: &str) -> BTreeMap<String, String> {
        BTreeMap::from([(labels::ROLE.to_owned(), role.to_owned())])
    }

    #[test]
    fn selection_takes_every_role_but_the_excluded_ones() {
        for role in [
            "alerting",
            "global-monitoring",
            "internal-domain",
            "default-domain",
        ] {
            assert!(selected(&with_role(role)), "{role}");
        }
        for role in EXCLUDED_ROLES {
            assert!(!selected(&with_role(role)), "{role}");
        }
        assert!(!selected(&BTreeMap::new()));
    }

    #[test]
    fn mirror_replaces_metadata_and_compares_by_content() {
        let mut source = Secret::default();
        source.metadata.name = Some("alerting".into());
        source.metadata.namespace = Some("garden".into());
        source.metadata.labels = Some(with_role("alerting"));
        source.metadata.resource_version = Some("7".into());
        source.type_ = Some("Opaque".into());
        let wanted = mirror(&source, "seed-a");
        assert_eq!(wanted.metadata.namespace.as_deref(), Some("seed-a"));
        assert_eq!(wanted.metadata.resource_version, None);
        let mut existing = wanted.clone();
        existing.type_ = None;
        assert!(up_to_date(&existing, &wanted));
        existing.metadata.annotations = Some(BTreeMap::from([("a".into(), "b".into())]));
        assert!(!up_to_date(&existing, &wanted));
        assert_eq!(namespace_name("a"), "seed-a");
    }
}

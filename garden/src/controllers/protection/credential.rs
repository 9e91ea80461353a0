//! What a SecretBinding or CredentialsBinding does to its credential and Quotas (spec §2.4,
//! §2.5), as JSON merge patches computed from the object's current metadata: protect (finalizer,
//! provider and reference labels), re-protect while the binding is deleting, release.
//!
//! Every patch carries `resourceVersion` (a finalizer change is built by
//! [`seedlet_runtime::finalizer::guarded_patch`]), so a concurrent change fails it (409) instead
//! of dropping another writer's finalizer.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde_json::{Map, Value, json};

/// Legacy finalizer that is only ever removed.
pub const LEGACY_FINALIZER: &str = "gardener.cloud/gardener";
/// Prefix of the provider labels on credentials.
pub const PROVIDER_LABEL_PREFIX: &str = "provider.shoot.gardener.cloud/";

/// How one binding kind marks what it references.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Marks {
    /// Finalizer on the credential (`gardener.cloud/secretbinding`, `…/credentialsbinding`).
    pub finalizer: &'static str,
    /// Label on the credential and the Quotas (`reference.gardener.cloud/secretbinding`, …).
    pub reference_label: &'static str,
    /// The other binding kind's reference label: while a credential carries it, a binding of
    /// that kind still uses the credential and its provider labels.
    pub other_reference_label: &'static str,
    /// Provider types whose `provider.shoot.gardener.cloud/<type>` label the credential gets.
    pub provider_types: Vec<String>,
    /// Whether the provider label is removed instead (a WorkloadIdentity).
    pub strip_provider_label: bool,
}

/// The provider types of a comma-separated `provider.type` (empty entries dropped).
pub fn provider_types(types: &str) -> Vec<String> {
    types
        .split(',')
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .map(str::to_owned)
        .collect()
}

/// A merge patch of `metadata` changes (labels to set or remove, the new finalizer list), or
/// `None` when nothing changes.
fn patch(
    meta: &ObjectMeta,
    labels: BTreeMap<String, Option<String>>,
    finalizers: Option<Vec<String>>,
) -> Option<Value> {
    let current = meta.labels.clone().unwrap_or_default();
    let labels: Map<String, Value> = labels
        .into_iter()
        .filter(|(key, value)| current.get(key) != value.as_ref())
        .map(|(key, value)| (key, value.map_or(Value::Null, Value::String)))
        .collect();
    let current_finalizers = meta.finalizers.clone().unwrap_or_default();
    let finalizers = finalizers.filter(|wanted| *wanted != current_finalizers);
    if labels.is_empty() && finalizers.is_none() {
        return None;
    }
    // A finalizer change is the runtime's guarded finalizer patch; labels ride along under the
    // same guard, and a labels-only patch carries the resourceVersion as well.
    let mut patch = match finalizers {
        Some(finalizers) => seedlet_runtime::finalizer::guarded_patch(meta, &finalizers),
        None => json!({"metadata": {"resourceVersion": meta.resource_version}}),
    };
    if !labels.is_empty() {
        patch["metadata"]["labels"] = Value::Object(labels);
    }
    Some(patch)
}

/// The finalizers with `add` present (appended when missing) and the legacy one gone.
fn with_finalizer(meta: &ObjectMeta, add: Option<&str>, remove: Option<&str>) -> Vec<String> {
    let mut finalizers: Vec<String> = meta
        .finalizers
        .clone()
        .unwrap_or_default()
        .into_iter()
        .filter(|f| f != LEGACY_FINALIZER && Some(f.as_str()) != remove)
        .collect();
    if let Some(add) = add
        && !finalizers.iter().any(|f| f == add)
    {
        finalizers.push(add.to_owned());
    }
    finalizers
}

/// Protecting a live binding's credential: finalizer, provider labels (or their removal on a
/// WorkloadIdentity), reference label; the legacy finalizer goes.
pub fn protect(meta: &ObjectMeta, marks: &Marks) -> Option<Value> {
    let mut labels = BTreeMap::new();
    for provider in &marks.provider_types {
        let value = (!marks.strip_provider_label).then(|| "true".to_owned());
        labels.insert(format!("{PROVIDER_LABEL_PREFIX}{provider}"), value);
    }
    labels.insert(marks.reference_label.to_owned(), Some("true".to_owned()));
    patch(
        meta,
        labels,
        Some(with_finalizer(meta, Some(marks.finalizer), None)),
    )
}

/// While the binding is deleting: the credential keeps (or gets back) the finalizer unless it
/// is itself deleting; the legacy finalizer goes.
pub fn reprotect(meta: &ObjectMeta, marks: &Marks) -> Option<Value> {
    let add = meta.deletion_timestamp.is_none().then_some(marks.finalizer);
    patch(meta, BTreeMap::new(), Some(with_finalizer(meta, add, None)))
}

/// Releasing the credential: the reference label and every provider label go ([QUIRK] upstream
/// removes one arbitrary provider label; the clean behaviour removes all), then the finalizer.
/// The provider labels stay while the other binding kind's reference label is on the
/// credential: a Secret bound by a SecretBinding and a CredentialsBinding keeps them for the
/// one that remains (as upstream guards them).
pub fn release(meta: &ObjectMeta, marks: &Marks) -> Option<Value> {
    let labels = meta.labels.iter().flatten();
    let other_kind_uses_it = labels
        .clone()
        .any(|(key, _)| key == marks.other_reference_label);
    let mut labels: BTreeMap<String, Option<String>> = labels
        .filter(|(key, _)| key.starts_with(PROVIDER_LABEL_PREFIX) && !other_kind_uses_it)
        .map(|(key, _)| (key.clone(), None))
        .collect();
    labels.insert(marks.reference_label.to_owned(), None);
    patch(
        meta,
        labels,
        Some(with_finalizer(meta, None, Some(marks.finalizer))),
    )
}

/// Setting (`present`) or removing the reference label of a Quota.
pub fn quota_label(meta: &ObjectMeta, label: &str, present: bool) -> Option<Value> {
    let value = present.then(|| "true".to_owned());
    patch(meta, BTreeMap::from([(label.to_owned(), value)]), None)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meta(labels: &[(&str, &str)], finalizers: &[&str]) -> ObjectMeta {
        ObjectMeta {
            resource_version: Some("7".into()),
            labels: Some(
                labels
                    .iter()
                    .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                    .collect(),
            ),
            finalizers: Some(finalizers.iter().map(|f| (*f).to_owned()).collect()),
            ..Default::default()
        }
    }

    fn secret_marks(types: &str) -> Marks {
        Marks {
            finalizer: "gardener.cloud/secretbinding",
            reference_label: "reference.gardener.cloud/secretbinding",
            other_reference_label: "reference.gardener.cloud/credentialsbinding",
            provider_types: provider_types(types),
            strip_provider_label: false,
        }
    }

    #[test]
    fn protect_adds_every_provider_label_and_the_finalizer_and_drops_the_legacy_one() {
        let patch = protect(
            &meta(&[], &[LEGACY_FINALIZER, "other"]),
            &secret_marks("aws,gcp"),
        )
        .expect("patch");
        assert_eq!(
            patch,
            json!({"metadata": {
                "resourceVersion": "7",
                "labels": {
                    "provider.shoot.gardener.cloud/aws": "true",
                    "provider.shoot.gardener.cloud/gcp": "true",
                    "reference.gardener.cloud/secretbinding": "true"
                },
                "finalizers": ["other", "gardener.cloud/secretbinding"]
            }})
        );
    }

    #[test]
    fn protect_is_a_no_op_when_everything_is_in_place() {
        let done = meta(
            &[
                ("provider.shoot.gardener.cloud/aws", "true"),
                ("reference.gardener.cloud/secretbinding", "true"),
            ],
            &["gardener.cloud/secretbinding"],
        );
        assert_eq!(protect(&done, &secret_marks("aws")), None);
    }

    #[test]
    fn workload_identity_loses_the_provider_label_and_gains_the_reference_label() {
        let marks = Marks {
            finalizer: "gardener.cloud/credentialsbinding",
            reference_label: "reference.gardener.cloud/credentialsbinding",
            other_reference_label: "reference.gardener.cloud/secretbinding",
            provider_types: vec!["aws".into()],
            strip_provider_label: true,
        };
        let patch = protect(
            &meta(&[("provider.shoot.gardener.cloud/aws", "true")], &[]),
            &marks,
        )
        .expect("patch");
        assert_eq!(
            patch["metadata"]["labels"],
            json!({
                "provider.shoot.gardener.cloud/aws": null,
                "reference.gardener.cloud/credentialsbinding": "true"
            })
        );
    }

    #[test]
    fn reprotect_skips_a_deleting_credential_and_release_strips_everything() {
        let mut deleting = meta(&[], &[LEGACY_FINALIZER]);
        deleting.deletion_timestamp = Some(k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(
            jiff::Timestamp::UNIX_EPOCH,
        ));
        assert_eq!(
            reprotect(&deleting, &secret_marks("aws")).expect("patch")["metadata"]["finalizers"],
            json!([])
        );
        assert_eq!(
            reprotect(&meta(&[], &[]), &secret_marks("aws")).expect("patch")["metadata"]["finalizers"],
            json!(["gardener.cloud/secretbinding"])
        );
        let protected = meta(
            &[
                ("provider.shoot.gardener.cloud/aws", "true"),
                ("provider.shoot.gardener.cloud/gcp", "true"),
                ("reference.gardener.cloud/secretbinding", "true"),
                ("keep", "me"),
            ],
            &["gardener.cloud/secretbinding"],
        );
        assert_eq!(
            release(&protected, &secret_marks("aws")).expect("patch")["metadata"],
            json!({
                "resourceVersion": "7",
                "labels": {
                    "provider.shoot.gardener.cloud/aws": null,
                    "provider.shoot.gardener.cloud/gcp": null,
                    "reference.gardener.cloud/secretbinding": null
                },
                "finalizers": []
            })
        );
    }

    #[test]
    fn release_keeps_the_provider_labels_while_the_other_binding_kind_uses_the_secret() {
        let shared = meta(
            &[
                ("provider.shoot.gardener.cloud/aws", "true"),
                ("reference.gardener.cloud/secretbinding", "true"),
                ("reference.gardener.cloud/credentialsbinding", "true"),
            ],
            &[
                "gardener.cloud/secretbinding",
                "gardener.cloud/credentialsbinding",
            ],
        );
        assert_eq!(
            release(&shared, &secret_marks("aws")).expect("patch")["metadata"],
            json!({
                "resourceVersion": "7",
                "labels": {"reference.gardener.cloud/secretbinding": null},
                "finalizers": ["gardener.cloud/credentialsbinding"]
            })
        );
    }

    #[test]
    fn quota_label_only_changes_what_differs() {
        let labelled = meta(&[("reference.gardener.cloud/secretbinding", "true")], &[]);
        assert_eq!(
            quota_label(&labelled, "reference.gardener.cloud/secretbinding", true),
            None
        );
        assert_eq!(
            quota_label(&labelled, "reference.gardener.cloud/secretbinding", false).expect("patch")
                ["metadata"]["labels"],
            json!({"reference.gardener.cloud/secretbinding": null})
        );
        assert_eq!(provider_types(" aws, ,gcp"), ["aws", "gcp"]);
    }
}

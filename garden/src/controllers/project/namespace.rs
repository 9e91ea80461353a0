//! The project namespace (spec §3.1 step 2 and the release on deletion): its name, the labels
//! and annotations it must carry, whether an existing namespace may be adopted, and what the
//! release does — all decided from the objects, without API calls.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::Namespace;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};
use kube::{Resource, ResourceExt};
use seedlet_api::core::Project;
use sha2::{Digest, Sha256};

/// `gardener.cloud/role`.
pub const ROLE_LABEL: &str = "gardener.cloud/role";
/// Value of [`ROLE_LABEL`] on project namespaces.
pub const ROLE_PROJECT: &str = "project";
/// Label naming the project of a namespace.
pub const PROJECT_NAME_LABEL: &str = "project.gardener.cloud/name";
/// Annotation with the UID of the project owning a namespace.
pub const PROJECT_ANNOTATION: &str = "namespace.gardener.cloud/project";
/// Annotation on namespaces the controller created.
pub const CREATED_BY_ANNOTATION: &str = "namespace.gardener.cloud/created-by-project-controller";
/// Annotation on adopted namespaces: kept when the project goes.
pub const KEEP_ANNOTATION: &str = "namespace.gardener.cloud/keep-after-project-deletion";

/// `spec.namespace`, or `garden-<project>-<first 5 hex digits of sha256(UID)>`.
pub fn namespace_name(project: &Project) -> String {
    if let Some(namespace) = project.spec.namespace.as_ref().filter(|n| !n.is_empty()) {
        return namespace.clone();
    }
    let digest = Sha256::digest(project.uid().unwrap_or_default().as_bytes());
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    format!("garden-{}-{}", project.name_any(), &hex[..5])
}

/// The project labels every project namespace carries.
pub fn project_labels(project: &Project) -> BTreeMap<String, String> {
    BTreeMap::from([
        (ROLE_LABEL.to_owned(), ROLE_PROJECT.to_owned()),
        (PROJECT_NAME_LABEL.to_owned(), project.name_any()),
    ])
}

/// The controller owner reference to `project`.
pub fn owner_reference(project: &Project, block_owner_deletion: bool) -> OwnerReference {
    OwnerReference {
        api_version: Project::api_version(&()).into_owned(),
        kind: Project::kind(&()).into_owned(),
        name: project.name_any(),
        uid: project.uid().unwrap_or_default(),
        controller: Some(true),
        block_owner_deletion: Some(block_owner_deletion),
    }
}

/// A new project namespace.
pub fn new_namespace(project: &Project, name: &str) -> Namespace {
    Namespace {
        metadata: ObjectMeta {
            name: Some(name.to_owned()),
            labels: Some(project_labels(project)),
            annotations: Some(BTreeMap::from([
                (
                    PROJECT_ANNOTATION.to_owned(),
                    project.uid().unwrap_or_default(),
                ),
                (CREATED_BY_ANNOTATION.to_owned(), "true".to_owned()),
            ])),
            owner_references: Some(vec![owner_reference(project, true)]),
            ..Default::default()
        },
        ..Default::default()
    }
}

/// Why an existing namespace cannot be adopted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AdoptError {
    /// The project labels are missing.
    #[error(
        "namespace cannot be used as it needs the project labels map[string]string{{\"gardener.cloud/role\":\"project\", \"project.gardener.cloud/name\":\"{0}\"}}"
    )]
    MissingLabels(String),
    /// Another project owns it.
    #[error("namespace is already in-use by another project")]
    InUse,
}

/// The existing namespace adopted by `project`: `None` when nothing changes.
///
/// # Errors
/// [`AdoptError`] when the namespace lacks the project labels or belongs to another project.
pub fn adopt(project: &Project, existing: &Namespace) -> Result<Option<Namespace>, AdoptError> {
    let labels = existing.labels();
    let wanted = project_labels(project);
    if wanted.iter().any(|(k, v)| labels.get(k) != Some(v)) {
        return Err(AdoptError::MissingLabels(project.name_any()));
    }
    let uid = project.uid().unwrap_or_default();
    if let Some(owner) = existing.annotations().get(PROJECT_ANNOTATION)
        && *owner != uid
    {
        return Err(AdoptError::InUse);
    }
    let mut updated = existing.clone();
    let references = updated
        .metadata
        .owner_references
        .get_or_insert_with(Vec::new);
    if !references.iter().any(|r| r.uid == uid) {
        references.push(owner_reference(project, true));
    }
    let annotations = updated
        .metadata
        .annotations
        .get_or_insert_with(BTreeMap::new);
    annotations.insert(PROJECT_ANNOTATION.to_owned(), uid);
    if !annotations.contains_key(CREATED_BY_ANNOTATION) {
        annotations.insert(KEEP_ANNOTATION.to_owned(), "true".to_owned());
    }
    Ok((updated != *existing).then_some(updated))
}

/// What releasing the namespace of a deleting project does.
#[derive(Debug, Clone, PartialEq)]
pub enum Release {
    /// Nothing to do: gone, or not this project's.
    Released,
    /// Still terminating: wait.
    Terminating,
    /// Kept: update to this (Gardener's marks stripped), then released.
    Keep(Box<Namespace>),
    /// Delete it (foreground), then wait.
    Delete,
}

/// The release of `namespace` (`None` when gone) for `project`.
pub fn release(project: &Project, namespace: Option<&Namespace>) -> Release {
    let Some(namespace) = namespace else {
        return Release::Released;
    };
    if namespace.metadata.deletion_timestamp.is_some() {
        return Release::Terminating;
    }
    let labels = namespace.labels();
    if project_labels(project)
        .iter()
        .any(|(k, v)| labels.get(k) != Some(v))
    {
        return Release::Released;
    }
    if namespace
        .annotations()
        .get(KEEP_ANNOTATION)
        .map(String::as_str)
        == Some("true")
    {
        let mut kept = namespace.clone();
        if let Some(annotations) = kept.metadata.annotations.as_mut() {
            for key in [PROJECT_ANNOTATION, KEEP_ANNOTATION, CREATED_BY_ANNOTATION] {
                annotations.remove(key);
            }
        }
        if let Some(labels) = kept.metadata.labels.as_mut() {
            labels.remove(PROJECT_NAME_LABEL);
            labels.remove(ROLE_LABEL);
        }
        let uid = project.uid().unwrap_or_default();
        if let Some(references) = kept.metadata.owner_references.as_mut() {
            references.retain(|r| r.uid != uid);
        }
        return Release::Keep(Box::new(kept));
    }
    Release::Delete
}

#[cfg(test)]
mod tests {
    use super::*;

    fn project(name: &str, namespace: Option<&str>) -> Project {
        let mut project = Project::new(name, Default::default());
        project.metadata.uid = Some("uid-1".into());
        project.spec.namespace = namespace.map(str::to_owned);
        project
    }

    fn namespace(labels: &[(&str, &str)], annotations: &[(&str, &str)]) -> Namespace {
        Namespace {
            metadata: ObjectMeta {
                name: Some("ns".into()),
                labels: Some(
                    labels
                        .iter()
                        .map(|(k, v)| ((*k).into(), (*v).into()))
                        .collect(),
                ),
                annotations: Some(
                    annotations
                        .iter()
                        .map(|(k, v)| ((*k).into(), (*v).into()))
                        .collect(),
                ),
                ..Default::default()
            },
            ..Default::default()
        }
    }

    const LABELS: [(&str, &str); 2] = [
        ("gardener.cloud/role", "project"),
        ("project.gardener.cloud/name", "dev"),
    ];

    #[test]
    fn generated_name_uses_the_uid_hash() {
        // sha256("uid-1") starts with 2d1d5...
        let digest = Sha256::digest(b"uid-1");
        let prefix: String = digest.iter().take(3).map(|b| format!("{b:02x}")).collect();
        assert_eq!(
            namespace_name(&project("dev", None)),
            format!("garden-dev-{}", &prefix[..5])
        );
        assert_eq!(
            namespace_name(&project("dev", Some("garden-x"))),
            "garden-x"
        );
    }

    #[test]
    fn adoption_needs_the_labels_and_no_other_owner() {
        let p = project("dev", Some("ns"));
        assert_eq!(
            adopt(&p, &namespace(&[], &[])).unwrap_err().to_string(),
            r#"namespace cannot be used as it needs the project labels map[string]string{"gardener.cloud/role":"project", "project.gardener.cloud/name":"dev"}"#
        );
        assert_eq!(
            adopt(&p, &namespace(&LABELS, &[(PROJECT_ANNOTATION, "other")])),
            Err(AdoptError::InUse)
        );
        let adopted = adopt(&p, &namespace(&LABELS, &[]))
            .expect("adoptable")
            .expect("changed");
        assert_eq!(adopted.annotations()[KEEP_ANNOTATION], "true");
        assert_eq!(adopted.annotations()[PROJECT_ANNOTATION], "uid-1");
        assert_eq!(adopted.owner_references()[0].uid, "uid-1");
        assert_eq!(adopt(&p, &adopted), Ok(None));
        let created = new_namespace(&p, "ns");
        assert_eq!(adopt(&p, &created), Ok(None));
    }

    #[test]
    fn release_cases() {
        let p = project("dev", Some("ns"));
        assert_eq!(release(&p, None), Release::Released);
        assert_eq!(release(&p, Some(&namespace(&[], &[]))), Release::Released);
        assert_eq!(release(&p, Some(&new_namespace(&p, "ns"))), Release::Delete);
        let adopted = adopt(&p, &namespace(&[("keep", "me"), LABELS[0], LABELS[1]], &[]))
            .expect("ok")
            .expect("changed");
        let Release::Keep(kept) = release(&p, Some(&adopted)) else {
            panic!("kept expected");
        };
        assert_eq!(kept.labels().len(), 1);
        assert!(kept.annotations().is_empty());
        assert!(kept.owner_references().is_empty());
        let mut deleting = new_namespace(&p, "ns");
        deleting.metadata.deletion_timestamp = Some(
            k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(jiff::Timestamp::UNIX_EPOCH),
        );
        assert_eq!(release(&p, Some(&deleting)), Release::Terminating);
    }
}

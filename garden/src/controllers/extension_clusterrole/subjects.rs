//! Which ServiceAccounts an extension ClusterRole is bound to (spec §2.9): extension
//! ServiceAccounts (in a `seed-*` namespace, or named `extension-shoot--*` in `garden` or a
//! `garden-*` namespace) matched by the ClusterRole's selector annotation, sorted.

use k8s_openapi::api::core::v1::ServiceAccount;
use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding, RoleRef, Subject};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};
use kube::{Resource, ResourceExt};
use serde_json::Value;

/// Label of the ClusterRoles this controller binds.
pub const ROLE_LABEL: &str = "authorization.gardener.cloud/custom-extensions-permissions";
/// Annotation with the JSON label selector of the ServiceAccounts.
pub const SELECTOR_ANNOTATION: &str =
    "authorization.gardener.cloud/extensions-serviceaccount-selector";

/// The selector annotation is missing or not a label selector.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SelectorError {
    /// No annotation.
    #[error(
        "failed computing subjects for ClusterRoleBinding: failed parsing label selector: no service account selector annotations present"
    )]
    Missing,
    /// Not JSON, or an operator a selector does not have.
    #[error("failed computing subjects for ClusterRoleBinding: failed parsing label selector: {0}")]
    Invalid(String),
}

/// The ServiceAccount selector of `role`.
///
/// # Errors
/// [`SelectorError`].
pub fn selector(role: &ClusterRole) -> Result<Value, SelectorError> {
    let text = role
        .annotations()
        .get(SELECTOR_ANNOTATION)
        .ok_or(SelectorError::Missing)?;
    let value: Value =
        serde_json::from_str(text).map_err(|error| SelectorError::Invalid(error.to_string()))?;
    if !value.is_object() || crate::selector::to_query(&value).is_none() {
        return Err(SelectorError::Invalid(format!(
            "{text:?} is not a label selector"
        )));
    }
    Ok(value)
}

/// Whether `(namespace, name)` is an extension ServiceAccount.
pub fn is_extension_service_account(namespace: &str, name: &str) -> bool {
    namespace.starts_with("seed-")
        || (name.starts_with("extension-shoot--")
            && (namespace == "garden" || namespace.starts_with("garden-")))
}

/// The ClusterRoleBinding for `role` binding the extension ServiceAccounts among `accounts`.
pub fn binding(role: &ClusterRole, accounts: &[ServiceAccount]) -> ClusterRoleBinding {
    let mut subjects: Vec<Subject> = accounts
        .iter()
        .filter(|sa| {
            is_extension_service_account(&sa.namespace().unwrap_or_default(), &sa.name_any())
        })
        .map(|sa| Subject {
            api_group: None,
            kind: "ServiceAccount".to_owned(),
            name: sa.name_any(),
            namespace: sa.namespace(),
        })
        .collect();
    subjects.sort_by(|a, b| (&a.namespace, &a.name).cmp(&(&b.namespace, &b.name)));
    ClusterRoleBinding {
        metadata: ObjectMeta {
            name: Some(role.name_any()),
            owner_references: Some(vec![OwnerReference {
                api_version: ClusterRole::api_version(&()).into_owned(),
                kind: ClusterRole::kind(&()).into_owned(),
                name: role.name_any(),
                uid: role.uid().unwrap_or_default(),
                controller: Some(true),
                block_owner_deletion: Some(false),
            }]),
            ..Default::default()
        },
        role_ref: RoleRef {
            api_group: "rbac.authorization.k8s.io".to_owned(),
            kind: "ClusterRole".to_owned(),
            name: role.name_any(),
        },
        subjects: Some(subjects),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sa(namespace: &str, name: &str) -> ServiceAccount {
        ServiceAccount {
            metadata: ObjectMeta {
                name: Some(name.into()),
                namespace: Some(namespace.into()),
                ..Default::default()
            },
            ..Default::default()
        }
    }

    #[test]
    fn extension_service_accounts() {
        let cases = [
            ("seed-local", "anything", true),
            ("garden", "extension-shoot--x", true),
            ("garden-dev", "extension-shoot--x", true),
            ("kube-system", "extension-shoot--x", false),
            ("garden-dev", "other", false),
            ("gardenx", "extension-shoot--x", false),
        ];
        for (namespace, name, expected) in cases {
            assert_eq!(
                is_extension_service_account(namespace, name),
                expected,
                "{namespace}/{name}"
            );
        }
    }

    #[test]
    fn binding_keeps_extension_accounts_sorted() {
        let mut role = ClusterRole::default();
        role.metadata.name = Some("ext".into());
        role.metadata.uid = Some("u".into());
        let accounts = [
            sa("seed-b", "z"),
            sa("kube-system", "extension-shoot--x"),
            sa("garden-dev", "extension-shoot--x"),
            sa("seed-a", "y"),
        ];
        let binding = binding(&role, &accounts);
        let names: Vec<(String, String)> = binding
            .subjects
            .iter()
            .flatten()
            .map(|s| (s.namespace.clone().unwrap_or_default(), s.name.clone()))
            .collect();
        assert_eq!(
            names,
            [
                ("garden-dev".to_owned(), "extension-shoot--x".to_owned()),
                ("seed-a".to_owned(), "y".to_owned()),
                ("seed-b".to_owned(), "z".to_owned()),
            ]
        );
        assert_eq!(binding.role_ref.name, "ext");
        let owner = &binding.owner_references()[0];
        assert_eq!(
            (owner.controller, owner.block_owner_deletion),
            (Some(true), Some(false))
        );
    }

    #[test]
    fn selector_errors() {
        let mut role = ClusterRole::default();
        assert_eq!(selector(&role), Err(SelectorError::Missing));
        assert_eq!(
            SelectorError::Missing.to_string(),
            "failed computing subjects for ClusterRoleBinding: failed parsing label selector: no service account selector annotations present"
        );
        role.metadata.annotations = Some(
            [(
                SELECTOR_ANNOTATION.to_owned(),
                "{\"matchLabels\":{\"a\":\"b\"}}".to_owned(),
            )]
            .into(),
        );
        assert!(selector(&role).is_ok());
        role.metadata.annotations =
            Some([(SELECTOR_ANNOTATION.to_owned(), "nope".to_owned())].into());
        assert!(matches!(selector(&role), Err(SelectorError::Invalid(_))));
    }
}

//! The garden RBAC that lets bootstrap tokens (and seeds renewing their certificate) request seed client
//! certificates: ClusterRole `gardener.cloud:system:seed-bootstrapper` and its bindings.

use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding, PolicyRule, RoleRef, Subject};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::Api;
use kube::api::{Patch, PatchParams};
use seedlet_api::names::{csr, field_managers};

/// The ClusterRole (and the bootstrappers' ClusterRoleBinding) name.
pub const SEED_BOOTSTRAPPER: &str = csr::SEED_BOOTSTRAPPER_CLUSTER_ROLE;
/// ClusterRoleBinding granting the same role to seeds, so they can renew their own certificate.
pub const SEED_CERTIFICATE_RENEWAL_BINDING: &str = "gardener.cloud:system:seed-bootstrapper:seeds";
/// Group of bootstrap-token users.
pub const BOOTSTRAPPERS_GROUP: &str = csr::BOOTSTRAPPERS_GROUP;
/// Group of seed client certificates.
pub const SEEDS_GROUP: &str = csr::SEED_ORGANIZATION;
/// Field manager of the garden controller.
pub const FIELD_MANAGER: &str = field_managers::GARDEN;

/// Failure to apply the RBAC objects.
#[derive(Debug, thiserror::Error)]
#[error("apply {kind} {name}")]
pub struct RbacError {
    /// Kind of the object.
    pub kind: &'static str,
    /// Its name.
    pub name: String,
    /// The API error.
    #[source]
    pub source: kube::Error,
}

/// ClusterRole (and binding to `system:authenticated`) that lets everyone read the global
/// resources; with the seed authorizer RBAC runs first, so seeds list these without selectors.
pub const READ_GLOBAL_RESOURCES: &str = "gardener.cloud:system:read-global-resources";
const AUTHENTICATED_GROUP: &str = "system:authenticated";

/// Gardener's `gardener.cloud:system:read-global-resources`: get/list/watch of CloudProfiles,
/// ControllerRegistrations, ExposureClasses and Seeds, and of CustomResourceDefinitions.
pub fn read_global_resources_role() -> ClusterRole {
    let read = |group: &str, resources: &[&str]| PolicyRule {
        api_groups: Some(vec![group.to_owned()]),
        resources: Some(resources.iter().map(|r| (*r).to_owned()).collect()),
        verbs: ["get", "list", "watch"].map(str::to_owned).to_vec(),
        ..PolicyRule::default()
    };
    ClusterRole {
        metadata: ObjectMeta {
            name: Some(READ_GLOBAL_RESOURCES.to_owned()),
            ..ObjectMeta::default()
        },
        rules: Some(vec![
            read(
                "core.gardener.cloud",
                &[
                    "cloudprofiles",
                    "controllerregistrations",
                    "exposureclasses",
                    "seeds",
                ],
            ),
            read("apiextensions.k8s.io", &["customresourcedefinitions"]),
        ]),
        ..ClusterRole::default()
    }
}

/// The bootstrapper ClusterRole: `create,get,watch certificatesigningrequests` (watch so requesters can wait
/// for issuance without polling) and `create certificatesigningrequests/seedclient|shootclient`.
pub fn bootstrapper_cluster_role() -> ClusterRole {
    let rule = |resources: &[&str], verbs: &[&str]| PolicyRule {
        api_groups: Some(vec!["certificates.k8s.io".to_owned()]),
        resources: Some(resources.iter().map(|r| (*r).to_owned()).collect()),
        verbs: verbs.iter().map(|v| (*v).to_owned()).collect(),
        ..PolicyRule::default()
    };
    ClusterRole {
        metadata: ObjectMeta {
            name: Some(SEED_BOOTSTRAPPER.to_owned()),
            ..ObjectMeta::default()
        },
        rules: Some(vec![
            rule(&["certificatesigningrequests"], &["create", "get", "watch"]),
            rule(
                &[
                    "certificatesigningrequests/seedclient",
                    "certificatesigningrequests/shootclient",
                ],
                &["create"],
            ),
        ]),
        ..ClusterRole::default()
    }
}

/// A binding of the bootstrapper ClusterRole to `group`.
pub fn bootstrapper_binding(name: &str, group: &str) -> ClusterRoleBinding {
    role_binding(name, SEED_BOOTSTRAPPER, group)
}

/// A binding of ClusterRole `role` to `group`.
fn role_binding(name: &str, role: &str, group: &str) -> ClusterRoleBinding {
    ClusterRoleBinding {
        metadata: ObjectMeta {
            name: Some(name.to_owned()),
            ..ObjectMeta::default()
        },
        role_ref: RoleRef {
            api_group: "rbac.authorization.k8s.io".to_owned(),
            kind: "ClusterRole".to_owned(),
            name: role.to_owned(),
        },
        subjects: Some(vec![Subject {
            api_group: Some("rbac.authorization.k8s.io".to_owned()),
            kind: "Group".to_owned(),
            name: group.to_owned(),
            namespace: None,
        }]),
    }
}

/// Ensures the bootstrapper ClusterRole, its binding to `system:bootstrappers` and — for gardens without
/// Gardener's seed authorizer — its binding to `gardener.cloud:system:seeds`, and Gardener's
/// read-global-resources role for `system:authenticated`, by server-side apply under
/// `seedlet-garden` (not forced: fields owned by another manager surface as a conflict). Idempotent.
///
/// The seeds binding lets any seed create CSRs and read CSRs; the approver only approves a seed's request for
/// its own identity, which is what Gardener's `seedrestriction` admission guarantees upstream.
///
/// # Errors
/// [`RbacError`] naming the object whose apply failed.
pub async fn ensure_bootstrapper_rbac(client: &kube::Client) -> Result<(), RbacError> {
    let params = PatchParams::apply(FIELD_MANAGER);
    let roles: Api<ClusterRole> = Api::all(client.clone());
    let mut role = bootstrapper_cluster_role();
    role.metadata.managed_fields = None;
    apply(
        &roles,
        "ClusterRole",
        SEED_BOOTSTRAPPER,
        &with_type_meta(&role, "ClusterRole")?,
        &params,
    )
    .await?;
    let bindings: Api<ClusterRoleBinding> = Api::all(client.clone());
    for (name, group) in [
        (SEED_BOOTSTRAPPER, BOOTSTRAPPERS_GROUP),
        (SEED_CERTIFICATE_RENEWAL_BINDING, SEEDS_GROUP),
    ] {
        let binding = with_type_meta(&bootstrapper_binding(name, group), "ClusterRoleBinding")?;
        apply(&bindings, "ClusterRoleBinding", name, &binding, &params).await?;
    }
    let mut global = read_global_resources_role();
    global.metadata.managed_fields = None;
    let global = with_type_meta(&global, "ClusterRole")?;
    apply(
        &roles,
        "ClusterRole",
        READ_GLOBAL_RESOURCES,
        &global,
        &params,
    )
    .await?;
    let binding = role_binding(
        READ_GLOBAL_RESOURCES,
        READ_GLOBAL_RESOURCES,
        AUTHENTICATED_GROUP,
    );
    let binding = with_type_meta(&binding, "ClusterRoleBinding")?;
    apply(
        &bindings,
        "ClusterRoleBinding",
        READ_GLOBAL_RESOURCES,
        &binding,
        &params,
    )
    .await?;
    Ok(())
}

/// Server-side apply needs apiVersion and kind in the body.
fn with_type_meta<T: serde::Serialize>(
    object: &T,
    kind: &'static str,
) -> Result<serde_json::Value, RbacError> {
    let mut value = serde_json::to_value(object).map_err(|e| RbacError {
        kind,
        name: String::new(),
        source: kube::Error::SerdeError(e),
    })?;
    value["apiVersion"] = "rbac.authorization.k8s.io/v1".into();
    value["kind"] = kind.into();
    Ok(value)
}

async fn apply<K>(
    api: &Api<K>,
    kind: &'static str,
    name: &str,
    body: &serde_json::Value,
    params: &PatchParams,
) -> Result<(), RbacError>
where
    K: kube::Resource + Clone + serde::de::DeserializeOwned + std::fmt::Debug,
{
    api.patch(name, params, &Patch::Apply(body))
        .await
        .map(|_| ())
        .map_err(|source| RbacError {
            kind,
            name: name.to_owned(),
            source,
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bootstrapper_role_grants_csr_creation_and_seedclient() {
        let role = bootstrapper_cluster_role();
        let rules = role.rules.unwrap();
        assert_eq!(
            rules[0].resources.as_deref(),
            Some(&["certificatesigningrequests".to_owned()][..])
        );
        assert_eq!(rules[0].verbs, vec!["create", "get", "watch"]);
        assert!(
            rules[1]
                .resources
                .as_ref()
                .unwrap()
                .contains(&"certificatesigningrequests/seedclient".to_owned())
        );
        assert_eq!(rules[1].verbs, vec!["create"]);
    }

    #[test]
    fn bootstrapper_binding_binds_group_to_role() {
        let binding = bootstrapper_binding(SEED_BOOTSTRAPPER, BOOTSTRAPPERS_GROUP);
        assert_eq!(binding.role_ref.name, SEED_BOOTSTRAPPER);
        let subject = &binding.subjects.unwrap()[0];
        assert_eq!(
            (subject.kind.as_str(), subject.name.as_str()),
            ("Group", "system:bootstrappers")
        );
    }
}

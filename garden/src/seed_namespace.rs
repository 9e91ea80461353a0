//! The Seed's namespace `seed-<name>` in the garden, which two garden controllers keep (the Seed
//! finalizers controller and seed-secrets, as gardener-controller-manager's seed controllers do).
//! Both go through [`ensure`]: create it controlled by the Seed, or adopt one that nothing
//! controls (made before the Seed existed, as `seedlet sandbox` and operators do), and refuse one
//! that another object controls.

use k8s_openapi::api::core::v1::Namespace;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
use kube::api::{Patch, PatchParams, PostParams};
use kube::{Api, Resource, ResourceExt};
use seedlet_api::core::Seed;
use seedlet_api::names::{field_managers, labels, namespaces};
use serde_json::json;

/// Why the namespace could not be ensured.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The Seed has no name or uid to own the namespace with.
    #[error("Seed without name or uid")]
    MissingIdentity,
    /// The namespace exists and another object is its controller.
    #[error("namespace {namespace:?} is controlled by {controller}, not by seed {seed:?}")]
    NotControlled {
        /// The namespace.
        namespace: String,
        /// The Seed.
        seed: String,
        /// `Kind/name` of the actual controller.
        controller: String,
    },
    /// Reading or writing the namespace failed.
    #[error("ensuring namespace {namespace}")]
    Api {
        /// The namespace.
        namespace: String,
        /// Cause.
        #[source]
        source: kube::Error,
    },
}

/// What to do with an existing namespace for `seed` (pure).
#[derive(Debug, Clone, PartialEq)]
pub enum Adoption {
    /// Controlled by the Seed and labelled: nothing to do.
    Done,
    /// Write these labels' role and owner references.
    Patch(Vec<OwnerReference>),
    /// Another object controls it (`Kind/name`).
    Foreign(String),
}

/// Decides about an existing namespace: keep other owners, add the Seed as controller unless
/// another controller is set.
pub fn adoption(existing: &Namespace, owner: &OwnerReference) -> Adoption {
    let owners = existing.owner_references();
    if let Some(other) = owners
        .iter()
        .find(|o| o.controller == Some(true) && o.uid != owner.uid)
    {
        return Adoption::Foreign(format!("{}/{}", other.kind, other.name));
    }
    let has_owner = owners.iter().any(|o| o.uid == owner.uid);
    let has_label =
        existing.labels().get(labels::ROLE).map(String::as_str) == Some(labels::ROLE_SEED);
    if has_owner && has_label {
        return Adoption::Done;
    }
    let mut wanted = owners.to_vec();
    if !has_owner {
        wanted.push(owner.clone());
    }
    Adoption::Patch(wanted)
}

/// Creates or adopts `seed-<name>` for `seed`.
///
/// # Errors
/// [`Error::NotControlled`] when another object controls it; [`Error::Api`] for failed calls.
pub async fn ensure(client: &kube::Client, seed: &Seed) -> Result<(), Error> {
    let name = namespaces::seed_namespace(&seed.name_any());
    let owner = seed
        .controller_owner_ref(&())
        .ok_or(Error::MissingIdentity)?;
    let api: Api<Namespace> = Api::all(client.clone());
    let failed = |source| Error::Api {
        namespace: name.clone(),
        source,
    };
    let existing = match api.get_opt(&name).await.map_err(failed)? {
        Some(existing) => existing,
        None => {
            let namespace: Namespace = serde_json::from_value(json!({
                "metadata": {
                    "name": name,
                    "labels": {labels::ROLE: labels::ROLE_SEED},
                    "ownerReferences": [owner],
                }
            }))
            .map_err(|_| Error::MissingIdentity)?;
            let params = PostParams {
                field_manager: Some(field_managers::GARDEN.to_owned()),
                ..PostParams::default()
            };
            match api.create(&params, &namespace).await {
                Ok(_) => return Ok(()),
                // The other controller made it a moment ago: adopt what is there.
                Err(kube::Error::Api(status)) if status.is_already_exists() => {
                    api.get(&name).await.map_err(failed)?
                }
                Err(source) => return Err(failed(source)),
            }
        }
    };
    match adoption(&existing, &owner) {
        Adoption::Done => Ok(()),
        Adoption::Foreign(controller) => Err(Error::NotControlled {
            namespace: name,
            seed: seed.name_any(),
            controller,
        }),
        Adoption::Patch(owners) => {
            let patch = json!({
                "metadata": {
                    "resourceVersion": existing.metadata.resource_version,
                    "labels": {labels::ROLE: labels::ROLE_SEED},
                    "ownerReferences": owners,
                }
            });
            let params = PatchParams {
                field_manager: Some(field_managers::GARDEN.to_owned()),
                ..PatchParams::default()
            };
            api.patch(&name, &params, &Patch::Merge(&patch))
                .await
                .map(|_| ())
                .map_err(failed)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn owner(kind: &str, uid: &str, controller: bool) -> OwnerReference {
        OwnerReference {
            api_version: "core.gardener.cloud/v1beta1".into(),
            kind: kind.into(),
            name: format!("{kind}-{uid}").to_lowercase(),
            uid: uid.into(),
            controller: Some(controller),
            block_owner_deletion: Some(true),
        }
    }

    fn namespace(role: Option<&str>, owners: Vec<OwnerReference>) -> Namespace {
        let mut ns = Namespace::default();
        ns.metadata.labels = role.map(|r| [(labels::ROLE.to_owned(), r.to_owned())].into());
        ns.metadata.owner_references = Some(owners);
        ns
    }

    #[test]
    fn adoption_keeps_other_owners_and_refuses_a_foreign_controller() {
        let seed = owner("Seed", "s1", true);
        let plain = owner("ConfigMap", "c1", false);
        let cases = [
            (
                "unowned, unlabelled: adopt",
                namespace(None, vec![]),
                Adoption::Patch(vec![seed.clone()]),
            ),
            (
                "other plain owner kept",
                namespace(Some("seed"), vec![plain.clone()]),
                Adoption::Patch(vec![plain.clone(), seed.clone()]),
            ),
            (
                "owned, label missing",
                namespace(Some("shoot"), vec![seed.clone()]),
                Adoption::Patch(vec![seed.clone()]),
            ),
            (
                "owned and labelled",
                namespace(Some("seed"), vec![seed.clone()]),
                Adoption::Done,
            ),
            (
                "another controller",
                namespace(Some("seed"), vec![owner("Seed", "s2", true)]),
                Adoption::Foreign("Seed/seed-s2".into()),
            ),
        ];
        for (name, existing, want) in cases {
            assert_eq!(adoption(&existing, &seed), want, "{name}");
        }
    }
}

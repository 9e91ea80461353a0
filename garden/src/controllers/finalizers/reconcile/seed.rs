//! Seed finalizer `core.gardener.cloud/controllerregistration` and the Seed's garden namespace
//! `seed-<name>`: while the Seed lives the namespace is ensured; deletion waits until no
//! ControllerInstallation references the Seed.

use std::sync::Arc;

use k8s_openapi::api::core::v1::Namespace;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
use kube::api::{Patch, PatchParams, PostParams};
use kube::runtime::controller::Action;
use kube::runtime::finalizer::{Event, finalizer};
use kube::{Api, Resource, ResourceExt};
use seedlet_api::core::{ControllerInstallation, Seed};
use seedlet_api::names::{field_managers, finalizers, labels, namespaces};
use serde_json::json;

use super::{Error, ensure_unreferenced, list_all};
use crate::controllers::finalizers::{Ctx, RESYNC_PERIOD, SEED_NAME};

/// Adds the finalizer, keeps the namespace, and releases the Seed once unreferenced.
///
/// # Errors
/// See [`Error`]; a blocked deletion is [`Error::StillReferenced`] inside [`Error::Finalizer`].
pub async fn reconcile(seed: Arc<Seed>, ctx: Arc<Ctx>) -> Result<Action, Error> {
    let started = std::time::Instant::now();
    let name = seed.name_any();
    let api: Api<Seed> = Api::all(ctx.client.clone());
    let result = finalizer(
        &api,
        finalizers::CONTROLLER_REGISTRATION,
        seed,
        |event| async {
            match event {
                Event::Apply(seed) => {
                    ensure_namespace(&ctx.client, &seed).await?;
                    Ok(Action::requeue(RESYNC_PERIOD))
                }
                Event::Cleanup(seed) => {
                    let installations: Vec<ControllerInstallation> =
                        list_all(&ctx.client, "ControllerInstallation").await?;
                    let seed_name = seed.name_any();
                    let names = installations_of_seed(&installations, &seed_name);
                    ensure_unreferenced("Seed", &seed_name, "ControllerInstallations", names)?;
                    Ok(Action::await_change())
                }
            }
        },
    )
    .await
    .map_err(|source| Error::Finalizer {
        kind: "Seed",
        name,
        source: Box::new(source),
    });
    ctx.metrics
        .reconciled(SEED_NAME, started.elapsed(), result.is_ok());
    result
}

/// Names of the installations whose `spec.seedRef.name` is `seed`.
pub fn installations_of_seed(installations: &[ControllerInstallation], seed: &str) -> Vec<String> {
    installations
        .iter()
        .filter(|installation| installation.seed_name() == Some(seed))
        .map(ResourceExt::name_any)
        .collect()
}

/// The controller owner reference of the namespace.
pub fn seed_owner_reference(seed: &Seed) -> Option<OwnerReference> {
    seed.controller_owner_ref(&())
}

/// Creates `seed-<name>` (label `gardener.cloud/role=seed`, controlled by the Seed) or adds the
/// label and owner reference to an existing one (other owners are kept).
async fn ensure_namespace(client: &kube::Client, seed: &Seed) -> Result<(), Error> {
    let namespace_name = namespaces::seed_namespace(&seed.name_any());
    let owner = seed_owner_reference(seed).ok_or(Error::MissingIdentity("Seed"))?;
    let api: Api<Namespace> = Api::all(client.clone());
    let failed = |source| Error::Namespace {
        namespace: namespace_name.clone(),
        source,
    };
    let Some(existing) = api.get_opt(&namespace_name).await.map_err(failed)? else {
        let namespace: Namespace = serde_json::from_value(json!({
            "metadata": {
                "name": namespace_name,
                "labels": {labels::ROLE: labels::ROLE_SEED},
                "ownerReferences": [owner],
            }
        }))
        .map_err(|_| Error::MissingIdentity("Seed"))?;
        let params = PostParams {
            field_manager: Some(field_managers::GARDEN.to_owned()),
            ..PostParams::default()
        };
        return match api.create(&params, &namespace).await {
            Ok(_) => Ok(()),
            // Created concurrently; the next run patches it if needed.
            Err(kube::Error::Api(status)) if status.is_already_exists() => Ok(()),
            Err(source) => Err(failed(source)),
        };
    };
    let mut owners = existing
        .metadata
        .owner_references
        .clone()
        .unwrap_or_default();
    let has_owner = owners.iter().any(|reference| reference.uid == owner.uid);
    let has_label =
        existing.labels().get(labels::ROLE).map(String::as_str) == Some(labels::ROLE_SEED);
    if has_owner && has_label {
        return Ok(());
    }
    if !has_owner {
        owners.push(owner);
    }
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
    api.patch(&namespace_name, &params, &Patch::Merge(&patch))
        .await
        .map(|_| ())
        .map_err(failed)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn installations_of_seed_match_seed_ref_name() {
        let ci = |name: &str, seed: &str| -> ControllerInstallation {
            serde_json::from_value(json!({"metadata": {"name": name},
                "spec": {"registrationRef": {"name": "r"}, "seedRef": {"name": seed}}}))
            .unwrap()
        };
        let installations = [ci("a", "s1"), ci("b", "s2"), ci("c", "s1")];
        assert_eq!(installations_of_seed(&installations, "s1"), ["a", "c"]);
    }

    #[test]
    fn seed_owner_reference_is_a_controller_reference() {
        let seed: Seed = serde_json::from_value(json!({"metadata": {"name": "s1", "uid": "u1"},
            "spec": {"provider": {"type": "local", "region": "r"}, "networks": {"pods": "p", "services": "s"}}}))
        .unwrap();
        let owner = seed_owner_reference(&seed).unwrap();
        assert_eq!(owner.kind, "Seed");
        assert_eq!(owner.uid, "u1");
        assert_eq!(owner.controller, Some(true));
        assert!(seed_owner_reference(&Seed::default()).is_none());
    }
}

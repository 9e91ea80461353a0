//! Uninstalling a deleted ControllerInstallation (spec §2.7): delete the manifest Secrets and the
//! ManagedResource, wait until the ManagedResource (hence its objects) is gone, delete the
//! extension namespace and wait for it, delete the garden ServiceAccount, drop the finalizer.
//! `Installed` says where it stands at every step.

use std::time::Duration;

use k8s_openapi::api::core::v1::{Namespace, Secret, ServiceAccount};
use kube::api::DeleteParams;
use kube::runtime::controller::Action;
use kube::{Api, ResourceExt};

use seedlet_api::conditions::ConditionStatus;
use seedlet_api::core::ControllerInstallation;
use seedlet_api::names::{finalizers, namespaces, objects, reasons};
use seedlet_api::resources::ManagedResource;

use super::conditions::Conditions;
use super::fetch::read_seed;
use super::{Error, Installer};
use seedlet_runtime::finalizer;

/// Requeue delay while the ManagedResource or the namespace is still going away.
pub const DELETION_PENDING_REQUEUE: Duration = Duration::from_secs(5);

/// Runs one deletion step for `ci`.
///
/// # Errors
/// Seed read and deletion failures (also reported in `Installed`), finalizer removal.
pub async fn delete(ci: &ControllerInstallation, ctx: &Installer) -> Result<Action, Error> {
    let name = ci.name_any();
    let api: Api<ControllerInstallation> = Api::all(ctx.garden());
    if !ci
        .finalizers()
        .iter()
        .any(|f| f == finalizers::CONTROLLER_INSTALLATION)
    {
        return Ok(Action::await_change());
    }
    let now = ctx.clock.now();
    let mut conditions = Conditions::for_deletion(ci, now);
    let result = steps(ci, ctx, &mut conditions).await;
    let written = conditions.write(&api, &name).await;
    if let (Ok(true), Some((kind, reason, message))) = (&written, conditions.installed_event()) {
        ctx.events
            .publish(ci, kind, reason, "Delete", message)
            .await;
    }
    let wrote_conditions = matches!(written, Ok(true));
    if let (Ok(_), Err(source)) = (&result, written) {
        return Err(Error::WriteConditions { name, source });
    }
    match result {
        Ok(Some(action)) => Ok(action),
        Ok(None) => {
            // The condition write just moved the resourceVersion `ci` carries: the guarded
            // finalizer patch needs the latest version, or every deletion ends in a 409.
            let latest;
            let current = if wrote_conditions {
                match api.get_opt(&name).await {
                    Ok(Some(read)) => {
                        latest = read;
                        &latest
                    }
                    Ok(None) => return Ok(Action::await_change()),
                    Err(source) => return Err(Error::Finalizer { name, source }),
                }
            } else {
                ci
            };
            finalizer::remove(&api, current, finalizers::CONTROLLER_INSTALLATION)
                .await
                .map_err(|source| Error::Finalizer { name, source })?;
            Ok(Action::await_change())
        }
        Err(error) => Err(error),
    }
}

/// `Ok(None)` when everything is gone, `Ok(Some(requeue))` while pending.
async fn steps(
    ci: &ControllerInstallation,
    ctx: &Installer,
    conditions: &mut Conditions,
) -> Result<Option<Action>, Error> {
    let name = ci.name_any();
    read_seed(ctx, conditions).await?;
    let seed = ctx.seed.clone();

    let managed_resources: Api<ManagedResource> = Api::namespaced(seed.clone(), namespaces::GARDEN);
    let secrets: Api<Secret> = Api::namespaced(seed.clone(), namespaces::GARDEN);
    let deletion_failed = |conditions: &mut Conditions, error: &kube::Error| {
        conditions.installed(
            ConditionStatus::False,
            reasons::DELETION_FAILED,
            &format!("Deletion of ManagedResource {name:?} and its secrets failed: {error}"),
        );
    };
    let existing = match managed_resources.get_opt(&name).await {
        Ok(existing) => existing,
        Err(source) => {
            conditions.installed(
                ConditionStatus::False,
                reasons::DELETION_FAILED,
                &format!("Deletion of ManagedResource {name:?} failed: {source}"),
            );
            return Err(Error::DeleteManagedResource { name, source });
        }
    };
    let mut secret_names = vec![name.clone()];
    if let Some(mr) = &existing {
        secret_names.extend(mr.spec.secret_refs.iter().map(|r| r.name.clone()));
    }
    for secret in &secret_names {
        if let Err(source) = delete_ignoring_missing(&secrets, secret).await {
            deletion_failed(conditions, &source);
            return Err(Error::DeleteManagedResource { name, source });
        }
    }
    if existing.is_some() {
        if let Err(source) = delete_ignoring_missing(&managed_resources, &name).await {
            deletion_failed(conditions, &source);
            return Err(Error::DeleteManagedResource { name, source });
        }
        match managed_resources.get_opt(&name).await {
            Ok(Some(_)) => {
                conditions.installed(
                    ConditionStatus::False,
                    reasons::DELETION_PENDING,
                    &format!("Deletion of ManagedResource {name:?} is still pending."),
                );
                return Ok(Some(Action::requeue(DELETION_PENDING_REQUEUE)));
            }
            Ok(None) => {}
            Err(source) => {
                conditions.installed(
                    ConditionStatus::False,
                    reasons::DELETION_FAILED,
                    &format!("Deletion of ManagedResource {name:?} failed: {source}"),
                );
                return Err(Error::DeleteManagedResource { name, source });
            }
        }
    }

    let namespace = namespaces::extension_namespace(&name);
    let namespaces_api: Api<Namespace> = Api::all(seed);
    match namespaces_api
        .delete(&namespace, &DeleteParams::default())
        .await
    {
        Ok(_) => {
            conditions.installed(
                ConditionStatus::False,
                reasons::DELETION_PENDING,
                &format!("Deletion of Namespace {namespace:?} is still pending."),
            );
            return Ok(Some(Action::requeue(DELETION_PENDING_REQUEUE)));
        }
        Err(kube::Error::Api(status)) if status.is_conflict() => {
            conditions.installed(
                ConditionStatus::False,
                reasons::DELETION_PENDING,
                &format!("Deletion of Namespace {namespace:?} is still pending."),
            );
            return Ok(Some(Action::requeue(DELETION_PENDING_REQUEUE)));
        }
        Err(kube::Error::Api(status)) if status.is_not_found() => {}
        Err(source) => {
            conditions.installed(
                ConditionStatus::False,
                reasons::DELETION_FAILED,
                &format!("Deletion of Namespace {namespace:?} failed: {source}"),
            );
            return Err(Error::DeleteNamespace {
                name: namespace,
                source,
            });
        }
    }
    conditions.installed(
        ConditionStatus::False,
        reasons::DELETION_SUCCESSFUL,
        reasons::DELETION_SUCCESSFUL_MESSAGE,
    );

    let account_namespace = namespaces::seed_namespace(&ctx.seed_name);
    let account = format!("{}{name}", objects::EXTENSION_SERVICE_ACCOUNT_PREFIX);
    let accounts: Api<ServiceAccount> = Api::namespaced(ctx.garden(), &account_namespace);
    if let Err(source) = delete_ignoring_missing(&accounts, &account).await {
        conditions.installed(
            ConditionStatus::False,
            reasons::DELETION_FAILED,
            &format!("Deletion of ServiceAccount \"{account_namespace}/{account}\" in garden cluster failed: {source}"),
        );
        return Err(Error::DeleteServiceAccount {
            name: account,
            source,
        });
    }
    Ok(None)
}

async fn delete_ignoring_missing<K>(api: &Api<K>, name: &str) -> Result<(), kube::Error>
where
    K: kube::Resource + Clone + serde::de::DeserializeOwned + std::fmt::Debug,
{
    match api.delete(name, &DeleteParams::default()).await {
        Ok(_) => Ok(()),
        Err(kube::Error::Api(status)) if status.is_not_found() => Ok(()),
        Err(error) => Err(error),
    }
}

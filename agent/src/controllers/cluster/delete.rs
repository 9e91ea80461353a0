//! What goes when a shoot goes: gardenlet's delete flow as far as a seedlet seed holds anything
//! of the shoot (gardenlet-shoot-flow §5.1, §5.3 step 6, §5.4). For a deleting shoot of this seed
//! that carries our `gardener` finalizer: wait until the garden's Bastions of the shoot are gone,
//! show the deletion to extensions in the Cluster, delete the control-plane namespace (and with
//! it every extension object in it) and wait for it, delete the Cluster, delete the garden
//! ShootState, and only then remove the finalizer, so the Shoot cannot disappear before its seed
//! side is cleaned up.
//!
//! The Cluster-side teardown ([`super::ClusterTeardown`]) covers what that flow cannot see: a Cluster
//! whose shoot moved to another seed, got a new technical ID, or vanished without the finalizer
//! (deleted before this agent put it on). Where the seed authorizer guards the garden, reading a
//! vanished shoot is a `403 no relationship found`, not a 404 (the graph edge went with the
//! shoot); once the agent's shoot watch has dropped the shoot too, that 403 means gone.

use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::core::v1::Namespace;
use kube::api::{DeleteParams, ListParams, Patch, PatchParams};
use kube::runtime::controller::Action;
use kube::runtime::reflector::ObjectRef;
use kube::{Api, ResourceExt};
use seedlet_api::core::{Shoot, ShootState};
use seedlet_api::extensions::{Cluster, embed};
use seedlet_api::names::{annotations, finalizers};
use seedlet_api::operations::Bastion;
use seedlet_runtime::controller::Reconciler;
use serde_json::json;

use super::desired::is_scheduled_to;
use super::reconcile::{Error, seed_error};
use super::{CLEANUP_NAME, ClusterSync, ClusterTeardown};
use crate::cluster_shoot::ShootRef;

/// Poll interval while a control-plane namespace terminates (a namespace watch also triggers).
pub const NAMESPACE_POLL: Duration = Duration::from_secs(2);
/// Poll interval while the garden still holds Bastions of a deleting shoot: one list of the
/// project namespace's Bastions per second, only while the shoot is being deleted (the garden
/// removes a deleting shoot's Bastions within about a second; at 5 s a Shoot with a Bastion took
/// 16 s to go on a real garden).
pub const BASTION_POLL: Duration = Duration::from_secs(1);

/// What the seed-side deletion steps need: borrowed from the Cluster sync's context, or from the
/// Shoot controller's delete flow, which runs the same steps as its last tasks.
#[derive(Clone, Copy)]
pub struct Clients<'a> {
    /// Seed client.
    pub seed: &'a kube::Client,
    /// Garden client.
    pub garden: &'a kube::Client,
    /// Our Seed's name.
    pub seed_name: &'a str,
    /// Field manager of our writes.
    pub field_manager: &'static str,
    /// Time source (deletion confirmation timestamps).
    pub clock: &'a dyn seedlet_runtime::clock::Clock,
}

impl std::fmt::Debug for Clients<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Clients")
            .field("seed", &self.seed_name)
            .finish_non_exhaustive()
    }
}

impl ClusterSync {
    /// The clients of the seed-side deletion steps.
    pub fn clients(&self) -> Clients<'_> {
        Clients {
            seed: &self.seed,
            garden: &self.garden,
            seed_name: &self.seed_name,
            field_manager: self.field_manager,
            clock: self.clock.as_ref(),
        }
    }
}

/// The delete flow of a deleting shoot of this seed. Without our finalizer there is nothing to
/// hold the shoot for (the Cluster-side teardown cleans up after it). Idempotent.
///
/// # Errors
/// See [`Error`]; the next run reads fresh state.
pub async fn delete_shoot(shoot: &Shoot, ctx: &ClusterSync) -> Result<Action, Error> {
    if !has_finalizer(shoot) {
        return Ok(Action::await_change());
    }
    let clients = ctx.clients();
    if ctx.shoot_flow_deletes {
        // The Shoot controller's delete flow destroys the extension objects in order and then
        // runs the steps below itself; this sync only keeps the Cluster showing the deletion.
        if let Some(technical_id) = crate::cluster_shoot::stored_technical_id(shoot) {
            show_deletion(clients, shoot, technical_id).await?;
        }
        return Ok(Action::await_change());
    }
    let ctx = clients;
    let name = shoot.name_any();
    let namespace = shoot
        .namespace()
        .ok_or_else(|| Error::MissingNamespace { name: name.clone() })?;
    let key = format!("{namespace}/{name}");
    // Gardenlet does not start the flow while Bastions of the shoot exist: the garden's bastion
    // controller deletes them, this agent's bastion controller removes their extension objects.
    let bastions = bastions_of(ctx, &namespace, &name).await?;
    if !bastions.is_empty() {
        tracing::debug!(shoot = %key, ?bastions, "waiting for the shoot's bastions to go");
        return Ok(Action::requeue(BASTION_POLL));
    }
    if let Some(technical_id) = crate::cluster_shoot::stored_technical_id(shoot) {
        show_deletion(ctx, shoot, technical_id).await?;
        if let Some(pending) = teardown(ctx, technical_id).await? {
            return Ok(pending);
        }
    }
    delete_shoot_state(ctx, &namespace, &name, &key).await?;
    let shoots: Api<Shoot> = Api::namespaced(ctx.garden.clone(), &namespace);
    let patch_error = |source| Error::PatchShoot {
        key: key.clone(),
        source,
    };
    // The cached shoot may be older than the last status write: guard against the latest.
    if let Some(fresh) = shoots.get_opt(&name).await.map_err(patch_error)? {
        seedlet_runtime::finalizer::remove(&shoots, &fresh, finalizers::GARDENER)
            .await
            .map_err(patch_error)?;
        tracing::info!(shoot = %key, "shoot cleaned up in the seed, finalizer removed");
    }
    Ok(Action::await_change())
}

/// Whether the shoot carries our (gardenlet's) finalizer.
pub fn has_finalizer(shoot: &Shoot) -> bool {
    shoot.finalizers().iter().any(|f| f == finalizers::GARDENER)
}

/// The names of the garden's Bastions in `namespace` that point at shoot `name` (listed by this
/// seed's `spec.seedName`, as the seed authorizer demands; unfiltered where the garden cannot
/// select that field).
pub async fn bastions_of(
    ctx: Clients<'_>,
    namespace: &str,
    name: &str,
) -> Result<Vec<String>, Error> {
    let api: Api<Bastion> = Api::namespaced(ctx.garden.clone(), namespace);
    let selected = ListParams::default().fields(&format!("spec.seedName={}", ctx.seed_name));
    let listed = match api.list(&selected).await {
        Err(kube::Error::Api(status)) if status.code == 400 => {
            api.list(&ListParams::default()).await
        }
        other => other,
    };
    let listed = listed.map_err(|source| Error::ReadGarden {
        kind: "Bastion",
        key: namespace.to_owned(),
        source,
    })?;
    Ok(listed
        .items
        .iter()
        .filter(|bastion| {
            bastion.spec.shoot_ref.name == name
                && bastion.spec.seed_name.as_deref() == Some(ctx.seed_name)
        })
        .map(ResourceExt::name_any)
        .collect())
}

/// A shoot-only sync of the Cluster (spec §1.4: `cloudProfile` and `seed` untouched), so that
/// extensions see the deletion timestamp before their objects are deleted.
pub async fn show_deletion(
    ctx: Clients<'_>,
    shoot: &Shoot,
    technical_id: &str,
) -> Result<(), Error> {
    let clusters: Api<Cluster> = Api::all(ctx.seed.clone());
    let Some(current) = clusters.get_opt(technical_id).await.map_err(seed_error(
        "reading",
        "Cluster",
        technical_id,
    ))?
    else {
        return Ok(());
    };
    let embedded = embed(shoot).map_err(|source| Error::Encode {
        name: technical_id.to_owned(),
        source,
    })?;
    let Some(diff) = crate::merge_patch::merge_diff(&current.spec.shoot, &embedded) else {
        return Ok(());
    };
    let params = PatchParams {
        field_manager: Some(ctx.field_manager.to_owned()),
        ..PatchParams::default()
    };
    let patch = json!({"spec": {"shoot": diff}});
    match clusters
        .patch(technical_id, &params, &Patch::Merge(&patch))
        .await
    {
        Ok(_) => Ok(()),
        Err(kube::Error::Api(status)) if status.is_not_found() => Ok(()),
        Err(source) => Err(seed_error("patching", "Cluster", technical_id)(source)),
    }
}

/// Deletes the control-plane namespace `name`, and the Cluster once the namespace is gone.
/// `Some(requeue)` while the namespace still terminates, `None` when both are gone. Idempotent.
///
/// # Errors
/// Seed API errors other than NotFound.
pub async fn teardown(ctx: Clients<'_>, name: &str) -> Result<Option<Action>, Error> {
    if !delete_namespace(ctx, name).await? {
        return Ok(Some(Action::requeue(NAMESPACE_POLL)));
    }
    delete_cluster(ctx, name).await?;
    Ok(None)
}

/// Deletes the control-plane namespace `name` unless it already terminates; true once it is
/// gone.
///
/// # Errors
/// Seed API errors other than NotFound.
pub async fn delete_namespace(ctx: Clients<'_>, name: &str) -> Result<bool, Error> {
    let namespaces: Api<Namespace> = Api::all(ctx.seed.clone());
    let Some(namespace) =
        namespaces
            .get_opt(name)
            .await
            .map_err(seed_error("reading", "Namespace", name))?
    else {
        return Ok(true);
    };
    if namespace.metadata.deletion_timestamp.is_none() {
        match namespaces.delete(name, &DeleteParams::default()).await {
            Ok(_) => {}
            Err(kube::Error::Api(status)) if status.is_not_found() => return Ok(true),
            Err(source) => return Err(seed_error("deleting", "Namespace", name)(source)),
        }
    }
    Ok(false)
}

/// Deletes Cluster `name` (NotFound counts as done).
///
/// # Errors
/// Seed API errors other than NotFound.
pub async fn delete_cluster(ctx: Clients<'_>, name: &str) -> Result<(), Error> {
    match Api::<Cluster>::all(ctx.seed.clone())
        .delete(name, &DeleteParams::default())
        .await
    {
        Ok(_) => Ok(()),
        Err(kube::Error::Api(status)) if status.is_not_found() => Ok(()),
        Err(source) => Err(seed_error("deleting", "Cluster", name)(source)),
    }
}

/// Gardener's ShootState deletion (spec §3.2 `Delete`): confirm with
/// `confirmation.gardener.cloud/deletion=true` and a timestamp, then DELETE; a missing
/// ShootState counts as done. Runs after the Cluster is gone, so the ShootState sync (keyed by
/// the Cluster) cannot write it again.
pub async fn delete_shoot_state(
    ctx: Clients<'_>,
    namespace: &str,
    name: &str,
    key: &str,
) -> Result<(), Error> {
    let states: Api<ShootState> = Api::namespaced(ctx.garden.clone(), namespace);
    let delete_error = |source| Error::DeleteShootState {
        key: key.to_owned(),
        source,
    };
    let stamp = crate::extension_sync::operation::timestamp(ctx.clock.now());
    let confirm = json!({"metadata": {"annotations": {
        (annotations::CONFIRMATION_DELETION): "true",
        (annotations::TIMESTAMP): stamp,
    }}});
    match states
        .patch(name, &PatchParams::default(), &Patch::Merge(&confirm))
        .await
    {
        Ok(_) => {}
        Err(kube::Error::Api(status)) if status.is_not_found() => return Ok(()),
        Err(source) => return Err(delete_error(source)),
    }
    match states.delete(name, &DeleteParams::default()).await {
        Ok(_) => Ok(()),
        Err(kube::Error::Api(status)) if status.is_not_found() => Ok(()),
        Err(source) => Err(delete_error(source)),
    }
}

impl Reconciler for ClusterTeardown {
    type Object = Cluster;
    type Error = Error;
    const NAME: &'static str = CLEANUP_NAME;

    /// Tears down a Cluster whose shoot is gone, elsewhere or deleting without our finalizer:
    /// its namespace first, then the Cluster once the namespace is gone.
    async fn reconcile(&self, cluster: Arc<Cluster>) -> Result<Action, Error> {
        cleanup(&cluster, &self.0).await
    }

    /// The Cluster sync's retry delay.
    fn retry_after(&self, error: &Error) -> Duration {
        self.0.retry_after(error)
    }

    fn concurrency(&self) -> u16 {
        self.0.concurrency
    }
}

async fn cleanup(cluster: &Cluster, ctx: &ClusterSync) -> Result<Action, Error> {
    let Some((name, shoot)) = ShootRef::of_cluster(cluster) else {
        // Not a Cluster of a shoot (e.g. written by hand without an embedded shoot): leave it.
        return Ok(Action::await_change());
    };
    let key = format!("{}/{}", shoot.namespace, shoot.name);
    // Read the shoot from the API, not a cache: tearing down on a stale view would be fatal.
    let read = Api::<Shoot>::namespaced(ctx.garden.clone(), &shoot.namespace)
        .get_opt(&shoot.name)
        .await;
    let live = match read {
        Ok(live) => live,
        Err(kube::Error::Api(status))
            if status.code == 403 && !watched(ctx, &shoot.namespace, &shoot.name).await =>
        {
            tracing::debug!(shoot = %key, "shoot unreadable and gone from the watch: gone");
            None
        }
        Err(source) => {
            return Err(Error::ReadGarden {
                kind: "Shoot",
                key,
                source,
            });
        }
    };
    if keeps(live.as_ref(), &ctx.seed_name, &name) {
        return Ok(Action::requeue(ctx.sync_period));
    }
    Ok(teardown(ctx.clients(), &name)
        .await?
        .unwrap_or_else(Action::await_change))
}

/// Whether the agent's shoot watch holds shoot `namespace/name`, or cannot tell yet (not listed
/// yet: a 403 then proves nothing).
async fn watched(ctx: &ClusterSync, namespace: &str, name: &str) -> bool {
    if ctx.shoots.wait_until_ready().await.is_err() {
        return true;
    }
    ctx.shoots
        .get(&ObjectRef::new(name).within(namespace))
        .is_some()
}

/// Whether Cluster `name` stays: its shoot exists, is scheduled here, is not deleting without
/// our finalizer (with it, the shoot's delete flow tears down in order) and still has `name` as
/// its technical ID (a Cluster named otherwise would never be updated again, e.g. after an
/// operator restored a legacy ID).
pub fn keeps(shoot: Option<&Shoot>, seed: &str, name: &str) -> bool {
    shoot.is_some_and(|shoot| {
        is_scheduled_to(shoot, seed)
            && (shoot.metadata.deletion_timestamp.is_none() || has_finalizer(shoot))
            && crate::cluster_shoot::stored_technical_id(shoot) == Some(name)
    })
}

#[cfg(test)]
mod tests {
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
    use serde_json::json;

    use super::*;

    fn shoot(seed: &str, id: &str, deleting: bool, finalizer: bool) -> Shoot {
        let mut shoot: Shoot = serde_json::from_value(json!({
            "metadata": {"name": "s", "namespace": "garden-dev"},
            "spec": {"provider": {"type": "local"}, "region": "r", "seedName": seed},
            "status": {"technicalID": id},
        }))
        .expect("shoot");
        if deleting {
            shoot.metadata.deletion_timestamp = Some(Time(jiff::Timestamp::UNIX_EPOCH));
        }
        if finalizer {
            shoot.metadata.finalizers = Some(vec!["other".into(), "gardener".into()]);
        }
        shoot
    }

    #[test]
    fn a_cluster_stays_only_for_its_live_or_finalized_shoot_of_this_seed() {
        let id = "shoot--dev--s";
        let cases = [
            (None, false, "shoot gone"),
            (Some(shoot("local", id, false, false)), true, "live shoot"),
            (Some(shoot("local", id, false, true)), true, "live shoot"),
            (Some(shoot("other", id, false, true)), false, "moved away"),
            (
                Some(shoot("local", "shoot-dev-s", false, true)),
                false,
                "new technical ID",
            ),
            (
                Some(shoot("local", id, true, true)),
                true,
                "delete flow runs",
            ),
            (
                Some(shoot("local", id, true, false)),
                false,
                "deleting, not held",
            ),
        ];
        for (shoot, expected, case) in cases {
            assert_eq!(keeps(shoot.as_ref(), "local", id), expected, "{case}");
        }
    }

    #[test]
    fn our_finalizer_is_found_among_others() {
        assert!(has_finalizer(&shoot("local", "x", false, true)));
        assert!(!has_finalizer(&shoot("local", "x", false, false)));
    }
}

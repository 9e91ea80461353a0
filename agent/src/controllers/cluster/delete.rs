//! The Cluster controller's deletions: the delete flow of a deleting shoot of this seed when the
//! Shoot controller is switched off (`controllers.shoot.enabled: false`, gardenlet-shoot-flow
//! §5.1, §5.3 step 6, §5.4), and the Cluster teardown. For a deleting shoot that carries our
//! `gardener` finalizer the flow waits until the garden's Bastions of the shoot are gone, shows
//! the deletion to extensions in the Cluster, deletes the control-plane namespace (and with it
//! every extension object in it) and waits for it, deletes the Cluster, deletes the garden
//! ShootState, and only then removes the finalizer, so the Shoot cannot disappear before its seed
//! side is cleaned up. With the Shoot controller on, its delete flow runs these steps and the
//! shoot sync only shows the deletion in the Cluster. The steps themselves are
//! [`crate::shoot_teardown`]'s.
//!
//! The Cluster-side teardown ([`super::ClusterTeardown`]) covers what that flow cannot see: a Cluster
//! whose shoot moved to another seed, got a new technical ID, or vanished without the finalizer
//! (deleted before this agent put it on). Where the seed authorizer guards the garden, reading a
//! vanished shoot is a `403 no relationship found`, not a 404 (the graph edge went with the
//! shoot); once the agent's shoot watch has dropped the shoot too, that 403 means gone.

use std::sync::Arc;
use std::time::Duration;

use kube::runtime::controller::Action;
use kube::runtime::reflector::ObjectRef;
use kube::{Api, ResourceExt};
use seedlet_api::core::Shoot;
use seedlet_api::extensions::Cluster;
use seedlet_api::names::finalizers;
use seedlet_runtime::controller::Reconciler;

use super::desired::is_scheduled_to;
use super::reconcile::Error;
use super::{CLEANUP_NAME, ClusterSync, ClusterTeardown};
use crate::cluster_shoot::ShootRef;
use crate::shoot_teardown::{
    BASTION_POLL, Clients, bastions_of, delete_shoot_state, has_finalizer, show_deletion, teardown,
};

impl ClusterSync {
    /// The clients of the seed-side teardown steps.
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

    /// A kept Cluster is checked again each `controllers.shoot.syncPeriod`, by the runtime's
    /// resync.
    fn resync_period(&self) -> Option<Duration> {
        Some(self.0.sync_period)
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
}

//! One ManagedSeedSet pass: read the replicas, step the pending one, then scale out, scale in or
//! step the postponed ones; write the status after every pass (also on error).

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::api::{DeleteParams, ListParams, Patch, PatchParams, PostParams};
use kube::runtime::controller::Action;
use kube::{Api, ResourceExt};
use seedlet_api::core::{Seed, Shoot};
use seedlet_api::names::{annotations, finalizers, shoot_lifecycle};
use seedlet_api::seedmanagement::{
    ManagedSeed, ManagedSeedSet, ManagedSeedSetStatus, PendingReplica,
};
use seedlet_runtime::controller::{Reason, Reconciler};
use seedlet_runtime::events::EventType;
use serde_json::json;

use super::desired::{replica_managed_seed, replica_shoot, selects};
use super::replica::{self, Replica, Status};
use super::{ManagedSeedSets, NAME};

/// Errors of one ManagedSeedSet pass.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The set has no namespace.
    #[error("managedseedset {0} without a namespace")]
    MissingNamespace(String),
    /// A read of Shoots, ManagedSeeds or Seeds failed.
    #[error("listing {what} of managedseedset {set}")]
    List {
        /// What was listed.
        what: &'static str,
        /// `namespace/name` of the set.
        set: String,
        /// Cause.
        #[source]
        source: kube::Error,
    },
    /// Creating, annotating or deleting a replica's object failed.
    #[error("{step} {object}")]
    Write {
        /// What was being done.
        step: &'static str,
        /// The object.
        object: String,
        /// Cause.
        #[source]
        source: kube::Error,
    },
    /// Scale-in found only protected replicas or replicas whose Seed hosts Shoots.
    #[error("no deletable replicas found")]
    NoDeletableReplicas,
    /// The pass did not finish within the sync period.
    #[error("reconcile of managedseedset {0} timed out")]
    Timeout(String),
}

impl Reason for Error {
    fn reason(&self) -> &'static str {
        match self {
            Error::MissingNamespace(_) => "ManagedSeedSetInvalid",
            Error::List { .. } => "ListError",
            Error::Write { .. } => "WriteError",
            Error::NoDeletableReplicas => "NoDeletableReplicas",
            Error::Timeout(_) => "ReconcileTimeout",
        }
    }
}

impl Reconciler for ManagedSeedSets {
    type Object = ManagedSeedSet;
    type Error = Error;
    const NAME: &'static str = NAME;

    /// Runs one pass (see the module docs) and requeues after the sync period.
    async fn reconcile(&self, set: Arc<ManagedSeedSet>) -> Result<Action, Error> {
        let bounded = async {
            let result = match tokio::time::timeout(self.sync_period, pass(&set, self)).await {
                Ok(result) => result,
                Err(_) => Err(Error::Timeout(set.name_any())),
            };
            if let Err(error) = &result {
                self.events
                    .publish(
                        set.as_ref(),
                        EventType::Warning,
                        "ReconcileError",
                        "Reconcile",
                        &seedlet_runtime::error_chain(error).to_string(),
                    )
                    .await;
            }
            result
        };
        let result = bounded.await;
        result.map(|()| Action::requeue(self.sync_period))
    }

    /// Retry delay after a failure (the runtime logs it once).
    fn retry_after(&self, _: &Error) -> Duration {
        self.sync_period.min(Duration::from_secs(5))
    }

    fn concurrency(&self) -> u16 {
        self.concurrency
    }
}

/// Whether the pass ended with nothing pending.
enum Outcome {
    Pending,
    Done,
}

async fn pass(cached: &ManagedSeedSet, ctx: &ManagedSeedSets) -> Result<(), Error> {
    let name = cached.name_any();
    let namespace = cached
        .namespace()
        .ok_or_else(|| Error::MissingNamespace(name.clone()))?;
    let sets: Api<ManagedSeedSet> = Api::namespaced(ctx.client.clone(), &namespace);
    let key = format!("{namespace}/{name}");
    // The pending replica and its retries must be read fresh: the cache may not hold the
    // status the previous pass wrote yet.
    let Some(set) = sets.get_opt(&name).await.map_err(|source| Error::List {
        what: "the managedseedset",
        set: key.clone(),
        source,
    })?
    else {
        return Ok(());
    };
    let set = &set;
    let deleting = set.metadata.deletion_timestamp.is_some();
    if !deleting {
        seedlet_runtime::finalizer::ensure(&sets, set, finalizers::GARDENER)
            .await
            .map_err(|source| Error::Write {
                step: "adding finalizer to",
                object: key.clone(),
                source,
            })?;
    }
    let stored = set.status.clone().unwrap_or_default();
    let mut status = stored.clone();
    status.observed_generation = set.metadata.generation;
    let result = Pass {
        set,
        ctx,
        namespace: &namespace,
        key: &key,
    }
    .run(&mut status, deleting)
    .await;
    if status != stored {
        let mut written = serde_json::to_value(&status).unwrap_or_default();
        // A merge patch keeps fields it does not mention: clear them explicitly.
        match &status.pending_replica {
            None => written["pendingReplica"] = serde_json::Value::Null,
            Some(pending) if pending.retries.is_none() => {
                written["pendingReplica"]["retries"] = serde_json::Value::Null;
            }
            Some(_) => {}
        }
        sets.patch_status(
            &name,
            &PatchParams::default(),
            &Patch::Merge(&json!({"status": written})),
        )
        .await
        .map_err(|source| Error::Write {
            step: "patching status of",
            object: key.clone(),
            source,
        })?;
    }
    if matches!(result?, Outcome::Done) && deleting && status.replicas == 0 {
        let latest = sets.get_opt(&name).await.ok().flatten();
        if let Some(latest) = latest {
            seedlet_runtime::finalizer::remove(&sets, &latest, finalizers::GARDENER)
                .await
                .map_err(|source| Error::Write {
                    step: "removing finalizer from",
                    object: key,
                    source,
                })?;
        }
    }
    Ok(())
}

struct Pass<'a> {
    set: &'a ManagedSeedSet,
    ctx: &'a ManagedSeedSets,
    namespace: &'a str,
    key: &'a str,
}

impl Pass<'_> {
    async fn run(
        &self,
        status: &mut ManagedSeedSetStatus,
        deleting: bool,
    ) -> Result<Outcome, Error> {
        let replicas = self.replicas().await?;
        let target = if deleting {
            0
        } else {
            i64::from(self.set.spec.replicas.unwrap_or(1))
        };
        let count = i64::try_from(replicas.len()).unwrap_or(i64::MAX);
        let scaling_in = count > target;
        status.replicas = i32::try_from(count).unwrap_or(i32::MAX);
        status.ready_replicas =
            Some(i32::try_from(replicas.iter().filter(|r| r.ready()).count()).unwrap_or(i32::MAX));

        let pending_name = status.pending_replica.as_ref().map(|p| p.name.clone());
        if let Some(pending) = pending_name
            .as_deref()
            .and_then(|n| replicas.iter().find(|r| r.name == n))
            && self.step(pending, scaling_in, status).await?
        {
            return Ok(Outcome::Pending);
        }
        if count < target {
            self.create_replica(&replicas, status).await?;
            return Ok(Outcome::Pending);
        }
        if scaling_in {
            let victim = replica::scale_in_victim(&replicas).ok_or(Error::NoDeletableReplicas)?;
            self.delete_replica(victim, status).await?;
            return Ok(Outcome::Pending);
        }
        let mut postponed: Vec<&Replica> = replicas
            .iter()
            .filter(|r| !r.ready() && Some(&r.name) != pending_name.as_ref())
            .collect();
        postponed.sort_by_key(|r| r.ordinal);
        for replica in postponed {
            if self.step(replica, scaling_in, status).await? {
                return Ok(Outcome::Pending);
            }
        }
        status.pending_replica = None;
        Ok(Outcome::Done)
    }

    /// The set's replicas: Shoots selected in its namespace, joined by name with the selected
    /// ManagedSeeds and Seeds; whether each Seed hosts Shoots.
    async fn replicas(&self) -> Result<Vec<Replica>, Error> {
        let selector = self.set.spec.selector.as_ref();
        let list_error = |what: &'static str| {
            move |source| Error::List {
                what,
                set: self.key.to_owned(),
                source,
            }
        };
        let all_shoots = Api::<Shoot>::all(self.ctx.client.clone())
            .list(&ListParams::default())
            .await
            .map_err(list_error("shoots"))?
            .items;
        let mut managed_seeds: HashMap<String, ManagedSeed> =
            Api::<ManagedSeed>::namespaced(self.ctx.client.clone(), self.namespace)
                .list(&ListParams::default())
                .await
                .map_err(list_error("managedseeds"))?
                .items
                .into_iter()
                .filter(|m| selects(selector, m.labels()))
                .map(|m| (m.name_any(), m))
                .collect();
        let mut seeds: HashMap<String, Seed> = Api::<Seed>::all(self.ctx.client.clone())
            .list(&ListParams::default())
            .await
            .map_err(list_error("seeds"))?
            .items
            .into_iter()
            .filter(|s| selects(selector, s.labels()))
            .map(|s| (s.name_any(), s))
            .collect();
        let hosts = |seed: &str| {
            all_shoots.iter().any(|shoot| {
                shoot.spec.seed_name.as_deref() == Some(seed)
                    || shoot.status.as_ref().and_then(|s| s.seed_name.as_deref()) == Some(seed)
            })
        };
        let mut replicas: Vec<Replica> = all_shoots
            .iter()
            .filter(|shoot| {
                shoot.namespace().as_deref() == Some(self.namespace)
                    && selects(selector, shoot.labels())
            })
            .map(|shoot| {
                let name = shoot.name_any();
                Replica {
                    ordinal: replica::ordinal(&name),
                    managed_seed: managed_seeds.remove(&name),
                    seed: seeds.remove(&name),
                    seed_hosts_shoots: hosts(&name),
                    shoot: shoot.clone(),
                    name,
                }
            })
            .collect();
        replicas.sort_by_key(|r| r.ordinal);
        Ok(replicas)
    }

    /// Runs one step on `replica`; returns whether it now waits (or acted), which ends the pass.
    async fn step(
        &self,
        replica: &Replica,
        scaling_in: bool,
        status: &mut ManagedSeedSetStatus,
    ) -> Result<bool, Error> {
        let pending = status
            .pending_replica
            .as_ref()
            .map(|p| (p.name.as_str(), p.reason.as_str(), p.retries));
        let action = replica::step(replica, scaling_in, pending, self.ctx.max_shoot_retries);
        let shoot = format!("{}/{}", self.namespace, replica.name);
        match action {
            replica::Action::Continue => return Ok(false),
            replica::Action::Retry {
                event,
                pending,
                retries,
            } => {
                let shoots: Api<Shoot> = Api::namespaced(self.ctx.client.clone(), self.namespace);
                let patch = json!({"metadata": {"annotations": {annotations::OPERATION: shoot_lifecycle::OPERATION_RETRY}}});
                shoots
                    .patch(
                        &replica.name,
                        &PatchParams::default(),
                        &Patch::Merge(&patch),
                    )
                    .await
                    .map_err(|source| Error::Write {
                        step: "annotating shoot",
                        object: shoot.clone(),
                        source,
                    })?;
                let what = if pending == "ShootDeleting" {
                    "deletion"
                } else {
                    "reconciliation"
                };
                self.event(event, &format!("Retrying Shoot {shoot} {what}"))
                    .await;
                self.set_pending(status, &replica.name, pending, Some(retries));
            }
            replica::Action::Wait {
                event,
                pending,
                retries,
            } => {
                self.event(event, &wait_message(event, self.namespace, &replica.name))
                    .await;
                self.set_pending(status, &replica.name, pending, retries);
            }
            replica::Action::CreateManagedSeed => {
                let object = replica_managed_seed(self.set, &replica.name);
                let managed_seed: ManagedSeed = serde_json::from_value(object).unwrap_or_default();
                let api: Api<ManagedSeed> =
                    Api::namespaced(self.ctx.client.clone(), self.namespace);
                match api.create(&PostParams::default(), &managed_seed).await {
                    Ok(_) => {}
                    Err(kube::Error::Api(status)) if status.is_already_exists() => {}
                    Err(source) => {
                        return Err(Error::Write {
                            step: "creating managedseed",
                            object: shoot,
                            source,
                        });
                    }
                }
                self.event(
                    "CreatingManagedSeed",
                    &format!("Creating ManagedSeed {shoot}"),
                )
                .await;
                self.set_pending(status, &replica.name, "ManagedSeedPreparing", None);
            }
            replica::Action::DeleteShoot => {
                self.delete_shoot(&replica.name).await?;
                self.set_pending(status, &replica.name, "ShootDeleting", None);
            }
        }
        Ok(true)
    }

    async fn create_replica(
        &self,
        replicas: &[Replica],
        status: &mut ManagedSeedSetStatus,
    ) -> Result<(), Error> {
        let last = replicas.iter().map(|r| r.ordinal).max().unwrap_or(-1);
        let ordinal = (last + 1).max(i64::from(status.next_replica_number.unwrap_or(0)));
        let name = format!("{}-{ordinal}", self.set.name_any());
        let shoot: Shoot =
            serde_json::from_value(replica_shoot(self.set, &name)).map_err(|error| {
                Error::Write {
                    step: "building shoot from shootTemplate of",
                    object: self.key.to_owned(),
                    source: kube::Error::SerdeError(error),
                }
            })?;
        let api: Api<Shoot> = Api::namespaced(self.ctx.client.clone(), self.namespace);
        match api.create(&PostParams::default(), &shoot).await {
            Ok(_) => {}
            Err(kube::Error::Api(status)) if status.is_already_exists() => {}
            Err(source) => {
                return Err(Error::Write {
                    step: "creating shoot",
                    object: format!("{}/{name}", self.namespace),
                    source,
                });
            }
        }
        self.event(
            "CreatingShoot",
            &format!("Creating Shoot {}/{name}", self.namespace),
        )
        .await;
        self.set_pending(status, &name, "ShootReconciling", None);
        status.replicas += 1;
        status.next_replica_number = Some(i32::try_from(ordinal + 1).unwrap_or(i32::MAX));
        Ok(())
    }

    async fn delete_replica(
        &self,
        victim: &Replica,
        status: &mut ManagedSeedSetStatus,
    ) -> Result<(), Error> {
        if victim.status() >= Status::ManagedSeedPreparing {
            let api: Api<ManagedSeed> = Api::namespaced(self.ctx.client.clone(), self.namespace);
            match api.delete(&victim.name, &DeleteParams::default()).await {
                Ok(_) => {}
                Err(kube::Error::Api(status)) if status.is_not_found() => {}
                Err(source) => {
                    return Err(Error::Write {
                        step: "deleting managedseed",
                        object: format!("{}/{}", self.namespace, victim.name),
                        source,
                    });
                }
            }
            self.event(
                "DeletingManagedSeed",
                &format!("Deleting ManagedSeed {}/{}", self.namespace, victim.name),
            )
            .await;
            self.set_pending(status, &victim.name, "ManagedSeedDeleting", None);
        } else {
            self.delete_shoot(&victim.name).await?;
            self.set_pending(status, &victim.name, "ShootDeleting", None);
        }
        Ok(())
    }

    /// Confirms the deletion of Shoot `name` and deletes it.
    async fn delete_shoot(&self, name: &str) -> Result<(), Error> {
        let api: Api<Shoot> = Api::namespaced(self.ctx.client.clone(), self.namespace);
        let object = format!("{}/{name}", self.namespace);
        let now = self.ctx.clock.now();
        let confirm = json!({"metadata": {"annotations": {
            annotations::CONFIRMATION_DELETION: "true",
            annotations::TIMESTAMP: now.strftime("%Y-%m-%dT%H:%M:%S%.fZ").to_string(),
        }}});
        let gone = |result: Result<(), kube::Error>, step: &'static str| match result {
            Ok(()) => Ok(()),
            Err(kube::Error::Api(status)) if status.is_not_found() => Ok(()),
            Err(source) => Err(Error::Write {
                step,
                object: object.clone(),
                source,
            }),
        };
        gone(
            api.patch(name, &PatchParams::default(), &Patch::Merge(&confirm))
                .await
                .map(|_| ()),
            "confirming deletion of shoot",
        )?;
        gone(
            api.delete(name, &DeleteParams::default()).await.map(|_| ()),
            "deleting shoot",
        )?;
        self.event("DeletingShoot", &format!("Deleting Shoot {object}"))
            .await;
        Ok(())
    }

    /// Replaces `pendingReplica` (new `since`) only when name, reason or retries change.
    fn set_pending(
        &self,
        status: &mut ManagedSeedSetStatus,
        name: &str,
        reason: &str,
        retries: Option<i32>,
    ) {
        let unchanged = status
            .pending_replica
            .as_ref()
            .is_some_and(|p| p.name == name && p.reason == reason && p.retries == retries);
        if !unchanged {
            status.pending_replica = Some(PendingReplica {
                name: name.to_owned(),
                reason: reason.to_owned(),
                since: Some(Time(self.ctx.clock.now())),
                retries,
            });
        }
    }

    async fn event(&self, reason: &str, message: &str) {
        self.ctx
            .events
            .publish(self.set, EventType::Normal, reason, "Reconcile", message)
            .await;
    }
}

/// The message of a waiting step's Event.
fn wait_message(event: &str, namespace: &str, name: &str) -> String {
    match event {
        "NotRetryingShootReconciliation" => format!(
            "Not retrying Shoot {namespace}/{name} reconciliation since max retries have been reached"
        ),
        "NotRetryingShootDeletion" => format!(
            "Not retrying Shoot {namespace}/{name} deletion since max retries have been reached"
        ),
        "WaitingForShootReconciled" => {
            format!("Waiting for Shoot {namespace}/{name} to be reconciled")
        }
        "WaitingForShootDeleted" => format!("Waiting for Shoot {namespace}/{name} to be deleted"),
        "WaitingForManagedSeedRegistered" => {
            format!("Waiting for ManagedSeed {namespace}/{name} to be registered")
        }
        "WaitingForManagedSeedDeleted" => {
            format!("Waiting for ManagedSeed {namespace}/{name} to be deleted")
        }
        "WaitingForSeedReady" => format!("Waiting for Seed {name} to be ready"),
        _ => format!("Waiting for Shoot {namespace}/{name} to be healthy"),
    }
}

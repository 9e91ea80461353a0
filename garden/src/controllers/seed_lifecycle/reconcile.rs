//! Seed lifecycle logic: Lease staleness → `GardenletReady=Unknown` → Shoot conditions `Unknown`.

use std::sync::Arc;
use std::time::Duration;

use futures::future::join_all;
use jiff::{SignedDuration, Timestamp};
use k8s_openapi::api::coordination::v1::Lease;
use kube::api::{ApiResource, DynamicObject, GroupVersionKind, Patch, PatchParams};
use kube::runtime::controller::Action;
use kube::{Api, ResourceExt};
use seedlet_api::conditions::{self, Condition, ConditionStatus};
use seedlet_api::core::{Seed, Shoot};
use seedlet_api::names::{annotations, condition_types, namespaces, reasons};
use seedlet_runtime::controller::{Reason, Reconciler};
use serde_json::json;

use super::{NAME, SeedLifecycle};
use crate::controllers::field_selection::list_by_field;

/// Errors of one seed-lifecycle reconcile.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The Seed has no name.
    #[error("seed without a name")]
    MissingName,
    /// Reading the Seed's Lease failed.
    #[error("reading lease {}/{seed}", namespaces::SEED_LEASE)]
    ReadLease {
        /// Seed name.
        seed: String,
        /// Cause.
        #[source]
        source: kube::Error,
    },
    /// Writing the Seed's `GardenletReady` condition failed.
    #[error("patching GardenletReady of seed {seed}")]
    PatchSeed {
        /// Seed name.
        seed: String,
        /// Cause.
        #[source]
        source: kube::Error,
    },
    /// Nudging the ManagedSeed of a seed with an expired client certificate failed.
    #[error("annotating managedseed garden/{seed}")]
    AnnotateManagedSeed {
        /// Seed name.
        seed: String,
        /// Cause.
        #[source]
        source: kube::Error,
    },
    /// Listing Shoots failed.
    #[error("listing shoots of seed {seed}")]
    ListShoots {
        /// Seed name.
        seed: String,
        /// Cause.
        #[source]
        source: kube::Error,
    },
    /// Writing a Shoot's conditions failed.
    #[error("patching status of shoot {shoot}")]
    PatchShoot {
        /// `namespace/name` of the Shoot.
        shoot: String,
        /// Cause.
        #[source]
        source: kube::Error,
    },
    /// The reconcile did not finish within the sync period.
    #[error("reconcile of seed {seed} timed out")]
    Timeout {
        /// Seed name.
        seed: String,
    },
}

impl Reason for Error {
    fn reason(&self) -> &'static str {
        match self {
            Error::MissingName => "SeedInvalid",
            Error::ReadLease { .. } => "LeaseReadError",
            Error::PatchSeed { .. } => "SeedPatchError",
            Error::AnnotateManagedSeed { .. } => "ManagedSeedPatchError",
            Error::ListShoots { .. } => "ShootListError",
            Error::PatchShoot { .. } => "ShootPatchError",
            Error::Timeout { .. } => "ReconcileTimeout",
        }
    }
}

/// Shoot health conditions set to `Unknown` when the agent stops sending heartbeats.
pub const SHOOT_CONDITIONS: [&str; 5] = [
    condition_types::API_SERVER_AVAILABLE,
    condition_types::CONTROL_PLANE_HEALTHY,
    condition_types::OBSERVABILITY_COMPONENTS_HEALTHY,
    condition_types::EVERY_NODE_READY,
    condition_types::SYSTEM_COMPONENTS_HEALTHY,
];
/// Shoot constraints set to `Unknown` when the agent stops sending heartbeats.
pub const SHOOT_CONSTRAINTS: [&str; 2] = [
    condition_types::HIBERNATION_POSSIBLE,
    condition_types::MAINTENANCE_PRECONDITIONS_SATISFIED,
];

impl Reconciler for SeedLifecycle {
    type Object = Seed;
    type Error = Error;
    const NAME: &'static str = NAME;

    /// Checks one Seed's heartbeat; see the module docs. Requeues every `syncPeriod`.
    async fn reconcile(&self, seed: Arc<Seed>) -> Result<Action, Error> {
        let name = seed.metadata.name.clone().ok_or(Error::MissingName)?;
        let bounded = async {
            match tokio::time::timeout(self.settings.sync_period, check(&seed, &name, self)).await {
                Ok(result) => result,
                Err(_) => Err(Error::Timeout { seed: name.clone() }),
            }
        };
        let result = bounded.await;
        result.map(Action::requeue)
    }

    /// Retry delay after a failure (the runtime logs it once).
    fn retry_after(&self, _: &Error) -> Duration {
        self.settings.sync_period.min(Duration::from_secs(5))
    }

    fn concurrency(&self) -> u16 {
        self.settings.concurrent_syncs
    }
}

/// The creation time of a Seed whose agent has not reported `GardenletReady` yet and that is
/// younger than `monitor_period`: it is judged only once that period has passed, as if its
/// creation were the first renewal. Upstream judges any Seed with conditions, and the garden's own
/// checks (`ExtensionsReady`, `BackupBucketsReady`) can write the first ones while the agent is
/// still creating its Lease: a Seed registering at that moment was marked Unknown for a beat.
/// An abandoned Seed still turns Unknown, one `monitor_period` after its creation.
pub fn awaiting_first_heartbeat(
    seed: &Seed,
    now: Timestamp,
    monitor_period: Duration,
) -> Option<Timestamp> {
    if conditions::find(seed.conditions(), condition_types::GARDENLET_READY).is_some() {
        return None;
    }
    let created = seed.metadata.creation_timestamp.as_ref()?.0;
    let judged_at = created.saturating_add(signed(monitor_period)).ok()?;
    (judged_at > now).then_some(created)
}

/// When to check a Seed again: at the moment its Lease (renewed at `renewed`) goes stale if that
/// comes before the next `sync_period` (plus a little, so the check finds it stale), else after
/// `sync_period`. Checking only every `syncPeriod` noticed an agent's loss up to a whole period
/// late; at the expiry itself it is noticed within the reconcile's own latency.
pub fn next_check(
    renewed: Option<Timestamp>,
    now: Timestamp,
    monitor_period: Duration,
    sync_period: Duration,
) -> Duration {
    let Some(renewed) = renewed else {
        return sync_period;
    };
    let stale_at = renewed
        .saturating_add(signed(monitor_period))
        .unwrap_or(Timestamp::MAX);
    let until_stale = stale_at.duration_since(now);
    if until_stale.is_negative() {
        return sync_period;
    }
    until_stale
        .unsigned_abs()
        .saturating_add(EXPIRY_MARGIN)
        .min(sync_period)
}

/// How long after a Lease's expiry its check runs (clock granularity and timer slack).
const EXPIRY_MARGIN: Duration = Duration::from_millis(20);

/// Judges the Seed's heartbeat; returns when to check again.
async fn check(seed: &Seed, name: &str, ctx: &SeedLifecycle) -> Result<Duration, Error> {
    let sync_period = ctx.settings.sync_period;
    // A Seed that never reported any condition has no agent yet; nothing to judge.
    if seed.conditions().is_empty() {
        return Ok(sync_period);
    }
    let now = ctx.clock.now();
    if let Some(created) = awaiting_first_heartbeat(seed, now, ctx.settings.monitor_period) {
        return Ok(next_check(
            Some(created),
            now,
            ctx.settings.monitor_period,
            sync_period,
        ));
    }
    let leases: Api<Lease> = Api::namespaced(ctx.client.clone(), namespaces::SEED_LEASE);
    let lease = leases
        .get_opt(name)
        .await
        .map_err(|source| Error::ReadLease {
            seed: name.to_owned(),
            source,
        })?;
    if !lease_is_stale(lease.as_ref(), now, signed(ctx.settings.monitor_period)) {
        let renewed = lease
            .as_ref()
            .and_then(|l| l.spec.as_ref())
            .and_then(|s| s.renew_time.as_ref())
            .map(|t| t.0);
        return Ok(next_check(
            renewed,
            now,
            ctx.settings.monitor_period,
            sync_period,
        ));
    }

    let ready = match gardenlet_ready_unknown(seed.conditions(), now) {
        Some(updated) => {
            patch_seed_conditions(&ctx.client, seed, name, &updated).await?;
            tracing::info!(seed = %name, "gardenlet stopped posting status updates");
            conditions::find(&updated, condition_types::GARDENLET_READY).cloned()
        }
        None => conditions::find(seed.conditions(), condition_types::GARDENLET_READY).cloned(),
    };

    if certificate_expired(seed, now) {
        nudge_managed_seed(&ctx.client, name).await?;
    }

    let Some(ready) = ready else {
        return Ok(sync_period);
    };
    if !shoot_monitor_period_elapsed(&ready, now, signed(ctx.settings.shoot_monitor_period)) {
        return Ok(sync_period);
    }
    mark_shoots_unknown(&ctx.client, name, now)
        .await
        .map(|()| sync_period)
}

/// Whether the seed Lease (None = missing) was not renewed within `monitor_period` before `now`.
pub fn lease_is_stale(
    lease: Option<&Lease>,
    now: Timestamp,
    monitor_period: SignedDuration,
) -> bool {
    let renewed = lease
        .and_then(|l| l.spec.as_ref())
        .and_then(|s| s.renew_time.as_ref())
        .map(|t| t.0);
    match renewed {
        None => true,
        Some(renewed) => {
            renewed
                .saturating_add(monitor_period)
                .unwrap_or(Timestamp::MAX)
                <= now
        }
    }
}

/// The Seed's conditions with `GardenletReady=Unknown` (`StatusUnknown`, "Gardenlet stopped
/// posting status updates."), or `None` when it already says so.
pub fn gardenlet_ready_unknown(existing: &[Condition], now: Timestamp) -> Option<Vec<Condition>> {
    let mut updated = existing.to_vec();
    conditions::set(
        &mut updated,
        condition_types::GARDENLET_READY,
        ConditionStatus::Unknown,
        reasons::STATUS_UNKNOWN,
        reasons::GARDENLET_STOPPED_POSTING_MESSAGE,
        now,
    )
    .then_some(updated)
}

/// Whether `GardenletReady` has been not `True` for at least `period` at `now`.
pub fn shoot_monitor_period_elapsed(
    ready: &Condition,
    now: Timestamp,
    period: SignedDuration,
) -> bool {
    !ready.is_true()
        && ready
            .last_transition_time
            .0
            .saturating_add(period)
            .unwrap_or(Timestamp::MAX)
            <= now
}

/// Whether the Seed reports a garden client certificate that has expired.
pub fn certificate_expired(seed: &Seed, now: Timestamp) -> bool {
    seed.status
        .as_ref()
        .and_then(|s| s.client_certificate_expiration_timestamp.as_ref())
        .is_some_and(|t| t.0 < now)
}

/// The Shoot's conditions and constraints with the heartbeat-dependent ones set to `Unknown`
/// (`StatusUnknown`, "Gardenlet stopped sending heartbeats.", missing ones initialised;
/// `EveryNodeReady` omitted for workerless Shoots), or `None` when nothing changes.
pub fn shoot_unknown(shoot: &Shoot, now: Timestamp) -> Option<(Vec<Condition>, Vec<Condition>)> {
    let status = shoot.status.clone().unwrap_or_default();
    let mut conditions = status.conditions;
    let mut constraints = status.constraints;
    let mut changed = false;
    for type_ in SHOOT_CONDITIONS {
        if type_ == condition_types::EVERY_NODE_READY && shoot.is_workerless() {
            continue;
        }
        changed |= set_unknown(&mut conditions, type_, now);
    }
    for type_ in SHOOT_CONSTRAINTS {
        changed |= set_unknown(&mut constraints, type_, now);
    }
    changed.then_some((conditions, constraints))
}

fn set_unknown(list: &mut Vec<Condition>, type_: &str, now: Timestamp) -> bool {
    conditions::set(
        list,
        type_,
        ConditionStatus::Unknown,
        reasons::STATUS_UNKNOWN,
        reasons::GARDENLET_STOPPED_HEARTBEATS_MESSAGE,
        now,
    )
}

/// Writes the Seed's conditions as a status merge patch guarded by its `resourceVersion`.
async fn patch_seed_conditions(
    client: &kube::Client,
    seed: &Seed,
    name: &str,
    updated: &[Condition],
) -> Result<(), Error> {
    let seeds: Api<Seed> = Api::all(client.clone());
    seedlet_runtime::status::write_conditions(&seeds, seed, updated, None)
        .await
        .map_err(|source| Error::PatchSeed {
            seed: name.to_owned(),
            source,
        })
}

/// Annotates ManagedSeed `garden/<seed>` with `gardener.cloud/operation=reconcile` when it
/// exists, so its deployer issues a new bootstrap credential. A garden that does not serve
/// ManagedSeeds counts as "no ManagedSeed".
async fn nudge_managed_seed(client: &kube::Client, name: &str) -> Result<(), Error> {
    let resource = ApiResource::from_gvk(&GroupVersionKind::gvk(
        "seedmanagement.gardener.cloud",
        "v1alpha1",
        "ManagedSeed",
    ));
    let managed_seeds: Api<DynamicObject> =
        Api::namespaced_with(client.clone(), namespaces::GARDEN, &resource);
    let patch = json!({
        "metadata": { "annotations": { annotations::OPERATION: annotations::OPERATION_RECONCILE } },
    });
    match managed_seeds
        .patch(name, &PatchParams::default(), &Patch::Merge(&patch))
        .await
    {
        Ok(_) => Ok(()),
        Err(kube::Error::Api(status)) if status.is_not_found() => Ok(()),
        Err(source) => Err(Error::AnnotateManagedSeed {
            seed: name.to_owned(),
            source,
        }),
    }
}

/// Sets the heartbeat-dependent conditions of every Shoot scheduled to `seed_name` to
/// `Unknown`, in parallel.
async fn mark_shoots_unknown(
    client: &kube::Client,
    seed_name: &str,
    now: Timestamp,
) -> Result<(), Error> {
    let shoots: Api<Shoot> = Api::all(client.clone());
    // Selected by the garden where it can. Not by the `name.seed.gardener.cloud/<seed>` label
    // otherwise: it lags behind `status.seedName`, and this runs only for a silent seed.
    let list = list_by_field(&shoots, "status.seedName", seed_name)
        .await
        .map_err(|source| Error::ListShoots {
            seed: seed_name.to_owned(),
            source,
        })?;
    let writes = list
        .iter()
        .filter(|shoot| {
            shoot.status.as_ref().and_then(|s| s.seed_name.as_deref()) == Some(seed_name)
        })
        .filter_map(|shoot| shoot_unknown(shoot, now).map(|update| (shoot, update)))
        .map(|(shoot, (conditions, constraints))| {
            let namespace = shoot.namespace().unwrap_or_default();
            let name = shoot.name_any();
            let api: Api<Shoot> = Api::namespaced(client.clone(), &namespace);
            let status = json!({ "conditions": conditions, "constraints": constraints });
            async move {
                seedlet_runtime::status::patch_status_guarded(&api, shoot, status, None)
                    .await
                    .map_err(|source| Error::PatchShoot {
                        shoot: format!("{namespace}/{name}"),
                        source,
                    })
            }
        });
    let results = join_all(writes).await;
    let mut first_error = None;
    let mut marked = 0usize;
    for result in results {
        match result {
            Ok(()) => marked += 1,
            Err(error) if first_error.is_none() => first_error = Some(error),
            Err(_) => {}
        }
    }
    if marked > 0 {
        tracing::info!(seed = %seed_name, shoots = marked, "gardenlet stopped sending heartbeats, shoot conditions unknown");
    }
    first_error.map_or(Ok(()), Err)
}

fn signed(duration: Duration) -> SignedDuration {
    SignedDuration::try_from(duration).unwrap_or(SignedDuration::MAX)
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::coordination::v1::LeaseSpec;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::MicroTime;

    use super::*;

    fn at(second: i64) -> Timestamp {
        Timestamp::from_second(second).unwrap()
    }

    #[test]
    fn a_new_seed_without_gardenlet_ready_is_judged_one_monitor_period_after_creation() {
        let seed = |conditions: serde_json::Value| -> Seed {
            serde_json::from_value(serde_json::json!({
                "apiVersion": "core.gardener.cloud/v1beta1", "kind": "Seed",
                "metadata": {"name": "s", "creationTimestamp": at(100).to_string()},
                "spec": {"provider": {"type": "local", "region": "r"},
                    "networks": {"pods": "10.1.0.0/16", "services": "10.2.0.0/16"}},
                "status": {"conditions": conditions},
            }))
            .expect("seed")
        };
        let condition = |type_: &str| {
            serde_json::json!([{"type": type_, "status": "True", "reason": "R", "message": "m",
                "lastTransitionTime": at(100).to_string(), "lastUpdateTime": at(100).to_string()}])
        };
        let monitor = Duration::from_secs(40);
        let extensions_only = seed(condition(condition_types::EXTENSIONS_READY));
        let reported = seed(condition(condition_types::GARDENLET_READY));
        // (seed, now, awaiting?)
        let cases = [
            (&extensions_only, at(101), Some(at(100))),
            (&extensions_only, at(139), Some(at(100))),
            (&extensions_only, at(140), None),
            (&reported, at(101), None),
        ];
        for (seed, now, expected) in cases {
            assert_eq!(
                awaiting_first_heartbeat(seed, now, monitor),
                expected,
                "at {now}"
            );
        }
        assert_eq!(
            next_check(Some(at(100)), at(101), monitor, Duration::from_secs(10)),
            Duration::from_secs(10),
            "still capped at the sync period"
        );
    }

    #[test]
    fn the_next_check_is_at_the_lease_expiry_when_that_comes_first() {
        let (monitor, sync) = (Duration::from_secs(40), Duration::from_secs(10));
        let margin = EXPIRY_MARGIN;
        for (renewed, now, want) in [
            // Fresh lease, expiry far away: the sync period.
            (Some(100), 100, sync),
            // Expiry in 3 s: then (plus the margin).
            (Some(100), 137, Duration::from_secs(3) + margin),
            // Already stale or never renewed: the sync period.
            (Some(100), 150, sync),
            (None, 100, sync),
        ] {
            assert_eq!(
                next_check(renewed.map(at), at(now), monitor, sync),
                want,
                "renewed {renewed:?}, now {now}"
            );
        }
    }

    fn lease(renewed: Option<i64>) -> Lease {
        Lease {
            spec: Some(LeaseSpec {
                renew_time: renewed.map(|s| MicroTime(at(s))),
                ..LeaseSpec::default()
            }),
            ..Lease::default()
        }
    }

    const MONITOR: SignedDuration = SignedDuration::from_secs(40);

    #[test]
    fn lease_is_stale_when_missing_or_without_renew_time() {
        assert!(lease_is_stale(None, at(100), MONITOR));
        assert!(lease_is_stale(Some(&lease(None)), at(100), MONITOR));
    }

    #[test]
    fn lease_is_fresh_within_monitor_period_and_stale_after() {
        assert!(!lease_is_stale(Some(&lease(Some(100))), at(139), MONITOR));
        assert!(lease_is_stale(Some(&lease(Some(100))), at(140), MONITOR));
    }

    #[test]
    fn gardenlet_ready_unknown_sets_reason_and_message_once() {
        let ready = Condition::initialized("GardenletReady", at(1)).updated(
            ConditionStatus::True,
            "GardenletReady",
            "Gardenlet is posting ready status.",
            at(1),
        );
        let updated = gardenlet_ready_unknown(&[ready], at(50)).unwrap();
        assert_eq!(updated[0].status, ConditionStatus::Unknown);
        assert_eq!(updated[0].reason, "StatusUnknown");
        assert_eq!(
            updated[0].message,
            "Gardenlet stopped posting status updates."
        );
        assert_eq!(updated[0].last_transition_time.0, at(50));
        assert_eq!(gardenlet_ready_unknown(&updated, at(60)), None);
    }

    #[test]
    fn shoot_monitor_period_counts_from_the_transition() {
        let unknown = Condition::initialized("GardenletReady", at(0))
            .updated(ConditionStatus::True, "GardenletReady", "x", at(0))
            .updated(ConditionStatus::Unknown, "StatusUnknown", "y", at(100));
        let period = SignedDuration::from_secs(200);
        assert!(!shoot_monitor_period_elapsed(&unknown, at(299), period));
        assert!(shoot_monitor_period_elapsed(&unknown, at(300), period));
    }

    #[test]
    fn shoot_monitor_period_never_elapses_while_ready() {
        let ready = Condition::initialized("GardenletReady", at(0)).updated(
            ConditionStatus::True,
            "GardenletReady",
            "x",
            at(0),
        );
        assert!(!shoot_monitor_period_elapsed(
            &ready,
            at(10_000),
            SignedDuration::from_secs(1)
        ));
    }

    fn shoot(workers: bool) -> Shoot {
        let mut value = json!({
            "apiVersion": "core.gardener.cloud/v1beta1",
            "kind": "Shoot",
            "metadata": {"name": "s", "namespace": "garden-p"},
            "spec": {"region": "local", "provider": {"type": "local", "workers": []}},
        });
        if workers {
            value["spec"]["provider"]["workers"] =
                json!([{"name": "w", "minimum": 1, "maximum": 1, "machine": {"type": "m"}}]);
        }
        serde_json::from_value(value).unwrap()
    }

    #[test]
    fn shoot_unknown_initialises_all_conditions_and_constraints() {
        let (conditions, constraints) = shoot_unknown(&shoot(true), at(10)).unwrap();
        assert_eq!(conditions.len(), 5);
        assert_eq!(constraints.len(), 2);
        assert!(
            conditions
                .iter()
                .all(|c| c.status == ConditionStatus::Unknown
                    && c.reason == "StatusUnknown"
                    && c.message == "Gardenlet stopped sending heartbeats.")
        );
    }

    #[test]
    fn shoot_unknown_omits_every_node_ready_for_workerless_shoots() {
        let (conditions, _) = shoot_unknown(&shoot(false), at(10)).unwrap();
        assert_eq!(conditions.len(), 4);
        assert!(conditions.iter().all(|c| c.type_ != "EveryNodeReady"));
    }

    #[test]
    fn shoot_unknown_changes_nothing_the_second_time() {
        let mut shoot = shoot(true);
        let (conditions, constraints) = shoot_unknown(&shoot, at(10)).unwrap();
        let status = shoot.status.get_or_insert_with(Default::default);
        status.conditions = conditions;
        status.constraints = constraints;
        assert_eq!(shoot_unknown(&shoot, at(20)), None);
    }
}

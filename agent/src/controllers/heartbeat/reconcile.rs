//! One heartbeat (spec §5.1): read the Seed, probe the seed API server's `/healthz`, renew the
//! Lease `gardener-system-seed-lease/<seed>` in the garden, and keep `GardenletReady` current.

use std::time::Duration;

use jiff::Timestamp;
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::MicroTime;
use kube::Api;
use kube::api::{Patch, PatchParams, PostParams};
use seedlet_api::conditions::{self, Condition, ConditionStatus};
use seedlet_api::core::Seed;
use seedlet_api::names::{condition_types, groups, namespaces, reasons};
use serde_json::{Value, json};

use super::{Ctx, Error};

/// Reason of `GardenletReady=False` while the seed API server fails its health check.
///
/// seedlet-specific: gardenlet never writes `False` and leaves it to the garden-side lifecycle
/// controller to notice the stale Lease after `monitorPeriod`; reporting the cause at once is
/// the cleaner behaviour when the garden is still reachable.
pub const SEED_API_SERVER_UNHEALTHY: &str = "SeedAPIServerUnhealthy";

/// What a successful heartbeat did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Beat {
    /// When the Lease was renewed (its `renewTime`).
    pub renewed_at: Timestamp,
    /// Monotonic time at which the renewal was sent, for drift measurement.
    pub renew_started: tokio::time::Instant,
    /// Whether `GardenletReady` was written.
    pub condition_written: bool,
}

/// Runs one heartbeat.
///
/// # Errors
/// [`Error::ReadSeed`]/[`Error::SeedNotFound`] when the Seed cannot be read,
/// [`Error::SeedUnhealthy`] when the seed API server fails `/healthz` (after reporting
/// `GardenletReady=False`, best effort), [`Error::RenewLease`] when the Lease write fails, and
/// [`Error::PatchCondition`] when only the condition write failed (the Lease was renewed).
pub async fn beat(ctx: &Ctx) -> Result<Beat, Error> {
    let garden = ctx.garden.client();
    let seeds: Api<Seed> = Api::all(garden.clone());
    let name = ctx.seed_name.as_str();
    let seed = seeds
        .get_opt(name)
        .await
        .map_err(|source| Error::ReadSeed {
            seed: name.to_owned(),
            source,
        })?
        .ok_or_else(|| Error::SeedNotFound {
            seed: name.to_owned(),
        })?;
    let uid = seed.metadata.uid.clone().unwrap_or_default();
    let existing = seed
        .status
        .as_ref()
        .map(|s| s.conditions.clone())
        .unwrap_or_default();

    if let Err(source) = probe_seed(&ctx.seed, ctx.settings.period).await {
        let now = ctx.clock.now();
        let message = format!(
            "Seed API server health check failed: {}",
            seedlet_runtime::error_chain(&source)
        );
        if let Some(updated) = gardenlet_ready(
            &existing,
            ConditionStatus::False,
            SEED_API_SERVER_UNHEALTHY,
            &message,
            now,
        ) {
            // Best effort: the garden may be unreachable as well; the Lease going stale tells the
            // garden controller in that case.
            if let Err(error) = patch_conditions(&seeds, &seed, updated).await {
                tracing::debug!(error = %seedlet_runtime::error_chain(&error), seed = %name, "reporting unhealthy seed failed");
            }
        }
        return Err(Error::SeedUnhealthy { source });
    }

    let renew_started = tokio::time::Instant::now();
    let renewed_at = ctx.clock.now();
    let leases: Api<Lease> = Api::namespaced(garden, namespaces::SEED_LEASE);
    renew_lease(
        &leases,
        name,
        &uid,
        ctx.settings.lease_duration_seconds(),
        renewed_at,
    )
    .await?;

    let now = ctx.clock.now();
    let mut condition_written = false;
    if let Some(updated) = gardenlet_ready(
        &existing,
        ConditionStatus::True,
        reasons::GARDENLET_READY,
        reasons::GARDENLET_READY_MESSAGE,
        now,
    ) {
        patch_conditions(&seeds, &seed, updated).await?;
        condition_written = true;
    }
    Ok(Beat {
        renewed_at,
        renew_started,
        condition_written,
    })
}

/// GETs `/healthz` of the seed API server with a timeout of `timeout`.
async fn probe_seed(seed: &kube::Client, timeout: Duration) -> Result<(), kube::Error> {
    let request = http::Request::get("/healthz")
        .body(Vec::new())
        .map_err(kube::Error::HttpError)?;
    match tokio::time::timeout(timeout, seed.request_text(request)).await {
        Ok(Err(kube::Error::Api(mut status))) => {
            // kube-apiserver answers a failing /healthz with one line per check (~30): keep
            // the failed ones, so the condition and the log line stay one line.
            status.message = healthz_summary(&status.message);
            Err(kube::Error::Api(status))
        }
        Ok(result) => result.map(|_| ()),
        Err(_) => Err(kube::Error::Service(
            std::io::Error::new(std::io::ErrorKind::TimedOut, "seed /healthz timed out").into(),
        )),
    }
}

/// The failed checks of a verbose `/healthz` answer (`[-]etcd failed: reason withheld`), or its
/// first line when it lists none.
fn healthz_summary(body: &str) -> String {
    let failed: Vec<&str> = body
        .lines()
        .filter_map(|line| line.trim().strip_prefix("[-]"))
        .map(|check| check.split_once(' ').map_or(check, |(name, _)| name))
        .collect();
    if failed.is_empty() {
        body.lines()
            .map(str::trim)
            .find(|line| !line.is_empty())
            .unwrap_or_default()
            .to_owned()
    } else {
        format!("failed checks: {}", failed.join(", "))
    }
}

/// Renews the seed Lease: one merge patch, or a create when it does not exist yet.
async fn renew_lease(
    leases: &Api<Lease>,
    seed_name: &str,
    seed_uid: &str,
    duration_seconds: i32,
    now: Timestamp,
) -> Result<(), Error> {
    let body = lease_body(seed_name, seed_uid, duration_seconds, now);
    let error = |source| Error::RenewLease {
        seed: seed_name.to_owned(),
        source,
    };
    match leases
        .patch(seed_name, &PatchParams::default(), &Patch::Merge(&body))
        .await
    {
        Ok(_) => Ok(()),
        Err(kube::Error::Api(status)) if status.is_not_found() => {
            let lease: Lease =
                serde_json::from_value(body).map_err(|source| Error::EncodeLease {
                    seed: seed_name.to_owned(),
                    source,
                })?;
            match leases.create(&PostParams::default(), &lease).await {
                Ok(_) => Ok(()),
                Err(kube::Error::Api(status)) if status.is_already_exists() => {
                    // Created concurrently (e.g. by a previous leader): patch it.
                    leases
                        .patch(
                            seed_name,
                            &PatchParams::default(),
                            &Patch::Merge(&lease_body(seed_name, seed_uid, duration_seconds, now)),
                        )
                        .await
                        .map(|_| ())
                        .map_err(error)
                }
                Err(source) => Err(error(source)),
            }
        }
        Err(source) => Err(error(source)),
    }
}

/// The desired seed Lease (as a merge patch body that is also a complete object): owned by the
/// Seed (no controller flag), held by the seed name, valid for `duration_seconds`, renewed `now`.
pub fn lease_body(seed_name: &str, seed_uid: &str, duration_seconds: i32, now: Timestamp) -> Value {
    json!({
        "apiVersion": "coordination.k8s.io/v1",
        "kind": "Lease",
        "metadata": {
            "name": seed_name,
            "namespace": namespaces::SEED_LEASE,
            "ownerReferences": [{
                "apiVersion": groups::CORE_V1BETA1,
                "kind": "Seed",
                "name": seed_name,
                "uid": seed_uid,
            }],
        },
        "spec": {
            "holderIdentity": seed_name,
            "leaseDurationSeconds": duration_seconds,
            "renewTime": MicroTime(now),
        },
    })
}

/// The Seed's conditions with `GardenletReady` set to `status`/`reason`/`message`, or `None` when
/// that changes nothing (so the write can be skipped).
pub fn gardenlet_ready(
    existing: &[Condition],
    status: ConditionStatus,
    reason: &str,
    message: &str,
    now: Timestamp,
) -> Option<Vec<Condition>> {
    let mut updated = existing.to_vec();
    conditions::set(
        &mut updated,
        condition_types::GARDENLET_READY,
        status,
        reason,
        message,
        now,
    )
    .then_some(updated)
}

/// Writes `conditions` as a status merge patch guarded by the Seed's `resourceVersion` (other
/// writers share the list); a conflict surfaces as an error and is retried next beat.
async fn patch_conditions(
    seeds: &Api<Seed>,
    seed: &Seed,
    conditions: Vec<Condition>,
) -> Result<(), Error> {
    seedlet_runtime::status::write_conditions(seeds, seed, &conditions, None)
        .await
        .map_err(|source| Error::PatchCondition {
            seed: seed.metadata.name.clone().unwrap_or_default(),
            source,
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn healthz_summary_keeps_the_failed_checks_on_one_line() {
        let verbose = "[+]ping ok\n[+]log ok\n[-]etcd failed: reason withheld\n\
                       [+]poststarthook/start-kube-apiserver-admission-initializer ok\n\
                       [-]poststarthook/rbac/bootstrap-roles failed: reason withheld\n\
                       healthz check failed\n";
        assert_eq!(
            healthz_summary(verbose),
            "failed checks: etcd, poststarthook/rbac/bootstrap-roles"
        );
        assert_eq!(
            healthz_summary("\n  internal error\nmore"),
            "internal error"
        );
        assert_eq!(healthz_summary(""), "");
    }

    fn at(second: i64) -> Timestamp {
        Timestamp::from_second(second).unwrap()
    }

    #[test]
    fn gardenlet_ready_is_written_when_missing() {
        let updated =
            gardenlet_ready(&[], ConditionStatus::True, "GardenletReady", "m", at(10)).unwrap();
        assert_eq!(updated.len(), 1);
        assert_eq!(updated[0].type_, "GardenletReady");
        assert!(updated[0].is_true());
    }

    #[test]
    fn gardenlet_ready_is_not_written_when_unchanged() {
        let first =
            gardenlet_ready(&[], ConditionStatus::True, "GardenletReady", "m", at(10)).unwrap();
        assert_eq!(
            gardenlet_ready(&first, ConditionStatus::True, "GardenletReady", "m", at(20)),
            None
        );
    }

    #[test]
    fn gardenlet_ready_moves_transition_time_only_on_status_change() {
        let first =
            gardenlet_ready(&[], ConditionStatus::Unknown, "StatusUnknown", "x", at(10)).unwrap();
        let second =
            gardenlet_ready(&first, ConditionStatus::True, "GardenletReady", "m", at(20)).unwrap();
        assert_eq!(second[0].last_transition_time.0, at(20));
        let third = gardenlet_ready(
            &second,
            ConditionStatus::True,
            "GardenletReady",
            "other",
            at(30),
        )
        .unwrap();
        assert_eq!(third[0].last_transition_time.0, at(20));
        assert_eq!(third[0].last_update_time.0, at(30));
    }

    #[test]
    fn gardenlet_ready_keeps_other_conditions() {
        let mut existing =
            gardenlet_ready(&[], ConditionStatus::True, "GardenletReady", "m", at(10)).unwrap();
        existing.insert(0, Condition::initialized("ExtensionsReady", at(1)));
        let updated = gardenlet_ready(
            &existing,
            ConditionStatus::False,
            SEED_API_SERVER_UNHEALTHY,
            "down",
            at(20),
        )
        .unwrap();
        assert_eq!(updated.len(), 2);
        assert_eq!(updated[0].type_, "ExtensionsReady");
        assert_eq!(updated[1].status, ConditionStatus::False);
    }

    #[test]
    fn lease_body_is_owned_by_the_seed_and_renewed_now() {
        let body = lease_body("s1", "uid-1", 2, at(100));
        assert_eq!(body["metadata"]["namespace"], "gardener-system-seed-lease");
        assert_eq!(body["metadata"]["ownerReferences"][0]["kind"], "Seed");
        assert_eq!(body["metadata"]["ownerReferences"][0]["uid"], "uid-1");
        assert!(
            body["metadata"]["ownerReferences"][0]
                .get("controller")
                .is_none()
        );
        assert_eq!(body["spec"]["holderIdentity"], "s1");
        assert_eq!(body["spec"]["leaseDurationSeconds"], 2);
        let lease: Lease = serde_json::from_value(body).unwrap();
        assert_eq!(lease.spec.unwrap().renew_time.unwrap().0, at(100));
    }
}

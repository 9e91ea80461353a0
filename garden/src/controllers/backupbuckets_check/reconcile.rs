//! One backup buckets check: list the Seed's BackupBuckets → decide `BackupBucketsReady`
//! ([`backup_buckets_ready`], pure) → merge-patch the Seed status when it changed.

use std::time::Duration;

use jiff::{SignedDuration, Timestamp};
use kube::{Api, ResourceExt};
use seedlet_api::conditions::{self, Condition, ConditionStatus};
use seedlet_api::core::{BackupBucket, Seed};
use seedlet_api::names::{condition_types, field_managers};
use seedlet_runtime::controller::Reason;

use crate::controllers::field_selection::list_by_field;
use crate::controllers::seed_check::Check;

/// Errors of one check.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// An API call failed.
    #[error("{step} of seed {seed}")]
    Api {
        /// What was done.
        step: &'static str,
        /// Seed name.
        seed: String,
        /// Cause.
        #[source]
        source: kube::Error,
    },
}

impl Reason for Error {
    fn reason(&self) -> &'static str {
        "BackupBucketsCheckError"
    }
}

/// Checks one Seed (see the module docs).
///
/// # Errors
/// See [`Error`].
pub async fn check(seed: &Seed, ctx: &Check) -> Result<(), Error> {
    if seed.metadata.deletion_timestamp.is_some() {
        return Ok(());
    }
    let name = seed.name_any();
    let error = |step| {
        let seed = name.clone();
        move |source| Error::Api { step, seed, source }
    };
    let seeds: Api<Seed> = Api::all(ctx.client.clone());
    let Some(seed) = seeds.get_opt(&name).await.map_err(error("reading"))? else {
        return Ok(());
    };
    let buckets: Vec<BackupBucket> = list_by_field(
        &Api::<BackupBucket>::all(ctx.client.clone()),
        "spec.seedName",
        &name,
    )
    .await
    .map_err(error("listing backupbuckets"))?
    .into_iter()
    .filter(|bucket| bucket.spec.seed_name.as_deref() == Some(name.as_str()))
    .collect();
    let now = ctx.clock.now();
    let existing = seed.conditions();
    let previous = conditions::find_or_init(existing, condition_types::BACKUP_BUCKETS_READY, now);
    let next = backup_buckets_ready(&buckets, &previous, ctx.settings.threshold, now);
    if conditions::find(existing, condition_types::BACKUP_BUCKETS_READY)
        .is_some_and(|c| c.same_state(&next))
    {
        return Ok(());
    }
    let merged = conditions::merge(existing, [next]);
    seedlet_runtime::status::write_conditions(&seeds, &seed, &merged, Some(field_managers::GARDEN))
        .await
        .map_err(error("patching BackupBucketsReady"))
}

/// The next `BackupBucketsReady` (spec §6.1): False `BackupBucketsError` listing the buckets with
/// a lastError, Unknown `BackupBucketsGone` without buckets, else True `BackupBucketsAvailable`;
/// a False/Unknown result after True is `Progressing` while the threshold allows.
pub fn backup_buckets_ready(
    buckets: &[BackupBucket],
    previous: &Condition,
    threshold: Option<Duration>,
    now: Timestamp,
) -> Condition {
    let failing: Vec<String> = buckets
        .iter()
        .filter_map(|bucket| {
            let error = bucket.status.as_ref()?.last_error.as_ref()?;
            Some(format!(
                "\n* Name: {}, Error: {}",
                bucket.name_any(),
                error.description
            ))
        })
        .collect();
    let (status, reason, message) = if !failing.is_empty() {
        (
            ConditionStatus::False,
            "BackupBucketsError",
            format!(
                "The following BackupBuckets have issues:{}",
                failing.concat()
            ),
        )
    } else if buckets.is_empty() {
        (
            ConditionStatus::Unknown,
            "BackupBucketsGone",
            "Backup Buckets are gone.".to_owned(),
        )
    } else {
        return previous.updated(
            ConditionStatus::True,
            "BackupBucketsAvailable",
            "Backup Buckets are available.",
            now,
        );
    };
    let threshold = threshold
        .filter(|threshold| !threshold.is_zero())
        .map(|threshold| SignedDuration::try_from(threshold).unwrap_or(SignedDuration::MAX));
    let status = match (&previous.status, threshold) {
        (ConditionStatus::True, Some(_)) => ConditionStatus::Progressing,
        (ConditionStatus::Progressing, Some(threshold))
            if now.duration_since(previous.last_transition_time.0) <= threshold =>
        {
            ConditionStatus::Progressing
        }
        _ => status,
    };
    previous.updated(status, reason, &message, now)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn at(second: i64) -> Timestamp {
        Timestamp::from_second(second).unwrap()
    }

    fn bucket(name: &str, error: Option<&str>) -> BackupBucket {
        let mut value = json!({"metadata": {"name": name},
            "spec": {"provider": {"type": "local", "region": "r"}, "seedName": "s"}});
        if let Some(error) = error {
            value["status"] = json!({"lastError": {"description": error}});
        }
        serde_json::from_value(value).unwrap()
    }

    fn condition(status: ConditionStatus, since: i64) -> Condition {
        Condition::initialized("BackupBucketsReady", at(since)).updated(status, "R", "m", at(since))
    }

    #[test]
    fn result_per_bucket_state() {
        let previous = Condition::initialized("BackupBucketsReady", at(0));
        let ok = backup_buckets_ready(&[bucket("a", None)], &previous, None, at(10));
        assert_eq!(
            (ok.status, ok.reason.as_str()),
            (ConditionStatus::True, "BackupBucketsAvailable")
        );
        assert_eq!(ok.message, "Backup Buckets are available.");
        let gone = backup_buckets_ready(&[], &previous, None, at(10));
        assert_eq!(
            (gone.status, gone.message.as_str()),
            (ConditionStatus::Unknown, "Backup Buckets are gone.")
        );
        let two = backup_buckets_ready(
            &[
                bucket("a", Some("x")),
                bucket("b", None),
                bucket("c", Some("y")),
            ],
            &previous,
            None,
            at(10),
        );
        assert_eq!(two.status, ConditionStatus::False);
        assert_eq!(
            two.message,
            "The following BackupBuckets have issues:\n* Name: a, Error: x\n* Name: c, Error: y"
        );
    }

    #[test]
    fn thresholds_delay_false_and_unknown_after_true() {
        let minute = Some(Duration::from_secs(60));
        let failing = [bucket("a", Some("x"))];
        let from_true = backup_buckets_ready(
            &failing,
            &condition(ConditionStatus::True, 0),
            minute,
            at(10),
        );
        assert_eq!(from_true.status, ConditionStatus::Progressing);
        let within = backup_buckets_ready(
            &failing,
            &condition(ConditionStatus::Progressing, 0),
            minute,
            at(60),
        );
        assert_eq!(within.status, ConditionStatus::Progressing);
        let after = backup_buckets_ready(
            &failing,
            &condition(ConditionStatus::Progressing, 0),
            minute,
            at(61),
        );
        assert_eq!(after.status, ConditionStatus::False);
        let gone = backup_buckets_ready(&[], &condition(ConditionStatus::True, 0), minute, at(10));
        assert_eq!(gone.status, ConditionStatus::Progressing);
        let no_threshold =
            backup_buckets_ready(&failing, &condition(ConditionStatus::True, 0), None, at(10));
        assert_eq!(no_threshold.status, ConditionStatus::False);
        let from_false = backup_buckets_ready(
            &failing,
            &condition(ConditionStatus::False, 0),
            minute,
            at(10),
        );
        assert_eq!(from_false.status, ConditionStatus::False);
    }
}

//! One Bastion expiry pass (spec §6.2): decide ([`verdict`], pure) and delete or requeue.

use std::sync::Arc;
use std::time::Duration;

use jiff::{SignedDuration, Timestamp};
use kube::api::DeleteParams;
use kube::runtime::controller::Action;
use kube::{Api, ResourceExt};
use seedlet_api::core::Shoot;
use seedlet_api::operations::Bastion;
use seedlet_runtime::controller::{Reason, Reconciler};

use super::{BastionExpiry, NAME};

/// What to do with a Bastion.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Delete it, for the reason given (logged).
    Delete(&'static str),
    /// Check again after this long.
    RequeueAfter(Duration),
}

/// Errors of one pass.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// An API call failed.
    #[error("{step} {key}")]
    Api {
        /// What was done.
        step: &'static str,
        /// `namespace/name`.
        key: String,
        /// Cause.
        #[source]
        source: kube::Error,
    },
    /// The next check would lie in the past.
    #[error("the bastion should already have been deleted")]
    Overdue,
}

impl Reason for Error {
    fn reason(&self) -> &'static str {
        match self {
            Error::Api { .. } => "BastionError",
            Error::Overdue => "BastionOverdue",
        }
    }
}

/// The decision for `bastion` whose Shoot is `shoot` (None: gone).
///
/// # Errors
/// [`Error::Overdue`] when the earliest deadline already passed without a delete verdict
/// (cannot happen with a consistent clock; upstream reports it the same way).
pub fn verdict(
    bastion: &Bastion,
    shoot: Option<&Shoot>,
    max_lifetime: Duration,
    now: Timestamp,
) -> Result<Verdict, Error> {
    let Some(shoot) = shoot else {
        return Ok(Verdict::Delete("shoot is gone"));
    };
    if shoot.metadata.deletion_timestamp.is_some() {
        return Ok(Verdict::Delete("shoot is being deleted"));
    }
    if shoot.spec.seed_name != bastion.spec.seed_name {
        return Ok(Verdict::Delete("shoot is on another seed"));
    }
    let expiration = bastion
        .status
        .as_ref()
        .and_then(|s| s.expiration_timestamp.as_ref())
        .map(|t| t.0);
    if expiration.is_some_and(|expiration| now > expiration) {
        return Ok(Verdict::Delete("bastion expired"));
    }
    let lifetime = SignedDuration::try_from(max_lifetime).unwrap_or(SignedDuration::MAX);
    let created = bastion
        .metadata
        .creation_timestamp
        .as_ref()
        .map_or(now, |t| t.0);
    let end_of_life = created.checked_add(lifetime).unwrap_or(Timestamp::MAX);
    if now > end_of_life {
        return Ok(Verdict::Delete("bastion reached its maximum lifetime"));
    }
    let next = expiration.map_or(end_of_life, |expiration| expiration.min(end_of_life));
    let wait = now.duration_until(next);
    if wait.is_negative() {
        return Err(Error::Overdue);
    }
    Ok(Verdict::RequeueAfter(
        Duration::try_from(wait).unwrap_or(Duration::ZERO),
    ))
}

impl Reconciler for BastionExpiry {
    type Object = Bastion;
    type Error = Error;
    const NAME: &'static str = NAME;

    /// Checks one Bastion.
    async fn reconcile(&self, bastion: Arc<Bastion>) -> Result<Action, Error> {
        check(&bastion, self).await
    }

    /// Retry delay after a failure (the runtime logs it once).
    fn retry_after(&self, _: &Error) -> Duration {
        Duration::from_secs(5)
    }

    fn concurrency(&self) -> u16 {
        self.concurrency
    }
}

async fn check(cached: &Bastion, ctx: &BastionExpiry) -> Result<Action, Error> {
    let namespace = cached.namespace().unwrap_or_default();
    let key = format!("{namespace}/{}", cached.name_any());
    let api: Api<Bastion> = Api::namespaced(ctx.client.clone(), &namespace);
    let Some(bastion) = api
        .get_opt(&cached.name_any())
        .await
        .map_err(|source| Error::Api {
            step: "reading bastion",
            key: key.clone(),
            source,
        })?
    else {
        return Ok(Action::await_change());
    };
    if bastion.metadata.deletion_timestamp.is_some() {
        return Ok(Action::await_change());
    }
    let shoot = Api::<Shoot>::namespaced(ctx.client.clone(), &namespace)
        .get_opt(&bastion.spec.shoot_ref.name)
        .await
        .map_err(|source| Error::Api {
            step: "reading the shoot of bastion",
            key: key.clone(),
            source,
        })?;
    match verdict(&bastion, shoot.as_ref(), ctx.max_lifetime, ctx.clock.now())? {
        Verdict::RequeueAfter(wait) => Ok(Action::requeue(wait)),
        Verdict::Delete(reason) => {
            tracing::info!(bastion = %key, reason, "deleting bastion");
            match api
                .delete(&bastion.name_any(), &DeleteParams::default())
                .await
            {
                Ok(_) => Ok(Action::await_change()),
                Err(kube::Error::Api(status)) if status.is_not_found() => {
                    Ok(Action::await_change())
                }
                Err(source) => Err(Error::Api {
                    step: "deleting bastion",
                    key,
                    source,
                }),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    fn at(second: i64) -> Timestamp {
        Timestamp::from_second(second).unwrap()
    }

    fn bastion(expiration: Option<i64>) -> Bastion {
        let mut value = json!({"metadata": {"name": "b", "namespace": "garden-p",
                "creationTimestamp": at(1000).to_string()},
            "spec": {"shootRef": {"name": "s"}, "seedName": "a", "sshPublicKey": "k", "ingress": []}});
        if let Some(expiration) = expiration {
            value["status"] = json!({"expirationTimestamp": at(expiration).to_string()});
        }
        serde_json::from_value(value).unwrap()
    }

    fn shoot(seed: &str, deleting: bool) -> Shoot {
        let mut value: Value = json!({"metadata": {"name": "s", "namespace": "garden-p"},
            "spec": {"region": "r", "provider": {"type": "t", "workers": []}, "seedName": seed}});
        if deleting {
            value["metadata"]["deletionTimestamp"] = json!(at(1500).to_string());
        }
        serde_json::from_value(value).unwrap()
    }

    #[test]
    fn verdicts() {
        let day = Duration::from_secs(24 * 3600);
        let ours = shoot("a", false);
        let cases = [
            (
                bastion(Some(5000)),
                None,
                2000,
                Verdict::Delete("shoot is gone"),
            ),
            (
                bastion(Some(5000)),
                Some(shoot("a", true)),
                2000,
                Verdict::Delete("shoot is being deleted"),
            ),
            (
                bastion(Some(5000)),
                Some(shoot("b", false)),
                2000,
                Verdict::Delete("shoot is on another seed"),
            ),
            (
                bastion(Some(5000)),
                Some(ours.clone()),
                5001,
                Verdict::Delete("bastion expired"),
            ),
            (
                bastion(Some(200_000)),
                Some(ours.clone()),
                1000 + 86_401,
                Verdict::Delete("bastion reached its maximum lifetime"),
            ),
            (
                bastion(Some(5000)),
                Some(ours.clone()),
                2000,
                Verdict::RequeueAfter(Duration::from_secs(3000)),
            ),
            (
                bastion(None),
                Some(ours.clone()),
                2000,
                Verdict::RequeueAfter(Duration::from_secs(85_400)),
            ),
        ];
        for (bastion, shoot, now, want) in cases {
            assert_eq!(
                verdict(&bastion, shoot.as_ref(), day, at(now)).unwrap(),
                want
            );
        }
    }

    /// Edge case §13.19: a Bastion without `spec.seedName` does not belong to a Shoot whose
    /// `spec.seedName` is `""` (nil ≠ ""), nor the other way round; both unset match.
    #[test]
    fn an_unset_seed_name_differs_from_an_empty_one() {
        let day = Duration::from_secs(24 * 3600);
        let mut unset_bastion = bastion(Some(5000));
        unset_bastion.spec.seed_name = None;
        let mut empty_bastion = bastion(Some(5000));
        empty_bastion.spec.seed_name = Some(String::new());
        let empty_shoot = shoot("", false);
        let mut unset_shoot = shoot("", false);
        unset_shoot.spec.seed_name = None;
        let moved = Verdict::Delete("shoot is on another seed");
        for (bastion, shoot, want) in [
            (&unset_bastion, &empty_shoot, moved.clone()),
            (&empty_bastion, &unset_shoot, moved.clone()),
            (
                &unset_bastion,
                &unset_shoot,
                Verdict::RequeueAfter(Duration::from_secs(3000)),
            ),
            (
                &empty_bastion,
                &empty_shoot,
                Verdict::RequeueAfter(Duration::from_secs(3000)),
            ),
        ] {
            assert_eq!(
                verdict(bastion, Some(shoot), day, at(2000)).unwrap(),
                want,
                "bastion {:?} shoot {:?}",
                bastion.spec.seed_name,
                shoot.spec.seed_name
            );
        }
    }
}

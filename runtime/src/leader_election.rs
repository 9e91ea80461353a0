//! Lease-based leader election (client-go `leaselock` semantics) so that exactly one replica runs
//! the bootstrap, the heartbeat and the controllers.
//!
//! The lock is a `coordination.k8s.io/v1` Lease (default `garden/gardenlet-leader-election` in the
//! seed). A candidate takes the lock when it is free (missing, released, or not renewed for
//! `leaseDuration` as observed on the local clock — so clock skew between replicas does not
//! matter); the leader renews it every `retryPeriod` and steps down when it could not renew for
//! `renewDeadline`. On shutdown the leader releases the lock, so a standby takes over at once.
//! All writes carry the observed `resourceVersion`, so two candidates can never both win.

use crate::error_chain;
use std::time::Duration;

use k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{MicroTime, ObjectMeta};
use kube::Api;
use kube::api::{Patch, PatchParams, PostParams};
use serde_json::json;
use tokio::sync::watch;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

/// Errors of the leader election loop.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Reading the lock Lease failed.
    #[error("reading leader election lease {key}")]
    ReadLease {
        /// `namespace/name` of the lock.
        key: String,
        /// Cause.
        #[source]
        source: kube::Error,
    },
    /// Writing the lock Lease failed.
    #[error("writing leader election lease {key}")]
    WriteLease {
        /// `namespace/name` of the lock.
        key: String,
        /// Cause.
        #[source]
        source: kube::Error,
    },
    /// A request did not answer within the renew deadline.
    #[error("leader election request for {key} timed out")]
    Timeout {
        /// `namespace/name` of the lock.
        key: String,
    },
}

/// Settings of one leader election lock.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Settings {
    /// Namespace of the lock Lease.
    pub namespace: String,
    /// Name of the lock Lease.
    pub name: String,
    /// This candidate's identity, unique per process.
    pub identity: String,
    /// How long a lease is valid after its last renewal.
    pub lease_duration: Duration,
    /// How long the leader keeps trying to renew before it steps down.
    pub renew_deadline: Duration,
    /// Pause between attempts to acquire or renew.
    pub retry_period: Duration,
}

impl Settings {
    /// The settings `leaderElection` describes for this process, `None` when `leaderElect` is off.
    /// Agent and garden controller share this configuration block.
    pub fn from_config(election: &seedlet_config::LeaderElection) -> Option<Self> {
        election.leader_elect.then(|| Self {
            namespace: election.resource_namespace.clone(),
            name: election.resource_name.clone(),
            identity: default_identity(),
            lease_duration: election.lease_duration.as_std(),
            renew_deadline: election.renew_deadline.as_std(),
            retry_period: election.retry_period.as_std(),
        })
    }

    /// `namespace/name` of the lock.
    pub fn key(&self) -> String {
        format!("{}/{}", self.namespace, self.name)
    }
}

/// A unique candidate identity: the host name plus a random suffix (like client-go's
/// `hostname_uuid`), so two processes on one host never share it.
pub fn default_identity() -> String {
    format!("{}_{:016x}", host_name(), rand::random::<u64>())
}

/// This host's name: `HOSTNAME`, else `/etc/hostname`, else `seedlet` (a process without leader
/// election names itself by it).
pub fn host_name() -> String {
    std::env::var("HOSTNAME")
        .ok()
        .filter(|h| !h.is_empty())
        .or_else(|| {
            std::fs::read_to_string("/etc/hostname")
                .ok()
                .map(|h| h.trim().to_owned())
                .filter(|h| !h.is_empty())
        })
        .unwrap_or_else(|| "seedlet".to_owned())
}

/// What a candidate should do after looking at the lock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    /// Nobody holds the lock (missing, released or expired): take it.
    Acquire,
    /// We hold it: renew it.
    Renew,
    /// Somebody else holds a valid lease: wait.
    Wait,
}

/// Decides what to do with the lock `spec` (None = no Lease) that has looked the same since
/// `unchanged_since` (local monotonic time), at `now`.
///
/// `default_duration` applies when the Lease names no duration.
pub fn decide(
    spec: Option<&LeaseSpec>,
    identity: &str,
    unchanged_since: Instant,
    now: Instant,
    default_duration: Duration,
) -> Decision {
    let Some(spec) = spec else {
        return Decision::Acquire;
    };
    let holder = spec.holder_identity.as_deref().unwrap_or_default();
    if holder == identity {
        return Decision::Renew;
    }
    if holder.is_empty() {
        return Decision::Acquire;
    }
    let duration = spec
        .lease_duration_seconds
        .and_then(|s| u64::try_from(s).ok())
        .map_or(default_duration, Duration::from_secs);
    if now.saturating_duration_since(unchanged_since) >= duration {
        Decision::Acquire
    } else {
        Decision::Wait
    }
}

/// The part of a Lease that changes on every renewal; a change proves the holder is alive.
fn fingerprint(lease: &Lease) -> (Option<String>, Option<String>) {
    let spec = lease.spec.as_ref();
    (
        spec.and_then(|s| s.holder_identity.clone()),
        spec.and_then(|s| s.renew_time.as_ref().map(|t| t.0.to_string())),
    )
}

/// Runs one candidate: campaigns, reports leadership on `leading`, renews, and releases the lock
/// when `shutdown` is cancelled.
#[derive(Debug)]
pub struct LeaderElector {
    api: Api<Lease>,
    settings: Settings,
    observed: Option<(Option<String>, Option<String>)>,
    observed_at: Instant,
    resource_version: Option<String>,
    transitions: i32,
}

impl LeaderElector {
    /// A candidate using `client` for the lock described by `settings`.
    pub fn new(client: kube::Client, settings: Settings) -> Self {
        Self {
            api: Api::namespaced(client, &settings.namespace),
            settings,
            observed: None,
            observed_at: Instant::now(),
            resource_version: None,
            transitions: 0,
        }
    }

    /// Campaigns and leads until `shutdown` is cancelled, publishing `true` on `leading` while
    /// this candidate holds the lock and `false` otherwise. Losing the lock (no renewal within
    /// `renewDeadline`) publishes `false` and goes back to campaigning. On shutdown a held lock
    /// is released.
    ///
    /// Transient API errors are logged and retried every `retryPeriod`; this never returns early.
    pub async fn run(mut self, shutdown: CancellationToken, leading: watch::Sender<bool>) {
        let retry = self.settings.retry_period;
        loop {
            // Standby: try to acquire every retry period.
            loop {
                match self.try_acquire_or_renew().await {
                    Ok(true) => break,
                    Ok(false) => {}
                    Err(error) => {
                        tracing::warn!(error = %error_chain(&error), lease = %self.settings.key(), "leader election attempt failed");
                    }
                }
                tokio::select! {
                    () = shutdown.cancelled() => return,
                    () = tokio::time::sleep(retry) => {}
                }
            }
            tracing::info!(lease = %self.settings.key(), identity = %self.settings.identity, "acquired leadership");
            leading.send_replace(true);
            let mut last_renew = Instant::now();
            // Leading: renew every retry period until the renew deadline passes without success.
            loop {
                tokio::select! {
                    () = shutdown.cancelled() => {
                        leading.send_replace(false);
                        self.release().await;
                        return;
                    }
                    () = tokio::time::sleep(retry) => {}
                }
                match self.try_acquire_or_renew().await {
                    Ok(true) => last_renew = Instant::now(),
                    Ok(false) => {
                        tracing::warn!(lease = %self.settings.key(), "leader lease taken by another candidate");
                        break;
                    }
                    Err(error) => {
                        tracing::warn!(error = %error_chain(&error), lease = %self.settings.key(), "renewing leader lease failed");
                    }
                }
                if last_renew.elapsed() >= self.settings.renew_deadline {
                    tracing::warn!(lease = %self.settings.key(), "leader lease not renewed within the renew deadline");
                    break;
                }
            }
            tracing::info!(lease = %self.settings.key(), "lost leadership");
            leading.send_replace(false);
        }
    }

    /// One attempt: returns whether we hold the lock afterwards.
    async fn try_acquire_or_renew(&mut self) -> Result<bool, Error> {
        let key = self.settings.key();
        let timeout = self.settings.renew_deadline;
        let lease = tokio::time::timeout(timeout, self.api.get_opt(&self.settings.name))
            .await
            .map_err(|_| Error::Timeout { key: key.clone() })?
            .map_err(|source| Error::ReadLease {
                key: key.clone(),
                source,
            })?;
        let now = Instant::now();
        let Some(lease) = lease else {
            return self.create().await;
        };
        let print = fingerprint(&lease);
        if self.observed.as_ref() != Some(&print) {
            self.observed = Some(print);
            self.observed_at = now;
        }
        self.resource_version = lease.metadata.resource_version.clone();
        self.transitions = lease
            .spec
            .as_ref()
            .and_then(|s| s.lease_transitions)
            .unwrap_or(0);
        let decision = decide(
            lease.spec.as_ref(),
            &self.settings.identity,
            self.observed_at,
            now,
            self.settings.lease_duration,
        );
        let was_holder = decision == Decision::Renew;
        match decision {
            Decision::Wait => Ok(false),
            Decision::Acquire | Decision::Renew => self.write(was_holder, &lease).await,
        }
    }

    async fn create(&mut self) -> Result<bool, Error> {
        let now = MicroTime(jiff::Timestamp::now());
        let lease = Lease {
            metadata: ObjectMeta {
                name: Some(self.settings.name.clone()),
                namespace: Some(self.settings.namespace.clone()),
                ..ObjectMeta::default()
            },
            spec: Some(LeaseSpec {
                holder_identity: Some(self.settings.identity.clone()),
                lease_duration_seconds: Some(duration_seconds(self.settings.lease_duration)),
                acquire_time: Some(now.clone()),
                renew_time: Some(now),
                lease_transitions: Some(0),
                ..LeaseSpec::default()
            }),
        };
        let params = PostParams::default();
        let create = self.api.create(&params, &lease);
        match tokio::time::timeout(self.settings.renew_deadline, create).await {
            Err(_) => Err(Error::Timeout {
                key: self.settings.key(),
            }),
            Ok(Ok(created)) => {
                self.remember(&created);
                Ok(true)
            }
            // Another candidate created it first: not ours this round.
            Ok(Err(kube::Error::Api(status))) if status.is_already_exists() => Ok(false),
            Ok(Err(source)) => Err(Error::WriteLease {
                key: self.settings.key(),
                source,
            }),
        }
    }

    /// Takes over or renews `current` with an optimistic-concurrency merge patch.
    async fn write(&mut self, renew: bool, current: &Lease) -> Result<bool, Error> {
        let now = MicroTime(jiff::Timestamp::now());
        let mut spec = json!({
            "holderIdentity": self.settings.identity,
            "leaseDurationSeconds": duration_seconds(self.settings.lease_duration),
            "renewTime": now,
        });
        if !renew {
            spec["acquireTime"] = json!(now);
            spec["leaseTransitions"] = json!(self.transitions.saturating_add(1));
        }
        let patch = json!({
            "metadata": { "resourceVersion": current.metadata.resource_version },
            "spec": spec,
        });
        let params = PatchParams::default();
        let patch = Patch::Merge(&patch);
        let call = self.api.patch(&self.settings.name, &params, &patch);
        match tokio::time::timeout(self.settings.renew_deadline, call).await {
            Err(_) => Err(Error::Timeout {
                key: self.settings.key(),
            }),
            Ok(Ok(written)) => {
                self.remember(&written);
                Ok(true)
            }
            // Somebody else wrote in between; look again next round.
            Ok(Err(kube::Error::Api(status))) if status.is_conflict() => Ok(false),
            Ok(Err(source)) => Err(Error::WriteLease {
                key: self.settings.key(),
                source,
            }),
        }
    }

    /// Gives the lock up (holder cleared, duration 1 s) so a standby can take over at once.
    /// Failures are logged: the lease then simply expires.
    async fn release(&mut self) {
        let patch = json!({
            "metadata": { "resourceVersion": self.resource_version },
            "spec": {
                "holderIdentity": null,
                "leaseDurationSeconds": 1,
                "renewTime": MicroTime(jiff::Timestamp::now()),
            },
        });
        let params = PatchParams::default();
        let patch = Patch::Merge(&patch);
        let call = self.api.patch(&self.settings.name, &params, &patch);
        match tokio::time::timeout(self.settings.renew_deadline, call).await {
            Ok(Ok(_)) => tracing::info!(lease = %self.settings.key(), "released leadership"),
            Ok(Err(error)) => {
                tracing::warn!(error = %crate::error_chain(&error), lease = %self.settings.key(), "releasing leader lease failed");
            }
            Err(_) => {
                tracing::warn!(lease = %self.settings.key(), "releasing leader lease timed out")
            }
        }
    }

    fn remember(&mut self, lease: &Lease) {
        self.resource_version = lease.metadata.resource_version.clone();
        self.observed = Some(fingerprint(lease));
        self.observed_at = Instant::now();
    }
}

fn duration_seconds(duration: Duration) -> i32 {
    i32::try_from(duration.as_secs().max(1)).unwrap_or(i32::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    const DURATION: Duration = Duration::from_secs(15);

    fn spec(holder: Option<&str>, seconds: Option<i32>) -> LeaseSpec {
        LeaseSpec {
            holder_identity: holder.map(str::to_owned),
            lease_duration_seconds: seconds,
            ..LeaseSpec::default()
        }
    }

    #[test]
    fn decide_acquires_when_lease_is_missing() {
        let now = Instant::now();
        assert_eq!(decide(None, "me", now, now, DURATION), Decision::Acquire);
    }

    #[test]
    fn decide_renews_when_we_hold_the_lease() {
        let now = Instant::now();
        let held = spec(Some("me"), Some(15));
        assert_eq!(
            decide(Some(&held), "me", now, now, DURATION),
            Decision::Renew
        );
    }

    #[test]
    fn decide_acquires_when_lease_was_released() {
        let now = Instant::now();
        let released = spec(None, Some(1));
        assert_eq!(
            decide(Some(&released), "me", now, now, DURATION),
            Decision::Acquire
        );
        let empty = spec(Some(""), Some(1));
        assert_eq!(
            decide(Some(&empty), "me", now, now, DURATION),
            Decision::Acquire
        );
    }

    #[test]
    fn decide_waits_while_other_holder_lease_is_fresh() {
        let since = Instant::now();
        let other = spec(Some("other"), Some(15));
        let now = since + Duration::from_secs(14);
        assert_eq!(
            decide(Some(&other), "me", since, now, DURATION),
            Decision::Wait
        );
    }

    #[test]
    fn decide_acquires_when_other_holder_stopped_renewing_for_lease_duration() {
        let since = Instant::now();
        let other = spec(Some("other"), Some(15));
        let now = since + Duration::from_secs(15);
        assert_eq!(
            decide(Some(&other), "me", since, now, DURATION),
            Decision::Acquire
        );
    }

    #[test]
    fn decide_uses_configured_duration_when_lease_names_none() {
        let since = Instant::now();
        let other = spec(Some("other"), None);
        let now = since + Duration::from_secs(3);
        assert_eq!(
            decide(Some(&other), "me", since, now, Duration::from_secs(2)),
            Decision::Acquire
        );
    }

    #[test]
    fn default_identity_is_unique_per_call() {
        assert_ne!(default_identity(), default_identity());
    }
}

//! The ShootState sync as a [`Reconciler`] of the seed's Clusters (one per shoot, named like its
//! control-plane namespace): a reconcile writes that shoot's ShootState from the sync's
//! [`Model`], spaced to one write per batch period and backing off after failures (see
//! [`Model::plan`]); the runtime runs it like every other controller.
//!
//! The periodic snapshot is no timer per namespace: the controller resyncs every Cluster once per
//! [`SNAPSHOT_RESYNC_FRACTION`]th of the snapshot period, and a reconcile that finds the snapshot
//! due writes it; a wait longer than the resync is left to it ([`ShootStateSync::after`]). A
//! kube-runtime timer per namespace held a delay-queue slot and a hash-map entry with the
//! namespace's name twice — 2 500 of them on a seed of 2 500 shoots, for something due every
//! 6 h. A snapshot comes at most one resync (22.5 min of a 6 h period) after it is due; gardenlet
//! jitters its own by more.

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use kube::ResourceExt;
use kube::runtime::controller::Action;
use seedlet_api::extensions::Cluster;
use seedlet_runtime::controller::{Reason, Reconciler};
use seedlet_runtime::error_chain;

use super::model::{Model, Plan};
use super::reconcile::{self, Ctx, Error};
use super::schedule;
use crate::cluster_shoot::ShootRef;

/// The resync is this fraction of the snapshot period.
pub const SNAPSHOT_RESYNC_FRACTION: u32 = 16;

/// The reconciler: the write's dependencies and the model its watches feed.
pub struct ShootStateSync {
    ctx: Arc<Ctx>,
    model: Arc<Mutex<Model>>,
    concurrency: u16,
    /// Every Cluster reconciled again after this (`None`: no snapshots, no resync).
    resync: Option<Duration>,
}

impl std::fmt::Debug for ShootStateSync {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ShootStateSync")
            .field("model", &*self.model())
            .field("concurrency", &self.concurrency)
            .finish_non_exhaustive()
    }
}

impl ShootStateSync {
    /// The sync writing with `ctx` from `model`, `concurrency` ShootStates at once.
    /// A sync writing from `model`, `concurrency` namespaces at once, with a snapshot every
    /// `snapshot_period` (`None`: never).
    pub fn new(
        ctx: Arc<Ctx>,
        model: Arc<Mutex<Model>>,
        concurrency: u16,
        snapshot_period: Option<Duration>,
    ) -> Self {
        Self {
            ctx,
            model,
            concurrency,
            resync: snapshot_period.map(|period| period / SNAPSHOT_RESYNC_FRACTION),
        }
    }

    /// What to do about a namespace that has nothing to write for `wait`: look again then, unless
    /// the resync comes first (a snapshot due in hours is the resync's, not a timer's).
    fn after(&self, wait: Duration) -> Action {
        match self.resync {
            Some(resync) if wait > resync => Action::await_change(),
            _ => Action::requeue(wait),
        }
    }

    fn model(&self) -> MutexGuard<'_, Model> {
        self.model.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl Reason for Error {
    fn reason(&self) -> &'static str {
        Error::reason(self)
    }
}

impl Reconciler for ShootStateSync {
    type Object = Cluster;
    type Error = Error;
    const NAME: &'static str = super::NAME;

    /// Writes what changed in the Cluster's namespace (or the due snapshot), at most once per
    /// batch period; looks again when the period, a back-off or the next snapshot ends.
    async fn reconcile(&self, cluster: Arc<Cluster>) -> Result<Action, Error> {
        let Some((namespace, shoot)) = ShootRef::of_cluster(&cluster) else {
            // No shoot embedded: nothing names the ShootState; the Cluster sync fills it in.
            return Ok(Action::await_change());
        };
        let job = match self.model().plan(&namespace, &shoot, Instant::now()) {
            Plan::Idle(None) => return Ok(Action::await_change()),
            Plan::Idle(Some(wait)) | Plan::Wait(wait) => return Ok(self.after(wait)),
            Plan::Write(job) => job,
        };
        match reconcile::run(&self.ctx, &job).await {
            Ok(outcome) => {
                let next = self.model().written(&job, outcome, Instant::now());
                Ok(next.map_or_else(Action::await_change, |wait| self.after(wait)))
            }
            Err(error) => {
                self.model().failed(job, Instant::now());
                Err(error)
            }
        }
    }

    /// The first back-off step; [`ShootStateSync::error_policy`] uses the namespace's own.
    fn retry_after(&self, _: &Error) -> Duration {
        schedule::RETRY_BASE
    }

    fn concurrency(&self) -> u16 {
        self.concurrency
    }

    fn resync_period(&self) -> Option<Duration> {
        self.resync
    }

    /// A failed write retries after the namespace's back-off, which grows with every failure, a
    /// lost write race too (a debug line for that one: another writer was first).
    fn error_policy(&self, cluster: &Cluster, error: &Error) -> Action {
        let namespace = cluster.name_any();
        let delay = self
            .model()
            .retry_in(&namespace)
            .unwrap_or_else(|| self.retry_after(error));
        if seedlet_runtime::status::conflict_in_chain(error) {
            tracing::debug!(namespace, error = %error_chain(error), "lost a shootstate write race, retrying");
            return Action::requeue(delay);
        }
        seedlet_runtime::policy::requeue_after_failure(
            Self::NAME,
            &namespace,
            error.reason(),
            error,
            delay,
        )
    }
}

#[cfg(test)]
mod tests {
    use seedlet_runtime::clock::FakeClock;

    use super::super::model::Update;
    use super::*;

    const NS: &str = "shoot--dev--foo";

    fn sync() -> ShootStateSync {
        let config = kube::Config::new("http://127.0.0.1:9".parse().expect("url"));
        let client = kube::Client::try_from(config).expect("client");
        let clock = Arc::new(FakeClock::new(jiff::Timestamp::UNIX_EPOCH));
        let ctx = Ctx::new(
            client.clone(),
            client,
            Arc::new(crate::metrics::AgentMetrics::new()),
            clock.clone(),
            "test",
        );
        let model = Model::new(Duration::from_millis(100), None, clock);
        ShootStateSync::new(Arc::new(ctx), Arc::new(Mutex::new(model)), 1, None)
    }

    fn cluster() -> Cluster {
        serde_json::from_value(serde_json::json!({
            "metadata": {"name": NS},
            "spec": {"cloudProfile": {}, "shoot": {"metadata": {"name": "foo", "namespace": "garden-dev"}}}
        }))
        .expect("cluster")
    }

    fn write_failure(code: u16, reason: &str) -> Error {
        Error::WriteShootState {
            key: "garden-dev/foo".into(),
            source: kube::Error::Api(
                kube::core::Status::failure("m", reason)
                    .with_code(code)
                    .boxed(),
            ),
        }
    }

    /// Fails one write of the namespace at `now` as the reconcile does, and returns the error
    /// policy's action for `error`.
    fn fail_once(sync: &ShootStateSync, error: &Error, now: Instant) -> Action {
        let cluster = cluster();
        let (namespace, shoot) = ShootRef::of_cluster(&cluster).expect("shoot");
        let job = {
            let mut model = sync.model();
            model.observe(Update::Cluster(namespace.clone(), shoot.clone()), now);
            match model.plan(&namespace, &shoot, now) {
                Plan::Write(job) => job,
                other => panic!("expected a write, got {other:?}"),
            }
        };
        sync.model().failed(job, now);
        sync.error_policy(&cluster, error)
    }

    #[tokio::test]
    async fn a_lost_write_race_waits_for_the_growing_back_off_like_any_failure() {
        let sync = sync();
        // A minute apart: past the spacing and back-off of the failure before.
        let start = Instant::now();
        let at = |attempt: u32| start + Duration::from_secs(60) * attempt;
        for attempt in 0..3 {
            let action = fail_once(&sync, &write_failure(409, "Conflict"), at(attempt));
            assert_eq!(
                action,
                Action::requeue(schedule::retry_delay(attempt)),
                "a lost race is not retried at once: {attempt} earlier failures"
            );
        }
        let action = fail_once(&sync, &write_failure(500, "InternalError"), at(3));
        assert_eq!(action, Action::requeue(schedule::retry_delay(3)));
    }

    #[tokio::test]
    async fn a_wait_longer_than_the_resync_is_left_to_the_resync() {
        let six_hours = Duration::from_secs(6 * 3600);
        let resync = six_hours / SNAPSHOT_RESYNC_FRACTION;
        let with_snapshots = ShootStateSync {
            resync: Some(resync),
            ..sync()
        };
        assert_eq!(with_snapshots.resync_period(), Some(resync));
        let cases = [
            (
                &with_snapshots,
                Duration::from_millis(100),
                Action::requeue(Duration::from_millis(100)),
            ),
            (&with_snapshots, resync, Action::requeue(resync)),
            (
                &with_snapshots,
                resync + Duration::from_secs(1),
                Action::await_change(),
            ),
            (&with_snapshots, six_hours, Action::await_change()),
        ];
        for (sync, wait, expected) in cases {
            assert_eq!(sync.after(wait), expected, "{wait:?}");
        }
        let without = sync();
        assert_eq!(without.resync_period(), None);
        assert_eq!(
            without.after(six_hours),
            Action::requeue(six_hours),
            "no resync: a timer"
        );
    }
}

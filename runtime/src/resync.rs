//! The periodic resync of a controller: every object of its store reconciled again once per
//! period, with no timer per object. A reconcile that returned `Action::requeue(sync_period)`
//! kept one kube-runtime scheduler entry per object (its reference twice, with a delay-queue slot
//! and a hash-map slot), so a controller over the 2 500 Shoots of a large seed held 2 500 timers
//! for nothing but "look again in an hour". [`spread`] is the one stream that replaces them: the
//! period is cut into [`SLOTS`] slots and each object has its own slot (a hash of the controller's
//! name, its namespace and name), so the objects come spread over the period, like gardenlet's
//! jittered sync periods, instead of all at one instant, and the Shoots of one slot are not the
//! same in two controllers.
//!
//! `controller::run` adds the stream to a controller that declares
//! [`crate::controller::Reconciler::resync_period`] and drops a success's requeue after exactly
//! that period ([`after_success`]): the resync reaches the object within the period anyway. A
//! shorter requeue (something pending) and every retry after a failure stay per object.

use std::collections::VecDeque;
use std::hash::{Hash, Hasher};
use std::time::Duration;

use futures::Stream;
use kube::Resource;
use kube::runtime::controller::Action;
use kube::runtime::reflector::{ObjectRef, Store};
use tokio::time::{Instant, Interval, MissedTickBehavior};
use tokio_util::sync::CancellationToken;

/// Slots per period: at 2 500 objects and a 1 h period about 10 objects every 14 s, at a 1 min
/// period about 10 every 0.23 s. Each slot scans the store once (a hash per object).
pub const SLOTS: u32 = 256;

/// References (without `extra`, see [`crate::controller::object_ref`]) to every object in
/// `store`, each once per `period` at its own slot, the first time within one period from now;
/// the stream ends when `stop` is cancelled. `salt` (the controller's name) gives two controllers
/// over one kind different slots for the same object. An object stored after its slot went by
/// this period comes at its slot of the next one; a deleted one is not named again.
pub fn spread<K>(
    store: Store<K>,
    period: Duration,
    salt: &'static str,
    stop: CancellationToken,
) -> impl Stream<Item = ObjectRef<K>> + Send + 'static
where
    K: Resource<DynamicType = ()> + Clone + Send + Sync + 'static,
{
    let slot_length = (period / SLOTS).max(Duration::from_millis(1));
    let mut ticks = tokio::time::interval_at(Instant::now() + slot_length, slot_length);
    // A late tick comes at once and every slot still comes once: none is skipped.
    ticks.set_missed_tick_behavior(MissedTickBehavior::Burst);
    let state = Slots {
        store,
        salt,
        stop,
        ticks,
        next_slot: 0,
        due: VecDeque::new(),
    };
    futures::stream::unfold(state, |mut state| async move {
        let reference = state.next().await?;
        Some((reference, state))
    })
}

/// Where [`spread`] is in its period.
struct Slots<K: Resource<DynamicType = ()> + 'static> {
    store: Store<K>,
    salt: &'static str,
    stop: CancellationToken,
    ticks: Interval,
    next_slot: u32,
    due: VecDeque<ObjectRef<K>>,
}

impl<K> Slots<K>
where
    K: Resource<DynamicType = ()> + Clone + Send + Sync + 'static,
{
    async fn next(&mut self) -> Option<ObjectRef<K>> {
        loop {
            if let Some(reference) = self.due.pop_front() {
                return Some(reference);
            }
            tokio::select! {
                () = self.stop.cancelled() => return None,
                _ = self.ticks.tick() => {}
            }
            let slot = self.next_slot;
            self.next_slot = (slot + 1) % SLOTS;
            self.due.extend(
                self.store
                    .state()
                    .iter()
                    .filter(|object| slot_of(self.salt, object.as_ref()) == slot)
                    .map(|object| crate::controller::object_ref(object.as_ref())),
            );
        }
    }
}

/// The slot of `object` in the resync of the controller named `salt`.
fn slot_of<K: Resource>(salt: &str, object: &K) -> u32 {
    let meta = object.meta();
    let mut hasher = std::hash::DefaultHasher::new();
    (salt, meta.namespace.as_deref(), meta.name.as_deref()).hash(&mut hasher);
    // The remainder of a division by `SLOTS` fits in a u32.
    u32::try_from(hasher.finish() % u64::from(SLOTS)).unwrap_or_default()
}

/// What a successful reconcile's `action` leaves to the scheduler when the controller resyncs
/// every `resync` (`None`: no resync): a requeue after exactly the resync period is dropped, the
/// resync comes within it; anything else stays.
pub fn after_success(action: Action, resync: Option<Duration>) -> Action {
    match resync {
        Some(period) if action == Action::requeue(period) => Action::await_change(),
        _ => action,
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use futures::StreamExt as _;
    use k8s_openapi::api::core::v1::ConfigMap;
    use kube::api::ObjectMeta;
    use kube::runtime::reflector;
    use kube::runtime::watcher::Event;

    use super::*;
    use crate::controller::Never;

    const PERIOD: Duration = Duration::from_secs(64);

    fn config_map(name: &str) -> ConfigMap {
        ConfigMap {
            metadata: ObjectMeta {
                name: Some(name.to_owned()),
                namespace: Some("default".to_owned()),
                resource_version: Some("7".to_owned()),
                uid: Some("0c6e7a4e-3f1b-4a59-9d0f-0a7c1f3b2d11".to_owned()),
                ..ObjectMeta::default()
            },
            ..ConfigMap::default()
        }
    }

    #[test]
    fn only_a_requeue_after_exactly_the_resync_period_is_dropped() {
        let minute = Duration::from_secs(60);
        let cases = [
            (
                Action::requeue(minute),
                Some(minute),
                Action::await_change(),
            ),
            (
                Action::requeue(Duration::from_secs(5)),
                Some(minute),
                Action::requeue(Duration::from_secs(5)),
            ),
            (
                Action::requeue(2 * minute),
                Some(minute),
                Action::requeue(2 * minute),
            ),
            (Action::await_change(), Some(minute), Action::await_change()),
            (Action::requeue(minute), None, Action::requeue(minute)),
        ];
        for (action, resync, expected) in cases {
            assert_eq!(
                after_success(action.clone(), resync),
                expected,
                "{action:?} with resync {resync:?}"
            );
        }
    }

    #[tokio::test(start_paused = true)]
    async fn every_stored_object_comes_once_per_period_spread_over_the_period() {
        let (store, mut writer) = reflector::store();
        let names: Vec<String> = (0..500).map(|n| format!("object-{n}")).collect();
        for name in &names {
            writer.apply_watcher_event(&Event::Apply(config_map(name)));
        }
        let stop = CancellationToken::new();
        let start = Instant::now();
        let mut resyncs = Box::pin(spread(store, PERIOD, "test", stop.clone()));
        // (name → the instants it came), and how many came at each instant.
        let mut seen: BTreeMap<String, Vec<Duration>> = BTreeMap::new();
        let mut per_instant: BTreeMap<Duration, usize> = BTreeMap::new();
        while let Some(reference) = resyncs.next().await {
            let at = start.elapsed();
            if at > 2 * PERIOD {
                break;
            }
            assert!(
                reference.extra.resource_version.is_none() && reference.extra.uid.is_none(),
                "a resync's reference carries no extra: {reference:?}"
            );
            seen.entry(reference.name).or_default().push(at);
            *per_instant.entry(at).or_default() += 1;
        }
        assert_eq!(seen.len(), names.len(), "every object comes");
        for (name, instants) in &seen {
            assert_eq!(instants.len(), 2, "{name} once in each of two periods");
            assert!(instants[0] > Duration::ZERO && instants[0] <= PERIOD);
            assert_eq!(
                instants[1] - instants[0],
                PERIOD,
                "{name}: one period apart"
            );
        }
        let busiest = per_instant.values().max().copied().unwrap_or_default();
        assert!(
            per_instant.len() > 200 && busiest < 15,
            "500 objects spread over the period's slots: {} instants, at most {busiest} at once",
            per_instant.len()
        );
        stop.cancel();
        assert!(resyncs.next().await.is_none(), "the stream ends on stop");
    }

    #[tokio::test(start_paused = true)]
    async fn a_deleted_object_is_not_named_and_a_new_one_comes_within_a_period() {
        let (store, mut writer) = reflector::store();
        writer.apply_watcher_event(&Event::Apply(config_map("old")));
        let stop = CancellationToken::new();
        let start = Instant::now();
        let mut resyncs = Box::pin(spread(store, PERIOD, "test", stop.clone()));
        writer.apply_watcher_event(&Event::Delete(config_map("old")));
        writer.apply_watcher_event(&Event::Apply(config_map("new")));
        let first = resyncs.next().await.expect("a resync");
        assert_eq!(first.name, "new");
        assert!(start.elapsed() <= PERIOD);
        let second = resyncs.next().await.expect("a resync");
        assert_eq!(second.name, "new", "the deleted object never comes");
        stop.cancel();
    }

    /// Counts its reconciles per object; `soon` has something pending and looks again after a
    /// quarter period, every other object waits for its sync period.
    #[derive(Default)]
    struct Counter {
        reconciles: std::sync::Mutex<BTreeMap<String, usize>>,
    }

    impl crate::controller::Reconciler for Counter {
        type Object = ConfigMap;
        type Error = Never;
        const NAME: &'static str = "resync-test";

        async fn reconcile(&self, object: std::sync::Arc<ConfigMap>) -> Result<Action, Never> {
            let name = object.metadata.name.clone().unwrap_or_default();
            let soon = name == "soon";
            *self
                .reconciles
                .lock()
                .expect("reconciles")
                .entry(name)
                .or_default() += 1;
            Ok(Action::requeue(if soon { PERIOD / 4 } else { PERIOD }))
        }

        fn retry_after(&self, _: &Never) -> Duration {
            PERIOD
        }

        fn resync_period(&self) -> Option<Duration> {
            Some(PERIOD)
        }
    }

    #[tokio::test(start_paused = true)]
    async fn run_reconciles_every_stored_object_once_per_resync_period_without_a_trigger() {
        let (store, mut writer) = reflector::store();
        writer.apply_watcher_event(&Event::Init);
        for n in 0..40 {
            writer.apply_watcher_event(&Event::InitApply(config_map(&format!("object-{n}"))));
        }
        writer.apply_watcher_event(&Event::InitApply(config_map("soon")));
        writer.apply_watcher_event(&Event::InitDone);
        // No change ever comes: every reconcile is the resync's or a requeue's.
        let controller = crate::controller::Triggers::for_stream(futures::stream::pending(), store);
        let counter = std::sync::Arc::new(Counter::default());
        let stop = CancellationToken::new();
        let running = tokio::spawn(crate::controller::run(
            controller,
            counter.clone(),
            stop.clone(),
            std::sync::Arc::new(crate::metrics::Metrics::new("test")),
        ));
        // Three periods and half a slot: every slot came three times, none a fourth.
        tokio::time::sleep(3 * PERIOD + PERIOD / (2 * SLOTS)).await;
        stop.cancel();
        running.await.expect("the controller stops");
        let reconciles = counter.reconciles.lock().expect("reconciles").clone();
        assert_eq!(reconciles.len(), 41, "every object: {reconciles:?}");
        for (name, count) in &reconciles {
            if name == "soon" {
                assert!(
                    *count >= 9,
                    "a shorter requeue stays its own timer: {count}"
                );
            } else {
                assert_eq!(
                    *count, 3,
                    "{name}: once per period, its requeue left to the resync"
                );
            }
        }
    }

    #[test]
    fn two_controllers_give_one_object_different_slots() {
        let objects: Vec<ConfigMap> = (0..64).map(|n| config_map(&format!("o-{n}"))).collect();
        let differing = objects
            .iter()
            .filter(|object| slot_of("shoot-care", *object) != slot_of("cluster", *object))
            .count();
        assert!(differing > 56, "{differing} of 64 differ");
    }
}

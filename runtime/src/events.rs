//! Kubernetes Events (`core/v1`, with `action` and `reportingComponent` as `events.k8s.io/v1`
//! shows them) for the main transitions of both daemons, recorded through one
//! [`Recorder`] per process and correlated as client-go's recorder does, so that `kubectl describe`
//! shows what happened and a flapping object cannot flood the API server:
//!
//! - **dedup**: an event identical to a recent one (object, type, reason, message) patches the
//!   existing Event's `count` and `lastTimestamp` instead of creating a new one;
//! - **aggregation**: more than [`AGGREGATE_MAX_EVENTS`] different messages for the same object,
//!   type and reason within [`AGGREGATE_WINDOW`] collapse into one Event whose message starts with
//!   `(combined from similar events): `;
//! - **spam filter**: per object, a token bucket of [`SPAM_BURST`] events refilled by one every
//!   [`SPAM_REFILL`]; events beyond it are dropped.
//!
//! Recording never fails the caller: an Event is a side channel. A failed write is logged once at
//! WARN when recording starts failing, then at DEBUG until a write succeeds again.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use jiff::{SignedDuration, Timestamp};
use k8s_openapi::api::core::v1::{Event, EventSource, ObjectReference};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{MicroTime, ObjectMeta, Time};
use kube::api::{Patch, PatchParams, PostParams};
use kube::{Api, Resource, ResourceExt};
use serde_json::json;

use crate::clock::{Clock, SystemClock};

/// Distinct messages per (object, type, reason) before they are combined (client-go: 10).
pub const AGGREGATE_MAX_EVENTS: usize = 10;
/// The window in which distinct messages are counted for aggregation (client-go: 10 minutes).
pub const AGGREGATE_WINDOW: SignedDuration = SignedDuration::from_secs(600);
/// Events an object may burst before the spam filter drops them (client-go: 25).
pub const SPAM_BURST: f64 = 25.0;
/// One token is refilled per this interval (client-go: 1 per 5 minutes).
pub const SPAM_REFILL: SignedDuration = SignedDuration::from_secs(300);
/// Correlation entries kept; the least recently used is forgotten first (client-go: 4096).
const CACHE_SIZE: usize = 4096;
/// Prefix of an aggregated Event's message, as client-go writes it.
const COMBINED_PREFIX: &str = "(combined from similar events): ";

/// The `type` of an Event.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EventType {
    /// An expected transition.
    Normal,
    /// Something an operator may need to act on.
    Warning,
}

impl EventType {
    /// The API string.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Normal => "Normal",
            Self::Warning => "Warning",
        }
    }
}

/// Where a recorder gets its client from for each write: a fixed client, or the current one of
/// a hot-swappable credential (the agent's garden client after a rotation).
pub type ClientSource = Arc<dyn Fn() -> kube::Client + Send + Sync>;

/// Records Events on behalf of one component (`source.component`, `reportingComponent`).
#[derive(Clone)]
pub struct Recorder {
    client: ClientSource,
    component: String,
    instance: String,
    clock: Arc<dyn Clock>,
    correlator: Arc<Mutex<Correlator>>,
    failing: Arc<AtomicBool>,
}

impl std::fmt::Debug for Recorder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Recorder")
            .field("component", &self.component)
            .finish_non_exhaustive()
    }
}

impl Recorder {
    /// A recorder writing as `component` (e.g. `gardener-controller-manager`'s seedlet
    /// counterpart `seedlet-garden`); the instance is the host name when known.
    pub fn new(client: kube::Client, component: impl Into<String>) -> Self {
        Self::from_source(Arc::new(move || client.clone()), component)
    }

    /// A recorder taking the current client from `client` for every write.
    pub fn from_source(client: ClientSource, component: impl Into<String>) -> Self {
        let instance = std::env::var("HOSTNAME").unwrap_or_default();
        Self {
            client,
            component: component.into(),
            instance,
            clock: Arc::new(SystemClock),
            correlator: Arc::new(Mutex::new(Correlator::default())),
            failing: Arc::new(AtomicBool::new(false)),
        }
    }

    /// The same recorder reading time from `clock` (tests).
    #[must_use]
    pub fn with_clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.clock = clock;
        self
    }

    /// The same recorder (one correlation for the process, as one client-go broadcaster) writing
    /// as `component`; controllers name themselves as controller-runtime's
    /// `GetEventRecorderFor("<name>-controller")` does.
    #[must_use]
    pub fn named(&self, component: impl Into<String>) -> Self {
        Self {
            component: component.into(),
            ..self.clone()
        }
    }

    /// Records an Event about `object`: Gardener's `(type, reason, action, note)`, e.g.
    /// `(Normal, "ResourceReferenced", "Delete", "Cannot delete …")`.
    pub async fn publish<K>(
        &self,
        object: &K,
        kind: EventType,
        reason: &str,
        action: &str,
        message: &str,
    ) where
        K: Resource<DynamicType = ()>,
    {
        self.publish_ref(object_reference(object), kind, reason, action, message)
            .await;
    }

    /// Records an Event about the object `regarding` refers to.
    pub async fn publish_ref(
        &self,
        regarding: ObjectReference,
        kind: EventType,
        reason: &str,
        action: &str,
        message: &str,
    ) {
        let now = self.clock.now();
        let decision = self
            .correlator
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .observe(&regarding, kind, reason, message, now);
        let result = match decision {
            Decision::Drop => return,
            Decision::Create { message } => {
                let event = self.new_event(&regarding, (kind, reason, action), &message, now);
                self.create(event, &regarding, kind, reason, &message).await
            }
            Decision::Update {
                name,
                count,
                message,
            } => {
                let what = (kind, reason, action);
                self.update(&name, count, now, &regarding, what, &message)
                    .await
            }
        };
        self.note_result(result, &regarding, reason);
    }

    async fn create(
        &self,
        event: Event,
        regarding: &ObjectReference,
        kind: EventType,
        reason: &str,
        message: &str,
    ) -> Result<(), kube::Error> {
        let namespace = event.metadata.namespace.clone().unwrap_or_default();
        let api: Api<Event> = Api::namespaced((self.client)(), &namespace);
        let created = api.create(&PostParams::default(), &event).await?;
        let key = Key::exact(regarding, kind, reason, message);
        self.correlator
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .remember_name(key, created.name_any());
        Ok(())
    }

    async fn update(
        &self,
        name: &str,
        count: i32,
        now: Timestamp,
        regarding: &ObjectReference,
        what: (EventType, &str, &str),
        message: &str,
    ) -> Result<(), kube::Error> {
        let namespace = event_namespace(regarding);
        let api: Api<Event> = Api::namespaced((self.client)(), &namespace);
        let patch = json!({
            "count": count,
            "lastTimestamp": Time(second(now)),
            "message": message,
        });
        match api
            .patch(name, &PatchParams::default(), &Patch::Merge(&patch))
            .await
        {
            Ok(_) => Ok(()),
            // Someone deleted it (the Event TTL, an operator): start a new one, as client-go does.
            Err(kube::Error::Api(status)) if status.is_not_found() => {
                let mut event = self.new_event(regarding, what, message, now);
                event.count = Some(count);
                self.create(event, regarding, what.0, what.1, message).await
            }
            Err(error) => Err(error),
        }
    }

    fn note_result(
        &self,
        result: Result<(), kube::Error>,
        regarding: &ObjectReference,
        reason: &str,
    ) {
        let object = regarding.name.as_deref().unwrap_or_default();
        match result {
            Ok(()) => {
                if self.failing.swap(false, Ordering::Relaxed) {
                    tracing::info!(component = %self.component, "recording events works again");
                }
            }
            Err(error) if !self.failing.swap(true, Ordering::Relaxed) => tracing::warn!(
                component = %self.component, object, reason,
                error = %crate::error_chain(&error),
                "cannot record events; further failures are logged at debug until one succeeds"
            ),
            Err(error) => tracing::debug!(
                component = %self.component, object, reason,
                error = %crate::error_chain(&error), "event not recorded"
            ),
        }
    }

    /// A new Event; `what` is `(type, reason, action)`.
    fn new_event(
        &self,
        regarding: &ObjectReference,
        (kind, reason, action): (EventType, &str, &str),
        message: &str,
        now: Timestamp,
    ) -> Event {
        let stamp = self
            .correlator
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .name_stamp(now);
        let object_name = regarding.name.clone().unwrap_or_default();
        // client-go's name: the object's name and the time in nanoseconds as hex, readable in
        // `kubectl get events`.
        let name = format!("{}.{stamp:x}", event_name_prefix(&object_name));
        Event {
            metadata: ObjectMeta {
                name: Some(name),
                namespace: Some(event_namespace(regarding)),
                ..ObjectMeta::default()
            },
            involved_object: regarding.clone(),
            reason: Some(reason.to_owned()),
            action: Some(action.to_owned()),
            message: Some(message.to_owned()),
            type_: Some(kind.as_str().to_owned()),
            count: Some(1),
            first_timestamp: Some(Time(second(now))),
            last_timestamp: Some(Time(second(now))),
            event_time: None::<MicroTime>,
            source: Some(EventSource {
                component: Some(self.component.clone()),
                host: (!self.instance.is_empty()).then(|| self.instance.clone()),
            }),
            reporting_component: Some(self.component.clone()),
            reporting_instance: Some(if self.instance.is_empty() {
                self.component.clone()
            } else {
                self.instance.clone()
            }),
            ..Event::default()
        }
    }
}

/// A reference to `object` for an Event's `involvedObject`.
pub fn object_reference<K>(object: &K) -> ObjectReference
where
    K: Resource<DynamicType = ()>,
{
    ObjectReference {
        api_version: Some(K::api_version(&()).into_owned()),
        kind: Some(K::kind(&()).into_owned()),
        name: object.meta().name.clone(),
        namespace: object.meta().namespace.clone(),
        uid: object.meta().uid.clone(),
        resource_version: object.meta().resource_version.clone(),
        field_path: None,
    }
}

/// The object's name as the first part of an Event name, which must be a DNS subdomain: lower
/// case, other characters than `[a-z0-9.-]` as `-` (some kinds allow more, e.g. CSR names with
/// upper case), at most 236 characters so that the `.<hex time>` suffix fits in 253.
fn event_name_prefix(object_name: &str) -> String {
    let cleaned: String = object_name
        .chars()
        .map(|c| match c.to_ascii_lowercase() {
            c @ ('a'..='z' | '0'..='9' | '.' | '-') => c,
            _ => '-',
        })
        .take(236)
        .collect();
    let trimmed = cleaned.trim_matches(|c| c == '-' || c == '.');
    if trimmed.is_empty() {
        "event".to_owned()
    } else {
        trimmed.to_owned()
    }
}

/// Events about cluster-scoped objects live in `default`, as kube-apiserver's clients put them.
fn event_namespace(regarding: &ObjectReference) -> String {
    regarding
        .namespace
        .clone()
        .filter(|namespace| !namespace.is_empty())
        .unwrap_or_else(|| "default".to_owned())
}

fn second(at: Timestamp) -> Timestamp {
    Timestamp::from_second(at.as_second()).unwrap_or(at)
}

/// Identity of an object for correlation (uid distinguishes a re-created object).
fn object_key(regarding: &ObjectReference) -> String {
    format!(
        "{}/{}/{}/{}/{}",
        regarding.api_version.as_deref().unwrap_or_default(),
        regarding.kind.as_deref().unwrap_or_default(),
        regarding.namespace.as_deref().unwrap_or_default(),
        regarding.name.as_deref().unwrap_or_default(),
        regarding.uid.as_deref().unwrap_or_default(),
    )
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Key {
    object: String,
    kind: EventType,
    reason: String,
    message: String,
}

impl Key {
    fn exact(regarding: &ObjectReference, kind: EventType, reason: &str, message: &str) -> Self {
        Self {
            object: object_key(regarding),
            kind,
            reason: reason.to_owned(),
            message: message.to_owned(),
        }
    }
}

/// What to do with one observed event.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Decision {
    /// Dropped by the spam filter.
    Drop,
    /// Create a new Event with this message.
    Create { message: String },
    /// Patch the existing Event `name` to `count`.
    Update {
        name: String,
        count: i32,
        message: String,
    },
}

#[derive(Debug, Default)]
struct Seen {
    name: Option<String>,
    count: i32,
    last: Option<Timestamp>,
}

#[derive(Debug)]
struct Bucket {
    tokens: f64,
    at: Timestamp,
}

#[derive(Debug)]
struct Similar {
    messages: Vec<String>,
    since: Timestamp,
}

/// The pure part of the recorder: spam filter, aggregation and dedup over remembered events.
#[derive(Debug, Default)]
struct Correlator {
    seen: HashMap<Key, Seen>,
    similar: HashMap<(String, EventType, String), Similar>,
    buckets: HashMap<String, Bucket>,
    /// The last [`Correlator::name_stamp`].
    last_stamp: i128,
}

impl Correlator {
    fn observe(
        &mut self,
        regarding: &ObjectReference,
        kind: EventType,
        reason: &str,
        message: &str,
        now: Timestamp,
    ) -> Decision {
        let object = object_key(regarding);
        if !self.take_token(&object, now) {
            return Decision::Drop;
        }
        let message = self.aggregate(&object, kind, reason, message, now);
        let key = Key {
            object,
            kind,
            reason: reason.to_owned(),
            message: message.clone(),
        };
        self.forget_oldest_if_full(now);
        let seen = self.seen.entry(key).or_default();
        seen.count += 1;
        seen.last = Some(now);
        match &seen.name {
            Some(name) => Decision::Update {
                name: name.clone(),
                count: seen.count,
                message,
            },
            None => Decision::Create { message },
        }
    }

    /// The nanoseconds in a new Event's name: `now`, or one more than the last stamp when the
    /// clock has not moved past it (a stopped test clock, or two Events in one tick), so two
    /// Events of one recorder never share a name.
    fn name_stamp(&mut self, now: Timestamp) -> i128 {
        self.last_stamp = now.as_nanosecond().max(self.last_stamp + 1);
        self.last_stamp
    }

    fn remember_name(&mut self, key: Key, name: String) {
        if let Some(seen) = self.seen.get_mut(&key) {
            seen.name = Some(name);
        }
    }

    fn take_token(&mut self, object: &str, now: Timestamp) -> bool {
        let bucket = self.buckets.entry(object.to_owned()).or_insert(Bucket {
            tokens: SPAM_BURST,
            at: now,
        });
        let elapsed = now.duration_since(bucket.at).as_secs_f64().max(0.0);
        bucket.tokens = (bucket.tokens + elapsed / SPAM_REFILL.as_secs_f64()).min(SPAM_BURST);
        bucket.at = now;
        if bucket.tokens < 1.0 {
            return false;
        }
        bucket.tokens -= 1.0;
        true
    }

    /// client-go's aggregator: the message itself, or the combined message once more than
    /// [`AGGREGATE_MAX_EVENTS`] distinct messages arrived within the window.
    fn aggregate(
        &mut self,
        object: &str,
        kind: EventType,
        reason: &str,
        message: &str,
        now: Timestamp,
    ) -> String {
        let similar = self
            .similar
            .entry((object.to_owned(), kind, reason.to_owned()))
            .or_insert_with(|| Similar {
                messages: Vec::new(),
                since: now,
            });
        if now.duration_since(similar.since) > AGGREGATE_WINDOW {
            similar.messages.clear();
            similar.since = now;
        }
        if !similar.messages.iter().any(|m| m == message) {
            similar.messages.push(message.to_owned());
        }
        if similar.messages.len() > AGGREGATE_MAX_EVENTS {
            format!("{COMBINED_PREFIX}{message}")
        } else {
            message.to_owned()
        }
    }

    fn forget_oldest_if_full(&mut self, now: Timestamp) {
        if self.seen.len() < CACHE_SIZE {
            return;
        }
        let oldest = self
            .seen
            .iter()
            .min_by_key(|(_, seen)| seen.last.unwrap_or(now))
            .map(|(key, _)| key.clone());
        if let Some(key) = oldest {
            self.seen.remove(&key);
        }
        if self.buckets.len() > CACHE_SIZE {
            self.buckets.clear();
        }
        if self.similar.len() > CACHE_SIZE {
            self.similar.clear();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reference(name: &str) -> ObjectReference {
        ObjectReference {
            api_version: Some("core.gardener.cloud/v1beta1".into()),
            kind: Some("Seed".into()),
            name: Some(name.into()),
            uid: Some(format!("uid-{name}")),
            ..ObjectReference::default()
        }
    }

    fn at(second: i64) -> Timestamp {
        Timestamp::from_second(1_800_000_000 + second).unwrap()
    }

    fn created(correlator: &mut Correlator, seed: &str, msg: &str, now: Timestamp) -> Decision {
        let decision = correlator.observe(&reference(seed), EventType::Normal, "R", msg, now);
        if let Decision::Create { message } = &decision {
            let key = Key::exact(&reference(seed), EventType::Normal, "R", message);
            correlator.remember_name(key, format!("{seed}.{}", now.as_second()));
        }
        decision
    }

    #[test]
    fn identical_events_update_the_first_one_with_a_growing_count() {
        let mut c = Correlator::default();
        assert_eq!(
            created(&mut c, "a", "m", at(0)),
            Decision::Create {
                message: "m".into()
            }
        );
        for expected in 2..=4 {
            assert_eq!(
                created(&mut c, "a", "m", at(expected.into())),
                Decision::Update {
                    name: format!("a.{}", at(0).as_second()),
                    count: expected,
                    message: "m".into(),
                }
            );
        }
        // Another object, or another message, is its own Event.
        assert!(matches!(
            created(&mut c, "b", "m", at(5)),
            Decision::Create { .. }
        ));
        assert!(matches!(
            created(&mut c, "a", "n", at(6)),
            Decision::Create { .. }
        ));
    }

    #[test]
    fn more_than_ten_distinct_messages_are_combined_into_one_event() {
        let mut c = Correlator::default();
        for i in 0..AGGREGATE_MAX_EVENTS {
            let decision = created(&mut c, "a", &format!("m{i}"), at(i as i64));
            assert_eq!(
                decision,
                Decision::Create {
                    message: format!("m{i}")
                }
            );
        }
        let eleventh = created(&mut c, "a", "m10", at(11));
        assert_eq!(
            eleventh,
            Decision::Create {
                message: format!("{COMBINED_PREFIX}m10")
            }
        );
        // Outside the window the count starts again.
        let later = created(&mut c, "a", "fresh", at(11 + 601));
        assert_eq!(
            later,
            Decision::Create {
                message: "fresh".into()
            }
        );
    }

    #[test]
    fn an_object_bursting_events_is_throttled_and_refilled_over_time() {
        let mut c = Correlator::default();
        let passed = (0..40)
            .filter(|i| created(&mut c, "a", "m", at(*i)) != Decision::Drop)
            .count();
        assert_eq!(passed, SPAM_BURST as usize);
        // 5 minutes later one token is back; another object is unaffected.
        assert_ne!(created(&mut c, "a", "m", at(40 + 300)), Decision::Drop);
        assert_eq!(created(&mut c, "a", "m", at(40 + 301)), Decision::Drop);
        assert_ne!(created(&mut c, "b", "m", at(41)), Decision::Drop);
    }

    #[test]
    fn name_stamps_grow_even_when_the_clock_stands_still() {
        let mut c = Correlator::default();
        let now = at(0).as_nanosecond();
        assert_eq!(c.name_stamp(at(0)), now);
        assert_eq!(c.name_stamp(at(0)), now + 1);
        assert_eq!(c.name_stamp(at(1)), at(1).as_nanosecond());
    }

    #[test]
    fn event_names_are_dns_subdomains_whatever_the_object_is_called() {
        assert_eq!(event_name_prefix("seed-csr-XcRGB_3"), "seed-csr-xcrgb-3");
        assert_eq!(event_name_prefix("_A_"), "a");
        assert_eq!(event_name_prefix("__"), "event");
        assert_eq!(event_name_prefix(&"a".repeat(300)).len(), 236);
    }

    #[test]
    fn cluster_scoped_objects_get_their_events_in_default() {
        assert_eq!(event_namespace(&reference("a")), "default");
        let mut namespaced = reference("a");
        namespaced.namespace = Some("garden-dev".into());
        assert_eq!(event_namespace(&namespaced), "garden-dev");
    }
}

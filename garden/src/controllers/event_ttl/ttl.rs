//! When a non-Shoot Event goes (spec §10): Shoot events stay; others are deleted once their
//! last occurrence (`series.lastObservedTime`, else `eventTime`, else `lastTimestamp`) is older
//! than the TTL; without any timestamp at once.

use jiff::{SignedDuration, Timestamp};
use k8s_openapi::api::core::v1::Event;

/// What to do with an Event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    /// A Shoot event: never deleted here.
    Keep,
    /// Delete now.
    Delete,
    /// Look again after this long.
    Wait(SignedDuration),
}

/// Whether the Event is about a `core.gardener.cloud` Shoot.
pub fn is_shoot_event(event: &Event) -> bool {
    let object = &event.involved_object;
    let group = object
        .api_version
        .as_deref()
        .and_then(|v| v.split_once('/').map(|(group, _)| group))
        .unwrap_or_default();
    group == "core.gardener.cloud" && object.kind.as_deref() == Some("Shoot")
}

/// The last occurrence of the Event, first non-zero of series, event time, last timestamp.
pub fn last_seen(event: &Event) -> Option<Timestamp> {
    let zero = Timestamp::UNIX_EPOCH;
    [
        event
            .series
            .as_ref()
            .and_then(|s| s.last_observed_time.as_ref())
            .map(|t| t.0),
        event.event_time.as_ref().map(|t| t.0),
        event.last_timestamp.as_ref().map(|t| t.0),
    ]
    .into_iter()
    .flatten()
    .find(|t| *t != zero)
}

/// The decision for `event` at `now` with `ttl`.
pub fn decide(event: &Event, now: Timestamp, ttl: SignedDuration) -> Decision {
    if is_shoot_event(event) {
        return Decision::Keep;
    }
    let Some(last) = last_seen(event) else {
        return Decision::Delete;
    };
    let expires = last.saturating_add(ttl).unwrap_or(last);
    if expires > now {
        Decision::Wait(expires.duration_since(now))
    } else {
        Decision::Delete
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::{EventSeries, ObjectReference};
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::{MicroTime, Time};

    fn t(seconds: i64) -> Timestamp {
        Timestamp::from_second(1_000_000 + seconds).expect("t")
    }

    fn event(api_version: &str, kind: &str) -> Event {
        Event {
            involved_object: ObjectReference {
                api_version: Some(api_version.into()),
                kind: Some(kind.into()),
                ..Default::default()
            },
            ..Default::default()
        }
    }

    #[test]
    fn decisions() {
        let hour = SignedDuration::from_hours(1);
        let mut shoot = event("core.gardener.cloud/v1beta1", "Shoot");
        shoot.last_timestamp = Some(Time(t(-100_000)));
        assert_eq!(decide(&shoot, t(0), hour), Decision::Keep);
        let other_group = event("example.com/v1", "Shoot");
        assert_eq!(decide(&other_group, t(0), hour), Decision::Delete);
        let mut project = event("core.gardener.cloud/v1beta1", "Project");
        assert_eq!(decide(&project, t(0), hour), Decision::Delete);
        project.last_timestamp = Some(Time(t(-600)));
        assert_eq!(
            decide(&project, t(0), hour),
            Decision::Wait(SignedDuration::from_secs(3000))
        );
        project.last_timestamp = Some(Time(t(-3600)));
        assert_eq!(decide(&project, t(0), hour), Decision::Delete);
        // The series wins over the older timestamps.
        project.series = Some(EventSeries {
            count: Some(2),
            last_observed_time: Some(MicroTime(t(-60))),
        });
        assert_eq!(
            decide(&project, t(0), hour),
            Decision::Wait(SignedDuration::from_secs(3540))
        );
        // A zero timestamp counts as unset.
        let mut zero = event("v1", "Pod");
        zero.event_time = Some(MicroTime(Timestamp::UNIX_EPOCH));
        zero.last_timestamp = Some(Time(t(-10)));
        assert_eq!(
            decide(&zero, t(0), hour),
            Decision::Wait(SignedDuration::from_secs(3590))
        );
    }
}

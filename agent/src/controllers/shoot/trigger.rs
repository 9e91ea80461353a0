//! Which Shoot watch events start the Shoot controller: a Shoot seen for the first time, a new
//! generation (gardenlet's GenerationChangedPredicate), the start of its deletion (which bumps the
//! generation on kube-apiserver, and is noticed here too where a garden does not), and two events
//! gardener-apiserver turns into a new generation while a CRD-served garden does not: an
//! operation request appearing ([`decide::operation_request`]) and a shoot entering the hand-over
//! of a migration ([`migrate::hand_over`], the migrate flow's last status write). Leaving either
//! (the agent removes a request when the operation starts; the destination's restore ends the
//! hand-over) is not a trigger: it would only run the flow once more right after it started.

use std::collections::HashMap;

use futures::{Stream, StreamExt, future};
use kube::runtime::watcher;
use seedlet_api::core::Shoot;
use seedlet_runtime::triggers::{ObjectId, id_of};

use super::{decide, migrate};

/// What was last seen of one Shoot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Sighting {
    generation: Option<i64>,
    deleting: bool,
    requested: bool,
    handed_over: bool,
}

/// What was last seen of each Shoot, by the hash of its namespace and name ([`ObjectId`]: two
/// strings per Shoot were most of the map).
#[derive(Debug, Default)]
pub struct Seen {
    shoots: HashMap<ObjectId, Sighting>,
}

impl Seen {
    /// Records `shoot` and says whether it starts a reconcile.
    pub fn passes(&mut self, shoot: &Shoot) -> bool {
        let key = id_of(shoot);
        let now = Sighting {
            generation: shoot.metadata.generation,
            deleting: shoot.metadata.deletion_timestamp.is_some(),
            requested: decide::operation_request(shoot).is_some(),
            handed_over: migrate::hand_over(shoot).is_some(),
        };
        match self.shoots.insert(key, now) {
            None => true,
            Some(before) => {
                before.generation != now.generation
                    || before.deleting != now.deleting
                    || (now.requested && !before.requested)
                    || (now.handed_over && !before.handed_over)
            }
        }
    }

    /// Forgets a deleted Shoot.
    pub fn forget(&mut self, shoot: &Shoot) {
        self.shoots.remove(&id_of(shoot));
    }

    /// Forgets everything (a relist starts: every listed Shoot passes again, like a restart).
    pub fn clear(&mut self) {
        self.shoots.clear();
    }
}

/// The Shoots of `events` that start a reconcile (errors pass through for the controller).
pub fn triggers<S>(events: S) -> impl Stream<Item = Result<Shoot, watcher::Error>> + Send
where
    S: Stream<Item = Result<watcher::Event<Shoot>, watcher::Error>> + Send,
{
    let mut seen = Seen::default();
    events.filter_map(move |event| {
        let passed = match event {
            Err(error) => Some(Err(error)),
            Ok(watcher::Event::Init) => {
                seen.clear();
                None
            }
            Ok(watcher::Event::InitDone) => None,
            Ok(watcher::Event::Delete(shoot)) => {
                seen.forget(&shoot);
                None
            }
            Ok(watcher::Event::Apply(shoot) | watcher::Event::InitApply(shoot)) => {
                seen.passes(&shoot).then_some(Ok(shoot))
            }
        };
        future::ready(passed)
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn shoot(generation: i64, annotation: Option<&str>, state: &str) -> Shoot {
        serde_json::from_value(json!({
            "metadata": {"name": "s", "namespace": "garden-dev", "generation": generation,
                "annotations": annotation.map(|a| json!({"gardener.cloud/operation": a}))},
            "spec": {"provider": {"type": "local"}, "region": "r"},
            "status": {"lastOperation": {"type": "Create", "state": state, "progress": 100,
                "description": "", "lastUpdateTime": "2025-01-06T11:00:00Z"}},
        }))
        .expect("shoot")
    }

    fn deleting(mut shoot: Shoot) -> Shoot {
        shoot.metadata.deletion_timestamp =
            Some(k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(
                "2025-01-06T12:00:00Z".parse().expect("time"),
            ));
        shoot
    }

    #[test]
    fn new_generations_and_appearing_requests_pass_and_a_removed_request_does_not() {
        let mut seen = Seen::default();
        let steps = [
            (shoot(1, None, "Failed"), true, "first sighting"),
            (shoot(1, None, "Failed"), false, "a status write"),
            (shoot(1, Some("maintain"), "Failed"), false, "not a request"),
            (
                shoot(1, Some("retry"), "Failed"),
                true,
                "retry of a failed shoot",
            ),
            (
                shoot(1, Some("retry"), "Failed"),
                false,
                "the same request again",
            ),
            (shoot(1, None, "Processing"), false, "the agent removed it"),
            (shoot(2, None, "Processing"), true, "a new generation"),
            (
                shoot(2, Some("reconcile"), "Succeeded"),
                true,
                "reconcile request",
            ),
            (
                deleting(shoot(2, None, "Succeeded")),
                true,
                "deletion without a generation bump",
            ),
            (
                deleting(shoot(2, None, "Processing")),
                false,
                "a status write while deleting",
            ),
        ];
        for (shoot, passes, what) in steps {
            assert_eq!(seen.passes(&shoot), passes, "{what}");
        }
        seen.forget(&shoot(2, None, "Succeeded"));
        assert!(
            seen.passes(&shoot(2, None, "Succeeded")),
            "seen anew after deletion"
        );
        seen.clear();
        assert!(seen.passes(&shoot(2, None, "Succeeded")), "relisted");
    }
}

//! A second agent registering the same Seed from another seed cluster: how it is recognised, and
//! how long this agent waits before it looks again.
//!
//! `status.gardener.id` changes with every process (host name plus random suffix) and the seed
//! Lease is held by the seed name, so neither tells "another agent" from "my own previous
//! process" or "the other replica after a leader hand-over". `status.clusterIdentity` does: it is
//! the seed cluster's `kube-system/cluster-identity` (the `kube-system` UID when the agent created
//! it), written once by the first agent and immutable in Gardener. An agent whose own seed
//! cluster has another identity runs in another cluster: it must not overwrite the Seed's status
//! (two such agents flipped `status.gardener` ~860 times a second and neither logged a line). It
//! reports the clash — one ERROR per distinct clash, a Warning Event on the Seed naming both
//! agents — and looks again after a doubling delay (1 s up to 5 min), so the agent that owns the
//! Seed keeps it undisturbed.

use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use seedlet_api::core::Seed;

use seedlet_runtime::repeated::{Failure, RepeatedFailures};

/// Reason of the Warning Event and of the error.
pub const REASON: &str = "SeedClaimedByAnotherAgent";

/// First delay after a clash; it doubles with every clash in a row.
pub const FIRST_DELAY: Duration = Duration::from_secs(1);

/// Upper bound of the delay: a clash that persists is looked at every five minutes.
pub const MAX_DELAY: Duration = Duration::from_secs(300);

/// The two agents of a clash.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Clash {
    /// `status.gardener.id` the Seed holds (the other agent's, or empty when unknown).
    pub theirs: String,
    /// `status.clusterIdentity` the Seed holds: the other agent's seed cluster.
    pub their_cluster: String,
    /// This agent's `status.gardener.id`.
    pub ours: String,
    /// The identity of the seed cluster this agent runs in.
    pub our_cluster: String,
}

impl std::fmt::Display for Clash {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "the seed is registered by agent {:?} of seed cluster {:?}; this agent {:?} runs in \
             seed cluster {:?} and leaves the Seed alone (stop one of them, or give it another \
             seed name)",
            self.theirs, self.their_cluster, self.ours, self.our_cluster
        )
    }
}

/// The clash when `seed` belongs to an agent of another seed cluster than `our_cluster`; `None`
/// when the Seed has no cluster identity yet or the same one (this agent, an earlier process of
/// it, or another replica of it).
pub fn clash(seed: &Seed, our_id: &str, our_cluster: &str) -> Option<Clash> {
    let status = seed.status.as_ref()?;
    let their_cluster = status
        .cluster_identity
        .as_deref()
        .filter(|identity| !identity.is_empty())?;
    if their_cluster == our_cluster {
        return None;
    }
    Some(Clash {
        theirs: status
            .gardener
            .as_ref()
            .map(|gardener| gardener.id.clone())
            .unwrap_or_default(),
        their_cluster: their_cluster.to_owned(),
        ours: our_id.to_owned(),
        our_cluster: our_cluster.to_owned(),
    })
}

/// The delay after the `clashes`-th clash in a row (1 = the first): 1 s, 2 s, 4 s, … 5 min.
pub fn delay(clashes: u32) -> Duration {
    seedlet_runtime::retry::doubled(FIRST_DELAY, clashes, MAX_DELAY)
}

/// The clashes of one controller since the Seed was last reconciled normally.
#[derive(Debug, Default)]
pub struct Clashes {
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    in_a_row: u32,
    logged: RepeatedFailures,
}

impl Clashes {
    /// Records a clash described by `message`; returns whether it is news (log it loudly) and
    /// the delay before the next look.
    pub fn met(&self, message: &str) -> (Failure, Duration) {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        state.in_a_row = state.in_a_row.saturating_add(1);
        let news = state.logged.failed(message);
        (news, delay(state.in_a_row))
    }

    /// Records a normal reconcile; returns how many clashes came before it, if any.
    pub fn over(&self) -> Option<u32> {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        state.in_a_row = 0;
        state.logged.succeeded()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use seedlet_api::core::{GardenerInfo, SeedStatus};

    fn seed(cluster: Option<&str>, id: &str) -> Seed {
        Seed {
            status: Some(SeedStatus {
                cluster_identity: cluster.map(str::to_owned),
                gardener: Some(GardenerInfo {
                    id: id.into(),
                    name: "seedlet-agent".into(),
                    version: "0".into(),
                }),
                ..SeedStatus::default()
            }),
            ..Seed::default()
        }
    }

    #[test]
    fn clash_is_none_for_our_cluster_whatever_process_wrote_the_status() {
        // An earlier process of this agent, or the other replica after a leader hand-over.
        assert_eq!(
            clash(&seed(Some("c1"), "agent-old-x1"), "agent-new-y2", "c1"),
            None
        );
        assert_eq!(
            clash(&seed(None, "someone"), "me", "c1"),
            None,
            "not registered yet"
        );
        assert_eq!(clash(&seed(Some(""), "someone"), "me", "c1"), None);
        assert_eq!(clash(&Seed::default(), "me", "c1"), None);
    }

    #[test]
    fn clash_names_both_agents_and_clusters_when_the_seed_cluster_differs() {
        let found = clash(&seed(Some("c1"), "agent-a"), "agent-b", "c2").unwrap();
        assert_eq!(
            found,
            Clash {
                theirs: "agent-a".into(),
                their_cluster: "c1".into(),
                ours: "agent-b".into(),
                our_cluster: "c2".into(),
            }
        );
        let text = found.to_string();
        for needle in ["agent-a", "agent-b", "\"c1\"", "\"c2\""] {
            assert!(text.contains(needle), "{needle} missing in {text}");
        }
    }

    #[test]
    fn delay_doubles_from_one_second_up_to_five_minutes() {
        let table = [
            (0, 1),
            (1, 1),
            (2, 2),
            (3, 4),
            (4, 8),
            (5, 16),
            (8, 128),
            (9, 256),
            (10, 300),
            (40, 300),
            (u32::MAX, 300),
        ];
        for (clashes, seconds) in table {
            assert_eq!(
                delay(clashes),
                Duration::from_secs(seconds),
                "clash {clashes}"
            );
        }
    }

    #[test]
    fn clashes_are_news_once_and_the_streak_ends_with_a_normal_reconcile() {
        let clashes = Clashes::default();
        assert_eq!(clashes.met("x"), (Failure::New, Duration::from_secs(1)));
        assert_eq!(
            clashes.met("x"),
            (Failure::Repeated, Duration::from_secs(2))
        );
        assert_eq!(
            clashes.met("x"),
            (Failure::Repeated, Duration::from_secs(4))
        );
        assert_eq!(clashes.over(), Some(3));
        assert_eq!(clashes.met("x"), (Failure::New, Duration::from_secs(1)));
    }
}

//! Whether this agent may speak for its Seed: the Seed controller finds out (another agent of
//! another seed cluster registered the same Seed, see `controllers::seed::another_agent`) and
//! the heartbeat obeys. An agent that lost the Seed to another one must not renew the Seed's
//! Lease either: the garden would take the other agent's liveness for its own, or this agent's
//! for the other's when that one dies.

use std::sync::atomic::{AtomicBool, Ordering};

/// Shared between the Seed controller (writer) and the heartbeat (reader) for one leadership term.
#[derive(Debug, Default)]
pub struct SeedClaim {
    claimed_by_another: AtomicBool,
}

impl SeedClaim {
    /// Records whether another agent holds the Seed.
    pub fn set_claimed_by_another(&self, claimed: bool) {
        self.claimed_by_another.store(claimed, Ordering::Relaxed);
    }

    /// Whether another agent holds the Seed, as the Seed controller last saw it.
    pub fn claimed_by_another(&self) -> bool {
        self.claimed_by_another.load(Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_claim_holds_what_the_seed_controller_last_saw() {
        let claim = SeedClaim::default();
        assert!(!claim.claimed_by_another(), "nobody else until seen");
        for seen in [true, true, false, true, false] {
            claim.set_claimed_by_another(seen);
            assert_eq!(claim.claimed_by_another(), seen);
        }
    }
}

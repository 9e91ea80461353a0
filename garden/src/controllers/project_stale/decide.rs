//! The stale decision of spec §3.4, from timestamps and facts gathered by the reconciler: `now`
//! is an argument, days are 24h, all comparisons strict as upstream's (so `creation + 30d ==
//! now` is already on the stale path).

use jiff::{SignedDuration, Timestamp};

/// `controllers.project` settings in time units.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Settings {
    /// `minimumLifetimeDays`.
    pub minimum_lifetime: SignedDuration,
    /// `staleGracePeriodDays`.
    pub grace_period: SignedDuration,
    /// `staleExpirationTimeDays`.
    pub expiration: SignedDuration,
}

/// `days` × 24h.
pub fn days(days: u32) -> SignedDuration {
    SignedDuration::from_hours(i64::from(days) * 24)
}

/// What the project looks like to the stale check.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Facts {
    /// `metadata.creationTimestamp`.
    pub created: Timestamp,
    /// `status.lastActivityTimestamp`.
    pub last_activity: Option<Timestamp>,
    /// `status.staleSinceTimestamp`.
    pub stale_since: Option<Timestamp>,
    /// `status.staleAutoDeleteTimestamp`.
    pub auto_delete: Option<Timestamp>,
    /// The namespace annotation `project.gardener.cloud/skip-stale-check` is `true`.
    pub skip: bool,
    /// Something in the namespace is in use (shoots, backup entries, used credentials/quotas).
    pub in_use: bool,
}

/// The outcome.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    /// Not stale: both stale timestamps removed.
    NotStale,
    /// Stale: the timestamps to write, and whether the auto-delete time has come.
    Stale {
        /// `staleSinceTimestamp`.
        since: Timestamp,
        /// `staleAutoDeleteTimestamp`.
        auto_delete: Option<Timestamp>,
        /// Delete the project now.
        delete: bool,
    },
}

fn after(t: Timestamp, d: SignedDuration) -> Timestamp {
    t.saturating_add(d).unwrap_or(t)
}

/// Steps 2–6 of spec §3.4.
pub fn decide(now: Timestamp, facts: &Facts, settings: &Settings) -> Decision {
    if facts.skip
        || after(facts.created, settings.minimum_lifetime) > now
        || facts
            .last_activity
            .is_some_and(|t| after(t, settings.minimum_lifetime) > now)
        || facts.in_use
    {
        return Decision::NotStale;
    }
    let since = facts.stale_since.unwrap_or(now);
    let auto_delete = if after(since, settings.grace_period) > now {
        None
    } else {
        let candidate = after(since, settings.expiration);
        match facts.auto_delete {
            Some(current) if current >= candidate => Some(current),
            _ => Some(candidate),
        }
    };
    Decision::Stale {
        since,
        auto_delete,
        delete: auto_delete.is_some_and(|t| now >= t),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(day: i64) -> Timestamp {
        Timestamp::from_second(1_000_000_000 + day * 86_400).expect("timestamp")
    }

    fn settings(expiration: u32, grace: u32) -> Settings {
        Settings {
            minimum_lifetime: days(30),
            grace_period: days(grace),
            expiration: days(expiration),
        }
    }

    fn facts(created: i64) -> Facts {
        Facts {
            created: t(created),
            last_activity: None,
            stale_since: None,
            auto_delete: None,
            skip: false,
            in_use: false,
        }
    }

    fn stale(since: i64, auto_delete: Option<i64>, delete: bool) -> Decision {
        Decision::Stale {
            since: t(since),
            auto_delete: auto_delete.map(t),
            delete,
        }
    }

    #[test]
    fn not_stale_cases() {
        let young = facts(-10);
        assert_eq!(decide(t(0), &young, &settings(90, 14)), Decision::NotStale);
        let active = Facts {
            last_activity: Some(t(-29)),
            ..facts(-200)
        };
        assert_eq!(decide(t(0), &active, &settings(90, 14)), Decision::NotStale);
        let skipped = Facts {
            skip: true,
            ..facts(-200)
        };
        assert_eq!(
            decide(t(0), &skipped, &settings(90, 14)),
            Decision::NotStale
        );
        let used = Facts {
            in_use: true,
            ..facts(-200)
        };
        assert_eq!(decide(t(0), &used, &settings(90, 14)), Decision::NotStale);
    }

    /// The example of spec §3.4 (30/14/90), step by step.
    #[test]
    fn worked_example() {
        let mut f = Facts {
            last_activity: Some(t(-40)),
            ..facts(-200)
        };
        let s = settings(90, 14);
        assert_eq!(decide(t(0), &f, &s), stale(0, None, false));
        f.stale_since = Some(t(0));
        assert_eq!(decide(t(15), &f, &s), stale(0, Some(90), false));
        f.auto_delete = Some(t(90));
        // Expiration lowered: never moved earlier; raised: moved later.
        assert_eq!(
            decide(t(16), &f, &settings(60, 14)),
            stale(0, Some(90), false)
        );
        assert_eq!(
            decide(t(16), &f, &settings(120, 14)),
            stale(0, Some(120), false)
        );
        // Grace raised past now: auto-delete removed.
        assert_eq!(decide(t(20), &f, &settings(90, 30)), stale(0, None, false));
        // At the instant: delete.
        assert_eq!(decide(t(90), &f, &s), stale(0, Some(90), true));
    }

    #[test]
    fn boundaries_of_spec_13_11() {
        // creation + 30d == now → stale path.
        assert_eq!(
            decide(t(30), &facts(0), &settings(90, 14)),
            stale(30, None, false)
        );
        // staleSince + 14d == now → auto-delete set.
        let f = Facts {
            stale_since: Some(t(100)),
            ..facts(0)
        };
        assert_eq!(
            decide(t(114), &f, &settings(90, 14)),
            stale(100, Some(190), false)
        );
    }
}

//! Pure expiry decisions: the smallest cluster lifetime of a Shoot's quotas, the expiration
//! annotation it implies, and whether the Shoot has expired at `now`.

use jiff::{SignedDuration, Timestamp};
use seedlet_api::core::Quota;

/// What to do with a Shoot's expiration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Expiry {
    /// The annotation to write (`None`: leave it; `Some(None)`: remove it).
    pub annotation: Option<Option<String>>,
    /// Whether the Shoot has expired and is to be deleted.
    pub expired: bool,
}

/// The expiration timestamp annotation does not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid expiration timestamp {value:?}: {reason}")]
pub struct InvalidTimestamp {
    /// The annotation's value.
    pub value: String,
    /// The parser's reason.
    pub reason: String,
}

/// The smallest `spec.clusterLifetimeDays` of `quotas` (unset ones ignored).
pub fn lifetime_days(quotas: &[Quota]) -> Option<i32> {
    quotas
        .iter()
        .filter_map(|quota| quota.spec.cluster_lifetime_days)
        .min()
}

/// The decision for a Shoot created at `created` whose annotation is `annotation`.
///
/// # Errors
/// When an existing annotation is not an RFC 3339 timestamp.
pub fn decide(
    annotation: Option<&str>,
    lifetime_days: Option<i32>,
    created: Timestamp,
    now: Timestamp,
) -> Result<Expiry, InvalidTimestamp> {
    let Some(days) = lifetime_days else {
        return Ok(Expiry {
            annotation: annotation.map(|_| None),
            expired: false,
        });
    };
    let (value, write) = match annotation {
        Some(value) => (value.to_owned(), None),
        None => {
            let lifetime = SignedDuration::from_hours(i64::from(days) * 24);
            let expires = created.saturating_add(lifetime).unwrap_or(Timestamp::MAX);
            let value = expires.strftime("%Y-%m-%dT%H:%M:%SZ").to_string();
            (value.clone(), Some(Some(value)))
        }
    };
    let expires: Timestamp = value
        .parse()
        .map_err(|error: jiff::Error| InvalidTimestamp {
            value: value.clone(),
            reason: error.to_string(),
        })?;
    Ok(Expiry {
        annotation: write,
        expired: now > expires,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn quota(days: Option<i32>) -> Quota {
        let mut quota = Quota::new("q", seedlet_api::core::QuotaSpec::default());
        quota.spec.cluster_lifetime_days = days;
        quota
    }

    fn at(value: &str) -> Timestamp {
        value.parse().expect("time")
    }

    #[test]
    fn lifetime_is_the_smallest_set_one() {
        assert_eq!(
            lifetime_days(&[quota(Some(14)), quota(None), quota(Some(7))]),
            Some(7)
        );
        assert_eq!(lifetime_days(&[quota(None)]), None);
        assert_eq!(lifetime_days(&[]), None);
    }

    #[test]
    fn expiry_follows_annotation_lifetime_and_clock() {
        let created = at("2025-01-01T10:00:00Z");
        // (annotation, lifetime, now, expected annotation write, expired)
        type Case<'a> = (
            Option<&'a str>,
            Option<i32>,
            &'a str,
            Option<Option<&'a str>>,
            bool,
        );
        let table: [Case; 6] = [
            (
                None,
                Some(7),
                "2025-01-02T00:00:00Z",
                Some(Some("2025-01-08T10:00:00Z")),
                false,
            ),
            (
                None,
                Some(7),
                "2025-01-08T10:00:01Z",
                Some(Some("2025-01-08T10:00:00Z")),
                true,
            ),
            (
                Some("2025-01-08T10:00:00Z"),
                Some(7),
                "2025-01-08T10:00:00Z",
                None,
                false,
            ),
            // A raised annotation is respected.
            (
                Some("2025-01-12T00:00:00Z"),
                Some(7),
                "2025-01-10T00:00:00Z",
                None,
                false,
            ),
            (
                Some("2025-01-08T10:00:00Z"),
                None,
                "2025-02-01T00:00:00Z",
                Some(None),
                false,
            ),
            (None, None, "2025-02-01T00:00:00Z", None, false),
        ];
        for (annotation, days, now, write, expired) in table {
            let decided = decide(annotation, days, created, at(now)).expect("valid");
            let expected = Expiry {
                annotation: write.map(|w| w.map(str::to_owned)),
                expired,
            };
            assert_eq!(decided, expected, "{annotation:?} {days:?} {now}");
        }
    }

    #[test]
    fn unparsable_annotation_is_an_error_naming_the_value() {
        let error = decide(
            Some("next week"),
            Some(7),
            at("2025-01-01T00:00:00Z"),
            at("2025-01-02T00:00:00Z"),
        )
        .expect_err("invalid");
        assert!(
            error
                .to_string()
                .starts_with("invalid expiration timestamp \"next week\"")
        );
    }
}

//! Pure version selection for maintenance (spec §6.4): CloudProfile versions with their
//! classification at `now`, the Kubernetes version and the machine image version a Shoot is
//! moved to, and why. Versions are compared as semantic versions, read leniently like
//! Masterminds/semver (a leading `v` and missing minor or patch parts are accepted).

use std::cmp::Ordering;
use std::fmt;

use jiff::Timestamp;
use serde_json::Value;

/// A parsed version.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Version {
    /// Major part.
    pub major: u64,
    /// Minor part.
    pub minor: u64,
    /// Patch part.
    pub patch: u64,
    /// Pre-release (sorts below the release).
    pub pre: Option<String>,
}

impl Version {
    /// Parses `1.30.1`, `v1.30`, `1443.3.0-dev` (build metadata ignored).
    pub fn parse(text: &str) -> Option<Version> {
        let text = text.strip_prefix('v').unwrap_or(text);
        let text = text.split('+').next().unwrap_or(text);
        let (core, pre) = match text.split_once('-') {
            Some((core, pre)) if !pre.is_empty() => (core, Some(pre.to_owned())),
            Some(_) => return None,
            None => (text, None),
        };
        let mut parts = core.split('.');
        let mut number = |required: bool| -> Option<u64> {
            match parts.next() {
                Some(part) if !part.is_empty() && part.bytes().all(|b| b.is_ascii_digit()) => {
                    part.parse().ok()
                }
                None if !required => Some(0),
                _ => None,
            }
        };
        let version = Version {
            major: number(true)?,
            minor: number(false)?,
            patch: number(false)?,
            pre,
        };
        parts.next().is_none().then_some(version)
    }
}

impl Ord for Version {
    fn cmp(&self, other: &Self) -> Ordering {
        (self.major, self.minor, self.patch)
            .cmp(&(other.major, other.minor, other.patch))
            .then_with(|| match (&self.pre, &other.pre) {
                (None, None) => Ordering::Equal,
                (None, Some(_)) => Ordering::Greater,
                (Some(_), None) => Ordering::Less,
                (Some(a), Some(b)) => a.cmp(b),
            })
    }
}

impl PartialOrd for Version {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// Classification of a profile version at some instant.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Classification {
    /// Not yet available (a lifecycle whose first stage lies ahead).
    Unavailable,
    /// `preview`.
    Preview,
    /// `supported` (or unset).
    Supported,
    /// `deprecated`.
    Deprecated,
    /// `expired`, or past its `expirationDate`.
    Expired,
}

/// A CloudProfile version as maintenance sees it at `now`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProfileVersion {
    /// The version string.
    pub text: String,
    /// Parsed, if it parses.
    pub version: Option<Version>,
    /// Classification at `now`.
    pub classification: Classification,
}

impl ProfileVersion {
    /// A version entry (`{version, classification, expirationDate, lifecycle}`) at `now`.
    pub fn from_json(entry: &Value, now: Timestamp) -> Option<ProfileVersion> {
        let text = entry.get("version")?.as_str()?.to_owned();
        let classification = classification_at(entry, now);
        Some(ProfileVersion {
            version: Version::parse(&text),
            text,
            classification,
        })
    }

    fn expired(&self) -> bool {
        self.classification == Classification::Expired
    }
}

/// The classification of a version entry at `now`: from `lifecycle` (the last stage that has
/// started; none started = unavailable) or `classification`, overridden by a passed
/// `expirationDate`.
fn classification_at(entry: &Value, now: Timestamp) -> Classification {
    let named = |name: Option<&str>| match name {
        Some("preview") => Classification::Preview,
        Some("deprecated") => Classification::Deprecated,
        Some("expired") => Classification::Expired,
        Some("unavailable") => Classification::Unavailable,
        _ => Classification::Supported,
    };
    let mut classification = match entry.get("lifecycle").and_then(Value::as_array) {
        Some(stages) if !stages.is_empty() => {
            let mut started = stages.iter().filter(|stage| {
                stage
                    .get("startTime")
                    .and_then(Value::as_str)
                    .and_then(|t| t.parse::<Timestamp>().ok())
                    .is_none_or(|start| start <= now)
            });
            started
                .next_back()
                .map_or(Classification::Unavailable, |stage| {
                    named(stage.get("classification").and_then(Value::as_str))
                })
        }
        _ => named(entry.get("classification").and_then(Value::as_str)),
    };
    let expired = entry
        .get("expirationDate")
        .and_then(Value::as_str)
        .and_then(|t| t.parse::<Timestamp>().ok())
        .is_some_and(|date| date <= now);
    if expired {
        classification = Classification::Expired;
    }
    classification
}

/// Why a version is changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Why {
    /// The current version is not in the profile (forced).
    Missing,
    /// The current version expired (forced).
    Expired,
    /// Automatic updates are configured.
    Auto,
}

/// A version change chosen by maintenance.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// The version to move to.
    pub version: String,
    /// Why.
    pub why: Why,
}

/// The forced update found no version.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "cannot perform forceful update of expired version \"{0}\". No suitable version found in CloudProfile - this is most likely a misconfiguration of the CloudProfile"
)]
pub struct NoSuitableVersion(pub String);

/// Why the current version must or may change, or `None` when it stays.
fn why(current: &str, versions: &[ProfileVersion], auto: bool) -> Option<Why> {
    match versions.iter().find(|v| v.text == current) {
        None => Some(Why::Missing),
        Some(found) if found.expired() => Some(Why::Expired),
        Some(_) if auto => Some(Why::Auto),
        Some(_) => None,
    }
}

/// Versions that may be chosen: parseable, not preview, not unavailable (upstream does not
/// exclude `unavailable`, which is a quirk: such a version cannot be used yet).
fn qualifying(versions: &[ProfileVersion]) -> impl Iterator<Item = (&ProfileVersion, &Version)> {
    versions.iter().filter_map(|v| {
        let parsed = v.version.as_ref()?;
        matches!(
            v.classification,
            Classification::Supported | Classification::Deprecated | Classification::Expired
        )
        .then_some((v, parsed))
    })
}

/// The highest qualifying, non-expired version above `current` accepted by `matches`,
/// preferring non-deprecated ones.
fn highest_update(
    current: &Version,
    versions: &[ProfileVersion],
    matches: impl Fn(&Version) -> bool,
) -> Option<String> {
    let candidates: Vec<(&ProfileVersion, &Version)> = qualifying(versions)
        .filter(|(v, parsed)| !v.expired() && *parsed > current && matches(parsed))
        .collect();
    let best = |deprecated: bool| {
        candidates
            .iter()
            .filter(|(v, _)| (v.classification == Classification::Deprecated) == deprecated)
            .max_by(|a, b| a.1.cmp(b.1))
            .map(|(v, _)| v.text.clone())
    };
    best(false).or_else(|| best(true))
}

/// The Kubernetes version maintenance moves `current` to, given the profile's versions at
/// `now` and whether automatic updates are on; `Ok(None)` keeps it.
///
/// # Errors
/// A forced update (missing or expired version) without any suitable version.
pub fn kubernetes_target(
    current: &str,
    versions: &[ProfileVersion],
    auto: bool,
) -> Result<Option<Target>, NoSuitableVersion> {
    let Some(why) = why(current, versions, auto) else {
        return Ok(None);
    };
    let Some(parsed) = Version::parse(current) else {
        return Err(NoSuitableVersion(current.to_owned()));
    };
    let latest_patch = highest_update(&parsed, versions, |v| {
        v.major == parsed.major && v.minor == parsed.minor
    });
    if let Some(version) = latest_patch {
        return Ok(Some(Target { version, why }));
    }
    if why == Why::Auto {
        return Ok(None);
    }
    // Forced: the consecutive minor, highest non-expired, else highest expired.
    let next_minor: Vec<(&ProfileVersion, &Version)> = qualifying(versions)
        .filter(|(_, v)| v.major == parsed.major && v.minor == parsed.minor + 1)
        .collect();
    let pick = |expired: bool| {
        next_minor
            .iter()
            .filter(|(v, _)| v.expired() == expired)
            .max_by(|a, b| a.1.cmp(b.1))
            .map(|(v, _)| v.text.clone())
    };
    pick(false)
        .or_else(|| pick(true))
        .map(|version| Some(Target { version, why }))
        .ok_or_else(|| NoSuitableVersion(current.to_owned()))
}

/// `updateStrategy` of a machine image.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Strategy {
    /// Only patch updates automatically; forced to the next higher minor.
    Patch,
    /// Minor updates automatically; forced to the next higher major.
    Minor,
    /// Any update; no forced update possible.
    Major,
}

impl Strategy {
    /// `patch`, `minor`, `major` (default).
    pub fn parse(value: Option<&str>) -> Strategy {
        match value {
            Some("patch") => Strategy::Patch,
            Some("minor") => Strategy::Minor,
            _ => Strategy::Major,
        }
    }

    /// The API value.
    pub fn as_str(self) -> &'static str {
        match self {
            Strategy::Patch => "patch",
            Strategy::Minor => "minor",
            Strategy::Major => "major",
        }
    }
}

/// The machine image version maintenance moves `current` to (`candidates` already filtered for
/// the pool), or `Ok(None)` to keep it.
///
/// # Errors
/// A forced update without a suitable version; with strategy `major`, the end-of-life message.
pub fn machine_image_target(
    image: &str,
    current: &str,
    candidates: &[ProfileVersion],
    strategy: Strategy,
    auto: bool,
) -> Result<Option<Target>, String> {
    let Some(why) = why(current, candidates, auto) else {
        return Ok(None);
    };
    let Some(parsed) = Version::parse(current) else {
        return Err(NoSuitableVersion(current.to_owned()).to_string());
    };
    let same_minor = |v: &Version| v.major == parsed.major && v.minor == parsed.minor;
    let auto_target = match strategy {
        Strategy::Patch => highest_update(&parsed, candidates, same_minor),
        Strategy::Minor => highest_update(&parsed, candidates, same_minor)
            .or_else(|| highest_update(&parsed, candidates, |v| v.major == parsed.major)),
        Strategy::Major => highest_update(&parsed, candidates, same_minor)
            .or_else(|| highest_update(&parsed, candidates, |_| true)),
    };
    if let Some(version) = auto_target {
        return Ok(Some(Target { version, why }));
    }
    if why == Why::Auto {
        return Ok(None);
    }
    let forced = match strategy {
        Strategy::Patch => next_higher(&parsed, candidates, |v| (v.major, v.minor)),
        Strategy::Minor => next_higher(&parsed, candidates, |v| (v.major, 0)),
        Strategy::Major => {
            return Err(format!(
                "either the machine image \"{image}\" is reaching end of life and migration to another machine image is required or there is a misconfiguration in the CloudProfile. If it is the latter, make sure the machine image in the CloudProfile has at least one version that is not expired, not in preview and greater or equal to the current Shoot image version \"{current}\""
            ));
        }
    };
    forced
        .map(|version| Some(Target { version, why }))
        .ok_or_else(|| NoSuitableVersion(current.to_owned()).to_string())
}

/// The forced "next higher minor (major)": the highest non-expired version of the first group
/// above the current one that has one; when there is none, or it skipped the group right above
/// the current one, the highest version (expired allowed) of that next group.
fn next_higher(
    current: &Version,
    candidates: &[ProfileVersion],
    group: impl Fn(&Version) -> (u64, u64),
) -> Option<String> {
    let mut above: Vec<(&ProfileVersion, &Version)> = qualifying(candidates)
        .filter(|(_, v)| group(v) > group(current))
        .collect();
    above.sort_by(|a, b| a.1.cmp(b.1));
    let next = group(above.first()?.1);
    let highest_in = |wanted: (u64, u64), allow_expired: bool| {
        above
            .iter()
            .filter(|(v, parsed)| group(parsed) == wanted && (allow_expired || !v.expired()))
            .max_by(|a, b| a.1.cmp(b.1))
            .map(|(v, _)| v.text.clone())
    };
    let first_with_valid = above
        .iter()
        .find(|(v, _)| !v.expired())
        .map(|(_, parsed)| group(parsed));
    match first_with_valid {
        Some(found) if found == next => highest_in(found, false),
        _ => highest_in(next, true),
    }
}

impl fmt::Display for Why {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Why::Missing => "missing",
            Why::Expired => "expired",
            Why::Auto => "auto",
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at() -> Timestamp {
        "2025-06-01T00:00:00Z".parse().expect("time")
    }

    fn versions(entries: &[(&str, &str)]) -> Vec<ProfileVersion> {
        entries
            .iter()
            .map(|(version, classification)| {
                ProfileVersion::from_json(
                    &serde_json::json!({"version": version, "classification": classification}),
                    at(),
                )
                .expect("entry")
            })
            .collect()
    }

    fn kubernetes() -> Vec<ProfileVersion> {
        versions(&[
            ("1.30.1", "supported"),
            ("1.30.5", "supported"),
            ("1.30.6", "preview"),
            ("1.31.1", "supported"),
            ("1.31.2", "supported"),
            ("1.31.3", "deprecated"),
            ("1.32.0", "supported"),
        ])
    }

    #[test]
    fn kubernetes_versions_follow_the_spec_examples() {
        let mut profile = kubernetes();
        // (current, auto, expected target)
        type Case<'a> = (&'a str, bool, Option<(&'a str, Why)>);
        let table: [Case; 5] = [
            ("1.30.1", true, Some(("1.30.5", Why::Auto))),
            ("1.30.5", true, None),
            ("1.31.1", true, Some(("1.31.2", Why::Auto))),
            ("1.29.9", false, Some(("1.30.5", Why::Missing))),
            ("1.31.1", false, None),
        ];
        for (current, auto, expected) in table {
            let target = kubernetes_target(current, &profile, auto).expect("found");
            let expected = expected.map(|(version, why)| Target {
                version: version.to_owned(),
                why,
            });
            assert_eq!(target, expected, "{current} auto={auto}");
        }
        // 1.30.5 expired: forced to the highest of 1.31 (deprecated allowed).
        profile[1].classification = Classification::Expired;
        assert_eq!(
            kubernetes_target("1.30.5", &profile, false).expect("found"),
            Some(Target {
                version: "1.31.3".into(),
                why: Why::Expired
            })
        );
    }

    #[test]
    fn forced_kubernetes_update_without_a_next_minor_fails() {
        let profile = versions(&[("1.32.0", "expired")]);
        let error = kubernetes_target("1.32.0", &profile, false).expect_err("none");
        assert!(error.to_string().starts_with(
            "cannot perform forceful update of expired version \"1.32.0\". No suitable version"
        ));
        // The next minor only has expired versions: the highest of them.
        let profile = versions(&[
            ("1.31.0", "expired"),
            ("1.32.1", "expired"),
            ("1.32.2", "expired"),
        ]);
        assert_eq!(
            kubernetes_target("1.31.0", &profile, false)
                .expect("found")
                .map(|t| t.version),
            Some("1.32.2".into())
        );
    }

    #[test]
    fn machine_images_follow_their_strategy() {
        // (strategy, profile, current, auto, expected)
        type Case<'a> = (
            Strategy,
            &'a [(&'a str, &'a str)],
            &'a str,
            bool,
            Result<Option<&'a str>, ()>,
        );
        let table: [Case; 6] = [
            (
                Strategy::Minor,
                &[
                    ("1.0.0", "supported"),
                    ("1.1.0", "supported"),
                    ("1.2.0", "preview"),
                    ("2.0.0", "supported"),
                ],
                "1.0.0",
                true,
                Ok(Some("1.1.0")),
            ),
            (
                Strategy::Patch,
                &[
                    ("1.0.0", "expired"),
                    ("1.1.3", "supported"),
                    ("1.1.5", "supported"),
                    ("1.3.0", "supported"),
                ],
                "1.0.0",
                false,
                Ok(Some("1.1.5")),
            ),
            (
                Strategy::Patch,
                &[
                    ("1.0.0", "expired"),
                    ("1.1.0", "expired"),
                    ("1.2.0", "supported"),
                ],
                "1.0.0",
                false,
                Ok(Some("1.1.0")),
            ),
            (
                Strategy::Major,
                &[
                    ("1.0.0", "supported"),
                    ("1.1.0", "supported"),
                    ("2.0.0", "supported"),
                ],
                "1.0.0",
                true,
                Ok(Some("2.0.0")),
            ),
            (
                Strategy::Minor,
                &[
                    ("1.0.0", "expired"),
                    ("2.0.0", "supported"),
                    ("2.1.0", "supported"),
                ],
                "1.0.0",
                false,
                Ok(Some("2.1.0")),
            ),
            (
                Strategy::Major,
                &[("1.0.0", "expired")],
                "1.0.0",
                false,
                Err(()),
            ),
        ];
        for (strategy, profile, current, auto, expected) in table {
            let target =
                machine_image_target("gardenlinux", current, &versions(profile), strategy, auto);
            let got = target.map(|t| t.map(|t| t.version)).map_err(|_| ());
            assert_eq!(
                got,
                expected.map(|v| v.map(str::to_owned)),
                "{strategy:?} {profile:?} {current}"
            );
        }
        let error = machine_image_target(
            "gardenlinux",
            "1.0.0",
            &versions(&[("1.0.0", "expired")]),
            Strategy::Major,
            false,
        )
        .expect_err("end of life");
        assert!(
            error.starts_with("either the machine image \"gardenlinux\" is reaching end of life")
        );
    }

    #[test]
    fn classification_comes_from_lifecycle_and_expiration_date() {
        let entry = |value: serde_json::Value| {
            ProfileVersion::from_json(&value, at())
                .expect("entry")
                .classification
        };
        assert_eq!(
            entry(serde_json::json!({"version": "1.0.0"})),
            Classification::Supported
        );
        assert_eq!(
            entry(
                serde_json::json!({"version": "1.0.0", "expirationDate": "2025-05-31T00:00:00Z"})
            ),
            Classification::Expired
        );
        assert_eq!(
            entry(serde_json::json!({"version": "1.0.0", "lifecycle": [
                {"classification": "preview", "startTime": "2025-01-01T00:00:00Z"},
                {"classification": "supported", "startTime": "2025-05-01T00:00:00Z"},
                {"classification": "deprecated", "startTime": "2025-07-01T00:00:00Z"},
            ]})),
            Classification::Supported
        );
        assert_eq!(
            entry(serde_json::json!({"version": "1.0.0", "lifecycle": [
                {"classification": "supported", "startTime": "2025-09-01T00:00:00Z"},
            ]})),
            Classification::Unavailable
        );
    }

    #[test]
    fn versions_parse_leniently_and_order_pre_releases_first() {
        let v = |text: &str| Version::parse(text).expect(text);
        assert_eq!(v("v1.30"), v("1.30.0"));
        assert!(v("1.2.3-rc.1") < v("1.2.3"));
        assert!(v("1443.10.0") > v("1443.9.2"));
        for bad in ["", "1.x", "1.2.3.4", "1.2.3-"] {
            assert_eq!(Version::parse(bad), None, "{bad}");
        }
    }
}

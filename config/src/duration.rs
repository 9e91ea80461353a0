//! Durations written in Go syntax (`1m30s`, `24h`, `500ms`, `1.5h`), as Kubernetes component configs use them.

use std::fmt;
use std::str::FromStr;

use serde::de::{self, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

const NANOS_PER_MICRO: u128 = 1_000;
const NANOS_PER_MILLI: u128 = 1_000_000;
const NANOS_PER_SECOND: u128 = 1_000_000_000;
const NANOS_PER_MINUTE: u128 = 60 * NANOS_PER_SECOND;
const NANOS_PER_HOUR: u128 = 60 * NANOS_PER_MINUTE;

/// The largest duration Go can represent (`int64` nanoseconds); larger inputs are rejected like Go does.
const MAX_NANOS: u128 = i64::MAX as u128;

/// A non-negative duration that reads and writes Go's `time.Duration` string syntax.
///
/// Parsing follows Go's `time.ParseDuration` (units `ns`, `us`, `µs`, `μs`, `ms`, `s`, `m`, `h`,
/// fractions, several components, bare `0`), except that negative durations are rejected: no
/// setting of seedlet has a meaning for them. Formatting follows Go's `Duration.String`
/// (`1h30m0s`, `500ms`, `0s`), so a value survives a round trip through Gardener tooling.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Duration(std::time::Duration);

/// Why a duration string could not be parsed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DurationError {
    /// The input was empty.
    #[error("invalid duration \"\": empty")]
    Empty,
    /// The input did not follow the `[-+]?([0-9]*(\.[0-9]*)?[a-z]+)+` shape.
    #[error("invalid duration {input:?}: expected numbers with units such as \"1m30s\"")]
    Malformed {
        /// The rejected input.
        input: String,
    },
    /// A number was not followed by a unit.
    #[error("invalid duration {input:?}: missing unit (one of ns, us, ms, s, m, h)")]
    MissingUnit {
        /// The rejected input.
        input: String,
    },
    /// A unit is not one Go knows.
    #[error("invalid duration {input:?}: unknown unit {unit:?} (one of ns, us, ms, s, m, h)")]
    UnknownUnit {
        /// The rejected input.
        input: String,
        /// The unit that was not recognised.
        unit: String,
    },
    /// The duration was negative.
    #[error("invalid duration {input:?}: must not be negative")]
    Negative {
        /// The rejected input.
        input: String,
    },
    /// The duration does not fit Go's `int64` nanoseconds.
    #[error("invalid duration {input:?}: too large")]
    Overflow {
        /// The rejected input.
        input: String,
    },
}

impl Duration {
    /// The zero duration.
    pub const ZERO: Duration = Duration(std::time::Duration::ZERO);

    /// A duration of whole seconds.
    pub const fn from_secs(secs: u64) -> Self {
        Duration(std::time::Duration::from_secs(secs))
    }

    /// A duration of whole milliseconds.
    pub const fn from_millis(millis: u64) -> Self {
        Duration(std::time::Duration::from_millis(millis))
    }

    /// A duration of whole minutes.
    pub const fn from_mins(mins: u64) -> Self {
        Duration(std::time::Duration::from_secs(mins * 60))
    }

    /// A duration of whole hours.
    pub const fn from_hours(hours: u64) -> Self {
        Duration(std::time::Duration::from_secs(hours * 3600))
    }

    /// The standard-library duration.
    pub const fn as_std(self) -> std::time::Duration {
        self.0
    }

    /// Whether this is the zero duration.
    pub const fn is_zero(self) -> bool {
        self.0.is_zero()
    }

    /// Multiplies by `factor`, saturating at the largest representable duration.
    pub fn saturating_mul(self, factor: u32) -> Self {
        Duration(self.0.saturating_mul(factor))
    }
}

impl From<std::time::Duration> for Duration {
    fn from(value: std::time::Duration) -> Self {
        Duration(value)
    }
}

impl From<Duration> for std::time::Duration {
    fn from(value: Duration) -> Self {
        value.0
    }
}

impl FromStr for Duration {
    type Err = DurationError;

    fn from_str(input: &str) -> Result<Self, Self::Err> {
        parse_go_duration(input).map(|nanos| Duration(nanos_to_std(nanos)))
    }
}

impl fmt::Display for Duration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&format_go_duration(self.0.as_nanos()))
    }
}

impl Serialize for Duration {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Duration {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_str(DurationVisitor)
    }
}

struct DurationVisitor;

impl Visitor<'_> for DurationVisitor {
    type Value = Duration;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a Go duration string such as \"1m30s\"")
    }

    fn visit_str<E: de::Error>(self, value: &str) -> Result<Duration, E> {
        value.parse().map_err(E::custom)
    }
}

/// Parses Go duration syntax into nanoseconds (see [`Duration`] for the accepted language).
fn parse_go_duration(input: &str) -> Result<u128, DurationError> {
    let mut rest = input;
    let mut negative = false;
    if let Some(stripped) = rest.strip_prefix('-') {
        negative = true;
        rest = stripped;
    } else if let Some(stripped) = rest.strip_prefix('+') {
        rest = stripped;
    }
    if rest == "0" {
        return Ok(0);
    }
    if rest.is_empty() {
        return Err(if input.is_empty() {
            DurationError::Empty
        } else {
            DurationError::Malformed {
                input: input.to_owned(),
            }
        });
    }

    let malformed = || DurationError::Malformed {
        input: input.to_owned(),
    };
    let overflow = || DurationError::Overflow {
        input: input.to_owned(),
    };
    let mut total: u128 = 0;
    while !rest.is_empty() {
        let number_end = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        let (number, after) = rest.split_at(number_end);
        let (whole, fraction) = match number.split_once('.') {
            Some((whole, fraction)) if !fraction.contains('.') => (whole, fraction),
            Some(_) => return Err(malformed()),
            None => (number, ""),
        };
        if whole.is_empty() && fraction.is_empty() {
            return Err(malformed());
        }
        let unit_end = after
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(after.len());
        let (unit, next) = after.split_at(unit_end);
        if unit.is_empty() {
            return Err(DurationError::MissingUnit {
                input: input.to_owned(),
            });
        }
        let unit_nanos = unit_nanos(unit).ok_or_else(|| DurationError::UnknownUnit {
            input: input.to_owned(),
            unit: unit.to_owned(),
        })?;

        let whole_value: u128 = if whole.is_empty() {
            0
        } else {
            whole.parse().map_err(|_| overflow())?
        };
        let mut component = whole_value.checked_mul(unit_nanos).ok_or_else(overflow)?;
        // Like Go, digits beyond what can matter are dropped; 30 digits keep the arithmetic in range.
        let fraction = &fraction[..fraction.len().min(30)];
        if !fraction.is_empty() {
            let digits: u128 = fraction.parse().map_err(|_| malformed())?;
            let scale = 10u128.pow(u32::try_from(fraction.len()).map_err(|_| malformed())?);
            component += digits * unit_nanos / scale;
        }
        total = total.checked_add(component).ok_or_else(overflow)?;
        if total > MAX_NANOS {
            return Err(overflow());
        }
        rest = next;
    }
    if negative && total > 0 {
        return Err(DurationError::Negative {
            input: input.to_owned(),
        });
    }
    Ok(total)
}

fn unit_nanos(unit: &str) -> Option<u128> {
    match unit {
        "ns" => Some(1),
        "us" | "µs" | "μs" => Some(NANOS_PER_MICRO),
        "ms" => Some(NANOS_PER_MILLI),
        "s" => Some(NANOS_PER_SECOND),
        "m" => Some(NANOS_PER_MINUTE),
        "h" => Some(NANOS_PER_HOUR),
        _ => None,
    }
}

fn nanos_to_std(nanos: u128) -> std::time::Duration {
    // Callers bound `nanos` by MAX_NANOS, so whole seconds fit into u64 and the remainder into u32.
    let secs = u64::try_from(nanos / NANOS_PER_SECOND).unwrap_or(u64::MAX);
    let subsec = u32::try_from(nanos % NANOS_PER_SECOND).unwrap_or(0);
    std::time::Duration::new(secs, subsec)
}

/// Formats nanoseconds the way Go's `Duration.String` does.
fn format_go_duration(nanos: u128) -> String {
    if nanos == 0 {
        return "0s".to_owned();
    }
    if nanos < NANOS_PER_SECOND {
        let (unit, divisor, precision) = if nanos < NANOS_PER_MICRO {
            ("ns", 1, 0)
        } else if nanos < NANOS_PER_MILLI {
            ("µs", NANOS_PER_MICRO, 3)
        } else {
            ("ms", NANOS_PER_MILLI, 6)
        };
        return format!(
            "{}{}{unit}",
            nanos / divisor,
            fraction(nanos % divisor, precision)
        );
    }
    let seconds = nanos / NANOS_PER_SECOND;
    let mut out = String::new();
    let minutes = seconds / 60;
    if minutes > 0 {
        let hours = minutes / 60;
        if hours > 0 {
            out.push_str(&format!("{hours}h"));
        }
        out.push_str(&format!("{}m", minutes % 60));
    }
    out.push_str(&format!(
        "{}{}s",
        seconds % 60,
        fraction(nanos % NANOS_PER_SECOND, 9)
    ));
    out
}

/// `.123` for the fraction `value / 10^precision`, without trailing zeros; empty for zero.
fn fraction(value: u128, precision: usize) -> String {
    if value == 0 {
        return String::new();
    }
    let digits = format!("{value:0precision$}");
    format!(".{}", digits.trim_end_matches('0'))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(input: &str) -> std::time::Duration {
        input.parse::<Duration>().unwrap().as_std()
    }

    #[test]
    fn parse_accepts_go_syntax() {
        let cases = [
            ("0", std::time::Duration::ZERO),
            ("0s", std::time::Duration::ZERO),
            ("+5s", std::time::Duration::from_secs(5)),
            ("1m30s", std::time::Duration::from_secs(90)),
            ("24h", std::time::Duration::from_secs(86_400)),
            ("500ms", std::time::Duration::from_millis(500)),
            ("1.5h", std::time::Duration::from_secs(5_400)),
            (".5s", std::time::Duration::from_millis(500)),
            ("1.s", std::time::Duration::from_secs(1)),
            ("2h45m10.5s", std::time::Duration::from_millis(9_910_500)),
            ("3us", std::time::Duration::from_micros(3)),
            ("3µs", std::time::Duration::from_micros(3)),
            ("3μs", std::time::Duration::from_micros(3)),
            ("7ns", std::time::Duration::from_nanos(7)),
            ("1h1h", std::time::Duration::from_secs(7_200)),
            ("-0s", std::time::Duration::ZERO),
        ];
        for (input, expected) in cases {
            assert_eq!(parse(input), expected, "{input}");
        }
    }

    #[test]
    fn parse_rejects_malformed_input_with_a_reason() {
        let cases = [
            ("", DurationError::Empty),
            ("5", DurationError::MissingUnit { input: "5".into() }),
            (
                "5x",
                DurationError::UnknownUnit {
                    input: "5x".into(),
                    unit: "x".into(),
                },
            ),
            (
                "1d",
                DurationError::UnknownUnit {
                    input: "1d".into(),
                    unit: "d".into(),
                },
            ),
            ("s", DurationError::Malformed { input: "s".into() }),
            (".s", DurationError::Malformed { input: ".s".into() }),
            (
                "1.2.3s",
                DurationError::Malformed {
                    input: "1.2.3s".into(),
                },
            ),
            ("-", DurationError::Malformed { input: "-".into() }),
            (
                "-1m",
                DurationError::Negative {
                    input: "-1m".into(),
                },
            ),
            (
                "3000000h",
                DurationError::Overflow {
                    input: "3000000h".into(),
                },
            ),
        ];
        for (input, expected) in cases {
            assert_eq!(input.parse::<Duration>(), Err(expected), "{input}");
        }
    }

    #[test]
    fn display_matches_go_duration_string() {
        let cases = [
            (std::time::Duration::ZERO, "0s"),
            (std::time::Duration::from_nanos(7), "7ns"),
            (std::time::Duration::from_nanos(1_500), "1.5µs"),
            (std::time::Duration::from_millis(500), "500ms"),
            (std::time::Duration::from_micros(1_250), "1.25ms"),
            (std::time::Duration::from_secs(1), "1s"),
            (std::time::Duration::from_millis(1_500), "1.5s"),
            (std::time::Duration::from_secs(90), "1m30s"),
            (std::time::Duration::from_secs(120), "2m0s"),
            (std::time::Duration::from_secs(5_400), "1h30m0s"),
            (std::time::Duration::from_secs(86_400), "24h0m0s"),
            (std::time::Duration::from_secs(3_601), "1h0m1s"),
        ];
        for (value, expected) in cases {
            assert_eq!(Duration::from(value).to_string(), expected);
        }
    }

    #[test]
    fn display_output_parses_back_to_the_same_value() {
        for input in ["1h30m", "500ms", "1.5h", "2h45m10.5s", "7ns", "1.5µs", "0"] {
            let value: Duration = input.parse().unwrap();
            assert_eq!(value.to_string().parse::<Duration>().unwrap(), value);
        }
    }

    #[test]
    fn serde_uses_go_strings() {
        let value: Duration = serde_json::from_str("\"1m30s\"").unwrap();
        assert_eq!(value, Duration::from_secs(90));
        assert_eq!(serde_json::to_string(&value).unwrap(), "\"1m30s\"");
        let error = serde_json::from_str::<Duration>("90")
            .unwrap_err()
            .to_string();
        assert!(error.contains("a Go duration string"), "{error}");
    }
}

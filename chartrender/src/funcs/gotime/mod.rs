//! Go's `time` package as Sprig's date functions see it: `time.Time` values, reference-time layouts
//! (`2006-01-02 15:04:05`) for formatting and parsing, and `time.Duration` text (`1h2m3.5s`).

use std::fmt;
use std::sync::{Arc, LazyLock};
use std::time::Instant;

use jiff::tz::TimeZone;
use jiff::{Timestamp, Zoned};
use minijinja::value::{Object, ObjectRepr, Value};

mod parse;

pub(crate) use parse::parse;

/// A Go `time.Time` in a template: an instant with its zone, and for `now` a monotonic reading.
#[derive(Debug, Clone)]
pub(crate) struct GoTime {
    /// The instant and the zone it is shown in.
    pub(crate) zoned: Zoned,
    /// Seconds since process start for times from `now` (Go prints them as `m=+0.000123456`).
    pub(crate) monotonic: Option<f64>,
}

static PROCESS_START: LazyLock<Instant> = LazyLock::new(Instant::now);

impl GoTime {
    /// Wraps a zoned time without a monotonic reading.
    pub(crate) fn value(zoned: Zoned) -> Value {
        Value::from_object(GoTime {
            zoned,
            monotonic: None,
        })
    }

    /// Go's `time.Now()` in the local zone.
    pub(crate) fn now() -> Value {
        let monotonic = PROCESS_START.elapsed().as_secs_f64();
        Value::from_object(GoTime {
            zoned: Zoned::now().with_time_zone(local_zone()),
            monotonic: Some(monotonic),
        })
    }

    /// Go's zero `time.Time{}`: January 1, year 1, 00:00:00 UTC.
    pub(crate) fn zero() -> Zoned {
        jiff::civil::date(1, 1, 1)
            .at(0, 0, 0, 0)
            .to_zoned(TimeZone::UTC)
            .unwrap_or_else(|_| Zoned::new(Timestamp::UNIX_EPOCH, TimeZone::UTC))
    }

    /// Go's `time.Unix(seconds, 0)` in the local zone.
    pub(crate) fn unix(seconds: i64) -> Zoned {
        Timestamp::from_second(seconds)
            .unwrap_or(Timestamp::UNIX_EPOCH)
            .to_zoned(local_zone())
    }
}

impl Object for GoTime {
    fn repr(self: &Arc<Self>) -> ObjectRepr {
        ObjectRepr::Plain
    }

    fn render(self: &Arc<Self>, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Go's Time.String(): "2006-01-02 15:04:05.999999999 -0700 MST" plus the monotonic reading.
        f.write_str(&format(
            &self.zoned,
            "2006-01-02 15:04:05.999999999 -0700 MST",
        ))?;
        if let Some(m) = self.monotonic {
            write!(f, " m=+{m:.9}")?;
        }
        Ok(())
    }
}

/// The process's local zone (Go's `time.Local`: `TZ` or `/etc/localtime`).
pub(crate) fn local_zone() -> TimeZone {
    static LOCAL: LazyLock<TimeZone> =
        LazyLock::new(|| TimeZone::try_system().unwrap_or(TimeZone::UTC));
    LOCAL.clone()
}

/// Go's `time.LoadLocation`: "" and "UTC" are UTC, "Local" the local zone, others from the zone database.
pub(crate) fn load_location(name: &str) -> Option<TimeZone> {
    match name {
        "" | "UTC" => Some(TimeZone::UTC),
        "Local" => Some(local_zone()),
        other => TimeZone::get(other).ok(),
    }
}

/// One element of a Go layout.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Chunk {
    LongMonth,
    Month,
    NumMonth,
    ZeroMonth,
    LongWeekDay,
    WeekDay,
    Day,
    UnderDay,
    ZeroDay,
    UnderYearDay,
    ZeroYearDay,
    Hour,
    Hour12,
    ZeroHour12,
    Minute,
    ZeroMinute,
    Second,
    ZeroSecond,
    LongYear,
    Year,
    Pm,
    PmLower,
    Tz,
    /// Numeric zone: (with `Z` for UTC, colons, seconds, hours only).
    NumTz {
        iso: bool,
        colon: bool,
        seconds: bool,
        hours_only: bool,
    },
    /// Fractional seconds: (digits, trailing zeros trimmed (`9`), separator).
    Fraction(usize, bool, u8),
}

/// Splits `layout` at its first layout element: (literal prefix, element, rest).
fn next_chunk(layout: &str) -> (&str, Option<(Chunk, usize)>, &str) {
    let b = layout.as_bytes();
    let at = |i: usize, s: &str| layout[i..].starts_with(s);
    for i in 0..b.len() {
        let found = match b[i] {
            b'J' if at(i, "January") => Some((Chunk::LongMonth, 7)),
            b'J' if at(i, "Jan") => Some((Chunk::Month, 3)),
            b'M' if at(i, "Monday") => Some((Chunk::LongWeekDay, 6)),
            b'M' if at(i, "Mon") => Some((Chunk::WeekDay, 3)),
            b'M' if at(i, "MST") => Some((Chunk::Tz, 3)),
            b'0' if at(i, "002") => Some((Chunk::ZeroYearDay, 3)),
            b'0' if i + 1 < b.len() && (b'1'..=b'6').contains(&b[i + 1]) => Some((
                match b[i + 1] {
                    b'1' => Chunk::ZeroMonth,
                    b'2' => Chunk::ZeroDay,
                    b'3' => Chunk::ZeroHour12,
                    b'4' => Chunk::ZeroMinute,
                    b'5' => Chunk::ZeroSecond,
                    _ => Chunk::Year,
                },
                2,
            )),
            b'1' if at(i, "15") => Some((Chunk::Hour, 2)),
            b'1' => Some((Chunk::NumMonth, 1)),
            b'2' if at(i, "2006") => Some((Chunk::LongYear, 4)),
            b'2' => Some((Chunk::Day, 1)),
            b'_' if at(i, "_2006") => {
                // "_2006" is a literal underscore followed by a long year.
                return (
                    &layout[..i + 1],
                    Some((Chunk::LongYear, 4)),
                    &layout[i + 5..],
                );
            }
            b'_' if at(i, "__2") => Some((Chunk::UnderYearDay, 3)),
            b'_' if at(i, "_2") => Some((Chunk::UnderDay, 2)),
            b'3' => Some((Chunk::Hour12, 1)),
            b'4' => Some((Chunk::Minute, 1)),
            b'5' => Some((Chunk::Second, 1)),
            b'P' if at(i, "PM") => Some((Chunk::Pm, 2)),
            b'p' if at(i, "pm") => Some((Chunk::PmLower, 2)),
            b'-' | b'Z' => numeric_zone(&layout[i..]),
            b'.' | b',' if i + 1 < b.len() && (b[i + 1] == b'0' || b[i + 1] == b'9') => {
                let digit = b[i + 1];
                let mut j = i + 1;
                while j < b.len() && b[j] == digit {
                    j += 1;
                }
                if j < b.len() && b[j].is_ascii_digit() {
                    None
                } else {
                    Some((Chunk::Fraction(j - i - 1, digit == b'9', b[i]), j - i))
                }
            }
            _ => None,
        };
        if let Some((chunk, len)) = found {
            return (&layout[..i], Some((chunk, len)), &layout[i + len..]);
        }
    }
    (layout, None, "")
}

fn numeric_zone(s: &str) -> Option<(Chunk, usize)> {
    let iso = s.starts_with('Z');
    let rest = &s[1..];
    let forms: [(&str, bool, bool, bool); 5] = [
        ("070000", false, true, false),
        ("07:00:00", true, true, false),
        ("0700", false, false, false),
        ("07:00", true, false, false),
        ("07", false, false, true),
    ];
    forms.iter().find_map(|(form, colon, seconds, hours_only)| {
        rest.starts_with(form).then_some((
            Chunk::NumTz {
                iso,
                colon: *colon,
                seconds: *seconds,
                hours_only: *hours_only,
            },
            form.len() + 1,
        ))
    })
}

const LONG_MONTHS: [&str; 12] = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
];
const LONG_DAYS: [&str; 7] = [
    "Sunday",
    "Monday",
    "Tuesday",
    "Wednesday",
    "Thursday",
    "Friday",
    "Saturday",
];

/// Go's `Time.Format(layout)`.
pub(crate) fn format(time: &Zoned, layout: &str) -> String {
    let mut out = String::with_capacity(layout.len() + 10);
    let mut rest = layout;
    let hour12 = |h: i8| match h % 12 {
        0 => 12,
        other => other,
    };
    while !rest.is_empty() {
        let (prefix, chunk, suffix) = next_chunk(rest);
        out.push_str(prefix);
        let Some((chunk, _)) = chunk else { break };
        rest = suffix;
        let month = time.month() as usize;
        let weekday = time.weekday().to_sunday_zero_offset() as usize;
        match chunk {
            Chunk::LongMonth => out.push_str(LONG_MONTHS[month - 1]),
            Chunk::Month => out.push_str(&LONG_MONTHS[month - 1][..3]),
            Chunk::NumMonth => out.push_str(&month.to_string()),
            Chunk::ZeroMonth => out.push_str(&format!("{month:02}")),
            Chunk::LongWeekDay => out.push_str(LONG_DAYS[weekday]),
            Chunk::WeekDay => out.push_str(&LONG_DAYS[weekday][..3]),
            Chunk::Day => out.push_str(&time.day().to_string()),
            Chunk::UnderDay => out.push_str(&format!("{:>2}", time.day())),
            Chunk::ZeroDay => out.push_str(&format!("{:02}", time.day())),
            Chunk::UnderYearDay => out.push_str(&format!("{:>3}", time.day_of_year())),
            Chunk::ZeroYearDay => out.push_str(&format!("{:03}", time.day_of_year())),
            Chunk::Hour => out.push_str(&format!("{:02}", time.hour())),
            Chunk::Hour12 => out.push_str(&hour12(time.hour()).to_string()),
            Chunk::ZeroHour12 => out.push_str(&format!("{:02}", hour12(time.hour()))),
            Chunk::Minute => out.push_str(&time.minute().to_string()),
            Chunk::ZeroMinute => out.push_str(&format!("{:02}", time.minute())),
            Chunk::Second => out.push_str(&time.second().to_string()),
            Chunk::ZeroSecond => out.push_str(&format!("{:02}", time.second())),
            Chunk::LongYear => {
                let year = time.year();
                if year < 0 {
                    out.push_str(&format!("-{:04}", -i32::from(year)));
                } else {
                    out.push_str(&format!("{year:04}"));
                }
            }
            Chunk::Year => out.push_str(&format!("{:02}", time.year().rem_euclid(100))),
            Chunk::Pm => out.push_str(if time.hour() >= 12 { "PM" } else { "AM" }),
            Chunk::PmLower => out.push_str(if time.hour() >= 12 { "pm" } else { "am" }),
            Chunk::Tz => out.push_str(&zone_abbreviation(time)),
            Chunk::NumTz {
                iso,
                colon,
                seconds,
                hours_only,
            } => {
                let offset = time.offset().seconds();
                if iso && offset == 0 {
                    out.push('Z');
                    continue;
                }
                let sign = if offset < 0 { '-' } else { '+' };
                let abs = offset.abs();
                out.push(sign);
                out.push_str(&format!("{:02}", abs / 3600));
                if !hours_only {
                    if colon {
                        out.push(':');
                    }
                    out.push_str(&format!("{:02}", abs / 60 % 60));
                }
                if seconds {
                    if colon {
                        out.push(':');
                    }
                    out.push_str(&format!("{:02}", abs % 60));
                }
            }
            Chunk::Fraction(digits, trim, separator) => {
                let nanos = format!("{:09}", time.subsec_nanosecond());
                let mut shown = &nanos[..digits.min(9)];
                if trim {
                    shown = shown.trim_end_matches('0');
                    if shown.is_empty() {
                        continue;
                    }
                }
                out.push(separator as char);
                out.push_str(shown);
            }
        }
    }
    out
}

/// The zone abbreviation Go prints for `MST`; a zone without a name (a fixed offset from parsing) prints `-0700`.
fn zone_abbreviation(time: &Zoned) -> String {
    let zone = time.time_zone();
    let unnamed = zone.iana_name().is_none() && zone.to_fixed_offset().is_ok();
    if unnamed && time.offset().seconds() != 0 {
        let offset = time.offset().seconds();
        let sign = if offset < 0 { '-' } else { '+' };
        let abs = offset.abs();
        return format!("{sign}{:02}{:02}", abs / 3600, abs / 60 % 60);
    }
    let abbreviation = zone
        .to_offset_info(time.timestamp())
        .abbreviation()
        .to_string();
    if abbreviation.is_empty() {
        "UTC".to_string()
    } else {
        abbreviation
    }
}

fn skip_prefix<'a>(input: &'a str, prefix: &str) -> Option<&'a str> {
    // Go lets a space in the layout match any run of spaces in the input.
    let mut input = input;
    let mut prefix = prefix;
    while !prefix.is_empty() {
        if prefix.starts_with(' ') {
            if !input.starts_with(' ') {
                return None;
            }
            prefix = prefix.trim_start_matches(' ');
            input = input.trim_start_matches(' ');
            continue;
        }
        let c = prefix.chars().next()?;
        input = input.strip_prefix(c)?;
        prefix = &prefix[c.len_utf8()..];
    }
    Some(input)
}

fn digits(input: &str, min: usize, max: usize) -> Option<(i32, &str)> {
    let len = input
        .bytes()
        .take(max)
        .take_while(u8::is_ascii_digit)
        .count();
    if len < min {
        return None;
    }
    Some((input[..len].parse().ok()?, &input[len..]))
}

fn name<'a>(input: &'a str, names: &[&str], short: bool) -> Option<(usize, &'a str)> {
    names.iter().enumerate().find_map(|(i, full)| {
        let wanted = if short { &full[..3] } else { full };
        let head = input.get(..wanted.len())?;
        head.eq_ignore_ascii_case(wanted)
            .then(|| (i, &input[wanted.len()..]))
    })
}

fn fraction_nanos(digits: &str) -> i32 {
    let mut padded: String = digits.chars().take(9).collect();
    while padded.len() < 9 {
        padded.push('0');
    }
    padded.parse().unwrap_or(0)
}

const NANOS_PER_SECOND: i64 = 1_000_000_000;

/// Go's `time.ParseDuration`: `1h2m`, `-1.5s`, `300ms`, `2us` (returns nanoseconds).
pub(crate) fn parse_duration(text: &str) -> Result<i64, String> {
    let invalid = || format!("time: invalid duration {:?}", text);
    let (negative, mut rest) = match text.as_bytes().first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    };
    if rest == "0" {
        return Ok(0);
    }
    if rest.is_empty() {
        return Err(invalid());
    }
    let mut total: f64 = 0.0;
    while !rest.is_empty() {
        let number_len = rest
            .find(|c: char| !c.is_ascii_digit() && c != '.')
            .unwrap_or(rest.len());
        let number = &rest[..number_len];
        if number.is_empty() || number == "." {
            return Err(invalid());
        }
        let value: f64 = number.parse().map_err(|_| invalid())?;
        rest = &rest[number_len..];
        let unit_len = rest
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(rest.len());
        let unit = &rest[..unit_len];
        let scale: f64 = match unit {
            "ns" => 1.0,
            "us" | "µs" | "μs" => 1e3,
            "ms" => 1e6,
            "s" => 1e9,
            "m" => 60e9,
            "h" => 3600e9,
            "" => return Err(format!("time: missing unit in duration {:?}", text)),
            other => {
                return Err(format!(
                    "time: unknown unit {:?} in duration {:?}",
                    other, text
                ));
            }
        };
        total += value * scale;
        rest = &rest[unit_len..];
    }
    if total > i64::MAX as f64 {
        return Err(invalid());
    }
    let nanos = total.round() as i64;
    Ok(if negative { -nanos } else { nanos })
}

/// Go's `Duration.String()`: `1h2m3.5s`, `1.5ms`, `0s`.
pub(crate) fn format_duration(nanos: i64) -> String {
    if nanos == 0 {
        return "0s".into();
    }
    let negative = nanos < 0;
    let u = nanos.unsigned_abs();
    let sign = if negative { "-" } else { "" };
    if u < NANOS_PER_SECOND as u64 {
        let (unit, scale) = if u < 1_000 {
            ("ns", 1)
        } else if u < 1_000_000 {
            ("µs", 1_000)
        } else {
            ("ms", 1_000_000)
        };
        return format!("{sign}{}{unit}", fixed_fraction(u, scale));
    }
    let seconds_part = u % (60 * NANOS_PER_SECOND as u64);
    let total_minutes = u / (60 * NANOS_PER_SECOND as u64);
    let mut out = String::from(sign);
    let hours = total_minutes / 60;
    let minutes = total_minutes % 60;
    if hours > 0 {
        out.push_str(&format!("{hours}h{minutes}m"));
    } else if minutes > 0 {
        out.push_str(&format!("{minutes}m"));
    }
    out.push_str(&fixed_fraction(seconds_part, NANOS_PER_SECOND as u64));
    out.push('s');
    out
}

/// `value / scale` with the fraction's trailing zeros dropped (`1500, 1000` → `1.5`).
fn fixed_fraction(value: u64, scale: u64) -> String {
    let whole = value / scale;
    let fraction = value % scale;
    if fraction == 0 {
        return whole.to_string();
    }
    let width = scale.to_string().len() - 1;
    let digits = format!("{fraction:0width$}");
    format!("{whole}.{}", digits.trim_end_matches('0'))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn utc(y: i16, mo: i8, d: i8, h: i8, mi: i8, s: i8) -> Zoned {
        jiff::civil::date(y, mo, d)
            .at(h, mi, s, 0)
            .to_zoned(TimeZone::UTC)
            .unwrap()
    }

    #[test]
    fn format_follows_go_reference_layouts() {
        let t = utc(2019, 12, 31, 23, 59, 5);
        for (layout, expected) in [
            ("Mon Jan 2 2006", "Tue Dec 31 2019"),
            ("2006-01-02T15:04:05Z07:00", "2019-12-31T23:59:05Z"),
            (
                "02/01/06 03:04:05 PM -0700 MST",
                "31/12/19 11:59:05 PM +0000 UTC",
            ),
            ("January _2, Monday 002", "December 31, Tuesday 365"),
            ("15:04:05.000", "23:59:05.000"),
            ("15:04:05.999", "23:59:05"),
        ] {
            assert_eq!(format(&t, layout), expected, "{layout}");
        }
    }

    #[test]
    fn parse_is_the_inverse_of_format() {
        let t = parse("2006-01-02 15:04", "2019-12-31 23:59", &TimeZone::UTC).unwrap();
        assert_eq!(t.timestamp().as_second(), 1577836740);
        let t = parse(
            "2006-01-02T15:04:05Z07:00",
            "2020-02-29T10:00:00+02:00",
            &TimeZone::UTC,
        )
        .unwrap();
        assert_eq!(format(&t, "15:04 -07:00"), "10:00 +02:00");
        let err = parse("2006-01-02", "20x9-01-01", &TimeZone::UTC).unwrap_err();
        assert_eq!(
            err,
            r#"parsing time "20x9-01-01" as "2006-01-02": cannot parse "20x9-01-01" as "2006""#
        );
    }

    #[test]
    fn durations_print_and_parse_like_go() {
        for (nanos, text) in [
            (0, "0s"),
            (95 * NANOS_PER_SECOND, "1m35s"),
            (3600 * NANOS_PER_SECOND, "1h0m0s"),
            (1_500_000, "1.5ms"),
            (-2_500_000_000, "-2.5s"),
            (999, "999ns"),
        ] {
            assert_eq!(format_duration(nanos), text);
        }
        assert_eq!(
            parse_duration("-1h30m").unwrap(),
            -90 * 60 * NANOS_PER_SECOND
        );
        assert_eq!(parse_duration("1.5s").unwrap(), 1_500_000_000);
        assert!(parse_duration("5").is_err());
        assert!(parse_duration("1x").is_err());
    }
}

//! Sprig's date functions (`now date dateInZone dateModify toDate unixEpoch htmlDate duration durationRound ago`)
//! over [`GoTime`] values.

use jiff::Zoned;
use minijinja::Error;
use minijinja::value::{Value, ValueKind};

use super::gotime::{self, GoTime};
use super::number::{GoNumber, number_type};
use super::value::{to_i64, type_of};
use super::{arg_str, fail, want};

/// `now`
pub(crate) fn now(args: &[Value]) -> Result<Value, Error> {
    want("now", args, 0)?;
    Ok(GoTime::now())
}

/// The time a date argument stands for: a time, integer Unix seconds, or (anything else) now, as Sprig does.
fn time_of(value: &Value) -> Zoned {
    if let Some(time) = value.downcast_object_ref::<GoTime>() {
        return time.zoned.clone();
    }
    if value.kind() == ValueKind::Number && value.is_integer() {
        return GoTime::unix(to_i64(value));
    }
    Zoned::now().with_time_zone(gotime::local_zone())
}

/// An argument that Go requires to be a `time.Time`.
fn time_arg(value: &Value) -> Result<&GoTime, Error> {
    value.downcast_object_ref::<GoTime>().ok_or_else(|| {
        fail(format!(
            "wrong type for value; expected time.Time; got {}",
            type_of(value)
        ))
    })
}

fn in_zone(layout: &str, date: &Value, zone: &str) -> Value {
    let zone = gotime::load_location(zone).unwrap_or(jiff::tz::TimeZone::UTC);
    Value::from(gotime::format(&time_of(date).with_time_zone(zone), layout))
}

/// `date layout t`
pub(crate) fn date(args: &[Value]) -> Result<Value, Error> {
    want("date", args, 2)?;
    Ok(in_zone(&arg_str(args, 0), &args[1], "Local"))
}

/// `dateInZone layout t zone`
pub(crate) fn date_in_zone(args: &[Value]) -> Result<Value, Error> {
    want("dateInZone", args, 3)?;
    Ok(in_zone(&arg_str(args, 0), &args[1], &arg_str(args, 2)))
}

/// `htmlDate t`
pub(crate) fn html_date(args: &[Value]) -> Result<Value, Error> {
    want("htmlDate", args, 1)?;
    Ok(in_zone("2006-01-02", &args[0], "Local"))
}

/// `htmlDateInZone t zone`
pub(crate) fn html_date_in_zone(args: &[Value]) -> Result<Value, Error> {
    want("htmlDateInZone", args, 2)?;
    Ok(in_zone("2006-01-02", &args[0], &arg_str(args, 1)))
}

fn add_duration(time: &GoTime, nanos: i64) -> Value {
    let span = jiff::SignedDuration::from_nanos(nanos);
    let zoned = time
        .zoned
        .checked_add(span)
        .unwrap_or_else(|_| time.zoned.clone());
    Value::from_object(GoTime {
        zoned,
        monotonic: time.monotonic.map(|m| m + span.as_secs_f64()),
    })
}

/// `dateModify "-1h30m" t`: unchanged when the duration does not parse.
pub(crate) fn date_modify(args: &[Value]) -> Result<Value, Error> {
    want("dateModify", args, 2)?;
    let time = time_arg(&args[1])?;
    Ok(match gotime::parse_duration(&arg_str(args, 0)) {
        Ok(nanos) => add_duration(time, nanos),
        Err(_) => args[1].clone(),
    })
}

/// `mustDateModify "-1h30m" t`
pub(crate) fn must_date_modify(args: &[Value]) -> Result<Value, Error> {
    want("mustDateModify", args, 2)?;
    let time = time_arg(&args[1])?;
    let nanos = gotime::parse_duration(&arg_str(args, 0)).map_err(fail)?;
    Ok(add_duration(time, nanos))
}

/// `toDate layout text`: the zero time when the text does not parse.
pub(crate) fn to_date(args: &[Value]) -> Result<Value, Error> {
    want("toDate", args, 2)?;
    let parsed = gotime::parse(&arg_str(args, 0), &arg_str(args, 1), &gotime::local_zone());
    Ok(GoTime::value(parsed.unwrap_or_else(|_| GoTime::zero())))
}

/// `mustToDate layout text`
pub(crate) fn must_to_date(args: &[Value]) -> Result<Value, Error> {
    want("mustToDate", args, 2)?;
    gotime::parse(&arg_str(args, 0), &arg_str(args, 1), &gotime::local_zone())
        .map(GoTime::value)
        .map_err(|e| fail(format!("error calling mustToDate: {e}")))
}

/// `unixEpoch t`
pub(crate) fn unix_epoch(args: &[Value]) -> Result<Value, Error> {
    want("unixEpoch", args, 1)?;
    Ok(Value::from(
        time_arg(&args[0])?
            .zoned
            .timestamp()
            .as_second()
            .to_string(),
    ))
}

/// `ago t`: time since t, rounded to seconds.
pub(crate) fn ago(args: &[Value]) -> Result<Value, Error> {
    want("ago", args, 1)?;
    let since =
        jiff::Timestamp::now().as_nanosecond() - time_of(&args[0]).timestamp().as_nanosecond();
    let since = i64::try_from(since).unwrap_or(i64::MAX);
    Ok(Value::from(gotime::format_duration(round_to_second(since))))
}

/// Go's `Duration.Round(time.Second)`: halves away from zero.
fn round_to_second(nanos: i64) -> i64 {
    const SECOND: i64 = 1_000_000_000;
    let remainder = nanos % SECOND;
    let truncated = nanos - remainder;
    if remainder.abs() * 2 >= SECOND {
        truncated.saturating_add(if nanos < 0 { -SECOND } else { SECOND })
    } else {
        truncated
    }
}

/// `duration seconds`: a string or an `int64` of seconds as a Go duration (`1m35s`); anything else, a template
/// literal (Go's `int`) included, is `0s`.
pub(crate) fn duration(args: &[Value]) -> Result<Value, Error> {
    want("duration", args, 1)?;
    let seconds = match args[0].kind() {
        ValueKind::String => arg_str(args, 0).parse::<i64>().unwrap_or(0),
        _ if number_type(&args[0]) == Some(GoNumber::Int64) => to_i64(&args[0]),
        _ => 0,
    };
    Ok(Value::from(gotime::format_duration(
        seconds.wrapping_mul(1_000_000_000),
    )))
}

/// `durationRound d`: the largest whole unit (`2d`, `3mo`, `1y`) of a duration string, `int64` nanoseconds or the
/// time since a time (anything else is `0s`).
pub(crate) fn duration_round(args: &[Value]) -> Result<Value, Error> {
    want("durationRound", args, 1)?;
    let value = &args[0];
    let nanos: i64 = if let Some(time) = value.downcast_object_ref::<GoTime>() {
        let since = jiff::Timestamp::now().as_nanosecond() - time.zoned.timestamp().as_nanosecond();
        i64::try_from(since).unwrap_or(i64::MAX)
    } else if value.kind() == ValueKind::String {
        gotime::parse_duration(&arg_str(args, 0)).unwrap_or(0)
    } else if number_type(value) == Some(GoNumber::Int64) {
        to_i64(value)
    } else {
        0
    };
    Ok(Value::from(round_duration(nanos)))
}

fn round_duration(nanos: i64) -> String {
    const SECOND: u64 = 1_000_000_000;
    let u = nanos.unsigned_abs();
    let units: [(u64, &str); 6] = [
        (SECOND * 3600 * 24 * 365, "y"),
        (SECOND * 3600 * 24 * 30, "mo"),
        (SECOND * 3600 * 24, "d"),
        (SECOND * 3600, "h"),
        (SECOND * 60, "m"),
        (SECOND, "s"),
    ];
    units.iter().find(|(size, _)| u > *size).map_or_else(
        || "0s".to_string(),
        |(size, unit)| format!("{}{unit}", u / size),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn duration_round_picks_the_largest_unit_strictly_exceeded() {
        for (text, expected) in [
            ("49h", "2d"),
            ("24h", "24h"),
            ("25h", "1d"),
            ("1s", "0s"),
            ("61s", "1m"),
            ("-3h", "3h"),
            ("9000h", "1y"),
        ] {
            let nanos = gotime::parse_duration(text).unwrap();
            assert_eq!(round_duration(nanos), expected, "{text}");
        }
    }

    #[test]
    fn duration_reads_seconds_from_strings_and_integers_only() {
        assert_eq!(duration(&[Value::from("95")]).unwrap().to_string(), "1m35s");
        assert_eq!(
            duration(&[super::super::number::int64(3600)])
                .unwrap()
                .to_string(),
            "1h0m0s"
        );
        // Go's `int` (a template literal, `len`) and float64 are not read: Sprig switches on string and int64.
        assert_eq!(duration(&[Value::from(3600)]).unwrap().to_string(), "0s");
        assert_eq!(duration(&[Value::from(95.0)]).unwrap().to_string(), "0s");
    }

    #[test]
    fn date_functions_take_times_and_unix_seconds() {
        let t = to_date(&[Value::from("2006-01-02"), Value::from("2019-12-31")]).unwrap();
        assert_eq!(
            date_in_zone(&[Value::from("2006/01/02"), t.clone(), Value::from("UTC")])
                .unwrap()
                .to_string(),
            "2019/12/31"
        );
        assert_eq!(
            date_in_zone(&[Value::from("2006"), Value::from(0), Value::from("UTC")])
                .unwrap()
                .to_string(),
            "1970"
        );
        assert!(date_modify(&[Value::from("1h"), Value::from("x")]).is_err());
        assert_eq!(
            date_modify(&[Value::from("bogus"), t.clone()])
                .unwrap()
                .to_string(),
            t.to_string()
        );
        assert!(must_date_modify(&[Value::from("bogus"), t]).is_err());
        let zero = to_date(&[Value::from("2006"), Value::from("x")]).unwrap();
        assert_eq!(zero.to_string(), "0001-01-01 00:00:00 +0000 UTC");
    }
}

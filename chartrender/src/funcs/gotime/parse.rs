//! Go's `time.ParseInLocation` over the layout elements of [`super`].

use jiff::Zoned;
use jiff::tz::{Offset, TimeZone};

use super::{
    Chunk, LONG_DAYS, LONG_MONTHS, digits, fraction_nanos, name, next_chunk, skip_prefix,
    zone_abbreviation,
};

/// The fields read so far (Go's zero time until set).
struct Fields {
    year: i32,
    month: i32,
    day: i32,
    hour: i32,
    minute: i32,
    second: i32,
    nanos: i32,
    pm: Option<bool>,
    offset: Option<i32>,
    abbreviation: Option<String>,
}

/// Go's `time.ParseInLocation(layout, value, zone)`, with Go's error text.
pub(crate) fn parse(layout: &str, value: &str, zone: &TimeZone) -> Result<Zoned, String> {
    let error = |element: &str, rest: &str| {
        format!(
            "parsing time {:?} as {:?}: cannot parse {:?} as {:?}",
            value, layout, rest, element
        )
    };
    let mut fields = Fields {
        year: 1,
        month: 1,
        day: 1,
        hour: 0,
        minute: 0,
        second: 0,
        nanos: 0,
        pm: None,
        offset: None,
        abbreviation: None,
    };
    let mut rest_layout = layout;
    let mut input = value;
    while !rest_layout.is_empty() {
        let (prefix, chunk, suffix) = next_chunk(rest_layout);
        let element = &rest_layout[prefix.len()..rest_layout.len() - suffix.len()];
        input = skip_prefix(input, prefix).ok_or_else(|| error(prefix, input))?;
        let Some((chunk, _)) = chunk else {
            if !input.is_empty() {
                return Err(format!("parsing time {value:?}: extra text: {:?}", input));
            }
            break;
        };
        rest_layout = suffix;
        let before = input;
        input = fields.read(chunk, input, rest_layout, value, &|| error(element, before))?;
    }
    fields.into_time(value, zone)
}

impl Fields {
    /// Reads one layout element from the front of `input`; returns the rest.
    fn read<'a>(
        &mut self,
        chunk: Chunk,
        mut input: &'a str,
        rest_layout: &str,
        value: &str,
        fail: &dyn Fn() -> String,
    ) -> Result<&'a str, String> {
        match chunk {
            Chunk::LongYear => {
                let (v, r) = digits(input, 4, 4).ok_or_else(fail)?;
                self.year = v;
                input = r;
            }
            Chunk::Year => {
                let (v, r) = digits(input, 2, 2).ok_or_else(fail)?;
                self.year = if v >= 69 { v + 1900 } else { v + 2000 };
                input = r;
            }
            Chunk::LongMonth | Chunk::Month => {
                let (index, r) =
                    name(input, &LONG_MONTHS, chunk == Chunk::Month).ok_or_else(fail)?;
                self.month = index as i32 + 1;
                input = r;
            }
            Chunk::NumMonth | Chunk::ZeroMonth => {
                let min = if chunk == Chunk::ZeroMonth { 2 } else { 1 };
                let (v, r) = digits(input, min, 2).ok_or_else(fail)?;
                if !(1..=12).contains(&v) {
                    return Err(format!("parsing time {value:?}: month out of range"));
                }
                self.month = v;
                input = r;
            }
            Chunk::LongWeekDay | Chunk::WeekDay => {
                let (_, r) = name(input, &LONG_DAYS, chunk == Chunk::WeekDay).ok_or_else(fail)?;
                input = r;
            }
            Chunk::Day | Chunk::UnderDay | Chunk::ZeroDay => {
                let trimmed = if chunk == Chunk::UnderDay {
                    input.strip_prefix(' ').unwrap_or(input)
                } else {
                    input
                };
                let min = if chunk == Chunk::ZeroDay { 2 } else { 1 };
                let (v, r) = digits(trimmed, min, 2).ok_or_else(fail)?;
                self.day = v;
                input = r;
            }
            Chunk::UnderYearDay | Chunk::ZeroYearDay => {
                let (_, r) = digits(input.trim_start(), 3, 3).ok_or_else(fail)?;
                input = r;
            }
            Chunk::Hour => {
                let (v, r) = digits(input, 2, 2).ok_or_else(fail)?;
                if v > 23 {
                    return Err(format!("parsing time {value:?}: hour out of range"));
                }
                self.hour = v;
                input = r;
            }
            Chunk::Hour12 | Chunk::ZeroHour12 => {
                let min = if chunk == Chunk::ZeroHour12 { 2 } else { 1 };
                let (v, r) = digits(input, min, 2).ok_or_else(fail)?;
                if v > 12 {
                    return Err(format!("parsing time {value:?}: hour out of range"));
                }
                self.hour = v;
                input = r;
            }
            Chunk::Minute | Chunk::ZeroMinute => {
                let min = if chunk == Chunk::ZeroMinute { 2 } else { 1 };
                let (v, r) = digits(input, min, 2).ok_or_else(fail)?;
                if v > 59 {
                    return Err(format!("parsing time {value:?}: minute out of range"));
                }
                self.minute = v;
                input = r;
            }
            Chunk::Second | Chunk::ZeroSecond => {
                let min = if chunk == Chunk::ZeroSecond { 2 } else { 1 };
                let (v, r) = digits(input, min, 2).ok_or_else(fail)?;
                if v > 59 {
                    return Err(format!("parsing time {value:?}: second out of range"));
                }
                self.second = v;
                input = r;
                // Go accepts a fractional second after the seconds even when the layout has none.
                if (input.starts_with('.') || input.starts_with(','))
                    && !matches!(next_chunk(rest_layout).1, Some((Chunk::Fraction(..), _)))
                    && input[1..].starts_with(|c: char| c.is_ascii_digit())
                {
                    let end = 1 + input[1..]
                        .find(|c: char| !c.is_ascii_digit())
                        .unwrap_or(input.len() - 1);
                    self.nanos = fraction_nanos(&input[1..end]);
                    input = &input[end..];
                }
            }
            Chunk::Fraction(count, trim, _) => {
                let Some(body) = input.strip_prefix(['.', ',']) else {
                    if trim {
                        return Ok(input);
                    }
                    return Err(fail());
                };
                let end = body
                    .find(|c: char| !c.is_ascii_digit())
                    .unwrap_or(body.len());
                if end == 0 || (!trim && end != count) {
                    return Err(fail());
                }
                self.nanos = fraction_nanos(&body[..end]);
                input = &body[end..];
            }
            Chunk::Pm | Chunk::PmLower => {
                let word = input.get(..2).ok_or_else(fail)?;
                self.pm = Some(match word.to_ascii_uppercase().as_str() {
                    "PM" => true,
                    "AM" => false,
                    _ => return Err(fail()),
                });
                input = &input[2..];
            }
            Chunk::Tz => return self.read_zone_name(input, fail),
            Chunk::NumTz {
                iso,
                colon,
                seconds,
                hours_only,
            } => {
                let shape = (iso, colon, seconds, hours_only);
                return self.read_numeric_zone(input, shape, fail);
            }
        }
        Ok(input)
    }

    /// `MST`-style zone abbreviations (or `UTC`).
    fn read_zone_name<'a>(
        &mut self,
        input: &'a str,
        fail: &dyn Fn() -> String,
    ) -> Result<&'a str, String> {
        if let Some(rest) = input.strip_prefix("UTC") {
            self.offset = Some(0);
            return Ok(rest);
        }
        let len = input.bytes().take_while(u8::is_ascii_uppercase).count();
        if !(3..=5).contains(&len) {
            return Err(fail());
        }
        self.abbreviation = Some(input[..len].to_string());
        Ok(&input[len..])
    }

    /// Numeric offsets (`-0700`, `-07:00`, `-07`, `-07:00:00`, ISO `Z07:00`); `shape` is the
    /// layout's `(iso, colon, seconds, hours_only)`.
    fn read_numeric_zone<'a>(
        &mut self,
        input: &'a str,
        (iso, colon, seconds, hours_only): (bool, bool, bool, bool),
        fail: &dyn Fn() -> String,
    ) -> Result<&'a str, String> {
        if iso && let Some(r) = input.strip_prefix('Z') {
            self.offset = Some(0);
            return Ok(r);
        }
        let sign = match input.as_bytes().first() {
            Some(b'+') => 1,
            Some(b'-') => -1,
            _ => return Err(fail()),
        };
        let mut r = &input[1..];
        let (h, next) = digits(r, 2, 2).ok_or_else(fail)?;
        r = next;
        let mut total = h * 3600;
        let part = |r: &mut &str| -> Result<i32, String> {
            if colon {
                *r = r.strip_prefix(':').ok_or_else(fail)?;
            }
            let (v, next) = digits(r, 2, 2).ok_or_else(fail)?;
            *r = next;
            Ok(v)
        };
        if !hours_only {
            total += part(&mut r)? * 60;
        }
        if seconds {
            total += part(&mut r)?;
        }
        self.offset = Some(sign * total);
        Ok(r)
    }

    /// The time the fields name, in `zone` unless the text carried an offset or zone abbreviation.
    fn into_time(self, value: &str, zone: &TimeZone) -> Result<Zoned, String> {
        let mut hour = self.hour;
        if let Some(pm) = self.pm {
            if pm && hour < 12 {
                hour += 12;
            } else if !pm && hour == 12 {
                hour = 0;
            }
        }
        let civil = jiff::civil::Date::new(self.year as i16, self.month as i8, self.day as i8)
            .map_err(|_| format!("parsing time {value:?}: day out of range"))?
            .at(hour as i8, self.minute as i8, self.second as i8, self.nanos);
        let offset = self.offset;
        let zoned = match (offset, self.abbreviation) {
            (Some(seconds), _) => {
                let fixed = Offset::from_seconds(seconds).map_err(|e| e.to_string())?;
                if seconds == 0 && offset.is_some() && zone == &TimeZone::UTC {
                    civil.to_zoned(TimeZone::UTC)
                } else {
                    civil.to_zoned(TimeZone::fixed(fixed))
                }
            }
            (None, Some(abbreviation)) => {
                // A known abbreviation of the location is used with its offset; others get offset 0.
                let local = civil.to_zoned(zone.clone()).map_err(|e| e.to_string())?;
                if zone_abbreviation(&local) == abbreviation {
                    Ok(local)
                } else {
                    civil.to_zoned(TimeZone::fixed(Offset::UTC))
                }
            }
            (None, None) => civil.to_zoned(zone.clone()),
        }
        .map_err(|e| format!("parsing time {value:?}: {e}"))?;
        Ok(zoned)
    }
}

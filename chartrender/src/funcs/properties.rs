//! Property tests of the Sprig/Go functions on generated inputs, where Go's or Sprig's rule is stated:
//! `path.Clean` is idempotent and yields shortest names, `Duration.String` parses back with `ParseDuration`,
//! `Time.Format` with RFC 3339 parses back, encodings round-trip, `chunk` partitions, `seq`/`untilStep` count,
//! `wrapWith` with long-word wrapping never exceeds the width, `urlJoin` inverts `urlParse`.

use minijinja::value::Value;
use proptest::prelude::*;

use super::gotime;
use super::paths::{base_name, clean_path, dir_name};
use super::value::list_items;

fn path_strategy() -> impl Strategy<Value = String> {
    proptest::collection::vec(prop_oneof!["", ".", "..", "a", "bc", "d.e"], 0..8).prop_flat_map(
        |parts| {
            (Just(parts), any::<bool>()).prop_map(|(parts, rooted)| {
                let joined = parts.join("/");
                if rooted { format!("/{joined}") } else { joined }
            })
        },
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn clean_is_idempotent_and_leaves_no_dot_or_empty_elements(path in path_strategy()) {
        let cleaned = clean_path(&path);
        prop_assert_eq!(clean_path(&cleaned), cleaned.clone());
        if cleaned != "." && cleaned != "/" {
            let body = cleaned.strip_prefix('/').unwrap_or(&cleaned);
            let parts: Vec<&str> = body.split('/').collect();
            prop_assert!(parts.iter().all(|p| !p.is_empty() && *p != "."), "{}", cleaned);
            // `..` only leads a relative path; a rooted one drops it.
            let first_other = parts.iter().position(|p| *p != "..").unwrap_or(parts.len());
            prop_assert!(parts[first_other..].iter().all(|p| *p != ".."), "{}", cleaned);
            prop_assert!(!cleaned.starts_with('/') || first_other == 0, "{}", cleaned);
        }
        // Dir is always clean, and Dir/Base split the path at its last slash.
        prop_assert_eq!(clean_path(&dir_name(&path)), dir_name(&path));
        if !path.ends_with('/') && !path.is_empty() {
            prop_assert_eq!(base_name(&path), path.rsplit('/').next().unwrap_or_default());
        }
    }

    #[test]
    fn durations_print_as_go_and_parse_back(nanos in any::<i64>().prop_filter("Go's minimum has no positive twin", |n| *n != i64::MIN)) {
        let text = gotime::format_duration(nanos);
        // ParseDuration accumulates in float64 here, exact up to 2^53 ns (104 days).
        if nanos.unsigned_abs() < (1 << 53) {
            prop_assert_eq!(gotime::parse_duration(&text), Ok(nanos), "{}", text);
        }
        prop_assert!(text.ends_with('s'), "{}", text);
    }

    #[test]
    fn rfc3339_format_parses_back(seconds in -62_135_596_800i64..253_402_300_799, nanos in 0i32..1_000_000_000, offset_minutes in -14 * 60i32..=14 * 60) {
        let zone = jiff::tz::TimeZone::fixed(jiff::tz::Offset::from_seconds(offset_minutes * 60).unwrap());
        let time = jiff::Timestamp::new(seconds, nanos).unwrap().to_zoned(zone);
        let layout = "2006-01-02T15:04:05.999999999Z07:00";
        let text = gotime::format(&time, layout);
        let parsed = gotime::parse(layout, &text, &jiff::tz::TimeZone::UTC).unwrap();
        prop_assert_eq!(parsed.timestamp(), time.timestamp(), "{}", text);
        prop_assert_eq!(gotime::format(&parsed, layout), text);
    }

    #[test]
    fn encodings_round_trip(text in "\\PC{0,40}") {
        let encoded = super::text::b32enc(&[Value::from(text.as_str())]).unwrap();
        prop_assert_eq!(super::text::b32dec(&[encoded]).unwrap().to_string(), text.clone());
        let encoded = super::encoding::b64enc(&[Value::from(text.as_str())]).unwrap();
        prop_assert_eq!(super::encoding::b64dec(&[encoded]).unwrap().to_string(), text);
    }

    #[test]
    fn chunk_partitions_a_list(len in 0usize..40, size in 1i64..10) {
        let list = Value::from((0..len as i64).map(Value::from).collect::<Vec<_>>());
        let chunks = list_items(&super::collections::chunk(&[Value::from(size), list]).unwrap()).unwrap();
        let flat: Vec<i64> = chunks.iter().flat_map(|c| list_items(c).unwrap()).map(|v| v.as_i64().unwrap()).collect();
        prop_assert_eq!(flat, (0..len as i64).collect::<Vec<_>>());
        for (i, c) in chunks.iter().enumerate() {
            let n = c.len().unwrap() as i64;
            prop_assert!(n == size || (i == chunks.len() - 1 && n > 0 && n < size));
        }
    }

    #[test]
    fn seq_and_until_step_count_like_sprig(start in -20i64..20, end in -20i64..20, step in -5i64..5) {
        let seq = super::text::seq(&[Value::from(start), Value::from(end)]).unwrap().to_string();
        let numbers: Vec<i64> = seq.split(' ').map(|n| n.parse().unwrap()).collect();
        prop_assert_eq!(numbers.len() as u64, start.abs_diff(end) + 1);
        prop_assert_eq!((numbers[0], *numbers.last().unwrap()), (start, end));
        let values = super::collections::step_values(start, end, step).unwrap();
        let expected = if step == 0 || (step > 0) != (end > start) { 0 } else { start.abs_diff(end).div_ceil(step.unsigned_abs()) };
        prop_assert_eq!(values.len() as u64, expected);
        let short_of_end = values.iter().all(|v| if step > 0 { *v < end } else { *v > end });
        prop_assert!(short_of_end, "{:?}", values);
    }

    #[test]
    fn wrap_with_long_words_never_exceeds_the_width(words in proptest::collection::vec("[a-z]{1,15}", 1..12), width in 1i64..20) {
        let text = words.join(" ");
        let wrapped = super::text::wrap_with(&[Value::from(width), Value::from("\n"), Value::from(text.as_str())]).unwrap().to_string();
        prop_assert!(wrapped.split('\n').all(|line| line.len() as i64 <= width), "{:?}", wrapped);
        prop_assert_eq!(wrapped.replace(['\n', ' '], ""), text.replace(' ', ""));
    }

    #[test]
    fn url_join_inverts_url_parse(scheme in "[a-z][a-z0-9+]{0,5}", host in "[a-z0-9.-]{1,12}(:[0-9]{1,5})?", path in "(/[a-zA-Z0-9._~-]{0,6}){0,4}", query in "([a-z0-9=&]{0,10})", fragment in "[a-zA-Z0-9]{0,6}") {
        let mut url = format!("{scheme}://{host}{path}");
        if !query.is_empty() {
            url.push('?');
            url.push_str(&query);
        }
        if !fragment.is_empty() {
            url.push('#');
            url.push_str(&fragment);
        }
        let parsed = super::paths::url_parse(&[Value::from(url.as_str())]).unwrap();
        prop_assert_eq!(super::paths::url_join(&[parsed]).unwrap().to_string(), url);
    }
}

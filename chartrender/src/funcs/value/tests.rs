//! Tests of Go value semantics on minijinja values (`super`).

use super::*;

#[test]
fn format_float_matches_go_percent_v() {
    assert_eq!(format_float(1.0), "1");
    assert_eq!(format_float(0.5), "0.5");
    assert_eq!(format_float(8080.0), "8080");
    assert_eq!(format_float(123456.0), "123456");
    assert_eq!(format_float(1e6), "1e+06");
    assert_eq!(format_float(1234567.0), "1.234567e+06");
    assert_eq!(format_float(0.0001), "0.0001");
    assert_eq!(format_float(0.00001), "1e-05");
    assert_eq!(format_float(-2.5), "-2.5");
    assert_eq!(format_float(1e21), "1e+21");
    // Around the whole-number shortcut.
    assert_eq!(format_float(999999.0), "999999");
    assert_eq!(format_float(-999999.0), "-999999");
    assert_eq!(format_float(-1e6), "-1e+06");
    assert_eq!(format_float(999999.5), "999999.5");
    assert_eq!(format_float(-0.0), "-0");
    assert_eq!(format_float(-7.0), "-7");
    assert_eq!(format_float(100000.0), "100000");
}

#[test]
fn go_string_prints_maps_and_lists_like_go() {
    let map = from_json(&serde_json::json!({"b": [1, "x"], "a": null}));
    assert_eq!(go_string(&map), "map[a:<nil> b:[1 x]]");
}

#[test]
fn missing_keys_print_under_strict_undefined_but_fields_of_non_maps_fail() {
    let mut env = Environment::empty();
    env.set_undefined_behavior(minijinja::UndefinedBehavior::Strict);
    env.set_formatter(|out, _state, value| {
        let text = if value.is_undefined() {
            "<no value>"
        } else {
            "v"
        };
        out.write_str(text).map_err(minijinja::Error::from)
    });
    let map = from_json(&serde_json::json!({"s": "text", "n": null}));
    let render = |source: &str| {
        env.render_str(source, minijinja::context! { m => map.clone() })
            .map_err(|e| e.kind())
    };
    assert_eq!(
        render("{{ m.missing }}|{{ m.n }}").as_deref(),
        Ok("<no value>|<no value>")
    );
    assert_eq!(render("{% if m.missing %}x{% endif %}").as_deref(), Ok(""));
    for failing in [
        "{{ m.s.b }}",
        "{% if m.s.b %}{% endif %}",
        "{{ m.missing.b }}",
    ] {
        assert_eq!(
            render(failing),
            Err(minijinja::ErrorKind::UndefinedError),
            "{failing}"
        );
    }
    assert!(missing().is_undefined());
}

#[test]
fn a_view_shares_the_map_under_its_own_type() {
    let map = from_json(&serde_json::json!({"a": 1}));
    let view = GoMap::view(&map, MapType::Values);
    assert_eq!(map_type(&view), Some(MapType::Values));
    assert_eq!(map_type(&map), Some(MapType::Plain));
    GoMap::of(&view)
        .unwrap()
        .update(|m| m.insert("b".into(), Value::from(2)));
    assert_eq!(to_json(&map), serde_json::json!({"a": 1.0, "b": 2}));
    assert_eq!(view.get_attr("a").unwrap(), Value::from(1.0));
    assert!(view.get_attr("missing").unwrap().is_undefined());
    assert_eq!(
        GoMap::of(&view).unwrap().identity(),
        GoMap::of(&map).unwrap().identity()
    );
}

#[test]
fn go_map_hides_nil_entries_from_lookups_but_keeps_the_key() {
    let map = from_json(&serde_json::json!({"a": null}));
    assert!(map.get_attr("a").unwrap().is_undefined());
    assert!(GoMap::of(&map).unwrap().contains("a"));
}

#[test]
fn is_empty_follows_sprig() {
    for empty in [
        serde_json::json!(null),
        serde_json::json!(0),
        serde_json::json!(""),
        serde_json::json!([]),
        serde_json::json!({}),
        serde_json::json!(false),
    ] {
        assert!(is_empty(&from_json(&empty)), "{empty} is empty");
    }
    assert!(!is_empty(&from_json(&serde_json::json!(" "))));
    assert!(!is_empty(&Value::from(0.5)));
}

#[test]
fn to_i64_is_lenient_like_cast() {
    assert_eq!(to_i64(&Value::from("0x10")), 16);
    assert_eq!(to_i64(&Value::from("8.0")), 8);
    assert_eq!(to_i64(&Value::from("abc")), 0);
    assert_eq!(to_i64(&Value::from(3.9)), 3);
    assert_eq!(to_i64(&Value::from(true)), 1);
    // Out of range and NaN give amd64's integer indefinite, as `int64 1e21` does in Helm.
    assert_eq!(to_i64(&Value::from(1e21)), i64::MIN);
    assert_eq!(to_i64(&Value::from(-1e21)), i64::MIN);
    assert_eq!(to_i64(&Value::from(f64::NAN)), i64::MIN);
    assert_eq!(to_i64(&Value::from(-9.2e18)), -9_200_000_000_000_000_000);
}

#[test]
fn go_equal_compares_numbers_across_int_and_float() {
    assert!(go_equal(&Value::from(1), &Value::from(1.0)));
    assert!(!go_equal(&Value::from("1"), &Value::from(1)));
    assert!(go_equal(&Value::UNDEFINED, &Value::from(())));
    assert!(!go_equal(&Value::UNDEFINED, &Value::from("a")));
}

#[test]
fn deep_copy_detaches_nested_maps() {
    let original = from_json(&serde_json::json!({"a": {"b": 1}}));
    let copy = deep_copy(&original);
    let inner = copy.get_attr("a").unwrap();
    inner
        .downcast_object_ref::<GoMap>()
        .unwrap()
        .update(|m| m.remove("b"));
    assert_eq!(to_json(&original), serde_json::json!({"a": {"b": 1.0}}));
}

//! Go value semantics on minijinja values: mutable maps, printing (`%v`), emptiness, conversions, equality.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, LazyLock, PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};

use minijinja::value::{Enumerator, Object, ObjectRepr, StringInput, Value, ValueKind};
use minijinja::{Environment, State};

use super::gostruct::{GoSlice, GoStruct};
use super::gotime::GoTime;
pub(crate) use super::gotype::{kind_of, type_of};
use super::number::number_type;

/// Counts map mutations process-wide; `include` results are reused only while it stays unchanged.
pub(crate) static MUTATIONS: AtomicU64 = AtomicU64::new(0);

/// A Go `map[string]…`: shared and mutable (`set`, `unset`, `merge` change it in place), sorted keys. Two
/// values may share one map under different Go types, as Helm's `.Values` (a `chartutil.Values`) is the very map
/// its parent sees as a `map[string]interface {}` under `.Values.<subchart>`.
#[derive(Debug, Default)]
pub(crate) struct GoMap {
    entries: RwLock<BTreeMap<String, Value>>,
    go_type: MapType,
}

/// The Go type of a [`GoMap`], which `typeOf`, `deepEqual`, `dig` and missing keys observe.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) enum MapType {
    /// `map[string]interface {}`: values files, `dict`, `.Release`; a missing key is nil.
    #[default]
    Plain,
    /// `chartutil.Values`: the root `.`, `.Values` and `.Template`.
    Values,
    /// `map[string]string` (`.Chart.Annotations`): a missing key is the empty string.
    Strings,
}

impl MapType {
    /// Go's `%T`.
    pub(crate) fn name(self) -> &'static str {
        match self {
            MapType::Plain => "map[string]interface {}",
            MapType::Values => "chartutil.Values",
            MapType::Strings => "map[string]string",
        }
    }
}

impl GoMap {
    /// Wraps `entries` into a template value.
    pub(crate) fn value(entries: BTreeMap<String, Value>) -> Value {
        Self::typed(entries, MapType::Plain)
    }

    /// Wraps `entries` into a template value of Go type `go_type`.
    pub(crate) fn typed(entries: BTreeMap<String, Value>, go_type: MapType) -> Value {
        Value::from_object(GoMap {
            entries: RwLock::new(entries),
            go_type,
        })
    }

    /// The map behind `value`: a [`GoMap`] or a [`GoMapView`] of one.
    pub(crate) fn of(value: &Value) -> Option<&GoMap> {
        match value.downcast_object_ref::<GoMap>() {
            Some(map) => Some(map),
            None => value
                .downcast_object_ref::<GoMapView>()?
                .map
                .downcast_object_ref::<GoMap>(),
        }
    }

    /// The map `value` (a [`GoMap`]) seen as Go type `go_type`: changes through either value show in both.
    pub(crate) fn view(value: &Value, go_type: MapType) -> Value {
        Value::from_object(GoMapView {
            map: value.clone(),
            go_type,
        })
    }

    /// The map's Go type.
    pub(crate) fn go_type(&self) -> MapType {
        self.go_type
    }

    /// An identity of the map shared by all its views (for cycle checks and caches).
    pub(crate) fn identity(&self) -> usize {
        std::ptr::from_ref(self) as usize
    }

    /// What a lookup of `key` gives: the entry, or the zero value of the element type for a missing key or a
    /// nil entry.
    fn lookup(&self, key: &str) -> Value {
        match self.get(key) {
            Some(value) if !value.is_none() => value,
            _ if self.go_type == MapType::Strings => Value::from(""),
            _ => missing(),
        }
    }

    /// The entries under the read lock. A panic while the lock was held (a failed template function) leaves the
    /// entries as they were, so a poisoned lock is used as it is.
    fn read_entries(&self) -> RwLockReadGuard<'_, BTreeMap<String, Value>> {
        self.entries.read().unwrap_or_else(PoisonError::into_inner)
    }

    /// The entries under the write lock (poisoned or not, as in [`Self::read_entries`]).
    fn write_entries(&self) -> RwLockWriteGuard<'_, BTreeMap<String, Value>> {
        self.entries.write().unwrap_or_else(PoisonError::into_inner)
    }

    /// A copy of the entries (the lock is not held while the caller works on them).
    pub(crate) fn snapshot(&self) -> BTreeMap<String, Value> {
        self.read_entries().clone()
    }

    /// The values, without their keys.
    pub(crate) fn values(&self) -> Vec<Value> {
        self.read_entries().values().cloned().collect()
    }

    /// Looks up one key.
    pub(crate) fn get(&self, key: &str) -> Option<Value> {
        self.read_entries().get(key).cloned()
    }

    /// Whether `key` is present (even with a nil value).
    pub(crate) fn contains(&self, key: &str) -> bool {
        self.get(key).is_some()
    }

    /// Sets `key` to `value` without counting a change ([`MUTATIONS`]): for the entries the renderer itself puts
    /// into a chart's shared root data before each template (`.Template`), which Helm's engine sets the same way.
    /// What is kept while no map changes is kept per template (its resolved paths, its include cache), so a
    /// template never sees another template's entry through them.
    pub(crate) fn put_own_entry(&self, key: &str, value: Value) {
        let mut entries = self.write_entries();
        match entries.get_mut(key) {
            Some(entry) => *entry = value,
            None => {
                entries.insert(key.to_string(), value);
            }
        }
    }

    /// Runs `change` on the entries under the write lock.
    pub(crate) fn update<R>(&self, change: impl FnOnce(&mut BTreeMap<String, Value>) -> R) -> R {
        MUTATIONS.fetch_add(1, Ordering::Relaxed);
        change(&mut self.write_entries())
    }

    pub(crate) fn len(&self) -> usize {
        self.read_entries().len()
    }
}

impl Object for GoMap {
    fn repr(self: &Arc<Self>) -> ObjectRepr {
        ObjectRepr::Map
    }

    fn get_value(self: &Arc<Self>, key: &Value) -> Option<Value> {
        let key = key.as_str()?;
        self.get_value_by_str(key)
    }

    fn get_value_by_str(self: &Arc<Self>, key: &str) -> Option<Value> {
        // A nil entry behaves like a missing key: printing gives `<no value>`, a field on it is an error (as in
        // Go). Both are [`missing`], never minijinja's plain undefined, which means a field of a non-map.
        Some(self.lookup(key))
    }

    fn enumerate(self: &Arc<Self>) -> Enumerator {
        Enumerator::Values(self.snapshot().into_keys().map(Value::from).collect())
    }

    fn enumerator_len(self: &Arc<Self>) -> Option<usize> {
        Some(self.len())
    }

    fn is_true(self: &Arc<Self>) -> bool {
        self.len() > 0
    }
}

/// A [`GoMap`] seen under another Go type: Helm's `.Values` is a `chartutil.Values`, the very map its parent sees
/// as a `map[string]interface {}` under `.Values.<subchart>`. A separate object, so plain maps keep their entries
/// inline (one allocation and one indirection less on every map).
#[derive(Debug)]
pub(crate) struct GoMapView {
    map: Value,
    go_type: MapType,
}

impl GoMapView {
    fn inner(&self) -> Option<&GoMap> {
        self.map.downcast_object_ref::<GoMap>()
    }
}

impl Object for GoMapView {
    fn repr(self: &Arc<Self>) -> ObjectRepr {
        ObjectRepr::Map
    }

    fn get_value(self: &Arc<Self>, key: &Value) -> Option<Value> {
        self.get_value_by_str(key.as_str()?)
    }

    fn get_value_by_str(self: &Arc<Self>, key: &str) -> Option<Value> {
        self.inner().map(|map| map.lookup(key))
    }

    fn enumerate(self: &Arc<Self>) -> Enumerator {
        let keys = self.inner().map(GoMap::snapshot).unwrap_or_default();
        Enumerator::Values(keys.into_keys().map(Value::from).collect())
    }

    fn enumerator_len(self: &Arc<Self>) -> Option<usize> {
        self.inner().map(GoMap::len)
    }

    fn is_true(self: &Arc<Self>) -> bool {
        self.inner().is_some_and(|map| map.len() > 0)
    }
}

/// The Go type of a map value (`None` for the renderer's own map objects such as `.Files`).
/// The map `value` (a [`GoMap`] or a view of one) seen as Go type `go_type`.
pub(crate) fn retyped(value: &Value, go_type: MapType) -> Value {
    let map = value
        .downcast_object_ref::<GoMapView>()
        .map_or_else(|| value.clone(), |view| view.map.clone());
    GoMap::view(&map, go_type)
}

pub(crate) fn map_type(value: &Value) -> Option<MapType> {
    match value.downcast_object_ref::<GoMapView>() {
        Some(view) => Some(view.go_type),
        None => value.downcast_object_ref::<GoMap>().map(GoMap::go_type),
    }
}

/// What a map gives for a missing key or a nil entry, and what functions return for Go's nil: minijinja's silent
/// undefined (the value of an `if` expression without `else`).
///
/// The environment runs with strict undefined behaviour, under which only the *other*, plain undefined fails when
/// printed, tested or passed on. minijinja produces the plain one where an attribute is looked up on a value that
/// has no attributes (a string, number, list or nil): exactly Go's "can't evaluate field" case. So a field of a
/// non-map fails where it is used, while a missing key of a map keeps Go's `<no value>`, at no cost per lookup.
pub(crate) fn missing() -> Value {
    static MISSING: LazyLock<Value> = LazyLock::new(|| {
        Environment::empty()
            .compile_expression("none if false")
            .and_then(|expression| expression.eval(()))
            .unwrap_or(Value::UNDEFINED)
    });
    MISSING.clone()
}

/// Whether `value` is minijinja's plain undefined, which only a field of a non-map produces (see [`missing`]):
/// minijinja's own check of a concrete argument refuses it under strict undefined behaviour.
pub(crate) fn is_field_of_a_non_map(state: &State, value: &Value) -> bool {
    value.is_undefined() && StringInput::new(state, value).is_err()
}

/// A nil Go slice (`[]string(nil)` from `regexFindAll` without a match, Sprig's `rest`/`initial`/`slice` of an
/// empty list): an empty list to every function and to `%v` (`[]`), but `null` in JSON and YAML.
#[derive(Debug, Default)]
pub(crate) struct NilList;

impl Object for NilList {
    fn repr(self: &Arc<Self>) -> ObjectRepr {
        ObjectRepr::Seq
    }

    fn get_value(self: &Arc<Self>, _key: &Value) -> Option<Value> {
        None
    }

    fn enumerate(self: &Arc<Self>) -> Enumerator {
        Enumerator::Seq(0)
    }
}

/// A [`NilList`] value.
pub(crate) fn nil_list() -> Value {
    Value::from_object(NilList)
}

/// The sorted entries of a map value (a [`GoMap`] or a native minijinja map), or `None` for non-maps.
pub(crate) fn map_entries(value: &Value) -> Option<BTreeMap<String, Value>> {
    if let Some(map) = GoMap::of(value) {
        return Some(map.snapshot());
    }
    if value.kind() != ValueKind::Map {
        return None;
    }
    let mut out = BTreeMap::new();
    for key in value.try_iter().ok()? {
        let item = value.get_item(&key).unwrap_or(Value::UNDEFINED);
        out.insert(key_string(&key), item);
    }
    Some(out)
}

/// A map key as Go would print it.
pub(crate) fn key_string(key: &Value) -> String {
    match key.as_str() {
        Some(s) => s.to_string(),
        None => go_string(key),
    }
}

/// The elements of a list value (strings and maps are not lists).
pub(crate) fn list_items(value: &Value) -> Option<Vec<Value>> {
    match value.kind() {
        ValueKind::Seq | ValueKind::Iterable => Some(value.try_iter().ok()?.collect()),
        _ => None,
    }
}

/// Whether a value is Go's nil (missing, `nil` or JSON null).
pub(crate) fn is_nil(value: &Value) -> bool {
    value.is_undefined() || value.is_none()
}

/// Converts JSON (values files, Chart.yaml) into template values; numbers become float64 like Helm's JSON round trip.
pub(crate) fn from_json(json: &serde_json::Value) -> Value {
    match json {
        serde_json::Value::Null => Value::from(()),
        serde_json::Value::Bool(b) => Value::from(*b),
        serde_json::Value::Number(n) => Value::from(n.as_f64().unwrap_or(0.0)),
        serde_json::Value::String(s) => Value::from(s.as_str()),
        serde_json::Value::Array(items) => {
            Value::from(items.iter().map(from_json).collect::<Vec<_>>())
        }
        serde_json::Value::Object(map) => {
            GoMap::value(map.iter().map(|(k, v)| (k.clone(), from_json(v))).collect())
        }
    }
}

/// Converts JSON keeping integers as integers (for `fromJson`-free internal objects such as `.Release.Revision`).
pub(crate) fn from_json_exact(json: &serde_json::Value) -> Value {
    match json {
        serde_json::Value::Number(n) if n.is_i64() => Value::from(n.as_i64().unwrap_or(0)),
        serde_json::Value::Array(items) => {
            Value::from(items.iter().map(from_json_exact).collect::<Vec<_>>())
        }
        serde_json::Value::Object(map) => GoMap::value(
            map.iter()
                .map(|(k, v)| (k.clone(), from_json_exact(v)))
                .collect(),
        ),
        other => from_json(other),
    }
}

/// Converts a template value into JSON (maps with sorted keys); used by `toJson`, `toYaml` and the values merge.
pub(crate) fn to_json(value: &Value) -> serde_json::Value {
    if value.downcast_object_ref::<NilList>().is_some()
        || value
            .downcast_object_ref::<GoSlice>()
            .is_some_and(|slice| slice.nil)
    {
        return serde_json::Value::Null;
    }
    match value.kind() {
        ValueKind::Undefined | ValueKind::None => serde_json::Value::Null,
        ValueKind::Bool => serde_json::Value::Bool(value.is_true()),
        ValueKind::Number => {
            if value.is_integer() {
                serde_json::Value::from(value.as_i64().unwrap_or(0))
            } else {
                let f = f64::try_from(value.clone()).unwrap_or(0.0);
                serde_json::Number::from_f64(f)
                    .map_or(serde_json::Value::Null, serde_json::Value::Number)
            }
        }
        ValueKind::String => {
            serde_json::Value::String(value.as_str().unwrap_or_default().to_string())
        }
        // encoding/json writes a []byte as standard base64.
        ValueKind::Bytes => serde_json::Value::String(base64::Engine::encode(
            &base64::engine::general_purpose::STANDARD,
            value.as_bytes().unwrap_or_default(),
        )),
        ValueKind::Seq | ValueKind::Iterable => serde_json::Value::Array(
            list_items(value)
                .unwrap_or_default()
                .iter()
                .map(to_json)
                .collect(),
        ),
        ValueKind::Map => serde_json::Value::Object(
            map_entries(value)
                .unwrap_or_default()
                .iter()
                .map(|(k, v)| (k.clone(), to_json(v)))
                .collect(),
        ),
        ValueKind::Plain if value.downcast_object_ref::<GoStruct>().is_some() => value
            .downcast_object_ref::<GoStruct>()
            .map_or(serde_json::Value::Null, GoStruct::to_json),
        ValueKind::Plain if crate::objects::struct_json(value).is_some() => {
            crate::objects::struct_json(value).unwrap_or_default()
        }
        ValueKind::Plain | ValueKind::Invalid => match value.downcast_object_ref::<GoTime>() {
            // encoding/json writes a time.Time as RFC 3339 with nanoseconds.
            Some(time) => serde_json::Value::String(super::gotime::format(
                &time.zoned,
                "2006-01-02T15:04:05.999999999Z07:00",
            )),
            None => serde_json::Value::String(value.to_string()),
        },
        _ => serde_json::Value::String(value.to_string()),
    }
}

/// A float as Go's `%v`/`strconv.FormatFloat(f, 'g', -1, 64)` prints it (`1`, `0.5`, `1e+06`).
pub(crate) fn format_float(f: f64) -> String {
    if f.is_nan() {
        return "NaN".into();
    }
    if f.is_infinite() {
        return if f > 0.0 {
            "+Inf".into()
        } else {
            "-Inf".into()
        };
    }
    if f == 0.0 {
        return if f.is_sign_negative() {
            "-0".into()
        } else {
            "0".into()
        };
    }
    // Whole numbers below 1e6 (ports, replica counts: most numbers templates print) are their integer digits.
    if f.fract() == 0.0 && f.abs() < 1e6 {
        return (f as i64).to_string();
    }
    // Rust's `{:e}` gives the shortest round-trip digits: "1.234e6".
    let scientific = format!("{f:e}");
    let (mantissa, exponent) = scientific.split_once('e').unwrap_or((&scientific, "0"));
    let exponent: i32 = exponent.parse().unwrap_or(0);
    let negative = mantissa.starts_with('-');
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    let sign = if negative { "-" } else { "" };
    // Shortest `%g` uses precision 6 for the decision: exponent form below 1e-4 and from 1e6 on.
    if !(-4..6).contains(&exponent) {
        let (first, rest) = digits.split_at(1);
        let fraction = if rest.is_empty() {
            String::new()
        } else {
            format!(".{rest}")
        };
        let exp_sign = if exponent < 0 { '-' } else { '+' };
        return format!("{sign}{first}{fraction}e{exp_sign}{:02}", exponent.abs());
    }
    let exponent = exponent as isize;
    let len = digits.len() as isize;
    if exponent < 0 {
        let zeros = "0".repeat((-exponent - 1) as usize);
        return format!("{sign}0.{zeros}{digits}");
    }
    if exponent + 1 >= len {
        let zeros = "0".repeat((exponent + 1 - len) as usize);
        return format!("{sign}{digits}{zeros}");
    }
    let (int, frac) = digits.split_at((exponent + 1) as usize);
    format!("{sign}{int}.{frac}")
}

/// Formats a value like Go's `fmt.Sprint`/`%v` (nil as `<nil>`).
pub(crate) fn go_string(value: &Value) -> String {
    let mut out = String::new();
    write_go(&mut out, value);
    out
}

/// Appends a value formatted like Go's `%v`.
pub(crate) fn write_go(out: &mut String, value: &Value) {
    match value.kind() {
        ValueKind::Undefined | ValueKind::None => out.push_str("<nil>"),
        ValueKind::Bool => out.push_str(if value.is_true() { "true" } else { "false" }),
        ValueKind::Number => {
            if value.is_integer() {
                let _ = write!(out, "{value}");
            } else {
                out.push_str(&format_float(f64::try_from(value.clone()).unwrap_or(0.0)));
            }
        }
        ValueKind::String => out.push_str(value.as_str().unwrap_or_default()),
        ValueKind::Bytes => {
            out.push('[');
            let bytes = value.as_bytes().unwrap_or_default();
            let joined: Vec<String> = bytes.iter().map(u8::to_string).collect();
            out.push_str(&joined.join(" "));
            out.push(']');
        }
        ValueKind::Seq | ValueKind::Iterable => {
            out.push('[');
            for (i, item) in list_items(value).unwrap_or_default().iter().enumerate() {
                if i > 0 {
                    out.push(' ');
                }
                write_go(out, item);
            }
            out.push(']');
        }
        ValueKind::Map if GoMap::of(value).is_some() || value.as_object().is_none() => {
            out.push_str("map[");
            for (i, (key, item)) in map_entries(value).unwrap_or_default().iter().enumerate() {
                if i > 0 {
                    out.push(' ');
                }
                out.push_str(key);
                out.push(':');
                write_go(out, item);
            }
            out.push(']');
        }
        _ => {
            let _ = write!(out, "{value}");
        }
    }
}

/// Sprig's `empty`: nil, false, 0, and empty strings, lists and maps.
pub(crate) fn is_empty(value: &Value) -> bool {
    match value.kind() {
        ValueKind::Undefined | ValueKind::None => true,
        ValueKind::Bool | ValueKind::Number => !value.is_true(),
        ValueKind::String => value.as_str().is_none_or(str::is_empty),
        ValueKind::Bytes => value.as_bytes().is_none_or(<[u8]>::is_empty),
        ValueKind::Seq | ValueKind::Map | ValueKind::Iterable => value.len() == Some(0),
        _ => false,
    }
}

/// `cast.ToInt64` as Sprig uses it: lenient, 0 for anything it cannot convert.
pub(crate) fn to_i64(value: &Value) -> i64 {
    match value.kind() {
        ValueKind::Bool => i64::from(value.is_true()),
        ValueKind::Number => {
            if value.is_integer() {
                value.as_i64().unwrap_or(0)
            } else {
                float_to_int64(f64::try_from(value.clone()).unwrap_or(0.0))
            }
        }
        ValueKind::String => parse_go_int(value.as_str().unwrap_or_default()).unwrap_or(0),
        _ => 0,
    }
}

/// Go's `int64(f)` on amd64, where Helm runs: truncation toward zero, and the "integer indefinite" `i64::MIN` for
/// NaN and anything out of range (Rust's `as` would saturate instead).
pub(crate) fn float_to_int64(f: f64) -> i64 {
    const LIMIT: f64 = 9_223_372_036_854_775_808.0; // 2^63
    if !(-LIMIT..LIMIT).contains(&f) {
        i64::MIN
    } else {
        f as i64
    }
}

/// `strconv.ParseInt(s, 0, 64)` after cast's trimming of a zero decimal part (`"8.0"` → 8).
pub(crate) fn parse_go_int(text: &str) -> Option<i64> {
    let text = text
        .strip_suffix(".0")
        .map_or(text, |t| t.trim_end_matches('0'));
    let text = if text.is_empty() { "0" } else { text };
    let (negative, digits) = match text.as_bytes().first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    };
    let lower = digits.to_ascii_lowercase().replace('_', "");
    let value = if let Some(hex) = lower.strip_prefix("0x") {
        i64::from_str_radix(hex, 16).ok()?
    } else if let Some(bin) = lower.strip_prefix("0b") {
        i64::from_str_radix(bin, 2).ok()?
    } else if let Some(oct) = lower.strip_prefix("0o") {
        i64::from_str_radix(oct, 8).ok()?
    } else if lower.len() > 1 && lower.starts_with('0') {
        i64::from_str_radix(&lower[1..], 8).ok()?
    } else {
        if lower.is_empty() || !lower.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        lower.parse().ok()?
    };
    Some(if negative { -value } else { value })
}

/// `cast.ToFloat64`: lenient, 0 for anything it cannot convert.
pub(crate) fn to_f64(value: &Value) -> f64 {
    match value.kind() {
        ValueKind::Bool => f64::from(u8::from(value.is_true())),
        ValueKind::Number => f64::try_from(value.clone()).unwrap_or(0.0),
        ValueKind::String => value
            .as_str()
            .unwrap_or_default()
            .trim()
            .parse()
            .unwrap_or(0.0),
        _ => 0.0,
    }
}

/// Sprig's `strval`/`toString`: strings unchanged, everything else `%v`.
pub(crate) fn to_go_string(value: &Value) -> String {
    match value.as_str() {
        Some(s) => s.to_string(),
        None => go_string(value),
    }
}

/// The Go type of a typed slice (`None` for `[]interface {}` and the other lists).
fn slice_type(value: &Value) -> Option<&'static str> {
    value
        .downcast_object_ref::<GoSlice>()
        .map(|slice| slice.type_name)
}

/// Go's `reflect.DeepEqual` as Sprig's `has`, `without`, `uniq` and `deepEqual` use it: numbers are equal only
/// with the same Go type (`1` is not `int64 1` nor `1.0`), lists and maps element by element.
pub(crate) fn deep_equal(a: &Value, b: &Value) -> bool {
    deep_equal_to(a, b, 0)
}

fn deep_equal_to(a: &Value, b: &Value, depth: usize) -> bool {
    if depth > MAX_COPY_DEPTH {
        return false;
    }
    if is_nil(a) || is_nil(b) {
        return is_nil(a) && is_nil(b);
    }
    if a.kind() != b.kind() {
        return false;
    }
    match a.kind() {
        ValueKind::Number => number_type(a) == number_type(b) && a == b,
        ValueKind::Seq | ValueKind::Iterable if slice_type(a) != slice_type(b) => false,
        ValueKind::Seq | ValueKind::Iterable => match (list_items(a), list_items(b)) {
            (Some(x), Some(y)) => {
                x.len() == y.len()
                    && x.iter()
                        .zip(&y)
                        .all(|(p, q)| deep_equal_to(p, q, depth + 1))
            }
            _ => false,
        },
        ValueKind::Map if map_type(a) != map_type(b) => false,
        ValueKind::Map => match (map_entries(a), map_entries(b)) {
            (Some(x), Some(y)) => {
                x.len() == y.len()
                    && x.iter()
                        .all(|(key, p)| y.get(key).is_some_and(|q| deep_equal_to(p, q, depth + 1)))
            }
            _ => false,
        },
        _ => a == b,
    }
}

/// A deep copy: new maps and lists all the way down, so mutating the copy leaves the original alone. Templates
/// cannot build a map that contains itself (`crate::nesting`); the copy depth is bounded all the same, for values
/// nested past that bound through its documented gap (shared below [`MAX_COPY_DEPTH`]).
pub(crate) fn deep_copy(value: &Value) -> Value {
    deep_copy_to(value, 0)
}

const MAX_COPY_DEPTH: usize = 1_000;

fn deep_copy_to(value: &Value, depth: usize) -> Value {
    if depth > MAX_COPY_DEPTH {
        return value.clone();
    }
    match value.kind() {
        ValueKind::Map if GoMap::of(value).is_some() || value.as_object().is_none() => {
            // copystructure keeps the map's type.
            let go_type = map_type(value).unwrap_or(MapType::Plain);
            GoMap::typed(
                map_entries(value)
                    .unwrap_or_default()
                    .iter()
                    .map(|(k, v)| (k.clone(), deep_copy_to(v, depth + 1)))
                    .collect(),
                go_type,
            )
        }
        ValueKind::Seq => Value::from(
            list_items(value)
                .unwrap_or_default()
                .iter()
                .map(|v| deep_copy_to(v, depth + 1))
                .collect::<Vec<_>>(),
        ),
        _ => value.clone(),
    }
}

/// Go's `eq` for one pair, lenient about int/float mixes (Go would refuse to compare them).
pub(crate) fn go_equal(a: &Value, b: &Value) -> bool {
    if is_nil(a) || is_nil(b) {
        return is_nil(a) && is_nil(b);
    }
    if a.kind() == ValueKind::Number && b.kind() == ValueKind::Number {
        if a.is_integer() && b.is_integer() {
            return a.as_i64() == b.as_i64();
        }
        return to_f64(a) == to_f64(b);
    }
    if let (Some(x), Some(y)) = (a.as_str(), b.as_str()) {
        return x == y;
    }
    if a.kind() != b.kind() {
        return false;
    }
    if a.kind() == ValueKind::Map {
        return to_json(a) == to_json(b);
    }
    a == b
}

#[cfg(test)]
mod tests;

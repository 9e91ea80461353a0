//! Reads a values document (the first of a stream, as go-yaml v2 does) into JSON in the same parse, turning map
//! keys into strings as sigs.k8s.io/yaml does with the keys go-yaml v2 hands it: strings stay, integers and
//! booleans are spelled out, floats take Go's 32-bit shortest form. Two kinds of key have no JSON spelling there, and Helm refuses the whole file: a null key
//! (`~:`, `null:`) and an unsigned integer above `int64` (`9223372036854775808:`, `0x8000000000000000:`). Such a
//! key is reported with sigs.k8s.io/yaml's text, which prints the key's type, the key and its value with Go's
//! `%+#v` ([`go_syntax`]).
//!
//! The keys reach this reader after [`crate::yaml11`]'s rewrite, so the YAML 1.1 readings (`0x1F:`, `y:`) are
//! already strings; what is left for the parser to type is the YAML 1.2 reading that agrees with go-yaml v2.

use std::cell::RefCell;
use std::fmt;

use serde::de::{self, DeserializeSeed, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Number, Value};

/// Why a values document was not read.
#[derive(Debug)]
pub(crate) enum ValuesYamlError {
    /// Not YAML, or not what the reader takes.
    Yaml(serde_yaml::Error),
    /// A key or value Helm refuses: the message sigs.k8s.io/yaml gives after `error converting YAML to JSON: `
    /// (`Unsupported map key of type: …`, `yaml: !!binary value contains invalid base64 data`).
    Refused(String),
}

/// Parses `data` (already rewritten for YAML 1.1) as one YAML document read into JSON.
pub(crate) fn from_slice(data: &[u8]) -> Result<Value, ValuesYamlError> {
    seedlet_yamlguard::check(data)
        .map_err(|e| ValuesYamlError::Yaml(<serde_yaml::Error as de::Error>::custom(e)))?;
    let refusal = RefCell::new(None);
    // go-yaml v2's Unmarshal reads the first document and never looks at the rest (not even for errors).
    let result = match serde_yaml::Deserializer::from_slice(data).next() {
        Some(document) => ValueSeed { refusal: &refusal }.deserialize(document),
        None => Ok(Value::Null),
    };
    match (result, refusal.into_inner()) {
        (Ok(value), _) => Ok(value),
        (Err(_), Some(message)) => Err(ValuesYamlError::Refused(message)),
        (Err(e), None) => Err(ValuesYamlError::Yaml(e)),
    }
}

/// Builds JSON; records a refused key's message in `refusal` and fails.
#[derive(Clone, Copy)]
struct ValueSeed<'r> {
    refusal: &'r RefCell<Option<String>>,
}

impl<'de> DeserializeSeed<'de> for ValueSeed<'_> {
    type Value = Value;
    fn deserialize<D: de::Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for ValueSeed<'_> {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any YAML value")
    }
    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_bool<E>(self, b: bool) -> Result<Value, E> {
        Ok(Value::Bool(b))
    }
    fn visit_i64<E>(self, n: i64) -> Result<Value, E> {
        Ok(Value::Number(n.into()))
    }
    fn visit_u64<E>(self, n: u64) -> Result<Value, E> {
        Ok(Value::Number(n.into()))
    }
    // Beyond 64 bits go-yaml v2 reads a float (`100000000000000000000` is 1e+20), as for keys.
    #[allow(clippy::cast_precision_loss)]
    fn visit_i128<E>(self, n: i128) -> Result<Value, E> {
        Ok(Number::from_f64(n as f64).map_or(Value::Null, Value::Number))
    }
    #[allow(clippy::cast_precision_loss)]
    fn visit_u128<E>(self, n: u128) -> Result<Value, E> {
        Ok(Number::from_f64(n as f64).map_or(Value::Null, Value::Number))
    }
    fn visit_f64<E>(self, f: f64) -> Result<Value, E> {
        Ok(Number::from_f64(f).map_or(Value::Null, Value::Number))
    }
    fn visit_str<E>(self, s: &str) -> Result<Value, E> {
        Ok(Value::String(s.to_string()))
    }
    fn visit_string<E>(self, s: String) -> Result<Value, E> {
        Ok(Value::String(s))
    }
    fn visit_some<D: de::Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        self.deserialize(d)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element_seed(self)? {
            items.push(item);
        }
        Ok(Value::Array(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut out = Map::new();
        while let Some(key) = map.next_key_seed(KeySeed)? {
            match key {
                Key::Json(key) => {
                    let value = map.next_value_seed(self)?;
                    out.insert(key, value);
                }
                Key::Refused(key) => {
                    // sigs.k8s.io/yaml looks at a map's keys before it converts their values, so this key is
                    // reported even when its value holds another refused key.
                    let value = map.next_value_seed(GoSeed)?;
                    let message = format!(
                        "Unsupported map key of type: {}, key: {}, value: {}",
                        key.go_type(),
                        go_syntax(&key, true),
                        go_syntax(&value, true)
                    );
                    *self.refusal.borrow_mut() = Some(message);
                    return Err(de::Error::custom("unsupported map key"));
                }
            }
        }
        Ok(Value::Object(out))
    }
}

/// A map key: its JSON spelling, or the go-yaml v2 value sigs.k8s.io/yaml refuses.
enum Key {
    Json(String),
    Refused(Go),
}

struct KeySeed;

impl<'de> DeserializeSeed<'de> for KeySeed {
    type Value = Key;
    fn deserialize<D: de::Deserializer<'de>>(self, deserializer: D) -> Result<Key, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl Visitor<'_> for KeySeed {
    type Value = Key;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a scalar map key")
    }
    fn visit_unit<E>(self) -> Result<Key, E> {
        Ok(Key::Refused(Go::Nil))
    }
    fn visit_none<E>(self) -> Result<Key, E> {
        Ok(Key::Refused(Go::Nil))
    }
    fn visit_bool<E>(self, b: bool) -> Result<Key, E> {
        Ok(Key::Json(b.to_string()))
    }
    fn visit_i64<E>(self, n: i64) -> Result<Key, E> {
        Ok(Key::Json(n.to_string()))
    }
    fn visit_u64<E>(self, n: u64) -> Result<Key, E> {
        Ok(match i64::try_from(n) {
            Ok(_) => Key::Json(n.to_string()),
            Err(_) => Key::Refused(Go::Uint(n)),
        })
    }
    // Beyond 64 bits Go's integer parsers give up and go-yaml v2 reads a float.
    #[allow(clippy::cast_precision_loss)]
    fn visit_i128<E>(self, n: i128) -> Result<Key, E> {
        Ok(Key::Json(crate::yaml11::go_float32_key(n as f64)))
    }
    #[allow(clippy::cast_precision_loss)]
    fn visit_u128<E>(self, n: u128) -> Result<Key, E> {
        Ok(Key::Json(crate::yaml11::go_float32_key(n as f64)))
    }
    fn visit_f64<E>(self, f: f64) -> Result<Key, E> {
        Ok(Key::Json(crate::yaml11::go_float32_key(f)))
    }
    fn visit_str<E>(self, s: &str) -> Result<Key, E> {
        Ok(Key::Json(s.to_string()))
    }
    fn visit_string<E>(self, s: String) -> Result<Key, E> {
        Ok(Key::Json(s))
    }
}

/// A go-yaml v2 value as Go holds it in an `interface{}`, kept only to print a refused key's value.
#[derive(Debug, Clone, PartialEq)]
enum Go {
    Nil,
    Bool(bool),
    Float(f64),
    Int(i64),
    Str(String),
    Uint(u64),
    List(Vec<Go>),
    Map(Vec<(Go, Go)>),
}

impl Go {
    /// `reflect.TypeOf(v)` printed with `%s` (only the kinds a refused key has are asked).
    fn go_type(&self) -> &'static str {
        match self {
            Go::Nil => "%!s(<nil>)",
            Go::Bool(_) => "bool",
            Go::Float(_) => "float64",
            Go::Int(_) => "int",
            Go::Str(_) => "string",
            Go::Uint(_) => "uint64",
            Go::List(_) => "[]interface {}",
            Go::Map(_) => "map[interface {}]interface {}",
        }
    }

    /// The place of this value's dynamic type in the order Go's `fmt` sorts an `interface{}`-keyed map by (the
    /// order of the type descriptors in the reference binary: nil first, then bool, float64, int, string, uint64).
    fn type_rank(&self) -> u8 {
        match self {
            Go::Nil => 0,
            Go::Bool(_) => 1,
            Go::Float(_) => 2,
            Go::Int(_) => 3,
            Go::Str(_) => 4,
            Go::Uint(_) => 5,
            Go::List(_) => 6,
            Go::Map(_) => 7,
        }
    }
}

/// Go's `fmt` order of two map keys: by type, then by value (NaN first among floats).
fn go_key_order(a: &Go, b: &Go) -> std::cmp::Ordering {
    a.type_rank()
        .cmp(&b.type_rank())
        .then_with(|| match (a, b) {
            (Go::Bool(x), Go::Bool(y)) => x.cmp(y),
            (Go::Float(x), Go::Float(y)) => match (x.is_nan(), y.is_nan()) {
                (true, true) => std::cmp::Ordering::Equal,
                (true, false) => std::cmp::Ordering::Less,
                (false, true) => std::cmp::Ordering::Greater,
                (false, false) => x.total_cmp(y),
            },
            (Go::Int(x), Go::Int(y)) => x.cmp(y),
            (Go::Str(x), Go::Str(y)) => x.cmp(y),
            (Go::Uint(x), Go::Uint(y)) => x.cmp(y),
            _ => std::cmp::Ordering::Equal,
        })
}

/// `v` printed with Go's `%+#v`; `top` is false inside a list or map, where a nil prints with its type.
fn go_syntax(v: &Go, top: bool) -> String {
    match v {
        Go::Nil if top => "<nil>".into(),
        Go::Nil => "interface {}(nil)".into(),
        Go::Bool(b) => b.to_string(),
        Go::Float(f) => crate::funcs::value::format_float(*f),
        Go::Int(n) => n.to_string(),
        Go::Str(s) => crate::funcs::printf::quote_go(s),
        Go::Uint(n) => format!("{n:#x}"),
        Go::List(items) => {
            let items: Vec<String> = items.iter().map(|i| go_syntax(i, false)).collect();
            format!("[]interface {{}}{{{}}}", items.join(", "))
        }
        Go::Map(entries) => {
            let mut sorted: Vec<&(Go, Go)> = entries.iter().collect();
            sorted.sort_by(|a, b| go_key_order(&a.0, &b.0));
            let entries: Vec<String> = sorted
                .iter()
                .map(|(k, v)| format!("{}:{}", go_syntax(k, false), go_syntax(v, false)))
                .collect();
            format!(
                "map[interface {{}}]interface {{}}{{{}}}",
                entries.join(", ")
            )
        }
    }
}

struct GoSeed;

impl<'de> DeserializeSeed<'de> for GoSeed {
    type Value = Go;
    fn deserialize<D: de::Deserializer<'de>>(self, deserializer: D) -> Result<Go, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for GoSeed {
    type Value = Go;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any YAML value")
    }
    fn visit_unit<E>(self) -> Result<Go, E> {
        Ok(Go::Nil)
    }
    fn visit_none<E>(self) -> Result<Go, E> {
        Ok(Go::Nil)
    }
    fn visit_bool<E>(self, b: bool) -> Result<Go, E> {
        Ok(Go::Bool(b))
    }
    fn visit_i64<E>(self, n: i64) -> Result<Go, E> {
        Ok(Go::Int(n))
    }
    fn visit_u64<E>(self, n: u64) -> Result<Go, E> {
        Ok(i64::try_from(n).map_or(Go::Uint(n), Go::Int))
    }
    #[allow(clippy::cast_precision_loss)]
    fn visit_i128<E>(self, n: i128) -> Result<Go, E> {
        Ok(Go::Float(n as f64))
    }
    #[allow(clippy::cast_precision_loss)]
    fn visit_u128<E>(self, n: u128) -> Result<Go, E> {
        Ok(Go::Float(n as f64))
    }
    fn visit_f64<E>(self, f: f64) -> Result<Go, E> {
        Ok(Go::Float(f))
    }
    fn visit_str<E>(self, s: &str) -> Result<Go, E> {
        Ok(Go::Str(s.to_string()))
    }
    fn visit_string<E>(self, s: String) -> Result<Go, E> {
        Ok(Go::Str(s))
    }
    fn visit_some<D: de::Deserializer<'de>>(self, d: D) -> Result<Go, D::Error> {
        self.deserialize(d)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Go, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element_seed(GoSeed)? {
            items.push(item);
        }
        Ok(Go::List(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Go, A::Error> {
        let mut entries = Vec::new();
        while let Some(key) = map.next_key_seed(GoSeed)? {
            let value = map.next_value_seed(GoSeed)?;
            entries.push((key, value));
        }
        Ok(Go::Map(entries))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refusal(text: &str) -> Option<String> {
        match from_slice(text.as_bytes()) {
            Err(ValuesYamlError::Refused(message)) => Some(message),
            _ => None,
        }
    }

    #[test]
    fn keys_helm_refuses_are_reported_with_sigs_yaml_text() {
        let nil = "Unsupported map key of type: %!s(<nil>), key: <nil>, value: ";
        let big = "Unsupported map key of type: uint64, key: 0x8000000000000000, value: ";
        for (text, message) in [
            ("~: 1\n", format!("{nil}1")),
            ("null: 1\n", format!("{nil}1")),
            ("NULL:\n", format!("{nil}<nil>")),
            ("a:\n  ~: true\n", format!("{nil}true")),
            ("l:\n- {~: 2}\n", format!("{nil}2")),
            ("9223372036854775808: x\n", format!("{big}\"x\"")),
            ("0x8000000000000000: 1.5\n", format!("{big}1.5")),
            (
                "9223372036854775808: [1, ~]\n",
                format!("{big}[]interface {{}}{{1, interface {{}}(nil)}}"),
            ),
            (
                "~: {b: 1, a: [], 3: x, 1.5: true, false: z, ~: n, 9223372036854775808: {}}\n",
                format!(
                    "{nil}map[interface {{}}]interface {{}}{{interface {{}}(nil):\"n\", false:\"z\", 1.5:true, \
                     3:\"x\", \"a\":[]interface {{}}{{}}, \"b\":1, 0x8000000000000000:map[interface {{}}]interface {{}}{{}}}}"
                ),
            ),
        ] {
            assert_eq!(refusal(text).as_deref(), Some(message.as_str()), "{text}");
        }
    }

    #[test]
    fn keys_sigs_yaml_converts_read_as_before() {
        for (text, json) in [
            ("\"~\": 1\n", serde_json::json!({"~": 1})),
            (
                "9223372036854775807: 1\n",
                serde_json::json!({"9223372036854775807": 1}),
            ),
            (
                "-5: a\n0.5: b\ntrue: c\n",
                serde_json::json!({"-5": "a", "0.5": "b", "true": "c"}),
            ),
            (
                "a: [1, {b: ~}]\n",
                serde_json::json!({"a": [1, {"b": null}]}),
            ),
            (
                "a: 100000000000000000000\nb: [-100000000000000000000]\n",
                serde_json::json!({"a": 1e20, "b": [-1e20]}),
            ),
            // Only the first document counts, as in go-yaml v2.
            ("a: 1\n---\nb: 2\n", serde_json::json!({"a": 1})),
            ("a: 1\n---\n[\n", serde_json::json!({"a": 1})),
            ("---\n# c\n---\nb: 2\n", serde_json::Value::Null),
            ("", serde_json::Value::Null),
        ] {
            assert_eq!(from_slice(text.as_bytes()).unwrap(), json, "{text}");
        }
    }
}

//! Sprig/Helm encoding functions: base64, checksums, `toYaml`/`toJson` and their parsing counterparts.

use base64::Engine as _;
use minijinja::Error;
use minijinja::value::Value;
use sha2::Digest as _;

use super::value::{from_json, to_json};
use super::{arg_str, fail, gostring, goyaml, want, yaml_errors};

/// `b64enc s`
pub(crate) fn b64enc(args: &[Value]) -> Result<Value, Error> {
    want("b64enc", args, 1)?;
    Ok(Value::from(
        base64::engine::general_purpose::STANDARD.encode(gostring::to_bytes(&arg_str(args, 0))),
    ))
}

/// `b64dec s`: Sprig returns the error text instead of failing.
pub(crate) fn b64dec(args: &[Value]) -> Result<Value, Error> {
    want("b64dec", args, 1)?;
    Ok(Value::from(
        match base64::engine::general_purpose::STANDARD.decode(arg_str(args, 0)) {
            Ok(bytes) => gostring::from_bytes(&bytes),
            Err(e) => e.to_string(),
        },
    ))
}

/// `sha256sum s` (lower-case hex)
pub(crate) fn sha256sum(args: &[Value]) -> Result<Value, Error> {
    want("sha256sum", args, 1)?;
    Ok(Value::from(hex::encode(sha2::Sha256::digest(
        gostring::to_bytes(&arg_str(args, 0)),
    ))))
}

/// `adler32sum s` (decimal)
pub(crate) fn adler32sum(args: &[Value]) -> Result<Value, Error> {
    want("adler32sum", args, 1)?;
    let (mut a, mut b) = (1u32, 0u32);
    for &byte in gostring::to_bytes(&arg_str(args, 0)).iter() {
        a = (a + u32::from(byte)) % 65521;
        b = (b + a) % 65521;
    }
    Ok(Value::from(((b << 16) | a).to_string()))
}

/// `toYaml v`: Helm's output with the trailing newline removed; "" on error.
pub(crate) fn to_yaml(args: &[Value]) -> Result<Value, Error> {
    want("toYaml", args, 1)?;
    crate::meter::check_printed("toYaml", args)?;
    let yaml = goyaml::to_yaml(&to_json(&args[0]));
    // sigs.k8s.io/yaml goes through encoding/json, which makes each stray byte U+FFFD.
    let yaml = gostring::printable(&yaml);
    Ok(Value::from(yaml.strip_suffix('\n').unwrap_or(&yaml)))
}

/// `toJson v` (compact, sorted keys, HTML characters escaped like Go).
pub(crate) fn to_json_fn(args: &[Value]) -> Result<Value, Error> {
    want("toJson", args, 1)?;
    crate::meter::check_printed("toJson", args)?;
    Ok(Value::from(go_json(&to_json(&args[0]), true)))
}

/// `toRawJson v` (no HTML escaping)
pub(crate) fn to_raw_json(args: &[Value]) -> Result<Value, Error> {
    want("toRawJson", args, 1)?;
    crate::meter::check_printed("toRawJson", args)?;
    Ok(Value::from(go_json(&to_json(&args[0]), false)))
}

/// `toPrettyJson v` (two-space indent)
pub(crate) fn to_pretty_json(args: &[Value]) -> Result<Value, Error> {
    want("toPrettyJson", args, 1)?;
    crate::meter::check_printed("toPrettyJson", args)?;
    let mut text = String::new();
    write_go_json(&mut text, &to_json(&args[0]), Some(0));
    Ok(Value::from(gostring::json(escape_html(&text))))
}

/// Go's encoding/json output: numbers as Go writes a float64, `<>&` escaped when asked.
fn go_json(value: &serde_json::Value, html: bool) -> String {
    let mut text = String::new();
    write_go_json(&mut text, value, None);
    gostring::json(if html { escape_html(&text) } else { text })
}

/// Writes `value` as encoding/json does; `indent` is the current depth of `json.MarshalIndent(v, "", "  ")`, or
/// `None` for compact output.
fn write_go_json(out: &mut String, value: &serde_json::Value, indent: Option<usize>) {
    let newline = |out: &mut String, depth: usize| {
        out.push('\n');
        out.push_str(&"  ".repeat(depth));
    };
    match value {
        serde_json::Value::Number(n) if !n.is_i64() && !n.is_u64() => {
            out.push_str(&go_json_float(n.as_f64().unwrap_or(0.0)));
        }
        serde_json::Value::Array(items) if !items.is_empty() => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                if let Some(depth) = indent {
                    newline(out, depth + 1);
                }
                write_go_json(out, item, indent.map(|d| d + 1));
            }
            if let Some(depth) = indent {
                newline(out, depth);
            }
            out.push(']');
        }
        serde_json::Value::Object(map) if !map.is_empty() => {
            out.push('{');
            for (i, (key, item)) in map.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                if let Some(depth) = indent {
                    newline(out, depth + 1);
                }
                out.push_str(&serde_json::Value::String(key.clone()).to_string());
                out.push(':');
                if indent.is_some() {
                    out.push(' ');
                }
                write_go_json(out, item, indent.map(|d| d + 1));
            }
            if let Some(depth) = indent {
                newline(out, depth);
            }
            out.push('}');
        }
        other => out.push_str(&other.to_string()),
    }
}

/// A float64 as encoding/json writes it: shortest digits, plain from 1e-6 to below 1e21, else `1e+21`/`1e-7`.
fn go_json_float(f: f64) -> String {
    let abs = f.abs();
    if abs == 0.0 || (1e-6..1e21).contains(&abs) {
        return format!("{f}");
    }
    let scientific = format!("{f:e}");
    match scientific.split_once('e') {
        Some((mantissa, exponent)) if !exponent.starts_with('-') => {
            format!("{mantissa}e+{exponent}")
        }
        _ => scientific,
    }
}

fn escape_html(text: &str) -> String {
    text.replace('<', "\\u003c")
        .replace('>', "\\u003e")
        .replace('&', "\\u0026")
}

/// `fromYaml s`: a map, or `{"Error": message}`.
pub(crate) fn from_yaml(args: &[Value]) -> Result<Value, Error> {
    want("fromYaml", args, 1)?;
    let text = arg_str(args, 0);
    Ok(match parse_yaml(&text) {
        Ok(serde_json::Value::Object(map)) => from_json(&serde_json::Value::Object(map)),
        Ok(serde_json::Value::Null) => from_json(&serde_json::json!({})),
        Ok(other) => error_map(format!(
            "error unmarshaling JSON: while decoding JSON: json: cannot unmarshal {} into Go value of type map[string]interface {{}}",
            json_kind(&other)
        )),
        Err(YamlError::Syntax(e)) => error_map(format!(
            "error converting YAML to JSON: {}",
            yaml_errors::go_yaml_text(&e.to_string(), &text)
        )),
        Err(YamlError::Refused(message)) => {
            error_map(format!("error converting YAML to JSON: {message}"))
        }
    })
}

/// Why [`parse_yaml`] read no value.
enum YamlError {
    Syntax(serde_yaml::Error),
    /// A key sigs.k8s.io/yaml has no JSON spelling for (`~:`, an integer above `int64`) or a `!!binary` value that
    /// is no base64: the message after `error converting YAML to JSON: `.
    Refused(String),
}

/// A YAML document read as Helm's parser reads it for `fromYaml`/`fromYamlArray`: YAML 1.1 scalars, and map keys
/// turned into JSON keys or refused as for values files ([`crate::values_yaml`]).
fn parse_yaml(text: &str) -> Result<serde_json::Value, YamlError> {
    let text = crate::yaml11::as_yaml11(text).map_err(|e| YamlError::Refused(e.to_string()))?;
    crate::values_yaml::from_slice(text.as_bytes()).map_err(|e| match e {
        crate::values_yaml::ValuesYamlError::Yaml(e) => YamlError::Syntax(e),
        crate::values_yaml::ValuesYamlError::Refused(message) => YamlError::Refused(message),
    })
}

/// `fromYamlArray s`: a list, or `[message]`.
pub(crate) fn from_yaml_array(args: &[Value]) -> Result<Value, Error> {
    want("fromYamlArray", args, 1)?;
    let text = arg_str(args, 0);
    Ok(match parse_yaml(&text) {
        Ok(value @ serde_json::Value::Array(_)) => from_json(&value),
        Ok(serde_json::Value::Null) => Value::from(Vec::<Value>::new()),
        Ok(other) => Value::from(vec![Value::from(format!(
            "error unmarshaling JSON: while decoding JSON: json: cannot unmarshal {} into Go value of type []interface {{}}",
            json_kind(&other)
        ))]),
        Err(YamlError::Syntax(e)) => Value::from(vec![Value::from(format!(
            "error converting YAML to JSON: {}",
            yaml_errors::go_yaml_text(&e.to_string(), &text)
        ))]),
        Err(YamlError::Refused(message)) => Value::from(vec![Value::from(format!(
            "error converting YAML to JSON: {message}"
        ))]),
    })
}

/// `fromJson s`: a map, or `{"Error": message}`.
pub(crate) fn from_json_fn(args: &[Value]) -> Result<Value, Error> {
    want("fromJson", args, 1)?;
    Ok(
        match serde_json::from_str::<serde_json::Value>(&arg_str(args, 0)) {
            Ok(value @ serde_json::Value::Object(_)) => from_json(&value),
            // encoding/json sets the map to nil for `null`.
            Ok(serde_json::Value::Null) => Value::from(()),
            Ok(other) => error_map(format!(
                "json: cannot unmarshal {} into Go value of type map[string]interface {{}}",
                json_kind(&other)
            )),
            Err(e) => error_map(go_json_syntax_error(&e)),
        },
    )
}

/// `mustFromJson s`: any JSON value; invalid JSON is an error.
pub(crate) fn must_from_json(args: &[Value]) -> Result<Value, Error> {
    want("mustFromJson", args, 1)?;
    serde_json::from_str::<serde_json::Value>(&arg_str(args, 0))
        .map(|value| from_json(&value))
        .map_err(|e| fail(format!("error calling mustFromJson: {e}")))
}

/// `fromJsonArray s`: a list, or `[message]`.
pub(crate) fn from_json_array(args: &[Value]) -> Result<Value, Error> {
    want("fromJsonArray", args, 1)?;
    Ok(
        match serde_json::from_str::<serde_json::Value>(&arg_str(args, 0)) {
            Ok(value @ serde_json::Value::Array(_)) => from_json(&value),
            Ok(serde_json::Value::Null) => Value::from(()),
            Ok(other) => Value::from(vec![Value::from(format!(
                "json: cannot unmarshal {} into Go value of type []interface {{}}",
                json_kind(&other)
            ))]),
            Err(e) => Value::from(vec![Value::from(go_json_syntax_error(&e))]),
        },
    )
}

/// encoding/json's wording for input that ends early; other syntax errors keep serde's description.
fn go_json_syntax_error(error: &serde_json::Error) -> String {
    if error.is_eof() {
        "unexpected end of JSON input".to_string()
    } else {
        error.to_string()
    }
}

fn error_map(message: String) -> Value {
    super::value::GoMap::value(
        [("Error".to_string(), Value::from(message))]
            .into_iter()
            .collect(),
    )
}

fn json_kind(value: &serde_json::Value) -> &'static str {
    match value {
        serde_json::Value::Null => "null",
        serde_json::Value::Bool(_) => "bool",
        serde_json::Value::Number(_) => "number",
        serde_json::Value::String(_) => "string",
        serde_json::Value::Array(_) => "array",
        serde_json::Value::Object(_) => "object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &str) -> Value {
        Value::from(v)
    }

    #[test]
    fn encodings_round_trip() {
        assert_eq!(
            b64enc(&[s("seed:agent")]).unwrap().to_string(),
            "c2VlZDphZ2VudA=="
        );
        assert_eq!(
            b64dec(&[s("c2VlZDphZ2VudA==")]).unwrap().to_string(),
            "seed:agent"
        );
        assert_eq!(
            sha256sum(&[s("abc")]).unwrap().to_string(),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        let map = from_json(&serde_json::json!({"z": 26, "a": 1, "h": "<b>"}));
        assert_eq!(
            to_json_fn(&[map]).unwrap().to_string(),
            r#"{"a":1,"h":"\u003cb\u003e","z":26}"#
        );
        let parsed = from_yaml(&[s("key: value\nlist: [1, 2]")]).unwrap();
        assert_eq!(parsed.get_attr("key").unwrap().to_string(), "value");
        assert!(
            from_yaml(&[s(": : :")])
                .unwrap()
                .get_attr("Error")
                .unwrap()
                .as_str()
                .is_some()
        );
    }
}

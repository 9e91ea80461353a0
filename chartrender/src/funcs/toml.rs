//! Helm's `toToml`: the TOML that BurntSushi/toml's encoder (Helm v3's) writes for a map: sorted keys, plain
//! values before tables, sub-tables indented two spaces per level, floats always with a decimal point.

use minijinja::Error;
use minijinja::value::{Value, ValueKind};

use super::value::{format_float, is_nil, list_items, map_entries};
use super::want;

/// `toToml v`: the TOML text, or the encoder's error text.
pub(crate) fn to_toml(args: &[Value]) -> Result<Value, Error> {
    want("toToml", args, 1)?;
    crate::meter::check_printed("toToml", args)?;
    let mut encoder = Encoder::default();
    if args[0].kind() != ValueKind::Map {
        return Ok(Value::from(
            "toml: top-level values must be Go maps or structs",
        ));
    }
    encoder.map(&[], &args[0]);
    Ok(Value::from(encoder.out))
}

#[derive(Default)]
struct Encoder {
    out: String,
}

fn is_table(value: &Value) -> bool {
    if value.kind() == ValueKind::Map {
        return true;
    }
    list_items(value)
        .is_some_and(|items| !items.is_empty() && items.iter().all(|i| i.kind() == ValueKind::Map))
}

fn bare(key: &str) -> bool {
    !key.is_empty()
        && key
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

fn quoted(text: &str) -> String {
    let mut out = String::from("\"");
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{8}' => out.push_str("\\b"),
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\u{c}' => out.push_str("\\f"),
            '\r' => out.push_str("\\r"),
            c if (c as u32) < 0x20 || c == '\u{7f}' => {
                out.push_str(&format!("\\u{:04x}", c as u32));
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn key_part(key: &str) -> String {
    if bare(key) {
        key.to_string()
    } else {
        quoted(key)
    }
}

fn dotted(path: &[String]) -> String {
    path.iter()
        .map(|k| key_part(k))
        .collect::<Vec<_>>()
        .join(".")
}

fn indent(path: &[String]) -> String {
    "  ".repeat(path.len().saturating_sub(1))
}

impl Encoder {
    fn newline(&mut self) {
        if !self.out.is_empty() {
            self.out.push('\n');
        }
    }

    fn map(&mut self, path: &[String], value: &Value) {
        let entries = map_entries(value).unwrap_or_default();
        let (tables, direct): (Vec<_>, Vec<_>) = entries
            .iter()
            .filter(|(_, v)| !is_nil(v))
            .partition(|(_, v)| is_table(v));
        for (key, item) in direct.into_iter().chain(tables) {
            let mut child = path.to_vec();
            child.push(key.clone());
            self.encode(&child, item);
        }
    }

    fn encode(&mut self, path: &[String], value: &Value) {
        if value.kind() == ValueKind::Map {
            if path.len() == 1 {
                self.newline();
            }
            self.out
                .push_str(&format!("{}[{}]", indent(path), dotted(path)));
            self.newline();
            self.map(path, value);
            return;
        }
        if is_table(value) {
            for item in list_items(value).unwrap_or_default() {
                self.newline();
                self.out
                    .push_str(&format!("{}[[{}]]", indent(path), dotted(path)));
                self.newline();
                self.map(path, &item);
            }
            return;
        }
        let key = path.last().map(|k| key_part(k)).unwrap_or_default();
        self.out.push_str(&format!("{}{key} = ", indent(path)));
        self.element(value);
        self.newline();
    }

    fn element(&mut self, value: &Value) {
        match value.kind() {
            ValueKind::Bool => self
                .out
                .push_str(if value.is_true() { "true" } else { "false" }),
            ValueKind::Number if value.is_integer() => self.out.push_str(&value.to_string()),
            ValueKind::Number => {
                let f = f64::try_from(value.clone()).unwrap_or(0.0);
                self.out.push_str(&toml_float(f));
            }
            ValueKind::Seq | ValueKind::Iterable => {
                self.out.push('[');
                let items = list_items(value).unwrap_or_default();
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        self.out.push_str(", ");
                    }
                    self.element(item);
                }
                self.out.push(']');
            }
            ValueKind::Map => {
                self.out.push('{');
                let entries = map_entries(value).unwrap_or_default();
                let present: Vec<_> = entries.iter().filter(|(_, v)| !is_nil(v)).collect();
                for (i, (key, item)) in present.iter().enumerate() {
                    if i > 0 {
                        self.out.push_str(", ");
                    }
                    self.out.push_str(&format!("{} = ", key_part(key)));
                    self.element(item);
                }
                self.out.push('}');
            }
            _ => {
                let text = value
                    .as_str()
                    .map_or_else(|| value.to_string(), str::to_string);
                self.out.push_str(&quoted(&text));
            }
        }
    }
}

/// `strconv.FormatFloat(f, 'f', -1, 64)` with ".0" added to whole numbers; `nan`, `+inf`, `-inf`.
fn toml_float(f: f64) -> String {
    if f.is_nan() {
        return "nan".into();
    }
    if f.is_infinite() {
        return if f < 0.0 {
            "-inf".into()
        } else {
            "+inf".into()
        };
    }
    let shortest = format_float(f);
    let text = if shortest.contains('e') {
        format!("{f}")
    } else {
        shortest
    };
    if text.contains('.') {
        text
    } else {
        format!("{text}.0")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::funcs::value::from_json_exact;

    fn toml(json: serde_json::Value) -> String {
        to_toml(&[from_json_exact(&json)]).unwrap().to_string()
    }

    #[test]
    fn toml_writes_values_before_indented_tables() {
        assert_eq!(
            toml(serde_json::json!({"port": 80, "name": "x"})),
            "name = \"x\"\nport = 80\n"
        );
        assert_eq!(
            toml(serde_json::json!({"b": {"c": {"d": true}, "x": [1, 2]}, "a": 1.5, "k y": "q\""})),
            "a = 1.5\n\"k y\" = \"q\\\"\"\n\n[b]\n  x = [1, 2]\n  [b.c]\n    d = true\n"
        );
        assert_eq!(
            toml(serde_json::json!({"list": [{"a": 1}, {"a": 2}]})),
            "[[list]]\n  a = 1\n\n[[list]]\n  a = 2\n"
        );
        assert_eq!(toml_float(80.0), "80.0");
        assert_eq!(
            to_toml(&[Value::from("x")]).unwrap().to_string(),
            "toml: top-level values must be Go maps or structs"
        );
    }
}

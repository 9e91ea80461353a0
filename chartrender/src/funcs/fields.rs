//! Go's field chains on a declared variable or a parenthesized pipeline (`$x.a.b`, `(f).a`, `list.a`): Go unwraps
//! such a value first, so a nil one gives no value for the whole chain (and no error), while a field of a string,
//! number or list fails with Go's text. Chains on `.`, `$` and range variables are minijinja attribute lookups
//! (see `value::missing`); the translator uses this function only for the rarer forms.

use minijinja::Error;
use minijinja::value::{Value, ValueKind};

use super::fail;
use super::value::{GoMap, is_nil, missing, type_of};

/// `f__field base "a" "b" …`: the field chain `.a.b` of `base` with Go's semantics.
pub(crate) fn field_chain(args: &[Value]) -> Result<Value, Error> {
    let (base, names) = args
        .split_first()
        .ok_or_else(|| fail("missing value for a field chain"))?;
    if is_nil(base) {
        return Ok(missing());
    }
    let mut current = base.clone();
    // The first receiver has its own (unwrapped) type; the later ones are map elements, `interface {}` to Go.
    let mut first = true;
    for name in names {
        let name = name.as_str().unwrap_or_default();
        current = field(&current, name, first)?;
        first = false;
    }
    Ok(current)
}

/// One field of `receiver`.
fn field(receiver: &Value, name: &str, first: bool) -> Result<Value, Error> {
    if is_nil(receiver) {
        return Err(fail(format!(
            "nil pointer evaluating interface {{}}.{name}"
        )));
    }
    let found = match receiver.kind() {
        ValueKind::Map | ValueKind::Plain if receiver.as_object().is_some() => {
            receiver.get_attr(name).ok().filter(|v| {
                // A map answers every key; another object only the fields it has.
                GoMap::of(receiver).is_some() || !v.is_undefined()
            })
        }
        ValueKind::Map => Some(receiver.get_attr(name).unwrap_or_else(|_| missing())),
        _ => None,
    };
    found.ok_or_else(|| {
        let type_name = if first {
            type_of(receiver)
        } else {
            "interface {}"
        };
        fail(format!("can't evaluate field {name} in type {type_name}"))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::funcs::value::from_json;

    fn chain(base: Value, names: &[&str]) -> Result<Value, String> {
        let mut args = vec![base];
        args.extend(names.iter().map(|n| Value::from(*n)));
        field_chain(&args).map_err(|e| e.detail().unwrap_or_default().to_string())
    }

    /// Each answer as Helm v3.11.3 gives it for `$x.…` with `$x` holding the base.
    #[test]
    fn field_chains_on_unwrapped_values_follow_go() {
        let map = from_json(&serde_json::json!({"a": {"b": 1}, "s": "text", "n": null}));
        let cases: [(Value, &[&str], Result<&str, &str>); 9] = [
            (Value::UNDEFINED, &["a", "b"], Ok("undefined")),
            (Value::from(()), &["a"], Ok("undefined")),
            (map.clone(), &["a", "b"], Ok("1.0")),
            (map.clone(), &["missing"], Ok("undefined")),
            (
                map.clone(),
                &["missing", "b"],
                Err("nil pointer evaluating interface {}.b"),
            ),
            (
                map.clone(),
                &["n", "b"],
                Err("nil pointer evaluating interface {}.b"),
            ),
            (
                map.clone(),
                &["s", "b"],
                Err("can't evaluate field b in type interface {}"),
            ),
            (
                Value::from("text"),
                &["b"],
                Err("can't evaluate field b in type string"),
            ),
            (
                Value::from(vec![Value::from(1)]),
                &["b"],
                Err("can't evaluate field b in type []interface {}"),
            ),
        ];
        for (base, names, want) in cases {
            let got = chain(base, names).map(|v| format!("{v:?}"));
            let want = want.map(str::to_string).map_err(str::to_string);
            assert_eq!(got, want, "{names:?}");
        }
    }
}

//! Sprig list and dict functions; dicts are shared mutable [`GoMap`]s like Go maps.

use std::collections::BTreeMap;

use minijinja::Error;
use minijinja::value::{Value, ValueKind};

use super::gostruct::GoSlice;
use super::value::{
    GoMap, MapType, deep_copy, deep_equal, is_nil, key_string, list_items, map_entries,
    to_go_string, to_i64,
};
use super::{arg_str, fail, want};

/// The items of a list argument. Sprig's list functions take the argument's reflected type first, which panics
/// for nil; Helm reports that panic as the error.
fn list_of(name: &str, value: &Value) -> Result<Vec<Value>, Error> {
    if is_nil(value) {
        return Err(fail(format!(
            "error calling {name}: runtime error: invalid memory address or nil pointer dereference"
        )));
    }
    list_items(value).ok_or_else(|| {
        let kind = super::gotype::kind_of(value);
        // Sprig's own texts (the must- forms return them, the others panic with them).
        let text = match name {
            "append" => format!("Cannot push on type {kind}"),
            "prepend" => format!("Cannot prepend on type {kind}"),
            "concat" => format!("Cannot concat type {kind} as list"),
            "compact" => format!("Cannot compact on type {kind}"),
            "chunk" => format!("Cannot chunk type {kind}"),
            "slice" => format!("list should be type of slice or array but {kind}"),
            _ => format!("Cannot find {name} on type {kind}"),
        };
        fail(format!("error calling {name}: {text}"))
    })
}

fn go_map<'a>(name: &str, value: &'a Value) -> Result<&'a GoMap, Error> {
    GoMap::of(value).ok_or_else(|| {
        fail(format!(
            "{name}: expected a dict, got {}",
            super::value::type_of(value)
        ))
    })
}

/// `list a b …`
pub(crate) fn list(args: &[Value]) -> Result<Value, Error> {
    Ok(Value::from(args.to_vec()))
}

/// `append list v` / `push list v`
pub(crate) fn append(args: &[Value]) -> Result<Value, Error> {
    want("append", args, 2)?;
    let mut items = list_of("append", &args[0])?;
    items.push(args[1].clone());
    Ok(Value::from(items))
}

/// `prepend list v`
pub(crate) fn prepend(args: &[Value]) -> Result<Value, Error> {
    want("prepend", args, 2)?;
    let mut items = list_of("prepend", &args[0])?;
    items.insert(0, args[1].clone());
    Ok(Value::from(items))
}

/// `concat list list …`
pub(crate) fn concat(args: &[Value]) -> Result<Value, Error> {
    let total: usize = args
        .iter()
        .map(|value| value.len().unwrap_or(0))
        .fold(0, usize::saturating_add);
    crate::meter::check_items("concat", total)?;
    let mut out = Vec::new();
    for value in args {
        out.extend(list_of("concat", value)?);
    }
    // Sprig appends to a nil slice: nothing appended leaves it nil (`null` in toJson/toYaml).
    if out.is_empty() {
        return Ok(super::value::nil_list());
    }
    Ok(Value::from(out))
}

/// `first list` (nil for an empty list)
pub(crate) fn first(args: &[Value]) -> Result<Value, Error> {
    want("first", args, 1)?;
    Ok(list_of("first", &args[0])?
        .into_iter()
        .next()
        .unwrap_or(Value::from(())))
}

/// `last list`
pub(crate) fn last(args: &[Value]) -> Result<Value, Error> {
    want("last", args, 1)?;
    Ok(list_of("last", &args[0])?.pop().unwrap_or(Value::from(())))
}

/// `rest list`: all but the first.
pub(crate) fn rest(args: &[Value]) -> Result<Value, Error> {
    want("rest", args, 1)?;
    if list_of("rest", &args[0])?.is_empty() {
        return Ok(super::value::nil_list());
    }
    Ok(Value::from(
        list_of("rest", &args[0])?
            .into_iter()
            .skip(1)
            .collect::<Vec<_>>(),
    ))
}

/// `initial list`: all but the last.
pub(crate) fn initial(args: &[Value]) -> Result<Value, Error> {
    want("initial", args, 1)?;
    let mut items = list_of("initial", &args[0])?;
    if items.is_empty() {
        return Ok(super::value::nil_list());
    }
    items.pop();
    Ok(Value::from(items))
}

/// `reverse list`
pub(crate) fn reverse(args: &[Value]) -> Result<Value, Error> {
    want("reverse", args, 1)?;
    let mut items = list_of("reverse", &args[0])?;
    items.reverse();
    Ok(Value::from(items))
}

/// `uniq list`: first occurrences in order.
pub(crate) fn uniq(args: &[Value]) -> Result<Value, Error> {
    want("uniq", args, 1)?;
    let mut out: Vec<Value> = Vec::new();
    for item in list_of("uniq", &args[0])? {
        if !out.iter().any(|seen| deep_equal(seen, &item)) {
            out.push(item);
        }
    }
    Ok(Value::from(out))
}

/// `compact list`: drops empty elements.
pub(crate) fn compact(args: &[Value]) -> Result<Value, Error> {
    want("compact", args, 1)?;
    Ok(Value::from(
        list_of("compact", &args[0])?
            .into_iter()
            .filter(|v| !super::value::is_empty(v))
            .collect::<Vec<_>>(),
    ))
}

/// `without list a b …`
pub(crate) fn without(args: &[Value]) -> Result<Value, Error> {
    let (list, drop) = args
        .split_first()
        .ok_or_else(|| fail("without: missing list"))?;
    let items = list_of("without", list)?;
    Ok(Value::from(
        items
            .into_iter()
            .filter(|v| !drop.iter().any(|d| deep_equal(d, v)))
            .collect::<Vec<_>>(),
    ))
}

/// `has needle list`
pub(crate) fn has(args: &[Value]) -> Result<Value, Error> {
    want("has", args, 2)?;
    // Sprig answers false for a nil list.
    if is_nil(&args[1]) {
        return Ok(Value::from(false));
    }
    Ok(Value::from(
        list_of("has", &args[1])?
            .iter()
            .any(|v| deep_equal(v, &args[0])),
    ))
}

/// `slice list start [end]` (also strings)
pub(crate) fn slice(args: &[Value]) -> Result<Value, Error> {
    let (target, bounds) = args
        .split_first()
        .ok_or_else(|| fail("slice: missing argument"))?;
    // Sprig's `slice` (which replaces Go's builtin) takes lists only, and gives nil for an empty one.
    if target.as_str().is_some() {
        return Err(fail(
            "error calling slice: list should be type of slice or array but string",
        ));
    }
    // Nil panics in Sprig's reflection like in the other list functions ([`list_of`]).
    let items = list_of("slice", target)?;
    // Sprig answers an untyped nil here (`rest`/`initial` answer a nil list).
    if items.is_empty() {
        return Ok(Value::from(()));
    }
    let start = bounds.first().map_or(0, to_i64);
    let end = bounds.get(1).map_or(items.len() as i64, to_i64);
    if start < 0 || end < start || end as usize > items.len() {
        return Err(fail(format!(
            "slice: index out of range [{start}:{end}] with length {}",
            items.len()
        )));
    }
    Ok(Value::from(items[start as usize..end as usize].to_vec()))
}

/// `until n`: 0 … n-1 (counting down for negative n).
pub(crate) fn until(args: &[Value]) -> Result<Value, Error> {
    want("until", args, 1)?;
    let n = to_i64(&args[0]);
    let step = if n < 0 { -1 } else { 1 };
    step_range(0, n, step)
}

/// `untilStep start stop step`
pub(crate) fn until_step(args: &[Value]) -> Result<Value, Error> {
    want("untilStep", args, 3)?;
    step_range(to_i64(&args[0]), to_i64(&args[1]), to_i64(&args[2]))
}

fn step_range(start: i64, stop: i64, step: i64) -> Result<Value, Error> {
    Ok(GoSlice::value(
        "[]int",
        step_values(start, stop, step)?
            .into_iter()
            .map(Value::from)
            .collect(),
    ))
}

/// Sprig's `untilStep`: start, start+step, … while short of stop (empty when step points away from stop).
pub(crate) fn step_values(start: i64, stop: i64, step: i64) -> Result<Vec<i64>, Error> {
    if step == 0 || (step > 0 && start > stop) || (step < 0 && start < stop) {
        return Ok(Vec::new());
    }
    let count = ((stop - start).unsigned_abs()).div_ceil(step.unsigned_abs());
    crate::meter::check_items("until", usize::try_from(count).unwrap_or(usize::MAX))?;
    Ok((0..count as i64).map(|i| start + i * step).collect())
}

/// `chunk size list`: the list cut into lists of `size` (the last one shorter).
pub(crate) fn chunk(args: &[Value]) -> Result<Value, Error> {
    want("chunk", args, 2)?;
    let size = to_i64(&args[0]);
    let items = list_of("chunk", &args[1])?;
    if size <= 0 {
        return Err(fail(
            "error calling chunk: runtime error: integer divide by zero",
        ));
    }
    Ok(GoSlice::value(
        "[][]interface {}",
        items
            .chunks(size as usize)
            .map(|c| Value::from(c.to_vec()))
            .collect(),
    ))
}

/// `dict k v k v …`
pub(crate) fn dict(args: &[Value]) -> Result<Value, Error> {
    let mut entries = BTreeMap::new();
    for pair in args.chunks(2) {
        let value = pair.get(1).cloned().unwrap_or(Value::from(""));
        entries.insert(key_string(&pair[0]), value);
    }
    Ok(GoMap::value(entries))
}

/// `get dict key` ("" when missing)
pub(crate) fn get(args: &[Value]) -> Result<Value, Error> {
    want("get", args, 2)?;
    let key = arg_str(args, 1);
    Ok(map_entries(&args[0])
        .and_then(|m| m.get(&key).cloned())
        .unwrap_or(Value::from("")))
}

/// `set dict key value`: mutates and returns the dict.
pub(crate) fn set(args: &[Value]) -> Result<Value, Error> {
    want("set", args, 3)?;
    let key = arg_str(args, 1);
    go_map("set", &args[0])?.update(|m| m.insert(key, args[2].clone()));
    Ok(args[0].clone())
}

/// `unset dict key`: mutates and returns the dict.
pub(crate) fn unset(args: &[Value]) -> Result<Value, Error> {
    want("unset", args, 2)?;
    let key = arg_str(args, 1);
    go_map("unset", &args[0])?.update(|m| m.remove(&key));
    Ok(args[0].clone())
}

/// `hasKey dict key`
pub(crate) fn has_key(args: &[Value]) -> Result<Value, Error> {
    want("hasKey", args, 2)?;
    let key = arg_str(args, 1);
    Ok(Value::from(match GoMap::of(&args[0]) {
        Some(map) => map.contains(&key),
        None => map_entries(&args[0]).is_some_and(|m| m.contains_key(&key)),
    }))
}

/// `keys dict …` (unsorted in Go; sorted here, which Go allows)
pub(crate) fn keys(args: &[Value]) -> Result<Value, Error> {
    let mut out = Vec::new();
    for value in args {
        out.extend(
            map_entries(value)
                .unwrap_or_default()
                .into_keys()
                .map(Value::from),
        );
    }
    Ok(GoSlice::value("[]string", out))
}

/// `values dict`
pub(crate) fn values(args: &[Value]) -> Result<Value, Error> {
    want("values", args, 1)?;
    Ok(Value::from(
        map_entries(&args[0])
            .unwrap_or_default()
            .into_values()
            .collect::<Vec<_>>(),
    ))
}

/// `pick dict k …`
pub(crate) fn pick(args: &[Value]) -> Result<Value, Error> {
    let (map, wanted) = args
        .split_first()
        .ok_or_else(|| fail("pick: missing dict"))?;
    let wanted: Vec<String> = wanted.iter().map(to_go_string).collect();
    let entries = map_entries(map)
        .unwrap_or_default()
        .into_iter()
        .filter(|(k, _)| wanted.contains(k))
        .collect();
    Ok(GoMap::value(entries))
}

/// `omit dict k …`
pub(crate) fn omit(args: &[Value]) -> Result<Value, Error> {
    let (map, dropped) = args
        .split_first()
        .ok_or_else(|| fail("omit: missing dict"))?;
    let dropped: Vec<String> = dropped.iter().map(to_go_string).collect();
    let entries = map_entries(map)
        .unwrap_or_default()
        .into_iter()
        .filter(|(k, _)| !dropped.contains(k))
        .collect();
    Ok(GoMap::value(entries))
}

/// `pluck key dict …`: the key's value from each dict that has it.
pub(crate) fn pluck(args: &[Value]) -> Result<Value, Error> {
    let (key, maps) = args
        .split_first()
        .ok_or_else(|| fail("pluck: missing key"))?;
    let key = to_go_string(key);
    Ok(Value::from(
        maps.iter()
            .filter_map(|m| map_entries(m).and_then(|e| e.get(&key).cloned()))
            .collect::<Vec<_>>(),
    ))
}

/// `dig k1 k2 … default dict`
pub(crate) fn dig(args: &[Value]) -> Result<Value, Error> {
    if args.len() < 3 {
        return Err(fail("dig: needs at least one key, a default and a dict"));
    }
    let (map, rest) = args.split_last().ok_or_else(|| fail("dig: missing dict"))?;
    let (default, keys) = rest
        .split_last()
        .ok_or_else(|| fail("dig: missing default"))?;
    // Sprig asserts the types (`ps[i].(string)`, `….(map[string]interface{})`); Helm reports the panic.
    let assertion = |value: &Value, wanted: &str| {
        let actual = if is_nil(value) {
            "nil"
        } else {
            super::value::type_of(value)
        };
        fail(format!(
            "error calling dig: interface conversion: interface {{}} is {actual}, not {wanted}"
        ))
    };
    let keys = keys
        .iter()
        .map(|key| {
            key.as_str()
                .map(str::to_string)
                .ok_or_else(|| assertion(key, "string"))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let mut current = map.clone();
    for key in &keys {
        // Only a plain `map[string]interface {}` passes the assertion: not `.Values` (a `chartutil.Values`),
        // `.Files` or `.Chart.Annotations`.
        let plain = match super::value::map_type(&current) {
            Some(go_type) => go_type == MapType::Plain,
            None => current.as_object().is_none(),
        };
        let entries = map_entries(&current)
            .filter(|_| plain && !is_nil(&current))
            .ok_or_else(|| assertion(&current, "map[string]interface {}"))?;
        match entries.get(key) {
            Some(next) => current = next.clone(),
            None => return Ok(default.clone()),
        }
    }
    Ok(current)
}

/// `merge dst src …`: fills keys missing in dst (recursively), mutating dst.
pub(crate) fn merge(args: &[Value]) -> Result<Value, Error> {
    merge_into("merge", args, false)
}

/// `mergeOverwrite dst src …`: later sources win, mutating dst.
pub(crate) fn merge_overwrite(args: &[Value]) -> Result<Value, Error> {
    merge_into("mergeOverwrite", args, true)
}

fn merge_into(name: &str, args: &[Value], overwrite: bool) -> Result<Value, Error> {
    let (dst, sources) = args
        .split_first()
        .ok_or_else(|| fail(format!("{name}: missing destination")))?;
    let target = go_map(name, dst)?;
    for source in sources {
        let Some(entries) = map_entries(source) else {
            continue;
        };
        for (key, value) in entries {
            merge_value(target, key, value, overwrite);
        }
    }
    Ok(dst.clone())
}

/// mergo (v0.3, as Sprig uses it) on map entries: nested maps merge recursively; otherwise dst keeps a non-empty
/// value unless overwriting, and overwriting takes every source value, `false`, `0`, `""` and nil included. A map
/// or list taken over is the source's own (shared, not copied: Sprig issue 188).
fn merge_value(target: &GoMap, key: String, value: Value, overwrite: bool) {
    let existing = target.get(&key);
    match existing {
        Some(current) if current.kind() == ValueKind::Map && value.kind() == ValueKind::Map => {
            if let Some(inner) = GoMap::of(&current) {
                for (k, v) in map_entries(&value).unwrap_or_default() {
                    merge_value(inner, k, v, overwrite);
                }
            }
        }
        Some(current) if !super::value::is_empty(&current) && !overwrite => {}
        // mergo merges a source map into what is there and never replaces a non-empty non-map with it.
        Some(current) if value.kind() == ValueKind::Map && !super::value::is_empty(&current) => {}
        // mergo skips a nil source entry unless overwriting.
        _ if is_nil(&value) && !overwrite => {}
        _ => {
            target.update(|m| m.insert(key, value));
        }
    }
}

/// `deepCopy v`
pub(crate) fn deep_copy_fn(args: &[Value]) -> Result<Value, Error> {
    deep_copy_named("deepCopy", args)
}

/// `mustDeepCopy v`
pub(crate) fn must_deep_copy_fn(args: &[Value]) -> Result<Value, Error> {
    deep_copy_named("mustDeepCopy", args)
}

/// Both copies: copystructure panics on Go's untyped nil (it asks the type of a zero `reflect.Value`), and the
/// template engine turns the panic into the call's error.
fn deep_copy_named(name: &str, args: &[Value]) -> Result<Value, Error> {
    want(name, args, 1)?;
    if is_nil(&args[0]) {
        return Err(fail(format!(
            "error calling {name}: reflect: call of reflect.Value.Type on zero Value"
        )));
    }
    Ok(deep_copy(&args[0]))
}

/// Go's `index x k1 k2 …`.
pub(crate) fn index(args: &[Value]) -> Result<Value, Error> {
    let (target, keys) = args
        .split_first()
        .ok_or_else(|| fail("wrong number of args for index: want at least 1 got 0"))?;
    let mut current = target.clone();
    for (depth, key) in keys.iter().enumerate() {
        // Go checks the item it was given for an untyped nil, and every item reached by a key for a nil interface.
        if is_nil(&current) {
            return Err(fail(if depth == 0 {
                "error calling index: index of untyped nil"
            } else {
                "error calling index: index of nil pointer"
            }));
        }
        current = match current.kind() {
            // A missing key is the element type's zero value: "" in a `map[string]string` (`split`'s result).
            ValueKind::Map => match GoMap::of(&current) {
                Some(map) => map.get(&key_string(key)).unwrap_or_else(|| {
                    if map.go_type() == MapType::Strings {
                        Value::from("")
                    } else {
                        Value::UNDEFINED
                    }
                }),
                None => current.get_item(key).unwrap_or(Value::UNDEFINED),
            },
            ValueKind::Seq | ValueKind::String | ValueKind::Bytes => {
                // Go takes only an integer position: a float64 (every number of a values file) is refused.
                if is_nil(key) {
                    return Err(fail(
                        "error calling index: cannot index slice/array with nil",
                    ));
                }
                let key_type = super::value::type_of(key);
                if !matches!(
                    key_type,
                    "int"
                        | "int8"
                        | "int16"
                        | "int32"
                        | "int64"
                        | "uint"
                        | "uint8"
                        | "uint16"
                        | "uint32"
                        | "uint64"
                        | "uintptr"
                ) {
                    return Err(fail(format!(
                        "error calling index: cannot index slice/array with type {key_type}"
                    )));
                }
                let position = to_i64(key);
                let len = match current.as_str() {
                    Some(s) => super::gostring::byte_len(s) as i64,
                    None => current.len().unwrap_or(0) as i64,
                };
                if position < 0 || position > len {
                    return Err(fail(format!(
                        "error calling index: index out of range: {position}"
                    )));
                }
                // Go 1.19's bound check lets the length itself through to reflect, which panics.
                if position == len {
                    let what = if current.as_str().is_some() {
                        "string"
                    } else {
                        "slice"
                    };
                    return Err(fail(format!(
                        "error calling index: reflect: {what} index out of range"
                    )));
                }
                if let Some(s) = current.as_str() {
                    Value::from(i64::from(super::gostring::to_bytes(s)[position as usize]))
                } else {
                    current
                        .get_item(&Value::from(position))
                        .unwrap_or(Value::UNDEFINED)
                }
            }
            _ => {
                return Err(fail(format!(
                    "error calling index: can't index item of type {}",
                    super::value::type_of(&current)
                )));
            }
        };
    }
    Ok(current)
}

/// Go's `len x`.
pub(crate) fn len(args: &[Value]) -> Result<Value, Error> {
    want("len", args, 1)?;
    let value = &args[0];
    if let Some(s) = value.as_str() {
        return Ok(Value::from(super::gostring::byte_len(s) as i64));
    }
    match value.kind() {
        ValueKind::Seq | ValueKind::Map | ValueKind::Bytes | ValueKind::Iterable => {
            Ok(Value::from(value.len().unwrap_or(0) as i64))
        }
        _ => Err(fail(format!(
            "error calling len: len of {}",
            if is_nil(value) {
                "nil pointer".to_string()
            } else {
                format!("type {}", super::value::type_of(value))
            }
        ))),
    }
}

/// `range` helper: elements of a list, values of a map in key order; nil ranges over nothing.
pub(crate) fn range_values(args: &[Value]) -> Result<Value, Error> {
    want("range", args, 1)?;
    Ok(Value::from(
        range_pairs_of(&args[0])?
            .into_iter()
            .map(|(_, v)| v)
            .collect::<Vec<_>>(),
    ))
}

/// `range $k, $v` helper: `[key or index, element]` pairs.
pub(crate) fn range_pairs(args: &[Value]) -> Result<Value, Error> {
    want("range", args, 1)?;
    Ok(Value::from(
        range_pairs_of(&args[0])?
            .into_iter()
            .map(|(k, v)| Value::from(vec![k, v]))
            .collect::<Vec<_>>(),
    ))
}

fn range_pairs_of(value: &Value) -> Result<Vec<(Value, Value)>, Error> {
    if is_nil(value) {
        return Ok(Vec::new());
    }
    match value.kind() {
        ValueKind::Map => Ok(map_entries(value)
            .unwrap_or_default()
            .into_iter()
            .map(|(k, v)| (Value::from(k), v))
            .collect()),
        ValueKind::Seq | ValueKind::Iterable => Ok(list_items(value)
            .unwrap_or_default()
            .into_iter()
            .enumerate()
            .map(|(i, v)| (Value::from(i as i64), v))
            .collect()),
        ValueKind::Bytes => Ok(value
            .as_bytes()
            .unwrap_or_default()
            .iter()
            .enumerate()
            .map(|(i, b)| (Value::from(i as i64), Value::from(i64::from(*b))))
            .collect()),
        // Helm's Go 1.19 cannot range over an integer (Go 1.22 added that).
        _ => Err(fail(format!(
            "range can't iterate over {}",
            super::value::go_string(value)
        ))),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::value::{from_json, to_json};
    use super::*;

    #[test]
    fn set_and_unset_mutate_the_shared_dict() {
        let map = from_json(&json!({"a": 1}));
        set(&[map.clone(), Value::from("b"), Value::from(2)]).unwrap();
        unset(&[map.clone(), Value::from("a")]).unwrap();
        assert_eq!(to_json(&map), json!({"b": 2}));
    }

    #[test]
    fn merge_keeps_destination_values_and_merge_overwrite_replaces_them() {
        let dst = from_json(&json!({"keep": "mine", "nested": {"x": 1}}));
        let src = from_json(&json!({"keep": "base", "drop": "base", "nested": {"x": 2, "y": 3}}));
        merge(&[dst.clone(), src.clone()]).unwrap();
        assert_eq!(
            to_json(&dst),
            json!({"drop": "base", "keep": "mine", "nested": {"x": 1.0, "y": 3.0}})
        );
        merge_overwrite(&[dst.clone(), src]).unwrap();
        assert_eq!(to_json(&dst)["keep"], json!("base"));
    }

    #[test]
    fn list_functions_follow_sprig() {
        let items = Value::from(vec![Value::from(3), Value::from(1), Value::from(3)]);
        assert_eq!(uniq(std::slice::from_ref(&items)).unwrap().len(), Some(2));
        assert_eq!(
            first(std::slice::from_ref(&items)).unwrap().as_i64(),
            Some(3)
        );
        assert!(has(&[Value::from(1), items.clone()]).unwrap().is_true());
        assert_eq!(until(&[Value::from(3)]).unwrap().to_string(), "[0, 1, 2]");
        // Sprig reflects on the list first: nil panics, which Helm reports as an error.
        assert!(append(&[Value::UNDEFINED, Value::from("x")]).is_err());
        assert!(!has(&[Value::from(1), Value::UNDEFINED]).unwrap().is_true());
        let nil = rest(&[Value::from(Vec::<Value>::new())]).unwrap();
        assert_eq!((to_json(&nil), nil.len()), (json!(null), Some(0)));
        assert!(
            slice(&[Value::from(Vec::<Value>::new()), Value::from(1)])
                .unwrap()
                .is_none()
        );
        assert!(last(&[Value::from(Vec::<Value>::new())]).unwrap().is_none());
    }

    #[test]
    fn index_and_len_follow_go_builtins() {
        let map = from_json(&json!({"a": {"b": [10, 20]}}));
        let found = index(&[
            map.clone(),
            Value::from("a"),
            Value::from("b"),
            Value::from(1),
        ])
        .unwrap();
        assert_eq!(found.to_string(), "20.0");
        assert!(
            index(&[map.clone(), Value::from("missing")])
                .unwrap()
                .is_undefined()
        );
        assert!(index(&[Value::from(vec![Value::from(1)]), Value::from(5)]).is_err());
        assert_eq!(len(&[Value::from("héllo")]).unwrap().as_i64(), Some(6));
        assert!(len(&[Value::UNDEFINED]).is_err());
    }

    #[test]
    fn range_pairs_sort_map_keys() {
        let map = from_json(&json!({"z": 1, "a": 2}));
        let pairs = range_pairs(&[map]).unwrap();
        assert_eq!(
            pairs
                .get_item(&Value::from(0))
                .unwrap()
                .get_item(&Value::from(0))
                .unwrap()
                .to_string(),
            "a"
        );
    }

    #[test]
    fn dict_pick_omit_and_dig() {
        let d = dict(&[
            Value::from("a"),
            Value::from(1),
            Value::from("b"),
            Value::from(2),
        ])
        .unwrap();
        assert_eq!(
            to_json(&pick(&[d.clone(), Value::from("a")]).unwrap()),
            json!({"a": 1})
        );
        assert_eq!(
            to_json(&omit(&[d.clone(), Value::from("a")]).unwrap()),
            json!({"b": 2})
        );
        let nested = from_json(&json!({"x": {"y": "found"}}));
        assert_eq!(
            dig(&[
                Value::from("x"),
                Value::from("y"),
                Value::from("dflt"),
                nested.clone()
            ])
            .unwrap()
            .to_string(),
            "found"
        );
        assert_eq!(
            dig(&[Value::from("q"), Value::from("dflt"), nested])
                .unwrap()
                .to_string(),
            "dflt"
        );
    }
}

//! Go builtins, Sprig and Helm functions registered as `f_<name>` globals on a minijinja environment.

mod collections;
mod encoding;
pub(crate) mod goyaml;
mod printf;
mod semver;
mod strings;
pub(crate) mod template;
pub(crate) mod value;

use minijinja::value::{Rest, Value, ValueKind};
use minijinja::{Environment, Error, ErrorKind};

use value::{GoMap, go_equal, is_empty, is_nil, kind_of, to_f64, to_go_string, to_i64, type_of};

/// A function taking its arguments in Go order.
type Func = fn(&[Value]) -> Result<Value, Error>;

/// Every function a template may call, except `include`/`tpl`/`required`/`fail`/`lookup` (see [`template`]).
const FUNCTIONS: &[(&str, Func)] = &[
    // Go builtins
    ("index", collections::index),
    ("len", collections::len),
    ("print", strings::print),
    ("printf", strings::printf_fn),
    ("println", strings::println),
    ("eq", eq),
    ("ne", ne),
    ("lt", lt),
    ("le", le),
    ("gt", gt),
    ("ge", ge),
    ("html", strings::html),
    ("urlquery", strings::urlquery),
    ("slice", collections::slice),
    ("range_values", collections::range_values),
    ("range_pairs", collections::range_pairs),
    // strings
    ("toString", strings::to_string),
    ("trim", strings::trim),
    ("trimAll", strings::trim_all),
    ("trimPrefix", strings::trim_prefix),
    ("trimSuffix", strings::trim_suffix),
    ("upper", strings::upper),
    ("lower", strings::lower),
    ("title", strings::title),
    ("untitle", strings::untitle),
    ("repeat", strings::repeat),
    ("substr", strings::substr),
    ("nospace", strings::nospace),
    ("trunc", strings::trunc),
    ("abbrev", strings::abbrev),
    ("initials", strings::initials),
    ("contains", strings::contains),
    ("hasPrefix", strings::has_prefix),
    ("hasSuffix", strings::has_suffix),
    ("quote", strings::quote),
    ("squote", strings::squote),
    ("cat", strings::cat),
    ("indent", strings::indent),
    ("nindent", strings::nindent),
    ("replace", strings::replace),
    ("plural", strings::plural),
    ("snakecase", strings::snakecase),
    ("kebabcase", strings::kebabcase),
    ("camelcase", strings::camelcase),
    ("wrap", strings::wrap),
    ("wrapWith", strings::wrap_with),
    ("split", strings::split),
    ("splitn", strings::splitn),
    ("splitList", strings::split_list),
    ("join", strings::join),
    ("sortAlpha", strings::sort_alpha),
    ("regexMatch", strings::regex_match),
    ("mustRegexMatch", strings::regex_match),
    ("regexFind", strings::regex_find),
    ("mustRegexFind", strings::regex_find),
    ("regexFindAll", strings::regex_find_all),
    ("regexReplaceAll", strings::regex_replace_all),
    ("mustRegexReplaceAll", strings::regex_replace_all),
    ("regexReplaceAllLiteral", strings::regex_replace_all_literal),
    ("regexSplit", strings::regex_split),
    ("b64enc", encoding::b64enc),
    ("b64dec", encoding::b64dec),
    ("sha256sum", encoding::sha256sum),
    ("adler32sum", encoding::adler32sum),
    ("toYaml", encoding::to_yaml),
    ("mustToYaml", encoding::to_yaml),
    ("fromYaml", encoding::from_yaml),
    ("fromYamlArray", encoding::from_yaml_array),
    ("toJson", encoding::to_json_fn),
    ("mustToJson", encoding::to_json_fn),
    ("toRawJson", encoding::to_raw_json),
    ("toPrettyJson", encoding::to_pretty_json),
    ("fromJson", encoding::from_json_fn),
    ("fromJsonArray", encoding::from_json_array),
    // lists and dicts
    ("list", collections::list),
    ("tuple", collections::list),
    ("append", collections::append),
    ("push", collections::append),
    ("mustAppend", collections::append),
    ("prepend", collections::prepend),
    ("concat", collections::concat),
    ("first", collections::first),
    ("last", collections::last),
    ("rest", collections::rest),
    ("initial", collections::initial),
    ("reverse", collections::reverse),
    ("uniq", collections::uniq),
    ("compact", collections::compact),
    ("without", collections::without),
    ("has", collections::has),
    ("until", collections::until),
    ("untilStep", collections::until_step),
    ("dict", collections::dict),
    ("get", collections::get),
    ("set", collections::set),
    ("unset", collections::unset),
    ("hasKey", collections::has_key),
    ("keys", collections::keys),
    ("values", collections::values),
    ("pick", collections::pick),
    ("omit", collections::omit),
    ("pluck", collections::pluck),
    ("dig", collections::dig),
    ("merge", collections::merge),
    ("mustMerge", collections::merge),
    ("mergeOverwrite", collections::merge_overwrite),
    ("mustMergeOverwrite", collections::merge_overwrite),
    ("deepCopy", collections::deep_copy_fn),
    ("mustDeepCopy", collections::deep_copy_fn),
    // defaults, logic, types
    ("default", default),
    ("empty", empty),
    ("coalesce", coalesce),
    ("ternary", ternary),
    ("kindOf", kind_of_fn),
    ("kindIs", kind_is),
    ("typeOf", type_of_fn),
    ("typeIs", type_is),
    ("deepEqual", deep_equal),
    // numbers
    ("int", int),
    ("int64", int),
    ("atoi", atoi),
    ("float64", float64),
    ("add", add),
    ("add1", add1),
    ("sub", sub),
    ("mul", mul),
    ("div", div),
    ("mod", modulo),
    ("max", max),
    ("min", min),
    ("addf", addf),
    ("subf", subf),
    ("mulf", mulf),
    ("divf", divf),
    ("floor", floor),
    ("ceil", ceil),
    ("round", round),
    // versions
    ("semver", semver_fn),
    ("semverCompare", semver_compare),
];

/// Names handled directly by the translator (operators) or by [`template`].
const SPECIAL: &[&str] = &[
    "and",
    "or",
    "not",
    "include",
    "tpl",
    "required",
    "fail",
    "lookup",
    "getHostByName",
];

/// Whether `name` is a function templates may call.
pub(crate) fn is_function(name: &str) -> bool {
    SPECIAL.contains(&name) || FUNCTIONS.iter().any(|(known, _)| *known == name)
}

/// Registers all plain functions on `env` (template-aware ones are added by [`template::register`]).
pub(crate) fn register(env: &mut Environment<'static>) {
    for (name, func) in FUNCTIONS {
        let func = *func;
        env.add_function(format!("f_{name}"), move |args: Rest<Value>| func(&args));
    }
}

/// A template execution error with Go-like wording.
pub(crate) fn fail(message: impl Into<String>) -> Error {
    Error::new(ErrorKind::InvalidOperation, message.into())
}

/// Checks the argument count (missing trailing arguments are Go's "wrong number of args").
pub(crate) fn want(name: &str, args: &[Value], count: usize) -> Result<(), Error> {
    if args.len() == count {
        Ok(())
    } else {
        Err(fail(format!(
            "wrong number of args for {name}: want {count} got {}",
            args.len()
        )))
    }
}

/// The argument at `i`, if given.
pub(crate) fn arg(args: &[Value], i: usize) -> Option<&Value> {
    args.get(i)
}

/// The argument at `i` as Sprig's `strval` (missing → "").
pub(crate) fn arg_str(args: &[Value], i: usize) -> String {
    match args.get(i) {
        Some(v) if is_nil(v) => String::new(),
        Some(v) => to_go_string(v),
        None => String::new(),
    }
}

fn eq(args: &[Value]) -> Result<Value, Error> {
    let (first, rest) = args
        .split_first()
        .ok_or_else(|| fail("missing argument for comparison"))?;
    if rest.is_empty() {
        return Err(fail("missing argument for comparison"));
    }
    Ok(Value::from(rest.iter().any(|other| go_equal(first, other))))
}

fn ne(args: &[Value]) -> Result<Value, Error> {
    want("ne", args, 2)?;
    Ok(Value::from(!go_equal(&args[0], &args[1])))
}

fn compare(name: &str, args: &[Value]) -> Result<std::cmp::Ordering, Error> {
    want(name, args, 2)?;
    let (a, b) = (&args[0], &args[1]);
    match (a.kind(), b.kind()) {
        (ValueKind::Number, ValueKind::Number) => {
            if a.is_integer() && b.is_integer() {
                Ok(a.as_i64().cmp(&b.as_i64()))
            } else {
                to_f64(a)
                    .partial_cmp(&to_f64(b))
                    .ok_or_else(|| fail("incomparable numbers"))
            }
        }
        (ValueKind::String, ValueKind::String) => Ok(a.as_str().cmp(&b.as_str())),
        _ => Err(fail(format!(
            "error calling {name}: incompatible types for comparison"
        ))),
    }
}

fn lt(args: &[Value]) -> Result<Value, Error> {
    Ok(Value::from(compare("lt", args)?.is_lt()))
}

fn le(args: &[Value]) -> Result<Value, Error> {
    Ok(Value::from(compare("le", args)?.is_le()))
}

fn gt(args: &[Value]) -> Result<Value, Error> {
    Ok(Value::from(compare("gt", args)?.is_gt()))
}

fn ge(args: &[Value]) -> Result<Value, Error> {
    Ok(Value::from(compare("ge", args)?.is_ge()))
}

/// `default d v`: v unless it is empty.
fn default(args: &[Value]) -> Result<Value, Error> {
    match args {
        [fallback] => Ok(fallback.clone()),
        [fallback, given] => Ok(if is_empty(given) {
            fallback.clone()
        } else {
            given.clone()
        }),
        _ => Err(fail(format!(
            "wrong number of args for default: want 2 got {}",
            args.len()
        ))),
    }
}

fn empty(args: &[Value]) -> Result<Value, Error> {
    want("empty", args, 1)?;
    Ok(Value::from(is_empty(&args[0])))
}

fn coalesce(args: &[Value]) -> Result<Value, Error> {
    Ok(args
        .iter()
        .find(|v| !is_empty(v))
        .cloned()
        .unwrap_or(Value::from(())))
}

/// `ternary a b cond`
fn ternary(args: &[Value]) -> Result<Value, Error> {
    want("ternary", args, 3)?;
    Ok(if args[2].is_true() {
        args[0].clone()
    } else {
        args[1].clone()
    })
}

fn kind_of_fn(args: &[Value]) -> Result<Value, Error> {
    want("kindOf", args, 1)?;
    Ok(Value::from(kind_of(&args[0])))
}

fn kind_is(args: &[Value]) -> Result<Value, Error> {
    want("kindIs", args, 2)?;
    let kind = kind_of(&args[1]);
    let wanted = arg_str(args, 0);
    Ok(Value::from(
        wanted == kind || (wanted == "int64" && kind == "int"),
    ))
}

fn type_of_fn(args: &[Value]) -> Result<Value, Error> {
    want("typeOf", args, 1)?;
    Ok(Value::from(type_of(&args[0])))
}

fn type_is(args: &[Value]) -> Result<Value, Error> {
    want("typeIs", args, 2)?;
    Ok(Value::from(arg_str(args, 0) == type_of(&args[1])))
}

fn deep_equal(args: &[Value]) -> Result<Value, Error> {
    want("deepEqual", args, 2)?;
    Ok(Value::from(
        value::to_json(&args[0]) == value::to_json(&args[1]),
    ))
}

fn int(args: &[Value]) -> Result<Value, Error> {
    want("int", args, 1)?;
    Ok(Value::from(to_i64(&args[0])))
}

fn atoi(args: &[Value]) -> Result<Value, Error> {
    want("atoi", args, 1)?;
    Ok(Value::from(
        arg_str(args, 0).trim().parse::<i64>().unwrap_or(0),
    ))
}

fn float64(args: &[Value]) -> Result<Value, Error> {
    want("float64", args, 1)?;
    Ok(Value::from(to_f64(&args[0])))
}

fn int_fold(name: &str, args: &[Value], fold: fn(i64, i64) -> Option<i64>) -> Result<Value, Error> {
    let (first, rest) = args
        .split_first()
        .ok_or_else(|| fail(format!("wrong number of args for {name}")))?;
    let mut acc = to_i64(first);
    for value in rest {
        acc = fold(acc, to_i64(value)).ok_or_else(|| {
            fail(format!(
                "error calling {name}: integer divide by zero or overflow"
            ))
        })?;
    }
    Ok(Value::from(acc))
}

fn add(args: &[Value]) -> Result<Value, Error> {
    int_fold("add", args, |a, b| Some(a.wrapping_add(b)))
}

fn add1(args: &[Value]) -> Result<Value, Error> {
    want("add1", args, 1)?;
    Ok(Value::from(to_i64(&args[0]).wrapping_add(1)))
}

fn sub(args: &[Value]) -> Result<Value, Error> {
    want("sub", args, 2)?;
    int_fold("sub", args, |a, b| Some(a.wrapping_sub(b)))
}

fn mul(args: &[Value]) -> Result<Value, Error> {
    int_fold("mul", args, |a, b| Some(a.wrapping_mul(b)))
}

fn div(args: &[Value]) -> Result<Value, Error> {
    want("div", args, 2)?;
    int_fold("div", args, i64::checked_div)
}

fn modulo(args: &[Value]) -> Result<Value, Error> {
    want("mod", args, 2)?;
    int_fold("mod", args, i64::checked_rem)
}

fn max(args: &[Value]) -> Result<Value, Error> {
    int_fold("max", args, |a, b| Some(a.max(b)))
}

fn min(args: &[Value]) -> Result<Value, Error> {
    int_fold("min", args, |a, b| Some(a.min(b)))
}

fn float_fold(name: &str, args: &[Value], fold: fn(f64, f64) -> f64) -> Result<Value, Error> {
    let (first, rest) = args
        .split_first()
        .ok_or_else(|| fail(format!("wrong number of args for {name}")))?;
    Ok(Value::from(
        rest.iter()
            .fold(to_f64(first), |acc, v| fold(acc, to_f64(v))),
    ))
}

fn addf(args: &[Value]) -> Result<Value, Error> {
    float_fold("addf", args, |a, b| a + b)
}

fn subf(args: &[Value]) -> Result<Value, Error> {
    float_fold("subf", args, |a, b| a - b)
}

fn mulf(args: &[Value]) -> Result<Value, Error> {
    float_fold("mulf", args, |a, b| a * b)
}

fn divf(args: &[Value]) -> Result<Value, Error> {
    float_fold("divf", args, |a, b| a / b)
}

fn floor(args: &[Value]) -> Result<Value, Error> {
    want("floor", args, 1)?;
    Ok(Value::from(to_f64(&args[0]).floor()))
}

fn ceil(args: &[Value]) -> Result<Value, Error> {
    want("ceil", args, 1)?;
    Ok(Value::from(to_f64(&args[0]).ceil()))
}

/// `round v precision`
fn round(args: &[Value]) -> Result<Value, Error> {
    if args.is_empty() || args.len() > 3 {
        return Err(fail("wrong number of args for round"));
    }
    let places = args.get(1).map_or(0, to_i64).clamp(0, 15) as i32;
    let factor = 10f64.powi(places);
    Ok(Value::from((to_f64(&args[0]) * factor).round() / factor))
}

/// `semver "1.2.3"`: a map with Major, Minor, Patch, Prerelease, Metadata, Original.
fn semver_fn(args: &[Value]) -> Result<Value, Error> {
    want("semver", args, 1)?;
    let text = arg_str(args, 0);
    let version = semver::parse_version(&text).map_err(fail)?;
    Ok(GoMap::value(
        [
            ("Major".to_string(), Value::from(version.major as i64)),
            ("Minor".to_string(), Value::from(version.minor as i64)),
            ("Patch".to_string(), Value::from(version.patch as i64)),
            ("Prerelease".to_string(), Value::from(version.pre)),
            ("Metadata".to_string(), Value::from(version.metadata)),
            ("Original".to_string(), Value::from(text)),
        ]
        .into_iter()
        .collect(),
    ))
}

/// `semverCompare constraint version`
fn semver_compare(args: &[Value]) -> Result<Value, Error> {
    want("semverCompare", args, 2)?;
    semver::satisfies(&arg_str(args, 0), &arg_str(args, 1))
        .map(Value::from)
        .map_err(fail)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn eq_accepts_several_candidates_and_nil() {
        assert!(
            eq(&[Value::from("b"), Value::from("a"), Value::from("b")])
                .unwrap()
                .is_true()
        );
        assert!(!eq(&[Value::UNDEFINED, Value::from("a")]).unwrap().is_true());
        assert!(eq(&[Value::from(1)]).is_err());
    }

    #[test]
    fn comparisons_reject_mixed_kinds() {
        assert!(gt(&[Value::from(3), Value::from(1.5)]).unwrap().is_true());
        assert!(lt(&[Value::from("a"), Value::from("b")]).unwrap().is_true());
        assert!(gt(&[Value::from("a"), Value::from(1)]).is_err());
    }

    #[test]
    fn math_uses_int64_like_sprig() {
        assert_eq!(
            div(&[Value::from(17), Value::from(5)]).unwrap().as_i64(),
            Some(3)
        );
        assert_eq!(
            modulo(&[Value::from(17), Value::from(5)]).unwrap().as_i64(),
            Some(2)
        );
        assert_eq!(
            max(&[Value::from(3), Value::from(9), Value::from(4)])
                .unwrap()
                .as_i64(),
            Some(9)
        );
        assert_eq!(
            min(&[Value::from(3), Value::from(9), Value::from(4)])
                .unwrap()
                .as_i64(),
            Some(3)
        );
        assert_eq!(
            sub(&[Value::from(5.0), Value::from(1)]).unwrap().as_i64(),
            Some(4)
        );
        assert!(div(&[Value::from(1), Value::from(0)]).is_err());
        assert_eq!(
            mul(&[Value::from(3.0), Value::from(10)]).unwrap().as_i64(),
            Some(30)
        );
    }

    #[test]
    fn defaults_and_types_follow_sprig() {
        assert_eq!(
            default(&[Value::from("d"), Value::from(false)])
                .unwrap()
                .to_string(),
            "d"
        );
        assert_eq!(
            default(&[Value::from("d"), Value::from("v")])
                .unwrap()
                .to_string(),
            "v"
        );
        assert_eq!(
            coalesce(&[Value::UNDEFINED, Value::from(0), Value::from("third")])
                .unwrap()
                .to_string(),
            "third"
        );
        assert_eq!(
            ternary(&[Value::from("on"), Value::from("off"), Value::from(false)])
                .unwrap()
                .to_string(),
            "off"
        );
        assert!(
            kind_is(&[Value::from("map"), value::from_json(&serde_json::json!({}))])
                .unwrap()
                .is_true()
        );
        assert_eq!(
            type_of_fn(&[Value::from(1.5)]).unwrap().to_string(),
            "float64"
        );
        assert_eq!(int(&[Value::from("42")]).unwrap().as_i64(), Some(42));
    }

    #[test]
    fn every_registered_name_is_a_known_function() {
        assert!(is_function("include") && is_function("toYaml") && is_function("and"));
        assert!(!is_function("nope"));
    }
}

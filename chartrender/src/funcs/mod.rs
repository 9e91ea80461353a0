//! Go builtins, Sprig and Helm functions registered as `f_<name>` globals on a minijinja environment.

mod action_table;
mod call_order;
mod collections;
mod compare;
pub(crate) mod context;
mod crypto;
mod dates;
mod decimal;
mod describe;
mod dsa;
mod encoding;
mod field_error;
mod fields;
pub(crate) mod gostring;
pub(crate) mod gostruct;
pub(crate) mod gotime;
mod gotype;
pub(crate) mod goyaml;
mod isprint;
mod location;
pub(crate) mod number;
mod paths;
pub(crate) mod printf;
#[cfg(test)]
mod properties;
mod random;
mod semver;
pub(crate) mod signature;
mod strings;
pub(crate) mod template;
mod text;
mod toml;
pub(crate) mod tpl_set;
pub(crate) mod value;
mod wordcase;
mod yaml_errors;

use std::sync::LazyLock;

use minijinja::value::Value;
use minijinja::{Environment, Error, ErrorKind, State};

use crate::meter;
use value::{is_empty, is_nil, kind_of, to_f64, to_go_string, to_i64, type_of};

/// A function taking its arguments in Go order.
type Func = fn(&[Value]) -> Result<Value, Error>;

/// Every function a template may call, except `include`/`tpl`/`required`/`fail`/`lookup` (see [`template`]), under
/// its global name: the Go name prefixed with `f_` (static, so environments cloned from one base share the names).
const FUNCTIONS: &[(&str, Func)] = &[
    // Go builtins
    ("f_index", collections::index),
    ("f_len", collections::len),
    ("f_print", strings::print),
    ("f_printf", strings::printf_fn),
    ("f_println", strings::println),
    ("f_eq", compare::eq),
    ("f_ne", compare::ne),
    ("f_lt", compare::lt),
    ("f_le", compare::le),
    ("f_gt", compare::gt),
    ("f_ge", compare::ge),
    ("f_html", strings::html),
    ("f_urlquery", strings::urlquery),
    ("f_slice", collections::slice),
    ("f_range_values", collections::range_values),
    ("f_range_pairs", collections::range_pairs),
    // strings
    ("f_toString", strings::to_string),
    ("f_trim", strings::trim),
    ("f_trimAll", strings::trim_all),
    ("f_trimPrefix", strings::trim_prefix),
    ("f_trimSuffix", strings::trim_suffix),
    ("f_upper", strings::upper),
    ("f_lower", strings::lower),
    ("f_title", strings::title),
    ("f_untitle", strings::untitle),
    ("f_repeat", strings::repeat),
    ("f_substr", strings::substr),
    ("f_nospace", strings::nospace),
    ("f_trunc", strings::trunc),
    ("f_abbrev", strings::abbrev),
    ("f_initials", strings::initials),
    ("f_contains", strings::contains),
    ("f_hasPrefix", strings::has_prefix),
    ("f_hasSuffix", strings::has_suffix),
    ("f_quote", strings::quote),
    ("f_squote", strings::squote),
    ("f_cat", strings::cat),
    ("f_indent", strings::indent),
    ("f_nindent", strings::nindent),
    ("f_replace", strings::replace),
    ("f_plural", strings::plural),
    ("f_snakecase", strings::snakecase),
    ("f_kebabcase", strings::kebabcase),
    ("f_camelcase", strings::camelcase),
    ("f_wrap", text::wrap),
    ("f_wrapWith", text::wrap_with),
    ("f_swapcase", text::swapcase),
    ("f_abbrevboth", text::abbrevboth),
    ("f_trimall", strings::trim_all),
    ("f_toStrings", text::to_strings),
    ("f_shuffle", random::shuffle),
    ("f_randAlpha", random::rand_alpha),
    ("f_randNumeric", random::rand_numeric),
    ("f_randAlphaNum", random::rand_alpha_num),
    ("f_randAscii", random::rand_ascii),
    ("f_randInt", random::rand_int),
    ("f_uuidv4", random::uuidv4),
    ("f_js", text::js),
    ("f_call", text::call),
    ("f_regexQuoteMeta", text::regex_quote_meta),
    ("f_mustRegexFindAll", strings::regex_find_all),
    (
        "f_mustRegexReplaceAllLiteral",
        strings::regex_replace_all_literal,
    ),
    ("f_mustRegexSplit", strings::regex_split),
    // paths and URLs (path/filepath behave alike on Linux)
    ("f_base", paths::base),
    ("f_dir", paths::dir),
    ("f_clean", paths::clean),
    ("f_ext", paths::ext),
    ("f_isAbs", paths::is_abs),
    ("f_osBase", paths::base),
    ("f_osDir", paths::dir),
    ("f_osClean", paths::clean),
    ("f_osExt", paths::ext),
    ("f_osIsAbs", paths::is_abs),
    ("f_urlParse", paths::url_parse),
    ("f_urlJoin", paths::url_join),
    // dates
    ("f_now", dates::now),
    ("f_date", dates::date),
    ("f_dateInZone", dates::date_in_zone),
    ("f_date_in_zone", dates::date_in_zone),
    ("f_htmlDate", dates::html_date),
    ("f_htmlDateInZone", dates::html_date_in_zone),
    ("f_dateModify", dates::date_modify),
    ("f_date_modify", dates::date_modify),
    ("f_mustDateModify", dates::must_date_modify),
    ("f_must_date_modify", dates::must_date_modify),
    ("f_toDate", dates::to_date),
    ("f_mustToDate", dates::must_to_date),
    ("f_unixEpoch", dates::unix_epoch),
    ("f_ago", dates::ago),
    ("f_duration", dates::duration),
    ("f_durationRound", dates::duration_round),
    // crypto
    ("f_sha1sum", crypto::sha1sum),
    ("f_bcrypt", crypto::bcrypt),
    ("f_htpasswd", crypto::htpasswd),
    ("f_derivePassword", crypto::derive_password),
    ("f_encryptAES", crypto::encrypt_aes),
    ("f_decryptAES", crypto::decrypt_aes),
    ("f_randBytes", crypto::rand_bytes),
    ("f_genPrivateKey", crypto::gen_private_key),
    ("f_genCA", crypto::gen_ca),
    ("f_genCAWithKey", crypto::gen_ca_with_key),
    ("f_genSelfSignedCert", crypto::gen_self_signed_cert),
    (
        "f_genSelfSignedCertWithKey",
        crypto::gen_self_signed_cert_with_key,
    ),
    ("f_genSignedCert", crypto::gen_signed_cert),
    ("f_genSignedCertWithKey", crypto::gen_signed_cert_with_key),
    ("f_buildCustomCert", crypto::build_custom_cert),
    ("f_split", strings::split),
    ("f_splitn", strings::splitn),
    ("f_splitList", strings::split_list),
    ("f_join", strings::join),
    ("f_sortAlpha", strings::sort_alpha),
    ("f_regexMatch", strings::regex_match),
    ("f_mustRegexMatch", strings::regex_match),
    ("f_regexFind", strings::regex_find),
    ("f_mustRegexFind", strings::regex_find),
    ("f_regexFindAll", strings::regex_find_all),
    ("f_regexReplaceAll", strings::regex_replace_all),
    ("f_mustRegexReplaceAll", strings::regex_replace_all),
    (
        "f_regexReplaceAllLiteral",
        strings::regex_replace_all_literal,
    ),
    ("f_regexSplit", strings::regex_split),
    ("f_b64enc", encoding::b64enc),
    ("f_b64dec", encoding::b64dec),
    ("f_sha256sum", encoding::sha256sum),
    ("f_adler32sum", encoding::adler32sum),
    ("f_toYaml", encoding::to_yaml),
    ("f_mustToYaml", encoding::to_yaml),
    ("f_fromYaml", encoding::from_yaml),
    ("f_fromYamlArray", encoding::from_yaml_array),
    ("f_toJson", encoding::to_json_fn),
    ("f_mustToJson", encoding::to_json_fn),
    ("f_toRawJson", encoding::to_raw_json),
    ("f_toPrettyJson", encoding::to_pretty_json),
    ("f_fromJson", encoding::from_json_fn),
    ("f_fromJsonArray", encoding::from_json_array),
    ("f_mustFromJson", encoding::must_from_json),
    ("f_mustToRawJson", encoding::to_raw_json),
    ("f_mustToPrettyJson", encoding::to_pretty_json),
    ("f_b32enc", text::b32enc),
    ("f_b32dec", text::b32dec),
    ("f_toToml", toml::to_toml),
    // lists and dicts
    ("f_list", collections::list),
    ("f_tuple", collections::list),
    ("f_append", collections::append),
    ("f_push", collections::append),
    ("f_mustAppend", collections::append),
    ("f_mustPush", collections::append),
    ("f_prepend", collections::prepend),
    ("f_mustPrepend", collections::prepend),
    ("f_concat", collections::concat),
    ("f_first", collections::first),
    ("f_mustFirst", collections::first),
    ("f_last", collections::last),
    ("f_mustLast", collections::last),
    ("f_rest", collections::rest),
    ("f_mustRest", collections::rest),
    ("f_initial", collections::initial),
    ("f_mustInitial", collections::initial),
    ("f_reverse", collections::reverse),
    ("f_mustReverse", collections::reverse),
    ("f_uniq", collections::uniq),
    ("f_mustUniq", collections::uniq),
    ("f_compact", collections::compact),
    ("f_mustCompact", collections::compact),
    ("f_without", collections::without),
    ("f_mustWithout", collections::without),
    ("f_has", collections::has),
    ("f_mustHas", collections::has),
    ("f_mustSlice", collections::slice),
    ("f_chunk", collections::chunk),
    ("f_mustChunk", collections::chunk),
    ("f_until", collections::until),
    ("f_untilStep", collections::until_step),
    ("f_seq", text::seq),
    ("f_all", text::all),
    ("f_any", text::any),
    ("f_dict", collections::dict),
    ("f_get", collections::get),
    ("f_set", collections::set),
    ("f_unset", collections::unset),
    ("f_hasKey", collections::has_key),
    ("f_keys", collections::keys),
    ("f_values", collections::values),
    ("f_pick", collections::pick),
    ("f_omit", collections::omit),
    ("f_pluck", collections::pluck),
    ("f_dig", collections::dig),
    ("f_merge", collections::merge),
    ("f_mustMerge", collections::merge),
    ("f_mergeOverwrite", collections::merge_overwrite),
    ("f_mustMergeOverwrite", collections::merge_overwrite),
    ("f_deepCopy", collections::deep_copy_fn),
    ("f_mustDeepCopy", collections::must_deep_copy_fn),
    // defaults, logic, types
    ("f_default", default),
    ("f_empty", empty),
    ("f_coalesce", coalesce),
    ("f_ternary", ternary),
    ("f_kindOf", kind_of_fn),
    ("f_kindIs", kind_is),
    ("f_typeOf", type_of_fn),
    ("f_typeIs", type_is),
    ("f_typeIsLike", text::type_is_like),
    ("f_deepEqual", deep_equal),
    // numbers
    ("f_int", int),
    ("f_int64", int64),
    ("f_atoi", atoi),
    ("f_float64", float64),
    ("f_add", add),
    ("f_add1", add1),
    ("f_sub", sub),
    ("f_mul", mul),
    ("f_div", div),
    ("f_mod", modulo),
    ("f_max", max),
    ("f_biggest", max),
    ("f_min", min),
    ("f_maxf", text::maxf),
    ("f_minf", text::minf),
    ("f_add1f", text::add1f),
    ("f_toDecimal", text::to_decimal),
    ("f_addf", addf),
    ("f_subf", subf),
    ("f_mulf", mulf),
    ("f_divf", divf),
    ("f_floor", floor),
    ("f_ceil", ceil),
    ("f_round", round),
    // versions
    ("f_semver", semver_fn),
    ("f_semverCompare", semver_compare),
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

/// Whether argument `index` of the function `name` is a Go `int` parameter (a whole-number constant converts).
pub(crate) fn takes_int(name: &str, index: usize) -> bool {
    signature::of(name).is_some_and(|signature| signature.param(index) == signature::Param::Int)
}

/// Whether argument `index` of the function `name` is a Go `map[string]interface {}` parameter.
pub(crate) fn takes_map(name: &str, index: usize) -> bool {
    signature::of(name).is_some_and(|signature| signature.param(index) == signature::Param::Map)
}

/// Whether the function `name` has a Go `map[string]interface {}` parameter.
pub(crate) fn has_map_param(name: &str) -> bool {
    static NAMES: LazyLock<foldhash::HashSet<&'static str>> = LazyLock::new(|| {
        FUNCTIONS
            .iter()
            .filter_map(|(global, _)| global.strip_prefix("f_"))
            .filter(|name| (0..4).any(|index| takes_map(name, index)))
            .collect()
    });
    NAMES.contains(name)
}

/// Whether `name` is a function templates may call.
pub(crate) fn is_function(name: &str) -> bool {
    static NAMES: LazyLock<foldhash::HashSet<&'static str>> = LazyLock::new(|| {
        FUNCTIONS
            .iter()
            .filter_map(|(global, _)| global.strip_prefix("f_"))
            .chain(SPECIAL.iter().copied())
            .collect()
    });
    NAMES.contains(name)
}

/// Registers all functions on `env` (the chart's template loader is set by [`template::register`]).
pub(crate) fn register(env: &mut Environment<'static>) {
    for (global, func) in FUNCTIONS {
        let func = *func;
        let name = global.strip_prefix("f_").unwrap_or(global);
        let nesting = crate::nesting::measure_of(name);
        let signature = signature::of(name);
        env.add_function(*global, move |state: &State, args: &[Value]| {
            meter::check_deadline()?;
            check_defined(state, args)?;
            if let Some(signature) = &signature {
                signature.check(args)?;
            }
            if let Some(measure) = nesting {
                crate::nesting::check_arguments(name, measure, args)?;
            }
            let value = func(args).map_err(|error| call_error_named(error, name))?;
            if value.is_undefined() {
                return Ok(value::missing());
            }
            meter::check_result(name, &value)?;
            if let Some(measure) = nesting {
                crate::nesting::check_result(name, measure, &value)?;
            }
            Ok(value)
        });
    }
    // The translator's field chains on declared variables and parenthesized pipelines (not callable from
    // templates: `is_function` does not know the name).
    env.add_function("f__field", |state: &State, args: &[Value]| {
        check_defined(state, args)?;
        fields::field_chain(args)
    });
    // A field's value passed to a map parameter (the translator's `push_map_argument`): Go refuses a nil one.
    env.add_function("f__map_arg", |state: &State, args: &[Value]| {
        check_defined(state, args)?;
        match args.first() {
            Some(value) if !value::is_nil(value) => Ok(value.clone()),
            _ => Err(fail(
                "wrong type for value; expected map[string]interface {}; got interface {}",
            )),
        }
    });
    // A command Go's executor refuses and its parser accepts (the translator's: a constant given arguments,
    // `and` without any), which fails only when it runs.
    env.add_function("f_exec_error", |message: &str| -> Result<Value, Error> {
        Err(fail(message))
    });
    // A command that is `nil` (the translator's; Go fails when it executes one).
    env.add_function("f_nil", || -> Result<Value, Error> {
        Err(fail("nil is not a command"))
    });
    // The translator calls this at the start of every `range` iteration.
    env.add_function("f_tick", || {
        meter::check_deadline().map(|()| Value::from(""))
    });
    template::register_plain(env);
}

/// A function shared by several names (`append`, `push`, `mustAppend`) words its `error calling …:` errors with its
/// own; Go names the function the template called.
fn call_error_named(error: Error, name: &str) -> Error {
    let Some(rest) = error
        .detail()
        .and_then(|d| d.strip_prefix("error calling "))
    else {
        return error;
    };
    match rest.split_once(": ") {
        Some((called, text)) if called != name && !called.contains(' ') => {
            fail(format!("error calling {name}: {text}"))
        }
        _ => error,
    }
}

/// Fails when an argument is the value of a field of a non-map (Go fails evaluating it, before the call); the
/// check runs only for undefined arguments, which are rare.
pub(crate) fn check_defined(state: &State, args: &[Value]) -> Result<(), Error> {
    check_arguments(state, args, None)
}

/// [`check_defined`], then the Go parameter types of `signature` (resolved once, when a function is registered).
pub(crate) fn check_arguments(
    state: &State,
    args: &[Value],
    signature: Option<&signature::Signature>,
) -> Result<(), Error> {
    if args
        .iter()
        .any(|arg| value::is_field_of_a_non_map(state, arg))
    {
        return Err(Error::from(ErrorKind::UndefinedError));
    }
    match signature {
        Some(signature) => signature.check(args),
        None => Ok(()),
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
    Ok(Value::from(arg_str(args, 0) == kind_of(&args[1])))
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
    Ok(Value::from(value::deep_equal(&args[0], &args[1])))
}

/// `int x`: Go's `int`.
fn int(args: &[Value]) -> Result<Value, Error> {
    want("int", args, 1)?;
    Ok(Value::from(to_i64(&args[0])))
}

/// `int64 x`: Go's `int64` (see [`number`]).
fn int64(args: &[Value]) -> Result<Value, Error> {
    want("int64", args, 1)?;
    Ok(number::int64(to_i64(&args[0])))
}

fn atoi(args: &[Value]) -> Result<Value, Error> {
    want("atoi", args, 1)?;
    Ok(Value::from(arg_str(args, 0).parse::<i64>().unwrap_or(0)))
}

fn float64(args: &[Value]) -> Result<Value, Error> {
    want("float64", args, 1)?;
    Ok(Value::from(to_f64(&args[0])))
}

/// Sprig's integer arithmetic: `int64` results, folded left over the arguments.
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
    Ok(number::int64(acc))
}

fn add(args: &[Value]) -> Result<Value, Error> {
    int_fold("add", args, |a, b| Some(a.wrapping_add(b)))
}

fn add1(args: &[Value]) -> Result<Value, Error> {
    want("add1", args, 1)?;
    Ok(number::int64(to_i64(&args[0]).wrapping_add(1)))
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

/// Sprig's float arithmetic: decimal, folded left over the arguments (see [`decimal`]).
fn float_fold(name: &str, args: &[Value], op: decimal::Op) -> Result<Value, Error> {
    let (first, rest) = args
        .split_first()
        .ok_or_else(|| fail(format!("wrong number of args for {name}")))?;
    let rest: Vec<f64> = rest.iter().map(to_f64).collect();
    decimal::fold(op, to_f64(first), &rest)
        .map(Value::from)
        .map_err(|e| fail(format!("error calling {name}: {e}")))
}

fn addf(args: &[Value]) -> Result<Value, Error> {
    float_fold("addf", args, decimal::Op::Add)
}

fn subf(args: &[Value]) -> Result<Value, Error> {
    float_fold("subf", args, decimal::Op::Sub)
}

fn mulf(args: &[Value]) -> Result<Value, Error> {
    float_fold("mulf", args, decimal::Op::Mul)
}

fn divf(args: &[Value]) -> Result<Value, Error> {
    float_fold("divf", args, decimal::Op::Div)
}

fn floor(args: &[Value]) -> Result<Value, Error> {
    want("floor", args, 1)?;
    Ok(Value::from(to_f64(&args[0]).floor()))
}

fn ceil(args: &[Value]) -> Result<Value, Error> {
    want("ceil", args, 1)?;
    Ok(Value::from(to_f64(&args[0]).ceil()))
}

/// `round v places [roundOn]`
fn round(args: &[Value]) -> Result<Value, Error> {
    if args.len() < 2 || args.len() > 3 {
        return Err(fail(format!(
            "wrong number of args for round: want at least 2 got {}",
            args.len()
        )));
    }
    let round_on = args.get(2).map_or(0.5, to_f64);
    Ok(Value::from(decimal::round(
        to_f64(&args[0]),
        to_i64(&args[1]) as f64,
        round_on,
    )))
}

/// `semver "1.2.3"`: a `*semver.Version` object (see [`semver::GoSemver`]).
fn semver_fn(args: &[Value]) -> Result<Value, Error> {
    want("semver", args, 1)?;
    let text = arg_str(args, 0);
    semver::GoSemver::parse(&text)
        .map(Value::from_object)
        .map_err(fail)
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
    fn call_errors_name_the_function_the_template_called() {
        let cases = [
            (
                "error calling append: Cannot push on type string",
                "mustPush",
                "error calling mustPush: Cannot push on type string",
            ),
            ("error calling last: x", "last", "error calling last: x"),
            (
                "error calling include: template: a: b",
                "include",
                "error calling include: template: a: b",
            ),
            (
                "wrong number of args for index: want 2 got 1",
                "mustIndex",
                "wrong number of args for index: want 2 got 1",
            ),
        ];
        for (message, name, want) in cases {
            let got = call_error_named(fail(message), name);
            assert_eq!(got.detail(), Some(want), "{message}");
        }
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

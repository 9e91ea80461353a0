//! The Go parameter types of the functions (Sprig v3.2.3's, Helm's and Go's builtins): Go's template engine
//! refuses an argument whose type its parameter cannot take (`trunc .Values.n "x"` with a values number is
//! `wrong type for value; expected int; got float64`), before the function runs. `interface {}` parameters take
//! anything and are not listed.

use minijinja::Error;
use minijinja::value::{Value, ValueKind};

use super::fail;
use super::gotime::GoTime;
use super::number::{GoNumber, number_type};
use super::value::{MapType, is_nil, map_type, type_of};

/// A parameter type the engine checks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Param {
    /// `interface {}` (and the types this renderer does not check).
    Any,
    /// `string`.
    Str,
    /// `int` (an integer literal or a Go `int` value; not `int64` nor a values number).
    Int,
    /// `bool`.
    Bool,
    /// `float64`: numbers (an integer literal converts; the value kinds are not told apart here).
    Float,
    /// `map[string]interface {}` (or `chartutil.Values`, which is assignable). A nil argument is let through:
    /// Go takes it from a variable or a parenthesized pipeline and refuses it from a field, which the translator
    /// tells apart (a field argument goes through `f__map_arg`).
    Map,
    /// `time.Time`.
    Time,
}

/// The parameters of a function: fixed ones, then the type of a variadic tail.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Signature {
    fixed: &'static [Param],
    variadic: Option<Param>,
}

const fn fixed(params: &'static [Param]) -> Option<Signature> {
    Some(Signature {
        fixed: params,
        variadic: None,
    })
}

const fn variadic(params: &'static [Param], tail: Param) -> Option<Signature> {
    Some(Signature {
        fixed: params,
        variadic: Some(tail),
    })
}

use Param::{Any, Bool, Float, Int, Map, Str, Time};

/// The checked signature of the function `name` (Go's name), `None` when every parameter is `interface {}`.
pub(crate) fn of(name: &str) -> Option<Signature> {
    match name {
        "trim" | "upper" | "lower" | "title" | "untitle" | "nospace" | "initials" | "swapcase"
        | "shuffle" | "snakecase" | "camelcase" | "kebabcase" | "sha1sum" | "sha256sum"
        | "sha512sum" | "adler32sum" | "atoi" | "b64enc" | "b64dec" | "b32enc" | "b32dec"
        | "base" | "dir" | "clean" | "ext" | "isAbs" | "osBase" | "osDir" | "osClean" | "osExt"
        | "osIsAbs" | "urlParse" | "regexQuoteMeta" | "bcrypt" | "genPrivateKey" | "semver"
        | "getHostByName" | "fail" | "fromYaml" | "fromYamlArray" | "fromJson"
        | "fromJsonArray" | "mustFromJson" => fixed(&[Str]),
        "trimAll" | "trimall" | "trimPrefix" | "trimSuffix" | "contains" | "hasPrefix"
        | "hasSuffix" | "split" | "splitList" | "regexMatch" | "mustRegexMatch" | "regexFind"
        | "mustRegexFind" | "semverCompare" | "htpasswd" | "encryptAES" | "decryptAES"
        | "buildCustomCert" | "toDate" | "mustToDate" => fixed(&[Str, Str]),
        "replace"
        | "regexReplaceAll"
        | "mustRegexReplaceAll"
        | "regexReplaceAllLiteral"
        | "mustRegexReplaceAllLiteral" => fixed(&[Str, Str, Str]),
        "regexFindAll" | "mustRegexFindAll" | "regexSplit" | "mustRegexSplit" => {
            fixed(&[Str, Str, Int])
        }
        "trunc" | "abbrev" | "wrap" | "indent" | "nindent" | "repeat" => fixed(&[Int, Str]),
        "substr" | "abbrevboth" => fixed(&[Int, Int, Str]),
        "wrapWith" => fixed(&[Int, Str, Str]),
        "splitn" => fixed(&[Str, Int, Str]),
        "plural" => fixed(&[Str, Str, Int]),
        "randAlpha" | "randAlphaNum" | "randAscii" | "randNumeric" | "randBytes" | "until" => {
            fixed(&[Int])
        }
        "randInt" => fixed(&[Int, Int]),
        "untilStep" => fixed(&[Int, Int, Int]),
        "chunk" | "mustChunk" => fixed(&[Int, Any]),
        "seq" => variadic(&[], Int),
        "round" => variadic(&[Any, Int], Float),
        "ternary" => fixed(&[Any, Any, Bool]),
        "join" | "kindIs" | "typeIs" | "typeIsLike" | "date" | "include" | "tpl" | "required" => {
            fixed(&[Str, Any])
        }
        "dateInZone" | "date_in_zone" => fixed(&[Str, Any, Str]),
        "htmlDateInZone" => fixed(&[Any, Str]),
        "dateModify" | "date_modify" | "mustDateModify" | "must_date_modify" => fixed(&[Str, Time]),
        "unixEpoch" => fixed(&[Time]),
        "genCA" => fixed(&[Str, Int]),
        "genCAWithKey" => fixed(&[Str, Int, Str]),
        "genSelfSignedCert" => fixed(&[Str, Any, Any, Int]),
        "genSelfSignedCertWithKey" => fixed(&[Str, Any, Any, Int, Str]),
        "genSignedCert" => fixed(&[Str, Any, Any, Int, Any]),
        "genSignedCertWithKey" => fixed(&[Str, Any, Any, Int, Any, Str]),
        "get" | "hasKey" | "unset" => fixed(&[Map, Str]),
        "set" => fixed(&[Map, Str, Any]),
        "values" | "urlJoin" => fixed(&[Map]),
        "pick" | "omit" => variadic(&[Map], Str),
        "merge" | "mustMerge" | "mergeOverwrite" | "mustMergeOverwrite" => variadic(&[Map], Map),
        "keys" => variadic(&[], Map),
        "pluck" => variadic(&[Str], Map),
        "printf" => variadic(&[Str], Any),
        "lookup" => fixed(&[Str, Str, Str, Str]),
        _ => None,
    }
}

impl Signature {
    /// The type of parameter `index` (a variadic tail repeats).
    pub(crate) fn param(&self, index: usize) -> Param {
        self.fixed
            .get(index)
            .copied()
            .or(self.variadic)
            .unwrap_or(Param::Any)
    }

    /// Fails like Go's template engine when an argument does not fit its parameter (the count is the function's
    /// own check).
    pub(crate) fn check(&self, args: &[Value]) -> Result<(), Error> {
        for (i, arg) in args.iter().enumerate() {
            let param = self.param(i);
            if let Some(wanted) = refused(param, arg) {
                let message = if is_nil(arg) {
                    format!("invalid value; expected {wanted}")
                } else {
                    format!(
                        "wrong type for value; expected {wanted}; got {}",
                        type_of(arg)
                    )
                };
                return Err(fail(message).with_source(RefusedArgument(i)));
            }
        }
        Ok(())
    }
}

/// Which argument of a call the type check refused (Go reports the error at that argument): carried as the
/// error's source, read only when the error is described.
#[derive(Debug)]
pub(crate) struct RefusedArgument(pub(crate) usize);

impl std::fmt::Display for RefusedArgument {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "argument {} refused", self.0)
    }
}

impl std::error::Error for RefusedArgument {}

/// The Go name of `param` when `arg` does not fit it.
fn refused(param: Param, arg: &Value) -> Option<&'static str> {
    let fits = match param {
        Param::Any => true,
        Param::Str => arg.kind() == ValueKind::String,
        Param::Int => number_type(arg) == Some(GoNumber::Int),
        Param::Bool => arg.kind() == ValueKind::Bool,
        Param::Float => arg.kind() == ValueKind::Number,
        Param::Map => {
            is_nil(arg) || map_type(arg).is_some_and(|go_type| go_type != MapType::Strings)
        }
        Param::Time => arg.downcast_object_ref::<GoTime>().is_some(),
    };
    (!fits).then_some(match param {
        Param::Any => "interface {}",
        Param::Str => "string",
        Param::Int => "int",
        Param::Bool => "bool",
        Param::Float => "float64",
        Param::Map => "map[string]interface {}",
        Param::Time => "time.Time",
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::funcs::number;
    use crate::funcs::value::{GoMap, from_json};

    fn check(name: &str, args: &[Value]) -> Result<(), String> {
        of(name)
            .map_or(Ok(()), |signature| signature.check(args))
            .map_err(|e| e.detail().unwrap_or_default().to_string())
    }

    /// Each answer as Helm v3.11.3 gives it.
    #[test]
    fn arguments_are_checked_against_go_parameter_types() {
        let values = from_json(&serde_json::json!({"k": 3, "s": "x"}));
        let number = values.get_attr("k").unwrap();
        let cases: Vec<(&str, Vec<Value>, Result<(), &str>)> = vec![
            ("trunc", vec![Value::from(3), Value::from("abc")], Ok(())),
            (
                "trunc",
                vec![number.clone(), Value::from("abc")],
                Err("wrong type for value; expected int; got float64"),
            ),
            (
                "trunc",
                vec![number::int64(3), Value::from("abc")],
                Err("wrong type for value; expected int; got int64"),
            ),
            (
                "upper",
                vec![Value::UNDEFINED],
                Err("invalid value; expected string"),
            ),
            (
                "upper",
                vec![Value::from_bytes(b"x".to_vec())],
                Err("wrong type for value; expected string; got []uint8"),
            ),
            (
                "hasKey",
                vec![
                    GoMap::typed(Default::default(), MapType::Strings),
                    Value::from("a"),
                ],
                Err(
                    "wrong type for value; expected map[string]interface {}; got map[string]string",
                ),
            ),
            ("hasKey", vec![values.clone(), Value::from("a")], Ok(())),
            (
                "pick",
                vec![values.clone(), Value::from("a"), Value::from("b")],
                Ok(()),
            ),
            (
                "pick",
                vec![values.clone(), Value::from(1)],
                Err("wrong type for value; expected string; got int"),
            ),
            (
                "ternary",
                vec![Value::from(1), Value::from(2), Value::from("true")],
                Err("wrong type for value; expected bool; got string"),
            ),
            (
                "round",
                vec![Value::from(1.5), Value::from(0), Value::from(1)],
                Ok(()),
            ),
            ("quote", vec![number, Value::UNDEFINED], Ok(())),
        ];
        for (name, args, want) in cases {
            assert_eq!(
                check(name, &args),
                want.map_err(str::to_string),
                "{name} {args:?}"
            );
        }
    }
}

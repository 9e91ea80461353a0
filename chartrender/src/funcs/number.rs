//! Go's numeric types on minijinja values: which of `int`, `int64`, `uint64` and `float64` a number stands for.
//!
//! Several Sprig functions answer differently for Go's `int` (template literals, `len`, `atoi`, `int`) and
//! `int64` (`add`, `sub`, `int64`, `toDecimal` …): `duration` reads only `int64`, `typeOf`/`kindOf`/`%T` name the
//! type, `has`/`uniq`/`deepEqual` compare with `reflect.DeepEqual`. The type rides on minijinja's own number
//! representations, so every other function keeps treating the value as an ordinary integer:
//!
//! | Go type   | built with                     | minijinja representation |
//! |-----------|--------------------------------|--------------------------|
//! | `int`     | `Value::from(i64 / u64 / usize)`, literals | 64-bit integer  |
//! | `int64`   | [`int64`] (`Value::from(i128)`) | 128-bit signed integer  |
//! | `uint64`  | [`uint64`] (`Value::from(u128)`) | 128-bit unsigned integer |
//! | `float64` | `Value::from(f64)`             | float                    |
//!
//! The representation is read back through `Serialize` (minijinja serializes each one with its own method).

use minijinja::value::{Value, ValueKind};
use serde::ser::{Impossible, Serialize, Serializer};

/// The Go type of a template number.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum GoNumber {
    /// `int`: template literals and most Go builtins.
    Int,
    /// `int64`: Sprig's integer arithmetic and conversions.
    Int64,
    /// `uint64`: semver's version parts.
    Uint64,
    /// `float64`: every number of values files, JSON and YAML.
    Float64,
}

impl GoNumber {
    /// The name `%T`, `typeOf` and `kindOf` give the type.
    pub(crate) fn name(self) -> &'static str {
        match self {
            GoNumber::Int => "int",
            GoNumber::Int64 => "int64",
            GoNumber::Uint64 => "uint64",
            GoNumber::Float64 => "float64",
        }
    }

    /// Whether Go's template comparisons treat it as an integer (`int*`/`uint*` compare with each other).
    pub(crate) fn is_integer(self) -> bool {
        self != GoNumber::Float64
    }
}

/// A Go `int64` value.
pub(crate) fn int64(n: i64) -> Value {
    Value::from(i128::from(n))
}

/// A Go `uint64` value.
pub(crate) fn uint64(n: u64) -> Value {
    Value::from(u128::from(n))
}

/// The Go type of `value`, or `None` for anything that is not a number.
pub(crate) fn number_type(value: &Value) -> Option<GoNumber> {
    if value.kind() != ValueKind::Number {
        return None;
    }
    value.serialize(Probe).ok()
}

/// A serializer that answers which number method a value called.
struct Probe;

/// Anything but a number reached the probe.
#[derive(Debug)]
struct NotANumber;

impl std::fmt::Display for NotANumber {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("not a number")
    }
}

impl std::error::Error for NotANumber {}

impl serde::ser::Error for NotANumber {
    fn custom<T: std::fmt::Display>(_message: T) -> Self {
        NotANumber
    }
}

/// Serializer methods that only say "not a number".
macro_rules! not_a_number {
    ($($method:ident($($arg:ty),*)),* $(,)?) => {
        $(fn $method(self, $(_: $arg),*) -> Result<GoNumber, NotANumber> { Err(NotANumber) })*
    };
}

type Refused = Impossible<GoNumber, NotANumber>;

impl Serializer for Probe {
    type Ok = GoNumber;
    type Error = NotANumber;
    type SerializeSeq = Refused;
    type SerializeTuple = Refused;
    type SerializeTupleStruct = Refused;
    type SerializeTupleVariant = Refused;
    type SerializeMap = Refused;
    type SerializeStruct = Refused;
    type SerializeStructVariant = Refused;

    fn serialize_i64(self, _: i64) -> Result<GoNumber, NotANumber> {
        Ok(GoNumber::Int)
    }
    fn serialize_u64(self, _: u64) -> Result<GoNumber, NotANumber> {
        Ok(GoNumber::Int)
    }
    fn serialize_i128(self, _: i128) -> Result<GoNumber, NotANumber> {
        Ok(GoNumber::Int64)
    }
    fn serialize_u128(self, _: u128) -> Result<GoNumber, NotANumber> {
        Ok(GoNumber::Uint64)
    }
    fn serialize_f64(self, _: f64) -> Result<GoNumber, NotANumber> {
        Ok(GoNumber::Float64)
    }
    not_a_number!(
        serialize_bool(bool),
        serialize_i8(i8),
        serialize_i16(i16),
        serialize_i32(i32),
        serialize_u8(u8),
        serialize_u16(u16),
        serialize_u32(u32),
        serialize_f32(f32),
        serialize_char(char),
        serialize_str(&str),
        serialize_bytes(&[u8]),
        serialize_none(),
        serialize_unit(),
        serialize_unit_struct(&'static str),
        serialize_unit_variant(&'static str, u32, &'static str),
    );
    fn serialize_some<T: ?Sized + Serialize>(self, _: &T) -> Result<GoNumber, NotANumber> {
        Err(NotANumber)
    }
    fn serialize_newtype_struct<T: ?Sized + Serialize>(
        self,
        _: &'static str,
        _: &T,
    ) -> Result<GoNumber, NotANumber> {
        Err(NotANumber)
    }
    fn serialize_newtype_variant<T: ?Sized + Serialize>(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: &T,
    ) -> Result<GoNumber, NotANumber> {
        Err(NotANumber)
    }
    fn serialize_seq(self, _: Option<usize>) -> Result<Refused, NotANumber> {
        Err(NotANumber)
    }
    fn serialize_tuple(self, _: usize) -> Result<Refused, NotANumber> {
        Err(NotANumber)
    }
    fn serialize_tuple_struct(self, _: &'static str, _: usize) -> Result<Refused, NotANumber> {
        Err(NotANumber)
    }
    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Refused, NotANumber> {
        Err(NotANumber)
    }
    fn serialize_map(self, _: Option<usize>) -> Result<Refused, NotANumber> {
        Err(NotANumber)
    }
    fn serialize_struct(self, _: &'static str, _: usize) -> Result<Refused, NotANumber> {
        Err(NotANumber)
    }
    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Refused, NotANumber> {
        Err(NotANumber)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn number_type_tells_go_types_apart_by_how_the_value_was_built() {
        let cases = [
            (Value::from(3), Some(GoNumber::Int)),
            (Value::from(3u64), Some(GoNumber::Int)),
            (Value::from(3usize), Some(GoNumber::Int)),
            (Value::from(-3i64), Some(GoNumber::Int)),
            (int64(3), Some(GoNumber::Int64)),
            (int64(i64::MIN), Some(GoNumber::Int64)),
            (uint64(3), Some(GoNumber::Uint64)),
            (Value::from(3.0), Some(GoNumber::Float64)),
            (Value::from("3"), None),
            (Value::from(true), None),
            (Value::from(()), None),
            (Value::from(vec![Value::from(1)]), None),
        ];
        for (value, expected) in cases {
            assert_eq!(number_type(&value), expected, "{value:?}");
        }
    }

    #[test]
    fn int64_values_stay_ordinary_integers_to_other_code() {
        let value = int64(-42);
        assert!(value.is_integer());
        assert_eq!(value.as_i64(), Some(-42));
        assert_eq!(value.to_string(), "-42");
        assert_eq!(value, Value::from(-42));
        assert_eq!(number_type(&value.clone()), Some(GoNumber::Int64));
    }

    #[test]
    fn names_are_go_type_names() {
        let names: Vec<&str> = [
            GoNumber::Int,
            GoNumber::Int64,
            GoNumber::Uint64,
            GoNumber::Float64,
        ]
        .iter()
        .map(|n| n.name())
        .collect();
        assert_eq!(names, ["int", "int64", "uint64", "float64"]);
    }
}

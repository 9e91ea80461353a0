//! Go's template comparisons (`eq`, `ne`, `lt`, `le`, `gt`, `ge`): basic kinds compared within their kind, every
//! integer type with every other, and Go's errors for mixed or incomparable kinds.

use minijinja::Error;
use minijinja::value::{Value, ValueKind};

use super::number;
use super::value::{go_equal, to_f64};
use super::{fail, want};

pub(super) fn eq(args: &[Value]) -> Result<Value, Error> {
    let (first, rest) = args
        .split_first()
        .ok_or_else(|| fail("missing argument for comparison"))?;
    if rest.is_empty() {
        return Err(fail("missing argument for comparison"));
    }
    for other in rest {
        comparable("eq", first, other)?;
        if go_equal(first, other) {
            return Ok(Value::from(true));
        }
    }
    Ok(Value::from(false))
}

pub(super) fn ne(args: &[Value]) -> Result<Value, Error> {
    want("ne", args, 2)?;
    comparable("ne", &args[0], &args[1])?;
    Ok(Value::from(!go_equal(&args[0], &args[1])))
}

/// Go's basic kinds as its template comparisons group them (every `int*`/`uint*` is one integer kind).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum BasicKind {
    Bool,
    Integer,
    Float,
    String,
}

fn basic_kind(value: &Value) -> Option<BasicKind> {
    match value.kind() {
        ValueKind::Bool => Some(BasicKind::Bool),
        ValueKind::String => Some(BasicKind::String),
        ValueKind::Number => Some(match number::number_type(value) {
            Some(n) if n.is_integer() => BasicKind::Integer,
            _ => BasicKind::Float,
        }),
        _ => None,
    }
}

/// `eq`/`ne` refuse two non-nil basic values of different kinds (`eq 1 1.0`, `eq "1" 1`), as Go does.
fn comparable(name: &str, a: &Value, b: &Value) -> Result<(), Error> {
    match (basic_kind(a), basic_kind(b)) {
        (Some(x), Some(y)) if x != y => Err(fail(format!(
            "error calling {name}: incompatible types for comparison"
        ))),
        _ => Ok(()),
    }
}

fn compare(name: &str, args: &[Value]) -> Result<std::cmp::Ordering, Error> {
    want(name, args, 2)?;
    let (a, b) = (&args[0], &args[1]);
    match (basic_kind(a), basic_kind(b)) {
        (Some(BasicKind::Integer), Some(BasicKind::Integer)) => {
            a.partial_cmp(b).ok_or_else(|| fail("incomparable numbers"))
        }
        (Some(BasicKind::Float), Some(BasicKind::Float)) => to_f64(a)
            .partial_cmp(&to_f64(b))
            .ok_or_else(|| fail("incomparable numbers")),
        (Some(BasicKind::String), Some(BasicKind::String)) => Ok(a.as_str().cmp(&b.as_str())),
        (Some(x), Some(y)) if x == y => Err(fail(format!(
            "error calling {name}: invalid type for comparison"
        ))),
        _ => Err(fail(format!(
            "error calling {name}: incompatible types for comparison"
        ))),
    }
}

pub(super) fn lt(args: &[Value]) -> Result<Value, Error> {
    Ok(Value::from(compare("lt", args)?.is_lt()))
}

pub(super) fn le(args: &[Value]) -> Result<Value, Error> {
    Ok(Value::from(compare("le", args)?.is_le()))
}

pub(super) fn gt(args: &[Value]) -> Result<Value, Error> {
    Ok(Value::from(compare("gt", args)?.is_gt()))
}

pub(super) fn ge(args: &[Value]) -> Result<Value, Error> {
    Ok(Value::from(compare("ge", args)?.is_ge()))
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
        // Go compares integers of any width and sign with each other, but never an integer with a float.
        assert!(gt(&[Value::from(3), Value::from(1.5)]).is_err());
        assert!(gt(&[Value::from(3), number::int64(2)]).unwrap().is_true());
        assert!(lt(&[number::uint64(1), Value::from(2)]).unwrap().is_true());
        assert!(lt(&[Value::from(true), Value::from(false)]).is_err());
        assert!(eq(&[Value::from(1), Value::from(1.0)]).is_err());
        assert!(eq(&[Value::from("1"), Value::from(1)]).is_err());
        assert!(ne(&[Value::from(false), Value::from(0)]).is_err());
        assert!(eq(&[Value::from(1), number::int64(1)]).unwrap().is_true());
        assert!(!eq(&[Value::UNDEFINED, Value::from(1)]).unwrap().is_true());
        assert!(lt(&[Value::from("a"), Value::from("b")]).unwrap().is_true());
        assert!(gt(&[Value::from("a"), Value::from(1)]).is_err());
    }
}

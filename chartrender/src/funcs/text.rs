//! More Sprig string functions (`swapcase wrap wrapWith abbrevboth b32enc b32dec regexQuoteMeta toStrings`),
//! Go's `js` and `call` builtins, and Sprig's `seq` and float helpers.

use minijinja::Error;
use minijinja::value::Value;

use super::value::{is_empty, is_nil, list_items, to_f64, to_go_string, to_i64, type_of};
use super::{arg_str, fail, gostring, want};

/// `swapcase s`: upper case becomes lower and lower upper.
pub(crate) fn swapcase(args: &[Value]) -> Result<Value, Error> {
    want("swapcase", args, 1)?;
    let out: String = gostring::printable(&arg_str(args, 0))
        .chars()
        .flat_map(|c| -> Box<dyn Iterator<Item = char>> {
            if c.is_uppercase() {
                Box::new(c.to_lowercase())
            } else if c.is_lowercase() {
                Box::new(c.to_uppercase())
            } else {
                Box::new(std::iter::once(c))
            }
        })
        .collect();
    Ok(Value::from(out))
}

/// `wrap width s`: breaks at spaces; words longer than width stay whole.
pub(crate) fn wrap(args: &[Value]) -> Result<Value, Error> {
    want("wrap", args, 2)?;
    Ok(Value::from(wrap_custom(
        &arg_str(args, 1),
        to_i64(&args[0]),
        "\n",
        false,
    )))
}

/// `wrapWith width separator s`: breaks at spaces with `separator`; long words are cut.
pub(crate) fn wrap_with(args: &[Value]) -> Result<Value, Error> {
    want("wrapWith", args, 3)?;
    let (text, separator) = (arg_str(args, 2), arg_str(args, 1));
    // A line ends only where it and the next word pass the width: at most two lines per width.
    let width = usize::try_from(to_i64(&args[0]).max(1)).unwrap_or(1);
    let breaks = text.len().saturating_mul(2) / width + 1;
    crate::meter::check_bytes(
        "wrapWith",
        text.len()
            .saturating_add(breaks.saturating_mul(separator.len())),
    )?;
    Ok(Value::from(wrap_custom(
        &text,
        to_i64(&args[0]),
        &separator,
        true,
    )))
}

/// goutils' `WrapCustom` (byte offsets, as Go slices strings).
fn wrap_custom(text: &str, width: i64, separator: &str, wrap_long_words: bool) -> String {
    if text.is_empty() {
        return String::new();
    }
    let separator = if separator.is_empty() {
        "\n"
    } else {
        separator
    };
    let width = usize::try_from(width.max(1)).unwrap_or(1);
    let bytes = gostring::to_bytes(text);
    let len = bytes.len();
    let slice = |a: usize, b: usize| gostring::from_bytes(&bytes[a..b]);
    let mut out = String::with_capacity(len + 8);
    let mut offset = 0;
    while len - offset > width {
        if bytes[offset] == b' ' {
            offset += 1;
            continue;
        }
        let end = width + offset + 1;
        let space = bytes[offset..end].iter().rposition(|b| *b == b' ');
        match space {
            Some(at) => {
                out.push_str(&slice(offset, offset + at));
                out.push_str(separator);
                offset += at + 1;
            }
            None if wrap_long_words => {
                out.push_str(&slice(offset, offset + width));
                out.push_str(separator);
                offset += width;
            }
            None => {
                let end = width + offset;
                match bytes[end..].iter().position(|b| *b == b' ') {
                    None => {
                        out.push_str(&slice(offset, len));
                        offset = len;
                    }
                    Some(at) => {
                        out.push_str(&slice(offset, end + at));
                        out.push_str(separator);
                        offset = end + at + 1;
                    }
                }
            }
        }
    }
    out.push_str(&slice(offset, len));
    out
}

/// `abbrevboth left right s`: abbreviates both ends (goutils' `AbbreviateFull`).
pub(crate) fn abbrevboth(args: &[Value]) -> Result<Value, Error> {
    want("abbrevboth", args, 3)?;
    let (left, right) = (to_i64(&args[0]), to_i64(&args[1]));
    let s = arg_str(args, 2);
    if right < 4 || (left > 0 && right < 7) {
        return Ok(Value::from(s));
    }
    Ok(Value::from(abbreviate_full(&s, left, right)))
}

/// goutils' `AbbreviateFull` on the bytes of `s`.
pub(crate) fn abbreviate_full(s: &str, offset: i64, width: i64) -> String {
    let bytes = gostring::to_bytes(s);
    let len = bytes.len() as i64;
    if s.is_empty() || len <= width {
        return s.to_string();
    }
    let slice = |a: i64, b: i64| gostring::from_bytes(&bytes[a as usize..b as usize]);
    let mut offset = offset.min(len);
    if len - offset < width - 3 {
        offset = len - (width - 3);
    }
    if offset <= 4 {
        return format!("{}...", slice(0, width - 3));
    }
    if offset + width - 3 < len {
        return format!("...{}", abbreviate_full(&slice(offset, len), 0, width - 3));
    }
    format!("...{}", slice(len - (width - 3), len))
}

/// `b32enc s` (standard alphabet, padded)
pub(crate) fn b32enc(args: &[Value]) -> Result<Value, Error> {
    want("b32enc", args, 1)?;
    Ok(Value::from(
        data_encoding::BASE32.encode(&gostring::to_bytes(&arg_str(args, 0))),
    ))
}

/// `b32dec s`: Sprig returns the error text instead of failing.
pub(crate) fn b32dec(args: &[Value]) -> Result<Value, Error> {
    want("b32dec", args, 1)?;
    Ok(Value::from(
        match data_encoding::BASE32.decode(arg_str(args, 0).as_bytes()) {
            Ok(bytes) => gostring::from_bytes(&bytes),
            Err(e) => format!("illegal base32 data at input byte {}", e.position),
        },
    ))
}

/// Go's `js` builtin: JavaScript string escaping (`\'`, `\"`, `\\`, `\u003C` for `<>&=`, control characters).
pub(crate) fn js(args: &[Value]) -> Result<Value, Error> {
    let text = if let [one] = args {
        to_go_string(one)
    } else {
        super::strings::print(args)?.to_string()
    };
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\'' => out.push_str("\\'"),
            '"' => out.push_str("\\\""),
            '<' => out.push_str("\\u003C"),
            '>' => out.push_str("\\u003E"),
            '&' => out.push_str("\\u0026"),
            '=' => out.push_str("\\u003D"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04X}", c as u32)),
            '\u{2028}' | '\u{2029}' => out.push_str(&format!("\\u{:04X}", c as u32)),
            c => out.push(c),
        }
    }
    Ok(Value::from(out))
}

/// `regexQuoteMeta s`: Go's `regexp.QuoteMeta`.
pub(crate) fn regex_quote_meta(args: &[Value]) -> Result<Value, Error> {
    want("regexQuoteMeta", args, 1)?;
    let mut out = String::new();
    for c in arg_str(args, 0).chars() {
        if "\\.+*?()|[]{}^$".contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    Ok(Value::from(out))
}

/// `toStrings list`: elements printed with `%v`, nil elements dropped.
pub(crate) fn to_strings(args: &[Value]) -> Result<Value, Error> {
    want("toStrings", args, 1)?;
    crate::meter::check_printed("toStrings", args)?;
    // Sprig's strslice: nil is an empty list, a list loses its nil elements, anything else is one string.
    if is_nil(&args[0]) {
        return Ok(super::gostruct::GoSlice::value("[]string", Vec::new()));
    }
    // A `[]string` is returned as it is (a nil one stays nil).
    if super::gostruct::is_string_slice(&args[0]) {
        return Ok(args[0].clone());
    }
    let strings: Vec<Value> = match list_items(&args[0]) {
        Some(items) => items
            .iter()
            .filter(|v| !is_nil(v))
            .map(|v| Value::from(to_go_string(v)))
            .collect(),
        None => vec![Value::from(to_go_string(&args[0]))],
    };
    Ok(super::gostruct::GoSlice::value("[]string", strings))
}

/// `typeIsLike type v`: the type or a pointer to it.
pub(crate) fn type_is_like(args: &[Value]) -> Result<Value, Error> {
    want("typeIsLike", args, 2)?;
    let wanted = arg_str(args, 0);
    let actual = type_of(&args[1]);
    Ok(Value::from(
        wanted == actual || format!("*{wanted}") == actual,
    ))
}

/// Go's `call fn args…`: template data holds no functions, so this always fails as Go does for non-functions.
pub(crate) fn call(args: &[Value]) -> Result<Value, Error> {
    let Some(target) = args.first() else {
        return Err(fail("wrong number of args for call: want at least 1 got 0"));
    };
    if is_nil(target) {
        return Err(fail("error calling call: call of nil"));
    }
    Err(fail(format!(
        "error calling call: non-function of type {}",
        type_of(target)
    )))
}

/// `toDecimal v`: v's text read as an octal number (0 when it is not one).
pub(crate) fn to_decimal(args: &[Value]) -> Result<Value, Error> {
    want("toDecimal", args, 1)?;
    let text = super::value::go_string(&args[0]);
    let (negative, digits) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text.strip_prefix('+').unwrap_or(&text)),
    };
    let value = i64::from_str_radix(digits, 8).unwrap_or(0);
    Ok(super::number::int64(if negative { -value } else { value }))
}

/// `seq [start [step]] end`: the integers as a space-separated string, like GNU seq.
pub(crate) fn seq(args: &[Value]) -> Result<Value, Error> {
    let params: Vec<i64> = args.iter().map(to_i64).collect();
    let (start, end, step) = match params.as_slice() {
        [end] => {
            let step = if *end < 1 { -1 } else { 1 };
            (1, end + step, step)
        }
        [start, end] => {
            let step = if end < start { -1 } else { 1 };
            (*start, end + step, step)
        }
        [start, step, end] => {
            let increment = if end < start {
                if *step > 0 {
                    return Ok(Value::from(""));
                }
                -1
            } else {
                1
            };
            (*start, end + increment, *step)
        }
        _ => return Ok(Value::from("")),
    };
    let numbers = super::collections::step_values(start, end, step)?;
    Ok(Value::from(
        numbers
            .iter()
            .map(i64::to_string)
            .collect::<Vec<_>>()
            .join(" "),
    ))
}

fn float_fold(name: &str, args: &[Value], fold: fn(f64, f64) -> f64) -> Result<Value, Error> {
    let (first, rest) = args.split_first().ok_or_else(|| {
        fail(format!(
            "wrong number of args for {name}: want at least 1 got 0"
        ))
    })?;
    Ok(Value::from(
        rest.iter()
            .fold(to_f64(first), |acc, v| fold(acc, to_f64(v))),
    ))
}

/// `maxf a b …`
pub(crate) fn maxf(args: &[Value]) -> Result<Value, Error> {
    float_fold("maxf", args, go_max)
}

/// `minf a b …`
pub(crate) fn minf(args: &[Value]) -> Result<Value, Error> {
    float_fold("minf", args, go_min)
}

/// Go's `math.Max`: +Inf wins, then NaN, and +0 is larger than -0.
fn go_max(x: f64, y: f64) -> f64 {
    if x == f64::INFINITY || y == f64::INFINITY {
        f64::INFINITY
    } else if x.is_nan() || y.is_nan() {
        f64::NAN
    } else if x == 0.0 && y == 0.0 {
        if x.is_sign_negative() { y } else { x }
    } else if x > y {
        x
    } else {
        y
    }
}

/// Go's `math.Min`: -Inf wins, then NaN, and -0 is smaller than +0.
fn go_min(x: f64, y: f64) -> f64 {
    if x == f64::NEG_INFINITY || y == f64::NEG_INFINITY {
        f64::NEG_INFINITY
    } else if x.is_nan() || y.is_nan() {
        f64::NAN
    } else if x == 0.0 && y == 0.0 {
        if x.is_sign_negative() { x } else { y }
    } else if x < y {
        x
    } else {
        y
    }
}

/// `add1f v`
pub(crate) fn add1f(args: &[Value]) -> Result<Value, Error> {
    want("add1f", args, 1)?;
    Ok(Value::from(to_f64(&args[0]) + 1.0))
}

/// `all a b …`: whether no argument is empty.
pub(crate) fn all(args: &[Value]) -> Result<Value, Error> {
    Ok(Value::from(args.iter().all(|v| !is_empty(v))))
}

/// `any a b …`: whether some argument is not empty.
pub(crate) fn any(args: &[Value]) -> Result<Value, Error> {
    Ok(Value::from(args.iter().any(|v| !is_empty(v))))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &str) -> Value {
        Value::from(v)
    }

    const TEXT: &str = "Gardener seeds host shoot control planes";

    #[test]
    fn wrapping_and_abbreviation_follow_goutils() {
        assert_eq!(
            wrap_custom(TEXT, 12, "\n", false),
            "Gardener\nseeds host\nshoot\ncontrol\nplanes"
        );
        assert_eq!(
            wrap_custom(TEXT, 7, "/", true),
            "Gardene/r seeds/host/shoot/control/planes"
        );
        assert_eq!(
            wrap_custom("averyveryverylongword x", 5, "\n", false),
            "averyveryverylongword\nx"
        );
        assert_eq!(
            abbrevboth(&[Value::from(3), Value::from(18), s(TEXT)])
                .unwrap()
                .to_string(),
            "Gardener seeds ..."
        );
        assert_eq!(abbreviate_full("abcdefghijklmno", 10, 10), "...ijklmno");
        assert_eq!(abbreviate_full("abcdefghijklmno", 5, 10), "...fghi...");
        assert_eq!(
            swapcase(&[s("Seed Agent")]).unwrap().to_string(),
            "sEED aGENT"
        );
    }

    #[test]
    fn seq_counts_like_gnu_seq() {
        let seq_of = |args: &[i64]| {
            let values: Vec<Value> = args.iter().map(|n| Value::from(*n)).collect();
            seq(&values).unwrap().to_string()
        };
        assert_eq!(seq_of(&[10, -3, 1]), "10 7 4 1");
        assert_eq!(seq_of(&[0]), "1 0");
        assert_eq!(seq_of(&[3]), "1 2 3");
        assert_eq!(seq_of(&[2, 5]), "2 3 4 5");
        assert_eq!(seq_of(&[5, 2]), "5 4 3 2");
        assert_eq!(seq_of(&[5, 1, 2]), "");
        assert_eq!(seq_of(&[]), "");
    }

    #[test]
    fn encodings_and_escapes_match_go() {
        assert_eq!(
            b32enc(&[s("seedlet")]).unwrap().to_string(),
            "ONSWKZDMMV2A===="
        );
        assert_eq!(
            b32dec(&[s("ONSWKZDMMV2A====")]).unwrap().to_string(),
            "seedlet"
        );
        assert_eq!(
            js(&[s("a'b<c>")]).unwrap().to_string(),
            "a\\'b\\u003Cc\\u003E"
        );
        assert_eq!(
            regex_quote_meta(&[s("a.b*c")]).unwrap().to_string(),
            "a\\.b\\*c"
        );
        assert_eq!(to_decimal(&[s("0777")]).unwrap().as_i64(), Some(511));
        assert_eq!(to_decimal(&[s("9")]).unwrap().as_i64(), Some(0));
        assert!(call(&[Value::UNDEFINED]).is_err());
    }
}

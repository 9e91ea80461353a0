//! Go's `fmt.Sprintf` for `printf`: verbs, flags, width and precision, and Go's `%!verb(type=value)` errors.

use minijinja::value::{Value, ValueKind};

use minijinja::Error;

use super::value::{format_float, go_string, is_nil, list_items, map_entries, type_of};
use crate::meter;

/// Formats `args` according to the Go format string `format`.
///
/// # Errors
/// The result growing over the value size limit (widths pad each verb up to a million bytes).
pub(crate) fn sprintf(format: &str, args: &[Value]) -> Result<String, Error> {
    let mut out = String::new();
    let mut chars = format.chars().peekable();
    let mut next_arg = 0;
    // An explicit argument index (`%[2]d`) anywhere turns the check for extra arguments off, as in Go.
    let mut reordered = false;
    while let Some(c) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        let mut spec = Spec::default();
        let mut good_index = true;
        while let Some(&flag) = chars.peek() {
            match flag {
                '-' => spec.minus = true,
                '+' => spec.plus = true,
                '#' => spec.sharp = true,
                ' ' => spec.space = true,
                '0' => spec.zero = true,
                _ => break,
            }
            chars.next();
        }
        let mut after_index = arg_index(
            &mut chars,
            args.len(),
            &mut next_arg,
            &mut reordered,
            &mut good_index,
        );
        let starred = chars.peek() == Some(&'*');
        if starred {
            chars.next();
            match star_argument(args, &mut next_arg) {
                Some(width) => {
                    // A negative width pads on the right.
                    if width < 0 {
                        spec.minus = true;
                        spec.zero = false;
                    }
                    spec.width = Some(width.unsigned_abs() as usize);
                }
                None => out.push_str("%!(BADWIDTH)"),
            }
        } else {
            spec.width = read_number(&mut chars);
        }
        if after_index && spec.width.is_some() && !starred {
            good_index = false;
        }
        after_index &= !starred;
        if chars.peek() == Some(&'.') {
            chars.next();
            if after_index {
                good_index = false;
            }
            after_index = arg_index(
                &mut chars,
                args.len(),
                &mut next_arg,
                &mut reordered,
                &mut good_index,
            );
            let starred = chars.peek() == Some(&'*');
            if starred {
                chars.next();
                match star_argument(args, &mut next_arg).filter(|p| *p >= 0) {
                    Some(precision) => spec.precision = Some(precision as usize),
                    None => out.push_str("%!(BADPREC)"),
                }
            } else {
                spec.precision = Some(read_number(&mut chars).unwrap_or(0));
            }
            after_index &= !starred;
        }
        if !after_index {
            arg_index(
                &mut chars,
                args.len(),
                &mut next_arg,
                &mut reordered,
                &mut good_index,
            );
        }
        let Some(verb) = chars.next() else {
            out.push_str("%!(NOVERB)");
            break;
        };
        if verb == '%' {
            out.push('%');
            continue;
        }
        if !good_index {
            out.push_str(&format!("%!{verb}(BADINDEX)"));
            continue;
        }
        let Some(arg) = args.get(next_arg) else {
            out.push_str(&format!("%!{verb}(MISSING)"));
            continue;
        };
        next_arg += 1;
        let text = format_one(verb, &spec, arg);
        meter::check_bytes("printf", out.len().saturating_add(text.len()))?;
        out.push_str(&text);
    }
    if !reordered && next_arg < args.len() {
        let extra: Vec<String> = args[next_arg..]
            .iter()
            .map(|a| format!("{}={}", type_of(a), go_string(a)))
            .collect();
        out.push_str(&format!("%!(EXTRA {})", extra.join(", ")));
    }
    Ok(out)
}

/// Go's explicit argument index `[n]` at the front of `chars`: moves `next_arg` to argument n (1-based) and
/// returns true, or marks the directive's index bad (`%!d(BADINDEX)`) when n is no argument; false without one.
fn arg_index(
    chars: &mut std::iter::Peekable<std::str::Chars<'_>>,
    count: usize,
    next_arg: &mut usize,
    reordered: &mut bool,
    good_index: &mut bool,
) -> bool {
    if chars.peek() != Some(&'[') {
        return false;
    }
    *reordered = true;
    let ahead: String = chars.clone().skip(1).take_while(|&c| c != ']').collect();
    let closed = chars.clone().nth(1 + ahead.chars().count()) == Some(']');
    if !closed {
        // No closing bracket: Go skips the `[` alone.
        chars.next();
        *good_index = false;
        return false;
    }
    for _ in 0..ahead.chars().count() + 2 {
        chars.next();
    }
    match ahead.parse::<usize>() {
        Ok(n) if (1..=count).contains(&n) => {
            *next_arg = n - 1;
            true
        }
        Ok(_) => {
            *good_index = false;
            true
        }
        Err(_) => {
            *good_index = false;
            false
        }
    }
}

#[derive(Debug, Default)]
struct Spec {
    minus: bool,
    plus: bool,
    sharp: bool,
    space: bool,
    zero: bool,
    width: Option<usize>,
    precision: Option<usize>,
}

/// A `*` width or precision taken from the arguments: Go's `intFromArg`, which takes an integer of at most a
/// million either way and moves past the argument if there is one; `None` is `%!(BADWIDTH)`/`%!(BADPREC)`.
fn star_argument(args: &[Value], next_arg: &mut usize) -> Option<i64> {
    let arg = args.get(*next_arg)?;
    *next_arg += 1;
    let integer = arg.kind() == ValueKind::Number
        && super::value::type_of(arg) != "float64"
        && arg.is_integer();
    arg.as_i64()
        .filter(|n| integer && (-1_000_000..=1_000_000).contains(n))
}

/// A width or precision written in digits.
fn read_number(chars: &mut std::iter::Peekable<std::str::Chars<'_>>) -> Option<usize> {
    let mut digits = String::new();
    while let Some(&d) = chars.peek() {
        if !d.is_ascii_digit() {
            break;
        }
        digits.push(d);
        chars.next();
    }
    // Widths beyond a million characters are nonsense in a template; clamp to keep output bounded.
    digits.parse::<usize>().ok().map(|n| n.min(1_000_000))
}

/// Go's `%!verb(type=value)` for an operand the verb does not take: the value is printed with `%v` and the
/// directive's flags, width included (`%08d` of "ab" is `%!d(string=000000ab)`); the whole is not padded.
fn bad_verb(verb: char, spec: &Spec, arg: &Value) -> String {
    if is_nil(arg) {
        return format!("%!{verb}(<nil>)");
    }
    format!("%!{verb}({}={})", type_of(arg), format_one('v', spec, arg))
}

/// An element of a list or map: a nil one prints as `<nil>` whatever the verb.
fn format_element(verb: char, spec: &Spec, item: &Value) -> String {
    if is_nil(item) {
        "<nil>".to_string()
    } else {
        format_one(verb, spec, item)
    }
}

fn format_one(verb: char, spec: &Spec, arg: &Value) -> String {
    if verb == 'T' {
        return pad(type_of(arg).to_string(), spec, false);
    }
    if arg.kind() == ValueKind::Bytes {
        return format_bytes(verb, spec, arg);
    }
    // fmt applies the verb to each element of a list or map (keys sorted), padding each; `%v` without a width
    // prints as the value's Go text.
    if verb != 'v' || (spec.width.is_some() && !spec.sharp) {
        if let Some(items) = (arg.kind() == ValueKind::Seq)
            .then(|| list_items(arg))
            .flatten()
        {
            let parts: Vec<String> = items
                .iter()
                .map(|item| format_element(verb, spec, item))
                .collect();
            return format!("[{}]", parts.join(" "));
        }
        if arg.kind() == ValueKind::Map
            && let Some(entries) = map_entries(arg)
        {
            let parts: Vec<String> = entries
                .iter()
                .map(|(k, v)| {
                    format!(
                        "{}:{}",
                        format_one(verb, spec, &Value::from(k.as_str())),
                        format_element(verb, spec, v)
                    )
                })
                .collect();
            return format!("map[{}]", parts.join(" "));
        }
    }
    let is_int = arg.kind() == ValueKind::Number && arg.is_integer();
    let is_float = arg.kind() == ValueKind::Number && !arg.is_integer();
    let body = match verb {
        'v' => {
            if is_float {
                float_with(spec, f64::try_from(arg.clone()).unwrap_or(0.0), 'g')
            } else if is_int {
                int_with(spec, arg.as_i64().unwrap_or(0), 10, false)
            } else if spec.sharp && arg.as_str().is_some() {
                quote_go(arg.as_str().unwrap_or_default())
            } else {
                truncate(go_string(arg), spec.precision)
            }
        }
        's' => match arg.kind() {
            ValueKind::String | ValueKind::Seq | ValueKind::Map | ValueKind::Bytes => {
                truncate(go_string(arg), spec.precision)
            }
            _ => return bad_verb(verb, spec, arg),
        },
        'q' => match (arg.as_str(), is_int) {
            (Some(s), _) => {
                let s = truncate(s.to_string(), spec.precision);
                if spec.sharp && !s.contains('`') {
                    format!("`{s}`")
                } else {
                    quote_with(&s, spec.plus)
                }
            }
            // A code point of the range that stands for stray bytes is private use: unprintable.
            (None, true)
                if u32::try_from(arg.as_i64().unwrap_or(0))
                    .ok()
                    .and_then(char::from_u32)
                    .is_some_and(|c| super::gostring::stray_byte(c).is_some()) =>
            {
                format!("'\\U{:08x}'", arg.as_i64().unwrap_or(0))
            }
            (None, true) => {
                let c = u32::try_from(arg.as_i64().unwrap_or(0))
                    .ok()
                    .and_then(char::from_u32)
                    .unwrap_or('\u{fffd}');
                format!(
                    "'{}'",
                    quote_with(&c.to_string(), spec.plus)
                        .trim_matches('"')
                        .replace("\\\"", "\"")
                        .replace('\'', "\\'")
                )
            }
            _ => return bad_verb(verb, spec, arg),
        },
        't' => match arg.kind() {
            ValueKind::Bool => arg.is_true().to_string(),
            _ => return bad_verb(verb, spec, arg),
        },
        'd' | 'b' | 'o' | 'O' | 'x' | 'X' | 'c' | 'U' if is_int => {
            let n = arg.as_i64().unwrap_or(0);
            match verb {
                'd' => int_with(spec, n, 10, false),
                'b' => int_with(spec, n, 2, false),
                'o' => int_with(spec, n, 8, false),
                'O' => format!("0o{}", int_with(spec, n, 8, false)),
                'x' => int_with(spec, n, 16, false),
                'X' => int_with(spec, n, 16, true),
                'c' => u32::try_from(n)
                    .ok()
                    .and_then(char::from_u32)
                    .unwrap_or('\u{fffd}')
                    .to_string(),
                _ => format!("U+{:04X}", n),
            }
        }
        'x' | 'X' if arg.as_str().is_some() => hex_of(
            &super::gostring::to_bytes(arg.as_str().unwrap_or_default()),
            spec,
            verb == 'X',
        ),
        'x' | 'X' if is_float => float_with(spec, f64::try_from(arg.clone()).unwrap_or(0.0), verb),
        'e' | 'E' | 'f' | 'F' | 'g' | 'G' if is_float || is_int => {
            let f = if is_int {
                return bad_verb(verb, spec, arg);
            } else {
                f64::try_from(arg.clone()).unwrap_or(0.0)
            };
            float_with(spec, f, verb)
        }
        _ => return bad_verb(verb, spec, arg),
    };
    let numeric = (is_int || is_float)
        && matches!(
            verb,
            'v' | 'd' | 'b' | 'o' | 'x' | 'X' | 'e' | 'E' | 'f' | 'F' | 'g' | 'G'
        );
    pad(body, spec, numeric)
}

/// A `[]byte` (`.Files.GetBytes`): text for `%s`/`%q`, hex for `%x`/`%X`, `%v` and the integer verbs per byte.
fn format_bytes(verb: char, spec: &Spec, arg: &Value) -> String {
    let bytes = arg.as_bytes().unwrap_or_default();
    match verb {
        's' => pad(
            truncate(String::from_utf8_lossy(bytes).into_owned(), spec.precision),
            spec,
            false,
        ),
        'q' => pad(
            quote_with(
                &truncate(String::from_utf8_lossy(bytes).into_owned(), spec.precision),
                spec.plus,
            ),
            spec,
            false,
        ),
        'x' | 'X' => pad(hex_of(bytes, spec, verb == 'X'), spec, false),
        'v' | 'd' | 'b' | 'o' | 'O' | 'c' | 'U' => {
            let parts: Vec<String> = bytes
                .iter()
                .map(|b| format_one(verb, spec, &Value::from(i64::from(*b))))
                .collect();
            format!("[{}]", parts.join(" "))
        }
        _ => {
            let parts: Vec<String> = bytes
                .iter()
                .map(|b| pad(format!("%!{verb}(uint8={b})"), spec, false))
                .collect();
            format!("[{}]", parts.join(" "))
        }
    }
}

/// Go's `%x`/`%X` of a string or bytes: `% x` spaces the bytes, `%#x` adds `0x` (to each byte with a space flag),
/// a precision counts bytes.
fn hex_of(bytes: &[u8], spec: &Spec, upper: bool) -> String {
    let bytes = &bytes[..spec.precision.unwrap_or(bytes.len()).min(bytes.len())];
    let prefix = match (spec.sharp, upper) {
        (false, _) => "",
        (true, false) => "0x",
        (true, true) => "0X",
    };
    let digit = |b: &u8| {
        if upper {
            format!("{b:02X}")
        } else {
            format!("{b:02x}")
        }
    };
    if spec.space {
        let parts: Vec<String> = bytes
            .iter()
            .map(|b| format!("{prefix}{}", digit(b)))
            .collect();
        parts.join(" ")
    } else if bytes.is_empty() {
        String::new()
    } else {
        let digits: String = bytes.iter().map(digit).collect();
        format!("{prefix}{digits}")
    }
}

fn truncate(text: String, precision: Option<usize>) -> String {
    match precision {
        Some(p) => text.chars().take(p).collect(),
        None => text,
    }
}

fn int_with(spec: &Spec, n: i64, radix: u32, upper: bool) -> String {
    let magnitude = n.unsigned_abs();
    let mut digits = match radix {
        2 => format!("{magnitude:b}"),
        8 => format!("{magnitude:o}"),
        16 if upper => format!("{magnitude:X}"),
        16 => format!("{magnitude:x}"),
        _ => magnitude.to_string(),
    };
    if let Some(p) = spec.precision
        && digits.len() < p
    {
        digits = format!("{}{digits}", "0".repeat(p - digits.len()));
    }
    if spec.sharp {
        match radix {
            2 => digits.insert_str(0, "0b"),
            8 => digits.insert(0, '0'),
            16 if upper => digits.insert_str(0, "0X"),
            16 => digits.insert_str(0, "0x"),
            _ => {}
        }
    }
    sign(spec, n < 0) + &digits
}

fn sign(spec: &Spec, negative: bool) -> String {
    if negative {
        "-".into()
    } else if spec.plus {
        "+".into()
    } else if spec.space {
        " ".into()
    } else {
        String::new()
    }
}

fn float_with(spec: &Spec, f: f64, verb: char) -> String {
    let negative = f.is_sign_negative() && f != 0.0 || (f == 0.0 && f.is_sign_negative());
    let magnitude = f.abs();
    let body = match verb {
        'f' | 'F' => format!("{:.*}", spec.precision.unwrap_or(6), magnitude),
        'e' | 'E' => {
            let text = exponent_form(magnitude, spec.precision.unwrap_or(6));
            if verb == 'E' {
                text.to_uppercase()
            } else {
                text
            }
        }
        'x' => hex_float(magnitude, spec.precision),
        'X' => hex_float(magnitude, spec.precision).to_uppercase(),
        _ => match spec.precision {
            None => format_float(magnitude),
            Some(p) => general_form(magnitude, p.max(1)),
        },
    };
    let body = if verb == 'G' {
        body.to_uppercase()
    } else {
        body
    };
    sign(spec, negative) + &body
}

/// Go's `%x` of a float (`strconv.FormatFloat(f, 'x', prec, 64)`) without its sign: `0x1.4p+00` for 1.25, the
/// mantissa's hex digits shortest without a precision, else rounded (half to even) or padded to it.
fn hex_float(f: f64, precision: Option<usize>) -> String {
    const FRACTION_DIGITS: usize = 13;
    if !f.is_finite() {
        return format_float(f);
    }
    let bits = f.to_bits();
    let mut exponent = ((bits >> 52) & 0x7ff) as i32;
    let mut fraction = bits & ((1u64 << 52) - 1);
    if f == 0.0 {
        exponent = 0;
    } else if exponent == 0 {
        // Subnormal: shift the leading one into the implicit position.
        exponent = -1022;
        while fraction & (1u64 << 52) == 0 {
            fraction <<= 1;
            exponent -= 1;
        }
        fraction &= (1u64 << 52) - 1;
    } else {
        exponent -= 1023;
    }
    let digits = match precision {
        Some(p) if p < FRACTION_DIGITS => {
            let shift = 4 * (FRACTION_DIGITS - p) as u32;
            let rest = fraction & ((1u64 << shift) - 1);
            let mut kept = fraction >> shift;
            let half = 1u64 << (shift - 1);
            // Half to even, where the leading 1 is the last kept digit at precision 0 (Go rounds 1.5 to 0x1p+01).
            let odd = p == 0 || kept & 1 == 1;
            if rest > half || (rest == half && odd) {
                kept += 1;
                if kept >> (4 * p) != 0 {
                    // 1.fff… rounded up to 2.0: 1.0 with the next exponent.
                    kept = 0;
                    exponent += 1;
                }
            }
            if p == 0 {
                String::new()
            } else {
                format!("{kept:0width$x}", width = p)
            }
        }
        Some(p) => format!("{fraction:013x}{}", "0".repeat(p - FRACTION_DIGITS)),
        None => format!("{fraction:013x}").trim_end_matches('0').to_string(),
    };
    let lead = if f == 0.0 { '0' } else { '1' };
    let point = if digits.is_empty() { "" } else { "." };
    let sign = if exponent < 0 { '-' } else { '+' };
    format!("0x{lead}{point}{digits}p{sign}{:02}", exponent.abs())
}

/// `%.Ne`: mantissa with N decimals and a two-digit exponent.
fn exponent_form(f: f64, precision: usize) -> String {
    let text = format!("{:.*e}", precision, f);
    let (mantissa, exponent) = text.split_once('e').unwrap_or((&text, "0"));
    let exponent: i32 = exponent.parse().unwrap_or(0);
    format!(
        "{mantissa}e{}{:02}",
        if exponent < 0 { '-' } else { '+' },
        exponent.abs()
    )
}

/// `%.Ng`: N significant digits, exponent form when the exponent is < -4 or >= N, trailing zeros removed.
fn general_form(f: f64, precision: usize) -> String {
    if f == 0.0 {
        return "0".into();
    }
    let text = format!("{:.*e}", precision - 1, f);
    let (mantissa, exponent) = text.split_once('e').unwrap_or((&text, "0"));
    let exponent: i32 = exponent.parse().unwrap_or(0);
    if exponent < -4 || exponent >= precision as i32 {
        let mantissa = trim_fraction(mantissa);
        return format!(
            "{mantissa}e{}{:02}",
            if exponent < 0 { '-' } else { '+' },
            exponent.abs()
        );
    }
    let decimals = (precision as i32 - 1 - exponent).max(0) as usize;
    trim_fraction(&format!("{:.*}", decimals, f)).to_string()
}

fn trim_fraction(text: &str) -> &str {
    if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.')
    } else {
        text
    }
}

fn pad(body: String, spec: &Spec, numeric: bool) -> String {
    let Some(width) = spec.width else { return body };
    let len = body.chars().count();
    if len >= width {
        return body;
    }
    let fill = width - len;
    if spec.minus {
        return body + &" ".repeat(fill);
    }
    if spec.zero && numeric {
        let split = body.find(|c: char| c.is_ascii_alphanumeric()).unwrap_or(0);
        let (sign, digits) = body.split_at(split);
        return format!("{sign}{}{digits}", "0".repeat(fill));
    }
    // Go pads anything else with zeros too when asked (`%08s` of "ab" is `000000ab`).
    let fill_char = if spec.zero { "0" } else { " " };
    fill_char.repeat(fill) + &body
}

/// Go's `strconv.Quote`.
pub(crate) fn quote_go(text: &str) -> String {
    quote_with(text, false)
}

/// Go's `strconv.Quote`, or with `ascii_only` its `QuoteToASCII` (`%+q`): every character outside ASCII escaped.
fn quote_with(text: &str, ascii_only: bool) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{7}' => out.push_str("\\a"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{b}' => out.push_str("\\v"),
            c if super::gostring::stray_byte(c).is_some() => {
                let byte = super::gostring::stray_byte(c).unwrap_or_default();
                out.push_str(&format!("\\x{byte:02x}"));
            }
            c if (c as u32) < 0x20 || c == '\u{7f}' => {
                out.push_str(&format!("\\x{:02x}", c as u32))
            }
            c if (ascii_only && !c.is_ascii() || !super::isprint::is_print(c))
                && (c as u32) <= 0xffff =>
            {
                out.push_str(&format!("\\u{:04x}", c as u32))
            }
            c if ascii_only && !c.is_ascii() || !super::isprint::is_print(c) => {
                out.push_str(&format!("\\U{:08x}", c as u32))
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(format: &str, args: &[Value]) -> String {
        sprintf(format, args).unwrap()
    }

    /// Floats under `%x`/`%X`, as Go prints them (checked with Helm v3.11.3's engine).
    #[test]
    fn floats_print_in_hex_with_x() {
        let cases = [
            ("%x", 1.25, "0x1.4p+00"),
            ("%x", 0.0, "0x0p+00"),
            ("%x", -3.75, "-0x1.ep+01"),
            ("%X", 123.233, "0X1.ECEE978D4FDF4P+06"),
            ("%x", 0.1, "0x1.999999999999ap-04"),
            ("%.2x", 0.1, "0x1.9ap-04"),
            ("%.0x", 1.5, "0x1p+01"),
            ("%.3x", 1.0, "0x1.000p+00"),
            ("%x", 1e21, "0x1.b1ae4d6e2ef5p+69"),
            ("%x", 5e-324, "0x1p-1074"),
            ("%+x", 2.5, "+0x1.4p+01"),
            ("%.20x", 0.1, "0x1.999999999999a0000000p-04"),
        ];
        for (format, value, want) in cases {
            assert_eq!(f(format, &[Value::from(value)]), want, "{format} {value}");
        }
    }

    /// A `[]byte` (`.Files.GetBytes`) under each verb, as Helm v3.11.3 prints `hi"\n`.
    #[test]
    fn bytes_print_as_text_hex_or_numbers_by_verb() {
        let bytes = Value::from_bytes(b"hi\"\n".to_vec());
        let cases = [
            ("%s", "hi\"\n"),
            ("%v", "[104 105 34 10]"),
            ("%q", "\"hi\\\"\\n\""),
            ("%x", "6869220a"),
            ("%X", "6869220A"),
            ("%T", "[]uint8"),
            ("%d", "[104 105 34 10]"),
            ("% x", "68 69 22 0a"),
            ("%#x", "0x6869220a"),
            ("% #X", "0X68 0X69 0X22 0X0A"),
            ("%.2x", "6869"),
            ("%5s", " hi\"\n"),
            ("%.1s", "h"),
            (
                "%t",
                "[%!t(uint8=104) %!t(uint8=105) %!t(uint8=34) %!t(uint8=10)]",
            ),
            ("%c", "[h i \" \n]"),
            ("%o", "[150 151 42 12]"),
        ];
        for (format, want) in cases {
            assert_eq!(f(format, std::slice::from_ref(&bytes)), want, "{format}");
        }
        let list = Value::from(vec![bytes.clone()]);
        assert_eq!(f("%s", &[list]), "[hi\"\n]");
        assert_eq!(
            f("% x|%#x", &[Value::from("hi"), Value::from("hi")]),
            "68 69|0x6869"
        );
    }

    #[test]
    fn sprintf_formats_common_verbs() {
        assert_eq!(
            f(
                "%s=%d (%v) %q",
                &[
                    Value::from("n"),
                    Value::from(42),
                    Value::from(true),
                    Value::from("x")
                ]
            ),
            "n=42 (true) \"x\""
        );
        assert_eq!(f("%s-%s", &[Value::from("a"), Value::from("b")]), "a-b");
        assert_eq!(
            f(
                "%05.2f|%-4d|%4s|%x",
                &[
                    Value::from(3.25159),
                    Value::from(7),
                    Value::from("ab"),
                    Value::from(255)
                ]
            ),
            "03.25|7   |  ab|ff"
        );
        assert_eq!(
            f("%v %v", &[Value::from(1e6), Value::from(2.5)]),
            "1e+06 2.5"
        );
        assert_eq!(f("100%%", &[]), "100%");
    }

    #[test]
    fn sprintf_reports_mismatches_like_go() {
        assert_eq!(f("%d", &[Value::from(8080.0)]), "%!d(float64=8080)");
        assert_eq!(f("%d", &[Value::from("x")]), "%!d(string=x)");
        assert_eq!(f("%s %s", &[Value::from("a")]), "a %!s(MISSING)");
        assert_eq!(
            f("%s", &[Value::from("a"), Value::from(1)]),
            "a%!(EXTRA int=1)"
        );
    }

    #[test]
    fn quote_with_ascii_only_escapes_every_other_character() {
        assert_eq!(
            quote_with("é\u{1f600}a\u{2028}", true),
            "\"\\u00e9\\U0001f600a\\u2028\""
        );
        assert_eq!(
            quote_with("é\u{1f600}a\u{2028}", false),
            "\"é\u{1f600}a\\u2028\""
        );
    }

    #[test]
    fn quote_go_escapes_like_strconv() {
        assert_eq!(quote_go("a\"b\\c\n\u{1}é"), "\"a\\\"b\\\\c\\n\\x01é\"");
        // Not printable for Go: escaped (checked with Helm's `printf "%q"`).
        assert_eq!(
            quote_go("\u{fff8}\u{200b}\u{feff}\u{f0000}"),
            "\"\\ufff8\\u200b\\ufeff\\U000f0000\""
        );
        assert_eq!(quote_go("\u{10000}ü"), "\"\u{10000}ü\"");
    }

    #[test]
    fn general_and_exponent_forms_follow_go() {
        assert_eq!(
            f(
                "%.3g %e %.2e",
                &[
                    Value::from(1234.5678),
                    Value::from(1500.0),
                    Value::from(0.000123)
                ]
            ),
            "1.23e+03 1.500000e+03 1.23e-04"
        );
    }
}

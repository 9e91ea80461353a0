//! Go's hexadecimal floating-point literals (`0x1p4`, `0x1.8p-1`, `0X.8P0`), which text/template takes as float64
//! constants: a hex mantissa with an optional point, then a binary exponent that must be there. The value is
//! rounded once to the nearest float64 (ties to even) as Go's `strconv.ParseFloat` rounds it; a value too large
//! for a float64 is Go's range error (a parse error in a template), one too small becomes zero as in Go.

/// The value of the hex float literal `text` (lower-cased, without sign, base prefix or `_`; so `1.8p1`), or
/// `None` when it is malformed or out of range.
pub(crate) fn parse(text: &str) -> Option<f64> {
    let (mantissa, exponent) = text.split_once('p')?;
    let exponent = parse_exponent(exponent)?;
    let (whole, fraction) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    if whole.len() + fraction.len() == 0 {
        return None;
    }
    // The digits as a 64-bit integer times 2^scale, with `sticky` for nonzero digits that did not fit.
    let mut digits: u64 = 0;
    let mut sticky = false;
    let mut scale: i64 = exponent;
    for (c, in_fraction) in whole
        .chars()
        .map(|c| (c, false))
        .chain(fraction.chars().map(|c| (c, true)))
    {
        let d = u64::from(c.to_digit(16)?);
        if digits >> 60 == 0 {
            digits = digits * 16 + d;
            scale -= 4 * i64::from(in_fraction);
        } else {
            sticky |= d != 0;
            scale += 4 * i64::from(!in_fraction);
        }
    }
    if digits == 0 {
        return Some(0.0);
    }
    let zeros = digits.leading_zeros();
    let digits = u128::from(digits << zeros);
    // The value is 1.f × 2^top, with the leading 1 at bit 63 of `digits`.
    let top = scale - i64::from(zeros) + 63;
    if top > 1023 {
        return None;
    }
    // Bits of `digits` below the float's last one: 11 for a normal number, more for a subnormal one.
    let dropped = 11 + (-1022 - top).max(0);
    if dropped > 120 {
        return Some(0.0);
    }
    let dropped = u32::try_from(dropped).ok()?;
    let mut kept = digits >> dropped;
    let rest = digits & ((1u128 << dropped) - 1);
    let half = 1u128 << (dropped - 1);
    if rest > half || (rest == half && (sticky || kept & 1 == 1)) {
        kept += 1;
    }
    let bits = if top < -1022 {
        // Subnormal: the exponent field is 0 (a carry into bit 52 makes it the smallest normal number).
        u64::try_from(kept).ok()?
    } else {
        let (kept, top) = if kept >> 53 == 1 {
            (kept >> 1, top + 1)
        } else {
            (kept, top)
        };
        if top > 1023 {
            return None;
        }
        let field = u64::try_from(top + 1023).ok()?;
        (field << 52) | (u64::try_from(kept).ok()? & ((1u64 << 52) - 1))
    };
    Some(f64::from_bits(bits))
}

/// A decimal exponent with an optional sign, saturated far beyond any float64's range.
fn parse_exponent(text: &str) -> Option<i64> {
    let (negative, digits) = match text.as_bytes().first()? {
        b'-' => (true, &text[1..]),
        b'+' => (false, &text[1..]),
        _ => (false, text),
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let magnitude = digits
        .bytes()
        .fold(0i64, |n, b| (n * 10 + i64::from(b - b'0')).min(1 << 40));
    Some(if negative { -magnitude } else { magnitude })
}

#[cfg(test)]
mod tests {
    use super::parse;

    /// Each value as Helm v3.11.3 prints the literal (`0x` and the sign are the caller's).
    #[test]
    fn hex_floats_round_like_go() {
        let cases: [(&str, Option<f64>); 17] = [
            ("1p4", Some(16.0)),
            ("1.8p1", Some(3.0)),
            ("1p-2", Some(0.25)),
            (".8p0", Some(0.5)),
            ("10p0", Some(16.0)),
            ("1p-1074", Some(5e-324)),
            ("1p-1080", Some(0.0)),
            ("1.8p-1073", Some(1.5e-323)),
            ("1p-1023", Some(1.112_536_929_253_600_7e-308)),
            ("1.fffffffffffffp1023", Some(f64::MAX)),
            ("1.00000000000008p0", Some(1.0)),
            ("1.00000000000018p0", Some(1.000_000_000_000_000_4)),
            ("1.0000000000000fffp0", Some(1.000_000_000_000_000_2)),
            ("123456789abcdef0p0", Some(1.311_768_467_463_790_3e18)),
            ("1.fffffffffffff8p1023", None),
            ("1.8", None),
            ("1p", None),
        ];
        for (text, want) in cases {
            assert_eq!(parse(text), want, "{text}");
        }
    }
}

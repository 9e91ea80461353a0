//! shopspring/decimal arithmetic as Sprig's `addf`/`subf`/`mulf`/`divf` run it: every float64 becomes the exact
//! decimal of its shortest text, the operations are exact (a division is rounded half away from zero to 16
//! places), and the result is parsed back into the nearest float64. So `addf 0.1 0.2` is `0.3`, not
//! `0.30000000000000004`. Mantissas are big integers, so `mulf 1e21 1e21` stays exact like shopspring's; only
//! infinities and NaN fall back to float64 arithmetic.

use num_bigint_dig::{BigInt, Sign};

/// `mantissa / 10^scale`.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Decimal {
    mantissa: BigInt,
    scale: u32,
}

/// Digits after the point of a quotient (`decimal.DivisionPrecision`).
const DIVISION_PLACES: u32 = 16;

fn abs(n: &BigInt) -> BigInt {
    if n.sign() == Sign::Minus {
        -n.clone()
    } else {
        n.clone()
    }
}

fn pow10(exp: u32) -> BigInt {
    let digits = format!("1{}", "0".repeat(exp as usize));
    BigInt::parse_bytes(digits.as_bytes(), 10).unwrap_or_else(|| BigInt::from(1u8))
}

impl Decimal {
    /// The exact decimal of `f`'s shortest round-trip text.
    fn from_f64(f: f64) -> Option<Self> {
        if !f.is_finite() {
            return None;
        }
        // Rust's `Display` for f64 prints the shortest round-trip digits without an exponent.
        let text = format!("{f}");
        let (int, frac) = text.split_once('.').unwrap_or((&text, ""));
        let digits: String = int.chars().chain(frac.chars()).collect();
        Some(Self {
            mantissa: BigInt::parse_bytes(digits.as_bytes(), 10)?,
            scale: u32::try_from(frac.len()).ok()?,
        })
    }

    /// The nearest float64 (Rust's parsing rounds correctly however long the text).
    fn to_f64(&self) -> f64 {
        let magnitude = abs(&self.mantissa).to_string();
        let scale = self.scale as usize;
        let padded = format!("{magnitude:0>width$}", width = scale + 1);
        let (int, frac) = padded.split_at(padded.len() - scale);
        let sign = if self.mantissa.sign() == Sign::Minus {
            "-"
        } else {
            ""
        };
        format!("{sign}{int}.{frac}0").parse().unwrap_or(0.0)
    }

    fn rescaled(&self, scale: u32) -> BigInt {
        &self.mantissa * pow10(scale.saturating_sub(self.scale))
    }

    fn add(&self, other: &Self) -> Self {
        let scale = self.scale.max(other.scale);
        Self {
            mantissa: self.rescaled(scale) + other.rescaled(scale),
            scale,
        }
    }

    fn neg(&self) -> Self {
        Self {
            mantissa: -self.mantissa.clone(),
            scale: self.scale,
        }
    }

    fn mul(&self, other: &Self) -> Self {
        Self {
            mantissa: &self.mantissa * &other.mantissa,
            scale: self.scale + other.scale,
        }
    }

    /// `DivRound(other, 16)`: rounded half away from zero; `None` for a division by zero.
    fn div(&self, other: &Self) -> Option<Self> {
        if other.mantissa.sign() == Sign::NoSign {
            return None;
        }
        let numerator = &self.mantissa * pow10(DIVISION_PLACES + other.scale);
        let denominator = &other.mantissa * pow10(self.scale);
        // BigInt division truncates toward zero, like Go's QuoRem.
        let mut quotient = &numerator / &denominator;
        let remainder = &numerator % &denominator;
        let twice = &remainder + &remainder;
        if abs(&twice) >= abs(&denominator) {
            let away = if (numerator.sign() == Sign::Minus) == (denominator.sign() == Sign::Minus) {
                1
            } else {
                -1
            };
            quotient += BigInt::from(away);
        }
        Some(Self {
            mantissa: quotient,
            scale: DIVISION_PLACES,
        })
    }
}

/// The operation of a Sprig float function.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Op {
    Add,
    Sub,
    Mul,
    Div,
}

/// `first op rest[0] op rest[1] …` with shopspring/decimal semantics. `Err` only for a division by zero.
pub(crate) fn fold(op: Op, first: f64, rest: &[f64]) -> Result<f64, &'static str> {
    if op == Op::Div && rest.contains(&0.0) {
        return Err("decimal division by zero");
    }
    let exact = || -> Option<f64> {
        let mut acc = Decimal::from_f64(first)?;
        for &value in rest {
            let value = Decimal::from_f64(value)?;
            acc = match op {
                Op::Add => acc.add(&value),
                Op::Sub => acc.add(&value.neg()),
                Op::Mul => acc.mul(&value),
                Op::Div => acc.div(&value)?,
            };
        }
        Some(acc.to_f64())
    };
    Ok(exact().unwrap_or_else(|| {
        rest.iter().fold(first, |acc, &v| match op {
            Op::Add => acc + v,
            Op::Sub => acc - v,
            Op::Mul => acc * v,
            Op::Div => acc / v,
        })
    }))
}

/// Sprig's `round v places [roundOn]`: up when the fraction of `v·10^places` reaches `roundOn` (default .5),
/// else down (a negative fraction always rounds down).
pub(crate) fn round(value: f64, places: f64, round_on: f64) -> f64 {
    let pow = 10f64.powf(places);
    let digit = pow * value;
    let fraction = digit.fract();
    let rounded = if fraction >= round_on {
        digit.ceil()
    } else {
        digit.floor()
    };
    rounded / pow
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn float_functions_compute_in_decimal_like_sprig() {
        let cases: [(Op, f64, &[f64], f64); 12] = [
            // Past 38 digits too (Helm v3.11.3: -3.3333333333333332e+41 for divf (subf 3.0 (mulf 1e21 1e21)) 3).
            (Op::Mul, 1e21, &[1e21], 1e42),
            (Op::Sub, 3.0, &[1e42], -1e42),
            (Op::Div, -1e42, &[3.0], -3.3333333333333332e41),
            (Op::Add, 0.1, &[0.2], 0.3),
            (Op::Add, 1.5, &[2.5, 3.0], 7.0),
            (Op::Sub, 0.3, &[0.1], 0.2),
            (Op::Mul, 1.1, &[1.1], 1.21),
            (Op::Mul, 123.233, &[123.233], 15186.372289),
            (Op::Div, 10.0, &[4.0], 2.5),
            (Op::Div, -0.5, &[3.0], -0.1666666666666667),
            (Op::Div, 2.0, &[3.0], 0.6666666666666667),
            (Op::Sub, 1e300, &[1.0], 1e300),
        ];
        for (op, first, rest, want) in cases {
            assert_eq!(fold(op, first, rest), Ok(want), "{op:?} {first} {rest:?}");
        }
        assert!(fold(Op::Div, 1.0, &[0.0]).is_err());
    }

    #[test]
    fn round_takes_the_round_on_threshold() {
        // 123.233·100 is 12323.300000000001 in float64: its fraction reaches 0.3, so up (Helm prints 123.24).
        assert_eq!(round(123.233, 2.0, 0.3), 123.24);
        assert_eq!(round(123.236, 2.0, 0.5), 123.24);
        assert_eq!(round(123.555555, 3.0, 0.5), 123.556);
        assert_eq!(round(1.5, 0.0, 0.5), 2.0);
        assert_eq!(round(-0.5, 0.0, 0.5), -1.0);
    }
}

//! Kubernetes resource quantities (`200`, `100Gi`, `1.5k`, `1e3`) as used in `resources.capacity`/`reserved`.

use std::fmt;

use serde::de::{self, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A resource quantity kept as written; [`Quantity::value`] parses it for comparisons.
///
/// YAML files write small quantities as numbers (`shoots: 200`), so numbers are accepted and kept in
/// their decimal form.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Quantity(String);

/// Why a quantity could not be understood.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "invalid quantity {input:?}: expected a number with an optional suffix such as Ki, Gi, k, M or e3"
)]
pub struct QuantityError {
    /// The rejected text.
    pub input: String,
}

impl Quantity {
    /// A quantity from its text form.
    pub fn new(text: impl Into<String>) -> Self {
        Quantity(text.into())
    }

    /// The text as written.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The numeric value (suffixes applied); precise enough to compare capacities.
    ///
    /// # Errors
    ///
    /// Returns [`QuantityError`] when the text is not a Kubernetes quantity.
    pub fn value(&self) -> Result<f64, QuantityError> {
        let error = || QuantityError {
            input: self.0.clone(),
        };
        let text = self.0.trim();
        let number_end = text
            .find(|c: char| !(c.is_ascii_digit() || matches!(c, '.' | '+' | '-')))
            .unwrap_or(text.len());
        let (number, suffix) = text.split_at(number_end);
        if number.is_empty() || !number.chars().any(|c| c.is_ascii_digit()) {
            return Err(error());
        }
        let base: f64 = number.parse().map_err(|_| error())?;
        let multiplier = match suffix {
            "" => 1.0,
            "n" => 1e-9,
            "u" => 1e-6,
            "m" => 1e-3,
            "k" => 1e3,
            "M" => 1e6,
            "G" => 1e9,
            "T" => 1e12,
            "P" => 1e15,
            "E" => 1e18,
            "Ki" => 1024f64,
            "Mi" => 1024f64.powi(2),
            "Gi" => 1024f64.powi(3),
            "Ti" => 1024f64.powi(4),
            "Pi" => 1024f64.powi(5),
            "Ei" => 1024f64.powi(6),
            exponent => {
                let digits = exponent
                    .strip_prefix('e')
                    .or_else(|| exponent.strip_prefix('E'))
                    .ok_or_else(error)?;
                let power: i32 = digits.parse().map_err(|_| error())?;
                10f64.powi(power)
            }
        };
        Ok(base * multiplier)
    }
}

impl fmt::Display for Quantity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl Serialize for Quantity {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.0)
    }
}

impl<'de> Deserialize<'de> for Quantity {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(QuantityVisitor)
    }
}

struct QuantityVisitor;

impl Visitor<'_> for QuantityVisitor {
    type Value = Quantity;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a quantity such as 200 or \"100Gi\"")
    }

    fn visit_str<E: de::Error>(self, value: &str) -> Result<Quantity, E> {
        Ok(Quantity(value.to_owned()))
    }

    fn visit_u64<E: de::Error>(self, value: u64) -> Result<Quantity, E> {
        Ok(Quantity(value.to_string()))
    }

    fn visit_i64<E: de::Error>(self, value: i64) -> Result<Quantity, E> {
        Ok(Quantity(value.to_string()))
    }

    fn visit_f64<E: de::Error>(self, value: f64) -> Result<Quantity, E> {
        Ok(Quantity(value.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn value_applies_suffixes() {
        let cases = [
            ("200", 200.0),
            ("1.5k", 1500.0),
            ("100Mi", 100.0 * 1024.0 * 1024.0),
            ("2Gi", 2.0 * 1024.0 * 1024.0 * 1024.0),
            ("500m", 0.5),
            ("1e3", 1000.0),
            ("-1", -1.0),
        ];
        for (text, expected) in cases {
            assert_eq!(Quantity::new(text).value().unwrap(), expected, "{text}");
        }
    }

    #[test]
    fn value_rejects_unknown_suffixes_and_missing_numbers() {
        for text in ["", "Gi", "10x", "1.2.3", "e3"] {
            assert!(Quantity::new(text).value().is_err(), "{text}");
        }
    }

    #[test]
    fn numbers_and_strings_both_deserialize() {
        let quantity: Quantity = serde_json::from_str("200").unwrap();
        assert_eq!(quantity.as_str(), "200");
        let quantity: Quantity = serde_json::from_str("\"100Gi\"").unwrap();
        assert_eq!(serde_json::to_string(&quantity).unwrap(), "\"100Gi\"");
    }
}

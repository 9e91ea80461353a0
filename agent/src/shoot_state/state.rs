//! An extension object's `status.state` as the ShootState sync keeps it between events: its
//! compact JSON text, deflated where that makes it smaller, instead of a parsed value.

use std::cell::RefCell;
use std::io::Read as _;

use flate2::{Compress, Compression, FlushCompress, Status};
use serde_json::Value;

/// First byte of a stored state whose remaining bytes are the JSON text itself.
const PLAIN: u8 = 0;
/// First byte of a stored state whose remaining bytes are the JSON text, raw-deflated.
const DEFLATED: u8 = 1;

/// `status.state` as compact JSON text, deflated when that is shorter. The sync keeps one per
/// extension object for as long as the object exists (20 000 on a seed of 2 500 shoots); a parsed
/// `serde_json::Value` (insertion-ordered maps, one heap allocation per key, string, map and
/// array) takes about three times the memory of its text: 2000 objects with a ~350-byte state
/// held 2.6 MB as values. Extension states are JSON of repeated keys and identifiers (a Worker's
/// machine deployments, an Infrastructure's subnets), which deflate to a third or less of their
/// text; a short state that would not shrink is kept as it is. Equality is that of the JSON
/// values, as it was for `Value`: the stored bytes are compared first (deflating the same text
/// gives the same bytes) and the states are parsed only when they differ.
#[derive(Clone, Debug)]
pub struct StateText(Box<[u8]>);

impl StateText {
    /// The state of `value`.
    pub fn of(value: &Value) -> Self {
        let text = value.to_string();
        let stored = deflate(text.as_bytes())
            .filter(|deflated| deflated.len() < text.len())
            .map_or_else(
                || tagged(PLAIN, text.as_bytes()),
                |deflated| tagged(DEFLATED, &deflated),
            );
        Self(stored)
    }

    /// The state as a JSON value, equal to the one [`StateText::of`] was given.
    pub fn value(&self) -> Value {
        // Invariant of this type: only `of` builds a StateText, from a Value that serde_json
        // decoded (kube decodes every watched and listed object with it), as that value's text
        // or the text deflated by `deflate`, which inflates back to it; and serde_json parses
        // its own serialisation of such a value back to an equal value (exact integers,
        // shortest round-tripping floats, escaped strings, nesting within its recursion limit).
        let text = self.text();
        serde_json::from_str(&text).expect("serde_json parses its own serialisation of a value")
    }

    /// The compact JSON text.
    fn text(&self) -> String {
        match self.0.split_first() {
            Some((&DEFLATED, deflated)) => {
                let mut text = String::new();
                // Invariant: see `value`; a deflated state is `deflate`'s output, which inflates.
                flate2::read::DeflateDecoder::new(deflated)
                    .read_to_string(&mut text)
                    .expect("a deflated state inflates back to its text");
                text
            }
            Some((_, plain)) => String::from_utf8_lossy(plain).into_owned(),
            None => String::new(),
        }
    }
}

impl PartialEq for StateText {
    fn eq(&self, other: &Self) -> bool {
        self.0 == other.0 || self.value() == other.value()
    }
}

/// `bytes` behind the one-byte tag saying how they are stored, allocated to their exact size.
fn tagged(tag: u8, bytes: &[u8]) -> Box<[u8]> {
    let mut stored = Vec::with_capacity(bytes.len() + 1);
    stored.push(tag);
    stored.extend_from_slice(bytes);
    stored.into_boxed_slice()
}

thread_local! {
    /// One deflater per thread, reset for each state: setting one up allocates and clears a few
    /// hundred KiB of tables, too much to repeat for each of 500 state changes a second.
    static DEFLATER: RefCell<Compress> = RefCell::new(Compress::new(Compression::default(), false));
}

/// `text` raw-deflated, or `None` if the deflater fails (the state is then kept as text).
fn deflate(text: &[u8]) -> Option<Vec<u8>> {
    DEFLATER.with(|deflater| {
        let mut deflater = deflater.try_borrow_mut().ok()?;
        deflater.reset();
        // Deflate's worst case is a few bytes per 16 KiB block over the input; grow on demand.
        let mut out = Vec::with_capacity(text.len() / 2 + 64);
        loop {
            let consumed = usize::try_from(deflater.total_in()).ok()?;
            let rest = text.get(consumed..)?;
            match deflater.compress_vec(rest, &mut out, FlushCompress::Finish) {
                Ok(Status::StreamEnd) => return Some(out),
                // Never more than the text and deflate's block overhead: give up beyond that.
                Ok(Status::Ok | Status::BufError) if out.capacity() <= 2 * text.len() + 1024 => {
                    out.reserve(out.capacity().max(64));
                }
                Ok(_) | Err(_) => return None,
            }
        }
    })
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

    /// The extension state the scale benchmark writes (`scale/src/workload.rs`).
    fn benchmark_state(mark: u64) -> Value {
        json!({"mark": mark, "network": {"vpc": "vpc-0123456789abcdef",
               "subnets": ["subnet-a", "subnet-b", "subnet-c"]}, "padding": "x".repeat(256)})
    }

    /// A Worker state's shape: machine deployments repeating their keys and names.
    fn worker_state() -> Value {
        let deployments: Vec<Value> = (0..6)
            .map(|index| {
                json!({"name": format!("shoot--dev--a-pool-z{index}"), "minimum": 1, "maximum": 3,
                       "machineClass": {"name": format!("shoot--dev--a-pool-z{index}-3a8c2"),
                                        "provider": "local", "zone": format!("zone-{index}")}})
            })
            .collect();
        json!({"machineDeployments": deployments})
    }

    #[test]
    fn state_text_gives_back_long_states_it_deflated() {
        for value in [benchmark_state(7), worker_state()] {
            let state = StateText::of(&value);
            assert_eq!(state.0[0], DEFLATED);
            assert_eq!(state.value(), value);
            assert_eq!(state.text(), value.to_string());
        }
    }

    #[test]
    fn state_text_keeps_a_short_state_that_would_not_shrink_as_text() {
        let value = json!({"id": "vpc-1"});
        let state = StateText::of(&value);
        assert_eq!(state.0[0], PLAIN);
        assert_eq!(&state.0[1..], value.to_string().as_bytes());
        assert_eq!(state.value(), value);
    }

    #[test]
    fn state_text_is_smaller_than_the_text_and_the_parsed_value() {
        for (value, at_most) in [(benchmark_state(1), 160), (worker_state(), 300)] {
            let text = value.to_string();
            let state = StateText::of(&value);
            assert!(
                state.0.len() <= at_most && state.0.len() < text.len() / 2,
                "{} bytes stored for a text of {}",
                state.0.len(),
                text.len()
            );
        }
    }

    #[test]
    fn deflated_states_are_equal_only_when_their_values_are() {
        assert_eq!(
            StateText::of(&benchmark_state(3)),
            StateText::of(&benchmark_state(3))
        );
        assert_ne!(
            StateText::of(&benchmark_state(3)),
            StateText::of(&benchmark_state(4))
        );
        // Equal values with keys in another order: different bytes, still equal.
        let text = r#"{"padding": "PADDING", "network": {"subnets": ["subnet-a"]}, "mark": 3}"#
            .replace("PADDING", &"x".repeat(256));
        let reordered = StateText::of(&serde_json::from_str::<Value>(&text).unwrap());
        let ordered = StateText::of(&json!({"mark": 3, "network": {"subnets": ["subnet-a"]},
                                             "padding": "x".repeat(256)}));
        assert_eq!(reordered, ordered);
    }
}

//! Merging care's conditions and constraints into the lists other writers share (spec §7.8): the
//! entries of care-owned types are replaced in place or appended, owned types care did not write
//! this time are removed, and every other entry (`ReadyForMigration`, a managed seed's
//! conditions, ...) keeps its content and position. Pure.

use seedlet_api::conditions::{self, Condition};

/// `stored` with `written` merged in by type and the `owned` types missing from `written`
/// removed.
pub fn merged(stored: &[Condition], owned: &[&str], written: Vec<Condition>) -> Vec<Condition> {
    let dropped: Vec<&str> = owned
        .iter()
        .copied()
        .filter(|type_| !written.iter().any(|condition| condition.type_ == *type_))
        .collect();
    conditions::merge(&conditions::remove(stored, &dropped), written)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn condition(type_: &str, status: &str) -> Condition {
        serde_json::from_value(serde_json::json!({
            "type": type_, "status": status, "reason": "R", "message": "",
            "lastTransitionTime": "2025-01-01T00:00:00Z", "lastUpdateTime": "2025-01-01T00:00:00Z",
        }))
        .unwrap()
    }

    fn seen(conditions: &[Condition]) -> Vec<(String, String)> {
        conditions
            .iter()
            .map(|c| (c.type_.clone(), c.status.to_string()))
            .collect()
    }

    fn pairs(expected: &[(&str, &str)]) -> Vec<(String, String)> {
        expected
            .iter()
            .map(|(t, s)| ((*t).to_owned(), (*s).to_owned()))
            .collect()
    }

    /// (stored, written, expected).
    type MergeCase = (
        Vec<Condition>,
        Vec<Condition>,
        Vec<(&'static str, &'static str)>,
    );

    #[test]
    fn merged_replaces_owned_entries_in_place_and_keeps_foreign_ones() {
        let owned = ["A", "B", "C"];
        // (stored, written, expected)
        let cases: Vec<MergeCase> = vec![
            (vec![], vec![condition("A", "True")], vec![("A", "True")]),
            (
                vec![
                    condition("ReadyForMigration", "True"),
                    condition("A", "False"),
                ],
                vec![condition("A", "True"), condition("B", "Unknown")],
                vec![
                    ("ReadyForMigration", "True"),
                    ("A", "True"),
                    ("B", "Unknown"),
                ],
            ),
            // An owned type no longer written goes; a foreign one stays where it was.
            (
                vec![
                    condition("C", "False"),
                    condition("SeedReady", "True"),
                    condition("A", "True"),
                ],
                vec![condition("A", "True")],
                vec![("SeedReady", "True"), ("A", "True")],
            ),
            (vec![condition("X", "True")], vec![], vec![("X", "True")]),
        ];
        for (stored, written, expected) in cases {
            assert_eq!(seen(&merged(&stored, &owned, written)), pairs(&expected));
        }
    }
}

//! The `name.seed.gardener.cloud/<seed>` labels an object should carry (what gardener-apiserver
//! maintains on Shoots, BackupEntries and Seeds): `"true"` for each seed that hosts it, and no
//! other label with that prefix.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

/// Prefix of the seed labels.
pub const SEED_LABEL_PREFIX: &str = seedlet_api::names::labels::SEED_NAME_PREFIX;

/// The merge patch of `metadata.labels` that makes `current` carry exactly the seed labels of
/// `seeds` (`null` removes a stale one); `None` when nothing changes.
pub fn label_patch(current: &BTreeMap<String, String>, seeds: &[&str]) -> Option<Value> {
    let mut patch = Map::new();
    for seed in seeds.iter().filter(|s| !s.is_empty()) {
        let key = format!("{SEED_LABEL_PREFIX}{seed}");
        if current.get(&key).map(String::as_str) != Some("true") {
            patch.insert(key, Value::from("true"));
        }
    }
    for key in current.keys().filter(|k| k.starts_with(SEED_LABEL_PREFIX)) {
        let seed = &key[SEED_LABEL_PREFIX.len()..];
        if !seeds.contains(&seed) {
            patch.insert(key.clone(), Value::Null);
        }
    }
    (!patch.is_empty()).then(|| serde_json::json!({"metadata": {"labels": patch}}))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    #[test]
    fn labels_follow_the_seeds_and_stale_ones_go() {
        let cases = [
            (
                labels(&[]),
                vec!["a"],
                Some(json!({"name.seed.gardener.cloud/a": "true"})),
            ),
            (
                labels(&[("name.seed.gardener.cloud/a", "true")]),
                vec!["a"],
                None,
            ),
            (
                labels(&[("name.seed.gardener.cloud/a", "true")]),
                vec!["a", "a"],
                None,
            ),
            // Migration: spec on b, status still on a.
            (
                labels(&[("name.seed.gardener.cloud/a", "true")]),
                vec!["b", "a"],
                Some(json!({"name.seed.gardener.cloud/b": "true"})),
            ),
            (
                labels(&[("name.seed.gardener.cloud/a", "true"), ("app", "x")]),
                vec!["b"],
                Some(
                    json!({"name.seed.gardener.cloud/b": "true", "name.seed.gardener.cloud/a": null}),
                ),
            ),
            (
                labels(&[("name.seed.gardener.cloud/a", "false")]),
                vec!["a"],
                Some(json!({"name.seed.gardener.cloud/a": "true"})),
            ),
            (
                labels(&[("name.seed.gardener.cloud/a", "true")]),
                vec![],
                Some(json!({"name.seed.gardener.cloud/a": null})),
            ),
            (labels(&[]), vec![""], None),
        ];
        for (current, seeds, expected) in cases {
            let patch = label_patch(&current, &seeds);
            assert_eq!(
                patch.map(|p| p["metadata"]["labels"].clone()),
                expected,
                "{current:?} {seeds:?}"
            );
        }
    }
}

//! The per-shoot ResourceQuota bump (spec §3.3): `count/configmaps` and `count/secrets` of a
//! project ResourceQuota grow with the number of objects Gardener creates per Shoot, recorded in
//! the annotations `quota.gardener.cloud/{configmaps,secrets}-per-shoot`.

use std::collections::BTreeMap;

/// Key of the shoot count limit.
pub const SHOOTS_KEY: &str = "count/shoots.core.gardener.cloud";

/// `(annotation, resource key, objects per shoot)`.
pub const DESCRIPTORS: [(&str, &str, i64); 2] = [
    (
        "quota.gardener.cloud/configmaps-per-shoot",
        "count/configmaps",
        2,
    ),
    ("quota.gardener.cloud/secrets-per-shoot", "count/secrets", 4),
];

/// A value that is not an integer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{field} {value:?} is not an integer")]
pub struct NotAnInteger {
    /// The annotation or key.
    pub field: String,
    /// The value.
    pub value: String,
}

fn integer(field: &str, value: &str) -> Result<i64, NotAnInteger> {
    value.trim().parse().map_err(|_| NotAnInteger {
        field: field.to_owned(),
        value: value.to_owned(),
    })
}

/// Limits or annotations by key.
pub type Values = BTreeMap<String, String>;

/// The changes to `hard` and `annotations` (only keys whose value changes), for a namespace with
/// `shoots` Shoots.
///
/// # Errors
/// [`NotAnInteger`] for an annotation or limit that is not a whole number.
pub fn bump(
    hard: &BTreeMap<String, String>,
    annotations: &BTreeMap<String, String>,
    shoots: i64,
) -> Result<(Values, Values), NotAnInteger> {
    let max_shoots = match hard.get(SHOOTS_KEY) {
        Some(value) => integer(SHOOTS_KEY, value)?,
        None => shoots,
    };
    let mut new_hard = BTreeMap::new();
    let mut new_annotations = BTreeMap::new();
    for (annotation, key, expected) in DESCRIPTORS {
        let current = hard.get(key).map(|v| integer(key, v)).transpose()?;
        match annotations.get(annotation) {
            None => {
                if let Some(current) = current
                    && current < expected * max_shoots
                {
                    new_hard.insert(key.to_owned(), (expected * max_shoots).to_string());
                }
            }
            Some(value) => {
                let recorded = integer(annotation, value)?;
                if recorded == expected {
                    continue;
                }
                // [QUIRK] kept: a missing key is created (from 0).
                let raised = current.unwrap_or(0) + max_shoots * (expected - recorded).max(0);
                if Some(raised) != current {
                    new_hard.insert(key.to_owned(), raised.to_string());
                }
            }
        }
        if annotations.get(annotation).map(String::as_str) != Some(expected.to_string().as_str()) {
            new_annotations.insert(annotation.to_owned(), expected.to_string());
        }
    }
    Ok((new_hard, new_annotations))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).into(), (*v).into()))
            .collect()
    }

    const SECRETS: &str = "quota.gardener.cloud/secrets-per-shoot";
    const CONFIGMAPS: &str = "quota.gardener.cloud/configmaps-per-shoot";

    #[test]
    fn cases() {
        let both = map(&[(SECRETS, "4"), (CONFIGMAPS, "2")]);
        // (hard, annotations, shoots in ns, new hard, new annotations)
        let cases = [
            // The spec's example.
            (
                map(&[(SHOOTS_KEY, "10"), ("count/secrets", "30")]),
                map(&[]),
                0,
                map(&[("count/secrets", "40")]),
                both.clone(),
            ),
            // High enough: unchanged, annotations recorded.
            (
                map(&[(SHOOTS_KEY, "10"), ("count/secrets", "400")]),
                map(&[]),
                0,
                map(&[]),
                both.clone(),
            ),
            // Without a shoot limit the shoots in the namespace count.
            (
                map(&[("count/configmaps", "1")]),
                map(&[]),
                3,
                map(&[("count/configmaps", "6")]),
                both.clone(),
            ),
            // An older expectation: raised by the difference per shoot.
            (
                map(&[(SHOOTS_KEY, "10"), ("count/secrets", "40")]),
                map(&[(SECRETS, "3"), (CONFIGMAPS, "2")]),
                0,
                map(&[("count/secrets", "50")]),
                map(&[(SECRETS, "4")]),
            ),
            // A higher recorded value never lowers the limit.
            (
                map(&[(SHOOTS_KEY, "10"), ("count/secrets", "40")]),
                map(&[(SECRETS, "9"), (CONFIGMAPS, "2")]),
                0,
                map(&[]),
                map(&[(SECRETS, "4")]),
            ),
            // [QUIRK] a missing key is created.
            (
                map(&[(SHOOTS_KEY, "10")]),
                map(&[(SECRETS, "3"), (CONFIGMAPS, "2")]),
                0,
                map(&[("count/secrets", "10")]),
                map(&[(SECRETS, "4")]),
            ),
            // Up to date: nothing.
            (
                map(&[(SHOOTS_KEY, "10"), ("count/secrets", "40")]),
                both.clone(),
                0,
                map(&[]),
                map(&[]),
            ),
        ];
        for (hard, annotations, shoots, new_hard, new_annotations) in cases {
            assert_eq!(
                bump(&hard, &annotations, shoots),
                Ok((new_hard, new_annotations)),
                "{hard:?} {annotations:?}"
            );
        }
        assert!(bump(&map(&[]), &map(&[(SECRETS, "x")]), 1).is_err());
    }
}

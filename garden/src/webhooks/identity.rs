//! Who is asking (spec §2.1): a gardenlet (user `gardener.cloud:system:seed:<seed>` in group
//! `gardener.cloud:system:seeds`) or an extension of a seed (ServiceAccount `extension-*` in
//! namespace `seed-<seed>`). Everyone else is not a seed, and the webhooks have no opinion.

/// The group of every seed's client certificate.
pub const SEEDS_GROUP: &str = "gardener.cloud:system:seeds";
/// Prefix of a seed's user name.
pub const SEED_USER_PREFIX: &str = "gardener.cloud:system:seed:";
const SERVICE_ACCOUNTS_GROUP: &str = "system:serviceaccounts";
const SERVICE_ACCOUNTS_GROUP_PREFIX: &str = "system:serviceaccounts:";
const SEED_NAMESPACE_PREFIX: &str = "seed-";
const EXTENSION_ACCOUNT_PREFIX: &str = "extension-";

/// What kind of seed client asks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClientKind {
    /// The seed's gardenlet (seedlet agent).
    Gardenlet,
    /// An extension's ServiceAccount in `seed-<seed>`.
    Extension,
}

/// A request's seed identity.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SeedIdentity {
    /// The seed's name.
    pub seed: String,
    /// Gardenlet or extension.
    pub kind: ClientKind,
}

/// The seed identity of `user` with `groups`, or `None` when the requester is not a seed.
pub fn seed_identity(user: &str, groups: &[String]) -> Option<SeedIdentity> {
    if groups.iter().any(|g| g == SEEDS_GROUP) {
        // The seeds group decides: a malformed name is not a seed, and the ServiceAccount rule
        // is not tried.
        let seed = user.strip_prefix(SEED_USER_PREFIX)?;
        return (!seed.is_empty()).then(|| SeedIdentity {
            seed: seed.to_owned(),
            kind: ClientKind::Gardenlet,
        });
    }
    if !groups.iter().any(|g| g == SERVICE_ACCOUNTS_GROUP) {
        return None;
    }
    let namespace = groups
        .iter()
        .find_map(|g| g.strip_prefix(SERVICE_ACCOUNTS_GROUP_PREFIX))?;
    let seed = namespace.strip_prefix(SEED_NAMESPACE_PREFIX)?;
    if seed.is_empty() {
        return None;
    }
    let account = user.strip_prefix(&format!("system:serviceaccount:{namespace}:"))?;
    account
        .starts_with(EXTENSION_ACCOUNT_PREFIX)
        .then(|| SeedIdentity {
            seed: seed.to_owned(),
            kind: ClientKind::Extension,
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn groups(names: &[&str]) -> Vec<String> {
        names.iter().map(|g| (*g).to_owned()).collect()
    }

    #[test]
    fn identities_follow_the_spec_table() {
        let gardenlet = |seed: &str| {
            Some(SeedIdentity {
                seed: seed.into(),
                kind: ClientKind::Gardenlet,
            })
        };
        let extension = |seed: &str| {
            Some(SeedIdentity {
                seed: seed.into(),
                kind: ClientKind::Extension,
            })
        };
        let seeds = groups(&[SEEDS_GROUP, "system:authenticated"]);
        let sa = groups(&["system:serviceaccounts", "system:serviceaccounts:seed-a"]);
        let cases: Vec<(&str, Vec<String>, Option<SeedIdentity>)> = vec![
            (
                "gardener.cloud:system:seed:a",
                seeds.clone(),
                gardenlet("a"),
            ),
            (
                "gardener.cloud:system:seed:a",
                groups(&["system:authenticated"]),
                None,
            ),
            ("gardener.cloud:system:seed:", seeds.clone(), None),
            ("foo", seeds.clone(), None),
            // The seeds group decides even for a ServiceAccount-looking user.
            ("system:serviceaccount:seed-a:extension-x", seeds, None),
            (
                "system:serviceaccount:seed-a:extension-x",
                sa.clone(),
                extension("a"),
            ),
            ("system:serviceaccount:seed-a:gardenlet", sa, None),
            (
                "system:serviceaccount:garden:extension-x",
                groups(&["system:serviceaccounts", "system:serviceaccounts:garden"]),
                None,
            ),
            (
                "system:serviceaccount:seed-:extension-x",
                groups(&["system:serviceaccounts", "system:serviceaccounts:seed-"]),
                None,
            ),
            (
                "system:bootstrap:abcdef",
                groups(&["system:bootstrappers"]),
                None,
            ),
            ("", vec![], None),
        ];
        for (user, groups, expected) in cases {
            assert_eq!(seed_identity(user, &groups), expected, "{user} {groups:?}");
        }
    }
}

//! The pure merge of a managed seed's conditions into its Shoot's.

use seedlet_api::conditions::{self, Condition};
use seedlet_api::names::condition_types;

/// The Shoot's own condition types, kept in their stored order.
pub const SHOOT_TYPES: [&str; 5] = [
    condition_types::API_SERVER_AVAILABLE,
    condition_types::CONTROL_PLANE_HEALTHY,
    condition_types::OBSERVABILITY_COMPONENTS_HEALTHY,
    condition_types::EVERY_NODE_READY,
    condition_types::SYSTEM_COMPONENTS_HEALTHY,
];

/// The Shoot's conditions of [`SHOOT_TYPES`] (stored order), then every condition of its Seed
/// replacing a same-type entry or appended. Without a Seed, seed-derived conditions vanish.
pub fn merged_conditions(shoot: &[Condition], seed: Option<&[Condition]>) -> Vec<Condition> {
    let own: Vec<Condition> = shoot
        .iter()
        .filter(|condition| SHOOT_TYPES.contains(&condition.type_.as_str()))
        .cloned()
        .collect();
    match seed {
        Some(seed) => conditions::merge(&own, seed.iter().cloned()),
        None => own,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn condition(type_: &str, status: &str) -> Condition {
        serde_json::from_value(serde_json::json!({
            "type": type_, "status": status, "reason": "R", "message": "",
            "lastTransitionTime": "2025-01-01T00:00:00Z", "lastUpdateTime": "2025-01-01T00:00:00Z",
        }))
        .expect("condition")
    }

    fn types(conditions: &[Condition]) -> Vec<(&str, String)> {
        conditions
            .iter()
            .map(|c| (c.type_.as_str(), c.status.to_string()))
            .collect()
    }

    #[test]
    fn seed_conditions_follow_the_shoot_types_and_vanish_without_a_seed() {
        let shoot = [
            condition("EveryNodeReady", "True"),
            condition("APIServerAvailable", "True"),
            condition("GardenletReady", "Unknown"),
            condition("Custom", "True"),
        ];
        let seed = [
            condition("GardenletReady", "True"),
            condition("SeedSystemComponentsHealthy", "False"),
        ];
        assert_eq!(
            types(&merged_conditions(&shoot, Some(&seed))),
            [
                ("EveryNodeReady", "True".into()),
                ("APIServerAvailable", "True".into()),
                ("GardenletReady", "True".into()),
                ("SeedSystemComponentsHealthy", "False".into()),
            ]
        );
        assert_eq!(
            types(&merged_conditions(&shoot, None)),
            [
                ("EveryNodeReady", "True".into()),
                ("APIServerAvailable", "True".into()),
            ]
        );
        assert!(merged_conditions(&[], None).is_empty());
    }
}

//! Which controller does a shoot's seed-side work: with `controllers.shoot.enabled` (a seedlet
//! addition, default on) the Shoot controller's flows delete shoots and the Cluster sync only shows
//! the deletion; during a migration neither the sync nor the reconcile flow touches the seed side,
//! the migrate flow owns it. Also the settings both controllers apply alike: the requeue period of
//! `controllers.shoot.syncPeriod` and the Shoot write rate a flow's progress reports need.

use std::time::Duration;

use seedlet_api::core::Shoot;

/// Requeue period when `controllers.shoot.syncPeriod` is unset (gardenlet's default).
pub const DEFAULT_SYNC_PERIOD: Duration = Duration::from_secs(3600);
/// The Shoot writes per second a flow may make (burst twice that): one per finished task. The
/// Cluster sync, which embeds the Shoot with its status, rewrites the Cluster as often.
pub const FLOW_WRITES_PER_SECOND: f64 = 20.0;

/// Whether the Shoot controller runs its flows (`controllers.shoot.enabled`, default true).
pub fn enabled(config: &seedlet_config::GardenletConfiguration) -> bool {
    config
        .controllers
        .shoot
        .as_ref()
        .and_then(|s| s.enabled)
        .unwrap_or(true)
}

/// `controllers.shoot.syncPeriod`, or [`DEFAULT_SYNC_PERIOD`].
pub fn sync_period(config: &seedlet_config::GardenletConfiguration) -> Duration {
    config
        .controllers
        .shoot
        .as_ref()
        .and_then(|shoot| shoot.sync_period)
        .map_or(DEFAULT_SYNC_PERIOD, |period| period.as_std())
}

/// Whether `spec.seedName` and `status.seedName` are both set and differ (a migration).
pub fn is_migrating(shoot: &Shoot) -> bool {
    let status = shoot.status.as_ref().and_then(|s| s.seed_name.as_deref());
    matches!((shoot.spec.seed_name.as_deref(), status), (Some(a), Some(b)) if a != b)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn shoot(spec_seed: Option<&str>, status_seed: Option<&str>) -> Shoot {
        let mut value = json!({
            "metadata": {"name": "s", "namespace": "garden-dev"},
            "spec": {"provider": {"type": "local"}, "region": "r"},
        });
        if let Some(seed) = spec_seed {
            value["spec"]["seedName"] = json!(seed);
        }
        if let Some(seed) = status_seed {
            value["status"] = json!({"seedName": seed});
        }
        serde_json::from_value(value).expect("shoot")
    }

    #[test]
    fn a_shoot_migrates_only_when_both_seed_names_are_set_and_differ() {
        let cases = [
            (None, None, false),
            (Some("a"), None, false),
            (None, Some("a"), false),
            (Some("a"), Some("a"), false),
            (Some("b"), Some("a"), true),
        ];
        for (spec, status, expected) in cases {
            assert_eq!(
                is_migrating(&shoot(spec, status)),
                expected,
                "spec {spec:?}, status {status:?}"
            );
        }
    }

    #[test]
    fn the_flows_are_on_and_sync_hourly_unless_configured_otherwise() {
        let mut config = seedlet_config::GardenletConfiguration::default();
        assert!(enabled(&config));
        assert_eq!(sync_period(&config), DEFAULT_SYNC_PERIOD);
        config.controllers.shoot = Some(seedlet_config::gardenlet::ShootController {
            enabled: Some(false),
            sync_period: Some(seedlet_config::Duration::from_secs(60)),
            ..Default::default()
        });
        assert!(!enabled(&config));
        assert_eq!(sync_period(&config), Duration::from_secs(60));
    }
}

//! Effective settings and validation of the agent's backup controllers
//! (`controllers.backupBucket`, `controllers.backupEntry`), whose blocks gardenlet's schema types.

use crate::gardenlet::ignored::BackupEntryController;
use crate::validate::Checker;

/// Shoot purposes `deletionGracePeriodShootPurposes` may list.
pub const SHOOT_PURPOSES: [&str; 5] = [
    "evaluation",
    "testing",
    "development",
    "infrastructure",
    "production",
];

impl BackupEntryController {
    /// `deletionGracePeriodHours`, negative counting as 0.
    pub fn grace_period_hours(&self) -> u64 {
        self.deletion_grace_period_hours
            .map_or(0, |hours| u64::try_from(hours).unwrap_or(0))
    }

    /// `deletionGracePeriodShootPurposes` (empty when unset).
    pub fn grace_period_purposes(&self) -> &[String] {
        self.deletion_grace_period_shoot_purposes
            .as_deref()
            .unwrap_or_default()
    }
}

/// Validates `controllers.backupEntry`: known purposes, and purposes only with a grace period.
pub(crate) fn validate_backup_entry(checker: &mut Checker, entry: Option<&BackupEntryController>) {
    let Some(entry) = entry else {
        return;
    };
    for (index, purpose) in entry.grace_period_purposes().iter().enumerate() {
        if !SHOOT_PURPOSES.contains(&purpose.as_str()) {
            checker.report(
                format!("controllers.backupEntry.deletionGracePeriodShootPurposes[{index}]"),
                format!(
                    "unsupported value {purpose:?}, supported values: {}",
                    SHOOT_PURPOSES.join(", ")
                ),
            );
        }
    }
    if !entry.grace_period_purposes().is_empty() && entry.grace_period_hours() == 0 {
        checker.report(
            "controllers.backupEntry.deletionGracePeriodShootPurposes",
            "can only be set when deletionGracePeriodHours is greater than 0",
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn problems(entry: &BackupEntryController) -> Vec<String> {
        let mut checker = Checker::default();
        validate_backup_entry(&mut checker, Some(entry));
        checker
            .into_problems()
            .iter()
            .map(ToString::to_string)
            .collect()
    }

    #[test]
    fn purposes_need_known_values_and_a_grace_period() {
        let valid = BackupEntryController {
            concurrent_syncs: None,
            deletion_grace_period_hours: Some(24),
            deletion_grace_period_shoot_purposes: Some(vec!["production".into()]),
        };
        assert!(problems(&valid).is_empty());
        let unknown = BackupEntryController {
            deletion_grace_period_shoot_purposes: Some(vec!["prod".into()]),
            ..valid.clone()
        };
        assert_eq!(problems(&unknown).len(), 1);
        assert!(problems(&unknown)[0].contains("[0]"));
        let without_hours = BackupEntryController {
            deletion_grace_period_hours: Some(-3),
            ..valid
        };
        assert_eq!(without_hours.grace_period_hours(), 0);
        assert_eq!(problems(&without_hours).len(), 1);
    }
}

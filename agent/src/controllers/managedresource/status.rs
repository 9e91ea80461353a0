//! The ManagedResource status one reconcile leaves: conditions set step by step and the
//! resources/checksum/generation, written as one JSON merge patch on `/status` only when
//! something changed.

use jiff::Timestamp;
use kube::Api;
use kube::api::{Patch, PatchParams};
use serde_json::json;

use seedlet_api::conditions::{self, Condition, ConditionStatus};
use seedlet_api::names::{condition_types, reasons};
use seedlet_api::resources::{ManagedResource, ObjectReference};
use seedlet_runtime::retry::{self, RetryPolicy};

use super::error::Error;

/// Accumulates status changes and writes them as one JSON merge patch on `/status` when anything changed.
pub struct StatusWriter {
    original: Vec<Condition>,
    conditions: Vec<Condition>,
    written: Vec<Condition>,
    /// The applied set to record.
    pub resources: Option<Vec<ObjectReference>>,
    /// The manifests checksum to record.
    pub checksum: Option<String>,
    /// The generation to record as observed.
    pub observed_generation: Option<i64>,
    original_resources: Vec<ObjectReference>,
    original_checksum: Option<String>,
    original_generation: Option<i64>,
    now: Timestamp,
}

impl StatusWriter {
    /// Starts from the stored status of `mr`.
    pub fn new(mr: &ManagedResource, now: Timestamp) -> Self {
        let status = mr.status.clone().unwrap_or_default();
        Self {
            original: status.conditions.clone(),
            conditions: status.conditions.clone(),
            written: status.conditions,
            resources: None,
            checksum: None,
            observed_generation: None,
            original_resources: status.resources,
            original_checksum: status.secrets_data_checksum,
            original_generation: status.observed_generation,
            now,
        }
    }

    /// Sets one condition (transition time moves only when the status does).
    pub fn set(&mut self, type_: &str, status: ConditionStatus, reason: &str, message: &str) {
        conditions::set(
            &mut self.conditions,
            type_,
            status,
            reason,
            message,
            self.now,
        );
    }

    /// `ResourcesApplied=Progressing ApplyProgressing`, keeping a failure's reason and message.
    pub fn applying(&mut self) {
        let previous = conditions::find(&self.original, condition_types::RESOURCES_APPLIED);
        let keep = previous.filter(|c| {
            matches!(
                c.reason.as_str(),
                reasons::APPLY_FAILED | reasons::DELETION_FAILED | reasons::DELETION_PENDING
            )
        });
        let (reason, message) = match keep {
            Some(c) => (c.reason.clone(), c.message.clone()),
            None => (
                reasons::APPLY_PROGRESSING.to_owned(),
                "The resources are currently being applied.".to_owned(),
            ),
        };
        self.set(
            condition_types::RESOURCES_APPLIED,
            ConditionStatus::Progressing,
            &reason,
            &message,
        );
    }

    /// Writes what changed since the last write; returns whether it sent a patch.
    ///
    /// # Errors
    /// [`Error::WriteStatus`].
    pub async fn write(&mut self, api: &Api<ManagedResource>, key: &str) -> Result<bool, Error> {
        let mut patch = serde_json::Map::new();
        if self.conditions != self.written {
            patch.insert("conditions".into(), json!(self.conditions));
        }
        if let Some(resources) = &self.resources
            && *resources != self.original_resources
        {
            patch.insert("resources".into(), json!(resources));
        }
        if let Some(checksum) = &self.checksum
            && Some(checksum) != self.original_checksum.as_ref()
        {
            patch.insert("secretsDataChecksum".into(), json!(checksum));
        }
        if self.observed_generation.is_some()
            && self.observed_generation != self.original_generation
        {
            patch.insert("observedGeneration".into(), json!(self.observed_generation));
        }
        if patch.is_empty() {
            return Ok(false);
        }
        let name = key.rsplit_once('/').map_or(key, |(_, name)| name);
        let body = json!({"status": patch});
        let (params, patch) = (PatchParams::default(), Patch::Merge(&body));
        // The patch sets fixed values, so writing it twice is harmless.
        match retry::idempotent(&RetryPolicy::RECONCILE, || {
            api.patch_status(name, &params, &patch)
        })
        .await
        {
            Ok(_) => {}
            // The MR vanished (its finalizer was just removed elsewhere): nothing to report.
            Err(kube::Error::Api(status)) if status.is_not_found() => {}
            Err(source) => {
                return Err(Error::WriteStatus {
                    key: key.to_owned(),
                    source,
                });
            }
        }
        self.written = self.conditions.clone();
        if let Some(resources) = &self.resources {
            self.original_resources = resources.clone();
        }
        if self.checksum.is_some() {
            self.original_checksum = self.checksum.clone();
        }
        if self.observed_generation.is_some() {
            self.original_generation = self.observed_generation;
        }
        Ok(true)
    }
}

/// `True` for `true`, `False` otherwise.
pub fn bool_status(value: bool) -> ConditionStatus {
    if value {
        ConditionStatus::True
    } else {
        ConditionStatus::False
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn applying_keeps_failure_reason_and_message() {
        let now = Timestamp::from_second(1_700_000_000).unwrap();
        let mut mr = ManagedResource::new("x", Default::default());
        let failed = Condition::initialized(condition_types::RESOURCES_APPLIED, now).updated(
            ConditionStatus::False,
            reasons::APPLY_FAILED,
            "boom",
            now,
        );
        mr.status = Some(seedlet_api::resources::ManagedResourceStatus {
            conditions: vec![failed],
            ..Default::default()
        });
        let mut writer = StatusWriter::new(&mr, now);
        writer.applying();
        let applied =
            conditions::find(&writer.conditions, condition_types::RESOURCES_APPLIED).unwrap();
        assert_eq!(
            (
                applied.status.clone(),
                applied.reason.as_str(),
                applied.message.as_str()
            ),
            (ConditionStatus::Progressing, reasons::APPLY_FAILED, "boom")
        );

        let mut writer = StatusWriter::new(&ManagedResource::new("y", Default::default()), now);
        writer.applying();
        let applied =
            conditions::find(&writer.conditions, condition_types::RESOURCES_APPLIED).unwrap();
        assert_eq!(applied.reason, reasons::APPLY_PROGRESSING);
    }
}

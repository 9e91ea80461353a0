//! Shoot fields read and written by the garden's shoot lifecycle helpers: hibernation schedules
//! (`spec.hibernation.schedules[]`).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// `spec.hibernation.schedules[]`: cron expressions that hibernate (`start`) and wake up (`end`)
/// a shoot, evaluated in `location` (an IANA time zone, UTC when empty).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct HibernationSchedule {
    /// Cron expression (5 fields) of the times to hibernate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start: Option<String>,
    /// Cron expression (5 fields) of the times to wake up.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end: Option<String>,
    /// IANA time zone of both expressions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub location: Option<String>,
    /// Fields newer than these types, kept for round trips (see `core/shoot.rs`).
    #[serde(flatten)]
    #[schemars(skip)]
    pub extra: crate::common::Extra,
}

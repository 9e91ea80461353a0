//! The maintenance time window now lives in `seedlet_api::core::maintenance_window`, shared with
//! the agent's Shoot controller.

pub use seedlet_api::core::maintenance_window::*;

//! The `gardener` identity this agent writes into the garden (`Seed.status.gardener`, and the
//! Shoot controller's `status.gardener` and version checks): one value per process, shared by the
//! Seed status controller and the Shoot controller.

use seedlet_api::core::GardenerInfo;

/// The agent's `status.gardener`: id = a unique identity of this process (host name plus random
/// suffix, as for leader election), name `seedlet-agent`, version of this build. Computed once per
/// run so that it stays stable across reconciles.
pub fn gardener_info() -> GardenerInfo {
    GardenerInfo {
        id: seedlet_runtime::leader_election::default_identity(),
        name: crate::context::FIELD_MANAGER.to_owned(),
        version: env!("CARGO_PKG_VERSION").to_owned(),
    }
}

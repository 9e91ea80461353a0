//! The shoot a control-plane namespace belongs to, as its Cluster embeds it, and the namespace a
//! Shoot's control plane lives in (its stored technical ID): the Cluster controller, the Shoot
//! controllers, shoot care and the ShootState sync all read them, so they live beside those
//! controllers rather than in one controller's folder.

use seedlet_api::common::{LastOperation, LastOperationType};
use seedlet_api::core::Shoot;
use seedlet_api::extensions::Cluster;

/// The shoot a control-plane namespace belongs to, as its Cluster embeds it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ShootRef {
    /// Shoot (project) namespace in the garden = ShootState namespace.
    pub namespace: String,
    /// Shoot name = ShootState name.
    pub name: String,
    /// Whether the shoot is being deleted.
    pub deleting: bool,
    /// The shoot's last operation.
    pub last_operation: Option<LastOperation>,
}

impl ShootRef {
    /// The control-plane namespace (= Cluster name) and the shoot of a Cluster; `None` when the
    /// Cluster has no name or embeds no shoot name and namespace. Reads a Cluster of the shared
    /// informer too, whose `spec.shoot` is the embedded shoot's identity as JSON text
    /// ([`crate::cluster_view::identity_view`]).
    pub fn of_cluster(cluster: &Cluster) -> Option<(String, ShootRef)> {
        let name = cluster.metadata.name.clone()?;
        let identity;
        let shoot = match &cluster.spec.shoot {
            serde_json::Value::String(text) => {
                identity = serde_json::from_str::<serde_json::Value>(text).ok()?;
                &identity
            }
            shoot => shoot,
        };
        let metadata = shoot.get("metadata")?;
        let text = |value: Option<&serde_json::Value>| value?.as_str().map(str::to_owned);
        let last_operation = shoot
            .pointer("/status/lastOperation")
            .and_then(|value| serde_json::from_value(value.clone()).ok());
        Some((
            name,
            ShootRef {
                namespace: text(metadata.get("namespace"))?,
                name: text(metadata.get("name"))?,
                deleting: metadata.get("deletionTimestamp").is_some(),
                last_operation,
            },
        ))
    }

    /// Whether the shoot's last operation is a migration: its state must not shrink.
    pub fn migrating(&self) -> bool {
        self.last_operation
            .as_ref()
            .is_some_and(|operation| operation.type_ == LastOperationType::Migrate)
    }
}

/// The stored `status.technicalID`, if non-empty.
pub fn stored_technical_id(shoot: &Shoot) -> Option<&str> {
    shoot
        .status
        .as_ref()
        .and_then(|status| status.technical_id.as_deref())
        .filter(|id| !id.is_empty())
}

//! The Extension types a shoot needs: the Cluster sync labels the control-plane namespace with
//! them (spec §1.6) and the Shoot controller's reconcile flow deploys an Extension object for
//! each type a registration serves.

use std::collections::BTreeSet;

use seedlet_api::core::{ControllerRegistration, Shoot};

/// Kind of the extension resource whose registrations may auto-enable for shoots.
const EXTENSION_KIND: &str = "Extension";
/// Cluster type of shoots in `autoEnable`.
const CLUSTER_TYPE_SHOOT: &str = "shoot";

/// Extension types the shoot needs: registrations of kind `Extension` auto-enabled for shoots,
/// plus `spec.extensions[]`, minus those the shoot disables.
pub fn required_extension_types(
    shoot: &Shoot,
    registrations: &[impl AsRef<ControllerRegistration>],
) -> BTreeSet<String> {
    let mut types: BTreeSet<String> = registrations
        .iter()
        .flat_map(|registration| registration.as_ref().spec.resources.iter())
        .filter(|resource| {
            resource.kind == EXTENSION_KIND && resource.auto_enabled_for(CLUSTER_TYPE_SHOOT)
        })
        .map(|resource| resource.type_.clone())
        .collect();
    for extension in &shoot.spec.extensions {
        if extension.is_disabled() {
            types.remove(&extension.type_);
        } else {
            types.insert(extension.type_.clone());
        }
    }
    types
}

#[cfg(test)]
mod tests {
    use seedlet_api::core::ControllerRegistrationSpec;
    use serde_json::json;

    use super::*;

    fn registration(kind: &str, type_: &str, auto: bool) -> ControllerRegistration {
        let resource: seedlet_api::core::ControllerResource = serde_json::from_value(json!({
            "kind": kind, "type": type_,
            "autoEnable": if auto { json!(["shoot"]) } else { json!([]) }
        }))
        .unwrap();
        ControllerRegistration::new(
            type_,
            ControllerRegistrationSpec {
                resources: vec![resource],
                ..Default::default()
            },
        )
    }

    #[test]
    fn required_extension_types_add_auto_enabled_and_drop_disabled() {
        let shoot: Shoot = serde_json::from_value(json!({
            "metadata": {"name": "foo", "namespace": "garden-dev"},
            "spec": {"provider": {"type": "aws"}, "region": "eu", "seedName": "local",
                     "extensions": [{"type": "shoot-dns"}, {"type": "auto", "disabled": true}]},
        }))
        .unwrap();
        let registrations = vec![
            std::sync::Arc::new(registration("Extension", "auto", true)),
            std::sync::Arc::new(registration("Extension", "always", true)),
            std::sync::Arc::new(registration("Extension", "manual", false)),
            std::sync::Arc::new(registration("Network", "calico", true)),
        ];
        let types = required_extension_types(&shoot, &registrations);
        assert_eq!(
            types.into_iter().collect::<Vec<_>>(),
            ["always", "shoot-dns"]
        );
    }
}

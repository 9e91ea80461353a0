//! gardenlet's start-up step for Shoots (spec §1.8): an operation that was `Processing` when the
//! previous agent (or the previous leadership term) stopped was cut off mid-flow, so before the
//! controller starts its last operation is marked `Aborted`. `Aborted` is not `Succeeded`, so the
//! decision reconciles such a Shoot at once, and the garden's status label does not show a flow
//! as running that nobody runs.

use kube::api::{ListParams, Patch, PatchParams};
use kube::runtime::watcher;
use kube::{Api, ResourceExt};
use seedlet_api::common::LastOperationState;
use seedlet_api::core::Shoot;
use serde_json::json;

use super::decide;

/// Whether `shoot` is this seed's and its last operation is `Processing`.
pub fn interrupted(shoot: &Shoot, seed_name: &str) -> bool {
    decide::responsible_seed(shoot) == Some(seed_name)
        && shoot
            .last_operation()
            .is_some_and(|op| op.state == LastOperationState::Processing)
}

/// Marks the interrupted operations of this seed's Shoots `Aborted` (a status merge patch of
/// `lastOperation.state` only). Returns how many were marked; a Shoot that fails to patch is
/// logged and left to the flow, which starts it anew anyway.
///
/// # Errors
/// When the Shoots cannot be listed.
pub async fn abort_interrupted(
    garden: &kube::Client,
    scope: &watcher::Config,
    seed_name: &str,
) -> Result<usize, kube::Error> {
    let params = ListParams {
        label_selector: scope.label_selector.clone(),
        field_selector: scope.field_selector.clone(),
        ..ListParams::default()
    };
    let shoots = Api::<Shoot>::all(garden.clone()).list(&params).await?;
    let mut aborted = 0;
    for shoot in shoots.items.iter().filter(|s| interrupted(s, seed_name)) {
        let (Some(namespace), name) = (shoot.namespace(), shoot.name_any()) else {
            continue;
        };
        let api: Api<Shoot> = Api::namespaced(garden.clone(), &namespace);
        let patch = json!({"status": {"lastOperation": {"state": LastOperationState::Aborted}}});
        match api
            .patch_status(&name, &PatchParams::default(), &Patch::Merge(&patch))
            .await
        {
            Ok(_) => {
                aborted += 1;
                tracing::info!(shoot = %format!("{namespace}/{name}"), "interrupted operation marked Aborted");
            }
            Err(error) => tracing::warn!(
                shoot = %format!("{namespace}/{name}"),
                error = %seedlet_runtime::error_chain(&error),
                "could not mark the interrupted operation Aborted"
            ),
        }
    }
    Ok(aborted)
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;

    fn shoot(spec_seed: &str, status_seed: Option<&str>, state: Option<&str>) -> Shoot {
        let last: Value = state.map_or(Value::Null, |state| {
            json!({"type": "Reconcile", "state": state, "progress": 40, "description": "",
                "lastUpdateTime": "2025-01-06T11:00:00Z"})
        });
        serde_json::from_value(json!({
            "metadata": {"name": "s", "namespace": "garden-dev"},
            "spec": {"provider": {"type": "local"}, "region": "r", "seedName": spec_seed},
            "status": {"seedName": status_seed, "lastOperation": last},
        }))
        .expect("shoot")
    }

    #[test]
    fn only_this_seeds_processing_operations_are_interrupted() {
        let cases = [
            (shoot("local", None, Some("Processing")), true),
            (shoot("local", Some("local"), Some("Processing")), true),
            (shoot("local", None, Some("Succeeded")), false),
            (shoot("local", None, Some("Error")), false),
            (shoot("local", None, None), false),
            (shoot("other", None, Some("Processing")), false),
            // Migrating away: the source seed (status.seedName) is responsible.
            (shoot("other", Some("local"), Some("Processing")), true),
            (shoot("local", Some("other"), Some("Processing")), false),
        ];
        for (index, (shoot, want)) in cases.into_iter().enumerate() {
            assert_eq!(interrupted(&shoot, "local"), want, "case {index}");
        }
    }
}

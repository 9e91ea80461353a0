//! Shoot care on real clusters: once the Shoot carries `status.seedName`, an extension object's
//! health report reaches the Shoot's conditions in the garden through the agent's chart RBAC and
//! the seed authorizer. No extension controller renews a heartbeat Lease here, so the report
//! counts as outdated — the honest answer for a controller nobody sees running.

use std::time::{Duration, Instant};

use kube::Api;
use kube::api::{ApiResource, DynamicObject, Patch, PatchParams};
use seedlet_api::core::Shoot;
use serde_json::json;

use super::landscape::{CONVERGE, SeedCluster};

const PROJECT_NAMESPACE: &str = "garden-dev";

/// Makes Shoot `garden-dev/real` (control plane `technical_id` on `seed`) report through its
/// Extension `small` and waits for the conditions; returns how long that took.
pub async fn extension_report_reaches_the_shoot(
    garden: &kube::Client,
    seed: &SeedCluster,
    technical_id: &str,
) -> Duration {
    let started = Instant::now();
    let shoots: Api<Shoot> = Api::namespaced(garden.clone(), PROJECT_NAMESPACE);
    shoots
        .patch_status(
            "real",
            &PatchParams::default(),
            &Patch::Merge(json!({"status": {"seedName": seed.name}})),
        )
        .await
        .expect("shoot status.seedName");
    let resource = ApiResource::from_gvk_with_plural(
        &kube::api::GroupVersionKind::gvk("extensions.gardener.cloud", "v1alpha1", "Extension"),
        "extensions",
    );
    Api::<DynamicObject>::namespaced_with(seed.admin.clone(), technical_id, &resource)
        .patch_status(
            "small",
            &PatchParams::default(),
            &Patch::Merge(json!({"status": {"conditions": [{
                "type": "ControlPlaneHealthy", "status": "False", "reason": "Broken",
                "message": "the small extension is broken",
                "lastTransitionTime": "2026-01-01T00:00:00Z",
                "lastUpdateTime": "2026-01-01T00:00:00Z"}]}})),
        )
        .await
        .expect("extension health report");
    super::checks::wait_state(
        "the Shoot's care conditions from the extension's report",
        CONVERGE,
        &[&seed.agent],
        || async {
            let shoot = shoots.get("real").await.map_err(|e| e.to_string())?;
            let conditions = shoot.status.map(|s| s.conditions).unwrap_or_default();
            let seen: Vec<(String, String, String)> = conditions
                .iter()
                .map(|c| (c.type_.clone(), c.status.to_string(), c.reason.clone()))
                .collect();
            let expected = [
                ("APIServerAvailable", "Unknown", "ConditionCheckError"),
                (
                    "ControlPlaneHealthy",
                    "Unknown",
                    "ExtensionOutdatedHealthCheckReport",
                ),
            ];
            let found = expected.iter().all(|(type_, status, reason)| {
                seen.iter()
                    .any(|(t, s, r)| t == type_ && s == status && r == reason)
            });
            if found {
                Ok(())
            } else {
                Err(format!("{seen:?}"))
            }
        },
    )
    .await;
    started.elapsed()
}

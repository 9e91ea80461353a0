//! Keeps `Seed.status.clientCertificateExpirationTimestamp` in the garden equal to the NotAfter of the
//! certificate in use (merge patch on `/status`, the only field written).

use std::time::Duration;

use jiff::Timestamp;
use kube::Api;
use kube::api::{ApiResource, DynamicObject, Patch, PatchParams};
use serde_json::{Value, json};

use crate::garden_client::GardenClient;

/// Re-assert the status this often even without changes (safety net).
const RESYNC: Duration = Duration::from_secs(600);

/// The `core.gardener.cloud/v1beta1` Seed resource, cluster-scoped.
fn seed_resource() -> ApiResource {
    ApiResource {
        group: "core.gardener.cloud".into(),
        version: "v1beta1".into(),
        api_version: "core.gardener.cloud/v1beta1".into(),
        kind: "Seed".into(),
        plural: "seeds".into(),
    }
}

/// The status merge patch for a certificate ending at `not_after` (RFC 3339, whole seconds, UTC).
pub fn expiration_patch(not_after: Timestamp) -> Value {
    json!({"status": {"clientCertificateExpirationTimestamp": not_after.strftime("%Y-%m-%dT%H:%M:%SZ").to_string()}})
}

/// Patches the Seed status whenever the certificate expiry changes, retrying every `retry` while the Seed does
/// not exist yet (registration creates it after bootstrap) or the patch fails. Never returns.
pub async fn keep_seed_status_current(garden: GardenClient, seed_name: String, retry: Duration) {
    let mut expiry = garden.subscribe_expiry();
    loop {
        let current = *expiry.borrow_and_update();
        if let Some(not_after) = current {
            let mut failures = 0;
            loop {
                let api: Api<DynamicObject> = Api::all_with(garden.client(), &seed_resource());
                let patch = expiration_patch(not_after);
                match api
                    .patch_status(&seed_name, &PatchParams::default(), &Patch::Merge(&patch))
                    .await
                {
                    Ok(_) => {
                        tracing::debug!(seed = %seed_name, not_after = %not_after, "seed client certificate expiration updated");
                        break;
                    }
                    Err(error) => {
                        tracing::debug!(seed = %seed_name, error = %seedlet_runtime::error_chain(&error), "could not update seed client certificate expiration yet");
                    }
                }
                failures += 1;
                tokio::select! {
                    () = tokio::time::sleep(crate::rotation::retry_pause(retry, failures)) => {}
                    changed = expiry.changed() => if changed.is_err() { return },
                }
                if expiry.has_changed().unwrap_or(false) {
                    break;
                }
            }
        }
        tokio::select! {
            () = tokio::time::sleep(RESYNC) => {}
            changed = expiry.changed() => if changed.is_err() { return },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expiration_patch_writes_rfc3339_seconds() {
        let not_after: Timestamp = "2031-05-06T07:08:09Z".parse().unwrap();
        assert_eq!(
            expiration_patch(not_after),
            json!({"status": {"clientCertificateExpirationTimestamp": "2031-05-06T07:08:09Z"}})
        );
    }
}

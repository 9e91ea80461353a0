//! The demo's Shoot operations after the example Shoot is reconciled: the example Shoot
//! hibernates and wakes up (each a Reconcile the agent runs to Succeeded 100 % with
//! `status.hibernated` following, the simulated provider scaling the Worker to zero and back),
//! and a second Shoot `bye` is created, reconciled and deleted through the delete flow until it
//! is gone from the garden and its control-plane namespace from the seed.

use std::time::Duration;

use k8s_openapi::api::core::v1::Namespace;
use kube::Api;
use kube::api::{DeleteParams, Patch, PatchParams};
use seedlet_api::core::Shoot;
use seedlet_api::names::technical_id;
use serde_json::json;

use crate::Error;
use crate::progress::Progress;
use crate::shoot::{self, PROJECT, SHOOT, project_namespace};

/// The Shoot the demo creates only to delete it.
const SHORT_LIVED: &str = "bye";
/// How often the waits read the Shoot.
const POLL: Duration = Duration::from_millis(100);

/// Runs the operations as progress steps.
///
/// # Errors
/// The first step that failed or timed out.
pub async fn run(
    garden: &kube::Client,
    seed: &kube::Client,
    seed_name: &str,
    progress: &mut Progress,
    timeout: Duration,
) -> Result<(), Error> {
    progress
        .step(
            &format!("agent hibernates Shoot {SHOOT} and wakes it up"),
            async {
                hibernate_and_wake(garden, timeout)
                    .await
                    .map(|detail| ((), detail))
            },
        )
        .await?;
    progress
        .step(
            &format!("Shoot {SHORT_LIVED}: created, reconciled, deleted by the delete flow"),
            async {
                create_and_delete(garden, seed, seed_name, timeout)
                    .await
                    .map(|detail| ((), detail))
            },
        )
        .await
}

/// `type state progress` of the Shoot's last operation and `status.hibernated`.
fn operation(shoot: &Shoot) -> (String, bool) {
    let operation = shoot.last_operation().map_or_else(String::new, |op| {
        format!("{:?} {:?} {} %", op.type_, op.state, op.progress)
    });
    let hibernated = shoot
        .status
        .as_ref()
        .and_then(|s| s.hibernated)
        .unwrap_or(false);
    (operation, hibernated)
}

/// Waits until Shoot `name` has a Succeeded 100 % operation for its current generation with
/// `status.hibernated` equal to `hibernated`; returns the operation.
async fn settled(
    shoots: &Api<Shoot>,
    name: &str,
    hibernated: bool,
    timeout: Duration,
) -> Result<String, Error> {
    let deadline = tokio::time::Instant::now() + timeout;
    let mut last = String::from("not read yet");
    loop {
        if let Ok(Some(shoot)) = shoots.get_opt(name).await {
            let observed = shoot.status.as_ref().and_then(|s| s.observed_generation);
            let (operation, now_hibernated) = operation(&shoot);
            if observed == shoot.metadata.generation
                && operation.contains("Succeeded 100")
                && now_hibernated == hibernated
            {
                return Ok(operation);
            }
            last = format!("{operation}, hibernated {now_hibernated}");
        }
        if tokio::time::Instant::now() >= deadline {
            return Err(Error::timeout(
                format!("Shoot {name} settled with hibernated {hibernated}"),
                timeout,
                last,
            ));
        }
        tokio::time::sleep(POLL).await;
    }
}

async fn hibernate_and_wake(garden: &kube::Client, timeout: Duration) -> Result<String, Error> {
    let shoots: Api<Shoot> = Api::namespaced(garden.clone(), &project_namespace());
    let mut seen = Vec::new();
    for enabled in [true, false] {
        let patch = json!({"spec": {"hibernation": {"enabled": enabled}}});
        shoots
            .patch(SHOOT, &PatchParams::default(), &Patch::Merge(&patch))
            .await
            .map_err(|source| Error::Prepare {
                step: format!("set spec.hibernation.enabled={enabled} on Shoot {SHOOT}"),
                source,
            })?;
        let operation = settled(&shoots, SHOOT, enabled, timeout).await?;
        seen.push(format!("hibernated {enabled} ({operation})"));
    }
    Ok(seen.join(" → "))
}

async fn create_and_delete(
    garden: &kube::Client,
    seed: &kube::Client,
    seed_name: &str,
    timeout: Duration,
) -> Result<String, Error> {
    let namespace = project_namespace();
    let shoots: Api<Shoot> = Api::namespaced(garden.clone(), &namespace);
    let mut object = shoot::shoot(seed_name);
    object["metadata"]["name"] = json!(SHORT_LIVED);
    if let Some(spec) = object["spec"].as_object_mut() {
        spec.remove("hibernation");
    }
    let refused = |what: String| move |source| Error::Prepare { step: what, source };
    shoots
        .patch(
            SHORT_LIVED,
            &PatchParams::apply("seedlet-sandbox"),
            &Patch::Apply(&object),
        )
        .await
        .map_err(refused(format!("apply Shoot {namespace}/{SHORT_LIVED}")))?;
    let created = settled(&shoots, SHORT_LIVED, false, timeout).await?;
    shoots
        .delete(SHORT_LIVED, &DeleteParams::default())
        .await
        .map_err(refused(format!("delete Shoot {namespace}/{SHORT_LIVED}")))?;
    let control_plane = technical_id::compute(None, PROJECT, SHORT_LIVED);
    let namespaces: Api<Namespace> = Api::all(seed.clone());
    let deadline = tokio::time::Instant::now() + timeout;
    let mut deleting = Vec::new();
    loop {
        let shoot = shoots.get_opt(SHORT_LIVED).await.ok().flatten();
        if let Some(shoot) = &shoot {
            let (operation, _) = operation(shoot);
            if !operation.is_empty() && deleting.last() != Some(&operation) {
                deleting.push(operation);
            }
        }
        let namespace_left = namespaces.get_opt(&control_plane).await.ok().flatten();
        if shoot.is_none() && namespace_left.is_none() {
            return Ok(format!(
                "{created}; deleted: {} → gone",
                deleting
                    .iter()
                    .filter(|op| op.starts_with("Delete"))
                    .cloned()
                    .collect::<Vec<_>>()
                    .join(" → ")
            ));
        }
        if tokio::time::Instant::now() >= deadline {
            return Err(Error::timeout(
                format!("Shoot {SHORT_LIVED} and namespace {control_plane} gone"),
                timeout,
                deleting.last().cloned().unwrap_or_default(),
            ));
        }
        tokio::time::sleep(POLL).await;
    }
}

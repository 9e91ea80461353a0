//! The demo's stand-in for the example extension's Bastion controller (provider `local`), beside
//! [`crate::backup_provider`] and for the same reason: the sandboxes run no pods. A real provider
//! creates a VM with the user data the agent rendered and opens its firewall to the Bastion's
//! ingress ranges; here there is no VM, and the bastion's address is the loopback address the
//! sandbox serves on. On the same triggers as the backup controller (operation annotation, no
//! `lastOperation` yet, a new generation) it removes the annotation and reports `lastOperation`
//! Succeeded with `status.ingress.ip` — what the agent needs to set `BastionReady`. Deletion needs
//! nothing: it adds no finalizer.

use std::sync::Arc;

use kube::api::{Patch, PatchParams};
use kube::runtime::controller::Action;
use kube::{Api, ResourceExt};
use seedlet_api::common::LastOperationType;
use seedlet_api::extensions;
use seedlet_api::names::annotations;
use seedlet_runtime::watch::{RunWith, Runner};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use crate::backup_provider::{Ctx, Error, Step, api_error, decide};

/// Controller name (logs).
pub const NAME: &str = "example-bastion-local";
/// The address the demo's bastions report (the sandbox serves on loopback only).
pub const INGRESS_IP: &str = "127.0.0.1";

/// Runs the controller until `stop` is cancelled.
pub async fn run(seed: kube::Client, stop: CancellationToken) {
    let ctx = Arc::new(Ctx { seed: seed.clone() });
    seedlet_runtime::watch::controller(
        Api::<extensions::Bastion>::all(seed),
        kube::runtime::watcher::Config::default(),
    )
    .run_with(Runner::new(NAME, stop), reconcile, error_policy, ctx)
    .await;
}

/// Retries a failed reconcile after 2 s (a lost write race at once).
pub fn error_policy(bastion: Arc<extensions::Bastion>, error: &Error, _ctx: Arc<Ctx>) -> Action {
    let name = bastion.name_any();
    if let Some(action) = seedlet_runtime::status::conflict_requeue(&name, error) {
        return action;
    }
    tracing::warn!(controller = NAME, object = %name, error = %seedlet_runtime::error_chain(error), "reconcile failed");
    Action::requeue(std::time::Duration::from_secs(2))
}

/// Reports one extension Bastion reconciled.
///
/// # Errors
/// [`Error::Api`] naming the failing write.
pub async fn reconcile(bastion: Arc<extensions::Bastion>, ctx: Arc<Ctx>) -> Result<Action, Error> {
    let type_ = match decide(bastion.as_ref()) {
        Step::Ignore | Step::Delete => return Ok(Action::await_change()),
        Step::Operate(type_) => type_,
    };
    let name = bastion.name_any();
    let namespace = bastion.namespace().unwrap_or_default();
    let api: Api<extensions::Bastion> = Api::namespaced(ctx.seed.clone(), &namespace);
    let unannotate = json!({"metadata": {"annotations": {annotations::OPERATION: null}}});
    api.patch(&name, &PatchParams::default(), &Patch::Merge(&unannotate))
        .await
        .map_err(api_error(
            bastion.as_ref(),
            "remove the operation annotation",
        ))?;
    let status = status_patch(
        &name,
        bastion.metadata.generation,
        type_,
        jiff::Timestamp::now(),
    );
    api.patch_status(
        &name,
        &PatchParams::default(),
        &Patch::Merge(&json!({ "status": status })),
    )
    .await
    .map_err(api_error(bastion.as_ref(), "report the status"))?;
    Ok(Action::await_change())
}

/// The status of a reconciled bastion: `lastOperation` Succeeded and its ingress address.
pub fn status_patch(
    name: &str,
    generation: Option<i64>,
    type_: LastOperationType,
    now: jiff::Timestamp,
) -> Value {
    json!({
        "lastOperation": {"type": type_, "state": "Succeeded", "progress": 100,
                          "description": format!("Bastion {name} reconciled by the example extension (no VM: the sandbox runs no machines)."),
                          "lastUpdateTime": now.to_string()},
        "lastError": null,
        "observedGeneration": generation,
        "ingress": {"ip": INGRESS_IP},
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_reports_success_with_the_loopback_ingress() {
        let now: jiff::Timestamp = "2026-11-25T22:00:00Z".parse().expect("time");
        let status = status_patch("b", Some(2), LastOperationType::Create, now);
        assert_eq!(status["lastOperation"]["state"], "Succeeded");
        assert_eq!(status["lastOperation"]["type"], "Create");
        assert_eq!(status["observedGeneration"], 2);
        assert_eq!(status["ingress"]["ip"], INGRESS_IP);
    }
}

//! The built-in controllers kube-controller-manager would run: garbage collection, namespace and CRD
//! cleanup, the CSR signer and (optionally) workload status simulation. They run in one task that
//! wakes on every store change and at least every half second.

mod cleanup;
mod gc;
mod signer;
mod workloads;

use std::sync::Arc;
use std::time::Duration;

use crate::authn::UserInfo;
use crate::handlers::Api;
use crate::ops::Writer;

/// Longest time between two controller passes.
const RESYNC: Duration = Duration::from_millis(500);
/// Pause after a change before a pass, so bursts of writes are handled together.
const SETTLE: Duration = Duration::from_millis(20);

/// Runs all controllers until the API shuts down.
pub async fn run(api: Arc<Api>, simulate_workloads: bool) {
    let user = UserInfo {
        username: "system:kube-controller-manager".into(),
        groups: vec!["system:authenticated".into()],
        ..UserInfo::default()
    };
    loop {
        tokio::select! {
            _ = api.store.changed() => tokio::time::sleep(SETTLE).await,
            _ = tokio::time::sleep(RESYNC) => {}
            _ = api.shutdown.cancelled() => return,
        }
        let writer = Writer {
            manager: "kube-controller-manager",
            user: &user,
        };
        let mut changed = false;
        {
            let mut state = api.store.lock();
            changed |= gc::pass(&mut state, &writer);
            changed |= cleanup::namespaces(&mut state, &writer);
            changed |= cleanup::custom_resource_definitions(&mut state, &writer);
            changed |= signer::pass(&mut state, &api.ca, &writer);
            if simulate_workloads {
                changed |= workloads::pass(&mut state, &writer);
            }
        }
        if changed {
            api.store.notify_changed();
        }
    }
}

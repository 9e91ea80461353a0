//! Force deletion (spec §5.5): a deleting Shoot annotated
//! `confirmation.gardener.cloud/force-deletion` (truthy) skips the ordered delete flow. The
//! extensions see the annotation in the Cluster and release their objects without cleaning up
//! the provider; the flow deletes every extension object of the control-plane namespace at once
//! and waits (5 s, 5 min), destroys the DNSRecords, deletes the control-plane chart's
//! ManagedResource and the Cluster, then the namespace and the ShootState. Machine objects and
//! etcd, which gardenlet also force-deletes, do not exist on a seedlet seed.

use std::sync::Arc;
use std::time::Duration;

use futures::FutureExt;
use seedlet_api::core::Shoot;
use seedlet_api::extensions::{
    ContainerRuntime, ControlPlane, Extension, ExtensionObject, Infrastructure, Network,
    OperatingSystemConfig, Worker,
};
use seedlet_api::names::annotations;
use seedlet_runtime::flow::Flow;

use super::delete_flow::{self, DEFAULT_RETRY_FORCE, clients, destroy, names, wait_gone};
use super::flow::task;
use super::tasks::{FlowCtx, TaskError};
use crate::extension_sync::wait::WaitTiming;
use crate::shoot_teardown;

/// The flow's name (progress, errors).
pub const FLOW_NAME: &str = "Shoot cluster force deletion";
/// Waiting for the extension objects: every 5 s for at most 5 min; an error an extension reports
/// does not end it early.
pub const WAIT: WaitTiming = WaitTiming::new(
    Duration::from_secs(5),
    Duration::from_secs(300),
    Duration::from_secs(300),
);

/// Task IDs of the force-delete flow.
pub mod ids {
    /// Every extension object.
    pub const EXTENSIONS: &str = "Deleting extension resources";
    /// Their wait.
    pub const EXTENSIONS_WAIT: &str = "Waiting until extension resources have been deleted";
    /// The control-plane chart's ManagedResource.
    pub const MANAGED_RESOURCES: &str = "Deleting managed resources";
    /// The Cluster.
    pub const CLUSTER: &str = "Deleting Cluster resource";
    /// The control-plane namespace.
    pub const NAMESPACE: &str = "Deleting shoot namespace";
    /// Its wait.
    pub const NAMESPACE_WAIT: &str = "Waiting until shoot namespace has been deleted";
    /// The garden ShootState.
    pub const SHOOT_STATE: &str = "Deleting Shoot State";
}

/// Whether the shoot asks for force deletion.
pub fn requested(shoot: &Shoot) -> bool {
    shoot
        .metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get(annotations::CONFIRMATION_FORCE_DELETION))
        .is_some_and(|value| seedlet_api::names::parses_as_true(Some(value)))
}

async fn each_kind<K>(ctx: &FlowCtx, wait: bool) -> Result<(), TaskError>
where
    K: ExtensionObject + kube::Resource<Scope = k8s_openapi::NamespaceResourceScope>,
{
    for name in names::<K>(ctx).await? {
        if wait {
            wait_gone::<K>(ctx, &name, WAIT).await?;
        } else {
            destroy::<K>(ctx, &name).await?;
        }
    }
    Ok(())
}

/// Deletes (`wait` false) or waits for (`wait` true) every extension object of the namespace.
async fn all_kinds(ctx: Arc<FlowCtx>, wait: bool) -> Result<(), TaskError> {
    let ctx = ctx.as_ref();
    let results = futures::future::join_all([
        each_kind::<ContainerRuntime>(ctx, wait).boxed(),
        each_kind::<ControlPlane>(ctx, wait).boxed(),
        each_kind::<Extension>(ctx, wait).boxed(),
        each_kind::<Infrastructure>(ctx, wait).boxed(),
        each_kind::<Network>(ctx, wait).boxed(),
        each_kind::<OperatingSystemConfig>(ctx, wait).boxed(),
        each_kind::<Worker>(ctx, wait).boxed(),
    ])
    .await;
    results.into_iter().collect()
}

fn plain(error: &shoot_teardown::Error) -> TaskError {
    TaskError::plain(seedlet_runtime::error_chain(error))
}

/// Builds the force-delete flow; the DNSRecords are destroyed only while the namespace lives.
pub fn flow(ctx: &Arc<FlowCtx>, namespace_alive: bool) -> Flow<TaskError> {
    let mut flow = Flow::new(FLOW_NAME);
    let extensions = flow
        .add(task(ids::EXTENSIONS, ctx, |ctx| all_kinds(ctx, false)).retry(DEFAULT_RETRY_FORCE));
    let extensions_gone =
        flow.add(task(ids::EXTENSIONS_WAIT, ctx, |ctx| all_kinds(ctx, true)).after(&[extensions]));
    let mut records = Vec::new();
    for (name, suffix) in [
        (delete_flow::ids::DNS_INGRESS, "ingress"),
        (delete_flow::ids::DNS_EXTERNAL, "external"),
        (delete_flow::ids::DNS_INTERNAL, "internal"),
    ] {
        records.push(delete_flow::destroy_dns_record(
            &mut flow,
            ctx,
            name,
            suffix,
            (&[], !namespace_alive),
        ));
    }
    let managed = flow.add(
        task(ids::MANAGED_RESOURCES, ctx, |ctx| async move {
            super::control_plane::destroy(&ctx, WAIT).await
        })
        .after(&[extensions_gone])
        .retry(DEFAULT_RETRY_FORCE),
    );
    let mut before_cluster = records;
    before_cluster.extend([extensions_gone, managed]);
    let cluster = flow.add(
        task(ids::CLUSTER, ctx, |ctx| async move {
            shoot_teardown::delete_cluster(clients(&ctx), &ctx.namespace)
                .await
                .map_err(|error| plain(&error))
        })
        .after(&before_cluster)
        .retry(DEFAULT_RETRY_FORCE),
    );
    let namespace = flow.add(
        task(ids::NAMESPACE, ctx, |ctx| async move {
            shoot_teardown::delete_namespace(clients(&ctx), &ctx.namespace)
                .await
                .map(|_| ())
                .map_err(|error| plain(&error))
        })
        .after(&[cluster])
        .retry(DEFAULT_RETRY_FORCE),
    );
    flow.add(
        task(ids::NAMESPACE_WAIT, ctx, |ctx| async move {
            delete_flow::wait_namespace_gone(&ctx).await
        })
        .after(&[namespace]),
    );
    flow.add(
        task(ids::SHOOT_STATE, ctx, |ctx| async move {
            delete_flow::delete_shoot_state(&ctx).await
        })
        .after(&[namespace]),
    );
    flow
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn force_deletion_needs_a_truthy_annotation() {
        let cases = [
            (Some("true"), true),
            (Some("True"), true),
            (Some("1"), true),
            (Some("false"), false),
            (Some("yes"), false),
            (Some(""), false),
            (None, false),
        ];
        for (value, want) in cases {
            let mut shoot: Shoot = serde_json::from_value(json!({
                "metadata": {"name": "s", "namespace": "garden-dev"},
                "spec": {"region": "local", "provider": {"type": "local"}},
            }))
            .expect("shoot");
            if let Some(value) = value {
                shoot.metadata.annotations = Some(
                    [(
                        annotations::CONFIRMATION_FORCE_DELETION.to_owned(),
                        value.to_owned(),
                    )]
                    .into(),
                );
            }
            assert_eq!(requested(&shoot), want, "{value:?}");
        }
    }
}

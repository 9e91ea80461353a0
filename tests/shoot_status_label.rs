//! End-to-end `shoot-statuslabel`: the controller labels Shoots in a sandbox garden with the
//! health computed from their status and repairs a label a user changed.

use seedlet_testkit::shoot_lifecycle;

use std::sync::Arc;

use jiff::Timestamp;
use kube::ResourceExt;
use kube::api::{Patch, PatchParams};
use seedlet_garden::controllers::entry::run_alone;
use seedlet_garden::controllers::shoot_status_label;

use shoot_lifecycle::{create_shoot, last_operation, patch_status, shoots, wait_shoot};
use tokio_util::sync::CancellationToken;

fn label_is(value: &'static str) -> impl Fn(&seedlet_api::core::Shoot) -> Option<()> {
    move |shoot| {
        (shoot
            .labels()
            .get("shoot.gardener.cloud/status")
            .map(String::as_str)
            == Some(value))
        .then_some(())
    }
}

fn condition(type_: &str, status: &str) -> serde_json::Value {
    serde_json::json!({
        "type": type_, "status": status, "reason": "R", "message": "",
        "lastTransitionTime": "2025-01-01T00:00:00Z", "lastUpdateTime": "2025-01-01T00:00:00Z",
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn status_label_follows_last_operation_errors_and_conditions() {
    let garden = shoot_lifecycle::garden().await;
    let client = garden.client();
    let stop = CancellationToken::new();
    let ctx = Arc::new(shoot_status_label::StatusLabel {
        client: client.clone(),
        concurrency: 2,
    });
    let controller = tokio::spawn(run_alone(ctx, client.clone(), stop.clone()));

    create_shoot(&client, "dev", serde_json::json!({})).await;
    wait_shoot(
        &client,
        "dev",
        "healthy without status",
        label_is("healthy"),
    )
    .await;

    let now = Timestamp::now();
    patch_status(
        &client,
        "dev",
        serde_json::json!({
            "lastOperation": last_operation("Reconcile", "Processing", now),
            "conditions": [condition("APIServerAvailable", "True"), condition("EveryNodeReady", "Progressing")],
        }),
    )
    .await;
    wait_shoot(&client, "dev", "progressing", label_is("progressing")).await;

    patch_status(
        &client,
        "dev",
        serde_json::json!({"lastOperation": last_operation("Reconcile", "Failed", now)}),
    )
    .await;
    wait_shoot(&client, "dev", "unhealthy", label_is("unhealthy")).await;

    // A user's edit of the label is undone.
    shoots(&client)
        .patch(
            "dev",
            &PatchParams::default(),
            &Patch::Merge(&serde_json::json!({"metadata": {"labels": {"shoot.gardener.cloud/status": "healthy"}}})),
        )
        .await
        .expect("patch label");
    wait_shoot(&client, "dev", "unhealthy again", label_is("unhealthy")).await;

    patch_status(
        &client,
        "dev",
        serde_json::json!({
            "lastOperation": last_operation("Reconcile", "Succeeded", now),
            "conditions": [condition("APIServerAvailable", "True"), condition("EveryNodeReady", "True")],
        }),
    )
    .await;
    wait_shoot(&client, "dev", "healthy again", label_is("healthy")).await;

    // kubectl shows the label in the Status column (server-side printing of the CRD's columns).
    let mut request =
        kube::core::Request::new("/apis/core.gardener.cloud/v1beta1/namespaces/garden-dev/shoots")
            .list(&Default::default())
            .expect("request");
    request.headers_mut().insert(
        "accept",
        "application/json;as=Table;v=v1;g=meta.k8s.io"
            .parse()
            .expect("header"),
    );
    let table: serde_json::Value = client.request(request).await.expect("table");
    let columns: Vec<&str> = table["columnDefinitions"]
        .as_array()
        .expect("columns")
        .iter()
        .filter_map(|c| c["name"].as_str())
        .collect();
    let status = columns
        .iter()
        .position(|c| *c == "Status")
        .expect("Status column");
    assert_eq!(table["rows"][0]["cells"][status], "healthy", "{columns:?}");

    stop.cancel();
    controller.await.expect("controller stops");
    garden.shutdown().await;
}

//! The event recorder against a sandbox API server: Events are created in the object's namespace
//! (cluster-scoped objects in `default`), repeats raise `count`, and a deleted Event is re-created.

use std::sync::Arc;

use jiff::{SignedDuration, Timestamp};
use k8s_openapi::api::core::v1::{ConfigMap, Event, Namespace};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::Api;
use kube::api::{DeleteParams, ListParams, PostParams};
use seedlet_runtime::clock::FakeClock;
use seedlet_runtime::events::{EventType, Recorder};
use seedlet_sandbox::Sandbox;

async fn events_in(client: &kube::Client, namespace: &str) -> Vec<Event> {
    Api::<Event>::namespaced(client.clone(), namespace)
        .list(&ListParams::default())
        .await
        .expect("list events")
        .items
}

#[tokio::test]
async fn events_are_recorded_deduplicated_and_recreated_after_deletion() {
    let sandbox = Sandbox::builder().start().await.expect("sandbox");
    let client = sandbox.client();
    let namespace = Namespace {
        metadata: ObjectMeta {
            name: Some("garden-dev".into()),
            ..ObjectMeta::default()
        },
        ..Namespace::default()
    };
    let namespaces: Api<Namespace> = Api::all(client.clone());
    let namespace = namespaces
        .create(&PostParams::default(), &namespace)
        .await
        .expect("namespace");
    let configs: Api<ConfigMap> = Api::namespaced(client.clone(), "garden-dev");
    let config = ConfigMap {
        metadata: ObjectMeta {
            name: Some("settings".into()),
            ..ObjectMeta::default()
        },
        ..ConfigMap::default()
    };
    let config = configs
        .create(&PostParams::default(), &config)
        .await
        .expect("configmap");

    let clock = Arc::new(FakeClock::new(
        Timestamp::from_second(1_800_000_000).unwrap(),
    ));
    let recorder = Recorder::new(client.clone(), "seedlet-test").with_clock(clock.clone());

    recorder
        .publish(
            &config,
            EventType::Normal,
            "Reconciled",
            "Reconcile",
            "all good",
        )
        .await;
    clock.advance(SignedDuration::from_secs(3));
    recorder
        .publish(
            &config,
            EventType::Normal,
            "Reconciled",
            "Reconcile",
            "all good",
        )
        .await;
    let events = events_in(&client, "garden-dev").await;
    assert_eq!(events.len(), 1, "{events:?}");
    let event = &events[0];
    assert_eq!(event.count, Some(2));
    assert_eq!(event.reason.as_deref(), Some("Reconciled"));
    assert_eq!(event.type_.as_deref(), Some("Normal"));
    assert_eq!(event.action.as_deref(), Some("Reconcile"));
    assert_eq!(event.involved_object.kind.as_deref(), Some("ConfigMap"));
    assert_eq!(event.involved_object.name.as_deref(), Some("settings"));
    assert_eq!(
        event.source.as_ref().and_then(|s| s.component.as_deref()),
        Some("seedlet-test")
    );
    let first = event.first_timestamp.clone().unwrap().0;
    let last = event.last_timestamp.clone().unwrap().0;
    assert_eq!(last.duration_since(first), SignedDuration::from_secs(3));

    // A cluster-scoped object's Event goes to `default`.
    recorder
        .publish(
            &namespace,
            EventType::Warning,
            "Stuck",
            "Reconcile",
            "waiting",
        )
        .await;
    let events = events_in(&client, "default").await;
    assert_eq!(events.len(), 1, "{events:?}");
    assert_eq!(events[0].type_.as_deref(), Some("Warning"));

    // Deleting the aggregated Event makes the next repeat create a fresh one that keeps counting.
    let name = events_in(&client, "garden-dev").await[0]
        .metadata
        .name
        .clone()
        .unwrap();
    Api::<Event>::namespaced(client.clone(), "garden-dev")
        .delete(&name, &DeleteParams::default())
        .await
        .expect("delete event");
    clock.advance(SignedDuration::from_secs(1));
    recorder
        .publish(
            &config,
            EventType::Normal,
            "Reconciled",
            "Reconcile",
            "all good",
        )
        .await;
    let events = events_in(&client, "garden-dev").await;
    assert_eq!(events.len(), 1, "{events:?}");
    assert_eq!(events[0].count, Some(3));
    assert_ne!(events[0].metadata.name.as_deref(), Some(name.as_str()));
}

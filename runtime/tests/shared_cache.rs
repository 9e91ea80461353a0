//! Shared informers against a sandbox API server: subscribers of one kind and scope share one
//! watch and one store, a late subscriber starts from the whole store, deletions carry the last
//! state, a subscriber that falls behind is resynced, and the subscriptions end with the caches.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use futures::{Stream, StreamExt};
use k8s_openapi::api::core::v1::ConfigMap;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::api::{DeleteParams, Patch, PatchParams, PostParams};
use kube::runtime::watcher::{self, Event};
use kube::{Api, ResourceExt};
use seedlet_runtime::cache::{BUFFER, SharedCaches, View};
use seedlet_sandbox::Sandbox;
use seedlet_sandbox::setup::observed_client;
use serde_json::json;
use tokio_util::sync::CancellationToken;

/// A client that counts the watch requests it sends.
fn counting(client: kube::Client) -> (kube::Client, Arc<AtomicUsize>) {
    let watches = Arc::new(AtomicUsize::new(0));
    let counted = watches.clone();
    let client = observed_client(
        client,
        Arc::new(move |request| {
            if request
                .uri()
                .query()
                .is_some_and(|query| query.contains("watch=true"))
            {
                counted.fetch_add(1, Ordering::SeqCst);
            }
            Box::pin(async {})
        }),
    );
    (client, watches)
}

fn config_map(name: &str, value: &str) -> ConfigMap {
    ConfigMap {
        metadata: ObjectMeta {
            name: Some(name.into()),
            labels: Some(BTreeMap::from([("app".into(), "a".into())])),
            ..ObjectMeta::default()
        },
        data: Some(BTreeMap::from([("v".to_owned(), value.to_owned())])),
        ..ConfigMap::default()
    }
}

/// What a watcher event says, for comparisons: the event and the object's name and value.
fn describe(event: &Event<ConfigMap>) -> String {
    let object = |map: &ConfigMap| {
        format!(
            "{}={}",
            map.name_any(),
            map.data
                .as_ref()
                .and_then(|data| data.get("v"))
                .map_or("", String::as_str)
        )
    };
    match event {
        Event::Init => "Init".into(),
        Event::InitApply(map) => format!("InitApply {}", object(map)),
        Event::InitDone => "InitDone".into(),
        Event::Apply(map) => format!("Apply {}", object(map)),
        Event::Delete(map) => format!("Delete {}", object(map)),
    }
}

async fn next_events<S>(events: &mut S, count: usize) -> Vec<String>
where
    S: Stream<Item = Result<Event<ConfigMap>, watcher::Error>> + Unpin,
{
    let mut seen = Vec::new();
    while seen.len() < count {
        let event = tokio::time::timeout(Duration::from_secs(10), events.next())
            .await
            .unwrap_or_else(|_| panic!("no event within 10 s after {seen:?}"))
            .expect("subscription open")
            .expect("subscriptions yield no errors");
        seen.push(describe(&event));
    }
    seen
}

/// Sorts the objects of an initial list (the store's order is a hash map's).
fn sorted_list(mut events: Vec<String>) -> Vec<String> {
    let last = events.len() - 1;
    events[1..last].sort();
    events
}

#[tokio::test]
async fn subscribers_of_one_kind_share_one_watch_and_one_store() {
    let sandbox = Sandbox::builder().start().await.expect("sandbox");
    let (client, watches) = counting(sandbox.client());
    let maps: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    maps.create(&PostParams::default(), &config_map("a", "1"))
        .await
        .expect("create a");
    let stop = CancellationToken::new();
    let caches = SharedCaches::new(client.clone(), &stop);
    let scope = watcher::Config::default().labels("app=a");
    let informer = caches.informer(maps.clone(), &scope, View::slim());
    let again = caches.informer(maps.clone(), &scope, View::slim());
    assert!(
        Arc::ptr_eq(&informer, &again),
        "same kind and scope, same informer"
    );
    let other_scope = caches.informer(
        maps.clone(),
        &watcher::Config::default().labels("app=b"),
        View::slim(),
    );
    assert!(
        !Arc::ptr_eq(&informer, &other_scope),
        "another selector, another informer"
    );
    drop(other_scope);

    let mut first = std::pin::pin!(informer.events());
    let mut second = std::pin::pin!(again.events());
    let listed = ["Init", "InitApply a=1", "InitDone"];
    assert_eq!(next_events(&mut first, 3).await, listed);
    assert_eq!(next_events(&mut second, 3).await, listed);

    maps.patch(
        "a",
        &PatchParams::default(),
        &Patch::Merge(json!({"data": {"v": "2"}})),
    )
    .await
    .expect("patch a");
    assert_eq!(next_events(&mut first, 1).await, ["Apply a=2"]);
    assert_eq!(next_events(&mut second, 1).await, ["Apply a=2"]);

    // A subscriber joining now starts from the whole store.
    maps.create(&PostParams::default(), &config_map("b", "1"))
        .await
        .expect("create b");
    assert_eq!(next_events(&mut first, 1).await, ["Apply b=1"]);
    assert_eq!(next_events(&mut second, 1).await, ["Apply b=1"]);
    let mut late = std::pin::pin!(informer.events());
    assert_eq!(
        sorted_list(next_events(&mut late, 4).await),
        ["Init", "InitApply a=2", "InitApply b=1", "InitDone"]
    );

    // Deletions carry the last state.
    maps.delete("a", &DeleteParams::default())
        .await
        .expect("delete a");
    assert_eq!(next_events(&mut first, 1).await, ["Delete a=2"]);
    assert_eq!(next_events(&mut second, 1).await, ["Delete a=2"]);
    assert_eq!(next_events(&mut late, 1).await, ["Delete a=2"]);

    // One store: both handles hold the same objects, not copies.
    let reference = kube::runtime::reflector::ObjectRef::new("b").within("default");
    let (one, two) = (
        informer.store().get(&reference),
        again.store().get(&reference),
    );
    assert!(
        one.zip(two)
            .is_some_and(|(one, two)| Arc::ptr_eq(&one, &two)),
        "the stores of one informer share their objects"
    );
    // Two informers (app=a and app=b), one watch each, however many subscribers.
    assert_eq!(watches.load(Ordering::SeqCst), 2, "watch requests");

    drop(caches);
    let ended = tokio::time::timeout(Duration::from_secs(10), first.next())
        .await
        .expect("subscription ends when the caches are dropped");
    assert!(ended.is_none(), "no event after the end: {ended:?}");
}

#[tokio::test]
async fn a_subscriber_that_falls_behind_is_resynced_from_the_store() {
    let sandbox = Sandbox::builder().start().await.expect("sandbox");
    let client = sandbox.client();
    let maps: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    maps.create(&PostParams::default(), &config_map("busy", "0"))
        .await
        .expect("create");
    let stop = CancellationToken::new();
    let caches = SharedCaches::new(client, &stop);
    let informer = caches.informer(maps.clone(), &watcher::Config::default(), View::slim());
    let mut keeping_up = std::pin::pin!(informer.events());
    let mut behind = std::pin::pin!(informer.events());
    assert_eq!(
        next_events(&mut keeping_up, 3).await,
        ["Init", "InitApply busy=0", "InitDone"]
    );
    assert_eq!(
        next_events(&mut behind, 3).await,
        ["Init", "InitApply busy=0", "InitDone"]
    );

    // More changes than the buffer holds while `behind` is not polled.
    let changes = BUFFER + 20;
    for n in 1..=changes {
        maps.patch(
            "busy",
            &PatchParams::default(),
            &Patch::Merge(json!({"data": {"v": n.to_string()}})),
        )
        .await
        .expect("patch");
    }
    let last = format!("busy={changes}");
    // Wait until the informer has seen the last change.
    loop {
        let events = next_events(&mut keeping_up, 1).await;
        if events[0].ends_with(&last) {
            break;
        }
    }
    assert_eq!(
        next_events(&mut behind, 3).await,
        [
            "Init".to_owned(),
            format!("InitApply {last}"),
            "InitDone".to_owned()
        ],
        "a lagging subscriber gets the current store as a new list, not the old changes"
    );
    stop.cancel();
}

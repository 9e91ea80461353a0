//! The shared installation watch against an in-process garden sandbox (early and late
//! subscribers, paged lists), and the change filter as a table.

use std::collections::BTreeSet;
use std::time::Duration;

use futures::{Stream, StreamExt as _};
use kube::Api;
use kube::api::{DeleteParams, Patch, PatchParams};
use seedlet_api::core::ControllerInstallation;
use serde_json::json;

use super::*;
use crate::testing::{Env, create};

async fn installation(env: &Env, name: &str, seed: &str) {
    create::<ControllerInstallation>(
        &env.client,
        json!({"apiVersion": "core.gardener.cloud/v1beta1", "kind": "ControllerInstallation",
               "metadata": {"name": name},
               "spec": {"registrationRef": {"name": "r"}, "seedRef": {"name": seed}}}),
    )
    .await;
}

/// `Init`, `InitDone`, or `apply NAME` / `delete NAME`.
fn describe(event: &SharedEvent) -> String {
    match event {
        Event::Init => "init".to_owned(),
        Event::InitDone => "init-done".to_owned(),
        Event::InitApply(object) | Event::Apply(object) => format!("apply {}", name_of(object)),
        Event::Delete(object) => format!("delete {}", name_of(object)),
    }
}

/// The next event of `events` within 10 s.
async fn next<S>(events: &mut S) -> String
where
    S: Stream<Item = Result<SharedEvent, watcher::Error>> + Unpin,
{
    let event = tokio::time::timeout(Duration::from_secs(10), events.next())
        .await
        .expect("an event within 10 s")
        .expect("the subscription goes on")
        .expect("subscriptions yield no errors");
    describe(&event)
}

/// Events up to and including `InitDone`: the names applied.
async fn listed<S>(events: &mut S) -> BTreeSet<String>
where
    S: Stream<Item = Result<SharedEvent, watcher::Error>> + Unpin,
{
    assert_eq!(next(events).await, "init");
    let mut names = BTreeSet::new();
    loop {
        match next(events).await.as_str() {
            "init-done" => return names,
            applied => {
                let name = applied.strip_prefix("apply ").expect("an apply");
                names.insert(name.to_owned());
            }
        }
    }
}

#[tokio::test]
async fn early_and_late_subscribers_see_every_installation_and_change() {
    let env = Env::start().await;
    installation(&env, "a", "s1").await;
    installation(&env, "b", "s1").await;
    let stop = CancellationToken::new();
    let installations = Installations::new(env.client.clone(), &stop);

    let mut early = Box::pin(installations.events());
    assert_eq!(
        listed(&mut early).await,
        BTreeSet::from(["a".into(), "b".into()])
    );
    installation(&env, "c", "s2").await;
    assert_eq!(next(&mut early).await, "apply c");

    // Joining after the shared list, the late subscriber lists on its own.
    let mut late = Box::pin(installations.events());
    assert_eq!(
        listed(&mut late).await,
        BTreeSet::from(["a".into(), "b".into(), "c".into()])
    );
    let api: Api<ControllerInstallation> = Api::all(env.client.clone());
    api.patch(
        "a",
        &PatchParams::default(),
        &Patch::Merge(json!({"metadata": {"labels": {"x": "y"}}})),
    )
    .await
    .expect("label a");
    api.delete("b", &DeleteParams::default())
        .await
        .expect("delete b");
    for subscriber in [&mut early, &mut late] {
        assert_eq!(next(subscriber).await, "apply a");
        assert_eq!(next(subscriber).await, "delete b");
    }
    {
        let hub = installations
            .hub
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        assert_eq!(hub.subscribers.len(), 2);
    }

    // A dropped subscription leaves with the next event; the others go on.
    drop(late);
    installation(&env, "d", "s2").await;
    assert_eq!(next(&mut early).await, "apply d");
    {
        let hub = installations
            .hub
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        assert_eq!(hub.subscribers.len(), 1);
    }

    // Stopping ends every subscription.
    stop.cancel();
    let end = tokio::time::timeout(Duration::from_secs(10), early.next())
        .await
        .expect("the subscription ends within 10 s");
    assert!(end.is_none(), "no event after the stop");
}

#[tokio::test]
async fn a_late_subscriber_lists_page_by_page() {
    let env = Env::start().await;
    for name in ["p1", "p2", "p3", "p4", "p5"] {
        installation(&env, name, "s").await;
    }
    let events: Vec<String> = initial_list(
        Some(Api::all(env.client.clone())),
        2,
        CancellationToken::new(),
    )
    .map(|item| describe(&item.expect("no failure")))
    .collect()
    .await;
    assert_eq!(
        events,
        [
            "init",
            "apply p1",
            "apply p2",
            "apply p3",
            "apply p4",
            "apply p5",
            "init-done"
        ]
    );
    let nothing: Vec<Item> = initial_list(None, 2, CancellationToken::new())
        .collect()
        .await;
    assert!(nothing.is_empty(), "an early subscriber lists nothing");
}

#[tokio::test]
async fn failures_reach_the_readers_that_report_them() {
    // A garden that does not serve ControllerInstallations: every list fails with 404.
    let sandbox = seedlet_sandbox::setup::start_with_crds("garden", Vec::new())
        .await
        .expect("garden sandbox");
    let stop = CancellationToken::new();
    let installations = Installations::new(sandbox.client(), &stop);
    // The graph-like subscriber joins first and starts the shared watch.
    let mut quiet = Box::pin(installations.events());
    let mut controller = Box::pin(installations.changes(|_| String::new()));
    let first = |item: Option<Result<_, watcher::Error>>| match item {
        Some(Err(error)) => seedlet_runtime::error_chain(&error),
        Some(Ok(_)) => "an object".to_owned(),
        None => "the end".to_owned(),
    };
    let failure = tokio::time::timeout(Duration::from_secs(20), controller.next())
        .await
        .expect("a failure within 20 s");
    let failure = first(failure);
    assert!(failure.contains("404"), "{failure}");
    // The early subscriber lists nothing of its own and is not told: nothing arrives.
    let nothing = tokio::time::timeout(Duration::from_millis(500), quiet.next()).await;
    assert!(nothing.is_err(), "no item for the quiet subscriber");
    stop.cancel();
    sandbox.shutdown().await;
}

fn object(name: &str, seed: &str) -> Arc<ControllerInstallation> {
    Arc::new(
        serde_json::from_value(json!({
            "metadata": {"name": name},
            "spec": {"registrationRef": {"name": "r"}, "seedRef": {"name": seed}}
        }))
        .expect("installation"),
    )
}

#[test]
fn the_change_filter_passes_first_sightings_changed_keys_and_deletions() {
    let seed_key = |installation: &ControllerInstallation| {
        installation.seed_name().unwrap_or_default().to_owned()
    };
    // (event, passes)
    let cases: Vec<(SharedEvent, bool)> = vec![
        (Event::Init, false),
        (Event::InitApply(object("a", "s1")), true),
        (Event::InitApply(object("b", "s1")), true),
        (Event::InitDone, false),
        (Event::Apply(object("a", "s1")), false),
        (Event::Apply(object("a", "s2")), true),
        (Event::Apply(object("b", "s1")), false),
        // A re-list with nothing changed passes nothing.
        (Event::Init, false),
        (Event::InitApply(object("a", "s2")), false),
        (Event::InitDone, false),
        (Event::Delete(object("a", "s2")), true),
        // Seen again after its deletion: a first sighting.
        (Event::Apply(object("a", "s2")), true),
    ];
    let mut filter = ChangeFilter::default();
    for (step, (event, passes)) in cases.into_iter().enumerate() {
        let what = describe(&event);
        assert_eq!(
            filter.pass(event, &seed_key).is_some(),
            passes,
            "step {step}: {what}"
        );
    }
}

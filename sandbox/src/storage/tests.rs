//! Tests of the storage: resourceVersions, history, watch channels, list order and the indexes.

use super::*;

fn store() -> Store {
    Store::open(None, |_| Registry::new(Vec::new())).expect("memory store opens")
}

fn cm(name: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": "ns"}})
}

#[test]
fn every_write_gets_a_new_resource_version() {
    let store = store();
    let mut state = store.lock();
    let a = state.insert("configmaps", cm("a"));
    let b = state.replace("configmaps", cm("a"));
    assert_eq!(a["metadata"]["resourceVersion"], "2");
    assert_eq!(b["metadata"]["resourceVersion"], "3");
    assert_eq!(state.list("configmaps", Some("ns")).len(), 1);
}

#[test]
fn history_replays_only_events_after_the_given_version() {
    let store = store();
    let mut state = store.lock();
    state.insert("configmaps", cm("a"));
    state.insert("configmaps", cm("b"));
    state.insert("secrets", cm("c"));
    state.remove("configmaps", "ns", "a");
    let events = state
        .events_since("configmaps", 2)
        .expect("history reaches back");
    let kinds: Vec<EventType> = events.iter().map(|e| e.kind).collect();
    assert_eq!(kinds, [EventType::Added, EventType::Deleted]);
}

#[test]
fn history_answers_too_old_once_events_were_dropped() {
    let store = store();
    let mut state = store.lock();
    for i in 0..HISTORY_CAPACITY + 5 {
        state.insert("configmaps", cm(&format!("c{i}")));
    }
    assert!(state.events_since("configmaps", 3).is_err());
    assert!(
        state
            .events_since("configmaps", state.resource_version() - 1)
            .is_ok()
    );
}

fn received(receiver: &mut broadcast::Receiver<Arc<Event>>) -> Vec<ObjectKey> {
    let mut keys = Vec::new();
    while let Ok(event) = receiver.try_recv() {
        keys.push(object_key(&event.object));
    }
    keys
}

#[test]
fn watch_channels_get_only_their_resource_and_namespace() {
    let store = store();
    let mut state = store.lock();
    let mut in_ns = state.subscribe_watch("configmaps", "ns");
    let mut everywhere = state.subscribe_watch("configmaps", "");
    let mut secrets = state.subscribe_watch("secrets", "");
    let mut all = state.subscribe();
    state.insert("configmaps", cm("a"));
    state.insert(
        "configmaps",
        json!({"metadata": {"name": "b", "namespace": "other"}}),
    );
    state.insert("namespaces", json!({"metadata": {"name": "ns"}}));
    state.remove("configmaps", "ns", "a");
    let a = ("ns".to_string(), "a".to_string());
    let b = ("other".to_string(), "b".to_string());
    assert_eq!(received(&mut in_ns), [a.clone(), a.clone()]);
    assert_eq!(received(&mut everywhere), [a.clone(), b, a]);
    assert!(received(&mut secrets).is_empty());
    assert_eq!(
        received(&mut all).len(),
        4,
        "the controllers see everything"
    );
}

#[test]
fn watch_channels_are_dropped_when_their_watches_end() {
    let store = store();
    let mut state = store.lock();
    let first = state.subscribe_watch("configmaps", "ns");
    let second = state.subscribe_watch("configmaps", "ns");
    let other = state.subscribe_watch("secrets", "ns");
    assert_eq!(
        state.watch_channel_count(),
        2,
        "one channel per resource and namespace"
    );
    drop(first);
    state.insert("configmaps", cm("a"));
    assert_eq!(state.watch_channel_count(), 2, "a watch is left");
    drop(second);
    state.insert("configmaps", cm("b"));
    assert_eq!(state.watch_channel_count(), 1, "dropped on the next write");
    drop(other);
    let _new = state.subscribe_watch("leases", "");
    assert_eq!(
        state.watch_channel_count(),
        1,
        "dropped on the next subscription"
    );
}

#[test]
fn a_watch_channel_is_released_as_its_last_watch_ends() {
    let store = store();
    let mut state = store.lock();
    let first = state.subscribe_watch("configmaps", "ns");
    let second = state.subscribe_watch("configmaps", "ns");
    drop(first);
    state.release_watch("configmaps", "ns");
    assert_eq!(state.watch_channel_count(), 1, "a watch is left");
    drop(second);
    state.release_watch("configmaps", "ns");
    assert_eq!(
        state.watch_channel_count(),
        0,
        "released without a write or subscription"
    );
}

/// The keys `visit_labelled` yields, and those a scan filtered by the same labels yields.
fn labelled_and_scanned(
    state: &State,
    equalities: &[(&str, &str)],
    namespace: Option<&str>,
    after: Option<&ObjectKey>,
    limit: usize,
) -> (Vec<ObjectKey>, Vec<ObjectKey>) {
    let mut labelled = Vec::new();
    state.visit_labelled("configmaps", equalities, &[], namespace, after, |o| {
        labelled.push(object_key(o));
        labelled.len() < limit
    });
    let mut scanned = Vec::new();
    state.visit("configmaps", namespace, after, |o| {
        if equalities
            .iter()
            .all(|(label, value)| label_value(o, label) == Some(*value))
        {
            scanned.push(object_key(o));
        }
        scanned.len() < limit
    });
    (labelled, scanned)
}

#[test]
fn labelled_visits_yield_what_a_filtered_scan_yields() {
    let store = store();
    let mut state = store.lock();
    let object = |i: usize, generation: usize| {
        let namespace = ["a", "b", "c"][i % 3];
        let app = ["web", "db"][(i + generation) % 2];
        let tier = ["x", "y", "z"][(i + generation) % 3];
        json!({"metadata": {
            "name": format!("o{i:02}"),
            "namespace": namespace,
            "labels": {"app": app, "tier": tier},
        }})
    };
    for i in 0..30 {
        state.insert("configmaps", object(i, 0));
    }
    for i in (0..30).step_by(4) {
        state.replace("configmaps", object(i, 1));
    }
    for i in (0..30).step_by(7) {
        let (namespace, name) = object_key(&object(i, 0));
        state.remove("configmaps", &namespace, &name);
    }
    state.insert(
        "secrets",
        json!({"metadata": {"name": "o01", "namespace": "a", "labels": {"app": "web"}}}),
    );
    let after = ("b".to_string(), "o10".to_string());
    let selections: [&[(&str, &str)]; 5] = [
        &[("app", "web")],
        &[("app", "db"), ("tier", "y")],
        &[("tier", "z"), ("app", "web")],
        &[("app", "none")],
        &[],
    ];
    for equalities in selections {
        for namespace in [None, Some("a"), Some("b"), Some("d")] {
            for start in [None, Some(&after)] {
                for limit in [usize::MAX, 2] {
                    let (labelled, scanned) =
                        labelled_and_scanned(&state, equalities, namespace, start, limit);
                    assert_eq!(
                        labelled, scanned,
                        "{equalities:?} in {namespace:?} after {start:?}, limit {limit}"
                    );
                }
            }
        }
    }
    let (all_web, _) = labelled_and_scanned(&state, &[("app", "web")], None, None, usize::MAX);
    assert!(all_web.len() > 5, "the cases select something: {all_web:?}");
}

#[test]
fn label_index_is_rebuilt_from_persisted_objects() {
    let dir = tempfile::tempdir().expect("temp dir");
    let open = || {
        Store::open(
            Some(dir.path().to_path_buf()),
            |_| Registry::new(Vec::new()),
        )
        .expect("store opens")
    };
    let store = open();
    store.lock().insert(
        "configmaps",
        json!({"metadata": {"name": "a", "namespace": "ns", "labels": {"app": "web"}}}),
    );
    store.flush().expect("flushed");
    let reopened = open();
    let state = reopened.lock();
    let (labelled, _) = labelled_and_scanned(&state, &[("app", "web")], None, None, usize::MAX);
    assert_eq!(labelled, [("ns".to_string(), "a".to_string())]);
}

#[test]
fn visit_stays_in_its_namespace_and_resumes_after_a_key() {
    let store = store();
    let mut state = store.lock();
    for (ns, name) in [("a", "1"), ("b", "1"), ("b", "2"), ("b", "3"), ("c", "1")] {
        state.insert(
            "configmaps",
            json!({"metadata": {"name": name, "namespace": ns}}),
        );
    }
    let mut seen = Vec::new();
    let after = ("b".to_string(), "1".to_string());
    state.visit("configmaps", Some("b"), Some(&after), |o| {
        seen.push(object_key(o));
        true
    });
    assert_eq!(seen, [("b".into(), "2".into()), ("b".into(), "3".into())]);
    let mut first = Vec::new();
    state.visit("configmaps", None, None, |o| {
        first.push(object_key(o));
        first.len() < 2
    });
    assert_eq!(first, [("a".into(), "1".into()), ("b".into(), "1".into())]);
}

#[test]
fn list_is_ordered_by_namespace_then_name() {
    let store = store();
    let mut state = store.lock();
    for (ns, name) in [("b", "x"), ("a", "z"), ("a", "y")] {
        state.insert(
            "configmaps",
            json!({"metadata": {"name": name, "namespace": ns}}),
        );
    }
    let keys: Vec<ObjectKey> = state
        .list("configmaps", None)
        .iter()
        .map(|o| object_key(o))
        .collect();
    assert_eq!(
        keys,
        [
            ("a".into(), "y".into()),
            ("a".into(), "z".into()),
            ("b".into(), "x".into())
        ]
    );
}

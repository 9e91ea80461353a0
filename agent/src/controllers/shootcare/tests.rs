//! Tests of the trigger filter and the namespace mapper.

use seedlet_api::common::{LastOperationState as S, LastOperationType as T};
use serde_json::json;

use super::*;

fn view(
    operation: Option<(T, S)>,
    seed_name: bool,
    hibernated: bool,
    id: Option<&str>,
) -> ShootView {
    ShootView {
        last_operation: operation,
        seed_name_set: seed_name,
        hibernated: (hibernated, false),
        technical_id: id.map(str::to_owned),
    }
}

#[test]
fn shoot_events_need_care_only_on_the_transitions_that_matter() {
    let base = view(
        Some((T::Reconcile, S::Processing)),
        true,
        false,
        Some("shoot--dev--s"),
    );
    // (previous, current, expected)
    let cases = [
        (None, base.clone(), true),
        (Some(base.clone()), base.clone(), false),
        (
            Some(base.clone()),
            view(
                Some((T::Reconcile, S::Succeeded)),
                true,
                false,
                Some("shoot--dev--s"),
            ),
            true,
        ),
        (
            Some(view(
                Some((T::Delete, S::Processing)),
                true,
                false,
                Some("shoot--dev--s"),
            )),
            view(
                Some((T::Delete, S::Succeeded)),
                true,
                false,
                Some("shoot--dev--s"),
            ),
            false,
        ),
        (
            Some(base.clone()),
            view(
                Some((T::Reconcile, S::Error)),
                true,
                false,
                Some("shoot--dev--s"),
            ),
            false,
        ),
        (
            Some(view(Some((T::Create, S::Processing)), false, false, None)),
            view(Some((T::Create, S::Processing)), true, false, None),
            true,
        ),
        (
            Some(base.clone()),
            view(
                Some((T::Reconcile, S::Processing)),
                true,
                true,
                Some("shoot--dev--s"),
            ),
            true,
        ),
        (
            Some(view(None, true, false, None)),
            view(None, true, false, Some("shoot--dev--s")),
            true,
        ),
    ];
    for (previous, current, expected) in cases {
        assert_eq!(
            shoot_needs_care(previous.as_ref(), &current),
            expected,
            "{previous:?} → {current:?}"
        );
    }
}

#[test]
fn a_namespace_maps_to_the_shoot_with_that_technical_id() {
    let shoot = |name: &str, id: Option<&str>| -> Arc<Shoot> {
        let mut value = json!({
            "metadata": {"name": name, "namespace": "garden-dev"},
            "spec": {"provider": {"type": "local"}, "region": "r"},
        });
        if let Some(id) = id {
            value["status"] = json!({"technicalID": id});
        }
        Arc::new(serde_json::from_value(value).unwrap())
    };
    let shoots = [shoot("a", Some("shoot--dev--a")), shoot("b", None)];
    assert_eq!(
        shoot_of_namespace(&shoots, "shoot--dev--a").unwrap().name,
        "a"
    );
    assert!(shoot_of_namespace(&shoots, "shoot--dev--b").is_none());
}

#[test]
fn managed_resource_changes_ignore_status_times() {
    let mr = |updated: &str, status: &str| -> ManagedResource {
        serde_json::from_value(json!({
            "metadata": {"name": "m", "namespace": "shoot--dev--a", "generation": 1},
            "spec": {"secretRefs": []},
            "status": {"observedGeneration": 1, "conditions": [{"type": "ResourcesHealthy",
                "status": status, "reason": "R", "message": "",
                "lastTransitionTime": updated, "lastUpdateTime": updated}]},
        }))
        .unwrap()
    };
    let first = managed_resource_change(&mr("2025-01-01T00:00:00Z", "True"));
    assert_eq!(
        first,
        managed_resource_change(&mr("2025-01-02T00:00:00Z", "True"))
    );
    assert_ne!(
        first,
        managed_resource_change(&mr("2025-01-01T00:00:00Z", "False"))
    );
}

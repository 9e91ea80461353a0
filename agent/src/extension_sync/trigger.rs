//! The "last operation changed" trigger (spec §0 "LOC") on extension objects and core
//! BackupBuckets: creations only when a Failed object lacks `operation=reconcile`; updates only
//! when the lastOperation reached Succeeded/Error/Failed and changed, and not while the object
//! carries an operation annotation for the extension to act on. Deletions never fire.

use std::collections::HashMap;

use futures::{Stream, StreamExt};
use kube::ResourceExt;
use kube::runtime::watcher::{self, Event};
use seedlet_api::common::{LastOperation, LastOperationState};
use seedlet_api::names::annotations;

/// What the trigger looks at.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct LocState {
    /// `gardener.cloud/operation`, if set.
    pub operation: Option<String>,
    /// `status.lastOperation`.
    pub last_operation: Option<LastOperation>,
}

/// Whether a created (first seen) object fires.
pub fn fires_on_create(new: &LocState) -> bool {
    new.operation.as_deref() != Some(annotations::OPERATION_RECONCILE)
        && new
            .last_operation
            .as_ref()
            .is_some_and(|op| op.state == LastOperationState::Failed)
}

/// Whether an update from `old` to `new` fires.
pub fn fires_on_update(old: &LocState, new: &LocState) -> bool {
    match new.operation.as_deref() {
        Some(op @ (annotations::OPERATION_MIGRATE | annotations::OPERATION_RESTORE))
            if old.operation.as_deref() == Some(op) => {}
        Some(
            annotations::OPERATION_RECONCILE
            | annotations::OPERATION_MIGRATE
            | annotations::OPERATION_RESTORE,
        ) => return false,
        _ => {}
    }
    let Some(last) = new.last_operation.as_ref() else {
        return false;
    };
    matches!(
        last.state,
        LastOperationState::Succeeded | LastOperationState::Error | LastOperationState::Failed
    ) && old.last_operation.as_ref() != Some(last)
}

/// The objects of a watch event stream for which the trigger fires; `state` reads an object.
pub fn changes<K, S, F>(events: S, state: F) -> impl Stream<Item = K> + Send + 'static
where
    K: kube::Resource + Clone + Send + Sync + 'static,
    S: Stream<Item = Result<Event<K>, watcher::Error>> + Send + 'static,
    F: Fn(&K) -> LocState + Send + Sync + 'static,
{
    let mut seen: HashMap<String, LocState> = HashMap::new();
    events.filter_map(move |event| {
        let out = match event {
            Ok(Event::Apply(object) | Event::InitApply(object)) => {
                let id = identity(&object);
                let new = state(&object);
                let fires = match seen.get(&id) {
                    None => fires_on_create(&new),
                    Some(old) => fires_on_update(old, &new),
                };
                seen.insert(id, new);
                fires.then_some(object)
            }
            Ok(Event::Delete(object)) => {
                seen.remove(&identity(&object));
                None
            }
            Ok(Event::Init | Event::InitDone) | Err(_) => None,
        };
        futures::future::ready(out)
    })
}

/// The [`LocState`] of an object with Gardener's status shape.
pub fn state_of(object: &impl kube::Resource, last_operation: Option<&LastOperation>) -> LocState {
    LocState {
        operation: object.annotations().get(annotations::OPERATION).cloned(),
        last_operation: last_operation.cloned(),
    }
}

fn identity<K: kube::Resource>(object: &K) -> String {
    match object.namespace() {
        Some(namespace) => format!("{namespace}/{}", object.name_any()),
        None => object.name_any(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::extension_sync::operation::last_operation;
    use jiff::Timestamp;
    use seedlet_api::common::LastOperationType;

    fn state(operation: Option<&str>, last: Option<(LastOperationState, i64)>) -> LocState {
        LocState {
            operation: operation.map(str::to_owned),
            last_operation: last.map(|(state, second)| {
                last_operation(
                    LastOperationType::Reconcile,
                    state,
                    100,
                    "",
                    Timestamp::from_second(second).unwrap(),
                )
            }),
        }
    }

    #[test]
    fn creations_fire_only_for_failed_objects_without_reconcile() {
        use LastOperationState as S;
        assert!(fires_on_create(&state(None, Some((S::Failed, 1)))));
        assert!(fires_on_create(&state(
            Some("migrate"),
            Some((S::Failed, 1))
        )));
        assert!(!fires_on_create(&state(
            Some("reconcile"),
            Some((S::Failed, 1))
        )));
        assert!(!fires_on_create(&state(None, Some((S::Succeeded, 1)))));
        assert!(!fires_on_create(&state(None, None)));
    }

    #[test]
    fn updates_fire_on_a_changed_final_state_unless_an_operation_is_pending() {
        use LastOperationState as S;
        let cases = [
            (
                state(None, None),
                state(None, Some((S::Succeeded, 1))),
                true,
            ),
            (
                state(None, Some((S::Succeeded, 1))),
                state(None, Some((S::Succeeded, 1))),
                false,
            ),
            (
                state(None, Some((S::Succeeded, 1))),
                state(None, Some((S::Succeeded, 2))),
                true,
            ),
            (
                state(None, Some((S::Processing, 1))),
                state(None, Some((S::Error, 2))),
                true,
            ),
            (
                state(None, None),
                state(None, Some((S::Processing, 1))),
                false,
            ),
            (
                state(None, None),
                state(Some("reconcile"), Some((S::Succeeded, 1))),
                false,
            ),
            (
                state(None, None),
                state(Some("restore"), Some((S::Succeeded, 1))),
                false,
            ),
            (
                state(Some("restore"), None),
                state(Some("restore"), Some((S::Succeeded, 1))),
                true,
            ),
            (
                state(Some("migrate"), None),
                state(Some("migrate"), Some((S::Failed, 1))),
                true,
            ),
            (
                state(Some("reconcile"), None),
                state(Some("reconcile"), Some((S::Failed, 1))),
                false,
            ),
        ];
        for (old, new, want) in cases {
            assert_eq!(fires_on_update(&old, &new), want, "{old:?} -> {new:?}");
        }
    }
}

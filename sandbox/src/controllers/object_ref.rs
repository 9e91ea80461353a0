//! Where an object is stored: the key the controllers index and queue objects by.

use std::sync::Arc;

use serde_json::Value;

use crate::storage::{State, object_key};

/// Where an object is stored.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ObjectRef {
    /// Storage key of its resource (`plural.group`).
    pub key: String,
    /// Namespace (empty for cluster-scoped objects).
    pub namespace: String,
    /// Name.
    pub name: String,
}

impl ObjectRef {
    /// The location of `object` stored under `key`.
    pub fn of(key: &str, object: &Value) -> Self {
        let (namespace, name) = object_key(object);
        ObjectRef {
            key: key.to_string(),
            namespace,
            name,
        }
    }

    /// The object as currently stored.
    pub fn fetch(&self, state: &State) -> Option<Arc<Value>> {
        state.get_by_key(&self.key, &self.namespace, &self.name)
    }
}

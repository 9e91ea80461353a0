//! Saving and loading the stored objects to a directory, so state survives a restart.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::{Value, json};

use super::{ObjectKey, object_key};

const FILE_NAME: &str = "objects.json";

/// Failure to load or save persisted state.
#[derive(Debug, thiserror::Error)]
pub enum PersistError {
    /// Reading the state file failed.
    #[error("read persisted state {path}")]
    Read {
        /// The file.
        path: PathBuf,
        /// Cause.
        #[source]
        source: std::io::Error,
    },
    /// The state file is not valid JSON of the expected shape.
    #[error("parse persisted state {path}")]
    Parse {
        /// The file.
        path: PathBuf,
        /// Cause.
        #[source]
        source: serde_json::Error,
    },
    /// Writing the state file failed.
    #[error("write persisted state {path}")]
    Write {
        /// The file.
        path: PathBuf,
        /// Cause.
        #[source]
        source: std::io::Error,
    },
}

type Objects = HashMap<String, BTreeMap<ObjectKey, Arc<Value>>>;

/// Loads `dir/objects.json` if it exists: the resourceVersion and objects per resource.
pub fn load(dir: &Path) -> Result<Option<(u64, Objects)>, PersistError> {
    let path = dir.join(FILE_NAME);
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(source) => return Err(PersistError::Read { path, source }),
    };
    let parsed: Value = serde_json::from_str(&text).map_err(|source| PersistError::Parse {
        path: path.clone(),
        source,
    })?;
    let rv = parsed
        .get("resourceVersion")
        .and_then(Value::as_u64)
        .unwrap_or(1);
    let mut objects: Objects = HashMap::new();
    if let Some(resources) = parsed.get("resources").and_then(Value::as_object) {
        for (key, items) in resources {
            let map = objects.entry(key.clone()).or_default();
            for item in items.as_array().into_iter().flatten() {
                map.insert(object_key(item), Arc::new(item.clone()));
            }
        }
    }
    Ok(Some((rv, objects)))
}

/// The stored objects per resource as pointers: cheap to take under the store lock.
pub type Pointers = Vec<(String, Vec<Arc<Value>>)>;

/// Takes the object pointers to persist (the only part of a flush that needs the store lock).
pub fn pointers(objects: &Objects) -> Pointers {
    objects
        .iter()
        .filter(|(_, m)| !m.is_empty())
        .map(|(k, m)| (k.clone(), m.values().cloned().collect()))
        .collect()
}

/// Serializes the state from its pointers (outside the lock).
pub fn snapshot(rv: u64, objects: &Pointers) -> Value {
    let resources: serde_json::Map<String, Value> = objects
        .iter()
        .map(|(k, items)| {
            (
                k.clone(),
                Value::Array(items.iter().map(|o| (**o).clone()).collect()),
            )
        })
        .collect();
    json!({"resourceVersion": rv, "resources": resources})
}

/// Atomically writes the snapshot to `dir/objects.json` (mode 0600: it holds Secrets).
pub fn write(dir: &Path, snapshot: &Value) -> Result<(), PersistError> {
    let path = dir.join(FILE_NAME);
    let tmp = dir.join(format!("{FILE_NAME}.tmp"));
    let text = serde_json::to_vec(snapshot).map_err(|source| PersistError::Parse {
        path: path.clone(),
        source,
    })?;
    write_private(&tmp, &text).map_err(|source| PersistError::Write {
        path: tmp.clone(),
        source,
    })?;
    std::fs::rename(&tmp, &path).map_err(|source| PersistError::Write { path, source })
}

/// Writes a file readable only by its owner.
pub fn write_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(path)?;
    file.write_all(bytes)?;
    file.sync_all()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn snapshot_round_trips_through_a_directory() {
        let dir = tempfile::tempdir().expect("temp dir");
        let mut objects: Objects = HashMap::new();
        let cm = json!({"metadata": {"name": "a", "namespace": "n", "resourceVersion": "7"}});
        objects
            .entry("configmaps".into())
            .or_default()
            .insert(object_key(&cm), Arc::new(cm.clone()));
        write(dir.path(), &snapshot(7, &pointers(&objects))).expect("write works");
        let (rv, loaded) = load(dir.path()).expect("load works").expect("file exists");
        assert_eq!(rv, 7);
        assert_eq!(
            *loaded["configmaps"][&("n".to_string(), "a".to_string())],
            cm
        );
    }

    #[test]
    fn missing_file_loads_as_nothing() {
        let dir = tempfile::tempdir().expect("temp dir");
        assert!(load(dir.path()).expect("no error").is_none());
    }
}

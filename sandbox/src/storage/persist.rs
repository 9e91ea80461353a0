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
    /// The state file is larger than any state the sandbox writes.
    #[error("persisted state {path} has {size} bytes, more than the {limit} a sandbox loads")]
    FileTooLarge {
        /// The file.
        path: PathBuf,
        /// Its size.
        size: u64,
        /// [`MAX_FILE_BYTES`].
        limit: u64,
    },
    /// An object in the state file is larger than a write may store.
    #[error("persisted state {path} holds {resource} {object} over the {limit}-byte object limit")]
    ObjectTooLarge {
        /// The file.
        path: PathBuf,
        /// The resource's storage key.
        resource: String,
        /// `namespace/name` or `name`.
        object: String,
        /// The object size limit.
        limit: usize,
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

/// The largest state file loaded. Every object is at most 1.5 MiB (the write limit), so only a
/// file written by something else, or by a sandbox without the limits, is larger; loading it
/// would take several times its size in memory.
pub const MAX_FILE_BYTES: u64 = 256 * 1024 * 1024;

/// The file as written by [`snapshot`].
#[derive(serde::Deserialize)]
struct StateFile {
    #[serde(rename = "resourceVersion", default)]
    resource_version: Option<u64>,
    #[serde(default)]
    resources: HashMap<String, Vec<Value>>,
}

/// Loads `dir/objects.json` if it exists: the resourceVersion and objects per resource.
///
/// # Errors
/// A file over [`MAX_FILE_BYTES`], an object over the write limit, or a file that cannot be read
/// or parsed; each names the file.
pub fn load(dir: &Path) -> Result<Option<(u64, Objects)>, PersistError> {
    let path = dir.join(FILE_NAME);
    let file = match std::fs::File::open(&path) {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(source) => return Err(PersistError::Read { path, source }),
    };
    let size = file
        .metadata()
        .map_err(|source| PersistError::Read {
            path: path.clone(),
            source,
        })?
        .len();
    if size > MAX_FILE_BYTES {
        return Err(PersistError::FileTooLarge {
            path,
            size,
            limit: MAX_FILE_BYTES,
        });
    }
    // Read at most the size checked above, even if the file grows meanwhile.
    let reader = std::io::BufReader::new(std::io::Read::take(file, MAX_FILE_BYTES + 1));
    let parsed: StateFile =
        serde_json::from_reader(reader).map_err(|source| PersistError::Parse {
            path: path.clone(),
            source,
        })?;
    let mut objects: Objects = HashMap::new();
    for (key, items) in parsed.resources {
        let map = objects.entry(key.clone()).or_default();
        for item in items {
            if crate::registry::limits::json_len(&item, crate::registry::limits::MAX_OBJECT_BYTES)
                .is_none()
            {
                let (namespace, name) = object_key(&item);
                return Err(PersistError::ObjectTooLarge {
                    path,
                    resource: key,
                    object: if namespace.is_empty() {
                        name
                    } else {
                        format!("{namespace}/{name}")
                    },
                    limit: crate::registry::limits::MAX_OBJECT_BYTES,
                });
            }
            map.insert(object_key(&item), Arc::new(item));
        }
    }
    Ok(Some((parsed.resource_version.unwrap_or(1), objects)))
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
    fn an_object_over_the_write_limit_is_an_error_naming_file_and_object() {
        let dir = tempfile::tempdir().expect("temp dir");
        let big = json!({"metadata": {"name": "big", "namespace": "n"}, "data": {"a": "x".repeat(crate::registry::limits::MAX_OBJECT_BYTES)}});
        let text = json!({"resourceVersion": 3, "resources": {"configmaps": [big]}});
        std::fs::write(dir.path().join(FILE_NAME), text.to_string()).expect("write");
        let error = load(dir.path()).expect_err("refused");
        let message = error.to_string();
        assert!(message.contains("objects.json"), "{message}");
        assert!(message.contains("configmaps n/big"), "{message}");
    }

    #[test]
    fn a_file_over_the_load_limit_is_refused_before_it_is_read() {
        let dir = tempfile::tempdir().expect("temp dir");
        let file = std::fs::File::create(dir.path().join(FILE_NAME)).expect("create");
        // Sparse: no disk space and no memory, only the size.
        file.set_len(MAX_FILE_BYTES + 1).expect("set length");
        let error = load(dir.path()).expect_err("refused");
        assert!(
            matches!(error, PersistError::FileTooLarge { .. }),
            "{error}"
        );
        assert!(error.to_string().contains("objects.json"));
    }

    #[test]
    fn missing_file_loads_as_nothing() {
        let dir = tempfile::tempdir().expect("temp dir");
        assert!(load(dir.path()).expect("no error").is_none());
    }
}

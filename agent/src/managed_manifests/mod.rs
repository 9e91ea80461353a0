//! Rendered manifests as a ManagedResource in the seed, the way gardenlet hands a chart to
//! gardener-resource-manager: the manifests become the data of an immutable Secret named by its
//! content hash (`<name>-<hash8>`, labelled garbage-collectable), and a ManagedResource of class
//! `seed` references it. The ControllerInstallation controller writes an extension's chart this
//! way, the Shoot controller its control-plane chart. [`apply`] writes them.

pub mod apply;

use std::collections::BTreeMap;

use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use seedlet_api::names::{managed_resources, objects};

/// Why secret data could not be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DataError {
    /// A rendered template is not valid YAML.
    #[error("YAML parse error on {template}: {message}")]
    Yaml {
        /// Template path.
        template: String,
        /// Parser message.
        message: String,
    },
    /// An apps/batch object in the extension namespace has a kind the mutation cannot handle.
    #[error(
        "failed to inject garden access secrets: unsupported kind {api_version}, Kind={kind} ({name})"
    )]
    UnsupportedWorkload {
        /// apiVersion.
        api_version: String,
        /// Kind.
        kind: String,
        /// Object name.
        name: String,
    },
}

/// Secret data from rendered templates (`path → text`), keyed as Gardener's
/// `RenderedChart.AsSecretData` keys them: a file with one object under its path (`/` → `_`),
/// several under `<path without .yaml>/<kind>/<name>.yaml` sanitized; hooks and documents without
/// metadata are dropped, the last of two objects with one kind and name wins. With `seed_env` =
/// `(extension namespace, seed)`, `SEED_NAME=<seed>` is injected into the apps/batch workloads
/// that name the extension namespace (gardenlet's mutation of extension charts); without it the
/// objects are only re-encoded (the Shoot controller's control-plane chart).
///
/// # Errors
/// [`DataError::Yaml`] for an unparsable template, [`DataError::UnsupportedWorkload`] for an
/// apps/batch kind the mutation does not know in the extension namespace.
pub fn manifest_data(
    templates: &BTreeMap<String, String>,
    seed_env: Option<(&str, &str)>,
) -> Result<BTreeMap<String, String>, DataError> {
    let mut out = BTreeMap::new();
    for (path, text) in templates {
        let documents =
            seedlet_chartrender::parse_documents(path, text).map_err(|error| DataError::Yaml {
                template: path.clone(),
                // The parser's own message: the renderer's Display repeats the prefix.
                message: match error {
                    seedlet_chartrender::RenderError::Yaml { source, .. } => source.to_string(),
                    other => other.to_string(),
                },
            })?;
        // Key documents by lower-cased `<kind>/<name>`, last wins; without metadata or a hook → dropped.
        let mut by_name: BTreeMap<String, Value> = BTreeMap::new();
        let mut order: Vec<String> = Vec::new();
        for document in documents {
            let Some(metadata) = document.get("metadata").filter(|m| m.is_object()) else {
                continue;
            };
            if metadata.pointer("/annotations/helm.sh~1hook").is_some() {
                continue;
            }
            let kind = document
                .get("kind")
                .and_then(Value::as_str)
                .unwrap_or_default();
            let name = metadata
                .get("name")
                .and_then(Value::as_str)
                .unwrap_or_default();
            let key = format!("{kind}/{name}").to_lowercase();
            if !by_name.contains_key(&key) {
                order.push(key.clone());
            }
            by_name.insert(key, document);
        }
        let single = by_name.len() == 1;
        for key in order {
            let Some(mut object) = by_name.remove(&key) else {
                continue;
            };
            if let Some((extension_namespace, seed)) = seed_env {
                mutate(&mut object, extension_namespace, seed)?;
            }
            let data_key = if single {
                path.replace('/', "_")
            } else {
                let base = path.strip_suffix(".yaml").unwrap_or(path);
                sanitize(&format!("{base}/{key}.yaml"))
            };
            out.insert(data_key, encode(&[object]));
        }
    }
    Ok(out)
}

/// Every run of characters outside `[-._a-zA-Z0-9]` replaced by `_`.
pub fn sanitize(key: &str) -> String {
    let mut out = String::with_capacity(key.len());
    let mut in_run = false;
    for c in key.chars() {
        if c.is_ascii_alphanumeric() || matches!(c, '-' | '.' | '_') {
            out.push(c);
            in_run = false;
        } else if !in_run {
            out.push('_');
            in_run = true;
        }
    }
    out
}

/// The mutation pass encoding: `"\n---\n"` + YAML (sorted keys) per object, plus a trailing `"\n---\n"`.
pub fn encode(objects: &[Value]) -> String {
    let mut out = String::new();
    for object in objects {
        out.push_str("\n---\n");
        // Serialising a JSON value to YAML cannot fail (no non-string keys, no special floats).
        out.push_str(&serde_yaml::to_string(&sorted(object)).unwrap_or_default());
    }
    out.push_str("\n---\n");
    out
}

fn sorted(value: &Value) -> Value {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<_> = map.keys().collect();
            keys.sort();
            Value::Object(
                keys.into_iter()
                    .map(|k| (k.clone(), sorted(&map[k])))
                    .collect(),
            )
        }
        Value::Array(items) => Value::Array(items.iter().map(sorted).collect()),
        other => other.clone(),
    }
}

/// Adds/overwrites env `SEED_NAME` in all (init) containers of apps/batch workloads whose
/// `metadata.namespace` is the extension namespace.
fn mutate(object: &mut Value, extension_namespace: &str, seed: &str) -> Result<(), DataError> {
    let api_version = object
        .get("apiVersion")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    let group = api_version
        .split_once('/')
        .map(|(g, _)| g)
        .unwrap_or_default();
    if !matches!(group, "apps" | "batch") {
        return Ok(());
    }
    if object
        .pointer("/metadata/namespace")
        .and_then(Value::as_str)
        != Some(extension_namespace)
    {
        return Ok(());
    }
    let kind = object
        .get("kind")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    let pod_spec = match (api_version.as_str(), kind.as_str()) {
        ("apps/v1" | "apps/v1beta1" | "apps/v1beta2", "Deployment" | "StatefulSet")
        | ("apps/v1" | "apps/v1beta2", "DaemonSet")
        | ("batch/v1", "Job") => "/spec/template/spec",
        ("batch/v1" | "batch/v1beta1", "CronJob") => "/spec/jobTemplate/spec/template/spec",
        _ => {
            let name = object
                .pointer("/metadata/name")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned();
            return Err(DataError::UnsupportedWorkload {
                api_version,
                kind,
                name,
            });
        }
    };
    let Some(spec) = object.pointer_mut(pod_spec).and_then(Value::as_object_mut) else {
        return Ok(());
    };
    for list in ["initContainers", "containers"] {
        let Some(containers) = spec.get_mut(list).and_then(Value::as_array_mut) else {
            continue;
        };
        for container in containers.iter_mut().filter_map(Value::as_object_mut) {
            let env = container.entry("env").or_insert_with(|| json!([]));
            if !env.is_array() {
                *env = json!([]);
            }
            if let Some(env) = env.as_array_mut() {
                let entry = json!({"name": objects::SEED_NAME_ENV, "value": seed});
                match env
                    .iter_mut()
                    .find(|e| e.get("name").and_then(Value::as_str) == Some(objects::SEED_NAME_ENV))
                {
                    Some(existing) => *existing = entry,
                    None => env.push(entry),
                }
            }
        }
    }
    Ok(())
}

/// First 8 hex of sha256hex(concatenation of sha256hex(value) over keys in ascending order).
pub fn data_hash8(data: &BTreeMap<String, String>) -> String {
    let mut outer = Sha256::new();
    for value in data.values() {
        outer.update(hex::encode(Sha256::digest(value.as_bytes())).as_bytes());
    }
    hex::encode(outer.finalize())[..8].to_owned()
}

/// First 8 hex of sha256(text).
pub fn text_hash8(text: &str) -> String {
    hex::encode(Sha256::digest(text.as_bytes()))[..8].to_owned()
}

/// Name of the manifest Secret of ManagedResource `name`: `<name>-<hash8>`.
pub fn secret_name(installation: &str, data: &BTreeMap<String, String>) -> String {
    format!("{installation}-{}", data_hash8(data))
}

/// The immutable, garbage-collectable manifest Secret `namespace/name` holding `data`.
pub fn manifest_secret(
    namespace: &str,
    name: &str,
    data: &BTreeMap<String, String>,
) -> k8s_openapi::api::core::v1::Secret {
    use k8s_openapi::ByteString;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
    k8s_openapi::api::core::v1::Secret {
        metadata: ObjectMeta {
            name: Some(name.to_owned()),
            namespace: Some(namespace.to_owned()),
            labels: Some(BTreeMap::from([(
                managed_resources::GARBAGE_COLLECTABLE_REFERENCE.to_owned(),
                "true".to_owned(),
            )])),
            ..ObjectMeta::default()
        },
        immutable: Some(true),
        type_: Some("Opaque".to_owned()),
        data: Some(
            data.iter()
                .map(|(k, v)| (k.clone(), ByteString(v.clone().into_bytes())))
                .collect(),
        ),
        ..Default::default()
    }
}

/// The ManagedResource `namespace/name` of class `seed` with `labels`, referencing the manifest
/// Secret `secret` (and annotated with that reference).
pub fn managed_resource(namespace: &str, name: &str, labels: &Value, secret: &str) -> Value {
    json!({
        "apiVersion": seedlet_api::names::groups::RESOURCES_V1ALPHA1,
        "kind": "ManagedResource",
        "metadata": {
            "name": name,
            "namespace": namespace,
            "labels": labels,
            "annotations": {
                managed_resources::secret_reference_annotation(&text_hash8(secret)): secret,
            },
        },
        "spec": {
            "class": managed_resources::CLASS_SEED,
            "secretRefs": [{"name": secret}],
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn templates(entries: &[(&str, &str)]) -> BTreeMap<String, String> {
        entries
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    #[test]
    fn duplicate_documents_in_a_file_last_wins() {
        let data = manifest_data(
            &templates(&[("c/templates/x.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata: {k: '1'}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata: {k: '2'}\n")]),
            None,
        )
        .unwrap();
        assert_eq!(data.len(), 1);
        assert!(data["c_templates_x.yaml"].contains("k: '2'"), "{:?}", data);
    }

    #[test]
    fn hash8_depends_on_values_in_key_order() {
        let a = BTreeMap::from([
            ("a".to_owned(), "1".to_owned()),
            ("b".to_owned(), "2".to_owned()),
        ]);
        let b = BTreeMap::from([
            ("a".to_owned(), "2".to_owned()),
            ("b".to_owned(), "1".to_owned()),
        ]);
        assert_eq!(data_hash8(&a).len(), 8);
        assert_ne!(data_hash8(&a), data_hash8(&b));
        // sha256("") = e3b0c442...; the hash of an empty data map is sha256 of the empty string.
        assert_eq!(data_hash8(&BTreeMap::new()), "e3b0c442");
        assert_eq!(secret_name("ci", &a), format!("ci-{}", data_hash8(&a)));
    }

    #[test]
    fn sanitize_collapses_runs_of_invalid_characters() {
        assert_eq!(sanitize("a/b::c d.yaml"), "a_b_c_d.yaml");
    }
}

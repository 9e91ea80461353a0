//! Built-in template objects with methods: `.Files` and `.Capabilities` (`KubeVersion`, `APIVersions`).

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::sync::{Arc, Mutex};

use base64::Engine as _;
use minijinja::value::{Enumerator, Object, ObjectRepr, Value};
use minijinja::{Error, State};

use crate::chart::Chart;
use crate::funcs::goyaml;
use crate::funcs::value::{GoMap, from_json};
use crate::glob::glob_match;

/// `.Files`: the chart's non-template files with Helm's accessor methods.
#[derive(Debug, Clone, Default)]
pub(crate) struct Files {
    entries: Arc<BTreeMap<String, Arc<[u8]>>>,
}

impl Files {
    /// Builds the object from `(path, bytes)` pairs.
    pub(crate) fn new(entries: impl IntoIterator<Item = (String, Vec<u8>)>) -> Self {
        Self {
            entries: Arc::new(
                entries
                    .into_iter()
                    .map(|(k, v)| (k, Arc::from(v)))
                    .collect(),
            ),
        }
    }

    fn text(&self, name: &str) -> String {
        self.entries
            .get(name)
            .map(|data| String::from_utf8_lossy(data).into_owned())
            .unwrap_or_default()
    }

    fn glob(&self, pattern: &str) -> Files {
        let matched = self
            .entries
            .iter()
            .filter(|(name, _)| glob_match(pattern, name))
            .map(|(k, v)| (k.clone(), v.clone()));
        Files {
            entries: Arc::new(matched.collect()),
        }
    }

    fn lines(&self, name: &str) -> Vec<Value> {
        let Some(data) = self.entries.get(name) else {
            return Vec::new();
        };
        // Helm v3.11 splits the whole text, so a final newline gives a last empty line.
        String::from_utf8_lossy(data)
            .split('\n')
            .map(Value::from)
            .collect()
    }

    fn as_map(&self, encode: bool) -> String {
        if self.entries.is_empty() {
            return String::new();
        }
        let map: serde_json::Map<String, serde_json::Value> = self
            .entries
            .iter()
            .map(|(name, data)| {
                let base = name.rsplit('/').next().unwrap_or(name).to_string();
                let value = if encode {
                    base64::engine::general_purpose::STANDARD.encode(data)
                } else {
                    String::from_utf8_lossy(data).into_owned()
                };
                (base, serde_json::Value::String(value))
            })
            .collect();
        let yaml = goyaml::to_yaml(&serde_json::Value::Object(map));
        yaml.strip_suffix('\n').unwrap_or(&yaml).to_string()
    }
}

impl Object for Files {
    fn repr(self: &Arc<Self>) -> ObjectRepr {
        ObjectRepr::Map
    }

    fn get_value(self: &Arc<Self>, key: &Value) -> Option<Value> {
        match key.as_str()? {
            // Niladic methods are reached with field syntax in Go templates (`(.Files.Glob "x").AsConfig`).
            "AsConfig" => Some(Value::from(self.as_map(false))),
            "AsSecrets" => Some(Value::from(self.as_map(true))),
            name => self
                .entries
                .get(name)
                .map(|data| Value::from_bytes(data.to_vec())),
        }
    }

    fn enumerate(self: &Arc<Self>) -> Enumerator {
        Enumerator::Values(
            self.entries
                .keys()
                .map(|k| Value::from(k.as_str()))
                .collect(),
        )
    }

    fn call_method(
        self: &Arc<Self>,
        _state: &State<'_, '_>,
        method: &str,
        args: &[Value],
    ) -> Result<Value, Error> {
        let name = || {
            args.first()
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string()
        };
        match method {
            "Get" => Ok(Value::from(self.text(&name()))),
            "GetBytes" => Ok(Value::from_bytes(
                self.entries
                    .get(&name())
                    .map(|d| d.to_vec())
                    .unwrap_or_default(),
            )),
            "Glob" => Ok(Value::from_object(self.glob(&name()))),
            "Lines" => Ok(Value::from(self.lines(&name()))),
            "AsConfig" => Ok(Value::from(self.as_map(false))),
            "AsSecrets" => Ok(Value::from(self.as_map(true))),
            other => Err(crate::funcs::fail(format!(
                "can't evaluate field {other} in type chart.Files"
            ))),
        }
    }
}

/// `.Capabilities.KubeVersion`: prints as the version, with `Version`, `GitVersion`, `Major`, `Minor` fields.
#[derive(Debug, Clone)]
pub(crate) struct KubeVersion {
    version: String,
    major: String,
    minor: String,
}

impl KubeVersion {
    /// Parses `v1.20.0` (a leading `v` is added when missing).
    pub(crate) fn new(version: &str) -> Self {
        let version = if version.starts_with('v') {
            version.to_string()
        } else {
            format!("v{version}")
        };
        let mut parts = version.trim_start_matches('v').split(['.', '-', '+']);
        let major = parts.next().unwrap_or_default().to_string();
        let minor = parts.next().unwrap_or_default().to_string();
        Self {
            version,
            major,
            minor,
        }
    }
}

impl Object for KubeVersion {
    fn repr(self: &Arc<Self>) -> ObjectRepr {
        ObjectRepr::Plain
    }

    fn get_value(self: &Arc<Self>, key: &Value) -> Option<Value> {
        match key.as_str()? {
            "Version" | "GitVersion" | "String" => Some(Value::from(self.version.as_str())),
            "Major" => Some(Value::from(self.major.as_str())),
            "Minor" => Some(Value::from(self.minor.as_str())),
            _ => None,
        }
    }

    fn render(self: &Arc<Self>, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.version)
    }
}

/// `.Capabilities.APIVersions`: a list with a `Has` method. Versions asked about and absent are recorded in
/// `misses` (a caller rendering against a cluster may re-read its discovery and render again).
#[derive(Debug, Clone)]
pub(crate) struct ApiVersions {
    versions: Arc<[String]>,
    misses: Misses,
}

/// API versions `Has` answered false for, shared by every template of one render.
pub(crate) type Misses = Arc<Mutex<BTreeSet<String>>>;

impl Object for ApiVersions {
    fn repr(self: &Arc<Self>) -> ObjectRepr {
        ObjectRepr::Seq
    }

    fn get_value(self: &Arc<Self>, key: &Value) -> Option<Value> {
        let index = key.as_usize()?;
        self.versions.get(index).map(|v| Value::from(v.as_str()))
    }

    fn enumerate(self: &Arc<Self>) -> Enumerator {
        Enumerator::Seq(self.versions.len())
    }

    fn call_method(
        self: &Arc<Self>,
        _state: &State<'_, '_>,
        method: &str,
        args: &[Value],
    ) -> Result<Value, Error> {
        match method {
            "Has" => {
                let wanted = args.first().and_then(Value::as_str).unwrap_or_default();
                let has = self.versions.iter().any(|v| v == wanted);
                if !has {
                    self.misses
                        .lock()
                        .unwrap_or_else(|p| p.into_inner())
                        .insert(wanted.to_owned());
                }
                Ok(Value::from(has))
            }
            other => Err(crate::funcs::fail(format!(
                "can't evaluate field {other} in type chartutil.VersionSet"
            ))),
        }
    }
}

/// Builds `.Capabilities` for a Kubernetes version and a set of served API versions; `Has` misses go to `misses`.
pub(crate) fn capabilities(
    kube_version: &str,
    api_versions: Arc<[String]>,
    misses: &Misses,
) -> Value {
    let helm = GoMap::value(
        [
            ("Version".to_string(), Value::from("v3.11.0")),
            ("GitCommit".to_string(), Value::from("")),
            ("GitTreeState".to_string(), Value::from("")),
            ("GoVersion".to_string(), Value::from("")),
        ]
        .into_iter()
        .collect(),
    );
    GoMap::value(
        [
            (
                "KubeVersion".to_string(),
                Value::from_object(KubeVersion::new(kube_version)),
            ),
            (
                "APIVersions".to_string(),
                Value::from_object(ApiVersions {
                    versions: api_versions,
                    misses: Arc::clone(misses),
                }),
            ),
            ("HelmVersion".to_string(), helm),
        ]
        .into_iter()
        .collect(),
    )
}

/// `.Chart`: Chart.yaml with Go field names (missing fields as zero values) plus `IsRoot`.
pub(crate) fn chart_object(chart: &Chart, name: &str, is_root: bool) -> Value {
    let raw = &chart.metadata_raw;
    let text = |key: &str| {
        Value::from(
            raw.get(key)
                .and_then(serde_json::Value::as_str)
                .unwrap_or_default(),
        )
    };
    let list = |key: &str| {
        from_json(
            raw.get(key)
                .filter(|v| v.is_array())
                .unwrap_or(&serde_json::json!([])),
        )
    };
    let maintainers: Vec<Value> = raw
        .get("maintainers")
        .and_then(serde_json::Value::as_array)
        .map(|list| {
            list.iter()
                .map(|m| {
                    let field = |k: &str| {
                        Value::from(
                            m.get(k)
                                .and_then(serde_json::Value::as_str)
                                .unwrap_or_default(),
                        )
                    };
                    GoMap::value(
                        [
                            ("Name".into(), field("name")),
                            ("Email".into(), field("email")),
                            ("URL".into(), field("url")),
                        ]
                        .into_iter()
                        .collect(),
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    let dependencies: Vec<Value> = chart
        .metadata
        .dependencies
        .iter()
        .map(|d| {
            GoMap::value(
                [
                    ("Name".into(), Value::from(d.name.as_str())),
                    ("Version".into(), Value::from(d.version.as_str())),
                    ("Repository".into(), Value::from(d.repository.as_str())),
                    ("Condition".into(), Value::from(d.condition.as_str())),
                    (
                        "Tags".into(),
                        Value::from(
                            d.tags
                                .iter()
                                .map(|t| Value::from(t.as_str()))
                                .collect::<Vec<_>>(),
                        ),
                    ),
                    ("Alias".into(), Value::from(d.alias.as_str())),
                    ("Enabled".into(), Value::from(true)),
                ]
                .into_iter()
                .collect(),
            )
        })
        .collect();
    let annotations = from_json(
        raw.get("annotations")
            .filter(|v| v.is_object())
            .unwrap_or(&serde_json::json!({})),
    );
    GoMap::value(
        [
            ("Name".into(), Value::from(name)),
            (
                "Version".into(),
                Value::from(chart.metadata.version.as_str()),
            ),
            (
                "AppVersion".into(),
                Value::from(chart.metadata.app_version.as_str()),
            ),
            (
                "APIVersion".into(),
                Value::from(chart.metadata.api_version.as_str()),
            ),
            ("Description".into(), text("description")),
            ("Home".into(), text("home")),
            ("Icon".into(), text("icon")),
            ("Type".into(), text("type")),
            ("KubeVersion".into(), text("kubeVersion")),
            ("Condition".into(), text("condition")),
            ("Tags".into(), text("tags")),
            (
                "Deprecated".into(),
                Value::from(
                    raw.get("deprecated")
                        .and_then(serde_json::Value::as_bool)
                        .unwrap_or(false),
                ),
            ),
            ("Keywords".into(), list("keywords")),
            ("Sources".into(), list("sources")),
            ("Maintainers".into(), Value::from(maintainers)),
            ("Dependencies".into(), Value::from(dependencies)),
            ("Annotations".into(), annotations),
            ("IsRoot".into(), Value::from(is_root)),
        ]
        .into_iter()
        .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_as_config_uses_base_names_and_yaml() {
        let files = Files::new([
            ("files/a.json".to_string(), b"{}".to_vec()),
            ("files/b.txt".to_string(), b"x\ny\n".to_vec()),
        ]);
        assert_eq!(files.as_map(false), "a.json: '{}'\nb.txt: |\n  x\n  y");
        assert_eq!(files.lines("files/b.txt").len(), 3);
        assert_eq!(files.glob("files/*.json").entries.len(), 1);
        assert_eq!(files.text("missing"), "");
    }

    #[test]
    fn kube_version_splits_major_and_minor() {
        let version = KubeVersion::new("1.20.3");
        assert_eq!(
            (
                version.version.as_str(),
                version.major.as_str(),
                version.minor.as_str()
            ),
            ("v1.20.3", "1", "20")
        );
    }
}

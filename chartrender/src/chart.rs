//! The in-memory chart model: Chart.yaml metadata, default values, templates, files and subcharts.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Deserialize;
use sha2::{Digest, Sha256};

use crate::load::{self, Budget, ChartFile, Limits, LoadError};
use crate::values_yaml::ValuesYamlError;

/// Why a chart's content is invalid after it was unpacked.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ChartError {
    /// Unpacking or reading failed.
    #[error(transparent)]
    Load(#[from] LoadError),
    /// There is no `Chart.yaml`.
    #[error("chart has no Chart.yaml")]
    MissingChartYaml,
    /// `Chart.yaml` is not valid YAML or has the wrong shape.
    #[error("parsing {path}")]
    ChartYaml {
        /// The file, relative to the top chart.
        path: String,
        /// The YAML error.
        #[source]
        source: serde_yaml::Error,
    },
    /// A required `Chart.yaml` field is empty.
    #[error("{path}: field {field:?} is required")]
    MissingField {
        /// The file, relative to the top chart.
        path: String,
        /// The missing field.
        field: &'static str,
    },
    /// `values.yaml` is not valid YAML or not a map.
    #[error("parsing {path}")]
    Values {
        /// The file, relative to the top chart.
        path: String,
        /// The YAML error.
        #[source]
        source: serde_yaml::Error,
    },
    /// `values.yaml` has a key or value Helm refuses (a null key, an integer key above `int64`, a `!!binary` value
    /// that is no base64), with sigs.k8s.io/yaml's message.
    #[error("cannot load {path}: error converting YAML to JSON: {message}")]
    ValuesRefused {
        /// The file, relative to the top chart.
        path: String,
        /// What sigs.k8s.io/yaml says of the key or value.
        message: String,
    },
    /// `values.schema.json` is not valid JSON.
    #[error("parsing {path}")]
    Schema {
        /// The file, relative to the top chart.
        path: String,
        /// The JSON error.
        #[source]
        source: serde_json::Error,
    },
    /// A subchart is invalid.
    #[error("loading subchart {name:?}")]
    Subchart {
        /// The subchart's directory or archive name under `charts/`.
        name: String,
        /// What is wrong with it.
        #[source]
        source: Box<ChartError>,
    },
}

/// A dependency entry of `Chart.yaml`.
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Dependency {
    /// Chart name of the dependency.
    #[serde(default)]
    pub name: String,
    /// Version constraint (informational here).
    #[serde(default)]
    pub version: String,
    /// Repository URL (informational here).
    #[serde(default)]
    pub repository: String,
    /// Comma-separated values paths; the first that resolves to a bool enables or disables the subchart.
    #[serde(default)]
    pub condition: String,
    /// Tags that enable the subchart when `.Values.tags.<tag>` is true.
    #[serde(default)]
    pub tags: Vec<String>,
    /// Name under which the subchart is rendered and its values are found.
    #[serde(default)]
    pub alias: String,
    /// `import-values`: names under the subchart's `exports`, or `{child, parent}` paths.
    #[serde(default, rename = "import-values")]
    pub import_values: Vec<serde_json::Value>,
}

/// `Chart.yaml` fields seedlet reads directly; the whole document is kept in [`Chart::metadata_raw`].
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Metadata {
    /// Chart name (required).
    #[serde(default)]
    pub name: String,
    /// Chart SemVer version (required).
    #[serde(default)]
    pub version: String,
    /// `v1` (default) or `v2`.
    #[serde(default)]
    pub api_version: String,
    /// Version of the packaged application.
    #[serde(default)]
    pub app_version: String,
    /// Dependencies (Chart.yaml v2; v1 charts use requirements.yaml, read the same way).
    #[serde(default)]
    pub dependencies: Vec<Dependency>,
}

/// A loaded Helm chart.
#[derive(Debug, Clone)]
pub struct Chart {
    /// Parsed `Chart.yaml` fields.
    pub metadata: Metadata,
    /// The whole `Chart.yaml` as JSON (for `.Chart`).
    pub metadata_raw: serde_json::Value,
    /// `values.yaml` as JSON (an empty map if absent).
    pub values: serde_json::Value,
    /// `values.schema.json`, if the chart has one (not among [`Chart::files`], as in Helm).
    pub schema: Option<serde_json::Value>,
    /// Files under `templates/`, sorted by name, names relative to the chart (`templates/x.yaml`).
    pub templates: Vec<ChartFile>,
    /// All other files (including `crds/`, never rendered), for `.Files`.
    pub files: Vec<ChartFile>,
    /// Subcharts from `charts/`, sorted by directory or archive name.
    pub subcharts: Vec<Chart>,
    digest: String,
}

impl Chart {
    /// Loads a chart from the bytes of a `.tgz` archive (the chart in a single top directory).
    ///
    /// # Errors
    /// Corrupt or unsafe archives, exceeded [`Limits`], and invalid chart content.
    pub fn from_archive(bytes: &[u8], limits: &Limits) -> Result<Self, ChartError> {
        let mut budget = Budget::new(*limits);
        let files = load::unpack_archive(bytes, &mut budget)?;
        // The archive's own digest names the chart; its unpacked files need no second one.
        let digest = hex::encode(Sha256::digest(bytes));
        Self::from_files_digested(files, &mut budget, 0, digest)
    }

    /// Loads a chart from a directory (`.helmignore` applied, symbolic links rejected).
    ///
    /// # Errors
    /// Unreadable files, exceeded [`Limits`], and invalid chart content.
    pub fn from_dir(path: &Path, limits: &Limits) -> Result<Self, ChartError> {
        let mut budget = Budget::new(*limits);
        let files = load::read_dir(path, &mut budget)?;
        Self::from_files(files, &mut budget, 0)
    }

    /// Loads a chart from bytes: a gzipped archive, or else a plain (uncompressed) tar stream.
    ///
    /// # Errors
    /// As [`Chart::from_archive`].
    pub fn from_bytes(bytes: &[u8], limits: &Limits) -> Result<Self, ChartError> {
        if bytes.starts_with(&[0x1f, 0x8b]) {
            return Self::from_archive(bytes, limits);
        }
        let mut gzipped = Vec::new();
        {
            use std::io::Write;
            let mut encoder =
                flate2::write::GzEncoder::new(&mut gzipped, flate2::Compression::fast());
            encoder
                .write_all(bytes)
                .map_err(|source| LoadError::Tar { source })?;
            encoder
                .finish()
                .map_err(|source| LoadError::Tar { source })?;
        }
        Self::from_archive(&gzipped, limits)
    }

    /// Digest identifying the chart's content, used as the translation cache key.
    pub fn digest(&self) -> &str {
        &self.digest
    }

    /// The chart's name from `Chart.yaml`.
    pub fn name(&self) -> &str {
        &self.metadata.name
    }

    fn from_archive_with(
        bytes: &[u8],
        budget: &mut Budget,
        depth: usize,
        digest: String,
    ) -> Result<Self, ChartError> {
        if depth > budget.limits.max_depth {
            return Err(LoadError::TooDeep {
                limit: budget.limits.max_depth,
            }
            .into());
        }
        let files = load::unpack_archive(bytes, budget)?;
        Self::from_files_digested(files, budget, depth, digest)
    }

    /// Builds a chart from its files (names relative to the chart directory), named by the digest of the files.
    fn from_files(
        files: Vec<ChartFile>,
        budget: &mut Budget,
        depth: usize,
    ) -> Result<Self, ChartError> {
        let mut hasher = Sha256::new();
        for file in &files {
            hasher.update((file.name.len() as u64).to_le_bytes());
            hasher.update(file.name.as_bytes());
            hasher.update((file.data.len() as u64).to_le_bytes());
            hasher.update(&file.data);
        }
        let digest = hex::encode(hasher.finalize());
        Self::from_files_digested(files, budget, depth, digest)
    }

    /// Builds a chart from its files, named by `digest`.
    fn from_files_digested(
        files: Vec<ChartFile>,
        budget: &mut Budget,
        depth: usize,
        digest: String,
    ) -> Result<Self, ChartError> {
        let mut chart_yaml = None;
        let mut requirements = None;
        let mut values = None;
        let mut schema = None;
        let mut templates = Vec::new();
        let mut other = Vec::new();
        let mut sub_dirs: BTreeMap<String, Vec<ChartFile>> = BTreeMap::new();
        let mut sub_archives: BTreeMap<String, Vec<u8>> = BTreeMap::new();
        for file in files {
            match file.name.as_str() {
                "Chart.yaml" => chart_yaml = Some(file.data),
                "values.yaml" => values = Some(file.data),
                "values.schema.json" => schema = Some(file.data),
                "requirements.yaml" => requirements = Some(file.data),
                name if name.starts_with("templates/") => templates.push(file),
                name if name.starts_with("charts/") => {
                    let rest = &name["charts/".len()..];
                    match rest.split_once('/') {
                        Some((dir, inner)) if !dir.starts_with(['_', '.']) => {
                            let inner = inner.to_string();
                            sub_dirs
                                .entry(dir.to_string())
                                .or_default()
                                .push(ChartFile {
                                    name: inner,
                                    data: file.data,
                                });
                        }
                        None if rest.ends_with(".tgz") && !rest.starts_with(['_', '.']) => {
                            sub_archives.insert(rest.to_string(), file.data);
                        }
                        _ => other.push(file),
                    }
                }
                _ => other.push(file),
            }
        }
        let chart_yaml = chart_yaml.ok_or(ChartError::MissingChartYaml)?;
        let mut metadata_raw: serde_json::Value =
            parse_yaml_map(&chart_yaml).map_err(|source| ChartError::ChartYaml {
                path: "Chart.yaml".into(),
                source,
            })?;
        stringify_scalar_fields(&mut metadata_raw);
        let mut metadata: Metadata =
            serde_json::from_value(metadata_raw.clone()).map_err(|e| ChartError::ChartYaml {
                path: "Chart.yaml".into(),
                source: serde::de::Error::custom(e.to_string()),
            })?;
        if metadata.name.is_empty() {
            return Err(ChartError::MissingField {
                path: "Chart.yaml".into(),
                field: "name",
            });
        }
        if metadata.version.is_empty() {
            return Err(ChartError::MissingField {
                path: "Chart.yaml".into(),
                field: "version",
            });
        }
        if metadata.api_version.is_empty() {
            metadata.api_version = "v1".into();
        }
        if metadata.dependencies.is_empty()
            && let Some(requirements) = requirements
        {
            #[derive(Deserialize)]
            struct Requirements {
                #[serde(default)]
                dependencies: Vec<Dependency>,
            }
            let parsed: Requirements =
                from_yaml(&requirements).map_err(|source| ChartError::ChartYaml {
                    path: "requirements.yaml".into(),
                    source,
                })?;
            metadata.dependencies = parsed.dependencies;
        }
        let values = match values {
            Some(data) => {
                let has_subcharts = !(sub_dirs.is_empty() && sub_archives.is_empty());
                parsed_values(data, has_subcharts, budget)?
            }
            None => serde_json::Value::Object(serde_json::Map::new()),
        };
        let schema = schema
            .map(|data| {
                serde_json::from_slice::<serde_json::Value>(&data).map_err(|source| {
                    ChartError::Schema {
                        path: "values.schema.json".into(),
                        source,
                    }
                })
            })
            .transpose()?;
        let mut subcharts = Vec::new();
        for (name, files) in sub_dirs {
            let sub_digest = subchart_digest(&digest, &name);
            let chart =
                Self::from_files_digested(files, budget, depth, sub_digest).map_err(|source| {
                    ChartError::Subchart {
                        name: name.clone(),
                        source: Box::new(source),
                    }
                })?;
            subcharts.push((name, chart));
        }
        for (name, bytes) in sub_archives {
            let sub_digest = subchart_digest(&digest, &name);
            let chart = Self::from_archive_with(&bytes, budget, depth + 1, sub_digest).map_err(
                |source| ChartError::Subchart {
                    name: name.clone(),
                    source: Box::new(source),
                },
            )?;
            subcharts.push((name, chart));
        }
        subcharts.sort_by(|a, b| a.0.cmp(&b.0));
        templates.sort_by(|a, b| a.name.cmp(&b.name));
        other.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(Self {
            metadata,
            metadata_raw,
            values,
            schema,
            templates,
            files: other,
            subcharts: subcharts.into_iter().map(|(_, chart)| chart).collect(),
            digest,
        })
    }
}

/// A subchart's digest: its parent's digest (which covers the subchart's content) and its place in the parent,
/// so loading a chart hashes its bytes once and not again per subchart.
fn subchart_digest(parent: &str, name: &str) -> String {
    let mut hasher = Sha256::new();
    hasher.update(parent.as_bytes());
    hasher.update(b"/charts/");
    hasher.update(name.as_bytes());
    hex::encode(hasher.finalize())
}

/// `values.yaml` parsed, or the copy of an identical file parsed earlier in the same load.
/// A chart's parsed `values.yaml`, from the load's earlier parse of the same text if there was one. A parse is
/// kept for later charts of the load (a copy of the values and the text) only where there may be some: the chart
/// has subcharts, or is one (the load already kept values). The usual lone chart keeps nothing.
fn parsed_values(
    data: Vec<u8>,
    has_subcharts: bool,
    budget: &mut Budget,
) -> Result<serde_json::Value, ChartError> {
    if let Some((_, values)) = budget.parsed_values.iter().find(|(seen, _)| *seen == data) {
        return Ok(values.clone());
    }
    let values = parse_values_map(&data).map_err(|e| match e {
        ValuesYamlError::Yaml(source) => ChartError::Values {
            path: "values.yaml".into(),
            source,
        },
        ValuesYamlError::Refused(message) => ChartError::ValuesRefused {
            path: "values.yaml".into(),
            message,
        },
    })?;
    if has_subcharts || !budget.parsed_values.is_empty() {
        budget.parsed_values.push((data, values.clone()));
    }
    Ok(values)
}

/// Turns unquoted numeric or boolean `Chart.yaml` scalars (`appVersion: 2.5`) into the strings Helm reads them as.
fn stringify_scalar_fields(raw: &mut serde_json::Value) {
    let Some(map) = raw.as_object_mut() else {
        return;
    };
    for key in [
        "name",
        "version",
        "appVersion",
        "apiVersion",
        "kubeVersion",
        "description",
        "type",
        "icon",
        "home",
    ] {
        if let Some(value) = map.get_mut(key)
            && (value.is_number() || value.is_boolean())
        {
            *value = serde_json::Value::String(value.to_string());
        }
    }
}

/// Parses YAML from a chart, a values file or a template, after [`seedlet_yamlguard::check`]:
/// the parser's time grows with the square of flow-collection nesting.
pub(crate) fn from_yaml<T: serde::de::DeserializeOwned>(
    data: &[u8],
) -> Result<T, serde_yaml::Error> {
    seedlet_yamlguard::check(data).map_err(<serde_yaml::Error as serde::de::Error>::custom)?;
    serde_yaml::from_slice(data)
}

/// Parses a values file: a map, with YAML 1.1 booleans read as Helm's parser reads them ([`crate::yaml11`]) and
/// the keys Helm refuses refused ([`crate::values_yaml`]).
pub(crate) fn parse_values_map(data: &[u8]) -> Result<serde_json::Value, ValuesYamlError> {
    let text = std::str::from_utf8(data);
    if let Ok(text) = text
        && let Some(map) = crate::blockyaml::parse_yaml11_map(text)
    {
        return Ok(map);
    }
    let rewritten = match text {
        Ok(text) => Some(
            crate::yaml11::as_yaml11(text).map_err(|e| ValuesYamlError::Refused(e.to_string()))?,
        ),
        Err(_) => None,
    };
    let data = rewritten.as_deref().map_or(data, str::as_bytes);
    if let Some(map) = crate::blockyaml::parse_map(data) {
        return Ok(map);
    }
    if data.iter().all(u8::is_ascii_whitespace) {
        return Ok(serde_json::Value::Object(serde_json::Map::new()));
    }
    as_map(crate::values_yaml::from_slice(data)?).map_err(ValuesYamlError::Yaml)
}

/// Parses a YAML document that must be a map (empty documents give an empty map).
pub(crate) fn parse_yaml_map(data: &[u8]) -> Result<serde_json::Value, serde_yaml::Error> {
    if let Some(map) = crate::blockyaml::parse_map(data) {
        return Ok(map);
    }
    if data.iter().all(u8::is_ascii_whitespace) {
        return Ok(serde_json::Value::Object(serde_json::Map::new()));
    }
    as_map(from_yaml(data)?)
}

/// A parsed document as a map: a null document is an empty map, any other non-map an error.
fn as_map(value: serde_json::Value) -> Result<serde_json::Value, serde_yaml::Error> {
    match value {
        serde_json::Value::Null => Ok(serde_json::Value::Object(serde_json::Map::new())),
        serde_json::Value::Object(_) => Ok(value),
        other => Err(serde::de::Error::custom(format!(
            "expected a map at the top level, found {other}"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(name: &str, data: &str) -> ChartFile {
        ChartFile {
            name: name.into(),
            data: data.as_bytes().to_vec(),
        }
    }

    #[test]
    fn from_files_sorts_templates_files_and_subcharts() {
        let mut budget = Budget::new(Limits::default());
        let chart = Chart::from_files(
            vec![
                file("Chart.yaml", "name: a\nversion: 1.0.0\n"),
                file("templates/b.yaml", "b"),
                file("templates/_h.tpl", "h"),
                file("crds/x.yaml", "x"),
                file("charts/sub/Chart.yaml", "name: sub\nversion: 0.1.0\n"),
                file("charts/sub/values.yaml", "port: 1\n"),
                file("charts/_ignored/Chart.yaml", "nope"),
            ],
            &mut budget,
            0,
        )
        .unwrap();
        assert_eq!(chart.metadata.api_version, "v1");
        assert_eq!(
            chart
                .templates
                .iter()
                .map(|f| f.name.as_str())
                .collect::<Vec<_>>(),
            ["templates/_h.tpl", "templates/b.yaml"]
        );
        assert_eq!(chart.subcharts.len(), 1);
        assert_eq!(chart.subcharts[0].values["port"], 1);
        assert!(chart.files.iter().any(|f| f.name == "crds/x.yaml"));
    }

    #[test]
    fn from_files_requires_name_and_version() {
        let mut budget = Budget::new(Limits::default());
        let err = Chart::from_files(vec![file("Chart.yaml", "version: 1.0.0\n")], &mut budget, 0)
            .unwrap_err();
        assert!(matches!(
            err,
            ChartError::MissingField { field: "name", .. }
        ));
        let err =
            Chart::from_files(vec![file("values.yaml", "a: 1\n")], &mut budget, 0).unwrap_err();
        assert!(matches!(err, ChartError::MissingChartYaml));
    }

    #[test]
    fn subchart_digests_follow_parent_and_name() {
        let a = subchart_digest("p1", "sub");
        assert_eq!(a.len(), 64);
        assert_eq!(a, subchart_digest("p1", "sub"));
        // (parent, name) pairs that must all differ from ("p1", "sub").
        for (parent, name) in [("p2", "sub"), ("p1", "sub2"), ("p1/charts/s", "ub")] {
            assert_ne!(a, subchart_digest(parent, name), "{parent} {name}");
        }
    }

    #[test]
    fn identical_values_files_are_parsed_once_per_load() {
        let mut budget = Budget::new(Limits::default());
        let text = b"a: yes\nb: [1, 2]\n".to_vec();
        let first = parsed_values(text.clone(), true, &mut budget).unwrap();
        let second = parsed_values(text, false, &mut budget).unwrap();
        let other = parsed_values(b"a: no\n".to_vec(), false, &mut budget).unwrap();
        assert_eq!(first, serde_json::json!({"a": true, "b": [1, 2]}));
        assert_eq!(second, first);
        assert_eq!(other, serde_json::json!({"a": false}));
        assert_eq!(budget.parsed_values.len(), 2);
        assert!(parsed_values(b"- 1\n".to_vec(), false, &mut budget).is_err());
        // A lone chart's values are not kept.
        let mut alone = Budget::new(Limits::default());
        parsed_values(b"a: 1\n".to_vec(), false, &mut alone).unwrap();
        assert!(alone.parsed_values.is_empty());
    }

    #[test]
    fn parse_yaml_map_rejects_scalars_and_accepts_empty_files() {
        assert!(parse_yaml_map(b"just a string").is_err());
        assert_eq!(parse_yaml_map(b"\n").unwrap(), serde_json::json!({}));
    }
}

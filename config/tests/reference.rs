//! Keeps `docs/configuration.md` in sync with the configuration types of both components.
//!
//! The field list comes from the types themselves: a tracing deserializer walks every struct serde
//! knows (including optional blocks that a serialized default leaves out), every `Option` as
//! `Some`, every sequence with one item and every map with one `<name>` key. The traced value of the
//! agent configuration then has every ignored block set, so the crate's own
//! [`GardenletConfiguration::ignored_fields`] names them all. The doc's field tables must list
//! exactly these paths (new fields must be documented, removed ones dropped), documented defaults
//! must match the defaulted configuration, and every YAML example must load and validate.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use serde::Deserialize;
use serde::de::{self, DeserializeSeed, IntoDeserializer, MapAccess, SeqAccess, Visitor};
use serde_json::Value;

use seedlet_config::{AnyConfig, Duration, GardenControllerConfiguration, GardenletConfiguration};

const DOC: &str = include_str!("../../docs/configuration.md");

const AGENT_SECTION: &str = "## Agent: GardenletConfiguration";
const IGNORED_SECTION: &str = "## Accepted but ignored gardenlet fields";
const EXTENSIONS_SECTION: &str = "## Seedlet additions to the gardenlet format";
const GARDEN_SECTION: &str = "## Garden controller: GardenControllerConfiguration";
const ENVIRONMENT_SECTION: &str = "## Environment variables";

/// Sub-trees documented as one row: the Seed's metadata is a Kubernetes `ObjectMeta`.
const OPAQUE: &[&str] = &["seedConfig.metadata"];

/// Placeholder key of traced maps; the doc writes map entries as `path.<name>`.
const MAP_KEY: &str = "<name>";

// ---------------------------------------------------------------------------------------------
// The tracing deserializer.

#[derive(Debug)]
struct TraceError(String);

impl fmt::Display for TraceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for TraceError {}

impl de::Error for TraceError {
    fn custom<T: fmt::Display>(msg: T) -> Self {
        TraceError(msg.to_string())
    }
}

/// Deserializes any type with one plausible value per leaf, recording the path of every leaf.
struct Tracer<'a> {
    path: String,
    leaves: &'a mut BTreeSet<String>,
}

impl<'a> Tracer<'a> {
    fn child(&mut self, key: &str) -> Tracer<'_> {
        let path = if self.path.is_empty() {
            key.to_owned()
        } else {
            format!("{}.{key}", self.path)
        };
        Tracer {
            path,
            leaves: self.leaves,
        }
    }

    fn leaf(self) -> Self {
        self.leaves.insert(self.path.clone());
        self
    }
}

/// Traces `T` from the root and returns the traced value and its leaf paths.
fn trace<T: for<'de> Deserialize<'de>>() -> (T, BTreeSet<String>) {
    let mut leaves = BTreeSet::new();
    let value = T::deserialize(Tracer {
        path: String::new(),
        leaves: &mut leaves,
    })
    .unwrap_or_else(|error| panic!("tracing {}: {error}", std::any::type_name::<T>()));
    (value, leaves)
}

macro_rules! leaf_number {
    ($($method:ident => $visit:ident($value:expr)),* $(,)?) => {
        $(fn $method<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, TraceError> {
            self.leaf();
            visitor.$visit($value)
        })*
    };
}

impl<'de> de::Deserializer<'de> for Tracer<'_> {
    type Error = TraceError;

    leaf_number! {
        deserialize_bool => visit_bool(true),
        deserialize_i8 => visit_i8(1),
        deserialize_i16 => visit_i16(1),
        deserialize_i32 => visit_i32(1),
        deserialize_i64 => visit_i64(1),
        deserialize_u8 => visit_u8(1),
        deserialize_u16 => visit_u16(1),
        deserialize_u32 => visit_u32(1),
        deserialize_u64 => visit_u64(1),
        deserialize_f32 => visit_f32(1.0),
        deserialize_f64 => visit_f64(1.0),
        deserialize_char => visit_char('x'),
        // "1s" is a valid string, duration and quantity alike.
        deserialize_any => visit_str("1s"),
        deserialize_str => visit_str("1s"),
        deserialize_string => visit_str("1s"),
        deserialize_bytes => visit_bytes(b"1s"),
        deserialize_byte_buf => visit_bytes(b"1s"),
    }

    fn deserialize_unit<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, TraceError> {
        self.leaf();
        visitor.visit_unit()
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, TraceError> {
        visitor.visit_some(self)
    }

    fn deserialize_unit_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, TraceError> {
        self.leaf();
        visitor.visit_unit()
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, TraceError> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_seq<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, TraceError> {
        let Tracer { path, leaves } = self;
        visitor.visit_seq(OneItem {
            tracer: Some(Tracer {
                path: format!("{path}[]"),
                leaves,
            }),
        })
    }

    fn deserialize_tuple<V: Visitor<'de>>(
        self,
        _len: usize,
        visitor: V,
    ) -> Result<V::Value, TraceError> {
        self.deserialize_seq(visitor)
    }

    fn deserialize_tuple_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _len: usize,
        visitor: V,
    ) -> Result<V::Value, TraceError> {
        self.deserialize_seq(visitor)
    }

    fn deserialize_map<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, TraceError> {
        self.deserialize_struct("", &[MAP_KEY], visitor)
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, TraceError> {
        let fields = if OPAQUE.contains(&self.path.as_str()) {
            self.leaves.insert(self.path.clone());
            &[]
        } else {
            fields
        };
        visitor.visit_map(Fields {
            tracer: self,
            fields: fields.iter(),
            current: None,
        })
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, TraceError> {
        self.leaf();
        let first = variants
            .first()
            .ok_or_else(|| TraceError("enum without variants".into()))?;
        visitor.visit_enum((*first).into_deserializer())
    }

    fn deserialize_identifier<V: Visitor<'de>>(self, _visitor: V) -> Result<V::Value, TraceError> {
        Err(TraceError(format!(
            "unexpected identifier at {}",
            self.path
        )))
    }

    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, TraceError> {
        visitor.visit_unit()
    }
}

/// A sequence of exactly one traced item.
struct OneItem<'a> {
    tracer: Option<Tracer<'a>>,
}

impl<'de> SeqAccess<'de> for OneItem<'_> {
    type Error = TraceError;

    fn next_element_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, TraceError> {
        self.tracer
            .take()
            .map(|tracer| seed.deserialize(tracer))
            .transpose()
    }
}

/// A map holding every field of a struct once.
struct Fields<'a> {
    tracer: Tracer<'a>,
    fields: std::slice::Iter<'static, &'static str>,
    current: Option<&'static str>,
}

impl<'de> MapAccess<'de> for Fields<'_> {
    type Error = TraceError;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, TraceError> {
        let Some(field) = self.fields.next() else {
            return Ok(None);
        };
        self.current = Some(field);
        seed.deserialize((*field).into_deserializer()).map(Some)
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(
        &mut self,
        seed: V,
    ) -> Result<V::Value, TraceError> {
        let field = self
            .current
            .take()
            .ok_or_else(|| TraceError("value before key".into()))?;
        seed.deserialize(self.tracer.child(field))
    }
}

// ---------------------------------------------------------------------------------------------
// Reading the doc.

/// The text of the `## ` section starting with `heading`, up to the next `## ` heading.
fn section(heading: &str) -> &'static str {
    let start = DOC
        .find(&format!("\n{heading}"))
        .unwrap_or_else(|| panic!("docs/configuration.md has no section {heading:?}"))
        + 1;
    let rest = &DOC[start..];
    let end = rest[heading.len()..]
        .find("\n## ")
        .map_or(rest.len(), |end| end + heading.len() + 1);
    &rest[..end]
}

/// One row of a field table: the path (first cell) and the remaining cells.
#[derive(Debug)]
struct Row {
    path: String,
    cells: Vec<String>,
}

/// Rows of the field tables in `text` (tables whose first header cell is `Path`).
fn rows(text: &str) -> Vec<Row> {
    let mut rows = Vec::new();
    let mut in_table = false;
    for line in text.lines() {
        let line = line.trim();
        if !line.starts_with('|') {
            in_table = false;
            continue;
        }
        let cells: Vec<String> = line
            .trim_matches('|')
            .split(" | ")
            .map(|cell| cell.trim().to_owned())
            .collect();
        if cells[0] == "Path" {
            in_table = true;
            continue;
        }
        if !in_table || cells[0].starts_with("---") {
            continue;
        }
        let path = cells[0]
            .strip_prefix('`')
            .and_then(|cell| cell.strip_suffix('`'))
            .unwrap_or_else(|| panic!("path cell {:?} is not one `code` span", cells[0]));
        rows.push(Row {
            path: path.to_owned(),
            cells: cells[1..].to_vec(),
        });
    }
    rows
}

fn paths(rows: &[Row]) -> BTreeSet<String> {
    let mut seen = BTreeSet::new();
    for row in rows {
        assert!(
            seen.insert(row.path.clone()),
            "{} is documented twice",
            row.path
        );
    }
    seen
}

/// Asserts the two sets are equal, naming what is missing from the doc and what is stale in it.
fn assert_documented(what: &str, code: &BTreeSet<String>, doc: &BTreeSet<String>) {
    let missing: Vec<_> = code.difference(doc).collect();
    let stale: Vec<_> = doc.difference(code).collect();
    assert!(
        missing.is_empty() && stale.is_empty(),
        "{what}: fields not documented in docs/configuration.md: {missing:?}; \
         documented but not in the code: {stale:?}"
    );
}

/// The code fences with `yaml` info strings.
fn yaml_blocks() -> Vec<&'static str> {
    let mut blocks = Vec::new();
    let mut rest = DOC;
    while let Some(start) = rest.find("```yaml\n") {
        let body = &rest[start + "```yaml\n".len()..];
        let end = body.find("```").expect("unterminated yaml block");
        blocks.push(&body[..end]);
        rest = &body[end + 3..];
    }
    blocks
}

// ---------------------------------------------------------------------------------------------
// The field sets of the code.

/// Every ignored block of the agent: the crate's own list, for a value with every block set.
fn agent_ignored() -> BTreeSet<String> {
    let (config, _) = trace::<GardenletConfiguration>();
    config.ignored_fields().into_iter().collect()
}

fn under(path: &str, prefix: &str) -> bool {
    path == prefix
        || path
            .strip_prefix(prefix)
            .is_some_and(|rest| rest.starts_with('.') || rest.starts_with('['))
}

/// Leaf paths of the agent that seedlet implements (not inside an ignored block).
fn agent_implemented() -> BTreeSet<String> {
    let ignored = agent_ignored();
    let (_, leaves) = trace::<GardenletConfiguration>();
    leaves
        .into_iter()
        .filter(|leaf| !ignored.iter().any(|block| under(leaf, block)))
        .collect()
}

/// The defaulted configuration of one kind as JSON, from a document with only `apiVersion`/`kind`
/// (and the Seed name the agent requires).
fn defaulted(document: &str) -> Value {
    match seedlet_config::parse(document, "defaults.yaml").expect("minimal document is valid") {
        AnyConfig::Gardenlet(config) => serde_json::to_value(config).expect("serializes"),
        AnyConfig::GardenController(config) => serde_json::to_value(config).expect("serializes"),
    }
}

const MINIMAL_AGENT: &str = "apiVersion: gardenlet.config.gardener.cloud/v1alpha1
kind: GardenletConfiguration
seedConfig:
  metadata:
    name: minimal
  spec:
    provider:
      type: local
      region: local
    networks:
      pods: 10.1.0.0/16
      services: 10.2.0.0/16
";

const MINIMAL_GARDEN: &str =
    "apiVersion: seedlet.gardener.cloud/v1alpha1\nkind: GardenControllerConfiguration\n";

/// `path` → scalar value of every leaf the serialized configuration has.
fn scalar_leaves(value: &Value, path: String, out: &mut BTreeMap<String, Value>) {
    match value {
        Value::Object(map) => {
            for (key, child) in map {
                let child_path = if path.is_empty() {
                    key.clone()
                } else {
                    format!("{path}.{key}")
                };
                scalar_leaves(child, child_path, out);
            }
        }
        other => {
            out.insert(path, other.clone());
        }
    }
}

/// Whether the documented default cell (`` `x` ``, or `empty` for the empty string) states `value`.
fn default_matches(cell: &str, value: &Value) -> bool {
    let text = cell.trim_matches('`');
    match value {
        Value::Bool(flag) => text == flag.to_string(),
        Value::Number(number) => text.parse::<f64>().ok() == number.as_f64(),
        Value::String(string) if string.is_empty() => text == "empty",
        Value::String(string) => match string.parse::<Duration>() {
            Ok(duration) if !string.is_empty() => text.parse::<Duration>().ok() == Some(duration),
            _ => text == string,
        },
        _ => false,
    }
}

fn check_defaults(rows: &[Row], defaults: &Value, what: &str) {
    let mut leaves = BTreeMap::new();
    scalar_leaves(defaults, String::new(), &mut leaves);
    let mut wrong = Vec::new();
    for row in rows {
        let cell = row.cells.get(1).map_or("", String::as_str);
        if let Some(value) = leaves.get(&row.path)
            && !default_matches(cell, value)
        {
            wrong.push(format!(
                "{}: doc says {cell:?}, code says {value}",
                row.path
            ));
        }
    }
    assert!(
        wrong.is_empty(),
        "{what}: wrong defaults in the doc: {wrong:#?}"
    );
}

// ---------------------------------------------------------------------------------------------
// The tests.

#[test]
fn every_implemented_agent_field_is_documented_in_the_agent_section() {
    let doc = paths(&rows(section(AGENT_SECTION)));
    assert_documented("GardenletConfiguration", &agent_implemented(), &doc);
}

#[test]
fn every_ignored_gardenlet_field_is_listed_in_the_ignored_section() {
    let ignored = agent_ignored();
    assert!(
        ignored.contains("controllers.shoot.dnsEntryTTLSeconds") && ignored.contains("etcdConfig"),
        "the traced configuration sets every ignored block: {ignored:?}"
    );
    let doc = paths(&rows(section(IGNORED_SECTION)));
    assert_documented("ignored gardenlet fields", &ignored, &doc);
}

#[test]
fn every_garden_controller_field_is_documented_in_its_section() {
    let (_, leaves) = trace::<GardenControllerConfiguration>();
    let doc = paths(&rows(section(GARDEN_SECTION)));
    assert_documented("GardenControllerConfiguration", &leaves, &doc);
}

#[test]
fn documented_defaults_match_the_defaulted_configurations() {
    check_defaults(
        &rows(section(AGENT_SECTION)),
        &defaulted(MINIMAL_AGENT),
        "GardenletConfiguration",
    );
    check_defaults(
        &rows(section(GARDEN_SECTION)),
        &defaulted(MINIMAL_GARDEN),
        "GardenControllerConfiguration",
    );
}

#[test]
fn seedlet_additions_are_listed_as_such_and_exist() {
    let implemented = agent_implemented();
    let additions = paths(&rows(section(EXTENSIONS_SECTION)));
    for path in &additions {
        assert!(
            implemented.contains(path),
            "{path} is listed as a seedlet addition but is no agent field"
        );
    }
    for known in [
        "gardenClientConnection.bootstrapKubeconfigFile",
        "gardenClientConnection.bootstrapApprovalTimeout",
        "controllers.shoot.enabled",
        "controllers.managedResource.enabled",
        "controllers.managedResource.concurrentSyncs",
        "controllers.managedResource.syncPeriod",
        "controllers.shootState.eventBatchPeriod",
    ] {
        assert!(
            additions.contains(known),
            "{known} is not listed as a seedlet addition"
        );
    }
}

#[test]
fn environment_section_names_every_variable_seedlet_reads() {
    let text = section(ENVIRONMENT_SECTION);
    for variable in [
        "`KUBECONFIG`",
        "`GARDEN_KUBECONFIG`",
        "`RUST_LOG`",
        "`NOTIFY_SOCKET`",
        "`WATCHDOG_USEC`",
        "`WATCHDOG_PID`",
        "`HOSTNAME`",
    ] {
        assert!(text.contains(variable), "{variable} is not documented");
    }
}

#[test]
fn every_yaml_example_loads_and_validates_and_both_kinds_have_one() {
    let mut kinds = BTreeSet::new();
    for (index, block) in yaml_blocks().into_iter().enumerate() {
        let config = seedlet_config::parse(block, format!("docs example {index}"))
            .unwrap_or_else(|error| panic!("example {index} does not load: {error}\n{block}"));
        assert!(
            config.ignored_fields().is_empty(),
            "example {index} sets ignored fields: {:?}",
            config.ignored_fields()
        );
        kinds.insert(config.kind());
    }
    assert_eq!(
        kinds,
        BTreeSet::from(["GardenControllerConfiguration", "GardenletConfiguration"])
    );
}

#[test]
fn the_tracer_sees_optional_blocks_that_serialized_defaults_leave_out() {
    let (_, leaves) = trace::<GardenletConfiguration>();
    let defaults = defaulted(MINIMAL_AGENT);
    assert!(leaves.contains("gardenClientConnection.kubeconfigValidity.validity"));
    assert!(
        defaults
            .pointer("/gardenClientConnection/kubeconfigValidity/validity")
            .is_none()
    );
    assert!(leaves.contains("resources.capacity.<name>"));
    assert!(leaves.contains("controllers.seedCare.conditionThresholds[].type"));
    assert!(leaves.contains("seedConfig.metadata"));
    assert!(
        !leaves
            .iter()
            .any(|leaf| leaf.starts_with("seedConfig.metadata."))
    );
}

#[test]
fn gardenlet_spelling_of_the_garden_ca_field_is_accepted_and_reported_as_ignored() {
    let document = format!("{MINIMAL_AGENT}gardenClientConnection:\n  gardenClusterCACert: Y2E=\n");
    let config = seedlet_config::parse(&document, "ca.yaml").expect("gardenlet's field name loads");
    assert_eq!(
        config.ignored_fields(),
        ["gardenClientConnection.gardenClusterCACert"]
    );
}

#[test]
fn doc_rows_are_parsed_only_from_path_tables() {
    let text = "intro\n| Path | Type |\n|---|---|\n| `a.b` | int |\n\n| Variable | Use |\n|---|---|\n| `X` | y |\n";
    let found: Vec<_> = rows(text).into_iter().map(|row| row.path).collect();
    assert_eq!(found, ["a.b"]);
}

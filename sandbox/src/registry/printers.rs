//! Server-side printing (kube-apiserver's TableConvertors): the columns and cells of a
//! `meta.k8s.io/v1` Table for a kind — pkg/printers' columns for the built-in kinds it lists,
//! a CRD version's `additionalPrinterColumns`, and Name/Created At (Name/Age for CRDs) otherwise.
//! Column descriptions are the API field documentation, as kube-apiserver takes them from the
//! types' swagger docs.

use k8s_openapi::api::certificates::v1::CertificateSigningRequestSpec;
use k8s_openapi::api::coordination::v1::LeaseSpec;
use k8s_openapi::api::core::v1::{ConfigMap, Event, ObjectReference, PodSpec, PodStatus, Secret};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use schemars::JsonSchema;
use serde_json::{Value, json};

use crate::registry::jsonpath::JsonPath;
use crate::resources::ResourceType;

mod more;

/// One column of a Table.
#[derive(Clone, Debug, PartialEq)]
pub struct Column {
    /// Header.
    pub name: String,
    /// `string`, `integer`, `number`, `boolean` or `date`.
    pub kind: String,
    /// `name` for the name column, else usually empty.
    pub format: String,
    /// What the column shows.
    pub description: String,
    /// 0 for default output, 1 and more for `-o wide`.
    pub priority: i64,
}

impl Column {
    /// The column as a TableColumnDefinition.
    pub fn definition(&self) -> Value {
        json!({
            "name": self.name,
            "type": self.kind,
            "format": self.format,
            "description": self.description,
            "priority": self.priority,
        })
    }
}

fn column(name: &str, kind: &str, description: String) -> Column {
    Column {
        name: name.to_string(),
        kind: kind.to_string(),
        format: String::new(),
        description,
        priority: 0,
    }
}

fn wide(mut column: Column) -> Column {
    column.priority = 1;
    column
}

/// The CSR printer's column descriptions in kube-apiserver v1.32, which come from the internal
/// API's documentation and differ from the v1 schema's.
const CSR_SIGNER_NAME: &str = "Requested signer for the request. It is a qualified name in the form: `scope-hostname.io/name`. If empty, it will be defaulted:\n 1. If it's a kubelet client certificate, it is assigned\n    \"kubernetes.io/kube-apiserver-client-kubelet\".\n 2. If it's a kubelet serving certificate, it is assigned\n    \"kubernetes.io/kubelet-serving\".\n 3. Otherwise, it is assigned \"kubernetes.io/legacy-unknown\".\nDistribution of trust for signers happens out of band. You can select on this field using `spec.signerName`.";
const CSR_REQUESTOR: &str = "Base64-encoded PKCS#10 CSR data";
const CSR_CONDITION: &str = "Conditions applied to the request, such as approval or denial.";

/// The documentation of `field` of `T` (an API type's swagger doc for that field).
fn doc<T: JsonSchema>(field: &str) -> String {
    let schema = schemars::SchemaGenerator::default().into_root_schema_for::<T>();
    schema
        .as_value()
        .pointer(&format!("/properties/{field}/description"))
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string()
}

fn name_column() -> Column {
    let mut name = column("Name", "string", doc::<ObjectMeta>("name"));
    name.format = "name".into();
    name
}

fn age_column() -> Column {
    column("Age", "string", doc::<ObjectMeta>("creationTimestamp"))
}

const CONTAINERS: &str = "Names of each container in the template.";
const IMAGES: &str = "Images referenced by each container in the template.";

/// The columns of a Table of `rt`'s objects.
pub fn columns(rt: &ResourceType) -> Vec<Column> {
    if rt.custom {
        return custom_columns(rt);
    }
    let mut out = vec![name_column()];
    match (rt.group.as_str(), rt.kind.as_str()) {
        ("", "Namespace") => {
            out.push(column(
                "Status",
                "string",
                "The status of the namespace".into(),
            ));
            out.push(age_column());
        }
        ("", "ConfigMap") => {
            out.push(column("Data", "string", doc::<ConfigMap>("data")));
            out.push(age_column());
        }
        ("", "Secret") => {
            out.push(column("Type", "string", doc::<Secret>("type")));
            out.push(column("Data", "string", doc::<Secret>("data")));
            out.push(age_column());
        }
        ("coordination.k8s.io", "Lease") => {
            out.push(column(
                "Holder",
                "string",
                doc::<LeaseSpec>("holderIdentity"),
            ));
            out.push(age_column());
        }
        ("apps", "Deployment") => deployment_columns(&mut out),
        ("", "Pod") => pod_columns(&mut out),
        ("", "Event") => return event_columns(),
        (group, kind) if more::prints(group, kind) => out.extend(more::columns(group, kind)),
        ("certificates.k8s.io", "CertificateSigningRequest") => {
            out.push(age_column());
            out.push(column("SignerName", "string", CSR_SIGNER_NAME.to_owned()));
            out.push(column("Requestor", "string", CSR_REQUESTOR.to_owned()));
            out.push(column(
                "RequestedDuration",
                "string",
                doc::<CertificateSigningRequestSpec>("expirationSeconds"),
            ));
            out.push(column("Condition", "string", CSR_CONDITION.to_owned()));
        }
        _ => out.push(column(
            "Created At",
            "date",
            doc::<ObjectMeta>("creationTimestamp"),
        )),
    }
    out
}

fn deployment_columns(out: &mut Vec<Column>) {
    out.push(column(
        "Ready",
        "string",
        "Number of the pod with ready state".into(),
    ));
    // kube-apiserver's printer types these as strings and describes them with the frozen
    // extensions/v1beta1 documentation, not the apps/v1 field docs (reworded in v1.33).
    out.push(column(
        "Up-to-date",
        "string",
        "Total number of non-terminated pods targeted by this deployment that have the desired template spec.".into(),
    ));
    out.push(column(
        "Available",
        "string",
        "Total number of available pods (ready for at least minReadySeconds) targeted by this deployment.".into(),
    ));
    out.push(age_column());
    out.push(wide(column("Containers", "string", CONTAINERS.into())));
    out.push(wide(column("Images", "string", IMAGES.into())));
    out.push(wide(column(
        "Selector",
        "string",
        "Label selector for pods. Existing ReplicaSets whose pods are selected by this will be the ones affected by this deployment.".into(),
    )));
}

fn pod_columns(out: &mut Vec<Column>) {
    out.push(column(
        "Ready",
        "string",
        "The aggregate readiness state of this pod for accepting traffic.".into(),
    ));
    out.push(column(
        "Status",
        "string",
        "The aggregate status of the containers in this pod.".into(),
    ));
    out.push(column(
        "Restarts",
        "string",
        "The number of times the containers in this pod have been restarted and when the last container in this pod has restarted.".into(),
    ));
    out.push(age_column());
    out.push(wide(column("IP", "string", doc::<PodStatus>("podIP"))));
    out.push(wide(column("Node", "string", doc::<PodSpec>("nodeName"))));
    out.push(wide(column(
        "Nominated Node",
        "string",
        doc::<PodStatus>("nominatedNodeName"),
    )));
    out.push(wide(column(
        "Readiness Gates",
        "string",
        doc::<PodSpec>("readinessGates"),
    )));
}

fn event_columns() -> Vec<Column> {
    vec![
        column("Last Seen", "string", doc::<Event>("lastTimestamp")),
        column("Type", "string", doc::<Event>("type")),
        column("Reason", "string", doc::<Event>("reason")),
        column("Object", "string", doc::<Event>("involvedObject")),
        wide(column(
            "Subobject",
            "string",
            doc::<ObjectReference>("fieldPath"),
        )),
        wide(column("Source", "string", doc::<Event>("source"))),
        column("Message", "string", doc::<Event>("message")),
        wide(column(
            "First Seen",
            "string",
            doc::<Event>("firstTimestamp"),
        )),
        wide(column("Count", "string", doc::<Event>("count"))),
        wide(name_column()),
    ]
}

fn field<'a>(column: &'a Value, key: &str) -> &'a str {
    column.get(key).and_then(Value::as_str).unwrap_or_default()
}

/// Name, then the version's printer columns (or Age when it has none), as the apiextensions
/// server's table convertor does.
fn custom_columns(rt: &ResourceType) -> Vec<Column> {
    let mut out = vec![name_column()];
    if rt.printer_columns.is_empty() {
        out.push(Column {
            name: "Age".into(),
            kind: "date".into(),
            format: String::new(),
            description: "Custom resource definition column (in JSONPath format): .metadata.creationTimestamp".into(),
            priority: 0,
        });
        return out;
    }
    for c in &rt.printer_columns {
        let path = field(c, "jsonPath");
        let description = match field(c, "description") {
            "" => format!("Custom resource definition column (in JSONPath format): {path}"),
            given => given.to_string(),
        };
        out.push(Column {
            name: field(c, "name").to_string(),
            kind: field(c, "type").to_string(),
            format: field(c, "format").to_string(),
            description,
            priority: c.get("priority").and_then(Value::as_i64).unwrap_or(0),
        });
    }
    out
}

/// The cells of `object`'s row, in the order of [`columns`].
pub fn cells(rt: &ResourceType, object: &Value, now: jiff::Timestamp) -> Vec<Value> {
    let name = json!(text(object, "/metadata/name"));
    let age = json!(age(object.pointer("/metadata/creationTimestamp"), now));
    if rt.custom {
        return custom_cells(rt, object, name, now);
    }
    let count = |pointer: &str| {
        object
            .pointer(pointer)
            .and_then(Value::as_object)
            .map_or(0, serde_json::Map::len)
    };
    match (rt.group.as_str(), rt.kind.as_str()) {
        ("", "Namespace") => vec![name, json!(text(object, "/status/phase")), age],
        ("", "ConfigMap") => vec![name, json!(count("/data") + count("/binaryData")), age],
        ("", "Secret") => vec![
            name,
            json!(text(object, "/type")),
            json!(count("/data")),
            age,
        ],
        ("coordination.k8s.io", "Lease") => {
            vec![name, json!(text(object, "/spec/holderIdentity")), age]
        }
        ("apps", "Deployment") => deployment_cells(object, name, age),
        ("", "Pod") => pod_cells(object, name, age),
        ("", "Event") => event_cells(object, name, now),
        ("certificates.k8s.io", "CertificateSigningRequest") => csr_cells(object, name, age),
        (group, kind) if more::prints(group, kind) => more::cells(kind, object, name, age),
        _ => vec![
            name,
            object
                .pointer("/metadata/creationTimestamp")
                .cloned()
                .unwrap_or(Value::Null),
        ],
    }
}

fn text<'a>(object: &'a Value, pointer: &str) -> &'a str {
    object
        .pointer(pointer)
        .and_then(Value::as_str)
        .unwrap_or_default()
}

fn int(object: &Value, pointer: &str) -> i64 {
    object.pointer(pointer).and_then(Value::as_i64).unwrap_or(0)
}

fn or_none(text: &str) -> String {
    if text.is_empty() {
        "<none>".into()
    } else {
        text.to_string()
    }
}

fn deployment_cells(object: &Value, name: Value, age: Value) -> Vec<Value> {
    let containers = object
        .pointer("/spec/template/spec/containers")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let join = |key: &str| {
        containers
            .iter()
            .map(|c| c.get(key).and_then(Value::as_str).unwrap_or_default())
            .collect::<Vec<_>>()
            .join(",")
    };
    let selector = object
        .pointer("/spec/selector/matchLabels")
        .and_then(Value::as_object)
        .map(|labels| {
            let mut pairs: Vec<String> = labels
                .iter()
                .map(|(k, v)| format!("{k}={}", v.as_str().unwrap_or_default()))
                .collect();
            pairs.sort();
            pairs.join(",")
        })
        .unwrap_or_default();
    vec![
        name,
        json!(format!(
            "{}/{}",
            int(object, "/status/readyReplicas"),
            int(object, "/spec/replicas")
        )),
        json!(int(object, "/status/updatedReplicas")),
        json!(int(object, "/status/availableReplicas")),
        age,
        json!(join("name")),
        json!(join("image")),
        json!(or_none(&selector)),
    ]
}

fn pod_cells(object: &Value, name: Value, age: Value) -> Vec<Value> {
    let statuses = object
        .pointer("/status/containerStatuses")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let total = object
        .pointer("/spec/containers")
        .and_then(Value::as_array)
        .map_or(0, Vec::len);
    let ready = statuses
        .iter()
        .filter(|s| s.get("ready").and_then(Value::as_bool) == Some(true))
        .count();
    let restarts: i64 = statuses
        .iter()
        .filter_map(|s| s.get("restartCount").and_then(Value::as_i64))
        .sum();
    let reason = match text(object, "/status/reason") {
        "" => text(object, "/status/phase"),
        reason => reason,
    };
    vec![
        name,
        json!(format!("{ready}/{total}")),
        json!(reason),
        json!(restarts.to_string()),
        age,
        json!(or_none(text(object, "/status/podIP"))),
        json!(or_none(text(object, "/spec/nodeName"))),
        json!(or_none(text(object, "/status/nominatedNodeName"))),
        json!("<none>"),
    ]
}

fn event_cells(object: &Value, name: Value, now: jiff::Timestamp) -> Vec<Value> {
    let first = object
        .pointer("/firstTimestamp")
        .filter(|v| !v.is_null())
        .or(object.pointer("/eventTime").filter(|v| !v.is_null()))
        .or(object.pointer("/metadata/creationTimestamp"));
    let last = object
        .pointer("/lastTimestamp")
        .filter(|v| !v.is_null())
        .or(first);
    let source = [
        text(object, "/source/component"),
        text(object, "/source/host"),
    ]
    .into_iter()
    .filter(|s| !s.is_empty())
    .collect::<Vec<_>>()
    .join(", ");
    let involved = format!(
        "{}/{}",
        text(object, "/involvedObject/kind").to_lowercase(),
        text(object, "/involvedObject/name")
    );
    vec![
        json!(age(last, now)),
        json!(text(object, "/type")),
        json!(text(object, "/reason")),
        json!(involved),
        json!(text(object, "/involvedObject/fieldPath")),
        json!(source),
        json!(text(object, "/message").trim()),
        json!(age(first, now)),
        json!(int(object, "/count").to_string()),
        name,
    ]
}

fn csr_cells(object: &Value, name: Value, age: Value) -> Vec<Value> {
    let conditions: Vec<&str> = object
        .pointer("/status/conditions")
        .and_then(Value::as_array)
        .map(|c| {
            c.iter()
                .filter_map(|c| c.get("type").and_then(Value::as_str))
                .collect()
        })
        .unwrap_or_default();
    let mut condition = if conditions.is_empty() {
        "Pending".to_string()
    } else {
        conditions.join(",")
    };
    if object
        .pointer("/status/certificate")
        .and_then(Value::as_str)
        .is_some_and(|c| !c.is_empty())
    {
        condition.push_str(",Issued");
    }
    let duration = object
        .pointer("/spec/expirationSeconds")
        .and_then(Value::as_i64)
        .map_or_else(|| "<none>".to_string(), human_duration);
    vec![
        name,
        age,
        json!(or_none(text(object, "/spec/signerName"))),
        json!(text(object, "/spec/username")),
        json!(duration),
        json!(condition),
    ]
}

/// Cells of a custom object: its name, then each column's first JSONPath match converted to the
/// column's type (null when missing or of another type), as the apiextensions server does.
fn custom_cells(
    rt: &ResourceType,
    object: &Value,
    name: Value,
    now: jiff::Timestamp,
) -> Vec<Value> {
    let mut out = vec![name];
    if rt.printer_columns.is_empty() {
        out.push(json!(age(
            object.pointer("/metadata/creationTimestamp"),
            now
        )));
        return out;
    }
    for c in &rt.printer_columns {
        let path = c
            .get("jsonPath")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let kind = c.get("type").and_then(Value::as_str).unwrap_or_default();
        let found = JsonPath::parse(path).and_then(|p| p.first(object).cloned());
        out.push(match found {
            None | Some(Value::Null) => Value::Null,
            Some(value) => typed_cell(kind, value, now),
        });
    }
    out
}

/// A column value as the type says: strings print the value (JSON for objects and lists), the
/// other types keep values of their type, dates become ages.
fn typed_cell(kind: &str, value: Value, now: jiff::Timestamp) -> Value {
    match (kind, value) {
        ("string", Value::String(s)) => json!(s),
        ("string", other @ (Value::Object(_) | Value::Array(_))) => json!(other.to_string()),
        ("string", other) => json!(other.to_string()),
        ("integer", Value::Number(n)) => n
            .as_i64()
            .or_else(|| n.as_f64().map(|f| f as i64))
            .map_or(Value::Null, |i| json!(i)),
        ("number", Value::Number(n)) => n.as_f64().map_or(Value::Null, |f| json!(f)),
        ("boolean", Value::Bool(b)) => json!(b),
        ("date", Value::String(s)) => match s.parse::<jiff::Timestamp>() {
            Ok(_) => json!(age(Some(&json!(s)), now)),
            Err(_) => json!("<invalid>"),
        },
        _ => Value::Null,
    }
}

/// `creationTimestamp`-style ages: kube's HumanDuration since the time, `<unknown>` without one.
fn age(time: Option<&Value>, now: jiff::Timestamp) -> String {
    let Some(time) = time
        .and_then(Value::as_str)
        .and_then(|t| t.parse::<jiff::Timestamp>().ok())
    else {
        return "<unknown>".into();
    };
    human_duration(now.as_second() - time.as_second())
}

/// apimachinery's `duration.HumanDuration` of a number of seconds.
pub fn human_duration(seconds: i64) -> String {
    let with = |big: i64, unit: &str, small: i64, small_unit: &str| {
        if small == 0 {
            format!("{big}{unit}")
        } else {
            format!("{big}{unit}{small}{small_unit}")
        }
    };
    if seconds < -1 {
        return "<invalid>".into();
    }
    if seconds < 0 {
        return "0s".into();
    }
    if seconds < 120 {
        return format!("{seconds}s");
    }
    let minutes = seconds / 60;
    if minutes < 10 {
        return with(minutes, "m", seconds % 60, "s");
    }
    if minutes < 180 {
        return format!("{minutes}m");
    }
    let hours = seconds / 3600;
    if hours < 8 {
        return with(hours, "h", minutes % 60, "m");
    }
    if hours < 48 {
        return format!("{hours}h");
    }
    if hours < 24 * 8 {
        return with(hours / 24, "d", hours % 24, "h");
    }
    if hours < 24 * 365 * 2 {
        return format!("{}d", hours / 24);
    }
    if hours < 24 * 365 * 8 {
        return with(hours / 24 / 365, "y", (hours / 24) % 365, "d");
    }
    format!("{}y", hours / 24 / 365)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn human_durations_follow_apimachinery() {
        for (seconds, want) in [
            (-5, "<invalid>"),
            (-1, "0s"),
            (0, "0s"),
            (119, "119s"),
            (120, "2m"),
            (125, "2m5s"),
            (600, "10m"),
            (179 * 60, "179m"),
            (3 * 3600, "3h"),
            (3 * 3600 + 60, "3h1m"),
            (47 * 3600, "47h"),
            (50 * 3600, "2d2h"),
            (9 * 24 * 3600, "9d"),
            (3 * 365 * 24 * 3600, "3y"),
            (3 * 365 * 24 * 3600 + 2 * 24 * 3600, "3y2d"),
            (9 * 365 * 24 * 3600, "9y"),
        ] {
            assert_eq!(human_duration(seconds), want, "{seconds}");
        }
    }

    #[test]
    fn typed_cells_keep_their_type_or_become_null() {
        let now = jiff::Timestamp::UNIX_EPOCH;
        for (kind, value, want) in [
            ("integer", json!(3), json!(3)),
            ("integer", json!(2.7), json!(2)),
            ("integer", json!("3"), Value::Null),
            ("number", json!(1), json!(1.0)),
            ("boolean", json!(true), json!(true)),
            ("boolean", json!("true"), Value::Null),
            ("string", json!(5), json!("5")),
            ("string", json!({"a": 1}), json!("{\"a\":1}")),
            ("date", json!("yesterday"), json!("<invalid>")),
        ] {
            assert_eq!(typed_cell(kind, value.clone(), now), want, "{kind} {value}");
        }
    }

    #[test]
    fn column_descriptions_come_from_the_api_docs() {
        let name = name_column();
        assert!(
            name.description
                .starts_with("Name must be unique within a namespace")
        );
        assert_eq!(name.format, "name");
        assert!(!doc::<Secret>("type").is_empty());
    }
}

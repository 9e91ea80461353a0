//! Server-side printing: answering `Accept: application/json;as=Table;v=v1;g=meta.k8s.io` with a
//! `meta.k8s.io` Table of the objects (kube-apiserver's `asTable`), the row objects as the
//! `includeObject` query parameter asks (`None`, `Metadata` — the default — or `Object`).

use std::collections::BTreeMap;

use serde_json::{Map, Value, json};

use crate::registry::printers;
use crate::resources::ResourceType;
use crate::status::ApiError;

/// What a row carries besides its cells.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Include {
    /// No object.
    None,
    /// The object's metadata as PartialObjectMetadata.
    Metadata,
    /// The whole object.
    Object,
}

/// A request for a Table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TableRequest {
    /// `meta.k8s.io/v1` or `meta.k8s.io/v1beta1`.
    pub api_version: &'static str,
    /// What rows carry.
    pub include: Include,
}

/// Whether the request asks for a Table: the first media type of `accept` that the server can
/// produce decides (a Table in meta.k8s.io v1 or v1beta1, or plain JSON/YAML/protobuf/any).
///
/// # Errors
/// 406 when a Table of another group version is the only thing acceptable; 400 for an unknown
/// `includeObject`.
pub fn requested(
    accept: &str,
    query: &BTreeMap<String, String>,
) -> Result<Option<TableRequest>, ApiError> {
    let mut refused = None;
    let mut table = None;
    for media in accept.split(',') {
        let mut parts = media.split(';').map(str::trim);
        let _media_type = parts.next().unwrap_or_default();
        let params: BTreeMap<&str, &str> = parts.filter_map(|p| p.split_once('=')).collect();
        if params.get("as") != Some(&"Table") {
            // PartialObjectMetadata, plain types and wildcards are served elsewhere.
            break;
        }
        match (params.get("g").copied(), params.get("v").copied()) {
            (Some("meta.k8s.io"), Some("v1")) => table = Some("meta.k8s.io/v1"),
            (Some("meta.k8s.io"), Some("v1beta1")) => table = Some("meta.k8s.io/v1beta1"),
            (group, version) => {
                refused.get_or_insert(format!(
                    "no Table exists in group version {}/{}",
                    group.unwrap_or_default(),
                    version.unwrap_or_default()
                ));
                continue;
            }
        }
        break;
    }
    let Some(api_version) = table else {
        return match (refused, accept.split(',').count()) {
            (Some(message), 1) => Err(ApiError::status(406, "NotAcceptable", message, None)),
            _ => Ok(None),
        };
    };
    let include = match query.get("includeObject").map(String::as_str) {
        None | Some("") | Some("Metadata") => Include::Metadata,
        Some("None") => Include::None,
        Some("Object") => Include::Object,
        Some(other) => {
            return Err(ApiError::bad_request(format!(
                "unrecognized includeObject value: {other:?}"
            )));
        }
    };
    Ok(Some(TableRequest {
        api_version,
        include,
    }))
}

/// The Table of `objects`; `list_meta` becomes its metadata; `headers` whether column definitions
/// are included (a watch sends them with its first event only).
pub fn table<'a>(
    rt: &ResourceType,
    request: TableRequest,
    objects: impl IntoIterator<Item = &'a Value>,
    list_meta: Map<String, Value>,
    headers: bool,
) -> Value {
    let now = jiff::Timestamp::now();
    let definitions = if headers {
        Value::Array(
            printers::columns(rt)
                .iter()
                .map(printers::Column::definition)
                .collect(),
        )
    } else {
        Value::Null
    };
    let rows: Vec<Value> = objects
        .into_iter()
        .map(|object| {
            let row_object = match request.include {
                Include::None => Value::Null,
                Include::Object => object.clone(),
                Include::Metadata => json!({
                    "kind": "PartialObjectMetadata",
                    "apiVersion": request.api_version,
                    "metadata": object.get("metadata").cloned().unwrap_or(Value::Null),
                }),
            };
            json!({"cells": printers::cells(rt, object, now), "object": row_object})
        })
        .collect();
    json!({
        "kind": "Table",
        "apiVersion": request.api_version,
        "metadata": list_meta,
        "columnDefinitions": definitions,
        "rows": rows,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn query(include: Option<&str>) -> BTreeMap<String, String> {
        include
            .map(|i| [("includeObject".to_string(), i.to_string())].into())
            .unwrap_or_default()
    }

    #[test]
    fn the_first_producible_media_type_decides() {
        let kubectl = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json";
        for (accept, want) in [
            (kubectl, Some("meta.k8s.io/v1")),
            (
                "application/json;as=Table;v=v1beta1;g=meta.k8s.io",
                Some("meta.k8s.io/v1beta1"),
            ),
            ("application/json", None),
            (
                "application/json,application/json;as=Table;v=v1;g=meta.k8s.io",
                None,
            ),
            (
                "application/json;as=Table;v=v2;g=meta.k8s.io,application/json",
                None,
            ),
            (
                "application/json;as=PartialObjectMetadata;v=v1;g=meta.k8s.io",
                None,
            ),
        ] {
            let got = requested(accept, &query(None)).expect("acceptable");
            assert_eq!(got.map(|t| t.api_version), want, "{accept}");
        }
        let refused = requested("application/json;as=Table;v=v2;g=meta.k8s.io", &query(None))
            .expect_err("no such Table");
        assert_eq!(refused.code, 406);
    }

    #[test]
    fn include_object_defaults_to_metadata_and_rejects_unknown_values() {
        let accept = "application/json;as=Table;v=v1;g=meta.k8s.io";
        for (value, want) in [
            (None, Include::Metadata),
            (Some("None"), Include::None),
            (Some("Object"), Include::Object),
        ] {
            let got = requested(accept, &query(value))
                .expect("valid")
                .expect("a table");
            assert_eq!(got.include, want);
        }
        let error = requested(accept, &query(Some("All"))).expect_err("unknown value");
        assert_eq!(error.code, 400);
    }
}

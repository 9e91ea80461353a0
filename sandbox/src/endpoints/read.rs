//! `get` and `list`: single objects and filtered, paginated collections.

use base64::Engine;
use http::Response;
use serde_json::{Map, Value, json};

use super::{Body, Call, json_response, present, table};
use crate::selectors::{FieldSelector, LabelSelector};
use crate::status::ApiError;
use crate::storage::ObjectKey;

/// GET of one object (also its `status` / `approval` subresource, which show the whole object).
pub fn get(call: &Call<'_>) -> Result<Response<Body>, ApiError> {
    let object = call
        .api
        .store
        .lock()
        .get(&call.rt, &call.path.namespace, &call.path.name);
    let object = object.ok_or_else(|| ApiError::not_found(&call.rt, &call.path.name))?;
    if let Some(request) = call.table()? {
        let mut metadata = Map::new();
        if let Some(rv) = object.pointer("/metadata/resourceVersion") {
            metadata.insert("resourceVersion".into(), rv.clone());
        }
        let table = table::table(&call.rt, request, [&*object], metadata, true);
        return Ok(json_response(200, &table));
    }
    Ok(json_response(200, &present(call, &object)))
}

/// Label and field selectors of a request.
pub struct Selectors {
    /// `labelSelector`.
    pub labels: LabelSelector,
    /// `fieldSelector`.
    pub fields: FieldSelector,
}

impl Selectors {
    /// Parses the selectors of a call; errors are kube-apiserver's 400 answers.
    pub fn parse(call: &Call<'_>) -> Result<Self, ApiError> {
        let labels = LabelSelector::parse(
            call.query
                .get("labelSelector")
                .map(String::as_str)
                .unwrap_or_default(),
        )
        .map_err(ApiError::bad_request)?;
        let fields = FieldSelector::parse(
            call.query
                .get("fieldSelector")
                .map(String::as_str)
                .unwrap_or_default(),
            &crate::registry::kinds::strategy_for(&call.rt).selectable_fields(&call.rt),
        )
        .map_err(ApiError::bad_request)?;
        Ok(Selectors { labels, fields })
    }

    /// Whether an object matches both selectors.
    pub fn matches(&self, object: &Value) -> bool {
        self.labels.matches(
            object
                .pointer("/metadata/labels")
                .and_then(Value::as_object),
        ) && self.fields.matches(object)
    }

    /// Whether neither selector restricts anything.
    pub fn is_empty(&self) -> bool {
        self.labels.is_empty() && self.fields.is_empty()
    }
}

/// LIST with selectors, `limit` and `continue`.
pub fn list(call: &Call<'_>) -> Result<Response<Body>, ApiError> {
    let selectors = Selectors::parse(call)?;
    let table_request = call.table()?;
    let namespace = (!call.path.namespace.is_empty()).then_some(call.path.namespace.as_str());
    let limit: usize = call
        .query
        .get("limit")
        .and_then(|l| l.parse().ok())
        .filter(|l| *l > 0)
        .unwrap_or(usize::MAX);
    let start = match call.query.get("continue").filter(|c| !c.is_empty()) {
        Some(token) => Some(decode_continue(token)?),
        None => None,
    };
    // One pass under the lock that stops once the page is full: past it, only a count is kept
    // (for remainingItemCount, which kube reports for unfiltered lists only), or, with selectors,
    // whether one more object matches.
    let mut page: Vec<std::sync::Arc<Value>> = Vec::new();
    let mut remaining = 0usize;
    let unfiltered = selectors.is_empty();
    let equalities: Vec<(&str, &str)> = selectors.labels.equalities().collect();
    let field_equalities: Vec<(&str, &str)> = selectors.fields.equalities().collect();
    let rv = {
        let state = call.api.store.lock();
        state.visit_labelled(
            &call.rt.storage_key(),
            &equalities,
            &field_equalities,
            namespace,
            start.as_ref(),
            |object| {
                if !unfiltered && !selectors.matches(object) {
                    return true;
                }
                if page.len() < limit {
                    page.push(object.clone());
                    return true;
                }
                remaining += 1;
                unfiltered
            },
        );
        state.resource_version()
    };
    let mut metadata = Map::new();
    metadata.insert("resourceVersion".into(), json!(rv.to_string()));
    if remaining > 0 {
        if let Some(last) = page.last() {
            metadata.insert(
                "continue".into(),
                json!(encode_continue(&crate::storage::object_key(last), rv)),
            );
        }
        if selectors.is_empty() {
            metadata.insert("remainingItemCount".into(), json!(remaining));
        }
    } else if call.rt.custom {
        metadata.insert("continue".into(), json!(""));
    }
    if let Some(request) = table_request {
        let table = table::table(&call.rt, request, page.iter().map(|o| &**o), metadata, true);
        return Ok(json_response(200, &table));
    }
    if call.metadata_only() {
        let items: Vec<Value> = page.iter().map(|o| list_item(call, o)).collect();
        return Ok(list_response(call, items, metadata));
    }
    // Serialized from the stored objects themselves: a deep copy of every item per list was most
    // of the sandbox's CPU when controllers list thousands of objects.
    let items: Vec<ListItem<'_>> = page
        .iter()
        .map(|object| ListItem {
            object,
            typed: call.rt.custom,
        })
        .collect();
    Ok(list_response(call, items, metadata))
}

/// A stored object as a list item: built-in list items carry no apiVersion/kind, like
/// kube-apiserver's; custom resources keep theirs.
struct ListItem<'a> {
    object: &'a Value,
    typed: bool,
}

impl serde::Serialize for ListItem<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        match self.object.as_object() {
            Some(fields) if !self.typed => {
                let kept = fields
                    .iter()
                    .filter(|(name, _)| *name != "apiVersion" && *name != "kind");
                let mut map = serializer.serialize_map(None)?;
                for (name, value) in kept {
                    map.serialize_entry(name, value)?;
                }
                map.end()
            }
            _ => self.object.serialize(serializer),
        }
    }
}

/// A 200 answer with a list object of the call's type (`PartialObjectMetadataList` for a
/// metadata-only call) holding `items`.
pub fn list_response<T: serde::Serialize>(
    call: &Call<'_>,
    items: Vec<T>,
    metadata: Map<String, Value>,
) -> Response<Body> {
    /// A list object; `items` are serialized as they are (stored objects are not copied).
    #[derive(serde::Serialize)]
    struct List<'a, T> {
        kind: &'a str,
        #[serde(rename = "apiVersion")]
        api_version: String,
        metadata: Map<String, Value>,
        items: Vec<T>,
    }
    let (kind, api_version) = if call.metadata_only() {
        ("PartialObjectMetadataList", "meta.k8s.io/v1".to_owned())
    } else {
        (call.rt.list_kind.as_str(), call.rt.api_version())
    };
    let list = List {
        kind,
        api_version,
        metadata,
        items,
    };
    let bytes = serde_json::to_vec(&list).unwrap_or_default();
    super::response(200, "application/json", bytes::Bytes::from(bytes))
}

/// An object as a list item: built-in list items carry no apiVersion/kind, like kube-apiserver's.
pub fn list_item(call: &Call<'_>, object: &Value) -> Value {
    if call.metadata_only() {
        return present(call, object);
    }
    let mut item = object.clone();
    if !call.rt.custom
        && let Some(map) = item.as_object_mut()
    {
        map.remove("apiVersion");
        map.remove("kind");
    }
    item
}

fn encode_continue(key: &ObjectKey, rv: u64) -> String {
    let token = json!({"v": "meta.k8s.io/v1", "rv": rv, "start": [key.0, key.1]});
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(token.to_string())
}

fn decode_continue(token: &str) -> Result<ObjectKey, ApiError> {
    let invalid = || {
        ApiError::bad_request(
            "continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)",
        )
    };
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(token)
        .map_err(|_| invalid())?;
    let value: Value = serde_json::from_slice(&bytes).map_err(|_| invalid())?;
    let start = value
        .get("start")
        .and_then(Value::as_array)
        .ok_or_else(invalid)?;
    let part = |i: usize| {
        start
            .get(i)
            .and_then(Value::as_str)
            .map(str::to_string)
            .ok_or_else(invalid)
    };
    Ok((part(0)?, part(1)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn continue_tokens_round_trip() {
        let key = ("ns".to_string(), "b".to_string());
        assert_eq!(
            decode_continue(&encode_continue(&key, 9)).expect("valid token"),
            key
        );
        assert!(decode_continue("garbage!").is_err());
    }
}

//! `/openapi/v2` (JSON, or gnostic protobuf when asked for it, as kubectl does) and `/openapi/v3`
//! (the group-version index with content hashes, then one document per group version) for the
//! built-in kinds and every CRD. Documents are built once per set of served types and rebuilt
//! when CRDs change it.

mod builtin;
mod document;
mod proto;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use http::{Method, Response};
use serde_json::{Map, Value, json};
use sha2::{Digest, Sha512};

use super::{Api, Body, response};
use crate::resources::Registry;
use crate::status::ApiError;

/// The documents for one set of served types.
pub struct Documents {
    v2_json: Bytes,
    v2_proto: Bytes,
    /// Group-version path (`api/v1`, `apis/apps/v1`) -> (content hash, JSON document).
    v3: BTreeMap<String, (String, Bytes)>,
}

impl Documents {
    fn build(registry: &Registry) -> Self {
        let built = document::build(registry);
        let v3 = built
            .v3
            .into_iter()
            .map(|(path, doc)| {
                let bytes = serde_json::to_vec(&doc).unwrap_or_default();
                let hash = format!("{:X}", Sha512::digest(&bytes));
                (path, (hash, Bytes::from(bytes)))
            })
            .collect();
        Documents {
            v2_json: Bytes::from(serde_json::to_vec(&built.v2).unwrap_or_default()),
            v2_proto: Bytes::from(proto::encode_document(&built.v2)),
            v3,
        }
    }
}

/// The documents of the registry last asked about.
#[derive(Default)]
pub struct Cache(Mutex<Option<(Arc<Registry>, Arc<Documents>)>>);

impl Cache {
    fn documents(&self, registry: Arc<Registry>) -> Arc<Documents> {
        let mut cached = self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some((for_registry, documents)) = cached.as_ref()
            && Arc::ptr_eq(for_registry, &registry)
        {
            return documents.clone();
        }
        let documents = Arc::new(Documents::build(&registry));
        *cached = Some((registry, documents.clone()));
        documents
    }
}

/// Whether a path is served here.
pub fn handles(path: &str) -> bool {
    path == "/openapi/v2" || path == "/openapi/v3" || path.starts_with("/openapi/v3/")
}

/// Serves an OpenAPI path.
///
/// # Errors
/// 404 for other methods and unknown group versions.
pub fn serve(
    api: &Api,
    method: &Method,
    path: &str,
    accept: &str,
) -> Result<Response<Body>, ApiError> {
    if method != Method::GET && method != Method::HEAD {
        return Err(ApiError::page_not_found());
    }
    let registry = api.store.lock().registry();
    let documents = api.openapi.documents(registry);
    if path == "/openapi/v2" {
        return Ok(if accept.contains("protobuf") {
            response(200, proto::MEDIA_TYPE, documents.v2_proto.clone())
        } else {
            response(200, "application/json", documents.v2_json.clone())
        });
    }
    if path == "/openapi/v3" {
        let paths: Map<String, Value> = documents
            .v3
            .iter()
            .map(|(gv, (hash, _))| {
                (
                    gv.clone(),
                    json!({"serverRelativeURL": format!("/openapi/v3/{gv}?hash={hash}")}),
                )
            })
            .collect();
        let body = serde_json::to_vec(&json!({"paths": paths})).unwrap_or_default();
        return Ok(response(200, "application/json", Bytes::from(body)));
    }
    let group_version = path
        .trim_start_matches("/openapi/v3/")
        .trim_end_matches('/');
    match documents.v3.get(group_version) {
        Some((_, document)) => Ok(response(200, "application/json", document.clone())),
        None => Err(ApiError::page_not_found()),
    }
}

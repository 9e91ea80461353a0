//! The HTTP side of the server (k8s.io/apiserver's endpoints): the request pipeline —
//! authentication, impersonation, faults, request info, authorization — then routing to the verb
//! handlers, with the response helpers they share.

mod admit;
pub mod discovery;
mod metrics;
mod openapi;
mod patch;
pub mod protobuf;
mod read;
pub mod request;
mod review;
mod table;
mod watch;
mod write;
mod yaml;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use http::{HeaderMap, Method, Request, Response, StatusCode, header};
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full, Limited};
use serde_json::Value;

use crate::auth::authn::{self, SecretReader, UserInfo};
use crate::auth::authz::webhook::WebhookAuthorizer;
use crate::auth::authz::{self, Attributes, RbacSnapshot};
use crate::auth::client_cert::ClientCertificate;
use crate::auth::pki::CertificateAuthority;
use crate::endpoints::request::{RequestInfo, Target, Verb};
use crate::faults::Faults;
use crate::resources::{Behaviour, ResourceType};
use crate::status::ApiError;
use crate::storage::{State, Store};

/// Response body type of every handler.
pub type Body = BoxBody<Bytes, std::io::Error>;

/// Largest accepted request body (kube-apiserver's limit is 3 MiB).
const MAX_BODY: usize = 3 * 1024 * 1024;

/// Everything a request needs: storage, the CA, faults and cached RBAC.
pub struct Api {
    /// The object store.
    pub store: Store,
    /// The cluster CA (client certificates, CSR signing).
    pub ca: Arc<CertificateAuthority>,
    /// Fault injection switches.
    pub faults: Arc<Faults>,
    /// Requests served per user.
    pub requests: Arc<crate::stats::RequestCounts>,
    /// TLS connections accepted (see [`crate::stats::ConnectionCounts`]).
    pub connections: Arc<crate::stats::ConnectionCounts>,
    /// Cancelled when the server shuts down (ends watches).
    pub shutdown: tokio_util::sync::CancellationToken,
    rbac: Mutex<Option<(u64, Arc<RbacSnapshot>)>>,
    openapi: openapi::Cache,
    /// The webhook asked after RBAC (`--authorization-webhook-config-file`), if configured.
    pub authorization_webhook: std::sync::RwLock<Option<Arc<WebhookAuthorizer>>>,
    /// What `/version` reports.
    pub version: discovery::VersionInfo,
    /// The families `/metrics` exposes.
    metrics: Arc<metrics::ApiMetrics>,
}

impl Api {
    /// A new API over a store.
    pub fn new(store: Store, ca: Arc<CertificateAuthority>, faults: Arc<Faults>) -> Self {
        Api {
            store,
            ca,
            faults,
            requests: Arc::default(),
            connections: Arc::default(),
            shutdown: tokio_util::sync::CancellationToken::new(),
            rbac: Mutex::new(None),
            openapi: openapi::Cache::default(),
            authorization_webhook: std::sync::RwLock::new(None),
            version: discovery::VersionInfo::default(),
            metrics: Arc::default(),
        }
    }

    /// The current RBAC objects, rebuilt only after RBAC writes.
    pub fn rbac(&self, state: &State) -> Arc<RbacSnapshot> {
        let version = state.rbac_version();
        let mut cache = self
            .rbac
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some((cached_version, snapshot)) = cache.as_ref()
            && *cached_version == version
        {
            return snapshot.clone();
        }
        let list = |plural: &str| -> Vec<Value> {
            state
                .list(&format!("{plural}.rbac.authorization.k8s.io"), None)
                .iter()
                .map(|o| (**o).clone())
                .collect()
        };
        let snapshot = Arc::new(RbacSnapshot {
            roles: list("roles"),
            role_bindings: list("rolebindings"),
            cluster_roles: list("clusterroles"),
            cluster_role_bindings: list("clusterrolebindings"),
        });
        *cache = Some((version, snapshot.clone()));
        snapshot
    }

    /// Authorizes attributes against the stored RBAC (none while RBAC is still loading after a
    /// simulated start).
    pub fn authorize(&self, attributes: &Attributes) -> authz::Decision {
        if self.faults.rbac_loading() {
            return authz::authorize(attributes, &RbacSnapshot::default());
        }
        let snapshot = {
            let state = self.store.lock();
            self.rbac(&state)
        };
        authz::authorize(attributes, &snapshot)
    }

    /// Authorizes a request like kube-apiserver's chain: the privileged group and RBAC, then the
    /// authorization webhook when one is configured. A failing webhook is a 500.
    pub async fn authorize_request(
        &self,
        attributes: &Attributes,
    ) -> Result<authz::Decision, ApiError> {
        let decision = self.authorize(attributes);
        if decision.allowed {
            return Ok(decision);
        }
        let webhook = self
            .authorization_webhook
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone();
        let Some(webhook) = webhook else {
            return Ok(decision);
        };
        match webhook.authorize(attributes).await {
            Ok(decision) => Ok(decision),
            // Legacy flags: the error reaches the filter, which answers 500; a structured
            // configuration's failure policy turns it into a (denying or abstaining) 403, as no
            // authorizer follows the webhook here.
            Err(error) => match webhook.failure_policy() {
                None => Err(ApiError::internal(error)),
                Some(_) => Ok(authz::Decision {
                    allowed: false,
                    reason: error,
                }),
            },
        }
    }

    /// The rules `user` holds in `namespace` under the stored RBAC (a SelfSubjectRulesReview's answer).
    pub fn rules_for(&self, user: &UserInfo, namespace: &str) -> authz::SubjectRules {
        let snapshot = {
            let state = self.store.lock();
            self.rbac(&state)
        };
        authz::rules_for(user, namespace, &snapshot)
    }
}

/// Reads bootstrap-token Secrets from the store.
struct StoreSecrets<'a>(&'a State);

impl SecretReader for StoreSecrets<'_> {
    fn secret(&self, namespace: &str, name: &str) -> Option<Value> {
        self.0
            .get_by_key("secrets", namespace, name)
            .map(|s| (*s).clone())
    }
}

/// One API call after authentication.
pub struct Call<'a> {
    /// Shared API state.
    pub api: &'a Arc<Api>,
    /// The effective user.
    pub user: &'a UserInfo,
    /// The resource type addressed.
    pub rt: Arc<ResourceType>,
    /// Path parts.
    pub path: &'a RequestInfo,
    /// Query parameters.
    pub query: &'a BTreeMap<String, String>,
    /// Request body.
    pub body: &'a [u8],
    /// Content-Type of the body.
    pub content_type: &'a str,
    /// Accept header.
    pub accept: &'a str,
    /// User-Agent header.
    pub user_agent: &'a str,
    /// `dryRun=All` on a write: admitted, defaulted, validated and answered, never stored.
    pub dry_run: bool,
}

impl Call<'_> {
    /// The field manager: `?fieldManager=` or the user agent's program name, like kube-apiserver.
    pub fn field_manager(&self) -> String {
        if let Some(manager) = self.query.get("fieldManager").filter(|m| !m.is_empty()) {
            return manager.clone();
        }
        let program = self.user_agent.split('/').next().unwrap_or_default();
        if program.is_empty() {
            "unknown".to_string()
        } else {
            program.to_string()
        }
    }

    /// The body parsed as JSON (or YAML for YAML content types).
    pub fn json_body(&self) -> Result<Value, ApiError> {
        parse_body(self.body, self.content_type, &self.rt)
    }

    /// Whether (and how) the client asked for a Table instead of objects.
    pub fn table(&self) -> Result<Option<table::TableRequest>, ApiError> {
        table::requested(self.accept, self.query)
    }

    /// Whether the client asked for metadata-only objects.
    pub fn metadata_only(&self) -> bool {
        self.accept.contains("as=PartialObjectMetadata")
    }
}

/// Parses a request body as JSON, or YAML when the content type says so.
pub fn parse_body(body: &[u8], content_type: &str, rt: &ResourceType) -> Result<Value, ApiError> {
    let decode_error = |e: String| {
        ApiError::bad_request(format!(
            "{} in version \"{}\" cannot be handled as a {}: {e}",
            rt.kind, rt.version, rt.kind
        ))
    };
    if protobuf::is_protobuf(content_type) {
        return match protobuf::decode_object(body) {
            Ok(object) => Ok(object),
            // Kinds clients never send as protobuf: like a server without a protobuf serializer for them.
            Err(protobuf::ProtobufError::UnknownKind { .. }) => Err(ApiError::status(
                415,
                "UnsupportedMediaType",
                "the body of the request was in an unknown format - accepted media types include: application/json, application/yaml",
                None,
            )),
            Err(error) => Err(decode_error(error.to_string())),
        };
    }
    if content_type.contains("yaml") {
        yaml::from_slice(body).map_err(decode_error)
    } else {
        serde_json::from_slice::<Value>(body).map_err(|e| decode_error(e.to_string()))
    }
}

/// Entry point for every HTTP request: answers it and counts it in the metrics; an open watch
/// counts as a long-running request until its body is dropped.
pub async fn handle(
    api: Arc<Api>,
    request: Request<hyper::body::Incoming>,
    peer: Option<Arc<ClientCertificate>>,
) -> Response<Body> {
    let started = std::time::Instant::now();
    let header_text = |headers: &HeaderMap, name: header::HeaderName| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_owned()
    };
    let content_type = header_text(request.headers(), header::CONTENT_TYPE);
    let user_agent = header_text(request.headers(), header::USER_AGENT);
    let labels = metrics::labels(request.method(), request.uri(), &content_type);
    let response = answer(&api, request, peer).await;
    api.metrics.observe(
        &labels,
        response.status().as_u16(),
        &user_agent,
        started.elapsed(),
    );
    if labels.is_watch() && response.status().is_success() {
        let open = api.metrics.long_running(&labels);
        return response.map(|body| {
            body.map_frame(move |frame| {
                // The guard lives as long as the body: dropping the watch closes it.
                let _ = &open;
                frame
            })
            .boxed()
        });
    }
    response
}

async fn answer(
    api: &Arc<Api>,
    request: Request<hyper::body::Incoming>,
    peer: Option<Arc<ClientCertificate>>,
) -> Response<Body> {
    let (parts, incoming) = request.into_parts();
    let body = match Limited::new(incoming, MAX_BODY).collect().await {
        Ok(collected) => collected.to_bytes(),
        Err(_) => {
            return error_response(&ApiError::status(
                413,
                "RequestEntityTooLarge",
                "Request entity too large: limit is 3145728",
                None,
            ));
        }
    };
    match serve(
        api,
        &parts.method,
        &parts.uri,
        &parts.headers,
        &body,
        peer.as_deref(),
    )
    .await
    {
        Ok(response) => response,
        Err(error) => error_response(&error),
    }
}

async fn serve(
    api: &Arc<Api>,
    method: &Method,
    uri: &http::Uri,
    headers: &HeaderMap,
    body: &[u8],
    peer: Option<&ClientCertificate>,
) -> Result<Response<Body>, ApiError> {
    let header_text = |name: header::HeaderName| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
    };
    let user = authenticate(api, headers, peer).await?;
    // After authentication, like priority and fairness in kube-apiserver, so that every injected
    // failure is counted for the user who sent the request.
    if let Some(injected) = api.faults.injected_error() {
        api.requests.record_injected(&user.username);
        return Err(injected);
    }
    api.requests.record(&user.username);
    let query = request::parse_query(uri.query());
    let target = request::parse(method, uri.path(), &query)?;
    let path = match target {
        Target::NonResource(path) => {
            let attributes = Attributes {
                user: user.clone(),
                verb: method.as_str().to_lowercase(),
                path: path.clone(),
                resource_request: false,
                ..Attributes::default()
            };
            check(api, &attributes).await?;
            if path.trim_end_matches('/') == "/metrics" && method == Method::GET {
                let text = api.metrics.render(&api.store.lock());
                return Ok(response(200, metrics::CONTENT_TYPE, Bytes::from(text)));
            }
            if openapi::handles(&path) {
                return openapi::serve(api, method, &path, header_text(header::ACCEPT));
            }
            return discovery::serve(api, method, &path);
        }
        Target::Resource(path) => path,
    };
    let attributes = Attributes {
        user: user.clone(),
        verb: path.verb.as_str().to_string(),
        api_group: path.group.clone(),
        api_version: path.version.clone(),
        resource: path.resource.clone(),
        subresource: path.subresource.as_str().to_string(),
        namespace: path.namespace.clone(),
        name: path.name.clone(),
        path: uri.path().to_string(),
        resource_request: true,
        ..Attributes::default()
    };
    let attributes = with_selectors(attributes, &query);
    check(api, &attributes).await?;
    let registry = api.store.lock().registry();
    let rt = registry
        .lookup(&path.group, &path.version, &path.resource)
        .ok_or_else(ApiError::page_not_found)?;
    if (!rt.namespaced && !path.namespace.is_empty()) || !rt.has_subresource(&path.subresource) {
        return Err(ApiError::page_not_found());
    }
    let dry_run = request::dry_run(path.verb, &query, body)?;
    let call = Call {
        api,
        user: &user,
        rt,
        path: &path,
        query: &query,
        body,
        content_type: header_text(header::CONTENT_TYPE),
        accept: header_text(header::ACCEPT),
        user_agent: header_text(header::USER_AGENT),
        dry_run,
    };
    if call.rt.behaviour == Behaviour::Review {
        return match path.verb {
            Verb::Create => review::create(&call),
            _ => Err(ApiError::method_not_allowed(
                "the server does not allow this method on the requested resource".to_string(),
            )),
        };
    }
    let admitted_body;
    let call = match admit::admit(&call).await? {
        admit::Admitted::Unchanged => call,
        admit::Admitted::Body(body) => {
            admitted_body = body;
            Call {
                body: &admitted_body,
                content_type: "application/json",
                ..call
            }
        }
        admit::Admitted::PatchAsUpdate(body) => {
            admitted_body = body;
            let call = Call {
                body: &admitted_body,
                content_type: "application/json",
                ..call
            };
            return write::update(&call);
        }
    };
    match path.verb {
        Verb::Get => read::get(&call),
        Verb::List => read::list(&call),
        Verb::Watch => watch::watch(&call),
        Verb::Create => write::create(&call),
        Verb::Update => write::update(&call),
        Verb::Patch => patch::patch(&call),
        Verb::Delete => write::delete(&call),
        Verb::DeleteCollection => write::delete_collection(&call),
    }
}

/// Authenticates the request and applies impersonation.
async fn authenticate(
    api: &Arc<Api>,
    headers: &HeaderMap,
    peer: Option<&ClientCertificate>,
) -> Result<UserInfo, ApiError> {
    let authorization = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok());
    let user = {
        let state = api.store.lock();
        authn::authenticate(
            peer,
            authorization,
            &StoreSecrets(&state),
            jiff::Timestamp::now(),
        )
        .map_err(|_| ApiError::unauthorized())?
    };
    let impersonation =
        authn::impersonation_request(headers).map_err(|e| ApiError::bad_request(e.to_string()))?;
    let Some(impersonation) = impersonation else {
        return Ok(user);
    };
    for attributes in authz::impersonation_attributes(&user, &impersonation) {
        let decision = api.authorize_request(&attributes).await?;
        if !decision.allowed {
            return Err(forbidden(&attributes, &decision.reason));
        }
    }
    Ok(authn::impersonated_user(&impersonation))
}

/// A list's or watch's selectors for the authorizers (`AuthorizeWithSelectors`), and the name a
/// `metadata.name=<x>` field selector pins, as kube-apiserver sets it for single-object watches.
fn with_selectors(
    mut attributes: Attributes,
    query: &std::collections::BTreeMap<String, String>,
) -> Attributes {
    if !matches!(attributes.verb.as_str(), "list" | "watch") {
        return attributes;
    }
    let selector = |key: &str| query.get(key).cloned().unwrap_or_default();
    attributes.field_selector = selector("fieldSelector");
    attributes.label_selector = selector("labelSelector");
    if attributes.name.is_empty()
        && let Some(name) = attributes
            .field_selector
            .split(',')
            .find_map(|r| r.trim().strip_prefix("metadata.name="))
    {
        attributes.name = name.to_owned();
    }
    attributes
}

/// Authorizes or answers 403 (500 when the authorization webhook fails).
pub async fn check(api: &Api, attributes: &Attributes) -> Result<(), ApiError> {
    let decision = api.authorize_request(attributes).await?;
    if decision.allowed {
        Ok(())
    } else {
        Err(forbidden(attributes, &decision.reason))
    }
}

fn forbidden(attributes: &Attributes, reason: &str) -> ApiError {
    ApiError {
        code: 403,
        body: authz::forbidden_status(attributes, reason),
        plain: None,
        retry_after: None,
    }
}

/// A JSON response.
pub fn json_response(code: u16, value: &Value) -> Response<Body> {
    let bytes = serde_json::to_vec(value).unwrap_or_default();
    response(code, "application/json", Bytes::from(bytes))
}

/// A response with a body and content type.
pub fn response(code: u16, content_type: &str, body: Bytes) -> Response<Body> {
    let mut response = Response::new(Full::new(body).map_err(|never| match never {}).boxed());
    *response.status_mut() =
        StatusCode::from_u16(code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    if let Ok(value) = http::HeaderValue::from_str(content_type) {
        response.headers_mut().insert(header::CONTENT_TYPE, value);
    }
    response
}

/// The response for an API error.
pub fn error_response(error: &ApiError) -> Response<Body> {
    let mut out = match &error.plain {
        Some(text) => response(
            error.code,
            "text/plain; charset=utf-8",
            Bytes::from(format!("{text}\n")),
        ),
        None => json_response(error.code, &error.body),
    };
    if let Some(seconds) = error.retry_after {
        out.headers_mut()
            .insert(header::RETRY_AFTER, http::HeaderValue::from(seconds));
    }
    out
}

/// An object as the client asked for it: unchanged, or as PartialObjectMetadata.
pub fn present(call: &Call<'_>, object: &Value) -> Value {
    if call.metadata_only() {
        serde_json::json!({
            "kind": "PartialObjectMetadata",
            "apiVersion": "meta.k8s.io/v1",
            "metadata": object.get("metadata").cloned().unwrap_or(Value::Null),
        })
    } else {
        object.clone()
    }
}

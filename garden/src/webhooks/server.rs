//! The webhooks' HTTPS server: TLS with the configured serving certificate (kept current by
//! [`super::certificate`]; no client authentication, as gardener-admission-controller), HTTP/1.1
//! and HTTP/2, and the routes `POST /webhooks/auth/seed` (SubjectAccessReview),
//! `POST /webhooks/admission/seedrestriction` (AdmissionReview) and, with
//! `webhooks.enableDebugHandlers`, `GET /debug/resource-dependency-graph`.

use std::net::SocketAddr;
use std::sync::Arc;

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::service::TowerToHyperService;
use serde_json::Value;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

use super::authorizer::{decide, decide_unrelated};
use super::informers::GraphState;
use super::metrics::Decision;
use super::review::{self, Verdict};
use super::selectors::SelectorProbe;

/// Path of the seed authorizer.
pub const AUTHORIZER_PATH: &str = "/webhooks/auth/seed";
/// Path of the SeedRestriction admission webhook.
pub const RESTRICTION_PATH: &str = "/webhooks/admission/seedrestriction";
/// Path of the graph's debug page.
pub const GRAPH_PATH: &str = "/debug/resource-dependency-graph";

/// Why the webhook server cannot start.
#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    /// The serving certificate or key cannot be read or used.
    #[error("webhook serving certificate in {dir}: {message}")]
    Certificate {
        /// `webhooks.tls.serverCertDir`.
        dir: String,
        /// What is wrong (never key material).
        message: String,
    },
    /// The address cannot be bound.
    #[error("binding webhook server to {address}: {source}")]
    Bind {
        /// The address.
        address: SocketAddr,
        /// The cause.
        source: std::io::Error,
    },
}

/// What the handlers share.
#[derive(Debug)]
pub struct Webhooks {
    /// The authorizer's graph.
    pub graph: Arc<GraphState>,
    /// The selector probe.
    pub selectors: SelectorProbe,
    /// Live reads for SeedRestriction.
    pub lookup: super::restriction::KubeLookup,
    /// The webhooks' series in the process's `/metrics`.
    pub metrics: super::metrics::WebhookMetrics,
    /// Whether the graph's debug page is served.
    pub debug_handlers: bool,
}

/// The routes.
pub fn router(webhooks: Arc<Webhooks>) -> Router {
    let router = Router::new()
        .route(AUTHORIZER_PATH, post(authorize))
        .route(RESTRICTION_PATH, post(restrict));
    let router = if webhooks.debug_handlers {
        router.route(GRAPH_PATH, axum::routing::get(graph_page))
    } else {
        router
    };
    router.with_state(webhooks)
}

/// `GET /debug/resource-dependency-graph` (only with `webhooks.enableDebugHandlers`): the graph
/// as text, every edge `from -> to`; with `?seed=<name>`, what that seed may reach through it.
async fn graph_page(
    State(webhooks): State<Arc<Webhooks>>,
    axum::extract::Query(query): axum::extract::Query<std::collections::HashMap<String, String>>,
) -> Response {
    let text = webhooks.graph.read(|graph| match query.get("seed") {
        Some(seed) => {
            let seed_vertex = super::graph::Vertex::cluster(super::graph::Kind::Seed, seed);
            let reaching = graph.reaching(&seed_vertex);
            let mut text = format!("{} vertices reach Seed {seed}\n", reaching.len());
            for vertex in reaching {
                text.push_str(&format!("{vertex}\n"));
            }
            text
        }
        None => {
            let edges = graph.edges();
            let mut text = format!("{} vertices, {} edges\n", graph.len(), edges.len());
            for (from, to) in edges {
                text.push_str(&format!("{from} -> {to}\n"));
            }
            text
        }
    });
    ([(header::CONTENT_TYPE, "text/plain; charset=utf-8")], text).into_response()
}

/// Binds `address`; returns the bound address and the serving future (until `stop`).
///
/// # Errors
/// [`ServerError::Bind`].
pub async fn bind(
    address: SocketAddr,
    tls: Arc<rustls::ServerConfig>,
    router: Router,
    stop: CancellationToken,
) -> Result<(SocketAddr, impl Future<Output = ()>), ServerError> {
    let listener = TcpListener::bind(address)
        .await
        .map_err(|source| ServerError::Bind { address, source })?;
    let bound = listener
        .local_addr()
        .map_err(|source| ServerError::Bind { address, source })?;
    Ok((bound, serve(listener, tls, router, stop)))
}

async fn serve(
    listener: TcpListener,
    tls: Arc<rustls::ServerConfig>,
    router: Router,
    stop: CancellationToken,
) {
    let acceptor = tokio_rustls::TlsAcceptor::from(tls);
    let tasks = tokio_util::task::TaskTracker::new();
    loop {
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            () = stop.cancelled() => break,
        };
        let Ok((tcp, _)) = accepted else { continue };
        let _ = tcp.set_nodelay(true);
        let (acceptor, router, stop) = (acceptor.clone(), router.clone(), stop.clone());
        tasks.spawn(async move {
            let Ok(stream) = acceptor.accept(tcp).await else {
                return;
            };
            let service = TowerToHyperService::new(router);
            let builder = hyper_util::server::conn::auto::Builder::new(TokioExecutor::new());
            let connection = builder.serve_connection(TokioIo::new(stream), service);
            tokio::pin!(connection);
            tokio::select! {
                _ = connection.as_mut() => {}
                () = stop.cancelled() => {
                    connection.as_mut().graceful_shutdown();
                    let _ = connection.await;
                }
            }
        });
    }
    tasks.close();
    tasks.wait().await;
}

fn json_response(status: StatusCode, body: &Value) -> Response {
    (
        status,
        [(header::CONTENT_TYPE, "application/json")],
        body.to_string(),
    )
        .into_response()
}

/// `POST /webhooks/auth/seed`, counted in the webhooks' metrics.
async fn authorize(
    State(webhooks): State<Arc<Webhooks>>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let started = std::time::Instant::now();
    let (decision, response) = review_access(&webhooks, &headers, &body).await;
    webhooks.metrics.authorized(decision, started.elapsed());
    response
}

/// The decision on one SubjectAccessReview body and the response carrying it.
///
/// Order matters: a review that concerns no seed (the requester is not a seed, or no resource is
/// asked for) is answered from the body alone, before the graph's sync state and before the
/// selector probe. kube-apiserver with `--authorization-mode=RBAC,Webhook` asks this webhook
/// about every request RBAC leaves open — the probe's own SubjectAccessReview among them — so
/// anything that waited here for the garden would wait for itself.
async fn review_access(
    webhooks: &Webhooks,
    headers: &HeaderMap,
    body: &Bytes,
) -> (Decision, Response) {
    let review = match read_review(headers, body) {
        Ok(review) => review,
        Err(verdict) => return answer("authorization.k8s.io/v1", verdict),
    };
    if let Some(verdict) = decide_unrelated(&review) {
        return answer(&review.api_version, verdict);
    }
    if !webhooks.graph.synced() {
        // Never decide from a partial graph: kube-apiserver applies its failure policy.
        let response = (
            StatusCode::SERVICE_UNAVAILABLE,
            "seed authorizer graph is not synced yet",
        )
            .into_response();
        return (Decision::Unavailable, response);
    }
    let selectors = match webhooks.selectors.selectors().await {
        Ok(selectors) => selectors,
        Err(message) => return answer(&review.api_version, Verdict::Error(500, message)),
    };
    let verdict = webhooks
        .graph
        .read(|graph| decide(&review, graph, selectors));
    if let (Verdict::NoOpinion(reason), Some(attributes)) = (&verdict, &review.resource)
        && !reason.is_empty()
    {
        tracing::debug!(
            user = %review.user, verb = %attributes.verb, resource = %attributes.resource,
            namespace = %attributes.namespace, name = %attributes.name, reason = %reason,
            "seed authorizer has no opinion"
        );
    }
    answer(&review.api_version, verdict)
}

/// The review in `body`, or the evaluation error for a body that is none (spec §1.3).
fn read_review(headers: &HeaderMap, body: &Bytes) -> Result<review::Review, Verdict> {
    if body.is_empty() {
        return Err(Verdict::Error(422, "request body is empty".to_owned()));
    }
    let content_type = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    if content_type.split(';').next().map(str::trim) != Some("application/json") {
        return Err(Verdict::Error(
            400,
            format!("contentType={content_type}, expected application/json"),
        ));
    }
    serde_json::from_slice::<Value>(body)
        .map_err(|e| (400, e.to_string()))
        .and_then(|value| review::parse(&value))
        .map_err(|(code, message)| Verdict::Error(code, message))
}

/// `verdict` as counted and as the HTTP 200 answer to a review of `api_version`.
fn answer(api_version: &str, verdict: Verdict) -> (Decision, Response) {
    let decision = match &verdict {
        Verdict::Allow => Decision::Allow,
        Verdict::NoOpinion(_) => Decision::NoOpinion,
        Verdict::Error(..) => Decision::Error,
    };
    let response = json_response(StatusCode::OK, &review::response(api_version, &verdict));
    (decision, response)
}

/// `POST /webhooks/admission/seedrestriction`.
async fn restrict(State(webhooks): State<Arc<Webhooks>>, body: Bytes) -> Response {
    use super::restriction::{Outcome, Request, admit, response};
    let review: Value = match serde_json::from_slice(&body) {
        Ok(review) => review,
        Err(error) => return (StatusCode::BAD_REQUEST, error.to_string()).into_response(),
    };
    let request = match Request::parse(&review) {
        Ok(request) => request,
        Err(message) => return (StatusCode::BAD_REQUEST, message).into_response(),
    };
    let outcome = admit(&request, &webhooks.lookup).await;
    if super::identity::seed_identity(&request.user, &request.groups).is_some() {
        let allowed = matches!(outcome, Outcome::Allow(_));
        webhooks
            .metrics
            .admitted(&request.operation, &request.resource, allowed);
    }
    if let Outcome::Deny(code, message) = &outcome {
        tracing::debug!(
            user = %request.user, operation = %request.operation, resource = %request.resource,
            namespace = %request.namespace, name = %request.name, code, message = %message,
            "seed restriction denied a request"
        );
    }
    json_response(StatusCode::OK, &response(&request.uid, &outcome))
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use prometheus_client::registry::Registry;
    use serde_json::json;

    use super::*;
    use crate::webhooks::informers::GraphState;
    use crate::webhooks::metrics::WebhookMetrics;
    use crate::webhooks::restriction::KubeLookup;
    use crate::webhooks::selectors::tests::silent_garden;

    /// Webhooks whose garden never answers: the selector probe would hang until its timeout.
    async fn webhooks_of_a_silent_garden(synced: bool) -> (Webhooks, Registry) {
        let (client, _) = silent_garden().await;
        let mut registry = Registry::with_prefix("seedlet");
        let metrics = WebhookMetrics::register(&mut registry);
        let clock = Arc::new(seedlet_runtime::clock::SystemClock);
        let graph = Arc::new(GraphState::new(clock, metrics.clone()));
        if synced {
            graph.mark_synced();
        }
        let webhooks = Webhooks {
            graph,
            selectors: SelectorProbe::with_timeout(client.clone(), Duration::from_secs(600)),
            lookup: KubeLookup { client },
            metrics,
            debug_handlers: false,
        };
        (webhooks, registry)
    }

    fn json_headers() -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(
            header::CONTENT_TYPE,
            "application/json".parse().expect("value"),
        );
        headers
    }

    fn body(user: &str, groups: &[&str], resource: bool) -> Bytes {
        let attributes = if resource {
            json!({"resourceAttributes": {"namespace": "default", "verb": "get",
                "group": "core.gardener.cloud", "resource": "shoots",
                "labelSelector": {"rawSelector": "is-kubernetes-feature-gate-AuthorizeWithSelectors=enabled?"}}})
        } else {
            json!({"nonResourceAttributes": {"path": "/healthz", "verb": "get"}})
        };
        let mut spec = json!({"user": user, "groups": groups});
        spec.as_object_mut()
            .expect("object")
            .extend(attributes.as_object().expect("object").clone());
        let review = json!({"apiVersion": "authorization.k8s.io/v1",
            "kind": "SubjectAccessReview", "spec": spec});
        Bytes::from(review.to_string())
    }

    /// The decision, HTTP status and `status` of the answer, within a second.
    async fn reviewed(webhooks: &Webhooks, body: &Bytes) -> (Decision, StatusCode, Value) {
        let (decision, response) = tokio::time::timeout(
            Duration::from_secs(1),
            review_access(webhooks, &json_headers(), body),
        )
        .await
        .expect("answered without asking the garden");
        let status = response.status();
        let bytes = axum::body::to_bytes(response.into_body(), 1 << 16)
            .await
            .expect("body");
        let value = serde_json::from_slice::<Value>(&bytes).unwrap_or(Value::Null);
        (decision, status, value["status"].clone())
    }

    #[tokio::test]
    async fn reviews_of_non_seeds_get_no_opinion_at_once_while_unsynced_or_the_probe_hangs() {
        let cases: &[(&str, &[&str], bool)] = &[
            // The selector probe's own review, asked back by kube-apiserver (RBAC,Webhook).
            ("gardener-admission-controller", &[], true),
            ("alice", &["system:authenticated"], true),
            (
                "system:serviceaccount:garden:gardenlet-bootstrap-a",
                &["system:serviceaccounts", "system:serviceaccounts:garden"],
                true,
            ),
            // A seed asking for a non-resource URL concerns no seed object either.
            (
                "gardener.cloud:system:seed:a",
                &["gardener.cloud:system:seeds"],
                false,
            ),
        ];
        for synced in [false, true] {
            let (webhooks, _registry) = webhooks_of_a_silent_garden(synced).await;
            for (user, groups, resource) in cases {
                let (decision, status, answer) =
                    reviewed(&webhooks, &body(user, groups, *resource)).await;
                assert_eq!(
                    (decision, status, answer),
                    (
                        Decision::NoOpinion,
                        StatusCode::OK,
                        json!({"allowed": false})
                    ),
                    "{user} (synced: {synced})"
                );
            }
        }
    }

    #[tokio::test]
    async fn answers_are_counted_unavailable_for_seeds_and_no_opinion_for_others_before_sync() {
        let (webhooks, registry) = webhooks_of_a_silent_garden(false).await;
        let webhooks = Arc::new(webhooks);
        let seed = body(
            "gardener.cloud:system:seed:a",
            &["gardener.cloud:system:seeds"],
            true,
        );
        let alice = body("alice", &["system:authenticated"], true);
        for (review, status) in [
            (seed, StatusCode::SERVICE_UNAVAILABLE),
            (alice.clone(), StatusCode::OK),
            (alice, StatusCode::OK),
        ] {
            let response = authorize(State(webhooks.clone()), json_headers(), review).await;
            assert_eq!(response.status(), status);
        }
        let mut text = String::new();
        prometheus_client::encoding::text::encode(&mut text, &registry).expect("encode");
        for line in [
            "seedlet_seed_authorizer_requests_total{decision=\"unavailable\"} 1",
            "seedlet_seed_authorizer_requests_total{decision=\"no_opinion\"} 2",
        ] {
            assert!(
                text.lines().any(|l| l == line),
                "{line} missing in:\n{text}"
            );
        }
    }
}

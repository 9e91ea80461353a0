//! A spec freeze for tests: a validating admission webhook served in-process over TLS on
//! `127.0.0.1:0` (its own CA in the configuration's `caBundle`) and registered in a sandbox as a
//! ValidatingWebhookConfiguration. While closed it denies every matched CREATE and DELETE and
//! every UPDATE that changes `spec`; metadata and status changes pass. Tests use it to make a
//! real write (or dry run) fail the way a policy webhook refuses it.

use std::sync::{Arc, Mutex, PoisonError};

use base64::Engine;
use bytes::Bytes;
use http::{Request, Response};
use http_body_util::{BodyExt, Full};
use hyper_util::rt::TokioIo;
use kube::Api;
use kube::api::{DynamicObject, PostParams};
use kube::discovery::ApiResource;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use crate::auth::pki::CertificateAuthority;

#[derive(Default)]
struct Shared {
    /// The denial message while closed.
    closed: Option<String>,
    /// The `request` of every AdmissionReview received.
    reviews: Vec<Value>,
}

/// A running spec-freeze webhook; stops serving when dropped.
pub struct SpecFreeze {
    shared: Arc<Mutex<Shared>>,
    stop: CancellationToken,
}

impl SpecFreeze {
    /// Serves the webhook and registers it as ValidatingWebhookConfiguration `name` for `rules`
    /// (a list of `RuleWithOperations`), `sideEffects: None`, `failurePolicy: Fail`. Open at
    /// first.
    ///
    /// # Panics
    /// When the listener, the TLS setup or the registration fails (a test helper).
    pub async fn register(client: &kube::Client, name: &str, rules: Value) -> SpecFreeze {
        let ca = CertificateAuthority::generate("spec-freeze").expect("webhook CA");
        let tls = ca.server_config().expect("webhook TLS");
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind webhook");
        let port = listener.local_addr().expect("webhook address").port();
        let gate = SpecFreeze {
            shared: Arc::default(),
            stop: CancellationToken::new(),
        };
        tokio::spawn(serve(
            listener,
            tokio_rustls::TlsAcceptor::from(tls),
            gate.shared.clone(),
            gate.stop.clone(),
        ));
        let configuration = json!({
            "apiVersion": "admissionregistration.k8s.io/v1",
            "kind": "ValidatingWebhookConfiguration",
            "metadata": {"name": name},
            "webhooks": [{
                "name": format!("{name}.seedlet.test"),
                "admissionReviewVersions": ["v1"],
                "sideEffects": "None",
                "failurePolicy": "Fail",
                "clientConfig": {
                    "url": format!("https://127.0.0.1:{port}/validate"),
                    "caBundle": base64::engine::general_purpose::STANDARD.encode(ca.ca_pem()),
                },
                "rules": rules,
            }],
        });
        let resource = ApiResource {
            group: "admissionregistration.k8s.io".into(),
            version: "v1".into(),
            api_version: "admissionregistration.k8s.io/v1".into(),
            kind: "ValidatingWebhookConfiguration".into(),
            plural: "validatingwebhookconfigurations".into(),
        };
        let object: DynamicObject = serde_json::from_value(configuration).expect("configuration");
        Api::<DynamicObject>::all_with(client.clone(), &resource)
            .create(&PostParams::default(), &object)
            .await
            .expect("register the webhook");
        gate
    }

    /// Denies spec changes with `message` from now on.
    pub fn close(&self, message: &str) {
        self.lock().closed = Some(message.to_owned());
    }

    /// Lets everything through from now on.
    pub fn open(&self) {
        self.lock().closed = None;
    }

    /// The `request` of every AdmissionReview received so far.
    pub fn reviews(&self) -> Vec<Value> {
        self.lock().reviews.clone()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Shared> {
        self.shared.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl Drop for SpecFreeze {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

/// The answer to one AdmissionReview request.
fn decide(shared: &Mutex<Shared>, request: &Value) -> Value {
    let mut shared = shared.lock().unwrap_or_else(PoisonError::into_inner);
    shared.reviews.push(request.clone());
    let changes_spec = request["operation"] != "UPDATE"
        || request["object"]["spec"] != request["oldObject"]["spec"];
    match &shared.closed {
        Some(message) if changes_spec => json!({"uid": request["uid"], "allowed": false,
            "status": {"code": 403, "reason": "Forbidden", "message": message}}),
        _ => json!({"uid": request["uid"], "allowed": true}),
    }
}

async fn serve(
    listener: tokio::net::TcpListener,
    acceptor: tokio_rustls::TlsAcceptor,
    shared: Arc<Mutex<Shared>>,
    stop: CancellationToken,
) {
    loop {
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            () = stop.cancelled() => return,
        };
        let Ok((tcp, _)) = accepted else { continue };
        let (acceptor, shared, stop) = (acceptor.clone(), shared.clone(), stop.clone());
        tokio::spawn(async move {
            let Ok(stream) = acceptor.accept(tcp).await else {
                return;
            };
            let service = hyper::service::service_fn(move |request: Request<_>| {
                let shared = shared.clone();
                async move {
                    let body = BodyExt::collect(request.into_body())
                        .await
                        .map(|b| b.to_bytes())
                        .unwrap_or_default();
                    let review: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
                    let response = decide(&shared, &review["request"]);
                    let answer = json!({"apiVersion": "admission.k8s.io/v1",
                        "kind": "AdmissionReview", "response": response});
                    Ok::<_, std::convert::Infallible>(Response::new(Full::new(Bytes::from(
                        answer.to_string(),
                    ))))
                }
            });
            let connection = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service);
            tokio::select! {
                _ = connection => {}
                () = stop.cancelled() => {}
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_closed_freeze_denies_spec_changes_creates_and_deletes_only() {
        let shared = Mutex::new(Shared {
            closed: Some("frozen".into()),
            reviews: Vec::new(),
        });
        let update = |old: Value, new: Value| json!({"uid": "u", "operation": "UPDATE", "object": new, "oldObject": old});
        for (request, allowed) in [
            (
                update(json!({"spec": {"a": 1}}), json!({"spec": {"a": 2}})),
                false,
            ),
            (
                update(
                    json!({"spec": {"a": 1}}),
                    json!({"spec": {"a": 1}, "metadata": {"labels": {"x": "y"}}}),
                ),
                true,
            ),
            (json!({"uid": "u", "operation": "CREATE"}), false),
            (json!({"uid": "u", "operation": "DELETE"}), false),
        ] {
            let answer = decide(&shared, &request);
            assert_eq!(answer["allowed"], allowed, "{request}");
            assert_eq!(answer["uid"], "u");
        }
        shared.lock().unwrap().closed = None;
        let answer = decide(&shared, &json!({"uid": "v", "operation": "CREATE"}));
        assert_eq!(answer["allowed"], true);
        assert_eq!(shared.lock().unwrap().reviews.len(), 5);
    }
}

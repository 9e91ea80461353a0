//! The webhook authorizer of `--authorization-webhook-config-file`: after RBAC has no opinion,
//! a SubjectAccessReview is POSTed to the server a kubeconfig file names (HTTPS with its CA and
//! client certificate or token, or plain HTTP), `status.allowed` allows, anything else denies
//! with `status.reason`, answers are cached (allowed for `authorized_ttl`, others for
//! `unauthorized_ttl`) and a failing webhook makes the request fail with 500, as kube-apiserver's
//! authorization filter does with authorizer errors.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use base64::Engine;
use serde_json::{Value, json};

use super::{Attributes, Decision};
use crate::webhook::Endpoint;

/// How long one webhook call may take (kube-apiserver's webhook client timeout).
const CALL_TIMEOUT: Duration = Duration::from_secs(30);

/// Configuration of the webhook authorizer.
#[derive(Clone, Debug)]
pub struct WebhookConfig {
    /// Kubeconfig file naming the webhook (its current context, or its first cluster and user).
    pub config_file: PathBuf,
    /// How long allowed answers are cached (kube-apiserver's default: 5 minutes).
    pub authorized_ttl: Duration,
    /// How long other answers are cached (default: 30 seconds).
    pub unauthorized_ttl: Duration,
    /// `None`: the legacy flags, where a failing webhook is a 500. `Some`: a structured
    /// authorization configuration's `failurePolicy`; with no authorizer after the webhook both
    /// policies end in a 403 naming the failure.
    pub failure_policy: Option<FailurePolicy>,
}

/// `failurePolicy` of a webhook in a structured authorization configuration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FailurePolicy {
    /// The request is denied.
    Deny,
    /// The next authorizer decides.
    NoOpinion,
}

impl WebhookConfig {
    /// A configuration with kube-apiserver's default cache TTLs.
    pub fn new(config_file: impl Into<PathBuf>) -> Self {
        WebhookConfig {
            config_file: config_file.into(),
            authorized_ttl: Duration::from_secs(300),
            unauthorized_ttl: Duration::from_secs(30),
            failure_policy: None,
        }
    }
}

/// Why the webhook configuration cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum WebhookError {
    /// The kubeconfig file could not be read or parsed.
    #[error("read authorization webhook kubeconfig {path}: {message}")]
    Config {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
}

/// The webhook authorizer with its answer cache.
pub struct WebhookAuthorizer {
    endpoint: Endpoint,
    authorized_ttl: Duration,
    unauthorized_ttl: Duration,
    failure_policy: Option<FailurePolicy>,
    cache: Mutex<HashMap<String, (Decision, Instant)>>,
}

impl WebhookAuthorizer {
    /// Reads the kubeconfig file.
    ///
    /// # Errors
    /// When the file cannot be read, has no cluster server, or its CA / client credentials do not
    /// load; the error names the file and what is wrong (never the key material).
    pub fn load(config: &WebhookConfig) -> Result<Self, WebhookError> {
        let fail = |message: String| WebhookError::Config {
            path: config.config_file.clone(),
            message,
        };
        let text = std::fs::read_to_string(&config.config_file).map_err(|e| fail(e.to_string()))?;
        let kubeconfig: Value = serde_yaml::from_str(&text).map_err(|e| fail(e.to_string()))?;
        let endpoint = endpoint(&kubeconfig, &config.config_file).map_err(fail)?;
        Ok(WebhookAuthorizer {
            endpoint,
            authorized_ttl: config.authorized_ttl,
            unauthorized_ttl: config.unauthorized_ttl,
            failure_policy: config.failure_policy,
            cache: Mutex::new(HashMap::new()),
        })
    }

    /// The configured failure policy (`None` for the legacy flags).
    pub fn failure_policy(&self) -> Option<FailurePolicy> {
        self.failure_policy
    }

    /// Asks the webhook (or the cache) about `attributes`.
    ///
    /// # Errors
    /// When the call fails or the answer is not a SubjectAccessReview.
    pub async fn authorize(&self, attributes: &Attributes) -> Result<Decision, String> {
        let review = review_for(attributes);
        let key = review["spec"].to_string();
        if let Some(decision) = self.cached(&key) {
            return Ok(decision);
        }
        let answer = self
            .endpoint
            .post_json(&review)
            .await
            .map_err(|e| format!("authorization webhook: {e}"))?;
        let status = answer.get("status").cloned().unwrap_or(Value::Null);
        let decision = Decision {
            allowed: status.get("allowed").and_then(Value::as_bool) == Some(true),
            reason: status
                .get("reason")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string(),
        };
        let ttl = if decision.allowed {
            self.authorized_ttl
        } else {
            self.unauthorized_ttl
        };
        self.cache
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .insert(key, (decision.clone(), Instant::now() + ttl));
        Ok(decision)
    }

    fn cached(&self, key: &str) -> Option<Decision> {
        let mut cache = self
            .cache
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        match cache.get(key) {
            Some((decision, until)) if *until > Instant::now() => Some(decision.clone()),
            Some(_) => {
                cache.remove(key);
                None
            }
            None => None,
        }
    }
}

/// The SubjectAccessReview kube-apiserver sends for `attributes`.
pub fn review_for(attributes: &Attributes) -> Value {
    let user = &attributes.user;
    let mut spec = json!({"user": user.username, "groups": user.groups});
    if !user.uid.is_empty() {
        spec["uid"] = json!(user.uid);
    }
    if !user.extra.is_empty() {
        spec["extra"] = json!(user.extra);
    }
    if attributes.resource_request {
        spec["resourceAttributes"] = json!({
            "namespace": attributes.namespace,
            "verb": attributes.verb,
            "group": attributes.api_group,
            "version": attributes.api_version,
            "resource": attributes.resource,
            "subresource": attributes.subresource,
            "name": attributes.name,
        });
        // AuthorizeWithSelectors: list and watch carry their selectors.
        for (key, selector) in [
            ("fieldSelector", &attributes.field_selector),
            ("labelSelector", &attributes.label_selector),
        ] {
            if !selector.is_empty() {
                spec["resourceAttributes"][key] = json!({"rawSelector": selector});
            }
        }
    } else {
        spec["nonResourceAttributes"] = json!({"path": attributes.path, "verb": attributes.verb});
    }
    json!({"apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview", "metadata": {"creationTimestamp": null}, "spec": spec, "status": {"allowed": false}})
}

/// The server, TLS and credentials of the kubeconfig's current (or first) context.
fn endpoint(kubeconfig: &Value, file: &std::path::Path) -> Result<Endpoint, String> {
    let named = |list: &str, name: Option<&str>, field: &str| -> Value {
        let items = kubeconfig[list].as_array().cloned().unwrap_or_default();
        let item = match name {
            Some(name) => items.into_iter().find(|i| i["name"] == name),
            None => items.into_iter().next(),
        };
        item.map(|i| i[field].clone()).unwrap_or(Value::Null)
    };
    let context = kubeconfig["current-context"]
        .as_str()
        .map(|c| named("contexts", Some(c), "context"))
        .unwrap_or(Value::Null);
    let cluster = named("clusters", context["cluster"].as_str(), "cluster");
    let user = named("users", context["user"].as_str(), "user");
    let server = cluster["server"]
        .as_str()
        .ok_or("clusters[].cluster.server is missing")?;
    let base = file.parent().unwrap_or(std::path::Path::new("."));
    let data = |object: &Value, key: &str| -> Result<Option<Vec<u8>>, String> {
        if let Some(encoded) = object[format!("{key}-data")].as_str() {
            return base64::engine::general_purpose::STANDARD
                .decode(encoded)
                .map(Some)
                .map_err(|_| format!("{key}-data is not base64"));
        }
        match object[key].as_str() {
            Some(path) => std::fs::read(base.join(path))
                .map(Some)
                .map_err(|e| format!("read {key} {path}: {e}")),
            None => Ok(None),
        }
    };
    let client_cert = match (
        data(&user, "client-certificate")?,
        data(&user, "client-key")?,
    ) {
        (Some(cert), Some(key)) => Some((cert, key)),
        _ => None,
    };
    Endpoint::new(
        server,
        data(&cluster, "certificate-authority")?,
        client_cert,
        user["token"].as_str().map(str::to_string),
        CALL_TIMEOUT,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::auth::authn::UserInfo;

    #[test]
    fn reviews_carry_resource_or_non_resource_attributes() {
        let user = UserInfo {
            username: "u".into(),
            groups: vec!["g".into()],
            ..UserInfo::default()
        };
        let resource = Attributes {
            user: user.clone(),
            verb: "list".into(),
            api_group: "apps".into(),
            api_version: "v1".into(),
            resource: "deployments".into(),
            namespace: "ns".into(),
            resource_request: true,
            ..Attributes::default()
        };
        let review = review_for(&resource);
        assert_eq!(
            review["spec"]["resourceAttributes"],
            json!({"namespace": "ns", "verb": "list", "group": "apps", "version": "v1", "resource": "deployments", "subresource": "", "name": ""})
        );
        assert_eq!(review["spec"]["user"], "u");
        let path = Attributes {
            user,
            verb: "get".into(),
            path: "/healthz".into(),
            ..Attributes::default()
        };
        assert_eq!(
            review_for(&path)["spec"]["nonResourceAttributes"],
            json!({"path": "/healthz", "verb": "get"})
        );
    }

    #[test]
    fn endpoints_come_from_the_current_context() {
        let kubeconfig = json!({
            "clusters": [{"name": "other", "cluster": {"server": "http://10.0.0.1"}},
                         {"name": "authz", "cluster": {"server": "http://127.0.0.1:8443/authorize"}}],
            "users": [{"name": "api", "user": {"token": "t"}}],
            "contexts": [{"name": "c", "context": {"cluster": "authz", "user": "api"}}],
            "current-context": "c",
        });
        let found = endpoint(&kubeconfig, std::path::Path::new("/x/config")).expect("valid");
        assert_eq!(
            found.target(),
            ("127.0.0.1", 8443, "/authorize", false, true)
        );
        let https_without_ca =
            json!({"clusters": [{"name": "a", "cluster": {"server": "https://127.0.0.1"}}]});
        assert!(endpoint(&https_without_ca, std::path::Path::new("/x")).is_err());
    }
}

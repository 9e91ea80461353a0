//! The credentials copy in the seed (`garden/bucket-<name>`, `garden/entry-<name>`), pure: what it
//! should hold for Secret credentials (their data, no labels, only the timestamp annotation) and
//! for WorkloadIdentity credentials (spec §1.4: the token requestor's labels and annotations, the
//! `config` from the identity's `targetSystem.providerConfig`, the `token` the requestor wrote
//! kept), and whether an existing copy must be written and counts as changed.

use std::collections::BTreeMap;

use k8s_openapi::ByteString;
use k8s_openapi::api::core::v1::Secret;
use seedlet_api::names::annotations;
use seedlet_api::security::WorkloadIdentity;
use serde_json::Value;

/// `security.gardener.cloud/purpose`: what a Secret is for.
pub const PURPOSE_LABEL: &str = "security.gardener.cloud/purpose";
/// The purpose of a Secret the workload identity token requestor fills.
pub const PURPOSE_TOKEN_REQUESTOR: &str = "workload-identity-token-requestor";
/// Label naming the identity's target system type.
pub const PROVIDER_LABEL: &str = "workloadidentity.security.gardener.cloud/provider";
/// Annotation naming the WorkloadIdentity.
pub const NAME_ANNOTATION: &str = "workloadidentity.security.gardener.cloud/name";
/// Annotation naming the WorkloadIdentity's namespace.
pub const NAMESPACE_ANNOTATION: &str = "workloadidentity.security.gardener.cloud/namespace";
/// Annotation with the JSON of the core object the token is for.
pub const CONTEXT_OBJECT_ANNOTATION: &str =
    "workloadidentity.security.gardener.cloud/context-object";
/// Annotation the token requestor sets; kept across rewrites.
pub const TOKEN_RENEW_ANNOTATION: &str =
    "workloadidentity.security.gardener.cloud/token-renew-timestamp";
/// Data key of the token the requestor writes.
pub const TOKEN_KEY: &str = "token";
/// Data key of the identity's provider configuration.
pub const CONFIG_KEY: &str = "config";

/// Resolved credentials of a core BackupBucket or BackupEntry.
#[derive(Debug, Clone)]
pub enum Credentials {
    /// A `v1` Secret (its data is copied).
    Secret(Secret),
    /// A `security.gardener.cloud/v1alpha1` WorkloadIdentity.
    WorkloadIdentity(WorkloadIdentity),
}

impl Credentials {
    /// `Secret` or `WorkloadIdentity`.
    pub fn kind(&self) -> &'static str {
        match self {
            Credentials::Secret(_) => "Secret",
            Credentials::WorkloadIdentity(_) => "WorkloadIdentity",
        }
    }

    /// `<namespace>/<name>` of the object.
    pub fn key(&self) -> String {
        let meta = match self {
            Credentials::Secret(secret) => &secret.metadata,
            Credentials::WorkloadIdentity(identity) => &identity.metadata,
        };
        format!(
            "{}/{}",
            meta.namespace.as_deref().unwrap_or_default(),
            meta.name.as_deref().unwrap_or_default()
        )
    }
}

/// The core object a seed secret is for (the WorkloadIdentity `context-object`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContextObject {
    /// `BackupBucket` or `BackupEntry`.
    pub kind: &'static str,
    /// Name.
    pub name: String,
    /// Namespace (BackupEntry only).
    pub namespace: Option<String>,
    /// UID.
    pub uid: String,
}

impl ContextObject {
    /// The annotation value: `{"kind","apiVersion","name"[,"namespace"],"uid"}`, in that order
    /// (Gardener's ContextObject field order).
    pub fn json(&self) -> String {
        #[derive(serde::Serialize)]
        #[serde(rename_all = "camelCase")]
        struct Wire<'a> {
            kind: &'a str,
            api_version: &'a str,
            name: &'a str,
            #[serde(skip_serializing_if = "Option::is_none")]
            namespace: Option<&'a str>,
            uid: &'a str,
        }
        serde_json::to_string(&Wire {
            kind: self.kind,
            api_version: "core.gardener.cloud/v1beta1",
            name: &self.name,
            namespace: self.namespace.as_deref(),
            uid: &self.uid,
        })
        .unwrap_or_default()
    }
}

/// What the seed secret should hold, besides the timestamp annotation.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Desired {
    /// Labels (none for Secret credentials).
    pub labels: BTreeMap<String, String>,
    /// Annotations other than the timestamp.
    pub annotations: BTreeMap<String, String>,
    /// Data.
    pub data: BTreeMap<String, ByteString>,
    /// `Opaque` for WorkloadIdentity credentials; the type is not copied from a Secret.
    pub type_: Option<String>,
    /// WorkloadIdentity credentials: labels and annotations count as content, `token` (the
    /// requestor writes it) does not.
    pub workload_identity: bool,
}

/// The desired seed secret for `credentials` of `context`, keeping the requestor's `token` and
/// renew annotation from `existing`.
pub fn desired(
    credentials: &Credentials,
    context: &ContextObject,
    existing: Option<&Secret>,
) -> Desired {
    match credentials {
        Credentials::Secret(secret) => Desired {
            data: secret.data.clone().unwrap_or_default(),
            ..Desired::default()
        },
        Credentials::WorkloadIdentity(identity) => workload_identity(identity, context, existing),
    }
}

fn workload_identity(
    identity: &WorkloadIdentity,
    context: &ContextObject,
    existing: Option<&Secret>,
) -> Desired {
    let target = identity.spec.fields.get("targetSystem");
    let provider = target
        .and_then(|t| t.get("type"))
        .and_then(Value::as_str)
        .unwrap_or_default();
    let labels = BTreeMap::from([
        (PURPOSE_LABEL.to_owned(), PURPOSE_TOKEN_REQUESTOR.to_owned()),
        (PROVIDER_LABEL.to_owned(), provider.to_owned()),
    ]);
    let mut annotations = BTreeMap::from([
        (
            NAME_ANNOTATION.to_owned(),
            identity.metadata.name.clone().unwrap_or_default(),
        ),
        (
            NAMESPACE_ANNOTATION.to_owned(),
            identity.metadata.namespace.clone().unwrap_or_default(),
        ),
        (CONTEXT_OBJECT_ANNOTATION.to_owned(), context.json()),
    ]);
    if let Some(renew) = existing
        .and_then(|s| s.metadata.annotations.as_ref())
        .and_then(|a| a.get(TOKEN_RENEW_ANNOTATION))
    {
        annotations.insert(TOKEN_RENEW_ANNOTATION.to_owned(), renew.clone());
    }
    let mut data = BTreeMap::new();
    if let Some(token) = existing
        .and_then(|s| s.data.as_ref())
        .and_then(|d| d.get(TOKEN_KEY))
    {
        data.insert(TOKEN_KEY.to_owned(), token.clone());
    }
    if let Some(config) = target.and_then(|t| t.get("providerConfig")) {
        data.insert(
            CONFIG_KEY.to_owned(),
            ByteString(config.to_string().into_bytes()),
        );
    }
    Desired {
        labels,
        annotations,
        data,
        type_: Some("Opaque".to_owned()),
        workload_identity: true,
    }
}

/// Whether `existing` must be written for `desired`: absent, different content (Secret
/// credentials: the data; WorkloadIdentity credentials: data but `token`, labels, annotations
/// besides the timestamp), or no timestamp. Returns `(write, content_changed)`.
pub fn plan(existing: Option<&Secret>, desired: &Desired) -> (bool, bool) {
    let Some(existing) = existing else {
        return (true, true);
    };
    let without_token = |data: &BTreeMap<String, ByteString>| {
        let mut data = data.clone();
        if desired.workload_identity {
            data.remove(TOKEN_KEY);
        }
        data
    };
    let current_annotations = existing.metadata.annotations.clone().unwrap_or_default();
    let stamped = current_annotations.contains_key(annotations::TIMESTAMP);
    let mut other_annotations = current_annotations;
    other_annotations.remove(annotations::TIMESTAMP);
    let data_changed =
        without_token(&existing.data.clone().unwrap_or_default()) != without_token(&desired.data);
    let metadata_changed = desired.workload_identity
        && (existing.metadata.labels.clone().unwrap_or_default() != desired.labels
            || other_annotations != desired.annotations);
    let changed = data_changed || metadata_changed;
    (changed || !stamped, changed)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn bytes(value: &str) -> ByteString {
        ByteString(value.as_bytes().to_vec())
    }

    fn identity(config: Value) -> WorkloadIdentity {
        serde_json::from_value(json!({
            "apiVersion": "security.gardener.cloud/v1alpha1", "kind": "WorkloadIdentity",
            "metadata": {"name": "wi", "namespace": "garden"},
            "spec": {"audiences": ["a"], "targetSystem": {"type": "local", "providerConfig": config}},
        }))
        .expect("identity")
    }

    fn bucket_context() -> ContextObject {
        ContextObject {
            kind: "BackupBucket",
            name: "b".into(),
            namespace: None,
            uid: "u1".into(),
        }
    }

    fn secret_from(desired: &Desired, stamp: Option<&str>) -> Secret {
        let mut annotations = desired.annotations.clone();
        if let Some(stamp) = stamp {
            annotations.insert(annotations::TIMESTAMP.into(), stamp.into());
        }
        let mut secret = Secret {
            data: Some(desired.data.clone()),
            ..Secret::default()
        };
        secret.metadata.labels = Some(desired.labels.clone());
        secret.metadata.annotations = Some(annotations);
        secret
    }

    #[test]
    fn context_object_names_the_core_object_with_a_namespace_for_entries_only() {
        assert_eq!(
            bucket_context().json(),
            r#"{"kind":"BackupBucket","apiVersion":"core.gardener.cloud/v1beta1","name":"b","uid":"u1"}"#
        );
        let entry = ContextObject {
            kind: "BackupEntry",
            name: "e".into(),
            namespace: Some("garden-p".into()),
            uid: "u2".into(),
        };
        let parsed: Value = serde_json::from_str(&entry.json()).expect("json");
        assert_eq!(parsed["namespace"], "garden-p");
        assert_eq!(parsed["kind"], "BackupEntry");
    }

    #[test]
    fn workload_identity_secret_carries_labels_annotations_config_and_keeps_the_token() {
        let credentials = Credentials::WorkloadIdentity(identity(json!({"bucket": "x"})));
        let mut existing = Secret {
            data: Some(BTreeMap::from([
                (TOKEN_KEY.to_owned(), bytes("jwt")),
                ("stale".to_owned(), bytes("drop me")),
            ])),
            ..Secret::default()
        };
        existing.metadata.annotations = Some(BTreeMap::from([
            (
                TOKEN_RENEW_ANNOTATION.to_owned(),
                "2026-01-01T00:00:00Z".to_owned(),
            ),
            ("other".to_owned(), "dropped".to_owned()),
        ]));
        let desired = desired(&credentials, &bucket_context(), Some(&existing));
        assert_eq!(
            desired.labels,
            BTreeMap::from([
                (PURPOSE_LABEL.to_owned(), PURPOSE_TOKEN_REQUESTOR.to_owned()),
                (PROVIDER_LABEL.to_owned(), "local".to_owned()),
            ])
        );
        assert_eq!(desired.annotations[NAME_ANNOTATION], "wi");
        assert_eq!(desired.annotations[NAMESPACE_ANNOTATION], "garden");
        assert_eq!(
            desired.annotations[TOKEN_RENEW_ANNOTATION],
            "2026-01-01T00:00:00Z"
        );
        assert!(!desired.annotations.contains_key("other"));
        assert_eq!(
            desired.data.keys().collect::<Vec<_>>(),
            [CONFIG_KEY, TOKEN_KEY]
        );
        assert_eq!(desired.data[CONFIG_KEY], bytes(r#"{"bucket":"x"}"#));
        assert_eq!(desired.type_.as_deref(), Some("Opaque"));
    }

    #[test]
    fn plan_ignores_the_token_but_not_config_labels_or_annotations() {
        let credentials = Credentials::WorkloadIdentity(identity(json!({"bucket": "x"})));
        let wanted = desired(&credentials, &bucket_context(), None);
        let current = secret_from(&wanted, Some("2026-01-01T00:00:00Z"));
        assert_eq!(plan(Some(&current), &wanted), (false, false), "unchanged");
        let mut with_token = current.clone();
        with_token
            .data
            .as_mut()
            .expect("data")
            .insert(TOKEN_KEY.into(), bytes("jwt"));
        assert_eq!(plan(Some(&with_token), &wanted), (false, false), "token");
        let other = desired(
            &Credentials::WorkloadIdentity(identity(json!({"bucket": "y"}))),
            &bucket_context(),
            None,
        );
        assert_eq!(plan(Some(&current), &other), (true, true), "config");
        let mut unlabelled = current.clone();
        unlabelled.metadata.labels = None;
        assert_eq!(plan(Some(&unlabelled), &wanted), (true, true), "labels");
        let unstamped = secret_from(&wanted, None);
        assert_eq!(plan(Some(&unstamped), &wanted), (true, false), "timestamp");
        assert_eq!(plan(None, &wanted), (true, true), "absent");
    }

    #[test]
    fn plan_for_secret_credentials_compares_data_and_wants_a_timestamp() {
        let data = |value: &str| BTreeMap::from([("key".to_owned(), bytes(value))]);
        let wanted = Desired {
            data: data("a"),
            ..Desired::default()
        };
        let stamped = secret_from(&wanted, Some("2024-01-01T00:00:00Z"));
        assert_eq!(plan(None, &wanted), (true, true));
        assert_eq!(plan(Some(&stamped), &wanted), (false, false));
        assert_eq!(
            plan(Some(&secret_from(&wanted, None)), &wanted),
            (true, false)
        );
        let other = Desired {
            data: data("b"),
            ..Desired::default()
        };
        assert_eq!(plan(Some(&stamped), &other), (true, true));
    }
}

//! kube-controller-manager's root-ca-cert-publisher: every active namespace gets a
//! `kube-root-ca.crt` ConfigMap with the cluster CA (`ca.crt`), recreated when deleted and reset
//! when changed. Optional (see `SandboxBuilder::publish_root_ca`).

use std::collections::BTreeSet;

use serde_json::{Value, json};

use super::object_ref::ObjectRef;
use crate::auth::pki::CertificateAuthority;
use crate::registry::generic::{self, Ownership, Writer};
use crate::resources::Subresource;
use crate::storage::State;

/// The ConfigMap's name.
pub const NAME: &str = "kube-root-ca.crt";
/// The description annotation kube-controller-manager sets.
const DESCRIPTION: &str = "Contains a CA bundle that can be used to verify the kube-apiserver when using internal endpoints such as the internal service IP or kubernetes.default.svc. No other usage is guaranteed across distributions of Kubernetes clusters.";

/// Whether a change of `target` may need the publisher (it is a namespace's root CA ConfigMap).
pub fn concerns(target: &ObjectRef) -> bool {
    target.key == "configmaps" && target.name == NAME
}

/// Creates or resets the ConfigMap of each queued active namespace; returns whether anything was
/// written.
pub fn pass(
    state: &mut State,
    queued: &BTreeSet<String>,
    ca: &CertificateAuthority,
    writer: &Writer<'_>,
) -> bool {
    let Some(rt) = state.registry().by_storage_key("configmaps") else {
        return false;
    };
    let data = json!({"ca.crt": ca.ca_pem()});
    let mut changed = false;
    for namespace in queued {
        let active = state
            .get_by_key("namespaces", "", namespace)
            .is_some_and(|ns| {
                ns.pointer("/metadata/deletionTimestamp").is_none()
                    && ns.pointer("/status/phase").and_then(Value::as_str) != Some("Terminating")
            });
        if !active {
            continue;
        }
        match state.get_by_key("configmaps", namespace, NAME) {
            None => {
                let object = json!({
                    "apiVersion": "v1",
                    "kind": "ConfigMap",
                    "metadata": {"name": NAME, "annotations": {"kubernetes.io/description": DESCRIPTION}},
                    "data": data,
                });
                changed |= generic::create(state, &rt, namespace, object, writer).is_ok();
            }
            Some(current) if current.get("data") != Some(&data) => {
                let mut object = (*current).clone();
                object["data"] = data.clone();
                changed |= generic::update(
                    state,
                    &rt,
                    namespace,
                    NAME,
                    &Subresource::None,
                    object,
                    writer,
                    Ownership::Record,
                )
                .is_ok();
            }
            Some(_) => {}
        }
    }
    changed
}

//! The `kubernetes.io/kube-apiserver-client` signer: approved CSRs get a certificate from the cluster CA.

use std::collections::BTreeSet;

use serde_json::{Value, json};

use crate::auth::pki::CertificateAuthority;
use crate::registry::csr::{self, SignerOutcome};
use crate::registry::generic::{self, Ownership, Writer};
use crate::resources::Subresource;
use crate::storage::State;

use super::index::CSR_KEY;

/// Signs (or fails) the queued CSRs; returns whether anything was written.
pub fn pass(
    state: &mut State,
    queued: &BTreeSet<String>,
    ca: &CertificateAuthority,
    writer: &Writer<'_>,
) -> bool {
    let Some(rt) = state.registry().by_storage_key(CSR_KEY) else {
        return false;
    };
    let mut changed = false;
    for name in queued {
        let Some(request) = state.get_by_key(CSR_KEY, "", name) else {
            continue;
        };
        let outcome = csr::signer_outcome(&request, ca);
        let mut object = (*request).clone();
        match outcome {
            SignerOutcome::Skip => continue,
            SignerOutcome::Issue(certificate) => {
                if !object.get("status").is_some_and(Value::is_object) {
                    object["status"] = json!({});
                }
                object["status"]["certificate"] = json!(certificate);
            }
            SignerOutcome::Fail { reason, message } => {
                let condition = csr::failed_condition(&reason, &message, jiff::Timestamp::now());
                if !object.get("status").is_some_and(Value::is_object) {
                    object["status"] = json!({});
                }
                let conditions = object["status"]
                    .as_object_mut()
                    .map(|s| s.entry("conditions").or_insert_with(|| json!([])));
                if let Some(Value::Array(conditions)) = conditions {
                    conditions.push(condition);
                }
            }
        }
        changed |= generic::update(
            state,
            &rt,
            "",
            name,
            &Subresource::Status,
            object,
            writer,
            Ownership::Record,
        )
        .is_ok();
    }
    changed
}

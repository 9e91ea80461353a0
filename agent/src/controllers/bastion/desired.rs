//! Pure parts of the Bastion controller (spec §3): the extension spec with the user-data script,
//! and the `BastionReady` condition texts.

use base64::Engine;
use seedlet_api::operations::Bastion;
use serde_json::{Value, json};

/// The condition the controller writes.
pub const BASTION_READY: &str = "BastionReady";
/// Annotation that asks for deletion without waiting for the provider.
pub const FORCE_DELETION: &str = "confirmation.gardener.cloud/force-deletion";

/// The user-data script that prepares the bastion host: a `gardener` user with the user's key,
/// passwordless sudo, and sshd started.
pub fn user_data(ssh_public_key: &str) -> String {
    let key = ssh_public_key.trim().replace('\'', "'\\''");
    format!(
        "#!/bin/bash -eu\n\
         id gardener || useradd gardener -mU\n\
         mkdir -p /home/gardener/.ssh\n\
         echo '{key}' > /home/gardener/.ssh/authorized_keys\n\
         chown gardener:gardener /home/gardener/.ssh/authorized_keys\n\
         echo 'gardener ALL=(ALL) NOPASSWD:ALL' > /etc/sudoers.d/99-gardener-user\n\
         systemctl start sshd || systemctl start ssh\n"
    )
}

/// The extension Bastion spec: provider type, user data (base64, as Go encodes `[]byte`) and the
/// ingress ranges.
pub fn extension_spec(bastion: &Bastion) -> Value {
    let ingress: Vec<Value> = bastion
        .spec
        .ingress
        .iter()
        .map(|policy| json!({"ipBlock": {"cidr": policy.ip_block.cidr}}))
        .collect();
    json!({
        "type": bastion.spec.provider_type.clone().unwrap_or_default(),
        "userData": base64::engine::general_purpose::STANDARD
            .encode(user_data(&bastion.spec.ssh_public_key)),
        "ingress": ingress,
    })
}

/// `Error while waiting for Bastion <ns>/<name> to become ready: <error>`.
pub fn waiting_error(namespace: &str, name: &str, error: &str) -> String {
    format!("Error while waiting for Bastion {namespace}/{name} to become ready: {error}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spec_carries_type_ingress_and_a_script_with_the_key() {
        let bastion: Bastion = serde_json::from_value(json!({
            "metadata": {"name": "b", "namespace": "garden-p"},
            "spec": {"shootRef": {"name": "s"}, "providerType": "local", "sshPublicKey": "ssh-ed25519 AAAA user",
                     "ingress": [{"ipBlock": {"cidr": "1.2.3.4/32"}}]},
        }))
        .unwrap();
        let spec = extension_spec(&bastion);
        assert_eq!(spec["type"], "local");
        assert_eq!(
            spec["ingress"],
            json!([{"ipBlock": {"cidr": "1.2.3.4/32"}}])
        );
        let script = base64::engine::general_purpose::STANDARD
            .decode(spec["userData"].as_str().unwrap())
            .unwrap();
        let script = String::from_utf8(script).unwrap();
        assert!(script.starts_with("#!/bin/bash -eu\n"));
        assert!(
            script.contains("echo 'ssh-ed25519 AAAA user' > /home/gardener/.ssh/authorized_keys")
        );
        assert!(script.contains("/etc/sudoers.d/99-gardener-user"));
        assert!(script.contains("systemctl start sshd || systemctl start ssh"));
        assert_eq!(
            waiting_error("ns", "b", "x"),
            "Error while waiting for Bastion ns/b to become ready: x"
        );
    }
}

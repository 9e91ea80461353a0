//! The demo's bastion: what `gardenctl ssh` asks for. The demo sets the example Shoot's
//! `status.technicalID` (the shoot flow's part: the agent finds the shoot's control-plane
//! namespace by it), creates a Bastion for the Shoot with a fresh Ed25519 public key (only the
//! public half is kept: the sandbox runs no VM to log in to) and the loopback range as ingress,
//! and waits until the agent has deployed the extension Bastion, the example extension's stand-in
//! ([`crate::bastion_provider`]) has reported it, and the agent has set `BastionReady` and
//! `status.ingress` on the Bastion in the garden.

use std::time::Duration;

use base64::Engine as _;
use kube::Api;
use kube::api::{Patch, PatchParams, PostParams};
use seedlet_api::core::Shoot;
use seedlet_api::operations::Bastion;
use serde_json::json;

use crate::Error;
use crate::backup::{detail, until};
use crate::progress::Progress;
use crate::shoot;

/// Name of the demo's Bastion in the project namespace.
pub const BASTION: &str = "hello-bastion";

/// The bastion stage of the demo.
///
/// # Errors
/// The first step that fails.
pub(crate) async fn stage(
    garden: &kube::Client,
    progress: &mut Progress,
    timeout: Duration,
) -> Result<(), Error> {
    let namespace = shoot::project_namespace();
    progress
        .step(
            &format!(
                "set the Shoot's status.technicalID {} (the shoot flow's part)",
                shoot::control_plane_namespace()
            ),
            detail(set_technical_id(garden)),
        )
        .await?;
    progress
        .step(
            &format!(
                "create Bastion {namespace}/{BASTION} for Shoot {}",
                shoot::SHOOT
            ),
            detail(create(garden)),
        )
        .await?;
    progress
        .step(
            &format!(
                "agent deploys it, the example extension reports it, Bastion {BASTION} BastionReady"
            ),
            detail(ready(garden, timeout)),
        )
        .await?;
    Ok(())
}

async fn set_technical_id(garden: &kube::Client) -> Result<String, Error> {
    let technical_id = shoot::control_plane_namespace();
    Api::<Shoot>::namespaced(garden.clone(), &shoot::project_namespace())
        .patch_status(
            shoot::SHOOT,
            &PatchParams::default(),
            &Patch::Merge(&json!({"status": {"technicalID": technical_id}})),
        )
        .await
        .map_err(|source| Error::Prepare {
            step: format!("set status.technicalID of Shoot {}", shoot::SHOOT),
            source,
        })?;
    Ok(technical_id)
}

/// An OpenSSH `ssh-ed25519` public key line for a freshly generated key.
fn ssh_public_key() -> Result<String, String> {
    let key = rcgen::KeyPair::generate_for(&rcgen::PKCS_ED25519)
        .map_err(|error| format!("generating an Ed25519 key: {error}"))?;
    Ok(openssh_ed25519(key.public_key_raw()))
}

/// The OpenSSH public key line of a raw 32-byte Ed25519 key (RFC 8709 wire format).
fn openssh_ed25519(raw: &[u8]) -> String {
    const ALGORITHM: &[u8] = b"ssh-ed25519";
    let mut blob = Vec::with_capacity(4 + ALGORITHM.len() + 4 + raw.len());
    for part in [ALGORITHM, raw] {
        blob.extend_from_slice(&u32::try_from(part.len()).unwrap_or(u32::MAX).to_be_bytes());
        blob.extend_from_slice(part);
    }
    format!(
        "ssh-ed25519 {} seedlet-sandbox-demo",
        base64::engine::general_purpose::STANDARD.encode(blob)
    )
}

async fn create(garden: &kube::Client) -> Result<String, Error> {
    let namespace = shoot::project_namespace();
    let key = ssh_public_key().map_err(|message| Error::Demo {
        step: "make the Bastion's SSH key".to_owned(),
        message,
    })?;
    let bastion: Bastion = serde_json::from_value(json!({
        "apiVersion": "operations.gardener.cloud/v1alpha1",
        "kind": "Bastion",
        "metadata": {"name": BASTION, "namespace": namespace},
        "spec": {
            "shootRef": {"name": shoot::SHOOT},
            "seedName": crate::SEED_NAME,
            "providerType": "local",
            "sshPublicKey": key,
            "ingress": [{"ipBlock": {"cidr": "127.0.0.1/32"}}],
        }
    }))
    .map_err(|error| Error::Demo {
        step: format!("build Bastion {BASTION}"),
        message: error.to_string(),
    })?;
    let api: Api<Bastion> = Api::namespaced(garden.clone(), &namespace);
    match api.create(&PostParams::default(), &bastion).await {
        Ok(_) => Ok("ingress 127.0.0.1/32".to_owned()),
        Err(kube::Error::Api(status)) if status.is_already_exists() => {
            Ok("kept the existing Bastion".to_owned())
        }
        Err(source) => Err(Error::Prepare {
            step: format!("create Bastion {namespace}/{BASTION}"),
            source,
        }),
    }
}

async fn ready(garden: &kube::Client, timeout: Duration) -> Result<String, Error> {
    let namespace = shoot::project_namespace();
    let condition = |bastion: &Bastion| {
        bastion.status.as_ref().and_then(|status| {
            seedlet_api::conditions::find(&status.conditions, "BastionReady").cloned()
        })
    };
    let ingress = |bastion: &Bastion| {
        bastion
            .status
            .as_ref()
            .and_then(|status| status.ingress.as_ref())
            .and_then(|ingress| ingress.get("ip"))
            .and_then(|ip| ip.as_str())
            .map(str::to_owned)
    };
    let bastion = until(
        Api::<Bastion>::namespaced(garden.clone(), &namespace),
        BASTION,
        format!("Bastion {namespace}/{BASTION} BastionReady True with an ingress address"),
        timeout,
        move |b: &Bastion| condition(b).is_some_and(|c| c.is_true()) && ingress(b).is_some(),
        move |b: &Bastion| {
            condition(b)
                .map(|c| format!("{} {}: {}", c.status, c.reason, c.message))
                .unwrap_or_else(|| "no BastionReady condition".to_owned())
        },
    )
    .await?;
    Ok(format!("ingress {}", ingress(&bastion).unwrap_or_default()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn openssh_lines_carry_the_algorithm_and_the_raw_key_length_prefixed() {
        let line = openssh_ed25519(&[7u8; 32]);
        let mut parts = line.split(' ');
        assert_eq!(parts.next(), Some("ssh-ed25519"));
        let blob = base64::engine::general_purpose::STANDARD
            .decode(parts.next().unwrap_or_default())
            .expect("base64");
        assert_eq!(&blob[..4], &11u32.to_be_bytes());
        assert_eq!(&blob[4..15], b"ssh-ed25519");
        assert_eq!(&blob[15..19], &32u32.to_be_bytes());
        assert_eq!(&blob[19..], &[7u8; 32]);
        assert!(
            ssh_public_key()
                .expect("key")
                .starts_with("ssh-ed25519 AAAAC3NzaC1lZDI1NTE5")
        );
    }
}

//! The generated Shoot CRD on a real kube-apiserver v1.32: it applies with `kubectl apply
//! --validate=strict`, the example Shoots (spec and status) apply against it without a single
//! warning, nothing of them is pruned, and `kubectl explain` shows the typed fields. Skipped
//! (with a message) when `SEEDLET_KUBE_ASSETS` is unset.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde::Deserialize;
use serde_json::Value;

use seedlet_api::crds::{garden_crds, to_yaml};
use seedlet_testkit::realkube::{ControlPlane, ControlPlaneOptions, KubeAssets};

/// The example Shoots of `api/tests/fixtures`.
const EXAMPLES: [&str; 3] = [
    "upstream/90-shoot.yaml",
    "own/shoot-with-status.yaml",
    "own/shoot-full.yaml",
];

/// Runs kubectl with `kubeconfig`; returns stdout, or panics with stderr when it fails.
fn kubectl(kubeconfig: &Path, args: &[&str]) -> (String, String) {
    let output = Command::new("kubectl")
        .arg("--kubeconfig")
        .arg(kubeconfig)
        .args(args)
        .output()
        .expect("kubectl runs");
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(
        output.status.success(),
        "kubectl {args:?} failed:\n{stdout}\n{stderr}"
    );
    (stdout, stderr)
}

fn fixture(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("api/tests/fixtures")
        .join(path)
}

/// The first document of a fixture, without `null` members (the upstream example writes
/// `kubernetes:` with every child commented out).
fn example(path: &str) -> Value {
    let text = std::fs::read_to_string(fixture(path)).expect("fixture");
    let document = serde_yaml::Deserializer::from_str(&text)
        .next()
        .expect("one document");
    without_nulls(&Value::deserialize(document).expect("YAML"))
}

fn without_nulls(value: &Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.iter()
                .filter(|(_, v)| !v.is_null())
                .map(|(k, v)| (k.clone(), without_nulls(v)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(without_nulls).collect()),
        other => other.clone(),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shoot_crd_and_example_shoots_apply_strictly_to_a_real_api_server() {
    let Some(assets) = KubeAssets::or_skip("shoot_crd::real") else {
        return;
    };
    let plane = ControlPlane::start(&assets, ControlPlaneOptions::new("shoot-crd")).await;
    let dir = plane.dir().to_owned();
    let kubeconfig = dir.join("admin.kubeconfig");
    std::fs::write(
        &kubeconfig,
        serde_yaml::to_string(&plane.admin_kubeconfig()).expect("kubeconfig YAML"),
    )
    .expect("kubeconfig written");

    let crd = garden_crds()
        .into_iter()
        .find(|crd| crd.metadata.name.as_deref() == Some("shoots.core.gardener.cloud"))
        .expect("the Shoot CRD");
    let crd_file = dir.join("shoot-crd.yaml");
    std::fs::write(&crd_file, to_yaml(&[crd]).expect("CRD YAML")).expect("CRD written");
    let (_, warnings) = kubectl(
        &kubeconfig,
        &[
            "apply",
            "--validate=strict",
            "-f",
            crd_file.to_str().expect("utf-8"),
        ],
    );
    assert!(warnings.is_empty(), "applying the CRD warned: {warnings}");
    seedlet_testkit::realkube::wait_crds_established(
        &kubeconfig,
        &["crd/shoots.core.gardener.cloud"],
    );
    kubectl(&kubeconfig, &["create", "namespace", "garden-dev"]);

    for path in EXAMPLES {
        let mut shoot = example(path);
        let status = shoot
            .as_object_mut()
            .and_then(|object| object.remove("status"));
        // Each example under its own name, so they do not overwrite each other.
        let name = path.replace(['/', '.'], "-");
        shoot["metadata"] = serde_json::json!({"name": name, "namespace": "garden-dev"});
        let file = dir.join(format!("{name}.json"));
        std::fs::write(&file, shoot.to_string()).expect("example written");
        let (_, warnings) = kubectl(
            &kubeconfig,
            &[
                "apply",
                "--validate=strict",
                "-f",
                file.to_str().expect("utf-8"),
            ],
        );
        assert!(warnings.is_empty(), "{path}: applying warned: {warnings}");
        if let Some(status) = &status {
            let (stored, _) = kubectl(
                &kubeconfig,
                &["get", "shoot", "-n", "garden-dev", &name, "-o", "json"],
            );
            let mut stored: Value = serde_json::from_str(&stored).expect("stored Shoot");
            stored["status"] = status.clone();
            std::fs::write(&file, stored.to_string()).expect("status written");
            let (_, warnings) = kubectl(
                &kubeconfig,
                &[
                    "replace",
                    "--subresource=status",
                    "--validate=strict",
                    "-f",
                    file.to_str().expect("utf-8"),
                ],
            );
            assert!(warnings.is_empty(), "{path}: status warned: {warnings}");
        }
        let (stored, _) = kubectl(
            &kubeconfig,
            &["get", "shoot", "-n", "garden-dev", &name, "-o", "json"],
        );
        let stored: Value = serde_json::from_str(&stored).expect("stored Shoot");
        assert_eq!(
            stored["spec"], shoot["spec"],
            "{path}: spec pruned or changed"
        );
        if let Some(status) = status {
            assert_eq!(stored["status"], status, "{path}: status pruned or changed");
        }
    }

    let (explained, _) = kubectl(&kubeconfig, &["explain", "shoot.spec.kubernetes"]);
    for field in ["kubeAPIServer", "kubelet", "verticalPodAutoscaler", "etcd"] {
        assert!(
            explained.contains(field),
            "explain lacks {field}:\n{explained}"
        );
    }
    let (explained, _) = kubectl(
        &kubeconfig,
        &["explain", "shoot.spec.provider.workers.maxSurge"],
    );
    assert!(explained.contains("maxSurge"), "{explained}");
}

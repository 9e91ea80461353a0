//! The generated CRDs through kubectl, as a user meets them: `seedlet crds … | kubectl apply -f -`
//! with client-side validation, `kubectl explain` of Gardener kinds listing their fields, and
//! upstream example objects applied with `--validate=strict` and read back unpruned — against
//! `seedlet sandbox serve` and against a real kube-apiserver v1.32 (`SEEDLET_KUBE_ASSETS`).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use seedlet_testkit::realkube::{ControlPlane, ControlPlaneOptions, KubeAssets};
use serde::Deserialize;
use serde_json::Value;

/// Upstream examples (copied from gardener's `example/`) of kinds whose schemas seedlet types.
const EXAMPLES: [&str; 6] = [
    "25-controllerdeployment.yaml",
    "25-controllerregistration.yaml",
    "25-controllerinstallation.yaml",
    "30-cloudprofile.yaml",
    "50-seed.yaml",
    "100-bastion.yaml",
];

/// `kubectl explain` targets and fields each must list.
const EXPLAINED: [(&str, &[&str]); 6] = [
    (
        "seed.spec",
        &["provider", "networks", "dns", "settings", "taints"],
    ),
    (
        "seed.spec.provider",
        &["region", "type", "zones", "providerConfig"],
    ),
    (
        "seed.spec.settings",
        &["verticalPodAutoscaler", "dependencyWatchdog"],
    ),
    (
        "controllerinstallation.spec",
        &["seedRef", "registrationRef", "deploymentRef"],
    ),
    (
        "cloudprofile.spec.machineImages",
        &["name", "versions", "updateStrategy"],
    ),
    (
        "workers.spec.pools",
        &["machineType", "machineImage", "minimum", "maximum"],
    ),
];

fn kubectl_available() -> bool {
    Command::new("kubectl")
        .args(["version", "--client"])
        .output()
        .is_ok_and(|out| out.status.success())
}

/// Runs kubectl with `kubeconfig` and `args`, feeding `stdin`.
fn kubectl(kubeconfig: &Path, args: &[&str], stdin: Option<&[u8]>) -> Output {
    let mut child = Command::new("kubectl")
        .arg("--kubeconfig")
        .arg(kubeconfig)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("kubectl starts");
    let mut input = child.stdin.take().expect("stdin is piped");
    if let Some(bytes) = stdin {
        input.write_all(bytes).expect("kubectl reads its input");
    }
    drop(input);
    child.wait_with_output().expect("kubectl finishes")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn seedlet_crds(flag: Option<&str>) -> Vec<u8> {
    let out = Command::new(env!("CARGO_BIN_EXE_seedlet"))
        .arg("crds")
        .args(flag)
        .output()
        .expect("seedlet crds runs");
    assert!(out.status.success(), "{}", text(&out.stderr));
    out.stdout
}

fn example_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("api/tests/fixtures/upstream")
}

/// Every leaf of `expected` (outside `metadata`) is in `actual` with the same value.
fn missing_leaves(expected: &Value, actual: &Value, path: &str, out: &mut Vec<String>) {
    match expected {
        Value::Object(map) => {
            for (key, child) in map {
                if path.is_empty() && key == "metadata" {
                    continue;
                }
                let next = format!("{path}.{key}");
                match actual.get(key) {
                    Some(found) => missing_leaves(child, found, &next, out),
                    None => out.push(next),
                }
            }
        }
        Value::Array(items) => {
            for (index, item) in items.iter().enumerate() {
                let next = format!("{path}[{index}]");
                match actual.get(index) {
                    Some(found) => missing_leaves(item, found, &next, out),
                    None => out.push(next),
                }
            }
        }
        leaf if leaf != actual => out.push(format!("{path}: {leaf} became {actual}")),
        _ => {}
    }
}

/// The whole check against one API server reachable with `kubeconfig`.
fn check_crds_through_kubectl(kubeconfig: &Path, server: &str) {
    for flag in [Some("--garden"), Some("--seed")] {
        let applied = kubectl(kubeconfig, &["apply", "-f", "-"], Some(&seedlet_crds(flag)));
        assert!(
            applied.status.success(),
            "{server}: seedlet crds {flag:?} | kubectl apply: {}",
            text(&applied.stderr)
        );
        assert!(
            !text(&applied.stderr).contains("Warning"),
            "{server}: {}",
            text(&applied.stderr)
        );
    }
    seedlet_testkit::realkube::wait_crds_established(kubeconfig, &["crd", "--all"]);
    for (target, fields) in EXPLAINED {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let explained = kubectl(kubeconfig, &["explain", target], None);
            let shown = text(&explained.stdout);
            let listed = fields.iter().all(|field| {
                shown
                    .lines()
                    .any(|line| line.trim_start().starts_with(&format!("{field}\t")))
            });
            if explained.status.success() && listed {
                break;
            }
            assert!(
                Instant::now() < deadline,
                "{server}: kubectl explain {target} lists no {fields:?}:\n{shown}{}",
                text(&explained.stderr)
            );
            std::thread::sleep(Duration::from_millis(500));
        }
    }
    let namespace = kubectl(kubeconfig, &["create", "namespace", "garden-dev"], None);
    assert!(
        namespace.status.success(),
        "{server}: {}",
        text(&namespace.stderr)
    );
    for file in EXAMPLES {
        let path = example_dir().join(file);
        let applied = kubectl(
            kubeconfig,
            &[
                "apply",
                "--validate=strict",
                "-f",
                path.to_str().expect("utf-8 path"),
            ],
            None,
        );
        let stderr = text(&applied.stderr);
        assert!(applied.status.success(), "{server}: {file}: {stderr}");
        assert!(
            !stderr.contains("unknown field"),
            "{server}: {file}: {stderr}"
        );
        let content = std::fs::read_to_string(&path).expect("example readable");
        for document in serde_yaml::Deserializer::from_str(&content) {
            let object = Value::deserialize(document).expect("example is YAML");
            if object.is_null() {
                continue;
            }
            let mut args = vec!["get", "-o", "json"];
            let namespace = object
                .pointer("/metadata/namespace")
                .and_then(Value::as_str);
            if let Some(namespace) = namespace {
                args.extend(["-n", namespace]);
            }
            let kind = object["kind"].as_str().expect("kind");
            let group = object["apiVersion"]
                .as_str()
                .expect("apiVersion")
                .split('/')
                .next();
            let resource = format!("{}.{}", kind.to_lowercase(), group.unwrap_or_default());
            let name = object
                .pointer("/metadata/name")
                .and_then(Value::as_str)
                .expect("name");
            args.extend([resource.as_str(), name]);
            let got = kubectl(kubeconfig, &args, None);
            assert!(
                got.status.success(),
                "{server}: get {kind}: {}",
                text(&got.stderr)
            );
            let stored: Value = serde_json::from_slice(&got.stdout).expect("JSON object");
            let mut missing = Vec::new();
            missing_leaves(&object, &stored, "", &mut missing);
            assert!(
                missing.is_empty(),
                "{server}: {kind} {name} lost fields: {missing:#?}"
            );
        }
    }
}

#[cfg(unix)]
#[test]
fn seedlet_crds_apply_explain_and_keep_upstream_examples_on_the_sandbox() {
    if !kubectl_available() {
        eprintln!("skipped: no kubectl on PATH");
        return;
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let mut child = Command::new(env!("CARGO_BIN_EXE_seedlet"))
        .args(["sandbox", "serve", "--name", "crds", "--dir"])
        .arg(dir.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("seedlet sandbox serve starts");
    let lines = crate::landscape::stdout_lines(&mut child);
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match lines.recv_timeout(left) {
            Ok(line) if line.trim() == "ready" => break,
            Ok(_) => {}
            Err(_) => panic!("sandbox serve did not say ready within 30 s"),
        }
    }
    let kubeconfig = dir.path().join("admin.kubeconfig");
    check_crds_through_kubectl(&kubeconfig, "sandbox");
    let _ = child.kill();
    let _ = child.wait();
}

#[tokio::test(flavor = "multi_thread")]
async fn seedlet_crds_apply_explain_and_keep_upstream_examples_on_a_real_kube_apiserver() {
    let Some(assets) = KubeAssets::or_skip("crd_schemas::real_kube_apiserver") else {
        return;
    };
    if !kubectl_available() {
        eprintln!("skipped: no kubectl on PATH");
        return;
    }
    let plane = ControlPlane::start(&assets, ControlPlaneOptions::new("crds")).await;
    let kubeconfig = plane.dir().join("crds-admin.kubeconfig");
    let yaml = serde_yaml::to_string(&plane.admin_kubeconfig()).expect("kubeconfig as YAML");
    std::fs::write(&kubeconfig, yaml).expect("kubeconfig written");
    tokio::task::spawn_blocking(move || check_crds_through_kubectl(&kubeconfig, "kube-apiserver"))
        .await
        .expect("the kubectl checks finish");
    drop(plane);
}

/// The sandbox admits Gardener objects as kube-apiserver does under the generated CRDs: fields
/// the schema does not know are pruned at every level, raw extensions keep whatever they hold,
/// and a wrongly typed field is a 422 whose cause names it.
#[tokio::test]
async fn sandbox_prunes_unknown_seed_fields_keeps_raw_extensions_and_names_type_errors() {
    use kube::api::{Api, DynamicObject, PostParams};
    use kube::core::{ApiResource, GroupVersionKind};

    let garden = seedlet_testkit::start_sandbox("garden").await;
    seedlet_testkit::prepare_garden(&garden.client()).await;
    let resource = ApiResource::from_gvk(&GroupVersionKind::gvk(
        "core.gardener.cloud",
        "v1beta1",
        "Seed",
    ));
    let seeds: Api<DynamicObject> = Api::all_with(garden.client(), &resource);
    let seed: DynamicObject = serde_json::from_value(serde_json::json!({
        "apiVersion": "core.gardener.cloud/v1beta1",
        "kind": "Seed",
        "metadata": {"name": "pruned"},
        "spec": {
            "provider": {"type": "local", "region": "local", "bogus": 1,
                "providerConfig": {"apiVersion": "x/v1", "anything": {"deep": [1, 2]}}},
            "networks": {"pods": "10.1.0.0/16", "services": "10.2.0.0/16"},
            "settings": {"verticalPodAutoscaler": {"enabled": false, "unknownSwitch": true}},
            "notAField": "dropped",
        },
    }))
    .expect("seed object");
    let created = seeds
        .create(&PostParams::default(), &seed)
        .await
        .expect("seed created");
    let spec = &created.data["spec"];
    assert!(spec.get("notAField").is_none(), "{spec}");
    assert!(spec["provider"].get("bogus").is_none(), "{spec}");
    assert_eq!(
        spec["settings"]["verticalPodAutoscaler"],
        serde_json::json!({"enabled": false})
    );
    assert_eq!(
        spec["provider"]["providerConfig"],
        serde_json::json!({"apiVersion": "x/v1", "anything": {"deep": [1, 2]}})
    );

    let mut wrong = seed.clone();
    wrong.metadata.name = Some("wrong".to_owned());
    wrong.data["spec"]["provider"]["region"] = serde_json::json!(5);
    wrong.data["spec"]["settings"]["verticalPodAutoscaler"]["enabled"] = serde_json::json!("no");
    let Err(kube::Error::Api(status)) = seeds.create(&PostParams::default(), &wrong).await else {
        panic!("a wrongly typed Seed was accepted");
    };
    assert_eq!((status.code, status.reason.as_str()), (422, "Invalid"));
    let causes: Vec<(String, String)> = status
        .details
        .iter()
        .flat_map(|details| &details.causes)
        .map(|cause| (cause.field.clone(), cause.reason.clone()))
        .collect();
    for field in [
        "spec.provider.region",
        "spec.settings.verticalPodAutoscaler.enabled",
    ] {
        assert!(status.message.contains(field), "{}", status.message);
        assert!(
            causes.contains(&(field.to_owned(), "FieldValueTypeInvalid".to_owned())),
            "{causes:?}"
        );
    }
    garden.shutdown().await;
}

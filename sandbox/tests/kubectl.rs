//! kubectl smoke test: the Debian kubectl (v1.20) works against the sandbox. Skipped with a note when
//! `/usr/bin/kubectl` is not installed.

use std::path::Path;
use std::process::Command;

use seedlet_sandbox::Sandbox;

const KUBECTL: &str = "/usr/bin/kubectl";

fn kubectl(kubeconfig: &Path, args: &[&str]) -> (bool, String, String) {
    let output = Command::new(KUBECTL)
        .arg("--kubeconfig")
        .arg(kubeconfig)
        .args(args)
        .output()
        .expect("kubectl runs");
    (
        output.status.success(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_gets_applies_and_deletes() {
    if !Path::new(KUBECTL).exists() {
        println!("note: {KUBECTL} is missing, kubectl smoke test skipped");
        return;
    }
    let sb = Sandbox::builder()
        .name("kubectl")
        .start()
        .await
        .expect("sandbox starts");
    let dir = tempfile::tempdir().expect("temp dir");
    let kubeconfig = dir.path().join("kubeconfig");
    std::fs::write(&kubeconfig, sb.admin_kubeconfig_yaml()).expect("kubeconfig written");
    let manifest = dir.path().join("cm.yaml");
    std::fs::write(
        &manifest,
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: smoke\n  namespace: default\ndata:\n  a: \"1\"\n",
    )
    .expect("manifest written");

    let run = move |args: Vec<String>| {
        let kubeconfig = kubeconfig.clone();
        async move {
            tokio::task::spawn_blocking(move || {
                let refs: Vec<&str> = args.iter().map(String::as_str).collect();
                kubectl(&kubeconfig, &refs)
            })
            .await
            .expect("kubectl task")
        }
    };
    let args = |s: &str| s.split(' ').map(str::to_string).collect::<Vec<_>>();

    let (ok, out, err) = run(args("get namespaces")).await;
    assert!(
        ok && out.contains("kube-system"),
        "get namespaces: {out} {err}"
    );
    let mut apply = args("apply --validate=false -f");
    apply.push(manifest.display().to_string());
    let (ok, out, err) = run(apply.clone()).await;
    assert!(ok, "apply: {out} {err}");
    let (ok, out, err) = run(apply).await;
    assert!(ok && out.contains("unchanged"), "second apply: {out} {err}");
    let (ok, out, err) = run(args("get configmap smoke -o jsonpath={.data.a}")).await;
    assert!(ok && out == "1", "get: {out} {err}");
    let (ok, out, err) = run(args("api-resources")).await;
    assert!(
        ok && out.contains("leases") && out.contains("certificatesigningrequests"),
        "api-resources: {out} {err}"
    );
    let (ok, out, err) = run(args("delete configmap smoke")).await;
    assert!(ok, "delete: {out} {err}");
    let (ok, _, _) = run(args("get configmap smoke")).await;
    assert!(!ok, "configmap should be gone");
    sb.shutdown().await;
}

//! kubectl smoke test: the installed kubectl works against the sandbox (`get`, `get -w`, `apply`,
//! `delete`, both with `--dry-run=server`, `api-resources`, `auth can-i` with its protobuf SelfSubjectAccessReview, `auth can-i
//! --list` with its protobuf SelfSubjectRulesReview). Skipped with a note when `/usr/bin/kubectl` is
//! not installed.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, PostParams};
use seedlet_sandbox::Sandbox;

const KUBECTL: &str = "/usr/bin/kubectl";

fn kubectl(kubeconfig: &Path, args: &[&str]) -> (bool, String, String) {
    let (code, out, err) = kubectl_code(kubeconfig, args);
    (code == Some(0), out, err)
}

/// Runs kubectl; returns its exit code, stdout and stderr.
fn kubectl_code(kubeconfig: &Path, args: &[&str]) -> (Option<i32>, String, String) {
    let output = Command::new(KUBECTL)
        .arg("--kubeconfig")
        .arg(kubeconfig)
        .args(args)
        .output()
        .expect("kubectl runs");
    (
        output.status.code(),
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
    let mut apply = args("apply -f");
    apply.push(manifest.display().to_string());
    let mut dry_apply = apply.clone();
    dry_apply.push("--dry-run=server".into());
    let (ok, out, err) = run(dry_apply).await;
    assert!(
        ok && out.contains("(server dry run)"),
        "dry-run apply: {out} {err}"
    );
    let (ok, _, _) = run(args("get configmap smoke")).await;
    assert!(!ok, "a server-side dry run stores nothing");
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
    let (ok, out, err) = run(args("delete configmap smoke --dry-run=server")).await;
    assert!(
        ok && out.contains("(server dry run)"),
        "dry-run delete: {out} {err}"
    );
    let (ok, out, err) = run(args("get configmap smoke -o jsonpath={.data.a}")).await;
    assert!(
        ok && out == "1",
        "still there after a dry-run delete: {out} {err}"
    );
    let (ok, out, err) = run(args("delete configmap smoke")).await;
    assert!(ok, "delete: {out} {err}");
    let (ok, _, _) = run(args("get configmap smoke")).await;
    assert!(!ok, "configmap should be gone");
    sb.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_auth_can_i_answers_yes_and_no_with_exit_codes() {
    if !Path::new(KUBECTL).exists() {
        println!("note: {KUBECTL} is missing, kubectl auth can-i test skipped");
        return;
    }
    let (sb, dir, admin, viewer) = admin_and_viewer("kubectl-can-i").await;
    let rbac = dir.path().join("rbac.yaml");
    std::fs::write(
        &rbac,
        "apiVersion: rbac.authorization.k8s.io/v1\nkind: Role\nmetadata: {name: pod-reader, namespace: default}\n\
         rules: [{apiGroups: [\"\"], resources: [pods], verbs: [get, list]}]\n---\n\
         apiVersion: rbac.authorization.k8s.io/v1\nkind: RoleBinding\nmetadata: {name: pod-reader, namespace: default}\n\
         roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: pod-reader}\n\
         subjects: [{apiGroup: rbac.authorization.k8s.io, kind: Group, name: viewers}]\n",
    )
    .expect("rbac written");

    let can_i = |config: std::path::PathBuf, args: &'static str| async move {
        tokio::task::spawn_blocking(move || {
            let args: Vec<&str> = args.split(' ').collect();
            kubectl_code(&config, &args)
        })
        .await
        .expect("kubectl task")
    };
    let apply = format!("apply -f {}", rbac.display());
    let admin_apply = admin.clone();
    let (ok, out, err) = tokio::task::spawn_blocking(move || {
        let args: Vec<&str> = apply.split(' ').collect();
        kubectl(&admin_apply, &args)
    })
    .await
    .expect("kubectl task");
    assert!(ok, "apply rbac: {out} {err}");

    let (code, out, err) = can_i(admin.clone(), "auth can-i delete nodes").await;
    assert_eq!((code, out.trim()), (Some(0), "yes"), "admin can-i: {err}");
    let (code, out, err) = can_i(viewer.clone(), "auth can-i get pods -n default").await;
    assert_eq!(
        (code, out.trim()),
        (Some(0), "yes"),
        "viewer get pods: {err}"
    );
    let (code, out, err) = can_i(viewer.clone(), "auth can-i list secrets -n default").await;
    assert_eq!(
        (code, out.trim()),
        (Some(1), "no"),
        "viewer list secrets: {err}"
    );
    let (code, out, err) = can_i(viewer, "auth can-i get pods -n kube-system").await;
    assert_eq!(
        (code, out.trim()),
        (Some(1), "no"),
        "viewer in kube-system: {err}"
    );
    let (code, out, err) = can_i(
        admin,
        "auth can-i get pods --as=viewer --as-group=viewers -n default",
    )
    .await;
    assert_eq!(
        (code, out.trim()),
        (Some(0), "yes"),
        "impersonated viewer: {err}"
    );
    sb.shutdown().await;
}

/// The rows of a `kubectl auth can-i --list` table with each run of spaces collapsed to one, e.g.
/// `pods [] [] [get list]` or `[/healthz] [] [get]` (a non-resource row has no first column).
fn access_rows(table: &str) -> Vec<String> {
    table
        .lines()
        .skip(1)
        .map(|line| line.split_whitespace().collect::<Vec<_>>().join(" "))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_auth_can_i_list_prints_the_rules_of_admin_and_restricted_user() {
    if !Path::new(KUBECTL).exists() {
        println!("note: {KUBECTL} is missing, kubectl auth can-i --list test skipped");
        return;
    }
    let (sb, dir, admin, viewer) = admin_and_viewer("kubectl-can-i-list").await;
    let rbac = dir.path().join("rbac.yaml");
    std::fs::write(
        &rbac,
        "apiVersion: rbac.authorization.k8s.io/v1\nkind: Role\nmetadata: {name: pod-reader, namespace: default}\n\
         rules: [{apiGroups: [\"\"], resources: [pods], verbs: [get, list]},\n\
         {apiGroups: [apps], resources: [deployments], verbs: [get], resourceNames: [web]}]\n---\n\
         apiVersion: rbac.authorization.k8s.io/v1\nkind: RoleBinding\nmetadata: {name: pod-reader, namespace: default}\n\
         roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: pod-reader}\n\
         subjects: [{apiGroup: rbac.authorization.k8s.io, kind: Group, name: viewers}]\n",
    )
    .expect("rbac written");
    let run = |config: std::path::PathBuf, args: String| async move {
        tokio::task::spawn_blocking(move || {
            let args: Vec<&str> = args.split(' ').collect();
            kubectl_code(&config, &args)
        })
        .await
        .expect("kubectl task")
    };
    let (code, out, err) = run(admin.clone(), format!("apply -f {}", rbac.display())).await;
    assert_eq!(code, Some(0), "apply rbac: {out} {err}");

    let (code, out, err) = run(admin, "auth can-i --list -n default".into()).await;
    assert_eq!(code, Some(0), "admin --list: {out} {err}");
    assert!(
        out.starts_with("Resources") && out.contains("Non-Resource URLs"),
        "header: {out}"
    );
    let rows = access_rows(&out);
    for expected in [
        "*.* [] [] [*]",
        "[*] [] [*]",
        "selfsubjectrulesreviews.authorization.k8s.io [] [] [create]",
        "[/healthz] [] [get]",
    ] {
        assert!(
            rows.iter().any(|row| row == expected),
            "admin row {expected:?} in:\n{out}"
        );
    }

    let (code, out, err) = run(viewer.clone(), "auth can-i --list -n default".into()).await;
    assert_eq!(code, Some(0), "viewer --list: {out} {err}");
    let rows = access_rows(&out);
    for expected in [
        "pods [] [] [get list]",
        "deployments.apps [] [web] [get]",
        "selfsubjectaccessreviews.authorization.k8s.io [] [] [create]",
        "[/version] [] [get]",
    ] {
        assert!(
            rows.iter().any(|row| row == expected),
            "viewer row {expected:?} in:\n{out}"
        );
    }
    assert!(
        !rows
            .iter()
            .any(|row| row.starts_with("*.*") || row.starts_with("[*]")),
        "viewer has no wildcard rules:\n{out}"
    );

    let (code, out, err) = run(viewer, "auth can-i --list -n kube-system".into()).await;
    assert_eq!(code, Some(0), "viewer --list in kube-system: {out} {err}");
    let rows = access_rows(&out);
    assert!(
        rows.iter()
            .any(|row| row == "selfsubjectrulesreviews.authorization.k8s.io [] [] [create]"),
        "cluster-wide rules stay:\n{out}"
    );
    assert!(
        !rows
            .iter()
            .any(|row| row.starts_with("pods ") || row.starts_with("deployments")),
        "the default namespace's Role does not apply in kube-system:\n{out}"
    );
    sb.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_get_watch_prints_objects_created_later() {
    if !Path::new(KUBECTL).exists() {
        println!("note: {KUBECTL} is missing, kubectl get -w test skipped");
        return;
    }
    let sb = Sandbox::builder()
        .name("kubectl-watch")
        .start()
        .await
        .expect("sandbox starts");
    let dir = tempfile::tempdir().expect("temp dir");
    let kubeconfig = dir.path().join("kubeconfig");
    std::fs::write(&kubeconfig, sb.admin_kubeconfig_yaml()).expect("kubeconfig written");
    let mut child = Command::new(KUBECTL)
        .arg("--kubeconfig")
        .arg(&kubeconfig)
        .args(["get", "configmaps", "-n", "default", "-w", "-o", "name"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("kubectl starts");
    let stdout = child.stdout.take().expect("stdout is piped");
    let (lines, mut received) = tokio::sync::mpsc::unbounded_channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if lines.send(line).is_err() {
                return;
            }
        }
    });

    let maps: Api<ConfigMap> = Api::namespaced(sb.client(), "default");
    let watched = async {
        let mut n = 0;
        loop {
            n += 1;
            let object: ConfigMap = serde_json::from_value(
                serde_json::json!({"metadata": {"name": format!("watched-{n}")}}),
            )
            .expect("valid configmap");
            maps.create(&PostParams::default(), &object)
                .await
                .expect("configmap created");
            // kubectl may still be starting its watch: the next object is created after a pause.
            let deadline = tokio::time::sleep(Duration::from_millis(500));
            tokio::pin!(deadline);
            loop {
                tokio::select! {
                    line = received.recv() => match line {
                        Some(line) if line.starts_with("configmap/watched-") => return line,
                        Some(_) => continue,
                        None => panic!("kubectl get -w ended"),
                    },
                    _ = &mut deadline => break,
                }
            }
        }
    };
    let line = tokio::time::timeout(Duration::from_secs(30), watched)
        .await
        .expect("kubectl get -w prints a created configmap");
    assert!(line.starts_with("configmap/watched-"), "{line}");
    child.kill().expect("kubectl stops");
    child.wait().expect("kubectl reaped");
    sb.shutdown().await;
}

/// A sandbox named `name` and, in a temporary directory, kubeconfig files for its admin and for
/// user `viewer` in group `viewers` (no rights until the test binds some).
async fn admin_and_viewer(
    name: &str,
) -> (
    Sandbox,
    tempfile::TempDir,
    std::path::PathBuf,
    std::path::PathBuf,
) {
    let sb = Sandbox::builder()
        .name(name)
        .start()
        .await
        .expect("sandbox starts");
    let dir = tempfile::tempdir().expect("temp dir");
    let admin = dir.path().join("admin");
    std::fs::write(&admin, sb.admin_kubeconfig_yaml()).expect("kubeconfig written");
    let viewer = dir.path().join("viewer");
    let viewer_config = sb
        .kubeconfig_for("viewer", &["viewers"])
        .expect("viewer certificate");
    std::fs::write(
        &viewer,
        serde_yaml::to_string(&viewer_config).expect("kubeconfig serializes"),
    )
    .expect("kubeconfig written");
    (sb, dir, admin, viewer)
}

/// A CRD whose version has printer columns (one only in `-o wide`), and one object of it.
const PRINTED_CRD: &str = "apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.print.example.com}
spec:
  group: print.example.com
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget, listKind: WidgetList}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              size: {type: integer, description: How many parts the widget has.}
              color: {type: string}
    additionalPrinterColumns:
    - {name: Size, type: integer, jsonPath: .spec.size}
    - {name: Color, type: string, jsonPath: .spec.color, priority: 1}
";

const WIDGET: &str = "apiVersion: print.example.com/v1
kind: Widget
metadata: {name: w1, namespace: default}
spec: {size: 7, color: teal}
";

/// Rows of kubectl's table output split into cells.
fn table_rows(out: &str) -> Vec<Vec<String>> {
    out.lines()
        .map(|l| l.split_whitespace().map(str::to_owned).collect())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_get_prints_server_side_tables() {
    if !Path::new(KUBECTL).exists() {
        println!("note: {KUBECTL} is missing, kubectl table test skipped");
        return;
    }
    let (sb, dir, admin, _) = admin_and_viewer("kubectl-tables").await;
    let crd = dir.path().join("crd.yaml");
    std::fs::write(&crd, PRINTED_CRD).expect("crd written");
    let widget = dir.path().join("widget.yaml");
    std::fs::write(&widget, WIDGET).expect("widget written");
    let run = |args: Vec<String>| {
        let admin = admin.clone();
        async move {
            tokio::task::spawn_blocking(move || {
                let refs: Vec<&str> = args.iter().map(String::as_str).collect();
                kubectl(&admin, &refs)
            })
            .await
            .expect("kubectl task")
        }
    };
    let words = |s: &str| s.split(' ').map(str::to_owned).collect::<Vec<_>>();
    let (ok, out, err) = run(words(&format!("apply -f {}", crd.display()))).await;
    assert!(ok, "apply crd: {out} {err}");
    tokio::time::sleep(Duration::from_millis(300)).await;
    let (ok, out, err) = run(words(&format!("apply -f {}", widget.display()))).await;
    assert!(ok, "apply widget: {out} {err}");

    let (ok, out, err) = run(words("get widgets")).await;
    assert!(ok, "get widgets: {err}");
    let rows = table_rows(&out);
    assert_eq!(rows[0], ["NAME", "SIZE"], "{out}");
    assert_eq!(rows[1], ["w1", "7"], "{out}");
    let (ok, out, err) = run(words("get widgets -o wide")).await;
    assert!(ok, "get widgets -o wide: {err}");
    let rows = table_rows(&out);
    assert_eq!(rows[0], ["NAME", "SIZE", "COLOR"], "{out}");
    assert_eq!(rows[1], ["w1", "7", "teal"], "{out}");

    let (ok, out, err) = run(words("get namespace default")).await;
    assert!(ok, "get namespace: {err}");
    let rows = table_rows(&out);
    assert_eq!(rows[0], ["NAME", "STATUS", "AGE"], "{out}");
    assert_eq!(rows[1][..2], ["default", "Active"], "{out}");
    let (ok, out, err) = run(words("get leases -A")).await;
    assert!(ok, "get leases: {out} {err}");
    sb.shutdown().await;
}

/// Runs kubectl with extra environment; returns success, stdout and stderr.
fn kubectl_env(kubeconfig: &Path, args: &[&str], env: &[(&str, &str)]) -> (bool, String, String) {
    let output = Command::new(KUBECTL)
        .arg("--kubeconfig")
        .arg(kubeconfig)
        .args(args)
        .envs(env.iter().copied())
        .output()
        .expect("kubectl runs");
    (
        output.status.success(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_validates_and_explains_with_the_served_openapi() {
    if !Path::new(KUBECTL).exists() {
        println!("note: {KUBECTL} is missing, kubectl OpenAPI test skipped");
        return;
    }
    let (sb, dir, admin, _) = admin_and_viewer("kubectl-openapi").await;
    let file = |name: &str, text: &str| {
        let path = dir.path().join(name);
        std::fs::write(&path, text).expect("manifest written");
        path.display().to_string()
    };
    let configmap = file(
        "cm.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: validated, namespace: default}\ndata: {a: \"1\"}\n",
    );
    let bogus = file(
        "bogus.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: bogus, namespace: default}\nbogus: true\n",
    );
    let crd = file("crd.yaml", PRINTED_CRD);
    let widget = file("widget.yaml", WIDGET);
    let bad_widget = file(
        "bad-widget.yaml",
        "apiVersion: print.example.com/v1\nkind: Widget\nmetadata: {name: w2, namespace: default}\nspec: {size: 1, shape: round}\n",
    );
    let run = |args: Vec<String>, env: Vec<(&'static str, String)>| {
        let admin = admin.clone();
        async move {
            tokio::task::spawn_blocking(move || {
                let refs: Vec<&str> = args.iter().map(String::as_str).collect();
                let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
                kubectl_env(&admin, &refs, &env)
            })
            .await
            .expect("kubectl task")
        }
    };
    let words = |s: String| s.split(' ').map(str::to_owned).collect::<Vec<_>>();

    let (ok, out, err) = run(words(format!("apply -f {configmap}")), vec![]).await;
    assert!(ok, "apply with validation: {out} {err}");
    let (ok, out, err) = run(words(format!("apply -f {bogus}")), vec![]).await;
    assert!(!ok, "an unknown field is refused: {out} {err}");
    assert!(err.contains("unknown field \"bogus\""), "{err}");
    let (ok, out, err) = run(words(format!("create -f {crd}")), vec![]).await;
    assert!(ok, "create crd: {out} {err}");
    tokio::time::sleep(Duration::from_millis(300)).await;
    let (ok, out, err) = run(words(format!("apply --server-side -f {widget}")), vec![]).await;
    assert!(ok, "server-side apply of a custom object: {out} {err}");
    let (ok, out, err) = run(words(format!("apply -f {bad_widget}")), vec![]).await;
    assert!(!ok, "an unknown custom field is refused: {out} {err}");
    assert!(err.contains("unknown field \"shape\""), "{err}");

    let (ok, out, err) = run(words("explain widgets.spec.size".into()), vec![]).await;
    assert!(
        ok && out.contains("How many parts the widget has."),
        "explain crd: {out} {err}"
    );
    let (ok, out, err) = run(words("explain configmaps.data".into()), vec![]).await;
    assert!(
        ok && out.contains("Data contains the configuration data"),
        "explain: {out} {err}"
    );

    let editor = file(
        "editor.sh",
        "#!/bin/sh\nsed -i 's/a: \"1\"/a: \"2\"/' \"$1\"\n",
    );
    std::fs::set_permissions(&editor, std::os::unix::fs::PermissionsExt::from_mode(0o700))
        .expect("editor executable");
    let (ok, out, err) = run(
        words("edit configmap validated -n default".into()),
        vec![("KUBE_EDITOR", editor)],
    )
    .await;
    assert!(ok, "edit: {out} {err}");
    let (ok, out, err) = run(
        words("get configmap validated -o jsonpath={.data.a}".into()),
        vec![],
    )
    .await;
    assert!(ok && out == "2", "edited value: {out} {err}");
    sb.shutdown().await;
}

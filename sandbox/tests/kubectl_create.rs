//! kubectl's imperative `create` commands against the sandbox: kubectl v1.32 posts these objects
//! as protobuf (`application/vnd.kubernetes.protobuf`), and `kubectl get -o json` must then show
//! what a real cluster stores. Skipped with a note when `/usr/bin/kubectl` is not installed.

use std::path::{Path, PathBuf};
use std::process::Command;

use seedlet_sandbox::Sandbox;
use serde_json::{Value, json};

const KUBECTL: &str = "/usr/bin/kubectl";

/// Runs kubectl with `kubeconfig`; panics with its output when it fails.
fn kubectl(kubeconfig: &Path, args: &[&str]) -> String {
    let output = Command::new(KUBECTL)
        .arg("--kubeconfig")
        .arg(kubeconfig)
        .args(args)
        .output()
        .expect("kubectl runs");
    let (out, err) = (
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    );
    assert!(output.status.success(), "kubectl {args:?}: {out} {err}");
    out
}

/// `kubectl get <what> -o json --show-managed-fields`.
fn get(kubeconfig: &Path, what: &[&str]) -> Value {
    let mut args = vec!["get"];
    args.extend_from_slice(what);
    args.extend(["-o", "json", "--show-managed-fields"]);
    serde_json::from_str(&kubectl(kubeconfig, &args)).expect("kubectl prints JSON")
}

async fn started() -> Option<(Sandbox, tempfile::TempDir, PathBuf)> {
    if !Path::new(KUBECTL).exists() {
        println!("note: {KUBECTL} is missing, kubectl create test skipped");
        return None;
    }
    let sandbox = Sandbox::builder()
        .name("kubectl-create")
        .start()
        .await
        .expect("sandbox starts");
    let dir = tempfile::tempdir().expect("temp dir");
    let kubeconfig = dir.path().join("kubeconfig");
    std::fs::write(&kubeconfig, sandbox.admin_kubeconfig_yaml()).expect("kubeconfig written");
    Some((sandbox, dir, kubeconfig))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_creates_core_objects_from_protobuf() {
    let Some((sandbox, dir, kubeconfig)) = started().await else {
        return;
    };
    let binary = dir.path().join("bin.dat");
    std::fs::write(&binary, [0u8, 1, 0xff]).expect("binary file written");
    let from_file = format!("--from-file=bin.dat={}", binary.display());
    let k = kubeconfig.clone();
    tokio::task::spawn_blocking(move || {
        let run = |args: &[&str]| kubectl(&k, args);
        assert!(run(&["create", "ns", "team"]).contains("namespace/team created"));
        run(&[
            "-n",
            "team",
            "create",
            "secret",
            "generic",
            "login",
            "--from-literal=user=admin",
            "--from-literal=empty=",
        ]);
        run(&[
            "-n",
            "team",
            "create",
            "configmap",
            "settings",
            "--from-literal=a=1",
            "--from-literal=b=two",
            &from_file,
        ]);
        run(&["-n", "team", "create", "sa", "robot"]);
        run(&[
            "-n",
            "team",
            "create",
            "quota",
            "small",
            "--hard=cpu=1,memory=1Gi,pods=10",
        ]);

        let namespace = get(&k, &["ns", "team"]);
        assert_eq!(namespace["status"]["phase"], "Active");
        assert_eq!(namespace["spec"]["finalizers"], json!(["kubernetes"]));
        let secret = get(&k, &["-n", "team", "secret", "login"]);
        assert_eq!(secret["type"], "Opaque");
        assert_eq!(secret["data"], json!({"user": "YWRtaW4=", "empty": ""}));
        let config_map = get(&k, &["-n", "team", "configmap", "settings"]);
        assert_eq!(config_map["data"], json!({"a": "1", "b": "two"}));
        assert_eq!(config_map["binaryData"], json!({"bin.dat": "AAH/"}));
        let account = get(&k, &["-n", "team", "sa", "robot"]);
        assert_eq!(account["metadata"]["namespace"], "team");
        let quota = get(&k, &["-n", "team", "quota", "small"]);
        assert_eq!(
            quota["spec"]["hard"],
            json!({"cpu": "1", "memory": "1Gi", "pods": "10"})
        );
        // kube-apiserver records no manager for the ServiceAccount, whose only fields are metadata.
        assert!(
            account["metadata"].get("managedFields").is_none(),
            "{account}"
        );
        for object in [&namespace, &secret, &config_map, &quota] {
            let managers = &object["metadata"]["managedFields"];
            assert_eq!(managers[0]["manager"], "kubectl-create", "{object}");
        }
    })
    .await
    .expect("kubectl task");
    sandbox.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_creates_workloads_and_rbac_from_protobuf() {
    let Some((sandbox, _dir, kubeconfig)) = started().await else {
        return;
    };
    let k = kubeconfig.clone();
    tokio::task::spawn_blocking(move || {
        let run = |args: &[&str]| kubectl(&k, args);
        run(&[
            "create", "deployment", "web", "--image=nginx:1.27", "--replicas=0", "--port=8080",
        ]);
        run(&["create", "job", "once", "--image=busybox", "--", "echo", "hi"]);
        run(&[
            "create", "role", "reader", "--verb=get,list",
            "--resource=pods,deployments.apps", "--resource-name=x",
        ]);
        run(&["create", "clusterrole", "logs", "--verb=get", "--non-resource-url=/logs/*"]);
        run(&["create", "clusterrole", "pod-lister", "--verb=list", "--resource=pods"]);
        run(&["create", "rolebinding", "read", "--role=reader", "--user=bob"]);
        run(&[
            "create", "clusterrolebinding", "viewers", "--clusterrole=pod-lister",
            "--user=alice", "--group=devs", "--serviceaccount=default:robot",
        ]);

        let deployment = get(&k, &["deployment", "web"]);
        assert_eq!(deployment["spec"]["replicas"], 0, "an explicit zero stays");
        assert_eq!(deployment["spec"]["selector"], json!({"matchLabels": {"app": "web"}}));
        let template = &deployment["spec"]["template"];
        assert_eq!(template["metadata"]["labels"], json!({"app": "web"}));
        let container = &template["spec"]["containers"][0];
        assert_eq!(container["name"], "nginx");
        assert_eq!(container["image"], "nginx:1.27");
        assert_eq!(container["ports"][0]["containerPort"], 8080);
        let job = get(&k, &["job", "once"]);
        let pod = &job["spec"]["template"]["spec"];
        assert_eq!(pod["restartPolicy"], "Never");
        assert_eq!(pod["containers"][0]["command"], json!(["echo", "hi"]));
        assert_eq!(pod["containers"][0]["image"], "busybox");
        let role = get(&k, &["role", "reader"]);
        assert_eq!(
            role["rules"],
            json!([
                {"apiGroups": [""], "resources": ["pods"], "resourceNames": ["x"], "verbs": ["get", "list"]},
                {"apiGroups": ["apps"], "resources": ["deployments"], "resourceNames": ["x"], "verbs": ["get", "list"]},
            ])
        );
        let cluster_role = get(&k, &["clusterrole", "logs"]);
        assert_eq!(
            cluster_role["rules"],
            json!([{"nonResourceURLs": ["/logs/*"], "verbs": ["get"]}])
        );
        let binding = get(&k, &["rolebinding", "read"]);
        assert_eq!(
            binding["roleRef"],
            json!({"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "reader"})
        );
        let viewers = get(&k, &["clusterrolebinding", "viewers"]);
        assert_eq!(
            viewers["subjects"],
            json!([
                {"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "alice"},
                {"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": "devs"},
                {"kind": "ServiceAccount", "name": "robot", "namespace": "default"},
            ])
        );
        assert_eq!(viewers["roleRef"]["name"], "pod-lister");
        // The binding takes effect: alice may now list pods.
        let can = run(&["auth", "can-i", "list", "pods", "--as=alice"]);
        assert_eq!(can.trim(), "yes");
    })
    .await
    .expect("kubectl task");
    sandbox.shutdown().await;
}

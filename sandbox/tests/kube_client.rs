//! End-to-end tests with a real kube-rs client (rustls, client certificates) against an in-process sandbox.

use std::time::Duration;

use futures::{StreamExt, TryStreamExt};
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::authorization::v1::{
    SelfSubjectRulesReview, SelfSubjectRulesReviewSpec, SubjectRulesReviewStatus,
};
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::{ConfigMap, Namespace, Secret};
use k8s_openapi::api::rbac::v1::{Role, RoleBinding};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{
    Api, DeleteParams, ListParams, Patch, PatchParams, PostParams, WatchEvent, WatchParams,
};
use kube::core::{DynamicObject, GroupVersionKind};
use kube::runtime::{WatchStreamExt, watcher};
use kube::{Client, discovery};
use seedlet_sandbox::Sandbox;
use serde_json::json;

async fn sandbox() -> Sandbox {
    Sandbox::builder()
        .name("test")
        .start()
        .await
        .expect("sandbox starts")
}

async fn namespace(client: &Client, name: &str) {
    let namespaces: Api<Namespace> = Api::all(client.clone());
    let ns: Namespace =
        serde_json::from_value(json!({"metadata": {"name": name}})).expect("valid namespace");
    namespaces
        .create(&PostParams::default(), &ns)
        .await
        .expect("namespace created");
}

fn config_map(name: &str, data: serde_json::Value) -> ConfigMap {
    serde_json::from_value(json!({"metadata": {"name": name}, "data": data}))
        .expect("valid configmap")
}

#[tokio::test]
async fn crud_round_trip_with_optimistic_concurrency() {
    let sb = sandbox().await;
    let client = sb.client();
    namespace(&client, "crud").await;
    let maps: Api<ConfigMap> = Api::namespaced(client.clone(), "crud");
    let created = maps
        .create(&PostParams::default(), &config_map("a", json!({"k": "1"})))
        .await
        .expect("create");
    let fetched = maps.get("a").await.expect("get");
    assert_eq!(fetched.metadata.uid, created.metadata.uid);

    let mut changed = fetched.clone();
    changed.data = Some([("k".to_string(), "2".to_string())].into());
    maps.replace("a", &PostParams::default(), &changed)
        .await
        .expect("replace with current version");
    let stale = maps
        .replace("a", &PostParams::default(), &fetched)
        .await
        .expect_err("stale version conflicts");
    assert!(
        matches!(stale, kube::Error::Api(ref s) if s.code == 409),
        "{stale:?}"
    );

    let patched = maps
        .patch(
            "a",
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"labels": {"x": "y"}}})),
        )
        .await
        .expect("merge patch");
    assert_eq!(patched.metadata.labels.expect("labels")["x"], "y");

    let listed = maps
        .list(&ListParams::default().labels("x=y"))
        .await
        .expect("list");
    assert_eq!(listed.items.len(), 1);
    maps.delete("a", &DeleteParams::default())
        .await
        .expect("delete");
    let gone = maps.get("a").await.expect_err("deleted");
    assert!(matches!(gone, kube::Error::Api(ref s) if s.code == 404));
    sb.shutdown().await;
}

#[tokio::test]
async fn secrets_encode_string_data() {
    let sb = sandbox().await;
    let secrets: Api<Secret> = Api::namespaced(sb.client(), "default");
    let secret: Secret =
        serde_json::from_value(json!({"metadata": {"name": "s"}, "stringData": {"user": "admin"}}))
            .expect("valid");
    let created = secrets
        .create(&PostParams::default(), &secret)
        .await
        .expect("create");
    assert_eq!(created.type_.as_deref(), Some("Opaque"));
    assert_eq!(created.data.expect("data")["user"].0, b"admin");
    sb.shutdown().await;
}

#[tokio::test]
async fn watcher_sees_creations_updates_and_deletions() {
    let sb = sandbox().await;
    let client = sb.client();
    namespace(&client, "watched").await;
    let maps: Api<ConfigMap> = Api::namespaced(client.clone(), "watched");
    let stream = watcher(maps.clone(), watcher::Config::default()).applied_objects();
    let mut stream = Box::pin(stream);
    maps.create(&PostParams::default(), &config_map("w", json!({"v": "1"})))
        .await
        .expect("create");
    let first = tokio::time::timeout(Duration::from_secs(10), stream.try_next())
        .await
        .expect("event in time");
    assert_eq!(
        first
            .expect("no error")
            .expect("an object")
            .metadata
            .name
            .as_deref(),
        Some("w")
    );
    maps.patch(
        "w",
        &PatchParams::default(),
        &Patch::Merge(json!({"data": {"v": "2"}})),
    )
    .await
    .expect("patch");
    let second = tokio::time::timeout(Duration::from_secs(10), stream.try_next())
        .await
        .expect("event in time");
    assert_eq!(
        second
            .expect("no error")
            .expect("an object")
            .data
            .expect("data")["v"],
        "2"
    );
    sb.shutdown().await;
}

#[tokio::test]
async fn server_side_apply_tracks_owners_and_conflicts() {
    let sb = sandbox().await;
    let maps: Api<ConfigMap> = Api::namespaced(sb.client(), "default");
    let applied = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "ssa"}, "data": {"a": "1"}});
    maps.patch("ssa", &PatchParams::apply("alpha"), &Patch::Apply(&applied))
        .await
        .expect("first apply creates");
    let other = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "ssa"}, "data": {"a": "2"}});
    let conflict = maps
        .patch("ssa", &PatchParams::apply("beta"), &Patch::Apply(&other))
        .await
        .expect_err("conflict");
    assert!(
        matches!(conflict, kube::Error::Api(ref s) if s.code == 409),
        "{conflict:?}"
    );
    let forced = maps
        .patch(
            "ssa",
            &PatchParams::apply("beta").force(),
            &Patch::Apply(&other),
        )
        .await
        .expect("force");
    assert_eq!(forced.data.expect("data")["a"], "2");
    let managers: Vec<String> = forced
        .metadata
        .managed_fields
        .expect("managed fields")
        .into_iter()
        .filter_map(|m| m.manager)
        .collect();
    assert_eq!(managers, ["beta"]);
    sb.shutdown().await;
}

#[tokio::test]
async fn lease_micro_time_round_trips() {
    let sb = sandbox().await;
    let leases: Api<Lease> = Api::namespaced(sb.client(), "default");
    let lease: Lease = serde_json::from_value(json!({
        "metadata": {"name": "l"},
        "spec": {"holderIdentity": "me", "leaseDurationSeconds": 40, "renewTime": "2026-01-02T03:04:05.123456Z"}
    }))
    .expect("valid lease");
    let created = leases
        .create(&PostParams::default(), &lease)
        .await
        .expect("create");
    let renew = created.spec.expect("spec").renew_time.expect("renew time");
    assert_eq!(renew.0.to_string(), "2026-01-02T03:04:05.123456Z");
    sb.shutdown().await;
}

#[tokio::test]
async fn custom_resources_are_served_after_their_crd_is_created() {
    let sb = sandbox().await;
    let client = sb.client();
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    let crd: CustomResourceDefinition = serde_json::from_value(json!({
        "metadata": {"name": "gizmos.example.com"},
        "spec": {
            "group": "example.com", "scope": "Namespaced",
            "names": {"plural": "gizmos", "kind": "Gizmo"},
            "versions": [{"name": "v1", "served": true, "storage": true, "subresources": {"status": {}},
                "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                    "spec": {"type": "object", "properties": {"size": {"type": "integer", "default": 2}}},
                    "status": {"type": "object", "properties": {"ready": {"type": "boolean"}}}}}}}]
        }
    }))
    .expect("valid crd");
    crds.create(&PostParams::default(), &crd)
        .await
        .expect("crd created");
    let gvk = GroupVersionKind::gvk("example.com", "v1", "Gizmo");
    let (resource, _) = discovery::pinned_kind(&client, &gvk)
        .await
        .expect("discovered");
    let gizmos: Api<DynamicObject> = Api::namespaced_with(client.clone(), "default", &resource);
    let object: DynamicObject = serde_json::from_value(json!({
        "apiVersion": "example.com/v1", "kind": "Gizmo", "metadata": {"name": "g"}, "spec": {}
    }))
    .expect("valid object");
    let created = gizmos
        .create(&PostParams::default(), &object)
        .await
        .expect("created");
    assert_eq!(created.data["spec"]["size"], 2);
    let status = gizmos
        .patch_status(
            "g",
            &PatchParams::default(),
            &Patch::Merge(json!({"status": {"ready": true}})),
        )
        .await
        .expect("status patch");
    assert_eq!(status.data["status"]["ready"], true);
    assert_eq!(status.metadata.generation, Some(1));
    sb.shutdown().await;
}

#[tokio::test]
async fn deployments_become_ready_through_simulation() {
    let sb = sandbox().await;
    let deployments: Api<Deployment> = Api::namespaced(sb.client(), "default");
    let deployment: Deployment = serde_json::from_value(json!({
        "metadata": {"name": "web"},
        "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "web"}},
            "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}
    }))
    .expect("valid deployment");
    deployments
        .create(&PostParams::default(), &deployment)
        .await
        .expect("created");
    let mut ready = false;
    for _ in 0..50 {
        let current = deployments.get("web").await.expect("get");
        if current.status.and_then(|s| s.ready_replicas) == Some(2) {
            ready = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(ready, "deployment never became ready");
    sb.shutdown().await;
}

#[tokio::test]
async fn users_without_rbac_are_forbidden() {
    let sb = sandbox().await;
    let kubeconfig = sb.kubeconfig_for("nobody", &[]).expect("issued");
    let config = kube::Config::from_custom_kubeconfig(kubeconfig, &Default::default())
        .await
        .expect("config");
    let client = Client::try_from(config).expect("client");
    let maps: Api<ConfigMap> = Api::namespaced(client, "default");
    let denied = maps
        .list(&ListParams::default())
        .await
        .expect_err("forbidden");
    assert!(
        matches!(denied, kube::Error::Api(ref s) if s.code == 403),
        "{denied:?}"
    );
    sb.shutdown().await;
}

#[tokio::test]
async fn a_certificate_from_another_ca_is_answered_401() {
    let sb = sandbox().await;
    let other = Sandbox::builder()
        .name("other")
        .start()
        .await
        .expect("second sandbox starts");
    // Signed by the other sandbox's CA, sent to this one (kube-apiserver: handshake completes,
    // the x509 authenticator refuses it, anonymous does not apply).
    let mut foreign = other
        .kubeconfig_for("admin", &["system:masters"])
        .expect("issued");
    foreign.clusters[0].cluster = sb.admin_kubeconfig().clusters[0].cluster.clone();
    let config = kube::Config::from_custom_kubeconfig(foreign, &Default::default())
        .await
        .expect("config");
    let client = Client::try_from(config).expect("client");
    for _ in 0..3 {
        let answer = Api::<ConfigMap>::namespaced(client.clone(), "default")
            .list(&ListParams::default())
            .await;
        assert!(
            matches!(&answer, Err(kube::Error::Api(status)) if status.code == 401),
            "{answer:?}"
        );
    }
    other.shutdown().await;
    sb.shutdown().await;
}

#[tokio::test]
async fn state_survives_a_restart_on_the_same_directory() {
    let dir = tempfile::tempdir().expect("temp dir");
    let sb = Sandbox::builder()
        .dir(dir.path())
        .start()
        .await
        .expect("starts");
    let maps: Api<ConfigMap> = Api::namespaced(sb.client(), "default");
    maps.create(
        &PostParams::default(),
        &config_map("kept", json!({"a": "b"})),
    )
    .await
    .expect("create");
    sb.shutdown().await;
    let again = Sandbox::builder()
        .dir(dir.path())
        .start()
        .await
        .expect("restarts");
    let maps: Api<ConfigMap> = Api::namespaced(again.client(), "default");
    assert_eq!(
        maps.get("kept")
            .await
            .expect("still there")
            .data
            .expect("data")["a"],
        "b"
    );
    again.shutdown().await;
}

#[tokio::test]
async fn namespace_deletion_removes_contents_and_the_namespace() {
    let sb = sandbox().await;
    let client = sb.client();
    namespace(&client, "doomed").await;
    let maps: Api<ConfigMap> = Api::namespaced(client.clone(), "doomed");
    maps.create(&PostParams::default(), &config_map("x", json!({})))
        .await
        .expect("create");
    let namespaces: Api<Namespace> = Api::all(client.clone());
    namespaces
        .delete("doomed", &DeleteParams::default())
        .await
        .expect("delete namespace");
    let mut gone = false;
    for _ in 0..50 {
        if namespaces.get_opt("doomed").await.expect("get").is_none() {
            gone = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(gone, "namespace was not removed");
    sb.shutdown().await;
}

/// `kubectl auth can-i get pods` as kubectl sends it: a protobuf SelfSubjectAccessReview.
const CAN_I_GET_PODS: &[u8] = &[
    0x6b, 0x38, 0x73, 0x00, 0x0a, 0x32, 0x0a, 0x17, 0x61, 0x75, 0x74, 0x68, 0x6f, 0x72, 0x69, 0x7a,
    0x61, 0x74, 0x69, 0x6f, 0x6e, 0x2e, 0x6b, 0x38, 0x73, 0x2e, 0x69, 0x6f, 0x2f, 0x76, 0x31, 0x12,
    0x17, 0x53, 0x65, 0x6c, 0x66, 0x53, 0x75, 0x62, 0x6a, 0x65, 0x63, 0x74, 0x41, 0x63, 0x63, 0x65,
    0x73, 0x73, 0x52, 0x65, 0x76, 0x69, 0x65, 0x77, 0x12, 0x3c, 0x0a, 0x10, 0x0a, 0x00, 0x12, 0x00,
    0x1a, 0x00, 0x22, 0x00, 0x2a, 0x00, 0x32, 0x00, 0x38, 0x00, 0x42, 0x00, 0x12, 0x1e, 0x0a, 0x1c,
    0x0a, 0x07, 0x64, 0x65, 0x66, 0x61, 0x75, 0x6c, 0x74, 0x12, 0x03, 0x67, 0x65, 0x74, 0x1a, 0x00,
    0x22, 0x00, 0x2a, 0x04, 0x70, 0x6f, 0x64, 0x73, 0x32, 0x00, 0x3a, 0x00, 0x1a, 0x08, 0x08, 0x00,
    0x12, 0x00, 0x1a, 0x00, 0x20, 0x00, 0x1a, 0x00, 0x22, 0x00,
];

async fn post_review(client: &Client, accept: &str) -> (u16, String, Vec<u8>) {
    let request = http::Request::post("/apis/authorization.k8s.io/v1/selfsubjectaccessreviews")
        .header("Content-Type", "application/vnd.kubernetes.protobuf")
        .header("Accept", accept)
        .body(kube::client::Body::from(CAN_I_GET_PODS.to_vec()))
        .expect("valid request");
    let response = client.send(request).await.expect("review answered");
    let status = response.status().as_u16();
    let content_type = response
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_string();
    let body = http_body_util::BodyExt::collect(response.into_body())
        .await
        .expect("body read")
        .to_bytes()
        .to_vec();
    (status, content_type, body)
}

#[tokio::test]
async fn protobuf_access_review_is_answered_in_json_or_protobuf_as_accepted() {
    let sb = sandbox().await;
    let client = sb.client();

    let (status, content_type, body) = post_review(
        &client,
        "application/vnd.kubernetes.protobuf,application/json",
    )
    .await;
    assert_eq!((status, content_type.as_str()), (201, "application/json"));
    let review: serde_json::Value = serde_json::from_slice(&body).expect("JSON review");
    assert_eq!(review["kind"], "SelfSubjectAccessReview");
    assert_eq!(
        review["spec"]["resourceAttributes"],
        json!({"namespace": "default", "verb": "get", "resource": "pods"})
    );
    assert_eq!(review["status"]["allowed"], true);

    let (status, content_type, body) =
        post_review(&client, "application/vnd.kubernetes.protobuf").await;
    assert_eq!(
        (status, content_type.as_str()),
        (201, "application/vnd.kubernetes.protobuf")
    );
    assert!(body.starts_with(b"k8s\0"), "protobuf magic prefix");
    // status (field 3) with allowed (field 1) = true ends the SelfSubjectAccessReview message.
    let status_field = body
        .windows(4)
        .rposition(|w| w[0] == 0x1a && w[2] == 0x08 && w[3] == 0x01);
    assert!(status_field.is_some(), "allowed status in {body:02x?}");
    sb.shutdown().await;
}

#[tokio::test]
async fn injected_failures_are_reproducible_from_a_seed_and_counted_per_user() {
    let sb = sandbox().await;
    namespace(&sb.client(), "faults").await;
    Api::<ConfigMap>::namespaced(sb.client(), "faults")
        .create(&PostParams::default(), &config_map("a", json!({"k": "1"})))
        .await
        .expect("create");
    let kubeconfig = sb
        .kubeconfig_for("alice", &["system:masters"])
        .expect("certificate issued");
    let config = kube::Config::from_custom_kubeconfig(kubeconfig, &Default::default())
        .await
        .expect("kubeconfig loads");
    let alice: Api<ConfigMap> =
        Api::namespaced(Client::try_from(config).expect("client builds"), "faults");
    let faults = sb.faults();
    faults.fail_requests(0.4, seedlet_sandbox::FaultKind::InternalError);
    let mut patterns = Vec::new();
    for _ in 0..2 {
        faults.seed(11);
        let mut failed = Vec::new();
        for _ in 0..40 {
            match alice.get("a").await {
                Ok(_) => failed.push(false),
                Err(kube::Error::Api(status)) if status.code == 500 => failed.push(true),
                Err(other) => panic!("unexpected error: {other}"),
            }
        }
        patterns.push(failed);
    }
    faults.clear();
    assert_eq!(patterns[0], patterns[1], "same seed, same failures");
    let failures = patterns[0].iter().filter(|f| **f).count() as u64 * 2;
    assert!(
        (10..70).contains(&failures),
        "about 40 % of 80 failed: {failures}"
    );
    let served = sb.request_counts().get("alice").copied().unwrap_or(0);
    let injected = sb.injected_failures().get("alice").copied().unwrap_or(0);
    assert_eq!((served, injected), (80 - failures, failures));
    assert!(
        !sb.injected_failures().contains_key("admin"),
        "admin requests ran before the faults"
    );
}

/// Creates a SelfSubjectRulesReview for `namespace` as `client`'s user.
async fn rules_review(
    client: &Client,
    namespace: Option<&str>,
) -> Result<SubjectRulesReviewStatus, kube::Error> {
    let reviews: Api<SelfSubjectRulesReview> = Api::all(client.clone());
    let review = SelfSubjectRulesReview {
        spec: SelfSubjectRulesReviewSpec {
            namespace: namespace.map(str::to_owned),
        },
        ..SelfSubjectRulesReview::default()
    };
    let answer = reviews.create(&PostParams::default(), &review).await?;
    Ok(answer.status.expect("the answer has a status"))
}

/// `(verbs, apiGroups, resources, resourceNames)` of each resource rule, in order.
fn resource_rules(status: &SubjectRulesReviewStatus) -> Vec<[Vec<String>; 4]> {
    status
        .resource_rules
        .iter()
        .map(|rule| {
            [
                rule.verbs.clone(),
                rule.api_groups.clone().unwrap_or_default(),
                rule.resources.clone().unwrap_or_default(),
                rule.resource_names.clone().unwrap_or_default(),
            ]
        })
        .collect()
}

fn strings(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| (*s).to_owned()).collect()
}

#[tokio::test]
async fn self_subject_rules_review_lists_the_rules_of_the_requester_in_a_namespace() {
    let sb = sandbox().await;
    let admin = sb.client();
    namespace(&admin, "team").await;
    let roles: Api<Role> = Api::namespaced(admin.clone(), "team");
    let role: Role = serde_json::from_value(json!({
        "metadata": {"name": "reader"},
        "rules": [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get"], "resourceNames": ["settings"]}],
    }))
    .expect("valid role");
    roles
        .create(&PostParams::default(), &role)
        .await
        .expect("role created");
    let bindings: Api<RoleBinding> = Api::namespaced(admin.clone(), "team");
    let binding: RoleBinding = serde_json::from_value(json!({
        "metadata": {"name": "devs-read"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "reader"},
        "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": "devs"}],
    }))
    .expect("valid binding");
    bindings
        .create(&PostParams::default(), &binding)
        .await
        .expect("binding created");
    let config = kube::Config::from_custom_kubeconfig(
        sb.kubeconfig_for("dev", &["devs"]).expect("issued"),
        &Default::default(),
    )
    .await
    .expect("config");
    let dev = Client::try_from(config).expect("client");

    let basic_user = [
        strings(&["create"]),
        strings(&["authorization.k8s.io"]),
        strings(&["selfsubjectaccessreviews", "selfsubjectrulesreviews"]),
        Vec::new(),
    ];
    let status = rules_review(&dev, Some("team")).await.expect("answered");
    assert_eq!(
        resource_rules(&status),
        vec![
            basic_user.clone(),
            [
                strings(&["get"]),
                strings(&[""]),
                strings(&["configmaps"]),
                strings(&["settings"])
            ],
        ]
    );
    assert!(!status.incomplete);
    assert_eq!(status.evaluation_error, None);
    assert!(
        status
            .non_resource_rules
            .iter()
            .any(|rule| rule.verbs == ["get"]
                && rule
                    .non_resource_urls
                    .as_ref()
                    .is_some_and(|urls| urls.contains(&"/version".to_owned()))),
        "discovery URLs: {:?}",
        status.non_resource_rules
    );

    let status = rules_review(&dev, Some("default")).await.expect("answered");
    assert_eq!(resource_rules(&status), vec![basic_user]);

    let status = rules_review(&admin, Some("default"))
        .await
        .expect("answered");
    assert_eq!(
        resource_rules(&status)[0],
        [
            strings(&["*"]),
            strings(&["*"]),
            strings(&["*"]),
            Vec::new()
        ]
    );
    let first_urls = &status.non_resource_rules[0];
    assert_eq!(
        (
            first_urls.verbs.clone(),
            first_urls.non_resource_urls.clone()
        ),
        (strings(&["*"]), Some(strings(&["*"])))
    );

    let error = rules_review(&dev, None)
        .await
        .expect_err("namespace required");
    assert!(
        matches!(error, kube::Error::Api(ref s) if s.code == 400 && s.message == "no namespace on request"),
        "{error:?}"
    );

    let resources = admin
        .list_api_group_resources("authorization.k8s.io/v1")
        .await
        .expect("discovery");
    let served = resources
        .resources
        .iter()
        .find(|r| r.name == "selfsubjectrulesreviews")
        .expect("selfsubjectrulesreviews is discovered");
    assert_eq!(
        (
            served.kind.as_str(),
            served.namespaced,
            served.verbs.clone()
        ),
        ("SelfSubjectRulesReview", false, strings(&["create"]))
    );
    sb.shutdown().await;
}

#[tokio::test]
async fn bookmarks_carry_the_latest_resource_version_when_only_other_resources_change() {
    let sb = sandbox().await;
    let client = sb.client();
    let maps: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    let secrets: Api<Secret> = Api::namespaced(client, "default");
    let mut stream = maps
        // kube-rs asks for bookmarks by default.
        .watch(&WatchParams::default(), "0")
        .await
        .expect("watch")
        .boxed();
    let secret: Secret =
        serde_json::from_value(json!({"metadata": {"name": "elsewhere"}})).expect("valid secret");
    let written: u64 = secrets
        .create(&PostParams::default(), &secret)
        .await
        .expect("secret created")
        .metadata
        .resource_version
        .expect("stored with a version")
        .parse()
        .expect("numeric version");
    // A bookmark is due 5 s after the watch's last event; the bound leaves room for a loaded machine.
    let bookmark = tokio::time::timeout(Duration::from_secs(30), async {
        loop {
            match stream.try_next().await.expect("watch stream") {
                Some(WatchEvent::Bookmark(bookmark)) => return bookmark,
                Some(_) => continue,
                None => panic!("watch ended before a bookmark"),
            }
        }
    })
    .await
    .expect("a bookmark arrives");
    let bookmarked: u64 = bookmark
        .metadata
        .resource_version
        .parse()
        .expect("numeric version");
    assert!(
        bookmarked >= written,
        "bookmark at {bookmarked}, secret written at {written}"
    );
    sb.shutdown().await;
}

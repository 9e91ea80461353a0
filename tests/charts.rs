//! The install charts in `charts/`: rendered with seedlet's own renderer (library and
//! `seedlet render`), checked property by property, and applied to garden and seed sandboxes where
//! the garden controller and the agent then run under the charts' ServiceAccount identities — so
//! the RBAC is shown to be sufficient for bootstrap, CSR approval, registration and heartbeat.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use base64::Engine as _;
use k8s_openapi::api::coordination::v1::Lease;
use kube::Api;
use kube::api::{DynamicObject, GroupVersionKind, Patch, PatchParams};
use kube::config::{KubeConfigOptions, Kubeconfig};
use seedlet_api::core::Seed;
use seedlet_chartrender::{Chart, Limits, RenderOptions, Renderer, merge_values};
use seedlet_sandbox::Sandbox;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

const NAMESPACE: &str = "garden";
const SEED_NAME: &str = "my-seed";

fn chart_dir(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("charts")
        .join(name)
}

pub(crate) fn values_file(chart: &str, file: &str) -> Value {
    let path = chart_dir(chart).join("ci").join(file);
    let text = std::fs::read_to_string(&path).expect("values file");
    serde_yaml::from_str(&text).expect("values yaml")
}

/// Renders `chart` (release = chart name, namespace `garden`) with `values` over its defaults.
pub(crate) fn render(chart: &str, values: &Value) -> Result<Vec<Value>, String> {
    let loaded = Chart::from_dir(&chart_dir(chart), &Limits::default()).expect("chart loads");
    let options = RenderOptions {
        release_name: chart.to_owned(),
        namespace: NAMESPACE.to_owned(),
        values: values.clone(),
        ..RenderOptions::default()
    };
    let rendered = Renderer::new()
        .render(&loaded, &options)
        .map_err(|error| format!("{:#}", anyhow_chain(&error)))?;
    let manifests = rendered.manifests().expect("every document parses");
    Ok(manifests.into_iter().map(|m| m.object).collect())
}

fn anyhow_chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

pub(crate) fn with(mut base: Value, overlay: Value) -> Value {
    merge_values(&mut base, &overlay);
    base
}

fn find<'a>(objects: &'a [Value], kind: &str, name: &str) -> &'a Value {
    objects
        .iter()
        .find(|o| o["kind"] == kind && o["metadata"]["name"] == name)
        .unwrap_or_else(|| panic!("{kind} {name} rendered"))
}

fn config_of(objects: &[Value], name: &str) -> seedlet_config::AnyConfig {
    let text = find(objects, "ConfigMap", name)["data"]["config.yaml"]
        .as_str()
        .expect("config.yaml");
    seedlet_config::parse(text, format!("{name}/config.yaml"))
        .unwrap_or_else(|error| panic!("{name}: {error:?}"))
}

fn checksum(objects: &[Value], deployment: &str) -> String {
    find(objects, "Deployment", deployment)["spec"]["template"]["metadata"]["annotations"]
        ["checksum/config"]
        .as_str()
        .expect("checksum annotation")
        .to_owned()
}

fn assert_hardened_pod(deployment: &Value, health_port_name: &str) {
    let pod = &deployment["spec"]["template"]["spec"];
    assert_eq!(pod["securityContext"]["runAsNonRoot"], true);
    assert_eq!(
        pod["securityContext"]["seccompProfile"]["type"],
        "RuntimeDefault"
    );
    let container = &pod["containers"][0];
    let security = &container["securityContext"];
    assert_eq!(security["readOnlyRootFilesystem"], true);
    assert_eq!(security["allowPrivilegeEscalation"], false);
    assert_eq!(security["capabilities"]["drop"], json!(["ALL"]));
    assert_eq!(container["livenessProbe"]["httpGet"]["path"], "/healthz");
    assert_eq!(
        container["livenessProbe"]["httpGet"]["port"],
        health_port_name
    );
    assert!(container["resources"]["requests"]["memory"].is_string());
    assert!(pod["serviceAccountName"].is_string());
}

fn rules_of(role: &Value) -> Vec<Value> {
    role["rules"].as_array().cloned().unwrap_or_default()
}

fn grants(rules: &[Value], group: &str, resource: &str, verb: &str, name: Option<&str>) -> bool {
    let has = |list: &Value, item: &str| {
        list.as_array()
            .is_some_and(|l| l.iter().any(|v| v == item || v == "*"))
    };
    rules.iter().any(|rule| {
        has(&rule["apiGroups"], group)
            && has(&rule["resources"], resource)
            && has(&rule["verbs"], verb)
            && match (name, rule.get("resourceNames")) {
                (_, None) => true,
                (Some(name), Some(names)) => has(names, name),
                (None, Some(_)) => false,
            }
    })
}

#[test]
fn agent_chart_needs_the_seed_name() {
    let error = render("seedlet-agent", &json!({})).expect_err("no seed name");
    assert!(
        error.contains("config.seedConfig.metadata.name is required"),
        "{error}"
    );
}

#[test]
fn agent_chart_renders_a_hardened_deployment_and_a_valid_configuration() {
    for file in ["minimal-values.yaml", "full-values.yaml"] {
        let values = values_file("seedlet-agent", file);
        let objects = render("seedlet-agent", &values).expect("renders");
        let deployment = find(&objects, "Deployment", "seedlet-agent");
        assert_hardened_pod(deployment, "health");
        let pod = &deployment["spec"]["template"]["spec"];
        assert!(pod["priorityClassName"].is_string(), "{file}");
        assert!(
            !pod["topologySpreadConstraints"]
                .as_array()
                .expect("spread")
                .is_empty()
        );
        let readiness = &pod["containers"][0]["readinessProbe"]["httpGet"]["path"];
        // Standby replicas answer /readyz with 200, so one probe path serves any replica count.
        assert_eq!(readiness, "/readyz");
        find(&objects, "PodDisruptionBudget", "seedlet-agent");
        find(&objects, "Service", "seedlet-agent-metrics");
        find(&objects, "ServiceAccount", "seedlet-agent");

        let seedlet_config::AnyConfig::Gardenlet(config) =
            config_of(&objects, "seedlet-agent-config")
        else {
            panic!("{file}: not a GardenletConfiguration");
        };
        let garden = &config.garden_client_connection;
        assert_eq!(
            garden
                .kubeconfig_secret
                .as_ref()
                .map(|s| s.namespace.as_str()),
            Some(NAMESPACE)
        );
        let bootstrap = garden.bootstrap_kubeconfig.as_ref().expect("bootstrap");
        if values["bootstrap"]["kubeconfig"].is_string() {
            let secret = find(&objects, "Secret", &bootstrap.name);
            assert!(secret["data"]["kubeconfig"].is_string());
        }
        let ports = &pod["containers"][0]["ports"];
        assert_eq!(
            ports[0]["containerPort"].as_u64(),
            Some(u64::from(config.server.health_probes.port))
        );
        assert_eq!(config.leader_election.resource_namespace, NAMESPACE);
    }
}

#[test]
fn agent_chart_rbac_follows_the_applier_switch() {
    let base = values_file("seedlet-agent", "minimal-values.yaml");
    let objects = render("seedlet-agent", &base).expect("renders");
    let role = find(&objects, "Role", "seedlet-agent");
    assert!(grants(&rules_of(role), "", "secrets", "delete", None));
    assert!(grants(
        &rules_of(role),
        "coordination.k8s.io",
        "leases",
        "update",
        None
    ));
    let applier = find(&objects, "ClusterRoleBinding", "seedlet-agent-applier");
    assert_eq!(applier["roleRef"]["name"], "cluster-admin");

    let none = with(base.clone(), json!({"rbac": {"applier": "none"}}));
    let error = render("seedlet-agent", &none).expect_err("applier on without rights");
    assert!(error.contains("managedResource.enabled=false"), "{error}");
    let off = with(
        none,
        json!({"config": {"controllers": {"managedResource": {"enabled": false}}}}),
    );
    let objects = render("seedlet-agent", &off).expect("renders");
    assert!(
        !objects
            .iter()
            .any(|o| o["metadata"]["name"] == "seedlet-agent-applier"),
        "no applier rights"
    );
}

#[test]
fn checksum_annotation_changes_only_with_the_configuration() {
    let base = values_file("seedlet-agent", "minimal-values.yaml");
    let before = checksum(
        &render("seedlet-agent", &base).expect("renders"),
        "seedlet-agent",
    );
    let debug = with(base.clone(), json!({"config": {"logLevel": "debug"}}));
    let after = checksum(
        &render("seedlet-agent", &debug).expect("renders"),
        "seedlet-agent",
    );
    assert_ne!(before, after, "a config change rolls the pods");
    let resources = with(base, json!({"resources": {"limits": {"memory": "1Gi"}}}));
    let same = checksum(
        &render("seedlet-agent", &resources).expect("renders"),
        "seedlet-agent",
    );
    assert_eq!(before, same, "other values do not touch the checksum");

    let garden = render("seedlet-garden", &json!({})).expect("renders");
    let changed =
        render("seedlet-garden", &json!({"config": {"logFormat": "text"}})).expect("renders");
    assert_ne!(
        checksum(&garden, "seedlet-garden"),
        checksum(&changed, "seedlet-garden")
    );
}

#[test]
fn garden_chart_grants_signer_approval_and_bootstraps_seeds() {
    for values in [json!({}), values_file("seedlet-garden", "full-values.yaml")] {
        let objects = render("seedlet-garden", &values).expect("renders");
        assert_hardened_pod(find(&objects, "Deployment", "seedlet-garden"), "health");
        assert!(matches!(
            config_of(&objects, "seedlet-garden-config"),
            seedlet_config::AnyConfig::GardenController(_)
        ));
        let rules = rules_of(find(&objects, "ClusterRole", "seedlet-garden"));
        assert!(grants(
            &rules,
            "certificates.k8s.io",
            "signers",
            "approve",
            Some("kubernetes.io/kube-apiserver-client")
        ));
        assert!(grants(
            &rules,
            "certificates.k8s.io",
            "certificatesigningrequests/approval",
            "update",
            None
        ));
        assert!(grants(
            &rules,
            "authorization.k8s.io",
            "subjectaccessreviews",
            "create",
            None
        ));
        assert!(!grants(
            &rules,
            "certificates.k8s.io",
            "signers",
            "approve",
            Some("kubernetes.io/kubelet-serving")
        ));
        // The seed-secrets controller writes the copies into every seed-<name> namespace
        // (namespaces RBAC cannot name in advance), as gardener-controller-manager does.
        assert!(
            grants(&rules, "", "secrets", "create", None),
            "secret writes for the seed-secrets mirror"
        );

        let bootstrapper = find(
            &objects,
            "ClusterRole",
            "gardener.cloud:system:seed-bootstrapper",
        );
        assert_eq!(
            bootstrapper["rules"],
            serde_json::to_value(
                seedlet_garden::controllers::csr_approval::rbac::bootstrapper_cluster_role().rules
            )
            .expect("rules"),
            "the chart and the controller write the same role"
        );
        let binding = find(
            &objects,
            "ClusterRoleBinding",
            "gardener.cloud:system:seed-bootstrapper",
        );
        assert_eq!(binding["subjects"][0]["name"], "system:bootstrappers");
    }
    let objects = render(
        "seedlet-garden",
        &values_file("seedlet-garden", "full-values.yaml"),
    )
    .expect("renders");
    let token = find(&objects, "Secret", "bootstrap-token-abc123");
    assert_eq!(token["metadata"]["namespace"], "kube-system");
    assert_eq!(token["type"], "bootstrap.kubernetes.io/token");
    let bad = json!({"bootstrapTokens": [{"id": "ABC", "secret": "x"}]});
    let error = render("seedlet-garden", &bad).expect_err("invalid token id");
    assert!(error.contains("must be 6 characters"), "{error}");
}

#[test]
fn seedlet_render_prints_both_charts() {
    for (chart, values) in [
        ("seedlet-agent", "minimal-values.yaml"),
        ("seedlet-garden", "full-values.yaml"),
    ] {
        let output = std::process::Command::new(env!("CARGO_BIN_EXE_seedlet"))
            .arg("render")
            .arg("--chart")
            .arg(chart_dir(chart))
            .arg("--values")
            .arg(chart_dir(chart).join("ci").join(values))
            .args(["--namespace", NAMESPACE, "--release", chart])
            .output()
            .expect("run seedlet render");
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert!(
            output.status.success(),
            "{chart}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        assert!(stdout.contains(&format!("# Source: {chart}/templates/deployment.yaml")));
        let documents = seedlet_chartrender::parse_documents("stdout", &stdout).expect("yaml");
        assert!(documents.iter().any(|d| d["kind"] == "Deployment"));
    }
}

/// Applies `objects` with server-side apply (as `helm`), resolving each kind on the server.
pub(crate) async fn apply_all(client: &kube::Client, objects: &[Value]) {
    let params = PatchParams::apply("helm").force();
    for object in objects {
        let api_version = object["apiVersion"].as_str().expect("apiVersion");
        let kind = object["kind"].as_str().expect("kind");
        let (group, version) = api_version.split_once('/').unwrap_or(("", api_version));
        let gvk = GroupVersionKind::gvk(group, version, kind);
        let (resource, capabilities) = kube::discovery::pinned_kind(client, &gvk)
            .await
            .unwrap_or_else(|error| panic!("{kind} is served: {error}"));
        let name = object["metadata"]["name"].as_str().expect("name");
        let api: Api<DynamicObject> = match capabilities.scope {
            kube::discovery::Scope::Namespaced => {
                let namespace = object["metadata"]["namespace"]
                    .as_str()
                    .unwrap_or(NAMESPACE);
                Api::namespaced_with(client.clone(), namespace, &resource)
            }
            kube::discovery::Scope::Cluster => Api::all_with(client.clone(), &resource),
        };
        api.patch(name, &params, &Patch::Apply(object))
            .await
            .unwrap_or_else(|error| panic!("apply {kind} {name}: {error}"));
    }
}

async fn namespaces(client: &kube::Client, names: &[&str]) {
    let objects: Vec<Value> = names
        .iter()
        .map(|name| json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}))
        .collect();
    apply_all(client, &objects).await;
}

/// A client authenticated as the chart's ServiceAccount (a client certificate for its user name).
pub(crate) async fn service_account_client(sandbox: &Sandbox, name: &str) -> kube::Client {
    let user = format!("system:serviceaccount:{NAMESPACE}:{name}");
    let kubeconfig: Kubeconfig = sandbox
        .kubeconfig_for(&user, &["system:serviceaccounts"])
        .expect("kubeconfig");
    let config = kube::Config::from_custom_kubeconfig(kubeconfig, &KubeConfigOptions::default())
        .await
        .expect("client config");
    kube::Client::try_from(config).expect("client")
}

fn bootstrap_kubeconfig(garden: &Sandbox) -> String {
    let mut kubeconfig = garden.admin_kubeconfig();
    for cluster in &mut kubeconfig.clusters {
        if let Some(cluster) = cluster.cluster.as_mut() {
            cluster.server = Some(garden.endpoint());
        }
    }
    for user in &mut kubeconfig.auth_infos {
        user.auth_info = Some(kube::config::AuthInfo {
            token: Some("abc123.0123456789abcdef".to_owned().into()),
            ..kube::config::AuthInfo::default()
        });
    }
    serde_yaml::to_string(&kubeconfig).expect("kubeconfig yaml")
}

async fn wait_until<F, Fut>(what: &str, timeout: Duration, mut check: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let started = Instant::now();
    while !check().await {
        assert!(started.elapsed() < timeout, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn charts_apply_and_their_rbac_carries_bootstrap_approval_registration_and_heartbeat() {
    seedlet_testkit::init_test_logging();
    let garden = seedlet_testkit::start_sandbox("garden").await;
    let seed = Sandbox::builder().name("seed").start().await.expect("seed");
    seedlet_testkit::install_crds(&garden.client(), seedlet_api::crds::garden_crds()).await;
    seedlet_testkit::install_crds(&seed.client(), seedlet_api::crds::seed_crds()).await;
    // Operator prerequisites (Gardener's control plane chart provides them on a real garden).
    namespaces(&garden.client(), &[NAMESPACE, "gardener-system-seed-lease"]).await;
    namespaces(&seed.client(), &[NAMESPACE]).await;

    let garden_objects = render(
        "seedlet-garden",
        &values_file("seedlet-garden", "full-values.yaml"),
    )
    .expect("garden chart renders");
    apply_all(&garden.client(), &garden_objects).await;
    let agent_values = with(
        values_file("seedlet-agent", "full-values.yaml"),
        json!({"bootstrap": {"kubeconfig": bootstrap_kubeconfig(&garden)}}),
    );
    let agent_objects = render("seedlet-agent", &agent_values).expect("agent chart renders");
    apply_all(&seed.client(), &agent_objects).await;

    // The garden controller as its ServiceAccount, with the chart's configuration.
    let stop = CancellationToken::new();
    let seedlet_config::AnyConfig::GardenController(garden_config) =
        config_of(&garden_objects, "seedlet-garden-config")
    else {
        panic!("garden config kind");
    };
    let any: std::net::SocketAddr = "127.0.0.1:0".parse().expect("address");
    // The webhooks' certificate as the operator's Secret would mount it, on a free local port.
    let tls_dir = tempfile::tempdir().expect("dir");
    let (chain, key) = garden
        .issue_serving_certificate(
            "seedlet-garden-webhooks",
            &["127.0.0.1", "seedlet-garden-webhooks.garden.svc"],
        )
        .expect("serving certificate");
    std::fs::write(tls_dir.path().join("tls.crt"), chain).expect("tls.crt");
    std::fs::write(tls_dir.path().join("tls.key"), key).expect("tls.key");
    let mut garden_config = garden_config;
    let webhooks = garden_config.webhooks.as_mut().expect("webhooks on");
    webhooks.tls.server_cert_dir = tls_dir.path().display().to_string();
    webhooks.server.bind_address = "127.0.0.1".to_owned();
    webhooks.server.port = 0;
    webhooks.server.free_port = true;
    let running_garden = seedlet_garden::Garden::new(
        *garden_config,
        service_account_client(&garden, "seedlet-garden").await,
    )
    .expect("garden controller")
    .with_addresses(any, any)
    .start(stop.child_token())
    .await
    .expect("garden controller starts");
    // The chart's SeedRestriction registration reaches the in-process server as the Service's
    // endpoint would, trusting the certificate's CA (the operator's caBundle).
    let webhook = running_garden.webhook_address.expect("webhook server");
    let endpoints = json!({"apiVersion": "v1", "kind": "Endpoints",
        "metadata": {"name": "seedlet-garden-webhooks", "namespace": NAMESPACE},
        "subsets": [{"addresses": [{"ip": "127.0.0.1"}], "ports": [{"name": "https", "port": webhook.port()}]}]});
    let registration = json!({"apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingWebhookConfiguration",
        "metadata": {"name": "seedlet-garden-seed-restriction"},
        "webhooks": [{"name": "seed-restriction.gardener.cloud",
            "clientConfig": {"caBundle": base64::engine::general_purpose::STANDARD.encode(garden.ca_cert_pem())}}]});
    apply_all(&garden.client(), &[endpoints]).await;
    let mut configuration = find(
        &garden_objects,
        "ValidatingWebhookConfiguration",
        "seedlet-garden-seed-restriction",
    )
    .clone();
    configuration["webhooks"][0]["clientConfig"]["caBundle"] =
        registration["webhooks"][0]["clientConfig"]["caBundle"].clone();
    apply_all(&garden.client(), &[configuration]).await;

    // The agent as its ServiceAccount in the seed, with the chart's configuration.
    let seedlet_config::AnyConfig::Gardenlet(agent_config) =
        config_of(&agent_objects, "seedlet-agent-config")
    else {
        panic!("agent config kind");
    };
    let mut agent = seedlet_agent::Agent::new(*agent_config)
        .expect("agent")
        .with_seed_client(service_account_client(&seed, "seedlet-agent").await);
    agent.settings_mut().health_address = any;
    agent.settings_mut().metrics_address = any;
    let started = Instant::now();
    let running_agent = agent.start(stop.child_token()).await.expect("agent starts");

    let leases: Api<Lease> = Api::namespaced(garden.client(), "gardener-system-seed-lease");
    wait_until("the seed Lease", Duration::from_secs(40), || async {
        leases.get_opt(SEED_NAME).await.ok().flatten().is_some()
    })
    .await;
    println!(
        "bootstrap, approval, registration, first heartbeat: {:?}",
        started.elapsed()
    );
    let seeds: Api<Seed> = Api::all(garden.client());
    wait_until("GardenletReady=True", Duration::from_secs(20), || async {
        seeds
            .get_opt(SEED_NAME)
            .await
            .ok()
            .flatten()
            .is_some_and(|seed| {
                seed.status.is_some_and(|status| {
                    status
                        .conditions
                        .iter()
                        .any(|c| c.type_ == "GardenletReady" && c.status.to_string() == "True")
                })
            })
    })
    .await;
    // The bootstrap Secret the chart rendered was consumed; the certificate kubeconfig stored.
    let secrets: Api<k8s_openapi::api::core::v1::Secret> =
        Api::namespaced(seed.client(), NAMESPACE);
    assert!(
        secrets
            .get_opt("seedlet-garden-kubeconfig")
            .await
            .expect("read")
            .is_some()
    );
    assert!(
        secrets
            .get_opt("seedlet-bootstrap")
            .await
            .expect("read")
            .is_none()
    );
    assert!(running_agent.is_leader());

    // The chart's RBAC lets the seed authorizer build its graph: once its watches have listed
    // everything it stops answering 503 (kube-apiserver's failure policy then says why).
    seedlet_landscape::webhooks::call_authorizer(&garden, tls_dir.path(), webhook)
        .expect("authorizer configured");
    let stranger = service_account_client(&garden, "stranger").await;
    let refusal = || async {
        match Api::<k8s_openapi::api::core::v1::Secret>::namespaced(stranger.clone(), "kube-system")
            .get("x")
            .await
        {
            Err(kube::Error::Api(status)) => status.message,
            other => panic!("a stranger must be refused: {other:?}"),
        }
    };
    wait_until(
        "the authorizer's graph synced",
        Duration::from_secs(20),
        || async { !refusal().await.contains("503") },
    )
    .await;

    stop.cancel();
    running_agent.wait().await.expect("agent stops");
    running_garden
        .wait()
        .await
        .expect("garden controller stops");
    garden.shutdown().await;
    seed.shutdown().await;
}

#[test]
fn garden_chart_serves_the_seed_webhooks_with_a_generated_certificate() {
    let objects = render("seedlet-garden", &json!({})).expect("renders");
    let seedlet_config::AnyConfig::GardenController(config) =
        config_of(&objects, "seedlet-garden-config")
    else {
        panic!("garden configuration");
    };
    let webhooks = config.webhooks.expect("webhooks on by default");
    assert_eq!(webhooks.server.port, 2721);
    assert_eq!(webhooks.tls.server_cert_dir, "/etc/seedlet/webhook-tls");
    let secret = find(&objects, "Secret", "seedlet-garden-webhooks");
    assert_eq!(secret["type"], "kubernetes.io/tls");
    let decode = |value: &Value| {
        base64::engine::general_purpose::STANDARD
            .decode(value.as_str().expect("base64"))
            .expect("decodes")
    };
    let leaf = String::from_utf8(decode(&secret["data"]["tls.crt"])).expect("pem");
    let (_, pem) = x509_parser::pem::parse_x509_pem(leaf.as_bytes()).expect("certificate");
    let certificate = pem.parse_x509().expect("x509");
    let names: Vec<String> = certificate
        .subject_alternative_name()
        .expect("extension")
        .expect("SANs")
        .value
        .general_names
        .iter()
        .map(|name| name.to_string())
        .collect();
    assert!(
        names
            .iter()
            .any(|n| n.contains("seedlet-garden-webhooks.garden.svc")),
        "{names:?}"
    );
    let configuration = find(
        &objects,
        "ValidatingWebhookConfiguration",
        "seedlet-garden-seed-restriction",
    );
    let webhook = &configuration["webhooks"][0];
    assert_eq!(webhook["name"], "seed-restriction.gardener.cloud");
    assert_eq!(webhook["failurePolicy"], "Fail");
    assert_eq!(
        webhook["clientConfig"]["caBundle"], secret["data"]["ca.crt"],
        "the registration trusts the generated CA"
    );
    assert_eq!(
        webhook["clientConfig"]["service"]["path"],
        "/webhooks/admission/seedrestriction"
    );
    let service = find(&objects, "Service", "seedlet-garden-webhooks");
    assert_eq!(service["spec"]["ports"][0]["port"], 443);

    let off = render("seedlet-garden", &json!({"webhooks": {"enabled": false}})).expect("renders");
    assert!(
        !off.iter()
            .any(|o| o["kind"] == "ValidatingWebhookConfiguration")
    );
}

//! Charts shaped like real extension charts (`tests/fixtures/own`): many helpers, `tpl` over values, webhook
//! certificates, subcharts sharing define names, `import-values`, conditions and tags, `values.schema.json`, large
//! values; plus function errors and Helm's `<no value>` rule through the whole render path.

// Test code: a panic is the failure report.
#![allow(clippy::unwrap_used)]

mod common;

use std::path::{Path, PathBuf};

use seedlet_chartrender::{Chart, Limits, RenderOptions, Rendered, Renderer, parse_documents};
use sha2::Digest as _;

fn own(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/own")
        .join(name)
}

fn render(name: &str, values: serde_json::Value) -> Result<Rendered, String> {
    let chart = Chart::from_dir(&own(name), &Limits::default()).unwrap();
    let options = RenderOptions {
        release_name: "provider-like".into(),
        namespace: "extension-provider-like-x1".into(),
        values,
        ..RenderOptions::default()
    };
    Renderer::new()
        .render(&chart, &options)
        .map_err(|e| e.to_string())
}

fn objects(rendered: &Rendered) -> Vec<serde_json::Value> {
    rendered
        .manifests()
        .unwrap()
        .into_iter()
        .map(|m| m.object)
        .collect()
}

fn find<'a>(objects: &'a [serde_json::Value], kind: &str) -> &'a serde_json::Value {
    objects
        .iter()
        .find(|o| o["kind"] == kind)
        .unwrap_or_else(|| panic!("no {kind}"))
}

#[test]
fn provider_like_chart_renders_helpers_tpl_imports_and_shared_define_names_like_helm() {
    let rendered = render("provider-like", serde_json::json!({})).unwrap();
    let objects = objects(&rendered);
    let kinds: Vec<&str> = objects
        .iter()
        .map(|o| o["kind"].as_str().unwrap())
        .collect();
    assert_eq!(
        kinds,
        [
            "ServiceAccount",
            "Secret",
            "ConfigMap",
            "ClusterRole",
            "ClusterRoleBinding",
            "Deployment",
            "ValidatingWebhookConfiguration"
        ],
        "the metrics subchart is off by its tag"
    );

    // The release name contains the chart name, so `fullname` is the release name.
    let deployment = find(&objects, "Deployment");
    assert_eq!(deployment["metadata"]["name"], "provider-like");
    let container = &deployment["spec"]["template"]["spec"]["containers"][0];
    assert_eq!(
        container["image"],
        "europe-docker.pkg.dev/gardener-project/releases/gardener/extensions/provider-like:v1.93.0"
    );
    let args: Vec<&str> = container["args"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect();
    // import-values: the string entry `webhook` comes before a `{child, parent}` entry, which replaces the
    // imports gathered so far in Helm v3.11 (checked against its engine): the exports never arrive.
    assert!(
        args.contains(&"--webhook-port=") && args.contains(&"--webhook-failure-policy="),
        "{args:?}"
    );
    assert!(
        args.contains(&"--worker-max-concurrent-reconciles=10"),
        "{args:?}"
    );
    assert!(
        args.contains(&"--healthcheck-ignore-operation-annotation=true"),
        "{args:?}"
    );
    assert!(
        !args.iter().any(|a| a.starts_with("--gardener-version")),
        "{args:?}"
    );
    // `{child, parent}` import: the subchart's defaults.tolerations at imported.tolerations.
    assert_eq!(
        deployment["spec"]["template"]["spec"]["tolerations"][0]["key"],
        "node-role.kubernetes.io/control-plane"
    );
    // tpl over values, in annotations and env.
    let annotations = &deployment["spec"]["template"]["metadata"]["annotations"];
    assert_eq!(annotations["release/owner"], "provider-like");
    let env = container["env"].as_array().unwrap();
    assert!(
        env.iter()
            .any(|e| e["name"] == "SEED_NAMESPACE" && e["value"] == "extension-provider-like-x1"),
        "{env:?}"
    );

    // The checksum annotation is the SHA-256 of the very text the ConfigMap carries.
    let config_map = find(&objects, "ConfigMap");
    let config = config_map["data"]["config.yaml"].as_str().unwrap();
    assert!(
        config.contains("className: gardener.cloud-provider-like-fast"),
        "{config}"
    );
    let digest = hex::encode(sha2::Sha256::digest(config.trim_end_matches('\n')));
    assert_eq!(annotations["checksum/configmap"], digest);
    // Large values: every machine image made it.
    let images = config_map["data"]
        .as_object()
        .unwrap()
        .keys()
        .filter(|k| k.starts_with("image-"))
        .count();
    assert_eq!(images, 160);
    assert!(
        config_map["data"]["policy.json"]
            .as_str()
            .unwrap()
            .contains("ec2:*")
    );

    // Subcharts sharing a define name: Helm parses the parent last, so its "name" wins inside the subchart too
    // (evaluated with the subchart's .Chart.Name).
    let webhook = find(&objects, "ValidatingWebhookConfiguration");
    assert_eq!(webhook["metadata"]["labels"]["shared-name"], "admission");
    assert_eq!(webhook["metadata"]["name"], "admission-provider-like");
    assert_eq!(
        webhook["webhooks"][0]["failurePolicy"], "Fail",
        "globals reach the subchart"
    );
}

#[test]
fn provider_like_webhook_certificate_is_signed_by_its_ca() {
    let rendered = render("provider-like", serde_json::json!({})).unwrap();
    let objects = objects(&rendered);
    let secret = find(&objects, "Secret");
    let decode = |key: &str| {
        use base64::Engine as _;
        base64::engine::general_purpose::STANDARD
            .decode(secret["data"][key].as_str().unwrap())
            .unwrap()
    };
    let (ca_pem, leaf_pem, key_pem) = (decode("ca.crt"), decode("tls.crt"), decode("tls.key"));
    assert!(String::from_utf8_lossy(&key_pem).starts_with("-----BEGIN RSA PRIVATE KEY-----\n"));
    let (_, ca_pem) = x509_parser::pem::parse_x509_pem(&ca_pem).unwrap();
    let ca = ca_pem.parse_x509().unwrap();
    let (_, leaf_pem) = x509_parser::pem::parse_x509_pem(&leaf_pem).unwrap();
    let leaf = leaf_pem.parse_x509().unwrap();
    assert!(ca.is_ca());
    assert!(!leaf.is_ca());
    leaf.verify_signature(Some(ca.public_key()))
        .expect("the CA signed the leaf");
    assert!(ca.verify_signature(None).is_ok(), "the CA is self-signed");
    assert_eq!(leaf.issuer(), ca.subject());
    let names = format!(
        "{:?}",
        leaf.subject_alternative_name().unwrap().unwrap().value
    );
    assert!(
        names.contains("DNSName(\"provider-like.extension-provider-like-x1.svc\")")
            && names.contains("IPAddress([127, 0, 0, 1])"),
        "{names}"
    );
    let days =
        (leaf.validity().not_after.timestamp() - leaf.validity().not_before.timestamp()) / 86400;
    assert_eq!(days, 365);
}

#[test]
fn provider_like_conditions_and_tags_switch_subcharts() {
    // A disabled dependency imports nothing (Helm removes it first), so `imported.tolerations` is missing and the
    // deployment's field access fails, as in Helm's engine; supplying it renders.
    let err = render(
        "provider-like",
        serde_json::json!({"admission": {"enabled": false}}),
    )
    .unwrap_err();
    assert!(err.contains("templates/deployment.yaml:52"), "{err}");
    let rendered = render(
        "provider-like",
        serde_json::json!({"admission": {"enabled": false}, "tags": {"monitoring": true}, "webhookPort": 9443, "imported": {"tolerations": {"items": []}}}),
    )
    .unwrap();
    let objects = objects(&rendered);
    assert!(
        objects
            .iter()
            .all(|o| o["kind"] != "ValidatingWebhookConfiguration")
    );
    assert_eq!(
        find(&objects, "ServiceMonitor")["spec"]["endpoints"][0]["interval"],
        "30s"
    );
    let args = find(&objects, "Deployment")["spec"]["template"]["spec"]["containers"][0]["args"]
        .to_string();
    assert!(
        args.contains("--webhook-port=9443"),
        "supplied values win over imports: {args}"
    );
}

#[test]
fn provider_like_values_are_checked_against_the_schema_with_helms_message() {
    let err = render("provider-like", serde_json::json!({"replicaCount": "two"})).unwrap_err();
    assert_eq!(
        err,
        "values don't meet the specifications of the schema(s) in the following chart(s):\n\
         gardener-extension-provider-like:\n\
         - replicaCount: Invalid type. Expected: integer, given: string\n"
    );
    let err = render(
        "provider-like",
        serde_json::json!({"replicaCount": 11, "image": {"pullPolicy": "Sometimes"}, "controllers": {"worker": {"concurrentSyncs": 0}}}),
    )
    .unwrap_err();
    assert!(err.contains("- image.pullPolicy: image.pullPolicy must be one of the following: \"Always\", \"IfNotPresent\", \"Never\"\n"), "{err}");
    assert!(
        err.contains("- replicaCount: Must be less than or equal to 10\n"),
        "{err}"
    );
    assert!(
        err.contains("- controllers.worker.concurrentSyncs: Must be greater than or equal to 1\n"),
        "{err}"
    );
    let err = render("provider-like", serde_json::json!({"image": null})).unwrap_err();
    assert!(err.contains("- (root): image is required\n"), "{err}");
}

#[test]
fn dns_like_chart_renders_tpl_over_every_provider() {
    let first = render("dns-like", serde_json::json!({"owner": "team-x"})).unwrap();
    let again = render("dns-like", serde_json::json!({"owner": "team-x"})).unwrap();
    assert_eq!(first, again, "rendering is deterministic");
    let objects = objects(&first);
    let providers: Vec<&serde_json::Value> = objects
        .iter()
        .filter(|o| o["kind"] == "DNSProvider")
        .collect();
    assert_eq!(providers.len(), 60);
    let p07 = providers
        .iter()
        .find(|p| p["metadata"]["name"] == "p07")
        .unwrap();
    assert_eq!(p07["spec"]["secret"], "provider-like-azure-dns-7");
    assert_eq!(p07["spec"]["domains"][1], "zone7.example.gardener.cloud");
    assert_eq!(p07["metadata"]["annotations"]["owner"], "TEAM-X");
    assert_eq!(p07["spec"]["rateLimit"]["requestsPerDay"], 8 * 86400);
    let deployment = find(&objects, "Deployment");
    let args = deployment["spec"]["template"]["spec"]["containers"][0]["args"].clone();
    assert_eq!(args[0], "--dns-class=garden");
    assert_eq!(args[1], "--lease-name=provider-like-lease");
    assert_eq!(
        args[3].as_str().unwrap().len(),
        "--providers=".len() + 40,
        "trunc 40 of the joined names"
    );
}

#[test]
fn no_value_stays_in_include_results_and_leaves_file_output() {
    let chart = common::chart(
        &[
            (
                "_h.tpl",
                "{{- define \"cfg\" }}port={{ .Values.port }}{{ end }}",
            ),
            (
                "t.yaml",
                "sum: {{ include \"cfg\" . | sha256sum }}\nlen: {{ include \"cfg\" . | len }}\ntext: {{ include \"cfg\" . }}\ntpl: x{{ tpl \"{{ .Values.port }}|{{ include \\\"cfg\\\" . | len }}\" . }}",
            ),
        ],
        "",
    );
    let out = common::render(&chart, serde_json::json!({})).unwrap();
    let text = &out.templates["test/templates/t.yaml"];
    let expected_sum = hex::encode(sha2::Sha256::digest("port=<no value>"));
    assert_eq!(
        text,
        &format!("sum: {expected_sum}\nlen: 15\ntext: port=\ntpl: x|15")
    );
    let documents = parse_documents("t", text).unwrap();
    assert_eq!(documents[0]["len"], 15);
}

/// Helm v3.11.3's texts for the same templates.
#[test]
fn function_errors_name_template_line_and_go_message() {
    for (template, expected) in [
        (
            "a: 1\nb: {{ dateModify \"1h\" \"now\" }}",
            "template: test/templates/t.yaml:2:22: executing \"test/templates/t.yaml\" at <\"now\">: can't handle \"now\" for arg of type time.Time",
        ),
        (
            "{{ randInt 5 5 }}",
            "template: test/templates/t.yaml:1:3: executing \"test/templates/t.yaml\" at <randInt 5 5>: error calling randInt: invalid argument to Intn",
        ),
        (
            "\n\n{{ urlParse \"http://a/%zz\" }}",
            "template: test/templates/t.yaml:3:3: executing \"test/templates/t.yaml\" at <urlParse \"http://a/%zz\">: error calling urlParse: unable to parse url: parse \"http://a/%zz\": invalid URL escape \"%zz\"",
        ),
        (
            "{{ mustToDate \"2006-01-02\" \"2019-13-01\" }}",
            "template: test/templates/t.yaml:1:3: executing \"test/templates/t.yaml\" at <mustToDate \"2006-01-02\" \"2019-13-01\">: error calling mustToDate: parsing time \"2019-13-01\": month out of range",
        ),
    ] {
        let err = common::render_one(template, "").unwrap_err();
        assert_eq!(err, expected);
    }
}

#[test]
fn dates_and_random_values_have_helms_shapes() {
    let out = common::render_one(
        "{{ $t := toDate \"2006-01-02T15:04:05Z07:00\" \"2024-02-29T12:30:00+02:00\" }}{{ $t }}|{{ $t | toJson }}|{{ dateInZone \"Mon, 02 Jan 2006 15:04:05 -0700\" $t \"UTC\" }}|{{ typeOf $t }}|{{ now | typeOf }}|{{ randAlphaNum 12 | len }}|{{ durationRound \"3601s\" }}|{{ duration 3600 }}|{{ duration (int64 3600) }}",
        "",
    )
    .unwrap();
    assert_eq!(
        out,
        "2024-02-29 12:30:00 +0200 +0200|\"2024-02-29T12:30:00+02:00\"|Thu, 29 Feb 2024 10:30:00 +0000|time.Time|time.Time|12|1h|0s|1h0m0s"
    );
}

/// A cluster with one Secret, for `lookup`.
#[derive(Debug)]
struct OneSecret;

impl seedlet_chartrender::Lookup for OneSecret {
    fn lookup(
        &self,
        api_version: &str,
        kind: &str,
        namespace: &str,
        name: &str,
    ) -> Result<Option<serde_json::Value>, String> {
        match (api_version, kind, namespace, name) {
            ("v1", "Secret", "garden", "seed") => {
                Ok(Some(serde_json::json!({"data": {"token": "dG9r"}})))
            }
            ("v1", "Secret", "garden", "") => Ok(Some(
                serde_json::json!({"items": [{"metadata": {"name": "seed"}}]}),
            )),
            ("v1", "Forbidden", _, _) => Err("secrets is forbidden".into()),
            _ => Ok(None),
        }
    }
}

#[test]
fn lookup_reads_the_cluster_when_one_is_given_and_is_empty_offline() {
    let chart = common::chart(
        &[
            (
                "_h.tpl",
                "{{ define \"tok\" }}{{ (lookup \"v1\" \"Secret\" \"garden\" \"seed\").data.token }}{{ end }}",
            ),
            (
                "t.yaml",
                "{{ include \"tok\" . }}|{{ (lookup \"v1\" \"Secret\" \"garden\" \"\").items | len }}|{{ lookup \"v1\" \"Secret\" \"garden\" \"other\" | len }}|{{ tpl \"{{ include \\\"tok\\\" . }}\" . }}",
            ),
        ],
        "",
    );
    let options = RenderOptions {
        lookup: Some(std::sync::Arc::new(OneSecret)),
        ..RenderOptions::default()
    };
    let out = Renderer::new().render(&chart, &options).unwrap();
    assert_eq!(out.templates["test/templates/t.yaml"], "dG9r|1|0|dG9r");
    let offline = common::render_one(
        "{{ lookup \"v1\" \"Secret\" \"garden\" \"seed\" | len }}",
        "",
    )
    .unwrap();
    assert_eq!(offline, "0");
    let err = Renderer::new()
        .render(
            &common::chart(
                &[("t.yaml", "{{ lookup \"v1\" \"Forbidden\" \"\" \"\" }}")],
                "",
            ),
            &options,
        )
        .unwrap_err()
        .to_string();
    assert!(
        err.ends_with("error calling lookup: secrets is forbidden"),
        "{err}"
    );
}

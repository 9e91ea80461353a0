//! Fuzzing the sandbox's HTTP endpoints for a bounded time in every test run: generated
//! requests ([`inputs`]) go through real HTTPS to a sandbox with a state directory, in a child
//! process so its peak RSS (`VmHWM`) is the sandbox's and the client's alone. Properties:
//! every request answers within [`BOUND`] with a status in [`SANE_STATUSES`] (a 500 only for
//! etcd's size limit), every JSON error is a well-formed `Status`, `/readyz` answers after every
//! case, the state directory loads again after the run with every object still readable, and
//! peak RSS stays under [`MAX_PEAK_RSS_MIB`]. `SEEDLET_SANDBOX_FUZZ_CASES` sets the number of
//! cases (default [`DEFAULT_CASES`], about 6 s in a debug build). A failing case proptest finds
//! is saved as a seed in `mod.regressions` beside this file and replayed first in later runs;
//! the bugs found so far are explicit tests in [`regressions`].

mod inputs;
mod regressions;

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use bytes::Bytes;
use http::{Method, StatusCode};
use proptest::test_runner::{Config, FileFailurePersistence, RngSeed, TestCaseError, TestRunner};
use seedlet_sandbox::Sandbox;
use serde_json::{Value, json};

use super::memory::in_child;
use inputs::{CRD_GROUP, FuzzRequest};

/// Longest a request may take to answer (a debug build on a busy two-core machine).
const BOUND: Duration = Duration::from_secs(10);
/// How long a watch's stream is read before the client hangs up.
const WATCH_READ: Duration = Duration::from_secs(3);
/// Peak resident set of the child process (sandbox, client and test) allowed after the run.
/// Bodies go up to 3 MiB and are held a few times over while they are decoded and checked.
const MAX_PEAK_RSS_MIB: u64 = 256;
/// Cases in a default run.
const DEFAULT_CASES: u32 = 1000;

/// Statuses kube-apiserver answers to well-formed and malformed requests alike.
const SANE_STATUSES: &[u16] = &[
    200, 201, 202, 400, 403, 404, 405, 406, 409, 410, 413, 415, 422, 500,
];

const CASES_VAR: &str = "SEEDLET_SANDBOX_FUZZ_CASES";

fn cases() -> u32 {
    std::env::var(CASES_VAR)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(DEFAULT_CASES)
}

const SEED_VAR: &str = "SEEDLET_SANDBOX_FUZZ_SEED";

/// The generator's seed: fixed unless `SEEDLET_SANDBOX_FUZZ_SEED` names one (`random` for a
/// fresh one each run), so that CI judges the same requests every time. A random run once left
/// an object without `metadata.name` in the store (a patch removing the name); the regression
/// test `writes_keep_the_name_and_namespace_of_the_url` keeps that fixed.
fn rng_seed() -> RngSeed {
    match std::env::var(SEED_VAR).ok().as_deref() {
        Some("random") => RngSeed::Random,
        Some(seed) => RngSeed::Fixed(seed.parse().unwrap_or(DEFAULT_SEED)),
        None => RngSeed::Fixed(DEFAULT_SEED),
    }
}

const DEFAULT_SEED: u64 = 20_261_128;

/// Peak resident set of this process in MiB (`VmHWM`).
fn peak_rss_mib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").expect("procfs");
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .expect("VmHWM line")
        / 1024
}

/// An answer: status, content type, body (cut short for a watch still streaming).
struct Answer {
    status: StatusCode,
    content_type: String,
    body: Bytes,
}

/// Sends `request` as admin; `Err` when it fails to answer, answers late, or the connection breaks.
async fn exchange(client: &kube::Client, request: &FuzzRequest) -> Result<Answer, String> {
    let method = Method::from_bytes(request.method.as_bytes()).map_err(|e| e.to_string())?;
    let mut builder = http::Request::builder().method(method).uri(&request.uri);
    if let Some(content_type) = &request.content_type {
        builder = builder.header(http::header::CONTENT_TYPE, content_type);
    }
    if let Some(accept) = &request.accept {
        builder = builder.header(http::header::ACCEPT, accept);
    }
    let http_request = builder
        .body(request.body.clone().unwrap_or_default())
        .map_err(|e| format!("request does not build: {e}"))?;
    let response = tokio::time::timeout(
        BOUND,
        client.send(http_request.map(kube::client::Body::from)),
    )
    .await
    .map_err(|_| format!("no answer within {BOUND:?}"))?
    .map_err(|e| format!("request failed: {e}"))?;
    let status = response.status();
    let content_type = response
        .headers()
        .get(http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned();
    let streaming = request.may_watch() && status == StatusCode::OK;
    let read = http_body_util::BodyExt::collect(response.into_body());
    let body = match tokio::time::timeout(if streaming { WATCH_READ } else { BOUND }, read).await {
        Ok(Ok(collected)) => collected.to_bytes(),
        Ok(Err(e)) => return Err(format!("body broke off: {e}")),
        Err(_) if streaming => Bytes::new(),
        Err(_) => return Err(format!("body not complete within {BOUND:?}")),
    };
    Ok(Answer {
        status,
        content_type,
        body,
    })
}

/// Checks one answer against the properties; `Err` names what is wrong.
fn check_answer(request: &FuzzRequest, answer: &Answer) -> Result<(), String> {
    let code = answer.status.as_u16();
    let text = || String::from_utf8_lossy(&answer.body[..answer.body.len().min(500)]).into_owned();
    if !SANE_STATUSES.contains(&code) {
        return Err(format!("status {code}: {}", text()));
    }
    if code < 400 || request.method == "HEAD" {
        return Ok(());
    }
    if answer
        .content_type
        .starts_with("application/vnd.kubernetes.protobuf")
    {
        return match answer.body.starts_with(b"k8s\x00") {
            true => Ok(()),
            false => Err(format!("protobuf error {code} without the envelope")),
        };
    }
    // Paths no route serves: kube-apiserver's mux answers in plain text.
    if code == 404
        && answer.content_type.starts_with("text/plain")
        && answer.body == "404 page not found\n"
    {
        return Ok(());
    }
    let status: Value = serde_json::from_slice(&answer.body).map_err(|_| {
        format!(
            "error {code} ({}) is not JSON: {}",
            answer.content_type,
            text()
        )
    })?;
    let well_formed = status["kind"] == "Status"
        && status["apiVersion"] == "v1"
        && status["status"] == "Failure"
        && status["code"] == code
        && status["message"].is_string();
    if !well_formed {
        return Err(format!("error {code} is not a Status: {}", text()));
    }
    if code == 500 && status["message"] != "etcdserver: request is too large" {
        return Err(format!("internal error: {}", text()));
    }
    Ok(())
}

/// `/readyz` answers `ok` within [`BOUND`].
async fn assert_ready(client: &kube::Client) -> Result<(), String> {
    let readyz = FuzzRequest {
        method: "GET".to_owned(),
        uri: "/readyz".to_owned(),
        content_type: None,
        accept: None,
        body: None,
    };
    let answer = exchange(client, &readyz).await?;
    match (answer.status, &answer.body[..]) {
        (StatusCode::OK, b"ok") => Ok(()),
        (status, body) => Err(format!(
            "readyz answered {status}: {}",
            String::from_utf8_lossy(body)
        )),
    }
}

async fn json_request(
    client: &kube::Client,
    method: &str,
    uri: &str,
    body: Option<Value>,
) -> Answer {
    let request = FuzzRequest {
        method: method.to_owned(),
        uri: uri.to_owned(),
        content_type: body.as_ref().map(|_| "application/json".to_owned()),
        accept: None,
        body: body.map(|b| serde_json::to_vec(&b).expect("json")),
    };
    exchange(client, &request)
        .await
        .expect("setup request answers")
}

/// A namespace, a custom resource definition with status and scale, and a few objects.
async fn seed(client: &kube::Client) {
    let crd = json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": format!("widgets.{CRD_GROUP}")},
        "spec": {"group": CRD_GROUP, "scope": "Namespaced",
            "names": {"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList"},
            "versions": [{"name": "v1", "served": true, "storage": true,
                "subresources": {"status": {}, "scale": {"specReplicasPath": ".spec.replicas", "statusReplicasPath": ".status.replicas"}},
                "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                    "spec": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
                    "status": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}}}]}
    });
    let created = [
        ("/api/v1/namespaces", json!({"metadata": {"name": "fuzz"}})),
        (
            "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
            crd,
        ),
        (
            "/api/v1/namespaces/default/configmaps",
            json!({"metadata": {"name": "a", "labels": {"app": "web"}}, "data": {"k": "v"}}),
        ),
        (
            "/api/v1/namespaces/fuzz/secrets",
            json!({"metadata": {"name": "a"}, "stringData": {"k": "v"}}),
        ),
        (
            "/apis/coordination.k8s.io/v1/namespaces/default/leases",
            json!({"metadata": {"name": "a"}, "spec": {"holderIdentity": "h"}}),
        ),
    ];
    for (path, body) in created {
        let answer = json_request(client, "POST", path, Some(body)).await;
        assert_eq!(
            answer.status,
            StatusCode::CREATED,
            "{path}: {:?}",
            answer.body
        );
    }
    let deadline = Instant::now() + BOUND;
    let widgets = format!("/apis/{CRD_GROUP}/v1/namespaces/default/widgets");
    loop {
        let answer = json_request(
            client,
            "POST",
            &widgets,
            Some(json!({
            "apiVersion": format!("{CRD_GROUP}/v1"), "kind": "Widget",
            "metadata": {"name": "a"}, "spec": {"replicas": 1}})),
        )
        .await;
        if answer.status == StatusCode::CREATED {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "widgets not served: {:?}",
            answer.body
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Every stored object as its path: lists each listable resource of discovery and GETs every
/// item on its own (both must answer 200).
async fn every_object(client: &kube::Client) -> BTreeSet<String> {
    let mut prefixes = vec!["/api/v1".to_owned()];
    let groups = json_request(client, "GET", "/apis", None).await;
    let groups: Value = serde_json::from_slice(&groups.body).expect("group list");
    for group in groups["groups"].as_array().expect("groups") {
        for version in group["versions"].as_array().expect("versions") {
            prefixes.push(format!(
                "/apis/{}",
                version["groupVersion"].as_str().expect("gv")
            ));
        }
    }
    let mut objects = BTreeSet::new();
    for prefix in prefixes {
        let discovery = json_request(client, "GET", &prefix, None).await;
        assert_eq!(discovery.status, StatusCode::OK, "{prefix}");
        let discovery: Value = serde_json::from_slice(&discovery.body).expect("resource list");
        for resource in discovery["resources"].as_array().expect("resources") {
            let name = resource["name"].as_str().expect("name");
            let listable = resource["verbs"]
                .as_array()
                .is_some_and(|verbs| verbs.iter().any(|v| v == "list"));
            if name.contains('/') || !listable {
                continue;
            }
            let list = json_request(client, "GET", &format!("{prefix}/{name}"), None).await;
            assert_eq!(list.status, StatusCode::OK, "list {prefix}/{name}");
            let list: Value = serde_json::from_slice(&list.body).expect("list");
            for item in list["items"].as_array().expect("items") {
                let namespace = item["metadata"]["namespace"].as_str();
                let item_name = item["metadata"]["name"].as_str().expect("item name");
                let path = match namespace {
                    Some(ns) => format!(
                        "{prefix}/namespaces/{ns}/{name}/{}",
                        inputs::encode(item_name)
                    ),
                    None => format!("{prefix}/{name}/{}", inputs::encode(item_name)),
                };
                let got = json_request(client, "GET", &path, None).await;
                assert_eq!(got.status, StatusCode::OK, "GET {path}");
                objects.insert(path);
            }
        }
    }
    objects
}

async fn start(dir: &std::path::Path) -> Sandbox {
    Sandbox::builder()
        .name("fuzz")
        .dir(dir)
        .start()
        .await
        .expect("sandbox starts")
}

#[test]
fn generated_requests_keep_the_server_answering() {
    if !in_child("server_behaviour::fuzz::generated_requests_keep_the_server_answering") {
        return;
    }
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    let dir = tempfile::tempdir().expect("temp dir");
    let sb = runtime.block_on(start(dir.path()));
    let client = sb.client();
    runtime.block_on(seed(&client));

    let config = Config {
        cases: cases(),
        rng_seed: rng_seed(),
        failure_persistence: Some(Box::new(FileFailurePersistence::WithSource("regressions"))),
        source_file: Some(file!()),
        ..Config::default()
    };
    let started = Instant::now();
    let mut runner = TestRunner::new(config);
    let outcome = runner.run(&inputs::request(), |request| {
        runtime.block_on(async {
            let answer = exchange(&client, &request)
                .await
                .map_err(TestCaseError::fail)?;
            check_answer(&request, &answer).map_err(TestCaseError::fail)?;
            assert_ready(&client)
                .await
                .map_err(|e| TestCaseError::fail(format!("after the request: {e}")))
        })
    });
    let took = started.elapsed();
    if let Err(failure) = outcome {
        panic!("{failure}");
    }

    let stored = runtime.block_on(every_object(&client));
    runtime.block_on(sb.shutdown());
    let sb = runtime.block_on(start(dir.path()));
    let client = sb.client();
    let loaded = runtime.block_on(every_object(&client));
    let lost: Vec<_> = stored.difference(&loaded).collect();
    assert!(lost.is_empty(), "lost on restart: {lost:?}");
    runtime.block_on(sb.shutdown());
    let peak = peak_rss_mib();
    println!(
        "sandbox fuzz: {} cases in {took:.1?}, {} objects stored and reloaded, peak RSS {peak} MiB",
        cases(),
        stored.len()
    );
    assert!(peak < MAX_PEAK_RSS_MIB, "peak RSS {peak} MiB");
}

//! Fault suite: the whole system (garden controller + agent against garden and seed sandboxes)
//! under faults — garden outage, seed restart, the agent process killed at random points, the CSR
//! approver stopped during a rotation, malformed chart archives, watch streams cut over and over,
//! and 500/429 errors for a fraction of requests. Each test asserts convergence with nothing lost
//! and no agent (or controller) restart, and prints how long recovery took.
//!
//! Randomness is seeded and printed; rerun a failure with `FAULTS_SEED=<seed>`.

#[path = "faults/api_errors.rs"]
mod api_errors;
#[path = "faults/charts.rs"]
mod charts;
use seedlet_testkit as common;
#[path = "faults/env.rs"]
mod env;
#[path = "faults/identity.rs"]
mod identity;
#[path = "faults/process.rs"]
mod process;

use std::time::{Duration, Instant};

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::Api;
use kube::api::{DeleteParams, PostParams};
use seedlet_api::extensions::Extension;
use serde_json::json;
use tokio_util::sync::CancellationToken;

use api_errors::Sent;
use env::{
    AGENT_USER, Env, Rng, agent_config, ci_has, converge, greeting, install,
    managed_resource_healthy, renew_time, set_deployment, short_timer_config, start_agent,
    start_garden, wait_heartbeat_after,
};

const HEALTHY: &[(&str, &str)] = &[("Installed", "True"), ("Healthy", "True")];

/// Starts garden controller and an agent (fixed garden client as [`AGENT_USER`]) and installs
/// registration `ext` with installation `ext-a`, waiting until it is installed and healthy.
async fn installed_system(
    env: &Env,
    shutdown: &CancellationToken,
) -> (seedlet_garden::RunningGarden, env::Watched) {
    env.create_seed().await;
    let garden_controller = start_garden(env.garden.client(), shutdown.child_token()).await;
    let agent = start_agent(
        short_timer_config(),
        env.seed.user_client(AGENT_USER).await,
        Some(env.garden.user_client(AGENT_USER).await),
        shutdown.child_token(),
    )
    .await;
    let (garden, seed) = (env.garden.client(), env.seed.client());
    install(&garden, "ext", "v1", &["ext-a"]).await;
    converge("ext-a installed", Instant::now(), || async {
        greeting(&seed, "ext-a", "ext").await.as_deref() == Some("v1")
            && ci_has(&garden, "ext-a", HEALTHY).await
    })
    .await;
    (garden_controller, agent)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn garden_outage_with_pending_work_is_caught_up_without_agent_restart() {
    let _serial = env::one_at_a_time().await;
    let mut env = Env::start().await;
    let shutdown = CancellationToken::new();
    let (garden_controller, agent) = installed_system(&env, &shutdown).await;
    let garden = env.garden.client();

    // Work the agent may or may not have seen before the garden goes away.
    set_deployment(
        &garden,
        "ext",
        env::CHART,
        json!({"greeting": "after-outage"}),
    )
    .await;
    install(&garden, "ext-late", "late", &["ext-late-a"]).await;
    let failures_before = agent.agent.metrics.encode(jiff::Timestamp::now());
    env.garden.stop().await;
    let outage = Duration::from_secs(4);
    tokio::time::sleep(outage).await;
    agent.assert_never_restarted("during the garden outage");
    let failures_during = agent.agent.metrics.encode(jiff::Timestamp::now());
    assert_ne!(
        lease_failures(&failures_before),
        lease_failures(&failures_during),
        "the heartbeat noticed the outage"
    );
    env.garden.restart().await;
    let restarted_at = (Instant::now(), jiff::Timestamp::now());

    let (garden, seed) = (env.garden.client(), env.seed.client());
    // Every watch backs off 200 ms doubling to 5 s (agent/src/watch_backoff.rs): a watch is back
    // at most ~4 s after the restart, and the `410 Gone` of its first re-watch costs one more
    // delay of up to 5 s before the relist; reconcile retries add a few seconds. Measured 0.6–8 s
    // alone and in the full suite; kube-runtime's defaults (30 s cap plus a controller-wide
    // trigger backoff) took up to 80 s. 30 s leaves room for a loaded CI machine.
    let took = env::converge_within(
        "caught up after garden outage",
        restarted_at.0,
        Duration::from_secs(30),
        || async {
            greeting(&seed, "ext-a", "ext").await.as_deref() == Some("after-outage")
                && greeting(&seed, "ext-late-a", "ext-late").await.as_deref() == Some("late")
                && ci_has(&garden, "ext-a", HEALTHY).await
                && ci_has(&garden, "ext-late-a", HEALTHY).await
                && renew_time(&garden)
                    .await
                    .is_some_and(|t| t > restarted_at.1)
        },
    )
    .await;
    wait_heartbeat_after(&garden, restarted_at.1, "GardenletReady after outage").await;
    println!(
        "fault garden-outage: garden down {outage:?}; caught up (ManagedResources written, CI conditions, Lease renewed) {took:?} after restart"
    );
    agent.assert_never_restarted("after the garden outage");
    agent.stop(&shutdown).await;
    garden_controller
        .wait()
        .await
        .expect("garden controller stops");
}

fn certificate_expiry_metric(metrics: &str) -> Option<f64> {
    metrics
        .lines()
        .find_map(|l| {
            l.strip_prefix("seedlet_garden_client_certificate_expiry_seconds{cluster=\"garden\"} ")
        })
        .and_then(|v| v.trim().parse().ok())
}

fn lease_failures(metrics: &str) -> String {
    metrics
        .lines()
        .find(|l| l.starts_with("seedlet_lease_renewal_failures_total"))
        .unwrap_or_default()
        .to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn seed_restart_is_survived_and_the_applier_reapplies() {
    let _serial = env::one_at_a_time().await;
    let mut env = Env::start().await;
    let shutdown = CancellationToken::new();
    let (garden_controller, agent) = installed_system(&env, &shutdown).await;
    let garden = env.garden.client();

    env.seed.stop().await;
    // Changed while the seed is away: the new ManagedResource can only be written after restart.
    set_deployment(&garden, "ext", env::CHART, json!({"greeting": "v2"})).await;
    let outage = Duration::from_secs(3);
    tokio::time::sleep(outage).await;
    agent.assert_never_restarted("during the seed outage");
    env.seed.restart().await;
    let restarted_at = (Instant::now(), jiff::Timestamp::now());
    let seed = env.seed.client();
    // Drift while the agent reconnects: an applied object deleted behind its back.
    Api::<Deployment>::namespaced(seed.clone(), "extension-ext-a")
        .delete("ext", &DeleteParams::default())
        .await
        .expect("applied deployment deleted");

    let took = converge(
        "applier recovered after seed restart",
        restarted_at.0,
        || async {
            greeting(&seed, "ext-a", "ext").await.as_deref() == Some("v2")
                && Api::<Deployment>::namespaced(seed.clone(), "extension-ext-a")
                    .get_opt("ext")
                    .await
                    .is_ok_and(|d| d.is_some())
                && managed_resource_healthy(&seed, "ext-a").await
                && ci_has(&garden, "ext-a", HEALTHY).await
        },
    )
    .await;
    wait_heartbeat_after(&garden, restarted_at.1, "Lease renewed after seed restart").await;
    println!(
        "fault seed-restart: seed down {outage:?}; re-applied (ManagedResource Applied+Healthy, deleted object restored, new values) {took:?} after restart"
    );
    agent.assert_never_restarted("after the seed restart");
    agent.stop(&shutdown).await;
    garden_controller
        .wait()
        .await
        .expect("garden controller stops");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn watch_streams_cut_repeatedly_miss_no_update() {
    let _serial = env::one_at_a_time().await;
    let mut rng = Rng::seeded("watch-drops");
    let env = Env::start().await;
    let shutdown = CancellationToken::new();
    let (garden_controller, agent) = installed_system(&env, &shutdown).await;
    let (garden, seed) = (env.garden.client(), env.seed.client());
    let installations = ["ext-b", "ext-c"];
    for name in installations {
        Api::<seedlet_api::core::ControllerInstallation>::all(garden.clone())
            .create(&PostParams::default(), &env::installation(name, "ext"))
            .await
            .expect("installation created");
    }

    let stop_dropping = CancellationToken::new();
    let dropper = {
        let (garden_faults, seed_faults) =
            (env.garden.sandbox().faults(), env.seed.sandbox().faults());
        let stop = stop_dropping.clone();
        let mut rng = rng.fork();
        tokio::spawn(async move {
            let mut drops = 0u32;
            while !stop.is_cancelled() {
                tokio::time::sleep(rng.millis(50, 400)).await;
                garden_faults.drop_watches();
                seed_faults.drop_watches();
                drops += 1;
            }
            drops
        })
    };
    // A stream of changes on both clusters while the watches keep breaking.
    let extensions: Api<Extension> = Api::namespaced(seed.clone(), "garden");
    let last = 12;
    for round in 1..=last {
        set_deployment(
            &garden,
            "ext",
            env::CHART,
            json!({"greeting": format!("g{round}")}),
        )
        .await;
        if round % 3 == 0 {
            let extension: Extension = serde_json::from_value(json!({
                "apiVersion": "extensions.gardener.cloud/v1alpha1", "kind": "Extension",
                "metadata": {"name": format!("small-{round}"), "namespace": "garden"},
                "spec": {"type": "small"}
            }))
            .expect("extension");
            extensions
                .create(&PostParams::default(), &extension)
                .await
                .expect("extension created");
        }
        tokio::time::sleep(rng.millis(20, 300)).await;
    }
    let changed_at = Instant::now();
    let want = format!("g{last}");
    let all = ["ext-a", "ext-b", "ext-c"];
    let took = converge(
        "every update seen despite watch drops",
        changed_at,
        || async {
            for ci in all {
                if greeting(&seed, ci, "ext").await.as_deref() != Some(want.as_str())
                    || !ci_has(
                        &garden,
                        ci,
                        &[
                            ("Installed", "True"),
                            ("Healthy", "True"),
                            ("Required", "True"),
                        ],
                    )
                    .await
                {
                    return false;
                }
            }
            true
        },
    )
    .await;
    stop_dropping.cancel();
    let drops = dropper.await.expect("dropper joins");
    println!(
        "fault watch-drops: {drops} rounds of dropped watches on both clusters during {last} deployment changes; converged {took:?} after the last change"
    );
    assert!(drops >= 5, "watches were actually dropped ({drops})");
    agent.assert_never_restarted("with watches cut");
    agent.stop(&shutdown).await;
    garden_controller
        .wait()
        .await
        .expect("garden controller stops");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn api_errors_and_throttling_are_backed_off_and_converge() {
    let _serial = env::one_at_a_time().await;
    let mut rng = Rng::seeded("api-errors");
    let env = Env::start().await;
    let shutdown = CancellationToken::new();
    let (garden_controller, agent) = installed_system(&env, &shutdown).await;
    let garden = env.garden.client();

    // Background: the agent's steady request rate (heartbeat, periodic syncs) without faults.
    let window = Duration::from_secs(3);
    let before = Sent::now(&env);
    tokio::time::sleep(window).await;
    let background = (Sent::now(&env) - before).total() as f64 / window.as_secs_f64();

    let mut clean_work = Vec::new();
    let mut installations = vec!["ext-a".to_owned()];
    for (number, round) in api_errors::ROUNDS.into_iter().enumerate() {
        let faulty = if round.garden_too {
            vec![&env.garden, &env.seed]
        } else {
            vec![&env.seed]
        };
        for cluster in &faulty {
            let faults = cluster.sandbox().faults();
            faults.seed(rng.next());
            faults.fail_requests(round.fraction, round.kind);
        }
        let before = Sent::now(&env);
        let metrics_before = agent.agent.metrics.encode(jiff::Timestamp::now());
        let took = round
            .work
            .perform(
                round.timeout,
                &env,
                &agent.agent.metrics,
                number,
                &mut installations,
            )
            .await;
        let sent = Sent::now(&env) - before;
        for cluster in &faulty {
            cluster.sandbox().faults().clear();
        }
        let metrics = agent.agent.metrics.encode(jiff::Timestamp::now());
        let [applier, installer] = ["managedresource", "controllerinstallation"].map(|name| {
            let now = api_errors::reconciles(&metrics, name);
            let earlier = api_errors::reconciles(&metrics_before, name);
            (now.0 - earlier.0, now.1 - earlier.1)
        });
        // What the work cost once the background is taken off and retries are divided out.
        let work = (sent.total() as f64 * (1.0 - round.fraction) - background * took.as_secs_f64())
            .max(0.0);
        println!(
            "fault api-errors round {number}: {:?} with {:.0}% {:?} on {}; converged in {took:?}; the agent sent {} requests, {} failed; work ~{work:.0} requests (background {background:.1} req/s); failed reconciles: applier {} of {}, installation {} of {}",
            round.work,
            round.fraction * 100.0,
            round.kind,
            if round.garden_too {
                "garden and seed"
            } else {
                "the seed"
            },
            sent.total(),
            sent.failed,
            applier.1,
            applier.0,
            installer.1,
            installer.0,
        );
        let clean = clean_work
            .iter()
            .find(|(work, _)| *work == round.work)
            .map(|(_, clean)| *clean);
        match clean {
            None => {
                assert_eq!(sent.failed, 0, "no faults in the fault-free round");
                clean_work.push((round.work, work));
            }
            Some(clean) => {
                assert!(sent.failed > 0, "the faults reached the agent");
                let bound = api_errors::allowed(clean, background, took, round.fraction);
                assert!(
                    sent.total() as f64 <= bound,
                    "the agent hammers the API under errors: {} requests sent, at most {bound:.0} allowed for work that takes ~{clean:.0} without faults",
                    sent.total()
                );
            }
        }
    }
    wait_heartbeat_after(
        &garden,
        jiff::Timestamp::now(),
        "Lease renewed after faults",
    )
    .await;
    agent.assert_never_restarted("under injected API errors");
    agent.stop(&shutdown).await;
    garden_controller
        .wait()
        .await
        .expect("garden controller stops");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn malformed_chart_archives_are_reported_and_never_touch_the_good_installation() {
    let _serial = env::one_at_a_time().await;
    let mut rng = Rng::seeded("malformed-charts");
    let env = Env::start().await;
    let shutdown = CancellationToken::new();
    let (garden_controller, agent) = installed_system(&env, &shutdown).await;
    let (garden, seed) = (env.garden.client(), env.seed.client());
    let good_refs = env::secret_refs(&seed, "ext-a")
        .await
        .expect("managed resource");
    let config_maps: Api<ConfigMap> = Api::namespaced(seed.clone(), "extension-ext-a");
    let good_config = config_maps
        .get("ext-config")
        .await
        .expect("applied config map");

    let started = Instant::now();
    let cases = charts::malformed_cases(&mut rng);
    for case in &cases {
        // Back to the good chart (same values: the ManagedResource content is unchanged) so that
        // the message awaited below can only come from this case.
        set_deployment(&garden, "ext", env::CHART, json!({"greeting": "v1"})).await;
        common::wait_until("Valid True between cases", env::CONVERGE, || async {
            env::ci_condition(&garden, "ext-a", "Valid")
                .await
                .is_some_and(|(status, _, _)| status == "True")
        })
        .await;
        set_deployment(&garden, "ext", &case.archive, json!({"greeting": "never"})).await;
        let message = common::wait_for(
            &format!("Valid False for {}", case.name),
            env::CONVERGE,
            || async {
                env::ci_condition(&garden, "ext-a", "Valid")
                    .await
                    .filter(|(status, reason, message)| {
                        status == "False"
                            && reason == "ChartCannotBeRendered"
                            && message.contains(case.names_problem)
                    })
                    .map(|(_, _, message)| message)
            },
        )
        .await;
        println!("  {}: {message}", case.name);
        assert_eq!(
            env::secret_refs(&seed, "ext-a").await.as_ref(),
            Some(&good_refs),
            "{}: the good ManagedResource is untouched",
            case.name
        );
        agent.assert_never_restarted(case.name);
    }
    let applied = config_maps.get("ext-config").await.expect("config map");
    assert_eq!(applied.data, good_config.data, "applied objects untouched");
    assert!(
        ci_has(&garden, "ext-a", HEALTHY).await,
        "the previous release stays installed and healthy"
    );
    // The agent still works: a good chart goes through.
    set_deployment(&garden, "ext", env::CHART, json!({"greeting": "fixed"})).await;
    converge(
        "good chart applied after malformed ones",
        Instant::now(),
        || async { greeting(&seed, "ext-a", "ext").await.as_deref() == Some("fixed") },
    )
    .await;
    println!(
        "fault malformed-charts: {} malformed archives each reported as Valid=False/ChartCannotBeRendered naming the problem; {:?} in total",
        cases.len(),
        started.elapsed()
    );
    agent.assert_never_restarted("after malformed charts");
    agent.stop(&shutdown).await;
    garden_controller
        .wait()
        .await
        .expect("garden controller stops");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn rotation_survives_a_stopped_approver_and_completes_when_it_returns() {
    let _serial = env::one_at_a_time().await;
    let env = Env::start().await;
    let shutdown = CancellationToken::new();
    identity::prepare_bootstrap(&env).await;
    let approver_stop = shutdown.child_token();
    let approver = start_garden(env.garden.client(), approver_stop.clone()).await;
    let agent = start_agent(
        agent_config(&identity::bootstrap_agent_config(None)),
        env.seed.client(),
        None,
        shutdown.child_token(),
    )
    .await;
    let garden = env.garden.client();
    let seed = env.seed.client();
    let before = identity::wait_bootstrapped(&env).await;
    wait_heartbeat_after(
        &garden,
        jiff::Timestamp::now(),
        "heartbeat with the first certificate",
    )
    .await;

    approver_stop.cancel();
    approver.wait().await.expect("approver stops");
    identity::request_renewal(&seed).await;
    let outage = Duration::from_secs(4);
    let outage_started = jiff::Timestamp::now();
    tokio::time::sleep(outage).await;
    // Still working with the old certificate: Lease renewed during the outage, nothing replaced.
    let renewed = renew_time(&garden).await.expect("lease");
    assert!(
        renewed > outage_started + jiff::SignedDuration::from_secs(2),
        "heartbeat continued with the old certificate (last renewal {renewed})"
    );
    let during = identity::stored_certificate(&seed).await.expect("stored");
    assert_eq!(
        during.serial, before.serial,
        "old certificate kept while unapproved"
    );
    assert!(
        identity::renew_pending(&seed).await,
        "renewal still pending"
    );
    let pending = identity::csr_count(&garden).await;

    let back_at = (Instant::now(), jiff::Timestamp::now());
    let approver = start_garden(env.garden.client(), shutdown.child_token()).await;
    let took = converge(
        "rotation completed after approver returned",
        back_at.0,
        || async {
            !identity::renew_pending(&seed).await
                && identity::stored_certificate(&seed)
                    .await
                    .is_some_and(|c| c.serial != before.serial)
        },
    )
    .await;
    let after = identity::stored_certificate(&seed).await.expect("stored");
    assert!(
        identity::garden_accepts_stored(&env).await,
        "garden accepts the rotated certificate"
    );
    wait_heartbeat_after(&garden, jiff::Timestamp::now(), "heartbeat after rotation").await;
    // The agent's expiry metric follows the rotated certificate.
    common::wait_until("expiry metric follows rotation", env::CONVERGE, || async {
        let now = jiff::Timestamp::now();
        certificate_expiry_metric(&agent.agent.metrics.encode(now)).is_some_and(|seconds| {
            let distance =
                |t: jiff::Timestamp| (t.duration_since(now).as_secs_f64() - seconds).abs();
            distance(after.not_after) < distance(before.not_after)
        })
    })
    .await;
    let csrs = identity::csr_count(&garden).await;
    println!(
        "fault approver-stopped: approver down {outage:?} during a renew; heartbeat continued on the old certificate; rotation completed {took:?} after the approver returned ({csrs} CSRs in total, {pending} while it was away; serial {} -> {})",
        before.serial, after.serial
    );
    assert!(
        csrs <= 3,
        "no CSR storm while the approver was away ({csrs})"
    );
    agent.assert_never_restarted("approver stopped during rotation");
    agent.stop(&shutdown).await;
    approver.wait().await.expect("approver stops");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn agent_process_killed_at_random_points_converges_on_restart() {
    let _serial = env::one_at_a_time().await;
    let mut rng = Rng::seeded("process-kills");
    process::run_kill_scenario(&mut rng).await;
}

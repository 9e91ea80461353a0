//! Table tests of the Shoot controller's decisions.

use serde_json::{Value, json};

use super::*;

const NOW: &str = "2025-01-06T12:00:00Z";
const HOUR: Duration = Duration::from_secs(3600);

fn at(text: &str) -> Timestamp {
    text.parse().unwrap()
}

fn settings() -> Settings {
    Settings {
        sync_period: HOUR,
        respect_sync_period_overwrite: false,
        reconcile_in_maintenance_only: false,
        version: "1.0.0".into(),
    }
}

/// A shoot with generation 2; `status` merged into the status.
fn shoot(annotations: Value, spec_extra: Value, status: Value) -> Shoot {
    let mut spec = json!({"provider": {"type": "local"}, "region": "r", "seedName": "local"});
    if let (Some(spec), Some(extra)) = (spec.as_object_mut(), spec_extra.as_object()) {
        spec.extend(extra.clone());
    }
    serde_json::from_value(json!({
        "metadata": {"name": "s", "namespace": "garden-dev", "generation": 2, "annotations": annotations},
        "spec": spec,
        "status": status,
    }))
    .unwrap()
}

fn op(type_: &str, state: &str, time: &str) -> Value {
    json!({"type": type_, "state": state, "progress": 100, "description": "", "lastUpdateTime": time})
}

fn done(type_: &str, state: &str, observed: i64) -> Value {
    json!({"observedGeneration": observed, "lastOperation": op(type_, state, "2025-01-06T11:00:00Z"),
           "gardener": {"id": "x", "name": "seedlet-agent", "version": "1.0.0"}})
}

fn seed(annotations: Value, status: Value) -> Seed {
    serde_json::from_value(json!({
        "metadata": {"name": "local", "generation": 3, "annotations": annotations},
        "spec": {"provider": {"type": "local", "region": "r"}, "networks": {"pods": "10.1.0.0/16", "services": "10.2.0.0/16"}},
        "status": status,
    }))
    .unwrap()
}

#[test]
fn responsible_seed_prefers_the_migration_source() {
    let cases = [
        (json!({"seedName": null}), json!({}), None),
        (json!({}), json!({}), Some("local")),
        (json!({}), json!({"seedName": "local"}), Some("local")),
        (
            json!({"seedName": "target"}),
            json!({"seedName": "local"}),
            Some("local"),
        ),
    ];
    for (spec, status, want) in cases {
        let shoot = shoot(json!({}), spec.clone(), status.clone());
        assert_eq!(responsible_seed(&shoot), want, "{spec} {status}");
    }
}

#[test]
fn operation_type_first_match_wins() {
    use LastOperationType as T;
    let t = "2025-01-06T11:00:00Z";
    let cases = [
        (json!({}), json!({}), json!({}), T::Create),
        (
            json!({}),
            json!({"seedName": "other"}),
            json!({"seedName": "local"}),
            T::Migrate,
        ),
        (
            json!({}),
            json!({}),
            json!({"lastOperation": op("Migrate", "Succeeded", t)}),
            T::Restore,
        ),
        (
            json!({}),
            json!({}),
            json!({"lastOperation": op("Migrate", "Aborted", t)}),
            T::Restore,
        ),
        (
            json!({}),
            json!({}),
            json!({"lastOperation": op("Migrate", "Error", t)}),
            T::Migrate,
        ),
        (
            json!({}),
            json!({}),
            json!({"lastOperation": op("Create", "Error", t)}),
            T::Create,
        ),
        (
            json!({}),
            json!({}),
            json!({"lastOperation": op("Create", "Succeeded", t)}),
            T::Reconcile,
        ),
        (
            json!({}),
            json!({}),
            json!({"lastOperation": op("Delete", "Error", t)}),
            T::Reconcile,
        ),
        (
            json!({"gardener.cloud/operation": "restore"}),
            json!({}),
            json!({"lastOperation": op("Reconcile", "Succeeded", t)}),
            T::Restore,
        ),
        (
            json!({"gardener.cloud/operation": "migrate"}),
            json!({}),
            json!({}),
            T::Migrate,
        ),
    ];
    for (annotations, spec, status, want) in cases {
        let shoot = shoot(annotations.clone(), spec.clone(), status.clone());
        assert_eq!(
            operation_type(&shoot),
            want,
            "{annotations} {spec} {status}"
        );
    }
}

#[test]
fn deleting_shoots_are_deletes_unless_migrating() {
    let mut deleting = shoot(json!({}), json!({}), done("Reconcile", "Succeeded", 2));
    deleting.metadata.deletion_timestamp = Some(
        k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(at(NOW)),
    );
    assert_eq!(operation_type(&deleting), LastOperationType::Delete);
}

#[test]
fn reconcile_decision_follows_the_first_matching_rule() {
    let window =
        json!({"maintenance": {"timeWindow": {"begin": "220000+0000", "end": "230000+0000"}}});
    let confined = json!({"maintenance": {"confineSpecUpdateRollout": true,
        "timeWindow": {"begin": "220000+0000", "end": "230000+0000"}}});
    let in_window_now = "2025-01-06T22:10:00Z";
    // (annotations, spec, status, now, reconcile now, only cluster sync, requeue)
    type Case = (
        Value,
        Value,
        Value,
        &'static str,
        Result<(), &'static str>,
        bool,
        Option<Duration>,
    );
    let cases: Vec<Case> = vec![
        (
            json!({}),
            json!({}),
            json!({}),
            NOW,
            Ok(()),
            false,
            Some(HOUR),
        ),
        (
            json!({}),
            json!({}),
            done("Reconcile", "Succeeded", 2),
            NOW,
            Ok(()),
            false,
            Some(HOUR),
        ),
        (
            json!({}),
            json!({}),
            done("Reconcile", "Failed", 2),
            NOW,
            Err(REASON_FAILED_OR_IGNORED),
            true,
            None,
        ),
        // A spec change after the failure (generation 2, observed 1) is retried.
        (
            json!({}),
            json!({}),
            done("Reconcile", "Failed", 1),
            NOW,
            Ok(()),
            false,
            Some(HOUR),
        ),
        // Ignore is honoured only with respectSyncPeriodOverwrite or in namespace garden.
        (
            json!({"shoot.gardener.cloud/ignore": "true"}),
            json!({}),
            done("Reconcile", "Succeeded", 2),
            NOW,
            Ok(()),
            false,
            Some(HOUR),
        ),
        (
            json!({}),
            confined.clone(),
            done("Reconcile", "Succeeded", 2),
            NOW,
            Err(REASON_OUTSIDE_WINDOW),
            false,
            Some(Duration::from_secs(10 * 3600)),
        ),
        (
            json!({}),
            confined.clone(),
            done("Reconcile", "Succeeded", 2),
            in_window_now,
            Ok(()),
            false,
            Some(Duration::from_secs(86400 - 600)),
        ),
        // Not up to date: a confined shoot still reconciles at once.
        (
            json!({}),
            confined.clone(),
            done("Reconcile", "Succeeded", 1),
            NOW,
            Ok(()),
            false,
            Some(Duration::from_secs(10 * 3600)),
        ),
        // A window without confinement does not restrict.
        (
            json!({}),
            window,
            done("Reconcile", "Succeeded", 2),
            NOW,
            Ok(()),
            false,
            Some(HOUR),
        ),
        (
            json!({}),
            confined,
            done("Create", "Error", 2),
            NOW,
            Ok(()),
            false,
            Some(Duration::from_secs(10 * 3600)),
        ),
    ];
    for (annotations, spec, status, now, reconcile, only_cluster, requeue) in cases {
        let shoot = shoot(annotations.clone(), spec.clone(), status.clone());
        let infos = controller_infos(&shoot, None, &settings(), at(now), 0.0);
        let context = format!("{annotations} {spec} {status} {now}");
        assert_eq!(infos.reconcile_now, reconcile, "{context}");
        assert_eq!(infos.only_sync_cluster, only_cluster, "{context}");
        assert_eq!(infos.requeue_after, requeue, "{context}");
    }
}

#[test]
fn operation_requests_are_what_gardener_apiserver_would_turn_into_a_new_generation() {
    let op = |value: &str| json!({"gardener.cloud/operation": value});
    // (annotations, status, request, reconcile now)
    let cases = [
        // A Failed shoot: only `retry` (also in a `;` list) asks, and it overrides the failure.
        (
            op("retry"),
            done("Reconcile", "Failed", 2),
            Some("retry"),
            true,
        ),
        (
            op("rotate-ssh-keypair;retry"),
            done("Create", "Failed", 2),
            Some("retry"),
            true,
        ),
        (op("reconcile"), done("Reconcile", "Failed", 2), None, false),
        // Not failed: `reconcile` asks; `retry` is left alone like gardener-apiserver does.
        (
            op("reconcile"),
            done("Reconcile", "Succeeded", 2),
            Some("reconcile"),
            true,
        ),
        (op("retry"), done("Reconcile", "Succeeded", 2), None, true),
        (op("maintain"), done("Reconcile", "Failed", 2), None, false),
        // No last operation: gardener-apiserver processes neither.
        (op("retry"), json!({}), None, true),
        (json!({}), done("Reconcile", "Failed", 2), None, false),
    ];
    for (annotations, status, request, now) in cases {
        let shoot = shoot(annotations.clone(), json!({}), status);
        assert_eq!(operation_request(&shoot), request, "{annotations}");
        let infos = controller_infos(&shoot, None, &settings(), at(NOW), 0.5);
        assert_eq!(infos.reconcile_now.is_ok(), now, "{annotations}");
    }
    // A confined, up-to-date shoot outside its window is reconciled at once when asked.
    let confined = json!({"maintenance": {"confineSpecUpdateRollout": true,
        "timeWindow": {"begin": "220000+0000", "end": "230000+0000"}}});
    let asked = shoot(
        op("reconcile"),
        confined.clone(),
        done("Reconcile", "Succeeded", 2),
    );
    let infos = controller_infos(&asked, None, &settings(), at(NOW), 0.5);
    assert_eq!(
        (infos.reconcile_now, infos.enqueue_after),
        (Ok(()), Duration::ZERO)
    );
    let not_asked = shoot(json!({}), confined, done("Reconcile", "Succeeded", 2));
    let infos = controller_infos(&not_asked, None, &settings(), at(NOW), 0.5);
    assert_eq!(infos.reconcile_now, Err(REASON_OUTSIDE_WINDOW));
}

#[test]
fn force_deletion_is_a_request_only_when_deleting_with_an_accepted_code() {
    let failed_with = |code: &str| {
        let mut status = done("Delete", "Failed", 2);
        status["lastErrors"] = json!([{"description": "x", "codes": [code]}]);
        status
    };
    let force = json!({"confirmation.gardener.cloud/force-deletion": "true"});
    // (annotations, status, deleting, request)
    let cases = [
        (
            force.clone(),
            failed_with("ERR_INFRA_DEPENDENCIES"),
            true,
            true,
        ),
        (
            force.clone(),
            failed_with("ERR_CONFIGURATION_PROBLEM"),
            true,
            true,
        ),
        (
            force.clone(),
            failed_with("ERR_INFRA_RATE_LIMITS_EXCEEDED"),
            true,
            false,
        ),
        (
            force.clone(),
            failed_with("ERR_INFRA_DEPENDENCIES"),
            false,
            false,
        ),
        (
            json!({"confirmation.gardener.cloud/force-deletion": "false"}),
            failed_with("ERR_INFRA_DEPENDENCIES"),
            true,
            false,
        ),
        (
            json!({}),
            failed_with("ERR_INFRA_DEPENDENCIES"),
            true,
            false,
        ),
    ];
    for (index, (annotations, status, deleting, want)) in cases.into_iter().enumerate() {
        let mut shoot = shoot(annotations, json!({}), status);
        if deleting {
            shoot.metadata.deletion_timestamp = Some(
                k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(at(NOW)),
            );
        }
        assert_eq!(operation_request(&shoot).is_some(), want, "case {index}");
        if want {
            let infos = controller_infos(&shoot, None, &settings(), at(NOW), 0.5);
            assert_eq!(
                infos.reconcile_now,
                Ok(()),
                "case {index}: the failure does not hold it"
            );
        }
    }
}

#[test]
fn a_reconcile_already_done_in_the_window_waits_for_the_next_one() {
    let confined = json!({"maintenance": {"confineSpecUpdateRollout": true,
        "timeWindow": {"begin": "220000+0000", "end": "230000+0000"}}});
    let mut status = done("Reconcile", "Succeeded", 2);
    status["lastOperation"]["lastUpdateTime"] = json!("2025-01-06T22:05:00Z");
    let shoot = shoot(json!({}), confined, status);
    let infos = controller_infos(&shoot, None, &settings(), at("2025-01-06T22:20:00Z"), 0.0);
    assert_eq!(infos.reconcile_now, Err(REASON_OUTSIDE_WINDOW));
    // Seven hours later the earlier run no longer counts.
    let infos = controller_infos(&shoot, None, &settings(), at("2025-01-07T22:10:00Z"), 0.0);
    assert_eq!(infos.reconcile_now, Ok(()));
}

#[test]
fn enqueue_after_is_immediate_unless_confined_and_up_to_date() {
    let confined = json!({"maintenance": {"confineSpecUpdateRollout": true,
        "timeWindow": {"begin": "220000+0000", "end": "230000+0000"}}});
    let up_to_date = shoot(
        json!({}),
        confined.clone(),
        done("Reconcile", "Succeeded", 2),
    );
    let outside = controller_infos(&up_to_date, None, &settings(), at(NOW), 0.0);
    assert_eq!(outside.enqueue_after, Duration::from_secs(10 * 3600));
    let inside = controller_infos(
        &up_to_date,
        None,
        &settings(),
        at("2025-01-06T22:10:00Z"),
        1.0,
    );
    assert_eq!(inside.enqueue_after, Duration::from_secs(35 * 60));
    let fresh = shoot(json!({}), confined, json!({}));
    assert_eq!(
        controller_infos(&fresh, None, &settings(), at(NOW), 0.5).enqueue_after,
        Duration::ZERO
    );
}

#[test]
fn sync_period_annotation_only_lengthens_and_only_when_respected() {
    let respected = Settings {
        respect_sync_period_overwrite: true,
        ..settings()
    };
    let cases = [
        ("30m", &respected, HOUR),
        ("0m", &respected, HOUR),
        ("3h", &respected, Duration::from_secs(3 * 3600)),
        ("soon", &respected, HOUR),
        ("3h", &settings(), HOUR),
    ];
    for (value, settings, want) in cases {
        let shoot = shoot(
            json!({"shoot.gardener.cloud/sync-period": value}),
            json!({}),
            done("Reconcile", "Succeeded", 2),
        );
        let infos = controller_infos(&shoot, None, settings, at(NOW), 0.0);
        assert_eq!(infos.requeue_after, Some(want), "{value}");
    }
}

#[test]
fn ignore_is_honoured_when_respected_and_emergency_stop_needs_exactly_true() {
    let respected = Settings {
        respect_sync_period_overwrite: true,
        ..settings()
    };
    let ignored = shoot(
        json!({"shoot.gardener.cloud/ignore": "True"}),
        json!({}),
        done("Reconcile", "Succeeded", 2),
    );
    let infos = controller_infos(&ignored, None, &respected, at(NOW), 0.0);
    assert_eq!(infos.reconcile_now, Err(REASON_FAILED_OR_IGNORED));
    assert!(infos.only_sync_cluster);
    assert_eq!(infos.requeue_after, None);

    let plain = shoot(json!({}), json!({}), json!({}));
    let stopped = seed(
        json!({"shoot.gardener.cloud/emergency-stop-reconciliations": "true"}),
        json!({}),
    );
    assert_eq!(
        controller_infos(&plain, Some(&stopped), &settings(), at(NOW), 0.0).reconcile_now,
        Err(REASON_EMERGENCY_STOP)
    );
    let not_exactly = seed(
        json!({"shoot.gardener.cloud/emergency-stop-reconciliations": "True"}),
        json!({}),
    );
    assert_eq!(
        controller_infos(&plain, Some(&not_exactly), &settings(), at(NOW), 0.0).reconcile_now,
        Ok(())
    );
}

#[test]
fn seed_gate_reports_upstream_messages() {
    let identity = GardenerInfo {
        id: "me".into(),
        name: "seedlet-agent".into(),
        version: "1.0.0".into(),
    };
    let ready = |status: &str| json!({"type": "GardenletReady", "status": status, "lastTransitionTime": NOW, "lastUpdateTime": NOW, "reason": "r", "message": "m"});
    let healthy = json!({"type": "SeedSystemComponentsHealthy", "status": "True", "lastTransitionTime": NOW, "lastUpdateTime": NOW, "reason": "r", "message": "m"});
    let gardener = json!({"id": "other-term", "name": "seedlet-agent", "version": "1.0.0"});
    let cases = [
        (
            json!({"gardener": gardener, "observedGeneration": 3, "conditions": [ready("True"), healthy]}),
            Ok(()),
        ),
        (
            json!({"gardener": gardener, "observedGeneration": 2, "conditions": [ready("True"), healthy]}),
            Err("seed is not up to date: observed generation outdated (2/3)".to_owned()),
        ),
        (
            json!({"gardener": {"id": "x", "name": "seedlet-agent", "version": "0.9.0"}, "observedGeneration": 3, "conditions": [ready("True"), healthy]}),
            Err(
                "seed is not up to date: observing Gardener version not up to date (0.9.0/1.0.0)"
                    .to_owned(),
            ),
        ),
        (
            json!({"gardener": gardener, "observedGeneration": 3, "conditions": [healthy]}),
            Err("error in seed conditions: condition \"GardenletReady\" is missing".to_owned()),
        ),
        (
            json!({"gardener": gardener, "observedGeneration": 3, "conditions": [ready("False"), healthy]}),
            Err("seed has failing conditions: [GardenletReady]".to_owned()),
        ),
        (
            json!({"observedGeneration": 3, "conditions": [ready("Unknown"), healthy]}),
            Err("seed has failing conditions: [GardenletReady]".to_owned()),
        ),
    ];
    for (status, want) in cases {
        let seed = seed(json!({}), status.clone());
        assert_eq!(seed_gate(&seed, &identity), want, "{status}");
    }
}

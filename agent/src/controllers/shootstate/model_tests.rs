//! Tests of the model's decisions: which namespaces an update marks, when a reconcile writes or
//! waits, what a failed write leaves behind, and what a re-list removes.

use std::sync::Arc;
use std::time::{Duration, Instant};

use seedlet_api::common::{LastOperation, LastOperationState, LastOperationType};
use seedlet_runtime::clock::FakeClock;

use super::super::reconcile::Error;
use super::*;

const NS: &str = "shoot--dev--foo";
const PERIOD: Duration = Duration::from_millis(100);

fn model(snapshot_period: Option<Duration>) -> Model {
    let clock = FakeClock::new("2026-01-01T12:00:00Z".parse().unwrap());
    Model::new(PERIOD, snapshot_period, Arc::new(clock))
}

fn shoot() -> ShootRef {
    ShootRef {
        namespace: "garden-dev".into(),
        name: "foo".into(),
        deleting: false,
        last_operation: Some(LastOperation {
            description: String::new(),
            last_update_time: k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(
                jiff::Timestamp::UNIX_EPOCH,
            ),
            progress: 100,
            state: LastOperationState::Succeeded,
            type_: LastOperationType::Reconcile,
        }),
    }
}

fn worker(namespace: &str, name: &str, mark: u64) -> Update {
    Update::Extension(ExtensionItem {
        kind: "Worker",
        name: name.into(),
        namespace: namespace.into(),
        data: ExtensionData {
            purpose: None,
            state: Some(crate::shoot_state::state::StateText::of(
                &serde_json::json!({ "mark": mark }),
            )),
            resources: Box::default(),
            deleting: false,
            paused: false,
        },
    })
}

fn written(plan: Plan) -> Job {
    match plan {
        Plan::Write(job) => job,
        other => panic!("expected a write, got {other:?}"),
    }
}

fn names(job: &Job) -> Vec<&str> {
    job.extensions
        .iter()
        .map(|((_, name), _)| name.as_str())
        .collect()
}

fn wrote(timestamp: Option<&str>) -> Outcome {
    Outcome {
        wrote: true,
        timestamp: timestamp.map(str::to_owned),
        failed: Vec::new(),
    }
}

#[test]
fn a_change_before_the_cluster_waits_for_it_and_the_cluster_brings_the_whole_namespace() {
    let mut model = model(None);
    let now = Instant::now();
    assert_eq!(model.observe(worker(NS, "a", 1), now), [NS]);
    assert_eq!(model.observe(worker(NS, "a", 1), now), Vec::<String>::new());
    assert!(
        model
            .observe(Update::Cluster(NS.into(), shoot()), now)
            .is_empty(),
        "the Cluster triggers its own reconcile"
    );
    let job = written(model.plan(NS, &shoot(), now));
    assert_eq!(names(&job), ["a"]);
    assert!(job.extensions[0].1.is_some());
    assert!(!job.snapshot);
}

#[test]
fn writes_are_spaced_by_the_batch_period_and_a_quiet_shoot_writes_at_once() {
    let mut model = model(None);
    let start = Instant::now();
    let ms = |n: u64| start + Duration::from_millis(n);
    model.observe(Update::Cluster(NS.into(), shoot()), start);
    let job = written(model.plan(NS, &shoot(), start));
    assert_eq!(model.written(&job, wrote(None), ms(5)), None);
    // A change 10 ms after the write started waits for the rest of the period; a second one
    // inside it joins the same write.
    model.observe(worker(NS, "a", 1), ms(10));
    assert!(
        matches!(model.plan(NS, &shoot(), ms(10)), Plan::Wait(wait) if wait == Duration::from_millis(90))
    );
    model.observe(worker(NS, "b", 1), ms(50));
    assert!(
        matches!(model.plan(NS, &shoot(), ms(50)), Plan::Wait(wait) if wait == Duration::from_millis(50))
    );
    let job = written(model.plan(NS, &shoot(), ms(100)));
    assert_eq!(names(&job), ["a", "b"]);
    model.written(&job, wrote(None), ms(105));
    // Nothing changed: idle, no snapshot without a period.
    assert!(matches!(
        model.plan(NS, &shoot(), ms(150)),
        Plan::Idle(None)
    ));
    // Quiet for longer than the period: the next change writes at once.
    model.observe(worker(NS, "a", 2), ms(400));
    assert_eq!(names(&written(model.plan(NS, &shoot(), ms(400)))), ["a"]);
}

#[test]
fn every_failed_write_grows_the_back_off_and_keeps_the_work() {
    let mut model = model(None);
    let mut now = Instant::now();
    model.observe(Update::Cluster(NS.into(), shoot()), now);
    model.observe(worker(NS, "w", 1), now);
    for failures in 1..=4u32 {
        let job = written(model.plan(NS, &shoot(), now));
        assert_eq!(names(&job), ["w"], "the job's work is marked again");
        model.failed(job, now);
        let delay = schedule::retry_delay(failures - 1);
        assert_eq!(model.retry_in(NS), Some(delay));
        // A trigger inside the back-off waits for its end.
        assert!(matches!(model.plan(NS, &shoot(), now), Plan::Wait(wait) if wait == delay));
        now += delay;
    }
    // A write that succeeds ends the back-off.
    let job = written(model.plan(NS, &shoot(), now));
    assert_eq!(model.written(&job, wrote(None), now), None);
    assert_eq!(model.retry_in(NS), None);
}

#[test]
fn an_object_whose_change_could_not_be_prepared_is_retried_after_a_back_off() {
    let mut model = model(None);
    let now = Instant::now();
    model.observe(Update::Cluster(NS.into(), shoot()), now);
    model.observe(worker(NS, "w", 1), now);
    let job = written(model.plan(NS, &shoot(), now));
    let mut outcome = wrote(None);
    outcome.failed.push((
        ("Worker", "w".to_owned()),
        Error::MissingResource {
            kind: "ConfigMap".into(),
            namespace: NS.into(),
            name: "tf".into(),
        },
    ));
    assert_eq!(
        model.written(&job, outcome, now),
        Some(schedule::retry_delay(0))
    );
    let later = now + schedule::retry_delay(0);
    assert_eq!(names(&written(model.plan(NS, &shoot(), later))), ["w"]);
}

#[test]
fn a_gone_cluster_drops_its_changes_and_a_write_finishing_after_it_schedules_nothing() {
    let mut model = model(Some(Duration::from_secs(6 * 3600)));
    let now = Instant::now();
    model.observe(Update::Cluster(NS.into(), shoot()), now);
    model.observe(worker(NS, "w", 1), now);
    let job = written(model.plan(NS, &shoot(), now));
    model.observe(Update::ClusterGone(NS.into()), now);
    assert_eq!(model.written(&job, wrote(None), now), None);
    model.failed(job, now);
    assert_eq!(model.retry_in(NS), None);
    // The Cluster is back: everything of the namespace is written again, at once.
    model.observe(Update::Cluster(NS.into(), shoot()), now);
    assert_eq!(names(&written(model.plan(NS, &shoot(), now))), ["w"]);
}

#[test]
fn a_relist_removes_what_it_did_not_list_and_marks_those_namespaces() {
    let mut model = model(None);
    let now = Instant::now();
    let other = "shoot--dev--bar";
    model.observe(worker(NS, "kept", 1), now);
    model.observe(worker(other, "gone", 1), now);
    model.observe(Update::Relist(Source::Extension("Worker")), now);
    model.observe(worker(NS, "kept", 1), now);
    assert_eq!(
        model.observe(Update::Listed(Source::Extension("Worker")), now),
        [other]
    );
    model.observe(Update::Cluster(other.into(), shoot()), now);
    let job = written(model.plan(other, &shoot(), now));
    assert_eq!(names(&job), ["gone"]);
    assert!(job.extensions[0].1.is_none(), "written as gone");
    // A Cluster re-list drops the state of a Cluster it did not list.
    model.observe(Update::Relist(Source::Cluster), now);
    model.observe(Update::Listed(Source::Cluster), now);
    model.observe(Update::Cluster(other.into(), shoot()), now);
    assert_eq!(
        names(&written(model.plan(other, &shoot(), now + PERIOD))),
        Vec::<&str>::new(),
        "a new Cluster brings its namespace (now empty) in again"
    );
}

/// `worker`'s object as another kind.
fn of_kind(kind: &'static str, update: Update) -> Update {
    match update {
        Update::Extension(item) => Update::Extension(ExtensionItem { kind, ..item }),
        other => other,
    }
}

#[test]
fn objects_are_told_apart_by_namespace_kind_and_name_and_a_relist_touches_only_its_kind() {
    let mut model = model(None);
    let now = Instant::now();
    let other = "shoot--dev--bar";
    model.observe(worker(NS, "a", 1), now);
    model.observe(of_kind("Network", worker(NS, "a", 1)), now);
    model.observe(worker(other, "a", 1), now);
    // The same name in another namespace, and another kind of the same name, are other objects.
    assert_eq!(model.observe(worker(other, "a", 2), now), [other]);
    assert_eq!(model.observe(worker(NS, "a", 1), now), Vec::<String>::new());
    // A Worker re-list that lists nothing removes both Workers and leaves the Network.
    model.observe(Update::Relist(Source::Extension("Worker")), now);
    assert_eq!(
        model.observe(Update::Listed(Source::Extension("Worker")), now),
        [other, NS],
    );
    model.observe(Update::Cluster(NS.into(), shoot()), now);
    let job = written(model.plan(NS, &shoot(), now));
    let entries: Vec<_> = job
        .extensions
        .iter()
        .map(|((kind, name), data)| (*kind, name.as_str(), data.is_some()))
        .collect();
    assert_eq!(entries, [("Network", "a", true), ("Worker", "a", false)]);
    // The other namespace's removal is still to be written; only the Network is left.
    model.observe(Update::Cluster(other.into(), shoot()), now);
    let job = written(model.plan(other, &shoot(), now));
    assert_eq!(names(&job), ["a"]);
    assert!(job.extensions[0].1.is_none(), "written as gone");
    assert!(format!("{model:?}").contains("extensions: 1,"), "{model:?}");
}

#[test]
fn the_snapshot_is_due_after_the_first_write_without_a_timestamp_and_then_a_period_later() {
    let period = Duration::from_secs(6 * 3600);
    let mut model = model(Some(period));
    let now = Instant::now();
    model.observe(Update::Cluster(NS.into(), shoot()), now);
    let job = written(model.plan(NS, &shoot(), now));
    assert!(!job.snapshot);
    // Never snapshotted: due at once (the reconcile is requeued right away).
    assert_eq!(model.written(&job, wrote(None), now), Some(Duration::ZERO));
    let later = now + PERIOD;
    let job = written(model.plan(NS, &shoot(), later));
    assert!(job.snapshot);
    let next = model
        .written(&job, wrote(Some("2026-01-01T12:00:00Z")), later)
        .expect("the next snapshot is scheduled");
    assert!(
        next > period - period / 24 && next < period + period / 24,
        "{next:?}"
    );
    assert!(matches!(
        model.plan(NS, &shoot(), later + PERIOD),
        Plan::Idle(Some(_))
    ));
}

fn data(mark: u64) -> ExtensionData {
    match worker(NS, "w", mark) {
        Update::Extension(item) => item.data,
        _ => unreachable!("worker() builds an extension update"),
    }
}

#[test]
fn namespace_objects_stay_sorted_through_inserts_replacements_and_removals() {
    let key = |kind: &'static str, name: &str| (kind, name.to_owned());
    let mut objects = NamespaceObjects::default();
    objects.insert(key("Worker", "b"), data(1));
    objects.insert(key("Infrastructure", "z"), data(2));
    objects.insert(key("Worker", "a"), data(3));
    objects.insert(key("Worker", "b"), data(4));
    let keys = |objects: &NamespaceObjects| objects.keys().cloned().collect::<Vec<_>>();
    assert_eq!(
        keys(&objects),
        [
            key("Infrastructure", "z"),
            key("Worker", "a"),
            key("Worker", "b")
        ]
    );
    assert_eq!(objects.get(&key("Worker", "b")), Some(&data(4)), "replaced");
    assert_eq!(objects.get(&key("Worker", "a")), Some(&data(3)));
    assert_eq!(objects.get(&key("Worker", "c")), None);
    assert_eq!(objects.0.capacity(), 3, "room for exactly the objects");
    assert!(objects.remove(&key("Worker", "a")));
    assert!(!objects.remove(&key("Worker", "a")));
    assert_eq!(
        keys(&objects),
        [key("Infrastructure", "z"), key("Worker", "b")]
    );
    assert_eq!(objects.len(), 2);
    assert!(objects.remove(&key("Infrastructure", "z")) && objects.remove(&key("Worker", "b")));
    assert!(objects.is_empty());
}

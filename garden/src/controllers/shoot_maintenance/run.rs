//! The pure maintenance run (spec §6.2–§6.4, without credential rotations, version-boundary
//! cleanups and feature-gate pruning): a copy of the Shoot's spec with machine image, control
//! plane and worker Kubernetes versions moved as the CloudProfile demands, the result of each
//! step, and the `status.lastMaintenance` description and failure reason.

use jiff::Timestamp;
use serde_json::Value;

use super::versions::{
    self, ProfileVersion, Strategy, Target, Version, Why, kubernetes_target, machine_image_target,
};

/// What one maintenance step did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    /// The control-plane Kubernetes version.
    ControlPlane(Outcome),
    /// A worker pool's Kubernetes version.
    PoolKubernetes(String, Outcome),
    /// A worker pool's machine image version.
    PoolImage(String, Outcome),
    /// An automatic credentials rotation (operation key).
    Rotation(String, Outcome),
}

/// The result of a step: `(description, reason)` on success, `(error, reason)` on failure.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// Updated.
    Updated {
        /// `Updated ... from "a" to "b"`.
        description: String,
        /// Why.
        reason: String,
    },
    /// Failed.
    Failed {
        /// What went wrong.
        error: String,
        /// Why an update was attempted.
        reason: String,
    },
}

/// The maintained spec and what was done.
#[derive(Debug, Clone, PartialEq)]
pub struct Maintained {
    /// The spec after maintenance.
    pub spec: Value,
    /// Step results in description order (control plane, pool versions, images).
    pub steps: Vec<Step>,
}

/// Maintains `spec` (a Shoot spec as JSON) against `profile` (a CloudProfile spec) at `now`.
pub fn maintain(spec: &Value, profile: &Value, now: Timestamp) -> Maintained {
    let mut spec = spec.clone();
    let auto = |field: &str| {
        spec.pointer(&format!("/maintenance/autoUpdate/{field}"))
            .and_then(Value::as_bool)
            // gardener-apiserver defaults both to true.
            .unwrap_or(true)
    };
    let (auto_kubernetes, auto_images) = (auto("kubernetesVersion"), auto("machineImageVersion"));
    let previous_cp = spec
        .pointer("/kubernetes/version")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    let mut images = machine_images(&mut spec, profile, &previous_cp, auto_images, now);
    images.sort_by(|a, b| step_pool(a).cmp(step_pool(b)));

    let kubernetes_versions: Vec<ProfileVersion> = profile
        .pointer("/kubernetes/versions")
        .and_then(Value::as_array)
        .map(|entries| {
            entries
                .iter()
                .filter_map(|e| ProfileVersion::from_json(e, now))
                .collect()
        })
        .unwrap_or_default();
    let mut steps = Vec::new();
    let mut cp = previous_cp.clone();
    if !previous_cp.is_empty() {
        match kubernetes_target(&previous_cp, &kubernetes_versions, auto_kubernetes) {
            Ok(Some(target)) => {
                steps.push(Step::ControlPlane(updated_kubernetes(
                    &previous_cp,
                    &target,
                )));
                cp = target.version;
                spec["kubernetes"]["version"] = Value::String(cp.clone());
            }
            Ok(None) => {}
            Err(error) => steps.push(Step::ControlPlane(failed_kubernetes(
                &previous_cp,
                &error,
                auto_kubernetes,
                &kubernetes_versions,
            ))),
        }
    }
    let mut pools = pool_kubernetes(&mut spec, &kubernetes_versions, &cp, auto_kubernetes);
    pools.sort_by(|a, b| step_pool(a).cmp(step_pool(b)));
    steps.extend(pools);
    steps.extend(images);
    Maintained { spec, steps }
}

impl Step {
    /// Whether the step failed.
    pub fn failed(&self) -> bool {
        let (Step::ControlPlane(outcome)
        | Step::PoolKubernetes(_, outcome)
        | Step::PoolImage(_, outcome)
        | Step::Rotation(_, outcome)) = self;
        matches!(outcome, Outcome::Failed { .. })
    }
}

fn step_pool(step: &Step) -> &str {
    match step {
        Step::ControlPlane(_) => "",
        Step::PoolKubernetes(pool, _) | Step::PoolImage(pool, _) | Step::Rotation(pool, _) => pool,
    }
}

fn kubernetes_reason(why: Why) -> &'static str {
    match why {
        Why::Missing => "Version does not exist in CloudProfile",
        Why::Expired => "Kubernetes version expired - force update required",
        Why::Auto => "Automatic update of Kubernetes version configured",
    }
}

fn updated_kubernetes(from: &str, target: &Target) -> Outcome {
    Outcome::Updated {
        description: format!(
            "Updated Kubernetes version from \"{from}\" to \"{}\"",
            target.version
        ),
        reason: kubernetes_reason(target.why).to_owned(),
    }
}

fn failed_kubernetes(
    current: &str,
    error: &versions::NoSuitableVersion,
    auto: bool,
    profile: &[ProfileVersion],
) -> Outcome {
    let why = if profile.iter().all(|v| v.text != current) {
        Why::Missing
    } else if auto {
        Why::Auto
    } else {
        Why::Expired
    };
    Outcome::Failed {
        error: format!("could not determine higher suitable version than \"{current}\": {error}"),
        reason: kubernetes_reason(why).to_owned(),
    }
}

/// Pools with their own Kubernetes version: moved like the control plane, capped at `cp`.
fn pool_kubernetes(
    spec: &mut Value,
    profile: &[ProfileVersion],
    cp: &str,
    auto: bool,
) -> Vec<Step> {
    let mut steps = Vec::new();
    let Some(workers) = spec
        .pointer_mut("/provider/workers")
        .and_then(Value::as_array_mut)
    else {
        return steps;
    };
    for worker in workers {
        let name = worker
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        let Some(current) = worker
            .pointer("/kubernetes/version")
            .and_then(Value::as_str)
            .map(str::to_owned)
        else {
            continue;
        };
        match kubernetes_target(&current, profile, auto) {
            Ok(Some(mut target)) => {
                if let (Some(wanted), Some(cap)) =
                    (Version::parse(&target.version), Version::parse(cp))
                    && wanted > cap
                {
                    target.version = cp.to_owned();
                }
                if target.version != current {
                    worker["kubernetes"]["version"] = Value::String(target.version.clone());
                    steps.push(Step::PoolKubernetes(
                        name,
                        updated_kubernetes(&current, &target),
                    ));
                }
            }
            Ok(None) => {}
            Err(error) => steps.push(Step::PoolKubernetes(
                name,
                failed_kubernetes(&current, &error, auto, profile),
            )),
        }
    }
    steps
}

/// Machine image updates of every pool (§6.3); a pool whose image or machine type is not in the
/// profile ends the step (its earlier pools' updates stay and are reported).
fn machine_images(
    spec: &mut Value,
    profile: &Value,
    cp: &str,
    auto: bool,
    now: Timestamp,
) -> Vec<Step> {
    let mut steps = Vec::new();
    let machine_types: Vec<&str> = profile
        .get("machineTypes")
        .and_then(Value::as_array)
        .map(|types| {
            types
                .iter()
                .filter_map(|t| t.get("name")?.as_str())
                .collect()
        })
        .unwrap_or_default();
    let Some(workers) = spec
        .pointer_mut("/provider/workers")
        .and_then(Value::as_array_mut)
    else {
        return steps;
    };
    for worker in workers {
        let pool = worker
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        let (Some(image), Some(current)) = (
            worker
                .pointer("/machine/image/name")
                .and_then(Value::as_str)
                .map(str::to_owned),
            worker
                .pointer("/machine/image/version")
                .and_then(Value::as_str)
                .map(str::to_owned),
        ) else {
            continue;
        };
        let machine_type = worker
            .pointer("/machine/type")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let profile_image = profile
            .get("machineImages")
            .and_then(Value::as_array)
            .and_then(|images| {
                images
                    .iter()
                    .find(|i| i.get("name").and_then(Value::as_str) == Some(image.as_str()))
            });
        let Some(profile_image) = profile_image.filter(|_| machine_types.contains(&machine_type))
        else {
            tracing::debug!(pool = %pool, image = %image, "machine image or type not in the cloud profile; image maintenance stops");
            break;
        };
        let strategy = Strategy::parse(profile_image.get("updateStrategy").and_then(Value::as_str));
        let kubelet_version = worker
            .pointer("/kubernetes/version")
            .and_then(Value::as_str)
            .unwrap_or(cp)
            .to_owned();
        let candidates = image_candidates(worker, profile_image, &kubelet_version, now);
        let reason = |why: Why| match why {
            Why::Missing => "Version does not exist in CloudProfile".to_owned(),
            Why::Expired => format!(
                "Machine image version expired - force update required (image update strategy: {})",
                strategy.as_str()
            ),
            Why::Auto => format!(
                "Automatic update of the machine image version is configured (image update strategy: {})",
                strategy.as_str()
            ),
        };
        match machine_image_target(&image, &current, &candidates, strategy, auto) {
            Ok(Some(target)) => {
                worker["machine"]["image"]["version"] = Value::String(target.version.clone());
                steps.push(Step::PoolImage(
                    pool,
                    Outcome::Updated {
                        description: format!(
                            "Updated machine image \"{image}\" from \"{current}\" to \"{}\"",
                            target.version
                        ),
                        reason: reason(target.why),
                    },
                ));
            }
            Ok(None) => {}
            Err(error) => {
                let why = if candidates.iter().all(|v| v.text != current) {
                    Why::Missing
                } else if auto {
                    Why::Auto
                } else {
                    Why::Expired
                };
                steps.push(Step::PoolImage(
                    pool,
                    Outcome::Failed {
                        error: format!(
                            "failed to update machine image \"{image}\": failed to determine the target version for maintenance of machine image \"{image}\" with strategy \"{}\": {error}",
                            strategy.as_str()
                        ),
                        reason: reason(why),
                    },
                ));
            }
        }
    }
    steps
}

/// Versions of `profile_image` the pool can run: its architecture (default `amd64`), its CRI
/// (default `containerd`) with all its container runtimes, and a `kubeletVersionConstraint` of
/// the form `>= X` / `< X` (the forms CloudProfiles use) holding for `kubelet_version`.
/// Machine capabilities and in-place updates are not modelled.
fn image_candidates(
    worker: &Value,
    profile_image: &Value,
    kubelet_version: &str,
    now: Timestamp,
) -> Vec<ProfileVersion> {
    let architecture = worker
        .pointer("/machine/architecture")
        .and_then(Value::as_str)
        .unwrap_or("amd64");
    let cri = worker
        .pointer("/cri/name")
        .and_then(Value::as_str)
        .unwrap_or("containerd");
    let runtimes: Vec<&str> = worker
        .pointer("/cri/containerRuntimes")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(|r| r.get("type")?.as_str()).collect())
        .unwrap_or_default();
    let kubelet = Version::parse(kubelet_version);
    profile_image
        .get("versions")
        .and_then(Value::as_array)
        .map(|entries| {
            entries
                .iter()
                .filter(|entry| {
                    let architectures: Vec<&str> = entry
                        .get("architectures")
                        .and_then(Value::as_array)
                        .map(|a| a.iter().filter_map(Value::as_str).collect())
                        .unwrap_or_else(|| vec!["amd64"]);
                    architectures.contains(&architecture)
                        && supports_cri(entry, cri, &runtimes)
                        && kubelet_allowed(entry, kubelet.as_ref())
                })
                .filter_map(|entry| ProfileVersion::from_json(entry, now))
                .collect()
        })
        .unwrap_or_default()
}

fn supports_cri(entry: &Value, cri: &str, runtimes: &[&str]) -> bool {
    let Some(entries) = entry
        .get("cri")
        .and_then(Value::as_array)
        .filter(|e| !e.is_empty())
    else {
        return cri == "containerd" && runtimes.is_empty();
    };
    entries.iter().any(|entry| {
        entry.get("name").and_then(Value::as_str) == Some(cri) && {
            let offered: Vec<&str> = entry
                .get("containerRuntimes")
                .and_then(Value::as_array)
                .map(|r| r.iter().filter_map(|r| r.get("type")?.as_str()).collect())
                .unwrap_or_default();
            runtimes.iter().all(|runtime| offered.contains(runtime))
        }
    })
}

fn kubelet_allowed(entry: &Value, kubelet: Option<&Version>) -> bool {
    let Some(constraint) = entry
        .get("kubeletVersionConstraint")
        .and_then(Value::as_str)
    else {
        return true;
    };
    let Some(kubelet) = kubelet else {
        return false;
    };
    constraint.split(',').all(|part| {
        let part = part.trim();
        let (op, version) = ["<=", ">=", "<", ">", "="]
            .iter()
            .find_map(|op| part.strip_prefix(op).map(|rest| (*op, rest.trim())))
            .unwrap_or(("=", part));
        let Some(bound) = Version::parse(version) else {
            return false;
        };
        match op {
            "<=" => *kubelet <= bound,
            ">=" => *kubelet >= bound,
            "<" => *kubelet < bound,
            ">" => *kubelet > bound,
            _ => *kubelet == bound,
        }
    })
}

/// `status.lastMaintenance` text: `(description, failureReason)`; `None` when no step ran.
pub fn summary(steps: &[Step], texts: &[String]) -> Option<(String, Option<String>)> {
    if steps.is_empty() && texts.is_empty() {
        return None;
    }
    let mut parts = Vec::new();
    let mut failures = Vec::new();
    for step in steps {
        let (subject, kind) = match step {
            Step::ControlPlane(_) => ("Control Plane".to_owned(), "Kubernetes"),
            Step::PoolKubernetes(pool, _) => (format!("Worker pool \"{pool}\""), "Kubernetes"),
            Step::PoolImage(pool, _) => (format!("Worker pool \"{pool}\""), "image"),
            Step::Rotation(key, _) => (format!("Credentials \"{key}\""), "rotation"),
        };
        let outcome = match step {
            Step::ControlPlane(o)
            | Step::PoolKubernetes(_, o)
            | Step::PoolImage(_, o)
            | Step::Rotation(_, o) => o,
        };
        match outcome {
            Outcome::Updated {
                description,
                reason,
            } => parts.push(format!("{subject}: {description}. Reason: {reason}")),
            Outcome::Failed { error, reason } => {
                match (step, kind) {
                    (Step::ControlPlane(_), _) => {
                        parts.push(format!("{subject}: Kubernetes version update failed. Reason for update: {reason}"));
                        failures.push(format!(
                            "{subject}: Kubernetes maintenance failure due to: {error}"
                        ));
                    }
                    (Step::Rotation(..), _) => {
                        parts.push(format!(
                            "{subject}: Automatic rotation failed. Reason for update: {reason}"
                        ));
                        failures.push(format!(
                            "{subject}: Automatic rotation failure due to: {error}"
                        ));
                    }
                    (_, "Kubernetes") => {
                        parts.push(format!("{subject}: Kubernetes version maintenance failed. Reason for update: {reason}"));
                        failures.push(format!(
                            "{subject}: Kubernetes maintenance failure due to: {error}"
                        ));
                    }
                    _ => {
                        parts.push(format!("{subject}: machine image version maintenance failed. Reason for update: {reason}"));
                        failures.push(format!("{subject}: {error}"));
                    }
                }
            }
        }
    }
    parts.extend(texts.iter().cloned());
    let failed = failures.len();
    let prefix = if failed == 0 {
        "All maintenance operations successful. ".to_owned()
    } else {
        format!(
            "({}/{}) maintenance operations successful. ",
            steps.len() - failed,
            steps.len()
        )
    };
    let description = format!("{prefix}{}", parts.join(", "))
        .trim_end()
        .to_owned();
    Some((
        description,
        (!failures.is_empty()).then(|| failures.join(", ")),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn now() -> Timestamp {
        "2025-06-01T00:00:00Z".parse().expect("time")
    }

    fn profile() -> Value {
        serde_json::json!({
            "kubernetes": {"versions": [
                {"version": "1.31.1"},
                {"version": "1.31.2"},
                {"version": "1.32.0", "classification": "preview"},
            ]},
            "machineTypes": [{"name": "m5.large"}],
            "machineImages": [{"name": "gardenlinux", "updateStrategy": "minor", "versions": [
                {"version": "1.0.0", "expirationDate": "2025-01-01T00:00:00Z"},
                {"version": "1.1.0"},
                {"version": "1.2.0", "architectures": ["arm64"]},
                {"version": "1.3.0", "kubeletVersionConstraint": ">= 1.32"},
            ]}],
        })
    }

    fn shoot_spec(auto: bool) -> Value {
        serde_json::json!({
            "kubernetes": {"version": "1.31.1"},
            "maintenance": {"autoUpdate": {"kubernetesVersion": auto, "machineImageVersion": auto}},
            "provider": {"type": "local", "workers": [
                {"name": "b", "machine": {"type": "m5.large", "image": {"name": "gardenlinux", "version": "1.0.0"}},
                 "kubernetes": {"version": "1.31.1"}},
                {"name": "a", "machine": {"type": "m5.large", "image": {"name": "gardenlinux", "version": "1.1.0"}}},
            ]},
        })
    }

    #[test]
    fn maintenance_updates_control_plane_pools_and_images_and_describes_them() {
        let done = maintain(&shoot_spec(true), &profile(), now());
        assert_eq!(done.spec["kubernetes"]["version"], "1.31.2");
        assert_eq!(
            done.spec["provider"]["workers"][0]["kubernetes"]["version"],
            "1.31.2"
        );
        // 1.2.0 is arm64 only and 1.3.0 needs kubelet 1.32: the expired 1.0.0 goes to 1.1.0.
        assert_eq!(
            done.spec["provider"]["workers"][0]["machine"]["image"]["version"],
            "1.1.0"
        );
        assert_eq!(
            done.spec["provider"]["workers"][1]["machine"]["image"]["version"],
            "1.1.0"
        );
        let (description, failure) = summary(&done.steps, &[]).expect("steps ran");
        assert_eq!(
            description,
            "All maintenance operations successful. \
             Control Plane: Updated Kubernetes version from \"1.31.1\" to \"1.31.2\". Reason: Automatic update of Kubernetes version configured, \
             Worker pool \"b\": Updated Kubernetes version from \"1.31.1\" to \"1.31.2\". Reason: Automatic update of Kubernetes version configured, \
             Worker pool \"b\": Updated machine image \"gardenlinux\" from \"1.0.0\" to \"1.1.0\". Reason: Machine image version expired - force update required (image update strategy: minor)"
        );
        assert_eq!(failure, None);
    }

    #[test]
    fn nothing_happens_without_auto_update_and_expiry() {
        let mut spec = shoot_spec(false);
        spec["provider"]["workers"][0]["machine"]["image"]["version"] = "1.1.0".into();
        let done = maintain(&spec, &profile(), now());
        assert!(done.steps.is_empty());
        assert_eq!(done.spec, spec);
        assert_eq!(summary(&done.steps, &[]), None);
    }

    #[test]
    fn pool_versions_are_capped_at_the_new_control_plane_version() {
        let mut spec = shoot_spec(false);
        // The pool's version is missing from the profile: forced, but not above the CP.
        spec["provider"]["workers"][0]["kubernetes"]["version"] = "1.30.9".into();
        spec["provider"]["workers"][0]["machine"]["image"]["version"] = "1.1.0".into();
        let mut profile = profile();
        profile["kubernetes"]["versions"] = serde_json::json!([
            {"version": "1.30.1"}, {"version": "1.31.1"}, {"version": "1.31.5"},
        ]);
        spec["kubernetes"]["version"] = "1.30.1".into();
        let done = maintain(&spec, &profile, now());
        assert_eq!(done.spec["kubernetes"]["version"], "1.30.1");
        assert_eq!(
            done.spec["provider"]["workers"][0]["kubernetes"]["version"],
            "1.30.1"
        );
    }

    #[test]
    fn failures_are_counted_and_explained() {
        let mut spec = shoot_spec(false);
        spec["kubernetes"]["version"] = "1.29.0".into();
        spec["provider"]["workers"][0]["kubernetes"]["version"] = "1.31.1".into();
        spec["provider"]["workers"][0]["machine"]["image"]["version"] = "1.1.0".into();
        let done = maintain(&spec, &profile(), now());
        let (description, failure) = summary(&done.steps, &[]).expect("steps ran");
        assert_eq!(
            description,
            "(0/1) maintenance operations successful. Control Plane: Kubernetes version update failed. Reason for update: Version does not exist in CloudProfile"
        );
        assert_eq!(
            failure.as_deref(),
            Some(
                "Control Plane: Kubernetes maintenance failure due to: could not determine higher suitable version than \"1.29.0\": cannot perform forceful update of expired version \"1.29.0\". No suitable version found in CloudProfile - this is most likely a misconfiguration of the CloudProfile"
            )
        );
    }

    #[test]
    fn kubelet_constraints_compare_versions() {
        let entry = serde_json::json!({"kubeletVersionConstraint": ">= 1.26, < 1.32"});
        for (kubelet, allowed) in [
            ("1.26.0", true),
            ("1.31.9", true),
            ("1.32.0", false),
            ("1.25.3", false),
        ] {
            assert_eq!(
                kubelet_allowed(&entry, Version::parse(kubelet).as_ref()),
                allowed,
                "{kubelet}"
            );
        }
    }
}

//! A measured component (the agent, the garden controller) as a separate process, so that its
//! memory and CPU are its own: spawning it, sampling `/proc/<pid>` and stopping it.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde::Serialize;
use tokio::process::{Child, Command};
use tokio_util::sync::CancellationToken;

use crate::Error;

/// Linux's USER_HZ: `/proc/<pid>/stat` reports CPU time in these ticks. It is part of the kernel
/// ABI and 100 on every architecture Linux supports today.
const CLOCK_TICKS_PER_SECOND: f64 = 100.0;

/// One measurement of the process.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Sample {
    /// Seconds since the process was started.
    pub at_s: f64,
    /// Resident set size in MiB.
    pub rss_mib: f64,
    /// The anonymous part of it (heap, stacks): what the process allocated.
    pub rss_anon_mib: f64,
    /// The file-backed part of it: the binary's code and data pages the process touched.
    pub rss_file_mib: f64,
    /// CPU seconds (user + system) used so far.
    pub cpu_s: f64,
}

/// A running component process and its samples.
pub struct MeasuredProcess {
    component: &'static str,
    child: Child,
    pid: u32,
    started: Instant,
    samples: Arc<Mutex<Vec<Sample>>>,
    stop_sampling: CancellationToken,
}

impl MeasuredProcess {
    /// Starts `binary [agent] --config config` (`seedlet agent` or the slim `seedlet-agent`),
    /// logging to `log`, and samples it every `interval`.
    pub fn spawn(
        binary: &Path,
        config: &Path,
        log: &Path,
        interval: Duration,
    ) -> Result<Self, Error> {
        let args = daemon_args(binary, "agent", config);
        Self::spawn_component("agent", binary, &args, log, interval, &[])
    }

    /// Starts `binary args…` as `component` (for errors) with `env` added to the environment,
    /// logging to `log`, and samples it every `interval`.
    pub fn spawn_component(
        component: &'static str,
        binary: &Path,
        args: &[OsString],
        log: &Path,
        interval: Duration,
        env: &[(&str, &str)],
    ) -> Result<Self, Error> {
        let log_file = |path: &Path| {
            std::fs::File::create(path).map_err(|source| Error::Io {
                path: path.to_owned(),
                source,
            })
        };
        let stdout = log_file(log)?;
        let stderr = stdout.try_clone().map_err(|source| Error::Io {
            path: log.to_owned(),
            source,
        })?;
        let child = Command::new(binary)
            .args(args)
            .env_remove("KUBECONFIG")
            .env_remove("GARDEN_KUBECONFIG")
            .envs(env.iter().copied())
            .stdin(Stdio::null())
            .stdout(stdout)
            .stderr(stderr)
            .kill_on_drop(true)
            .spawn()
            .map_err(|source| Error::Spawn {
                binary: binary.to_owned(),
                source,
            })?;
        let pid = child.id().ok_or_else(|| Error::Exited {
            component,
            status: "exited before its pid was read".to_owned(),
            log: log.to_owned(),
        })?;
        let started = Instant::now();
        let samples = Arc::new(Mutex::new(Vec::new()));
        let stop_sampling = CancellationToken::new();
        tokio::spawn(sample_loop(
            pid,
            started,
            interval,
            samples.clone(),
            stop_sampling.clone(),
        ));
        Ok(Self {
            component,
            child,
            pid,
            started,
            samples,
            stop_sampling,
        })
    }

    /// When the process was started.
    pub fn started(&self) -> Instant {
        self.started
    }

    /// Peak resident set size so far (`VmHWM`), in MiB.
    pub fn peak_rss_mib(&self) -> Option<f64> {
        read_status_kib(self.pid, "VmHWM:").map(kib_to_mib)
    }

    /// The samples taken so far.
    pub fn samples(&self) -> Vec<Sample> {
        self.samples
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    /// Fails when the process has exited (it never should during a run).
    pub fn ensure_running(&mut self, log: &Path) -> Result<(), Error> {
        match self.child.try_wait() {
            Ok(None) => Ok(()),
            Ok(Some(status)) => Err(Error::Exited {
                component: self.component,
                status: status.to_string(),
                log: log.to_owned(),
            }),
            Err(source) => Err(Error::Io {
                path: PathBuf::from(format!("/proc/{}", self.pid)),
                source,
            }),
        }
    }

    /// Stops sampling and kills the process.
    pub async fn stop(mut self) {
        self.stop_sampling.cancel();
        if let Err(error) = self.child.kill().await {
            tracing::warn!(error = %error, component = self.component, "stopping the process failed");
        }
    }
}

async fn sample_loop(
    pid: u32,
    started: Instant,
    interval: Duration,
    samples: Arc<Mutex<Vec<Sample>>>,
    stop: CancellationToken,
) {
    let mut ticker = tokio::time::interval(interval);
    loop {
        tokio::select! {
            _ = ticker.tick() => {}
            _ = stop.cancelled() => return,
        }
        let Ok(status) = std::fs::read_to_string(format!("/proc/{pid}/status")) else {
            return;
        };
        let (Some(rss_kib), Some(cpu_s)) =
            (parse_status_kib(&status, "VmRSS:"), read_cpu_seconds(pid))
        else {
            return;
        };
        let field_mib = |field| kib_to_mib(parse_status_kib(&status, field).unwrap_or(0));
        samples
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .push(Sample {
                at_s: crate::stats::round2(started.elapsed().as_secs_f64()),
                rss_mib: kib_to_mib(rss_kib),
                rss_anon_mib: field_mib("RssAnon:"),
                rss_file_mib: field_mib("RssFile:"),
                cpu_s,
            });
    }
}

/// The arguments that run `daemon` (`agent` or `garden`) from `binary` with `config`: the slim
/// daemon binary (`seedlet-agent`, `seedlet-garden`) takes `--config` alone; any other binary is
/// taken for the all-in-one `seedlet`, which needs the subcommand first.
pub(crate) fn daemon_args(binary: &Path, daemon: &str, config: &Path) -> Vec<OsString> {
    let slim = format!("seedlet-{daemon}");
    let mut args: Vec<OsString> = Vec::new();
    if binary.file_stem().and_then(|name| name.to_str()) != Some(slim.as_str()) {
        args.push(daemon.into());
    }
    args.extend(["--config".into(), config.as_os_str().to_owned()]);
    args
}

fn kib_to_mib(kib: u64) -> f64 {
    crate::stats::round2(kib as f64 / 1024.0)
}

/// A `kB` field of `/proc/<pid>/status`.
fn read_status_kib(pid: u32, field: &str) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    parse_status_kib(&status, field)
}

fn parse_status_kib(status: &str, field: &str) -> Option<u64> {
    status
        .lines()
        .find_map(|line| line.strip_prefix(field))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|value| value.parse().ok())
}

/// User + system CPU seconds from `/proc/<pid>/stat`.
fn read_cpu_seconds(pid: u32) -> Option<f64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    parse_cpu_seconds(&stat)
}

fn parse_cpu_seconds(stat: &str) -> Option<f64> {
    // The command name (field 2) may contain spaces and parentheses: fields are counted after
    // the last ')'. utime and stime are fields 14 and 15, i.e. the 12th and 13th after it.
    let after_name = &stat[stat.rfind(')')? + 1..];
    let mut fields = after_name.split_whitespace().skip(11);
    let utime: f64 = fields.next()?.parse().ok()?;
    let stime: f64 = fields.next()?.parse().ok()?;
    Some(crate::stats::round2(
        (utime + stime) / CLOCK_TICKS_PER_SECOND,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slim_daemon_binaries_take_no_subcommand() {
        let config = Path::new("/tmp/c.yaml");
        for (binary, daemon, expected) in [
            (
                "/bin/seedlet-agent",
                "agent",
                vec!["--config", "/tmp/c.yaml"],
            ),
            (
                "/bin/seedlet-garden",
                "garden",
                vec!["--config", "/tmp/c.yaml"],
            ),
            (
                "/bin/seedlet",
                "agent",
                vec!["agent", "--config", "/tmp/c.yaml"],
            ),
            (
                "/bin/seedlet",
                "garden",
                vec!["garden", "--config", "/tmp/c.yaml"],
            ),
            // The other daemon's slim binary is not this daemon's: it gets the subcommand.
            (
                "/bin/seedlet-agent",
                "garden",
                vec!["garden", "--config", "/tmp/c.yaml"],
            ),
            (
                "target/debug/seedlet-garden",
                "garden",
                vec!["--config", "/tmp/c.yaml"],
            ),
        ] {
            let expected: Vec<OsString> = expected.into_iter().map(OsString::from).collect();
            assert_eq!(
                daemon_args(Path::new(binary), daemon, config),
                expected,
                "{binary} {daemon}"
            );
        }
    }

    #[test]
    fn status_fields_are_read_in_kib() {
        let status = "Name:\tseedlet\nVmHWM:\t   40960 kB\nVmRSS:\t   20480 kB\n";
        assert_eq!(parse_status_kib(status, "VmRSS:"), Some(20_480));
        assert_eq!(parse_status_kib(status, "VmHWM:"), Some(40_960));
        assert_eq!(parse_status_kib(status, "VmSwap:"), None);
    }

    #[test]
    fn cpu_time_is_counted_after_the_command_name_even_with_spaces() {
        let stat = "4242 (seed let) S 1 4242 4242 0 -1 4194560 2660 0 0 0 150 50 0 0 20 0 9 0";
        assert_eq!(parse_cpu_seconds(stat), Some(2.0));
        assert_eq!(parse_cpu_seconds("garbage"), None);
    }

    #[test]
    fn this_process_can_be_sampled() {
        let pid = std::process::id();
        assert!(read_status_kib(pid, "VmRSS:").is_some_and(|kib| kib > 0));
        assert!(read_cpu_seconds(pid).is_some());
    }
}

//! The two daemons of the real-cluster suite as real processes (`seedlet garden --config`,
//! `seedlet agent --config`), each with a kubeconfig for its chart's ServiceAccount, its log in a
//! file, SIGKILL, and the log analysis the steady-state check needs (repeated WARN/ERROR lines).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Stdio;

use kube::config::Kubeconfig;
use serde_json::Value;
use tokio::process::{Child, Command};

/// How to start one daemon, and its log.
pub struct Daemon {
    /// `garden` or `agent`.
    pub role: &'static str,
    config: PathBuf,
    kubeconfig: PathBuf,
    /// The daemon's log (every start appends).
    pub log: PathBuf,
    child: Option<Child>,
}

impl Daemon {
    /// Writes `config` (as YAML) and `kubeconfig` (0600) into `dir` as `<name>.yaml` and
    /// `<name>.kubeconfig`.
    pub fn prepare(
        role: &'static str,
        dir: &Path,
        name: &str,
        config: &Value,
        kubeconfig: &Kubeconfig,
    ) -> Daemon {
        let config_path = dir.join(format!("{name}.yaml"));
        std::fs::write(
            &config_path,
            serde_yaml::to_string(config).expect("config yaml"),
        )
        .expect("config written");
        let kubeconfig_path = dir.join(format!("{name}.kubeconfig"));
        seedlet_testkit::realkube::write_private(
            &kubeconfig_path,
            &serde_yaml::to_string(kubeconfig).expect("kubeconfig yaml"),
        );
        Daemon {
            role,
            config: config_path,
            kubeconfig: kubeconfig_path,
            log: dir.join(format!("{name}.log")),
            child: None,
        }
    }

    /// Starts the process (its seed or garden client from `KUBECONFIG`, as in a pod's or a
    /// systemd unit's environment).
    pub fn start(&mut self) {
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.log)
            .expect("log file");
        let child = Command::new(env!("CARGO_BIN_EXE_seedlet"))
            .arg(self.role)
            .arg("--config")
            .arg(&self.config)
            .env("KUBECONFIG", &self.kubeconfig)
            .env_remove("GARDEN_KUBECONFIG")
            // The chart's logLevel decides, as in a pod; SEEDLET_REAL_LOG (RUST_LOG directives)
            // raises it when a run needs investigating.
            .env(
                "RUST_LOG",
                std::env::var("SEEDLET_REAL_LOG").unwrap_or_default(),
            )
            .stdin(Stdio::null())
            .stdout(log.try_clone().expect("log handle"))
            .stderr(log)
            .kill_on_drop(true)
            .spawn()
            .unwrap_or_else(|error| panic!("seedlet {} starts: {error}", self.role));
        self.child = Some(child);
    }

    /// Whether the process runs.
    pub fn alive(&mut self) -> bool {
        self.child
            .as_mut()
            .is_some_and(|child| matches!(child.try_wait(), Ok(None)))
    }

    /// SIGKILL and reap.
    pub async fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill().await;
        }
    }

    /// SIGTERM and wait for the exit.
    pub async fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            if let Some(pid) = child.id() {
                let _ = std::process::Command::new("kill")
                    .args(["-TERM", &pid.to_string()])
                    .status();
            }
            let _ = tokio::time::timeout(std::time::Duration::from_secs(20), child.wait()).await;
            let _ = child.kill().await;
        }
    }

    /// The last `lines` lines of the log.
    pub fn log_tail(&self, lines: usize) -> String {
        seedlet_testkit::realkube::tail(&self.log, lines)
    }

    /// The log's length in bytes now (to look only at what comes after).
    pub fn log_position(&self) -> u64 {
        std::fs::metadata(&self.log).map(|m| m.len()).unwrap_or(0)
    }

    /// WARN and ERROR lines written after `position`.
    pub fn problems_since(&self, position: u64) -> Vec<LogLine> {
        let text = std::fs::read(&self.log).unwrap_or_default();
        let start = usize::try_from(position)
            .unwrap_or(usize::MAX)
            .min(text.len());
        String::from_utf8_lossy(&text[start..])
            .lines()
            .filter_map(LogLine::parse)
            .filter(|line| line.level == "WARN" || line.level == "ERROR")
            .collect()
    }
}

/// One JSON log line, reduced to what identifies a repeated message.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct LogLine {
    /// `INFO`, `WARN`, …
    pub level: String,
    /// The message.
    pub message: String,
    /// The controller or module that logged it.
    pub target: String,
    /// The error field, when there is one.
    pub error: String,
}

impl LogLine {
    fn parse(line: &str) -> Option<LogLine> {
        let value: Value = serde_json::from_str(line).ok()?;
        let text = |names: &[&str]| {
            names
                .iter()
                .find_map(|name| value.get(*name).and_then(Value::as_str))
                .unwrap_or_default()
                .to_owned()
        };
        Some(LogLine {
            level: value.get("level")?.as_str()?.to_ascii_uppercase(),
            message: text(&["msg", "message"]),
            target: text(&["logger", "target"]),
            error: text(&["error"]),
        })
    }
}

/// Lines that occur more than once, with their counts.
pub fn repeated(lines: &[LogLine]) -> BTreeMap<LogLine, usize> {
    let mut counts = BTreeMap::new();
    for line in lines {
        *counts.entry(line.clone()).or_insert(0) += 1;
    }
    counts.retain(|_, count| *count > 1);
    counts
}

impl Drop for Daemon {
    /// A failing test keeps the daemon's log in `$TMPDIR/seedlet-real-logs/` (its directory goes).
    fn drop(&mut self) {
        if std::thread::panicking() {
            let keep = std::env::temp_dir().join("seedlet-real-logs");
            let name = self
                .log
                .file_name()
                .map(|name| name.to_string_lossy().into_owned())
                .unwrap_or_default();
            let target = keep.join(format!("{}-{}-{name}", self.role, std::process::id()));
            if std::fs::create_dir_all(&keep).is_ok() && std::fs::copy(&self.log, &target).is_ok() {
                eprintln!("--- {} log kept in {} ---", self.role, target.display());
            }
        }
    }
}

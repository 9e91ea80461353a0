//! Build script of the seedlet binary: records the git commit for `seedlet version`.
//!
//! `SEEDLET_GIT_COMMIT` in the build environment wins (for builds from a source archive); otherwise
//! `git rev-parse --short HEAD` is asked, and "unknown" is used when git or the repository is missing.

use std::path::Path;
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-env-changed=SEEDLET_GIT_COMMIT");
    watch_git_head();
    let commit = std::env::var("SEEDLET_GIT_COMMIT")
        .ok()
        .filter(|commit| !commit.is_empty())
        .or_else(git_commit)
        .unwrap_or_else(|| "unknown".to_owned());
    println!("cargo:rustc-env=SEEDLET_GIT_COMMIT={commit}");
}

fn git_commit() -> Option<String> {
    let output = Command::new("git")
        .args(["rev-parse", "--short", "HEAD"])
        .output()
        .ok()?;
    if !output.status.success() {
        return None;
    }
    let commit = String::from_utf8(output.stdout).ok()?.trim().to_owned();
    (!commit.is_empty()).then_some(commit)
}

/// Re-runs this script when HEAD moves, so the recorded commit stays current.
fn watch_git_head() {
    let head = Path::new(".git/HEAD");
    if !head.is_file() {
        return;
    }
    println!("cargo:rerun-if-changed=.git/HEAD");
    let Ok(content) = std::fs::read_to_string(head) else {
        return;
    };
    if let Some(reference) = content.trim().strip_prefix("ref: ") {
        let path = Path::new(".git").join(reference);
        if path.is_file() {
            println!("cargo:rerun-if-changed={}", path.display());
        }
        if Path::new(".git/packed-refs").is_file() {
            println!("cargo:rerun-if-changed=.git/packed-refs");
        }
    }
}

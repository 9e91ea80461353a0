//! A seeded generator of malformed chart archives (as a ControllerDeployment's `rawChart`): broken
//! gzip, garbage and hostile tar entries, size limits, missing or invalid chart files, template
//! errors. Each case names the fragment the agent's condition message must contain.

use std::io::Write;

use flate2::Compression;
use flate2::write::GzEncoder;

use super::env::{CHART, Rng};

/// One malformed archive.
pub struct Case {
    /// What is wrong.
    pub name: &'static str,
    /// The archive bytes.
    pub archive: Vec<u8>,
    /// A fragment of the message that names the problem.
    pub names_problem: &'static str,
}

const CHART_YAML: &str = "apiVersion: v2\nname: ext\nversion: 0.1.0\n";
const VALUES: &str = "greeting: hello\n";
const CONFIG_MAP: &str = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-config\ndata:\n  greeting: {{ .Values.greeting | quote }}\n";
/// `chartrender::Limits::default().max_file_bytes` is 5 MiB.
const HUGE_FILE: usize = 6 * 1024 * 1024;

/// The malformed cases, with random cut points, garbage and names drawn from `rng`.
pub fn malformed_cases(rng: &mut Rng) -> Vec<Case> {
    let cut = rng.between(20, CHART.len() as u64 - 20) as usize;
    let mut garbage = vec![0u8; rng.between(600, 4000) as usize];
    garbage.iter_mut().for_each(|b| *b = rng.next() as u8);
    let traversal = [
        "ext/../../../etc/passwd",
        "ext/templates/../../../../x.yaml",
    ][rng.between(0, 2) as usize];
    let link_kind = [tar::EntryType::Symlink, tar::EntryType::Link][rng.between(0, 2) as usize];
    vec![
        Case {
            name: "truncated gzip",
            archive: CHART[..cut].to_vec(),
            names_problem: "reading chart archive",
        },
        Case {
            name: "not gzip at all",
            archive: garbage.clone(),
            names_problem: "corrupt gzip stream",
        },
        Case {
            name: "gzip of bytes that are no tar",
            archive: gzip(&garbage),
            names_problem: "corrupt tar stream",
        },
        Case {
            name: "path traversal",
            archive: tarball(&[
                entry("ext/Chart.yaml", CHART_YAML.as_bytes()),
                entry(traversal, b"x: 1\n"),
            ]),
            names_problem: "is not a safe relative path",
        },
        Case {
            name: "absolute path",
            archive: tarball(&[
                entry("ext/Chart.yaml", CHART_YAML.as_bytes()),
                entry("/etc/ext/values.yaml", b"x: 1\n"),
            ]),
            names_problem: "\"/etc/ext/values.yaml\" is not a safe relative path",
        },
        Case {
            name: "link entry",
            archive: tarball(&[
                entry("ext/Chart.yaml", CHART_YAML.as_bytes()),
                Entry {
                    name: "ext/templates/secret.yaml".into(),
                    kind: link_kind,
                    data: Vec::new(),
                    link: "/etc/shadow".into(),
                },
            ]),
            names_problem: "only regular files and directories are allowed",
        },
        Case {
            name: "file beyond the size limit",
            archive: tarball(&[
                entry("ext/Chart.yaml", CHART_YAML.as_bytes()),
                entry("ext/templates/huge.yaml", &vec![b'#'; HUGE_FILE]),
            ]),
            names_problem: "is larger than",
        },
        Case {
            name: "missing Chart.yaml",
            archive: tarball(&[
                entry("ext/values.yaml", VALUES.as_bytes()),
                entry("ext/templates/configmap.yaml", CONFIG_MAP.as_bytes()),
            ]),
            names_problem: "no Chart.yaml",
        },
        Case {
            name: "invalid YAML in Chart.yaml",
            archive: chart_with(&[("Chart.yaml", "name: [ext\nversion: {\n")]),
            names_problem: "Chart.yaml",
        },
        Case {
            name: "invalid YAML in values.yaml",
            archive: chart_with(&[("values.yaml", "greeting: [unclosed\n  - : :\n")]),
            names_problem: "values.yaml",
        },
        Case {
            name: "template syntax error",
            archive: chart_with(&[("templates/broken.yaml", "a: {{ if .Values.greeting }}\n")]),
            names_problem: "broken.yaml",
        },
        Case {
            name: "template renders invalid YAML",
            archive: chart_with(&[(
                "templates/invalid.yaml",
                "a: [{{ .Values.greeting }}\nb: }\n",
            )]),
            names_problem: "invalid.yaml",
        },
    ]
}

/// The good chart's files with `overrides` replacing or adding files (paths under `ext/`).
fn chart_with(overrides: &[(&str, &str)]) -> Vec<u8> {
    let mut files = vec![
        ("Chart.yaml", CHART_YAML),
        ("values.yaml", VALUES),
        ("templates/configmap.yaml", CONFIG_MAP),
    ];
    for (path, content) in overrides {
        match files.iter_mut().find(|(p, _)| p == path) {
            Some(file) => file.1 = content,
            None => files.push((path, content)),
        }
    }
    let entries: Vec<Entry> = files
        .iter()
        .map(|(path, content)| entry(&format!("ext/{path}"), content.as_bytes()))
        .collect();
    tarball(&entries)
}

struct Entry {
    name: String,
    kind: tar::EntryType,
    data: Vec<u8>,
    link: String,
}

fn entry(name: &str, data: &[u8]) -> Entry {
    Entry {
        name: name.into(),
        kind: tar::EntryType::Regular,
        data: data.to_vec(),
        link: String::new(),
    }
}

/// A gzipped tar written without the `tar` crate's path checks, so hostile names are possible.
fn tarball(entries: &[Entry]) -> Vec<u8> {
    let mut out = Vec::new();
    for entry in entries {
        let mut header = tar::Header::new_old();
        {
            let old = header.as_old_mut();
            old.name[..entry.name.len()].copy_from_slice(entry.name.as_bytes());
            old.linkname[..entry.link.len()].copy_from_slice(entry.link.as_bytes());
        }
        header.set_size(entry.data.len() as u64);
        header.set_mode(0o644);
        header.set_entry_type(entry.kind);
        header.set_cksum();
        out.extend_from_slice(header.as_bytes());
        out.extend_from_slice(&entry.data);
        out.extend(std::iter::repeat_n(
            0u8,
            (512 - entry.data.len() % 512) % 512,
        ));
    }
    out.extend(std::iter::repeat_n(0u8, 1024));
    gzip(&out)
}

fn gzip(data: &[u8]) -> Vec<u8> {
    let mut encoder = GzEncoder::new(Vec::new(), Compression::default());
    encoder.write_all(data).expect("writing to memory succeeds");
    encoder.finish().expect("finishing in memory succeeds")
}

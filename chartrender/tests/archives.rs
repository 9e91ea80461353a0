//! Malformed and hostile chart archives are rejected with the right error; good ones load.

mod common;

use common::{archive, gzip, raw_end, raw_entry};
use seedlet_chartrender::{Chart, ChartError, Limits, LoadError};

const CHART_YAML: &str = "apiVersion: v2\nname: c\nversion: 0.1.0\n";

fn load(bytes: &[u8]) -> Result<Chart, ChartError> {
    Chart::from_archive(bytes, &Limits::default())
}

fn with_entry(name: &str, kind: tar::EntryType, link: &str) -> Vec<u8> {
    let mut tar = Vec::new();
    raw_entry(
        &mut tar,
        "c/Chart.yaml",
        tar::EntryType::Regular,
        CHART_YAML.as_bytes(),
        "",
    );
    raw_entry(&mut tar, name, kind, b"", link);
    raw_end(&mut tar);
    gzip(&tar)
}

#[test]
fn well_formed_archive_with_nested_subchart_archive_loads() {
    let sub = archive(
        "sub",
        &[
            ("Chart.yaml", "name: sub\nversion: 0.0.1\n"),
            ("values.yaml", "a: 1\n"),
        ],
    );
    let mut tar = Vec::new();
    raw_entry(
        &mut tar,
        "c/Chart.yaml",
        tar::EntryType::Regular,
        CHART_YAML.as_bytes(),
        "",
    );
    raw_entry(
        &mut tar,
        "c/charts/sub-0.0.1.tgz",
        tar::EntryType::Regular,
        &sub,
        "",
    );
    raw_entry(
        &mut tar,
        "c/crds/x.yaml",
        tar::EntryType::Regular,
        b"kind: CustomResourceDefinition\n",
        "",
    );
    raw_end(&mut tar);
    let chart = load(&gzip(&tar)).unwrap();
    assert_eq!(chart.subcharts[0].name(), "sub");
    assert!(chart.files.iter().any(|f| f.name == "crds/x.yaml"));
    assert_eq!(chart.digest().len(), 64);
}

#[test]
fn corrupt_gzip_is_rejected() {
    let err = load(b"\x1f\x8b\x08\x00garbage that is not deflate").unwrap_err();
    assert!(
        matches!(err, ChartError::Load(LoadError::Gzip { .. })),
        "{err:?}"
    );
    let mut truncated = archive("c", &[("Chart.yaml", CHART_YAML)]);
    truncated.truncate(truncated.len() / 2);
    assert!(matches!(
        load(&truncated).unwrap_err(),
        ChartError::Load(LoadError::Gzip { .. } | LoadError::Tar { .. })
    ));
}

#[test]
fn corrupt_tar_is_rejected() {
    let mut block = vec![0xAAu8; 512];
    block.extend(vec![0u8; 1024]);
    let err = load(&gzip(&block)).unwrap_err();
    assert!(
        matches!(err, ChartError::Load(LoadError::Tar { .. })),
        "{err:?}"
    );
}

#[test]
fn tar_streams_cut_short_inside_a_valid_gzip_are_rejected() {
    // The tar stream ends inside a file's data, or in the padding after it: both are corrupt, not a shorter chart.
    let mut tar = Vec::new();
    raw_entry(
        &mut tar,
        "c/Chart.yaml",
        tar::EntryType::Regular,
        CHART_YAML.as_bytes(),
        "",
    );
    raw_entry(
        &mut tar,
        "c/templates/a.yaml",
        tar::EntryType::Regular,
        &[b'x'; 700],
        "",
    );
    let in_data = 512 * 3 + 300;
    let in_padding = 512 * 3 + 700;
    for cut in [in_data, in_padding] {
        let err = load(&gzip(&tar[..cut])).unwrap_err();
        assert!(
            matches!(err, ChartError::Load(LoadError::Tar { .. })),
            "cut at {cut}: {err:?}"
        );
    }
}

#[test]
fn parent_directory_and_absolute_paths_are_rejected() {
    for name in [
        "c/../../etc/passwd",
        "/etc/passwd",
        "C:/x",
        "c/templates/../../x",
    ] {
        let err = load(&with_entry(name, tar::EntryType::Regular, "")).unwrap_err();
        assert!(
            matches!(err, ChartError::Load(LoadError::UnsafePath { .. })),
            "{name}: {err:?}"
        );
    }
}

#[test]
fn links_and_devices_are_rejected() {
    for (kind, label) in [
        (tar::EntryType::Symlink, "symbolic link"),
        (tar::EntryType::Link, "hard link"),
        (tar::EntryType::Char, "character device"),
        (tar::EntryType::Block, "block device"),
        (tar::EntryType::Fifo, "fifo"),
    ] {
        let err = load(&with_entry("c/templates/x.yaml", kind, "/etc/passwd")).unwrap_err();
        match err {
            ChartError::Load(LoadError::ForbiddenEntry { kind, .. }) => assert_eq!(kind, label),
            other => panic!("{label}: {other:?}"),
        }
    }
}

#[test]
fn too_many_entries_are_rejected() {
    let names: Vec<String> = (0..30).map(|i| format!("files/{i}.txt")).collect();
    let mut files: Vec<(&str, &str)> = names.iter().map(|n| (n.as_str(), "x")).collect();
    files.push(("Chart.yaml", CHART_YAML));
    let limits = Limits {
        max_entries: 20,
        ..Limits::default()
    };
    let err = Chart::from_archive(&archive("c", &files), &limits).unwrap_err();
    assert!(
        matches!(
            err,
            ChartError::Load(LoadError::TooManyEntries { limit: 20 })
        ),
        "{err:?}"
    );
}

#[test]
fn gzip_bomb_over_the_total_bound_is_rejected() {
    // 3 × 512 KiB of zeros compress to a few KiB but decompress beyond a 1 MiB bound.
    let zeros = vec![0u8; 512 * 1024];
    let mut tar = Vec::new();
    raw_entry(
        &mut tar,
        "c/Chart.yaml",
        tar::EntryType::Regular,
        CHART_YAML.as_bytes(),
        "",
    );
    for i in 0..3 {
        raw_entry(
            &mut tar,
            &format!("c/files/{i}"),
            tar::EntryType::Regular,
            &zeros,
            "",
        );
    }
    raw_end(&mut tar);
    let bomb = gzip(&tar);
    assert!(bomb.len() < 64 * 1024, "the bomb is small: {}", bomb.len());
    let limits = Limits {
        max_total_bytes: 1024 * 1024,
        ..Limits::default()
    };
    let err = Chart::from_archive(&bomb, &limits).unwrap_err();
    assert!(
        matches!(err, ChartError::Load(LoadError::TooLarge { .. })),
        "{err:?}"
    );
}

#[test]
fn single_file_over_the_file_bound_is_rejected_with_default_limits() {
    let zeros = vec![0u8; 6 * 1024 * 1024];
    let mut tar = Vec::new();
    raw_entry(
        &mut tar,
        "c/Chart.yaml",
        tar::EntryType::Regular,
        CHART_YAML.as_bytes(),
        "",
    );
    raw_entry(&mut tar, "c/files/big", tar::EntryType::Regular, &zeros, "");
    raw_end(&mut tar);
    let err = load(&gzip(&tar)).unwrap_err();
    assert!(
        matches!(err, ChartError::Load(LoadError::FileTooLarge { .. })),
        "{err:?}"
    );
}

#[test]
fn missing_or_misplaced_chart_yaml_is_rejected() {
    let err = load(&archive("c", &[("values.yaml", "a: 1\n")])).unwrap_err();
    assert!(matches!(err, ChartError::MissingChartYaml), "{err:?}");
    let mut tar = Vec::new();
    raw_entry(
        &mut tar,
        "Chart.yaml",
        tar::EntryType::Regular,
        CHART_YAML.as_bytes(),
        "",
    );
    raw_end(&mut tar);
    assert!(matches!(
        load(&gzip(&tar)).unwrap_err(),
        ChartError::Load(LoadError::ChartYamlAtRoot)
    ));
    let err = load(&archive("c", &[("Chart.yaml", "name: c\n")])).unwrap_err();
    assert!(
        matches!(
            err,
            ChartError::MissingField {
                field: "version",
                ..
            }
        ),
        "{err:?}"
    );
}

#[test]
fn deeply_nested_subchart_archives_are_rejected() {
    let mut inner = archive("l0", &[("Chart.yaml", "name: l0\nversion: 0.0.1\n")]);
    for level in 1..12 {
        let mut tar = Vec::new();
        let chart_yaml = format!("name: l{level}\nversion: 0.0.1\n");
        raw_entry(
            &mut tar,
            &format!("l{level}/Chart.yaml"),
            tar::EntryType::Regular,
            chart_yaml.as_bytes(),
            "",
        );
        raw_entry(
            &mut tar,
            &format!("l{level}/charts/sub.tgz"),
            tar::EntryType::Regular,
            &inner,
            "",
        );
        raw_end(&mut tar);
        inner = gzip(&tar);
    }
    let err = load(&inner).unwrap_err();
    let mut source: &dyn std::error::Error = &err;
    while let Some(next) = source.source() {
        source = next;
    }
    assert!(source.to_string().contains("nested deeper"), "{err}");
}

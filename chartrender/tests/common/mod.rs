//! Helpers shared by the integration tests: in-memory chart archives, raw tar entries.

#![allow(dead_code)]

use std::io::Write;

use flate2::Compression;
use flate2::write::GzEncoder;
use seedlet_chartrender::{Chart, Limits, RenderOptions, Rendered, Renderer};

/// Gzips `data`.
pub fn gzip(data: &[u8]) -> Vec<u8> {
    let mut encoder = GzEncoder::new(Vec::new(), Compression::fast());
    encoder.write_all(data).expect("writing to memory succeeds");
    encoder.finish().expect("finishing in memory succeeds")
}

/// A raw tar entry written without the `tar` crate's path checks (so hostile names can be produced).
pub fn raw_entry(out: &mut Vec<u8>, name: &str, kind: tar::EntryType, data: &[u8], link: &str) {
    let mut header = tar::Header::new_old();
    {
        let old = header.as_old_mut();
        old.name[..name.len()].copy_from_slice(name.as_bytes());
        old.linkname[..link.len()].copy_from_slice(link.as_bytes());
    }
    header.set_size(data.len() as u64);
    header.set_mode(0o644);
    header.set_entry_type(kind);
    header.set_cksum();
    out.extend_from_slice(header.as_bytes());
    out.extend_from_slice(data);
    let padding = (512 - data.len() % 512) % 512;
    out.extend(std::iter::repeat_n(0u8, padding));
}

/// Finishes a raw tar stream.
pub fn raw_end(out: &mut Vec<u8>) {
    out.extend(std::iter::repeat_n(0u8, 1024));
}

/// A gzipped chart archive with the given files under `<top>/`.
pub fn archive(top: &str, files: &[(&str, &str)]) -> Vec<u8> {
    let mut tar = Vec::new();
    for (name, content) in files {
        raw_entry(
            &mut tar,
            &format!("{top}/{name}"),
            tar::EntryType::Regular,
            content.as_bytes(),
            "",
        );
    }
    raw_end(&mut tar);
    gzip(&tar)
}

/// Loads a chart named `test` with the given templates (path relative to `templates/`) and values.yaml.
pub fn chart(templates: &[(&str, &str)], values: &str) -> Chart {
    let mut files: Vec<(String, String)> = vec![
        (
            "Chart.yaml".into(),
            "apiVersion: v2\nname: test\nversion: 1.2.3\nappVersion: \"9.9\"\n".into(),
        ),
        ("values.yaml".into(), values.into()),
    ];
    files.extend(
        templates
            .iter()
            .map(|(name, content)| (format!("templates/{name}"), content.to_string())),
    );
    let borrowed: Vec<(&str, &str)> = files
        .iter()
        .map(|(a, b)| (a.as_str(), b.as_str()))
        .collect();
    Chart::from_archive(&archive("test", &borrowed), &Limits::default()).expect("test chart loads")
}

/// Renders a one-template chart and returns the template's text.
pub fn render_one(template: &str, values: &str) -> Result<String, String> {
    let chart = chart(&[("t.yaml", template)], values);
    render(&chart, serde_json::json!({})).map(|out| out.templates["test/templates/t.yaml"].clone())
}

/// Renders with release `rel` in namespace `ns`.
pub fn render(chart: &Chart, values: serde_json::Value) -> Result<Rendered, String> {
    let options = RenderOptions {
        release_name: "rel".into(),
        namespace: "ns".into(),
        values,
        ..RenderOptions::default()
    };
    Renderer::new()
        .render(chart, &options)
        .map_err(|e| e.to_string())
}

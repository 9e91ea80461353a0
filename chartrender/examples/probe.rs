//! Local probe (not committed): renders a chart folder and prints templates as JSON.
#![allow(clippy::unwrap_used)]
use seedlet_chartrender::{Chart, Limits, RenderOptions, Renderer};
fn main() {
    let dir = std::env::args().nth(1).unwrap();
    let chart = match Chart::from_dir(std::path::Path::new(&dir), &Limits::default()) {
        Ok(c) => c,
        Err(e) => {
            println!("LOAD ERROR: {e}");
            return;
        }
    };
    let options = RenderOptions {
        release_name: "rel".into(),
        namespace: "ns".into(),
        ..RenderOptions::default()
    };
    match Renderer::new().render(&chart, &options) {
        Ok(out) => println!("{}", serde_json::to_string(&out.templates).unwrap()),
        Err(e) => println!("ERROR: {e}"),
    }
}

//! seedlet command line: parses arguments and dispatches into the crates.
fn main() {}

//! Release builds embed `web/dist` (see `src/ui.rs`); rebuild this crate when the UI build
//! changes, or appears. Debug builds read the folder at run time and need nothing.

fn main() {
    let release = std::env::var_os("CARGO_CFG_DEBUG_ASSERTIONS").is_none();
    if !release {
        println!("cargo::rerun-if-changed=build.rs");
    } else if std::path::Path::new("../../web/dist").exists() {
        println!("cargo::rerun-if-changed=../../web/dist");
    } else {
        // Cargo reruns a build script watching a missing path on every build; watch the
        // parent, which changes when `npm run build` creates `dist`.
        println!("cargo::rerun-if-changed=../../web");
    }
}

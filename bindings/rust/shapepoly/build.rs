// Adds an rpath to libshapepoly.so's directory (found by shapepoly-sys's build script) to this
// package's tests, examples and doctests, so they run without LD_LIBRARY_PATH. Also extracts the
// ```rust blocks of the repository README so they run as doctests (`ReadmeDoctests`).
use std::env;
use std::fs;
use std::path::PathBuf;

fn main() {
    let dir = env::var("DEP_SHAPEPOLY_LIB_DIR").expect("shapepoly-sys sets DEP_SHAPEPOLY_LIB_DIR");
    println!("cargo:rustc-link-arg=-Wl,-rpath,{}", dir);
    println!("cargo:rerun-if-changed=build.rs");

    let readme = PathBuf::from(env::var("CARGO_MANIFEST_DIR").unwrap()).join("../../../README.md");
    println!("cargo:rerun-if-changed={}", readme.display());
    let text = fs::read_to_string(&readme).unwrap_or_default();
    let mut out = String::new();
    let mut in_rust = false;
    for line in text.lines() {
        let t = line.trim_start();
        if !in_rust && t.starts_with("```rust") {
            in_rust = true;
            out.push_str("```rust\n");
        } else if in_rust && t.starts_with("```") {
            in_rust = false;
            out.push_str("```\n\n");
        } else if in_rust {
            out.push_str(line);
            out.push('\n');
        }
    }
    let out_dir = PathBuf::from(env::var("OUT_DIR").unwrap());
    fs::write(out_dir.join("readme_rust.md"), out).unwrap();
}

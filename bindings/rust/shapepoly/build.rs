// Adds an rpath to libshapepoly.so's directory (found by shapepoly-sys's build script) to this
// package's tests, examples and doctests, so they run without LD_LIBRARY_PATH, and passes the
// directory on to packages that depend on this one (`links = "shapepoly-rs"`): their build
// script reads DEP_SHAPEPOLY_RS_LIB_DIR, since an rpath link argument does not propagate. Also
// extracts the ```rust blocks of the repository README and of bindings/rust/README.md so they
// run as doctests (`ReadmeDoctests`).
use std::env;
use std::fs;
use std::path::PathBuf;

fn main() {
    let dir = env::var("DEP_SHAPEPOLY_LIB_DIR").expect("shapepoly-sys sets DEP_SHAPEPOLY_LIB_DIR");
    println!("cargo:rustc-link-arg=-Wl,-rpath,{}", dir);
    println!("cargo:lib_dir={}", dir);
    println!("cargo:rerun-if-changed=build.rs");

    let manifest = PathBuf::from(env::var("CARGO_MANIFEST_DIR").unwrap());
    let mut out = String::new();
    for readme in [
        manifest.join("../../../README.md"),
        manifest.join("../README.md"),
    ] {
        println!("cargo:rerun-if-changed={}", readme.display());
        rust_blocks(&fs::read_to_string(&readme).unwrap_or_default(), &mut out);
    }
    let out_dir = PathBuf::from(env::var("OUT_DIR").unwrap());
    fs::write(out_dir.join("readme_rust.md"), out).unwrap();
}

/// Appends the ```rust blocks of a Markdown `text` to `out`, keeping their attributes
/// (```rust,no_run compiles without running).
fn rust_blocks(text: &str, out: &mut String) {
    let mut in_rust = false;
    for line in text.lines() {
        let t = line.trim_start();
        if !in_rust && t.starts_with("```rust") {
            in_rust = true;
            out.push_str(t.trim_end());
            out.push('\n');
        } else if in_rust && t.starts_with("```") {
            in_rust = false;
            out.push_str("```\n\n");
        } else if in_rust {
            out.push_str(line);
            out.push('\n');
        }
    }
}

// Links against libshapepoly.so. By default the staged copy `<repo>/build/lib/libshapepoly.so`
// (made by `make lib` / tools/stage_lib.sh; not bazel-bin, which follows the last build's
// configuration and may hold an ASan build). Override the directory with SHAPEPOLY_LIB_DIR.
use std::env;
use std::path::PathBuf;

fn main() {
    println!("cargo:rerun-if-env-changed=SHAPEPOLY_LIB_DIR");
    println!("cargo:rerun-if-changed=build.rs");
    let manifest = PathBuf::from(env::var("CARGO_MANIFEST_DIR").unwrap());
    let dir = match env::var_os("SHAPEPOLY_LIB_DIR") {
        Some(d) if !d.is_empty() => PathBuf::from(d),
        // bindings/rust/shapepoly-sys -> repository root -> build/lib
        _ => manifest.join("../../../build/lib"),
    };
    let dir = if dir.is_absolute() {
        dir
    } else {
        env::current_dir().unwrap().join(dir)
    };
    let so = dir.join("libshapepoly.so");
    if !so.exists() {
        panic!(
            "{} not found: run `make lib` (tools/stage_lib.sh) first, or set SHAPEPOLY_LIB_DIR",
            so.display()
        );
    }
    // Canonical path: no `..` in the rpath (build/lib is a plain directory, not a symlink).
    let dir = dir.canonicalize().unwrap_or(dir);
    println!("cargo:rerun-if-changed={}", so.display());
    println!("cargo:rustc-link-search=native={}", dir.display());
    println!("cargo:rustc-link-lib=dylib=shapepoly");
    // This crate's own tests; dependents read DEP_SHAPEPOLY_LIB_DIR and add the rpath themselves
    // (rustc-link-arg does not propagate to dependent packages).
    println!("cargo:rustc-link-arg=-Wl,-rpath,{}", dir.display());
    println!("cargo:lib_dir={}", dir.display());
}

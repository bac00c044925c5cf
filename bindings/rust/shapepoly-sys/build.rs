// Links against libshapepoly.so. By default the staged copy `<repo>/build/lib/libshapepoly.so`
// (made by `make lib` / tools/stage_lib.sh; not bazel-bin, which follows the last build's
// configuration and may hold an ASan build). SHAPEPOLY_LIB_DIR overrides the directory, e.g.
// `$PREFIX/lib` of `make install PREFIX=...`; a relative value is a path from the directory
// cargo was started in (not from this package's folder, where build scripts run).
use std::env;
use std::fs;
use std::path::{Path, PathBuf};

fn main() {
    println!("cargo:rerun-if-env-changed=SHAPEPOLY_LIB_DIR");
    println!("cargo:rerun-if-changed=build.rs");
    let manifest = PathBuf::from(env::var("CARGO_MANIFEST_DIR").unwrap());
    let (dir, overridden) = match env::var_os("SHAPEPOLY_LIB_DIR") {
        Some(d) if !d.is_empty() => (resolve(Path::new(&d)), true),
        // bindings/rust/shapepoly-sys -> repository root -> build/lib
        _ => (manifest.join("../../../build/lib"), false),
    };
    let so = dir.join("libshapepoly.so");
    if !so.exists() {
        if overridden {
            panic!(
                "{} not found: SHAPEPOLY_LIB_DIR must name the folder holding libshapepoly.so \
                 (the clone's build/lib after `make lib`, or PREFIX/lib after `make install \
                 PREFIX=...`)",
                so.display()
            );
        }
        panic!(
            "{} not found: run `make lib` (tools/stage_lib.sh) in the libshapepoly clone first, \
             or set SHAPEPOLY_LIB_DIR to the folder holding libshapepoly.so (e.g. PREFIX/lib \
             after `make install PREFIX=...`)",
            so.display()
        );
    }
    // Canonical path: no `..` in the rpath (build/lib is a plain directory, not a symlink).
    let dir = dir.canonicalize().unwrap_or(dir);
    if overridden {
        // Says which library a build links, since the override is easy to forget in a shell.
        println!(
            "cargo:warning=SHAPEPOLY_LIB_DIR={}: linking {}",
            env::var_os("SHAPEPOLY_LIB_DIR").unwrap().to_string_lossy(),
            dir.join("libshapepoly.so").display()
        );
    }
    println!("cargo:rerun-if-changed={}", so.display());
    println!("cargo:rustc-link-search=native={}", dir.display());
    println!("cargo:rustc-link-lib=dylib=shapepoly");
    // This crate's own tests; dependents read DEP_SHAPEPOLY_LIB_DIR and add the rpath themselves
    // (rustc-link-arg does not propagate to dependent packages).
    println!("cargo:rustc-link-arg=-Wl,-rpath,{}", dir.display());
    println!("cargo:lib_dir={}", dir.display());
}

/// SHAPEPOLY_LIB_DIR as an absolute path: a relative value is resolved against cargo's working
/// directory, which is what the user typed it in.
fn resolve(value: &Path) -> PathBuf {
    if value.is_absolute() {
        return value.to_path_buf();
    }
    // A shell updates PWD on `cd`: rerun when the user builds from another directory.
    println!("cargo:rerun-if-env-changed=PWD");
    match cargo_cwd() {
        Ok(cwd) => cwd.join(value),
        Err(why) => panic!(
            "SHAPEPOLY_LIB_DIR={} is relative and the directory cargo runs in is unknown ({}): \
             give an absolute path",
            value.display(),
            why
        ),
    }
}

/// The working directory of cargo, this build script's parent process. The build script's own
/// directory is the package's folder, and PWD cannot be trusted: a program that starts cargo in
/// another directory (e.g. Python's subprocess with cwd=) leaves PWD as it was.
fn cargo_cwd() -> Result<PathBuf, String> {
    let ppid = std::os::unix::process::parent_id();
    let proc_dir = PathBuf::from(format!("/proc/{}", ppid));
    let exe = fs::read_link(proc_dir.join("exe"))
        .map_err(|e| format!("cannot read {}/exe: {}", proc_dir.display(), e))?;
    let is_cargo = exe
        .file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.starts_with("cargo"));
    if !is_cargo {
        return Err(format!(
            "the build script was started by {}, not cargo",
            exe.display()
        ));
    }
    fs::read_link(proc_dir.join("cwd"))
        .map_err(|e| format!("cannot read {}/cwd: {}", proc_dir.display(), e))
}

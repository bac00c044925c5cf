//! The `compile_fail,E0597` doctests of `src/` name the error they expect, but stable rustdoc
//! ignores the code: a snippet that fails for any other reason (a typo, a renamed method) still
//! passes. This test extracts every compile_fail snippet, type-checks it with `rustc` against
//! the `shapepoly` library of this build, and requires that it fails with the pinned error code
//! and no other error. The plain doctests of the same files must compile with the same command,
//! which shows the crate is found and the setup is sound.
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

struct Snippet {
    file: String,
    line: usize,          // of the opening fence
    code: Option<String>, // Some("E0597") for compile_fail (as written), None for a plain doctest
    source: String,
}

/// The Rust code blocks of the doc comments (`//!`, `///`) of `path`, with rustdoc's rules:
/// `# ` hides a line but keeps it, and code without `fn main` is wrapped in one.
fn doc_snippets(path: &Path) -> Vec<Snippet> {
    let text = fs::read_to_string(path).unwrap();
    let file = path.file_name().unwrap().to_string_lossy().into_owned();
    let mut out = Vec::new();
    let mut open: Option<(usize, Option<Option<String>>, String)> = None; // (line, kind, code)
    for (i, raw) in text.lines().enumerate() {
        let t = raw.trim_start();
        let doc = match t.strip_prefix("//!").or_else(|| t.strip_prefix("///")) {
            Some(d) => d.strip_prefix(' ').unwrap_or(d),
            None => {
                assert!(
                    open.is_none(),
                    "{}:{}: unterminated code block",
                    file,
                    i + 1
                );
                continue;
            }
        };
        if let Some(info) = doc.trim_start().strip_prefix("```") {
            match open.take() {
                Some((line, Some(code), body)) => out.push(Snippet {
                    file: file.clone(),
                    line,
                    code,
                    source: if body.contains("fn main") {
                        body
                    } else {
                        format!("#![allow(unused)]\nfn main() {{\n{}}}\n", body)
                    },
                }),
                Some((_, None, _)) => {}
                None => {
                    let attrs: Vec<&str> = info.split(',').map(str::trim).collect();
                    let rust = attrs.iter().all(|a| {
                        matches!(*a, "" | "rust" | "compile_fail" | "edition2021")
                            || (a.starts_with('E') && a.len() == 5)
                    });
                    let kind = if !rust {
                        None // text, ignore, no_run, other languages: not compiled here
                    } else if attrs.contains(&"compile_fail") {
                        // Several or no codes are kept as given, and reported by the test.
                        let codes: Vec<&str> = attrs
                            .iter()
                            .copied()
                            .filter(|a| a.starts_with('E'))
                            .collect();
                        Some(Some(codes.join(",")))
                    } else {
                        Some(None)
                    };
                    open = Some((i + 1, kind, String::new()));
                }
            }
            continue;
        }
        if let Some((_, _, body)) = open.as_mut() {
            let line = if doc == "#" {
                ""
            } else {
                doc.strip_prefix("# ").unwrap_or(doc)
            };
            body.push_str(line);
            body.push('\n');
        }
    }
    assert!(open.is_none(), "{}: unterminated code block", file);
    out
}

/// The `shapepoly` rlib cargo built for this test: this executable lives in
/// `target/<profile>/deps`, next to it (the newest one if several configurations were built).
fn shapepoly_rlib() -> (PathBuf, PathBuf) {
    let deps = std::env::current_exe()
        .unwrap()
        .parent()
        .unwrap()
        .to_path_buf();
    let rlib = fs::read_dir(&deps)
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| {
            let n = e.file_name().to_string_lossy().into_owned();
            n.starts_with("libshapepoly-") && n.ends_with(".rlib")
        })
        .max_by_key(|e| e.metadata().and_then(|m| m.modified()).ok())
        .map(|e| e.path())
        .unwrap_or_else(|| panic!("no libshapepoly-*.rlib in {}", deps.display()));
    (deps, rlib)
}

/// The compiler that built this test: `$RUSTC`, else the `rustc` beside the cargo running the
/// build (same toolchain, so it reads the rlib), else `rustc` on the PATH.
fn rustc() -> PathBuf {
    if let Some(r) = std::env::var_os("RUSTC") {
        return PathBuf::from(r);
    }
    let cargo =
        std::env::var_os("CARGO").map_or_else(|| PathBuf::from(env!("CARGO")), PathBuf::from);
    let beside = cargo.with_file_name("rustc");
    if beside.is_file() {
        beside
    } else {
        PathBuf::from("rustc")
    }
}

/// Type-checks `s` (no codegen, no linking) and returns (success, rustc's output).
fn check(s: &Snippet, index: usize) -> (bool, String) {
    let (deps, rlib) = shapepoly_rlib();
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("compile_fail");
    fs::create_dir_all(&dir).unwrap();
    let src = dir.join(format!("snippet_{}.rs", index));
    fs::write(&src, &s.source).unwrap();
    let rustc = rustc();
    let out = Command::new(&rustc)
        .args([
            "--edition",
            "2021",
            "--crate-type",
            "bin",
            "--emit=metadata",
            "--color",
            "never",
        ])
        .arg("--crate-name")
        .arg(format!("snippet_{}", index))
        .arg("--out-dir")
        .arg(&dir)
        .arg("-L")
        .arg(format!("dependency={}", deps.display()))
        .arg("--extern")
        .arg(format!("shapepoly={}", rlib.display()))
        .arg(&src)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {}: {}", rustc.display(), e));
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The error codes rustc reported ("" for an error without a code), one per error.
fn error_codes(stderr: &str) -> Vec<String> {
    stderr
        .lines()
        .filter(|l| l.starts_with("error"))
        .filter(|l| !l.starts_with("error: aborting due to"))
        .map(|l| {
            l.strip_prefix("error[")
                .and_then(|r| r.split(']').next())
                .unwrap_or("")
                .to_string()
        })
        .collect()
}

#[test]
fn compile_fail_doctests_fail_with_their_pinned_error() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files: Vec<PathBuf> = fs::read_dir(&src)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "rs"))
        .collect();
    files.sort();
    let snippets: Vec<Snippet> = files.iter().flat_map(|f| doc_snippets(f)).collect();
    let failing: Vec<&Snippet> = snippets.iter().filter(|s| s.code.is_some()).collect();
    assert!(
        !failing.is_empty(),
        "no compile_fail doctest found in {}",
        src.display()
    );
    // Controls: the plain doctests of the files that have compile_fail ones.
    let controls: Vec<&Snippet> = snippets
        .iter()
        .filter(|s| s.code.is_none() && failing.iter().any(|f| f.file == s.file))
        .collect();
    assert!(
        !controls.is_empty(),
        "no plain doctest beside the compile_fail ones"
    );
    let mut problems = Vec::new();
    for (k, s) in controls.iter().enumerate() {
        let (ok, stderr) = check(s, k);
        if !ok {
            problems.push(format!(
                "{}:{}: this doctest should compile but does not:\n{}",
                s.file, s.line, stderr
            ));
        }
    }
    for (k, s) in failing.iter().enumerate() {
        let want = s.code.as_deref().unwrap();
        if want.len() != 5 {
            problems.push(format!(
                "{}:{}: a compile_fail doctest must pin exactly one error code (```compile_fail,E0000), has [{}]",
                s.file, s.line, want
            ));
            continue;
        }
        let (ok, stderr) = check(s, controls.len() + k);
        let codes = error_codes(&stderr);
        if ok {
            problems.push(format!(
                "{}:{}: compiles, but should fail with {}",
                s.file, s.line, want
            ));
        } else if codes.is_empty() || codes.iter().any(|c| c != want) {
            problems.push(format!(
                "{}:{}: should fail with {} only, fails with {:?}:\n{}",
                s.file, s.line, want, codes, stderr
            ));
        } else {
            eprintln!("{}:{}: fails with {} as pinned", s.file, s.line, want);
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n\n"));
}

/// The checker itself: a snippet that compiles, one failing with another error, and one
/// failing with the pinned one are told apart.
#[test]
fn the_checker_tells_the_outcomes_apart() {
    let snippet = |body: &str| Snippet {
        file: "inline".into(),
        line: 0,
        code: Some("E0597".into()),
        source: format!("fn main() {{\n{}\n}}\n", body),
    };
    let (ok, stderr) = check(
        &snippet("let n = shapepoly::Scope::new(&[]).unwrap(); drop(n);"),
        1000,
    );
    assert!(ok, "{}", stderr);
    let (ok, stderr) = check(
        &snippet("let n: i32 = shapepoly::Scope::new(&[]).unwrap();"),
        1001,
    );
    assert!(!ok && error_codes(&stderr) == ["E0308"], "{}", stderr);
    let (ok, stderr) = check(&snippet("shapepoly::no_such_function();"), 1002);
    assert!(!ok && error_codes(&stderr) == ["E0425"], "{}", stderr);
    let (ok, stderr) = check(
        &snippet("let d = { let s = shapepoly::Scope::new(&[]).unwrap(); s.dim(\"n\").unwrap() }; println!(\"{}\", d);"),
        1003,
    );
    assert!(!ok && error_codes(&stderr) == ["E0597"], "{}", stderr);
    assert_eq!(
        error_codes("error: could not find `x`\nerror: aborting due to 1 previous error"),
        [""]
    );
}

//! The declarations in src/generated.rs (tools/gen_ffi.py) match c_api/include/shapepoly/shapepoly.h: every function of
//! the header is declared, and every enum constant and version macro has the header's value.
use std::collections::BTreeMap;

const HEADER: &str = include_str!("../../../../c_api/include/shapepoly/shapepoly.h");
const SYS: &str = include_str!("../src/generated.rs");

/// Names `shp_xxx` directly followed by `(` in the header's declarations (comments stripped).
fn header_functions() -> Vec<String> {
    let mut code = String::new();
    let mut rest = HEADER;
    // Strip /* */ and // comments.
    while !rest.is_empty() {
        if let Some(r) = rest.strip_prefix("/*") {
            rest = &r[r.find("*/").map(|i| i + 2).unwrap_or(r.len())..];
        } else if let Some(r) = rest.strip_prefix("//") {
            rest = &r[r.find('\n').unwrap_or(r.len())..];
        } else {
            let c = rest.chars().next().unwrap();
            code.push(c);
            rest = &rest[c.len_utf8()..];
        }
    }
    let mut names = Vec::new();
    let bytes = code.as_bytes();
    let mut i = 0;
    while let Some(off) = code[i..].find("shp_") {
        let start = i + off;
        let mut end = start;
        while end < bytes.len() && (bytes[end].is_ascii_alphanumeric() || bytes[end] == b'_') {
            end += 1;
        }
        let preceded_ok =
            start == 0 || !(bytes[start - 1].is_ascii_alphanumeric() || bytes[start - 1] == b'_');
        if preceded_ok && code[end..].trim_start().starts_with('(') {
            names.push(code[start..end].to_string());
        }
        i = end;
    }
    names.sort();
    names.dedup();
    names
}

#[test]
fn every_header_function_is_declared() {
    let names = header_functions();
    assert!(names.len() > 100, "parsed only {} functions", names.len());
    let missing: Vec<_> = names
        .iter()
        .filter(|n| !SYS.contains(&format!("pub fn {}(", n)))
        .collect();
    assert!(
        missing.is_empty(),
        "functions of shapepoly.h not declared in shapepoly-sys: {:?}",
        missing
    );
}

/// `SHP_NAME = value` pairs in the header's enums and `#define SHP_NAME value` macros.
fn header_constants() -> BTreeMap<String, i64> {
    let mut out = BTreeMap::new();
    for line in HEADER.lines() {
        let line = line.trim();
        if let Some(def) = line.strip_prefix("#define ") {
            let mut parts = def.split_whitespace();
            if let (Some(n), Some(v)) = (parts.next(), parts.next()) {
                if let Ok(v) = v.parse::<i64>() {
                    out.insert(n.to_string(), v);
                }
            }
        }
        for item in line.split([',', '{', '}']) {
            let item = item.split("/*").next().unwrap().trim();
            if let Some((n, v)) = item.split_once('=') {
                let (n, v) = (n.trim(), v.trim());
                if n.starts_with("SHP_") && !n.contains(' ') {
                    if let Ok(v) = v.parse::<i64>() {
                        out.insert(n.to_string(), v);
                    }
                }
            }
        }
    }
    out
}

#[test]
fn every_header_constant_matches() {
    let consts = header_constants();
    assert!(consts.len() > 60, "parsed only {} constants", consts.len());
    for (name, value) in &consts {
        let decl = SYS
            .lines()
            .find(|l| l.trim_start().starts_with(&format!("pub const {}:", name)))
            .unwrap_or_else(|| panic!("{} = {} of shapepoly.h is not declared", name, value));
        let v: i64 = decl
            .rsplit('=')
            .next()
            .unwrap()
            .trim()
            .trim_end_matches(';')
            .parse()
            .unwrap();
        assert_eq!(v, *value, "{}", name);
    }
}

#[test]
fn links_and_abi_matches() {
    let abi = unsafe { shapepoly_sys::shp_abi_version() };
    assert_eq!(abi, shapepoly_sys::SHP_ABI_VERSION);
    let v = unsafe { std::ffi::CStr::from_ptr(shapepoly_sys::shp_version_string()) };
    assert_eq!(v.to_str().unwrap(), shapepoly_sys::SHP_VERSION_STRING);
}

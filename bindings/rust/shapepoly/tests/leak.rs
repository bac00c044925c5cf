//! No leaks: thousands of scopes, dims, tensors, programs, buffers, runtimes, arrays, views,
//! bindings and errors are created and dropped, and the resident set does not grow.
//! (Its own test binary, so no other test allocates concurrently.)
mod common;
use common::mlp;
use shapepoly::{Array, ArrayView, Cmp, DType, Program, Runtime, RuntimeOptions, Scope};

/// Resident set size in bytes, from /proc/self/statm.
fn rss() -> usize {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap();
    let pages: usize = statm.split_whitespace().nth(1).unwrap().parse().unwrap();
    pages * 4096
}

fn one_round(bytes: &[u8], i: usize) {
    // Scope, dims, errors.
    let scope = Scope::new(&["n >= 2", "mod(m, 4) == 0"]).unwrap();
    let n = scope.dim("n").unwrap();
    let e = ((n * 3).unwrap() + (i as i64)).unwrap();
    assert!(e.to_string().starts_with("3*n"));
    let _ = e.compare(Cmp::Ge, n).unwrap();
    let _ = e.bounds().unwrap();
    for _ in 0..20 {
        // Error objects (code + message) are small: make many so a leak would show.
        assert!(scope.dim("2*+").is_err());
    }
    assert!(Scope::new(&["n >= 5", "n <= 2"]).is_err());
    let b = scope.solve(&[("n, m", &[5, 8])]).unwrap();
    assert_eq!(b.get("m"), Some(8));
    // Tracing errors and a small program.
    let x = scope.input("x", DType::F32, "n, m").unwrap();
    let v = scope.input("v", DType::F32, "v").unwrap();
    assert!(x.add(v).is_err());
    let y = x.softmax(1).unwrap();
    let p = scope.program(&[x], &[("y", y)]).unwrap();
    let _ = p.to_text().unwrap();
    drop(p);
    drop(scope);
    // Load, run (outputs, views, errors), bad loads.
    let program = Program::load(bytes).unwrap();
    assert!(Program::load(&bytes[..bytes.len() / 3]).is_err());
    let mut rt = Runtime::with_options(&program, &RuntimeOptions::new().num_threads(1)).unwrap();
    let xs = mlp::input_data(3);
    let out = rt
        .run(&[("x", &ArrayView::new(&[3, 64], &xs).unwrap())])
        .unwrap();
    assert_eq!(out["probs"].len(), 30);
    assert!(rt
        .run(&[("x", &ArrayView::new(&[1, 192], &xs).unwrap())])
        .is_err());
    assert!(rt
        .run(&[("nope", &Array::from_slice(&[3, 64], &xs).unwrap())])
        .is_err());
    let _ = program.serialize().unwrap();
    let _ = Array::zeros(DType::F64, &[16, 16]).unwrap();
}

#[test]
fn no_growth_over_thousands_of_objects() {
    let bytes = mlp::build().unwrap().serialize().unwrap();
    for i in 0..300 {
        one_round(&bytes, i); // warm up allocator pools and lazily initialized state
    }
    let before = rss();
    let rounds = 3000;
    for i in 0..rounds {
        one_round(&bytes, i);
    }
    let after = rss();
    let growth = after.saturating_sub(before);
    eprintln!(
        "rss before {} KiB, after {} KiB, growth {} KiB over {} rounds",
        before / 1024,
        after / 1024,
        growth / 1024,
        rounds
    );
    // One leaked program alone is >12 KiB per round (36 MiB in total), 20 leaked parse errors
    // >2 KiB per round (6 MiB); allow 1 MiB of noise.
    assert!(
        growth < 1 << 20,
        "RSS grew by {} KiB over {} rounds",
        growth / 1024,
        rounds
    );
}

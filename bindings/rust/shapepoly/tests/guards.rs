//! Hints, guards, assumptions and multi-variant programs (issue 11) through the safe crate:
//! PyTorch's guard from a broadcast decided on hints, shp_dim_guard, two variants dispatched
//! on both sides of their guards (also after a save/load round trip), a set of variants that
//! leaves a gap with its counterexample, and no specialization on a hint of 1.
mod common;
use common::twin::{reload, Twin};

use shapepoly::{ArrayView, Cmp, Code, DType, GuardPolicy, Program, Runtime, Scope, Truth};

/// x: [s0], y: [s1] under FROM_HINTS with the given hints; returns the program of x * y.
fn pytorch_mul(h0: i64, h1: i64) -> shapepoly::Result<Program> {
    let scope = Scope::new(&[])?;
    scope.set_guard_policy(GuardPolicy::FromHints)?;
    scope.set_hint("s0", h0)?;
    scope.set_hint("s1", h1)?;
    let x = scope.input("x", DType::F32, "s0")?;
    let y = scope.input("y", DType::F32, "s1")?;
    let z = x.mul(y)?;
    scope.program(&[x, y], &[("z", z)])
}

#[test]
fn pytorch_example_guard_from_hints() {
    let p = pytorch_mul(5, 5).unwrap();
    let guards = p.guards();
    assert_eq!(guards.len(), 1, "{:?}", guards);
    assert_eq!(guards[0].text, "s0 == s1");
    let origin = guards[0].origin.as_deref().unwrap();
    assert!(origin.starts_with("mul"), "{}", origin);
    assert_eq!(p.variant_count(), 1);
    assert_eq!(p.variant_guards(0), {
        let mut g = guards.clone();
        g[0].origin = None;
        g
    });
    assert!(p.variant_guards(1).is_empty());

    let mut rt = Twin::new(&p);
    let a = [1.0f32, 2.0, 3.0, 4.0, 5.0];
    let b = [2.0f32; 5];
    let out = rt
        .run(&[
            ("x", &ArrayView::new(&[5], &a).unwrap()),
            ("y", &ArrayView::new(&[5], &b).unwrap()),
        ])
        .unwrap();
    assert_eq!(
        out["z"].as_slice::<f32>().unwrap(),
        &[2.0, 4.0, 6.0, 8.0, 10.0]
    );
    assert_eq!(rt.last_variant(), Some(0));

    // s0 = 5, s1 = 6 violates the guard.
    let b6 = [2.0f32; 6];
    let err = rt
        .run(&[
            ("x", &ArrayView::new(&[5], &a).unwrap()),
            ("y", &ArrayView::new(&[6], &b6).unwrap()),
        ])
        .unwrap_err();
    assert_eq!(err.code(), Code::GuardFailed, "{}", err);
    assert!(err.message().contains("s0 == s1"), "{}", err);
    assert_eq!(err.code().raw(), 18);
    assert!(err.code().description().starts_with("SHP_GUARD_FAILED"));

    // check_shapes reports it too.
    let err = p.check_shapes(&[("x", &[5]), ("y", &[6])]).unwrap_err();
    assert_eq!(err.code(), Code::GuardFailed, "{}", err);
    let b = p.check_shapes(&[("x", &[7]), ("y", &[7])]).unwrap();
    assert_eq!(b.variant(), Some(0));

    // Hints 5 and 6: the multiply fails, naming both hint values.
    let err = pytorch_mul(5, 6).unwrap_err();
    assert_eq!(err.code(), Code::ShapeMismatch, "{}", err);
    assert!(
        err.message().contains("s0 = 5") && err.message().contains("s1 = 6"),
        "{}",
        err
    );

    // Under the default policy the same multiply is inconclusive.
    let scope = Scope::new(&[]).unwrap();
    scope.set_hint("s0", 5).unwrap();
    scope.set_hint("s1", 5).unwrap();
    let x = scope.input("x", DType::F32, "s0").unwrap();
    let y = scope.input("y", DType::F32, "s1").unwrap();
    assert_eq!(x.mul(y).unwrap_err().code(), Code::Inconclusive);
    scope.set_guard_policy(GuardPolicy::Never).unwrap();
}

#[test]
fn hints_are_validated_and_read_back() {
    let scope = Scope::with_ranges(&["n <= 4*m"], &[("n", 0, 100)]).unwrap();
    assert_eq!(scope.hint("n").unwrap(), None);
    scope.set_hint("n", 0).unwrap();
    assert_eq!(scope.hint("n").unwrap(), Some(0));
    let err = scope.set_hint("n", 101).unwrap_err();
    assert_eq!(err.code(), Code::ConstraintViolation, "{}", err);
    assert_eq!(scope.hint("n").unwrap(), Some(0), "the previous hint stays");
    scope.set_hint("m", 2).unwrap();
    scope.set_hint("n", 8).unwrap();
    let err = scope.set_hint("n", 9).unwrap_err();
    assert_eq!(err.code(), Code::ConstraintViolation, "{}", err);
    assert_eq!(scope.hint("n").unwrap(), Some(8));
    assert_eq!(scope.hint("nope").unwrap_err().code(), Code::NotFound);
    assert_eq!(
        scope.set_hint("a\0b", 1).unwrap_err().code(),
        Code::InvalidArgument
    );
    // A hint is not a fact.
    let n = scope.dim("n").unwrap();
    assert_eq!(
        n.compare(Cmp::Eq, scope.dim("8").unwrap()).unwrap(),
        Truth::Unknown
    );
}

#[test]
fn dim_guard_records_a_guard() {
    let scope = Scope::new(&[]).unwrap();
    scope.set_hint("seq", 2048).unwrap();
    let seq = scope.dim("seq").unwrap();
    let limit = scope.dim("1024").unwrap();
    // Decided: nothing recorded.
    assert!(seq.guard(Cmp::Ge, scope.dim("1").unwrap(), None).unwrap());
    let big = seq
        .guard(Cmp::Gt, limit, Some("blocked attention"))
        .unwrap();
    assert!(big);
    // Later decisions rely on it.
    assert_eq!(seq.compare(Cmp::Gt, limit).unwrap(), Truth::True);
    assert!(seq.guard(Cmp::Gt, limit, None).unwrap());

    let x = scope.input("x", DType::F32, "seq").unwrap();
    let y = x.exp().unwrap();
    let p = scope.program(&[x], &[("y", y)]).unwrap();
    let guards = p.guards();
    assert_eq!(guards.len(), 1, "{:?}", guards);
    assert_eq!(guards[0].text, "seq > 1024");
    assert_eq!(guards[0].message, "blocked attention");
    assert_eq!(guards[0].origin.as_deref(), Some("shp_dim_guard"));
    assert!(p.to_text().unwrap().contains("seq > 1024"));

    let mut rt = Runtime::new(&p).unwrap();
    rt.run(&[("x", &ArrayView::new(&[1025], &vec![0f32; 1025]).unwrap())])
        .unwrap();
    let err = rt
        .run(&[("x", &ArrayView::new(&[1024], &vec![0f32; 1024]).unwrap())])
        .unwrap_err();
    assert_eq!(err.code(), Code::GuardFailed, "{}", err);
    assert!(err.message().contains("blocked attention"), "{}", err);

    // An unhinted variable: inconclusive, nothing recorded.
    let m = scope.dim("m").unwrap();
    let err = m.guard(Cmp::Gt, limit, None).unwrap_err();
    assert_eq!(err.code(), Code::Inconclusive, "{}", err);
    assert!(err.message().contains('m'), "{}", err);
    assert_eq!(m.compare(Cmp::Gt, limit).unwrap(), Truth::Unknown);
}

/// rows x cols traced under `cols <= 16` (y = 2x) or `cols > 16` (y = -x).
fn variant(small: bool) -> Program {
    let scope = Scope::new(&[]).unwrap();
    let cols = scope.dim("cols").unwrap();
    let sixteen = scope.dim("16").unwrap();
    let (op, msg) = if small {
        (Cmp::Le, "small rows")
    } else {
        (Cmp::Gt, "large rows")
    };
    scope.assume(cols, op, sixteen, Some(msg)).unwrap();
    let x = scope.input("x", DType::F32, "rows, cols").unwrap();
    let y = if small {
        x.add(x).unwrap()
    } else {
        x.neg().unwrap()
    };
    scope.program(&[x], &[("y", y)]).unwrap()
}

#[test]
fn two_variants_dispatch_and_round_trip() {
    let (small, large) = (variant(true), variant(false));
    assert_eq!(small.guards()[0].text, "cols <= 16");
    assert_eq!(
        small.guards()[0].origin.as_deref(),
        Some("shp_scope_assume")
    );
    let p = Program::create_variants(&[&small, &large]).unwrap();
    assert_eq!(p.variant_count(), 2);
    assert_eq!(p.variant_guards(0)[0].text, "cols <= 16");
    assert_eq!(p.variant_guards(0)[0].message, "small rows");
    assert_eq!(p.variant_guards(1)[0].text, "cols > 16");
    assert_eq!(p.variant_guards(1)[0].message, "large rows");
    assert!(p.variant_guards(2).is_empty());
    assert_eq!(p.variants_exhaustive(), Truth::True);
    assert_eq!(p.counterexample().unwrap(), "");

    let b = p.check_shapes(&[("x", &[2, 16])]).unwrap();
    assert_eq!(b.variant(), Some(0));
    let b = p.check_shapes(&[("x", &[2, 17])]).unwrap();
    assert_eq!(b.variant(), Some(1));
    assert_eq!(p.output_shape(0, &b).unwrap(), vec![2, 17]);
    assert_eq!(
        Scope::new(&[])
            .unwrap()
            .solve(&[("n", &[3])])
            .unwrap()
            .variant(),
        None
    );

    let mut rt = Twin::new(&p);
    assert_eq!(rt.last_variant(), None);
    for (cols, want_variant) in [(16i64, 0usize), (17, 1), (16, 0), (1, 0), (100, 1)] {
        let data: Vec<f32> = (0..2 * cols).map(|i| i as f32).collect();
        let out = rt
            .run(&[("x", &ArrayView::new(&[2, cols], &data).unwrap())])
            .unwrap();
        assert_eq!(rt.last_variant(), Some(want_variant), "cols {}", cols);
        let want: Vec<f32> = data
            .iter()
            .map(|v| if want_variant == 0 { 2.0 * v } else { -v })
            .collect();
        assert_eq!(out["y"].as_slice::<f32>().unwrap(), want.as_slice());
    }
    // Plans: cols 16, 1 on variant 0; 17, 100 on variant 1; the second cols 16 hit the cache.
    assert_eq!(rt.variant_plans_built(0), 2);
    assert_eq!(rt.variant_plans_built(1), 2);
    assert_eq!(rt.variant_cache_hits(0), 1);
    assert_eq!(rt.variant_cache_hits(1), 0);
    assert_eq!(rt.variant_plans_built(2), 0);
    assert_eq!(rt.plans_built(), 4);

    // Saved and loaded: still two variants with their guards.
    let path = std::env::temp_dir().join(format!(
        "shapepoly-rust-guards-{}.shpoly",
        std::process::id()
    ));
    p.save(&path).unwrap();
    let q = Program::load_file(&path).unwrap();
    std::fs::remove_file(&path).ok();
    assert_eq!(q.variant_count(), 2);
    assert_eq!(q.variant_guards(1)[0].text, "cols > 16");
    assert_eq!(q.variants_exhaustive(), Truth::True);
    assert_eq!(reload(&q).variant_count(), 2);

    // A multi-variant program is an argument too: its variants are appended.
    let pp = Program::create_variants(&[&p, &small]).unwrap();
    assert_eq!(pp.variant_count(), 3);
    // Mismatched signatures are refused, naming the difference.
    let scope = Scope::new(&[]).unwrap();
    let x = scope.input("x", DType::F32, "rows").unwrap();
    let other = scope.program(&[x], &[("y", x)]).unwrap();
    let err = Program::create_variants(&[&small, &other]).unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument, "{}", err);
    assert_eq!(
        Program::create_variants(&[]).unwrap_err().code(),
        Code::InvalidArgument
    );
}

#[test]
fn variants_with_a_gap() {
    let trace = |op: Cmp, bound: i64| {
        let scope = Scope::new(&[]).unwrap();
        let cols = scope.dim("cols").unwrap();
        scope
            .assume(cols, op, scope.constant_dim(bound).unwrap(), None)
            .unwrap();
        let x = scope.input("x", DType::F32, "cols").unwrap();
        let y = x.exp().unwrap();
        scope.program(&[x], &[("y", y)]).unwrap()
    };
    let p = Program::create_variants(&[&trace(Cmp::Le, 16), &trace(Cmp::Ge, 20)]).unwrap();
    assert_eq!(p.variants_exhaustive(), Truth::False);
    let cex = p.counterexample().unwrap();
    let rest = cex
        .strip_prefix("cols = ")
        .unwrap_or_else(|| panic!("{}", cex));
    let n: i64 = rest
        .split(|c: char| !c.is_ascii_digit())
        .next()
        .unwrap()
        .parse()
        .unwrap_or_else(|_| panic!("{}", cex));
    assert!(16 < n && n < 20, "{}", cex);
    assert_eq!(reload(&p).variants_exhaustive(), Truth::False);

    let mut rt = Runtime::new(&p).unwrap();
    let err = rt
        .run(&[("x", &ArrayView::new(&[18], &[0f32; 18]).unwrap())])
        .unwrap_err();
    assert_eq!(err.code(), Code::GuardFailed, "{}", err);
    assert!(err.message().contains("cols"), "{}", err);
    assert_eq!(rt.last_variant(), None);
    rt.run(&[("x", &ArrayView::new(&[20], &[0f32; 20]).unwrap())])
        .unwrap();
    assert_eq!(rt.last_variant(), Some(1));
    assert!(rt
        .run(&[("x", &ArrayView::new(&[18], &[0f32; 18]).unwrap())])
        .is_err());
    assert_eq!(
        rt.last_variant(),
        Some(1),
        "a failed run keeps the last variant"
    );
}

#[test]
fn assume_contradicting_the_constraints_is_refused() {
    let scope = Scope::new(&["n >= 10"]).unwrap();
    let n = scope.dim("n").unwrap();
    let err = scope
        .assume(n, Cmp::Lt, scope.dim("5").unwrap(), Some("tiny"))
        .unwrap_err();
    assert_eq!(err.code(), Code::Unsatisfiable, "{}", err);
    // Already implied: nothing recorded.
    scope
        .assume(n, Cmp::Ge, scope.dim("3").unwrap(), None)
        .unwrap();
    let x = scope.input("x", DType::F32, "n").unwrap();
    assert!(scope
        .program(&[x], &[("y", x)])
        .unwrap()
        .guards()
        .is_empty());
}

#[test]
fn a_hint_of_one_does_not_specialize() {
    let scope = Scope::new(&[]).unwrap();
    scope.set_guard_policy(GuardPolicy::FromHints).unwrap();
    scope.set_hint("batch", 1).unwrap();
    let x = scope.input("x", DType::F32, "batch, 4").unwrap();
    let w = scope.input("w", DType::F32, "4, 3").unwrap();
    let y = x.matmul(w).unwrap();
    let p = scope.program(&[x, w], &[("y", y)]).unwrap();
    assert!(p.guards().is_empty(), "{:?}", p.guards());
    assert_eq!(p.variants_exhaustive(), Truth::True);

    let mut rt = Twin::new(&p);
    let xs = vec![1.0f32; 1000 * 4];
    let ws = [
        1.0f32, 2.0, 3.0, 1.0, 2.0, 3.0, 1.0, 2.0, 3.0, 1.0, 2.0, 3.0,
    ];
    for batch in [1i64, 1000] {
        let out = rt
            .run(&[
                (
                    "x",
                    &ArrayView::new(&[batch, 4], &xs[..4 * batch as usize]).unwrap(),
                ),
                ("w", &ArrayView::new(&[4, 3], &ws).unwrap()),
            ])
            .unwrap();
        assert_eq!(out["y"].shape(), &[batch, 3]);
        assert_eq!(&out["y"].as_slice::<f32>().unwrap()[..3], &[4.0, 8.0, 12.0]);
    }
}

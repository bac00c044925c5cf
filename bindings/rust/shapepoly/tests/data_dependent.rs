//! Data-dependent sizes (issue 13): nonzero, boolean_mask and size_from_value make unbacked
//! variables with sound bounds; a guard over one is inconclusive until `Scope::check` makes it a
//! fact, which the runtime then checks; dry runs report such dims as -1 with bounds. Programs run
//! through `Twin`, so each one is also serialized, reloaded and run again.
mod common;
use common::twin::Twin;

use shapepoly::{
    Array, ArrayView, Cmp, Code, DType, ReduceOp, RuntimeOptions, Scope, Tensor, Truth,
};

/// `np.argwhere` of a row-major `x` of `shape`, flattened: one row of `shape.len()` indices
/// per nonzero element.
fn argwhere(x: &[f32], shape: &[i64]) -> Vec<i64> {
    let mut out = Vec::new();
    for (i, &v) in x.iter().enumerate() {
        if v == 0.0 {
            continue;
        }
        let mut idx = vec![0i64; shape.len()];
        let mut rem = i as i64;
        for k in (0..shape.len()).rev() {
            idx[k] = rem % shape[k];
            rem /= shape[k];
        }
        out.extend(idx);
    }
    out
}

/// A small deterministic generator (no dependency): uniform in [0, 1).
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> f64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 11) as f64 / (1u64 << 53) as f64
    }
}

#[test]
fn nonzero_names_bounds_and_values() {
    let scope = Scope::new(&[]).unwrap();
    scope.declare("n", 1, 10).unwrap();
    let x = scope.input("x", DType::F32, "n, 4").unwrap();
    let idx = x.nonzero().unwrap();
    assert_eq!(idx.dtype(), DType::I64);
    let shape = idx.shape().unwrap();
    assert_eq!(shape.len(), 2);
    let u = shape[0];
    assert_eq!(u.text().unwrap(), "u0");
    assert_eq!(shape[1].as_constant(), Some(2));
    assert_eq!(u.bounds().unwrap(), (0, 40));
    // The bound relative to n is a fact.
    assert_eq!(
        u.compare(Cmp::Le, scope.dim("4*n").unwrap()).unwrap(),
        Truth::True
    );
    assert_eq!(
        u.compare(Cmp::Le, scope.dim("3*n").unwrap()).unwrap(),
        Truth::Unknown
    );

    // Introspection: u0 is unbacked and says where it comes from; n is not.
    let vars = scope.variables().unwrap();
    let u0 = vars.iter().find(|v| v.name == "u0").unwrap();
    assert!(u0.unbacked);
    assert!(
        u0.origin.as_deref().unwrap().contains("nonzero"),
        "{:?}",
        u0
    );
    let n = vars.iter().find(|v| v.name == "n").unwrap();
    assert!(!n.unbacked);
    assert_eq!(n.origin, None);
    let nv = scope.variable_count();
    assert!(!scope.variable_is_unbacked(nv));
    assert_eq!(scope.variable_origin(nv), None);

    let p = scope.program(&[x], &[("idx", idx)]).unwrap();
    let pv = p.variables();
    let ui = pv.iter().position(|v| v == "u0").unwrap();
    let ni = pv.iter().position(|v| v == "n").unwrap();
    assert!(p.variable_is_unbacked(ui));
    assert!(p.variable_origin(ui).unwrap().contains("nonzero"));
    assert!(!p.variable_is_unbacked(ni));
    assert_eq!(p.variable_origin(ni), None);
    assert!(!p.variable_is_unbacked(pv.len()));
    assert_eq!(p.variable_origin(pv.len()), None);

    // Empty, partial and full density, each checked against argwhere computed here.
    let mut rng = Lcg(7);
    let mut twin = Twin::new(&p);
    for n in [1i64, 3, 10] {
        for density in [0.0, 0.3, 1.0] {
            let data: Vec<f32> = (0..n * 4)
                .map(|i| {
                    if rng.next() < density {
                        1.5 + i as f32
                    } else {
                        0.0
                    }
                })
                .collect();
            let want = argwhere(&data, &[n, 4]);
            let out = twin
                .run(&[("x", &ArrayView::new(&[n, 4], &data).unwrap())])
                .unwrap();
            let got = &out["idx"];
            assert_eq!(
                got.shape(),
                &[want.len() as i64 / 2, 2],
                "n={} d={}",
                n,
                density
            );
            assert_eq!(got.as_slice::<i64>().unwrap(), &want[..]);
            let b = twin.output_dim_bounds(0, 0).unwrap();
            assert!(b.data_dependent);
            assert_eq!(
                (b.min, b.max),
                (want.len() as i64 / 2, want.len() as i64 / 2)
            );
            if density == 0.0 {
                assert!(want.is_empty());
            }
            if density == 1.0 {
                assert_eq!(want.len() as i64, 2 * n * 4);
            }
        }
    }
}

/// The mean of the rows of x whose score exceeds 0.5.
#[test]
fn mask_then_average() {
    let scope = Scope::new(&[]).unwrap();
    let x = scope.input("x", DType::F32, "n, 3").unwrap();
    let score = scope.input("score", DType::F32, "n").unwrap();
    let th = scope.constant::<f32>(&[], &[0.5]).unwrap();
    let mask = score.compare(Cmp::Gt, th).unwrap();
    let rows = x.boolean_mask(mask, 0).unwrap();
    let u = rows.shape().unwrap()[0];
    assert_eq!(u.text().unwrap(), "u0");
    assert_eq!(u.bounds().unwrap(), (0, i64::MAX));
    let sum = rows.reduce(ReduceOp::Sum, &[0], false).unwrap();
    let count = scope.dim_value(u).unwrap().convert(DType::F32).unwrap();
    let mean = sum.div(count).unwrap();
    let p = scope
        .program(&[x, score], &[("mean", mean), ("rows", rows)])
        .unwrap();
    let mut twin = Twin::new(&p);
    let n = 6i64;
    let xs: Vec<f32> = (0..n * 3).map(|i| i as f32).collect();
    for selected in 0..=n {
        // Rows with an odd index first, then even ones; 0.5 itself is not selected.
        let mut order: Vec<i64> = (0..n).filter(|i| i % 2 == 1).collect();
        order.extend((0..n).filter(|i| i % 2 == 0));
        let mut pick = vec![false; n as usize];
        for &i in &order[..selected as usize] {
            pick[i as usize] = true;
        }
        let scores: Vec<f32> = pick.iter().map(|&p| if p { 0.75 } else { 0.5 }).collect();
        let out = twin
            .run(&[
                ("x", &ArrayView::new(&[n, 3], &xs).unwrap()),
                ("score", &ArrayView::new(&[n], &scores).unwrap()),
            ])
            .unwrap();
        let want_rows: Vec<f32> = (0..n as usize)
            .filter(|&i| pick[i])
            .flat_map(|i| xs[i * 3..i * 3 + 3].to_vec())
            .collect();
        assert_eq!(out["rows"].shape(), &[selected, 3]);
        assert_eq!(out["rows"].as_slice::<f32>().unwrap(), &want_rows[..]);
        let got = out["mean"].as_slice::<f32>().unwrap();
        assert_eq!(got.len(), 3);
        for c in 0..3 {
            if selected == 0 {
                assert!(got[c].is_nan(), "count 0: {:?}", got);
                continue;
            }
            let s: f64 = (0..selected as usize)
                .map(|r| want_rows[r * 3 + c] as f64)
                .sum();
            let want = (s / selected as f64) as f32;
            assert!(
                (got[c] - want).abs() <= 1e-6 * want.abs().max(1.0),
                "count {} column {}: {} vs {}",
                selected,
                c,
                got[c],
                want
            );
        }
    }
}

#[test]
fn boolean_mask_argument_errors() {
    let scope = Scope::new(&[]).unwrap();
    let x = scope.input("x", DType::F32, "n, 3").unwrap();
    let fmask = scope.input("fm", DType::F32, "n").unwrap();
    let mask4 = scope.input("m4", DType::Bool, "4").unwrap();
    let other = scope.input("o", DType::Bool, "k").unwrap();
    let mask = scope.input("m", DType::Bool, "n").unwrap();
    assert_eq!(
        x.boolean_mask(fmask, 0).unwrap_err().code(),
        Code::DtypeMismatch
    );
    assert_eq!(
        x.boolean_mask(mask, 2).unwrap_err().code(),
        Code::InvalidArgument
    );
    assert_eq!(
        x.boolean_mask(mask4, 1).unwrap_err().code(),
        Code::ShapeMismatch
    );
    assert_eq!(
        x.boolean_mask(other, 0).unwrap_err().code(),
        Code::Inconclusive
    );
    let rows = x.boolean_mask(mask, -2).unwrap();
    let dims: Vec<String> = rows
        .shape()
        .unwrap()
        .iter()
        .map(|d| d.to_string())
        .collect();
    assert_eq!(dims, ["u0", "3"]);
}

#[test]
fn size_from_value_range_is_checked() {
    let scope = Scope::new(&[]).unwrap();
    let v = scope.input("v", DType::I64, "").unwrap();
    let k = v.size_from_value(Some("k"), 1, 5).unwrap();
    assert_eq!(k.text().unwrap(), "k");
    assert_eq!(k.bounds().unwrap(), (1, 5));
    // Argument errors: each a specific code.
    assert_eq!(
        v.size_from_value(Some("k2"), -1, 5).unwrap_err().code(),
        Code::InvalidArgument
    );
    assert_eq!(
        v.size_from_value(Some("k2"), 5, 4).unwrap_err().code(),
        Code::InvalidArgument
    );
    assert_eq!(
        v.size_from_value(Some("k"), 1, 5).unwrap_err().code(),
        Code::InvalidArgument
    );
    assert_eq!(
        v.size_from_value(Some("a\0b"), 1, 5).unwrap_err().code(),
        Code::InvalidArgument
    );
    let f = scope.input("f", DType::F32, "").unwrap();
    assert_eq!(
        f.size_from_value(None, 0, 4).unwrap_err().code(),
        Code::DtypeMismatch
    );
    let vec = scope.input("w", DType::I64, "3").unwrap();
    assert_eq!(
        vec.size_from_value(None, 0, 4).unwrap_err().code(),
        Code::ShapeMismatch
    );
    // No name: the first free u name.
    let auto = v.size_from_value(None, 0, i64::MAX).unwrap();
    assert_eq!(auto.text().unwrap(), "u0");

    let io = scope.iota(DType::I64, &[k], 0).unwrap();
    let p = scope.program(&[v], &[("io", io)]).unwrap();
    let mut twin = Twin::new(&p);
    for val in [1i64, 3, 5] {
        let out = twin.run(&[("v", &Array::scalar(val).unwrap())]).unwrap();
        assert_eq!(out["io"].shape(), &[val]);
        assert_eq!(
            out["io"].as_slice::<i64>().unwrap(),
            &(0..val).collect::<Vec<_>>()[..]
        );
    }
    for val in [0i64, 6] {
        let err = twin
            .run(&[("v", &Array::scalar(val).unwrap())])
            .unwrap_err();
        assert_eq!(err.code(), Code::ConstraintViolation, "{}", err);
        for part in [format!("k = {}", val), "[1, 5]".to_string()] {
            assert!(err.message().contains(&part), "{} lacks {}", err, part);
        }
    }
}

/// nonzero of an (n,) input and its count u.
fn nonzero_of_vector(scope: &Scope) -> (Tensor<'_>, Tensor<'_>) {
    let x = scope.input("x", DType::F32, "n").unwrap();
    (x, x.nonzero().unwrap())
}

#[test]
fn guard_needs_check_and_check_is_asserted_at_run_time() {
    let scope = Scope::new(&[]).unwrap();
    let (x, idx) = nonzero_of_vector(&scope);
    let u = idx.shape().unwrap()[0];
    let one = scope.dim("1").unwrap();
    let err = u.guard(Cmp::Ge, one, Some("need a hit")).unwrap_err();
    assert_eq!(err.code(), Code::Inconclusive, "{}", err);
    for part in ["u0", "data-dependent", "nonzero", "shp_scope_check"] {
        assert!(err.message().contains(part), "{} lacks {}", err, part);
    }
    // No example value exists for a data-dependent size, so no hint either.
    assert_eq!(
        scope.set_hint("u0", 3).unwrap_err().code(),
        Code::InvalidArgument
    );
    // Decided comparisons need no check.
    assert!(u.guard(Cmp::Ge, scope.dim("0").unwrap(), None).unwrap());

    scope
        .check(u, Cmp::Ge, one, Some("at least one hit"))
        .unwrap();
    assert_eq!(u.compare(Cmp::Ge, one).unwrap(), Truth::True);
    assert!(u.guard(Cmp::Ge, one, None).unwrap());
    assert!(u.guard(Cmp::Gt, scope.dim("0").unwrap(), None).unwrap());

    let p = scope.program(&[x], &[("idx", idx)]).unwrap();
    assert_eq!(p.assertions().len(), 1);
    let mut twin = Twin::new(&p);
    let hit = [0.0f32, 1.0, 0.0];
    let out = twin
        .run(&[("x", &ArrayView::new(&[3], &hit).unwrap())])
        .unwrap();
    assert_eq!(out["idx"].as_slice::<i64>().unwrap(), &[1]);
    let none = [0.0f32; 3];
    let err = twin
        .run(&[("x", &ArrayView::new(&[3], &none).unwrap())])
        .unwrap_err();
    assert_eq!(err.code(), Code::ConstraintViolation, "{}", err);
    for part in ["at least one hit", "u0 >= 1", "u0 = 0"] {
        assert!(err.message().contains(part), "{} lacks {}", err, part);
    }
    // The runtime stays usable.
    twin.run(&[("x", &ArrayView::new(&[3], &hit).unwrap())])
        .unwrap();
}

#[test]
fn dry_run_reports_data_dependent_dims_with_bounds() {
    let scope = Scope::new(&[]).unwrap();
    let x = scope.input("x", DType::F32, "n, 4").unwrap();
    let idx = x.nonzero().unwrap();
    let p = scope.program(&[x], &[("idx", idx)]).unwrap();
    let mut twin = Twin::new(&p);
    assert_eq!(
        twin.output_dim_bounds(0, 0).unwrap_err().code(),
        Code::InvalidArgument
    );
    assert_eq!(twin.dry_run(&[("x", &[10, 4])]).unwrap(), vec![vec![-1, 2]]);
    assert_eq!(twin.output_shape(0).unwrap(), [-1, 2]);
    let b = twin.output_dim_bounds(0, 0).unwrap();
    assert!(b.data_dependent);
    assert_eq!((b.min, b.max), (0, 40));
    let b = twin.output_dim_bounds(0, 1).unwrap();
    assert!(!b.data_dependent);
    assert_eq!((b.min, b.max), (2, 2));
    let err = twin.output_dim_bounds(0, 2).unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert!(err.message().contains("axis 2"), "{}", err);
    assert_eq!(
        twin.output_dim_bounds(1, 0).unwrap_err().code(),
        Code::InvalidArgument
    );

    // After a run: the computed size.
    let data: Vec<f32> = (0..40)
        .map(|i| if i % 5 == 0 { 1.0 } else { 0.0 })
        .collect();
    twin.run(&[("x", &ArrayView::new(&[10, 4], &data).unwrap())])
        .unwrap();
    let b = twin.output_dim_bounds(0, 0).unwrap();
    assert!(b.data_dependent);
    assert_eq!((b.min, b.max), (8, 8));
    assert_eq!(twin.output_shape(0).unwrap(), [8, 2]);
}

#[test]
fn bound_allocation_gives_the_same_results() {
    let scope = Scope::new(&[]).unwrap();
    let x = scope.input("x", DType::F32, "n").unwrap();
    let zero = scope.constant::<f32>(&[], &[0.0]).unwrap();
    let sel = x
        .boolean_mask(x.compare(Cmp::Ne, zero).unwrap(), 0)
        .unwrap();
    let sq = sel.mul(sel).unwrap();
    let p = scope.program(&[x], &[("sq", sq)]).unwrap();
    let mut plain = Twin::with_options(&p, &RuntimeOptions::new().num_threads(1));
    let mut bounded = Twin::with_options(
        &p,
        &RuntimeOptions::new()
            .num_threads(1)
            .bound_allocation(1 << 20),
    );
    let mut rng = Lcg(11);
    for trial in 0..20 {
        let n = 1 + trial * 13;
        let data: Vec<f32> = (0..n)
            .map(|i| if rng.next() < 0.25 { 0.0 } else { i as f32 })
            .collect();
        let want: Vec<f32> = data.iter().filter(|&&v| v != 0.0).map(|v| v * v).collect();
        let view = ArrayView::new(&[n], &data).unwrap();
        let a = plain.run(&[("x", &view)]).unwrap();
        let b = bounded.run(&[("x", &view)]).unwrap();
        assert_eq!(a["sq"].as_slice::<f32>().unwrap(), &want[..]);
        assert_eq!(b["sq"].as_slice::<f32>().unwrap(), &want[..]);
    }
}

//! Control flow traced from closures: `Scope::scan` (an Elman RNN over a symbolic sequence
//! length, saved and reloaded), `Scope::while_loop` (Newton's square root, a data-dependent
//! count), `Scope::cond` (a data-dependent predicate), each checked against a plain Rust loop.
use shapepoly::{
    ArrayView, Cmp, Code, DType, Program, ReduceOp, Runtime, RuntimeOptions, Scope, Tensor,
};

const D: usize = 3; // input features
const H: usize = 4; // hidden units

/// Deterministic weights in [-0.5, 0.5).
fn weights(n: usize, seed: u64) -> Vec<f32> {
    let mut s = seed;
    (0..n)
        .map(|_| {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((s >> 11) as f64 / (1u64 << 53) as f64 - 0.5) as f32
        })
        .collect()
}

/// `v @ m` for a vector `v` of `rows` and a row-major `rows x cols` matrix.
fn vecmat(v: &[f32], m: &[f32], cols: usize) -> Vec<f64> {
    let mut out = vec![0f64; cols];
    for (i, &vi) in v.iter().enumerate() {
        for j in 0..cols {
            out[j] += vi as f64 * m[i * cols + j] as f64;
        }
    }
    out
}

/// The Elman RNN as a plain loop: (final h, every h stacked).
fn rnn_reference(xs: &[f32], h0: &[f32], w: &[f32], u: &[f32]) -> (Vec<f32>, Vec<f32>) {
    let mut h = h0.to_vec();
    let mut ys = Vec::new();
    for x in xs.chunks(D) {
        let a = vecmat(x, w, H);
        let b = vecmat(&h, u, H);
        h = a
            .iter()
            .zip(&b)
            .map(|(p, q)| (p + q).tanh() as f32)
            .collect();
        ys.extend(&h);
    }
    (h, ys)
}

fn assert_close(got: &[f32], want: &[f32], what: &str) {
    assert_eq!(got.len(), want.len(), "{}: length", what);
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!((g - w).abs() <= 1e-5, "{}[{}]: {} vs {}", what, i, g, w);
    }
}

/// `v @ m` for a vector `v` (contracting its only axis with the rows of `m`).
fn vm<'s>(v: Tensor<'s>, m: Tensor<'s>) -> shapepoly::Result<Tensor<'s>> {
    v.dot_general(m, (&[], &[]), (&[0], &[0]))
}

/// h_t = tanh(x_t W + h_{t-1} U) by scan over a sequence of symbolic length t >= 0; W and U
/// are inputs the body captures.
fn rnn_program() -> Program {
    let scope = Scope::new(&[]).unwrap();
    scope.declare("t", 0, 1 << 20).unwrap();
    let x = scope.input("x", DType::F32, &format!("t, {}", D)).unwrap();
    let h0 = scope.input("h0", DType::F32, &H.to_string()).unwrap();
    let w = scope
        .input("w", DType::F32, &format!("{}, {}", D, H))
        .unwrap();
    let u = scope
        .input("u", DType::F32, &format!("{}, {}", H, H))
        .unwrap();
    let (carry, ys) = scope
        .scan(
            |carry, x| {
                let h = vm(x[0], w)?.add(vm(carry[0], u)?)?.tanh()?;
                Ok((vec![h], vec![h]))
            },
            &[h0],
            &[x],
            None,
            false,
            0,
        )
        .unwrap();
    assert_eq!(carry.len(), 1);
    assert_eq!(ys.len(), 1);
    let shape: Vec<String> = ys[0]
        .shape()
        .unwrap()
        .iter()
        .map(|d| d.to_string())
        .collect();
    assert_eq!(shape, ["t", "4"]);
    scope
        .program(&[x, h0, w, u], &[("h", carry[0]), ("ys", ys[0])])
        .unwrap()
}

fn run_rnn(rt: &mut Runtime, t: usize) {
    let xs = weights(t * D, 1 + t as u64);
    let h0 = weights(H, 2);
    let w = weights(D * H, 3);
    let u = weights(H * H, 4);
    let out = rt
        .run(&[
            ("x", &ArrayView::new(&[t as i64, D as i64], &xs).unwrap()),
            ("h0", &ArrayView::new(&[H as i64], &h0).unwrap()),
            ("w", &ArrayView::new(&[D as i64, H as i64], &w).unwrap()),
            ("u", &ArrayView::new(&[H as i64, H as i64], &u).unwrap()),
        ])
        .unwrap();
    let (h, ys) = rnn_reference(&xs, &h0, &w, &u);
    assert_eq!(out["ys"].shape(), &[t as i64, H as i64]);
    assert_close(out["h"].as_slice::<f32>().unwrap(), &h, "h");
    assert_close(out["ys"].as_slice::<f32>().unwrap(), &ys, "ys");
}

#[test]
fn scan_elman_rnn_over_symbolic_length() {
    let program = rnn_program();
    let mut rt = Runtime::new(&program).unwrap();
    for t in [0, 1, 7] {
        run_rnn(&mut rt, t);
    }
    // Saved once, loaded, and run again.
    let loaded = Program::load(&program.serialize().unwrap()).unwrap();
    let mut rt = Runtime::new(&loaded).unwrap();
    for t in [0, 1, 7] {
        run_rnn(&mut rt, t);
    }
}

#[test]
fn scan_reverse_with_length_and_no_xs() {
    // Counts down: carry c -> c + 1, y = c, over `length` steps with no xs.
    let scope = Scope::new(&[]).unwrap();
    scope.declare("n", 0, 100).unwrap();
    let n = scope.dim_input("n").unwrap();
    let c0 = scope.constant::<i64>(&[], &[10]).unwrap();
    let one = scope.constant::<i64>(&[], &[1]).unwrap();
    let (carry, ys) = scope
        .scan(
            |c, _| Ok((vec![c[0].add(one)?], vec![c[0]])),
            &[c0],
            &[],
            Some(scope.variable("n").unwrap()),
            true,
            0,
        )
        .unwrap();
    let p = scope
        .program(&[n], &[("c", carry[0]), ("ys", ys[0])])
        .unwrap();
    let mut rt = Runtime::new(&p).unwrap();
    let out = rt
        .run(&[("n", &ArrayView::new(&[], &[4i64]).unwrap())])
        .unwrap();
    assert_eq!(out["c"].as_slice::<i64>().unwrap(), &[14]);
    // Reversed: step i = 3 runs first and stores y_3 = 10.
    assert_eq!(out["ys"].as_slice::<i64>().unwrap(), &[13, 12, 11, 10]);
}

#[test]
fn while_loop_newton_sqrt_and_count() {
    let scope = Scope::new(&[]).unwrap();
    let a = scope.input("a", DType::F32, "n").unwrap();
    let k = scope.input("k", DType::I64, "").unwrap();
    let half = scope.constant::<f32>(&[], &[0.5]).unwrap();
    let one = scope.constant::<i64>(&[], &[1]).unwrap();
    let tol = scope.constant::<f32>(&[], &[1e-5]).unwrap();
    let zero = scope.constant::<i64>(&[], &[0]).unwrap();
    // Newton's iteration y <- (y + a/y) / 2 from y = a, while some |y*y - a| > tol * a,
    // counting the steps.
    let res = scope
        .while_loop(
            |c| {
                let err = c[0].mul(c[0])?.sub(a)?.abs()?.sub(tol.mul(a)?)?;
                let worst = err.reduce(ReduceOp::Max, &[], false)?;
                worst.compare(Cmp::Gt, scope.constant::<f32>(&[], &[0.0])?)
            },
            |c| Ok(vec![c[0].add(a.div(c[0])?)?.mul(half)?, c[1].add(one)?]),
            &[a, zero],
            Some(100),
        )
        .unwrap();
    // Count up to the data-dependent bound k, doubling an accumulator.
    let two = scope.constant::<f32>(&[], &[2.0]).unwrap();
    let counted = scope
        .while_loop(
            |c| c[0].compare(Cmp::Lt, k),
            |c| Ok(vec![c[0].add(one)?, c[1].mul(two)?]),
            &[zero, a],
            None,
        )
        .unwrap();
    let p = scope
        .program(
            &[a, k],
            &[
                ("y", res[0]),
                ("steps", res[1]),
                ("i", counted[0]),
                ("acc", counted[1]),
            ],
        )
        .unwrap();
    let mut rt = Runtime::new(&p).unwrap();
    let av = [2.0f32, 9.0, 0.25, 100.0];
    for kv in [0i64, 3] {
        let out = rt
            .run(&[
                ("a", &ArrayView::new(&[4], &av).unwrap()),
                ("k", &ArrayView::new(&[], &[kv]).unwrap()),
            ])
            .unwrap();
        // The plain loop, in the same f32 operations.
        let mut y = av.to_vec();
        let mut steps = 0i64;
        while y
            .iter()
            .zip(&av)
            .any(|(&y, &a)| (y * y - a).abs() - 1e-5f32 * a > 0.0)
        {
            y = y
                .iter()
                .zip(&av)
                .map(|(&y, &a)| (y + a / y) * 0.5)
                .collect();
            steps += 1;
        }
        assert_eq!(out["steps"].as_slice::<i64>().unwrap(), &[steps]);
        assert!(steps > 2);
        assert_close(out["y"].as_slice::<f32>().unwrap(), &y, "y");
        for (g, a) in out["y"].as_slice::<f32>().unwrap().iter().zip(&av) {
            assert!((g - a.sqrt()).abs() < 1e-4 * a.sqrt().max(1.0));
        }
        assert_eq!(out["i"].as_slice::<i64>().unwrap(), &[kv]);
        let scale = (1i64 << kv) as f32;
        let want: Vec<f32> = av.iter().map(|a| a * scale).collect();
        assert_close(out["acc"].as_slice::<f32>().unwrap(), &want, "acc");
    }
    // A run that needs more trips than max_trips allows fails.
    let lim = Scope::new(&[]).unwrap();
    let k = lim.input("k", DType::I64, "").unwrap();
    let zero = lim.constant::<i64>(&[], &[0]).unwrap();
    let one = lim.constant::<i64>(&[], &[1]).unwrap();
    let r = lim
        .while_loop(
            |c| c[0].compare(Cmp::Lt, k),
            |c| Ok(vec![c[0].add(one)?]),
            &[zero],
            Some(5),
        )
        .unwrap();
    let p = lim.program(&[k], &[("i", r[0])]).unwrap();
    let mut rt = Runtime::new(&p).unwrap();
    let out = rt
        .run(&[("k", &ArrayView::new(&[], &[5i64]).unwrap())])
        .unwrap();
    assert_eq!(out["i"].as_slice::<i64>().unwrap(), &[5]);
    let err = rt
        .run(&[("k", &ArrayView::new(&[], &[6i64]).unwrap())])
        .unwrap_err();
    assert_eq!(err.code(), Code::ConstraintViolation, "{}", err);
}

#[test]
fn cond_takes_both_branches() {
    let scope = Scope::new(&[]).unwrap();
    let x = scope.input("x", DType::F32, "n").unwrap();
    let b = scope.input("b", DType::F32, "n").unwrap();
    let zero = scope.constant::<f32>(&[], &[0.0]).unwrap();
    let two = scope.constant::<f32>(&[], &[2.0]).unwrap();
    let pred = x
        .reduce(ReduceOp::Sum, &[], false)
        .unwrap()
        .compare(Cmp::Gt, zero)
        .unwrap();
    // The true branch captures `two`'s sibling input `b`, the false branch nothing: the op
    // takes the union.
    let out = scope
        .cond(
            pred,
            |ops| Ok(vec![ops[0].mul(two)?.add(b)?, ops[0]]),
            |ops| Ok(vec![ops[0].neg()?, ops[0].exp()?]),
            &[x],
        )
        .unwrap();
    assert_eq!(out.len(), 2);
    let p = scope
        .program(&[x, b], &[("y", out[0]), ("z", out[1])])
        .unwrap();
    let mut rt = Runtime::new(&p).unwrap();
    let bv = [10.0f32, 20.0, 30.0];
    for xv in [[1.0f32, 2.0, -0.5], [-1.0, 0.5, -3.0]] {
        let o = rt
            .run(&[
                ("x", &ArrayView::new(&[3], &xv).unwrap()),
                ("b", &ArrayView::new(&[3], &bv).unwrap()),
            ])
            .unwrap();
        let taken = xv.iter().sum::<f32>() > 0.0;
        let (y, z): (Vec<f32>, Vec<f32>) = if taken {
            (
                xv.iter().zip(&bv).map(|(x, b)| x * 2.0 + b).collect(),
                xv.to_vec(),
            )
        } else {
            (
                xv.iter().map(|x| -x).collect(),
                xv.iter().map(|x| x.exp()).collect(),
            )
        };
        assert_close(o["y"].as_slice::<f32>().unwrap(), &y, "y");
        assert_close(o["z"].as_slice::<f32>().unwrap(), &z, "z");
    }
}

#[test]
fn cond_branch_shape_mismatch_and_errors() {
    let scope = Scope::new(&[]).unwrap();
    let x = scope.input("x", DType::F32, "n").unwrap();
    let pred = scope.constant::<bool>(&[], &[true]).unwrap();
    // Sizes that differ (n and 2n) give a data-dependent size; ranks that differ are refused.
    let r = scope
        .cond(
            pred,
            |ops| Ok(vec![ops[0]]),
            |ops| Ok(vec![Tensor::concatenate(&[ops[0], ops[0]], 0)?]),
            &[x],
        )
        .unwrap();
    assert_eq!(r.len(), 1);
    let err = scope
        .cond(
            pred,
            |ops| Ok(vec![ops[0]]),
            |ops| Ok(vec![ops[0].reduce(ReduceOp::Sum, &[0], false)?]),
            &[x],
        )
        .unwrap_err();
    assert_eq!(err.code(), Code::ShapeMismatch, "{}", err);
    assert!(err.to_string().contains("equal ranks"), "{}", err);
    // A different number of results is the binding's InvalidArgument.
    let err = scope
        .cond(pred, |ops| Ok(vec![ops[0]]), |_| Ok(vec![]), &[x])
        .unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument, "{}", err);
    // An error inside a closure comes back unchanged.
    let err = scope
        .cond(
            pred,
            |ops| Ok(vec![ops[0].reduce(ReduceOp::Sum, &[3], false)?]),
            |ops| Ok(vec![ops[0]]),
            &[x],
        )
        .unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument, "{}", err);
    // A body that changes the carry's shape.
    let err = scope
        .while_loop(
            |_| Ok(pred),
            |c| Ok(vec![Tensor::concatenate(&[c[0], c[0]], 0)?]),
            &[x],
            None,
        )
        .unwrap_err();
    assert_eq!(err.code(), Code::ShapeMismatch, "{}", err);
    // The scope is still usable afterwards.
    let p = scope.program(&[x], &[("y", x.neg().unwrap())]).unwrap();
    assert_eq!(p.output_count(), 1);
}

#[test]
fn cond_nested_in_scan_body() {
    // Sum of |x_t| by a scan whose body branches on the sign of x_t, adding `w` (captured
    // from the outer trace through both the scan and the cond) to the negative ones.
    let scope = Scope::new(&[]).unwrap();
    scope.declare("t", 0, 100).unwrap();
    let x = scope.input("x", DType::F32, "t").unwrap();
    let w = scope.input("w", DType::F32, "").unwrap();
    let zero = scope.constant::<f32>(&[], &[0.0]).unwrap();
    let (carry, _) = scope
        .scan(
            |c, xt| {
                let neg = xt[0].compare(Cmp::Lt, zero)?;
                let r = scope.cond(
                    neg,
                    |o| Ok(vec![o[0].sub(o[1])?.add(w)?]),
                    |o| Ok(vec![o[0].add(o[1])?]),
                    &[c[0], xt[0]],
                )?;
                Ok((r, vec![]))
            },
            &[zero],
            &[x],
            None,
            false,
            0,
        )
        .unwrap();
    let p = scope.program(&[x, w], &[("s", carry[0])]).unwrap();
    let p = Program::load(&p.serialize().unwrap()).unwrap();
    let mut rt = Runtime::new(&p).unwrap();
    let xs = [1.0f32, -2.0, 3.0, -4.0];
    let out = rt
        .run(&[
            ("x", &ArrayView::new(&[4], &xs).unwrap()),
            ("w", &ArrayView::new(&[], &[100.0f32]).unwrap()),
        ])
        .unwrap();
    assert_eq!(out["s"].as_slice::<f32>().unwrap(), &[210.0]);
}

#[test]
fn max_loop_iterations_bounds_untrusted_loops() {
    let scope = Scope::new(&[]).unwrap();
    scope.declare("n", 0, i64::MAX).unwrap();
    let x = scope.input("x", DType::F32, "n").unwrap();
    let zero = scope.constant::<i64>(&[], &[0]).unwrap();
    let one = scope.constant::<i64>(&[], &[1]).unwrap();
    let onef = scope.constant::<f32>(&[], &[1.0]).unwrap();
    // Never ends: the counter only grows.
    let forever = scope
        .while_loop(
            |c| c[1].compare(Cmp::Ge, zero),
            |c| Ok(vec![c[0].add(onef)?, c[1].add(one)?]),
            &[x, zero],
            None,
        )
        .unwrap();
    let zerof = scope.constant::<f32>(&[], &[0.0]).unwrap();
    let (total, _) = scope
        .scan(
            |c, xi| Ok((vec![c[0].add(xi[0])?], vec![])),
            &[zerof],
            &[x],
            None,
            false,
            0,
        )
        .unwrap();
    let p = scope
        .program(&[x], &[("forever", forever[0]), ("total", total[0])])
        .unwrap();
    let bounded = RuntimeOptions::new().max_loop_iterations(100);
    let mut rt = Runtime::with_options(&p, &bounded).unwrap();
    let err = rt
        .run(&[("x", &ArrayView::new(&[3], &[1.0f32; 3]).unwrap())])
        .unwrap_err();
    assert_eq!(err.code(), Code::ConstraintViolation, "{}", err);
    assert!(
        err.message().contains("max_loop_iterations = 100"),
        "{}",
        err
    );
    // A scan of 100 steps is allowed at 100 and refused (before it starts) at 101.
    let q = scope.program(&[x], &[("total", total[0])]).unwrap();
    let mut rt = Runtime::with_options(&q, &bounded).unwrap();
    let out = rt
        .run(&[("x", &ArrayView::new(&[100], &[1.0f32; 100]).unwrap())])
        .unwrap();
    assert_eq!(out["total"].as_slice::<f32>().unwrap(), &[100.0]);
    let mut rt = Runtime::with_options(&q, &bounded).unwrap();
    let err = rt
        .run(&[("x", &ArrayView::new(&[101], &[1.0f32; 101]).unwrap())])
        .unwrap_err();
    assert_eq!(err.code(), Code::ConstraintViolation, "{}", err);
    assert!(err.message().contains("scan"), "{}", err);
    // -1 is no bound (the default); below -1 is refused.
    let unbounded = RuntimeOptions::new().max_loop_iterations(-1);
    let mut rt = Runtime::with_options(&q, &unbounded).unwrap();
    let out = rt
        .run(&[("x", &ArrayView::new(&[101], &[1.0f32; 101]).unwrap())])
        .unwrap();
    assert_eq!(out["total"].as_slice::<f32>().unwrap(), &[101.0]);
    let err = Runtime::with_options(&p, &RuntimeOptions::new().max_loop_iterations(-2))
        .err()
        .unwrap();
    assert_eq!(err.code(), Code::InvalidArgument, "{}", err);
}

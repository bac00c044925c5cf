//! Parameters, input and output roles, defaults, and jvp/vjp/grad through the safe crate:
//! the gradient of a small loss with a parameter, saved, reloaded and run through `Twin` with
//! and without the parameter given, against values computed here by hand.
mod common;
use common::twin::{reload, Twin};

use shapepoly::{Array, ArrayView, Code, DType, InputRole, OutputRole, Program, Scope};

const W: [f32; 4] = [0.5, -1.0, 2.0, 0.25];

/// loss = reduce_sum(tanh(x @ w)), x of shape (batch, 2), w a 2x2 parameter.
fn loss() -> Program {
    let scope = Scope::new(&[]).unwrap();
    let x = scope.input("x", DType::F32, "batch, 2").unwrap();
    let w = scope.parameter::<f32>("w", &[2, 2], &W).unwrap();
    let l = x
        .matmul(w)
        .unwrap()
        .tanh()
        .unwrap()
        .reduce(shapepoly::ReduceOp::Sum, &[], false)
        .unwrap();
    scope.program(&[x, w], &[("loss", l)]).unwrap()
}

/// (loss, dloss/dx, dloss/dw) by hand, in double: d tanh(h) = 1 - tanh(h)^2.
fn by_hand(x: &[f32], w: &[f32]) -> (f64, Vec<f64>, Vec<f64>) {
    let rows = x.len() / 2;
    let (mut l, mut gx, mut gw) = (0.0, vec![0.0; x.len()], vec![0.0; 4]);
    for r in 0..rows {
        for c in 0..2 {
            let h = x[r * 2] as f64 * w[c] as f64 + x[r * 2 + 1] as f64 * w[2 + c] as f64;
            let t = h.tanh();
            l += t;
            let d = 1.0 - t * t;
            for k in 0..2 {
                gw[k * 2 + c] += x[r * 2 + k] as f64 * d;
                gx[r * 2 + k] += w[k * 2 + c] as f64 * d;
            }
        }
    }
    (l, gx, gw)
}

fn assert_close(got: &[f32], want: &[f64], what: &str) {
    assert_eq!(got.len(), want.len(), "{}", what);
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!(
            (*g as f64 - w).abs() <= 1e-5 * w.abs().max(1.0),
            "{}[{}]: {} vs {}",
            what,
            i,
            g,
            w
        );
    }
}

#[test]
fn parameter_roles_and_default() {
    let p = loss();
    let ins = p.inputs().unwrap();
    assert_eq!(ins[0].role, InputRole::Data);
    assert!(!ins[0].has_default);
    assert_eq!(ins[1].name, "w");
    assert_eq!(ins[1].role, InputRole::Parameter);
    assert_eq!(ins[1].shape, "(2, 2)");
    assert!(ins[1].has_default);
    assert!(p.input_has_default(1));
    assert!(!p.input_has_default(7));
    let w = p.input_default(1).unwrap();
    assert_eq!(w.shape(), &[2, 2]);
    assert_eq!(w.to_vec::<f32>().unwrap(), W);
    let e = p.input_default(0).unwrap_err();
    assert_eq!(e.code(), Code::InvalidArgument);
    assert!(e.message().contains("'x' has no default"), "{}", e);
    assert_eq!(p.output_role(0), Some(OutputRole::Primal));
    assert_eq!(p.output_role(1), None);
    assert_eq!(p.outputs().unwrap()[0].role, OutputRole::Primal);
    // The default survives serialization.
    assert_eq!(
        reload(&p)
            .input_default(1)
            .unwrap()
            .to_vec::<f32>()
            .unwrap(),
        W
    );

    // Parameters of every shape and from raw bytes; reserved names and wrong sizes.
    let s = Scope::new(&[]).unwrap();
    let b = s
        .parameter_bytes("b", DType::F64, &[], &2.5f64.to_le_bytes())
        .unwrap();
    assert_eq!(b.dtype(), DType::F64);
    let e = s.parameter::<f32>("w.grad", &[], &[1.0]).unwrap_err();
    assert_eq!(e.code(), Code::InvalidArgument);
    let e = s.parameter::<f32>("v", &[3], &[1.0, 2.0]).unwrap_err();
    assert_eq!(e.code(), Code::InvalidArgument);
    let e = s.parameter::<f32>("nul\0", &[], &[1.0]).unwrap_err();
    assert_eq!(e.code(), Code::InvalidArgument);
}

#[test]
fn grad_runs_with_and_without_the_parameter() {
    let g = loss().grad("loss", &["x", "w"]).unwrap();
    let ins = g.inputs().unwrap();
    let names: Vec<&str> = ins.iter().map(|i| i.name.as_str()).collect();
    assert_eq!(names, ["x", "w", "loss.cotangent"]);
    assert_eq!(ins[2].role, InputRole::Cotangent);
    assert!(ins[2].has_default);
    assert_eq!(g.input_default(2).unwrap().to_vec::<f32>().unwrap(), [1.0]);
    let outs = g.outputs().unwrap();
    let roles: Vec<(&str, OutputRole)> = outs.iter().map(|o| (o.name.as_str(), o.role)).collect();
    assert_eq!(
        roles,
        [
            ("loss", OutputRole::Primal),
            ("x.grad", OutputRole::Grad),
            ("w.grad", OutputRole::Grad)
        ]
    );

    let mut rt = Twin::new(&g);
    let w2: Vec<f32> = W.iter().map(|v| v * -0.5).collect();
    for rows in [3usize, 1, 5] {
        let xv: Vec<f32> = (0..rows * 2).map(|k| (k as f32 - 2.5) * 0.4).collect();
        let x = ArrayView::new(&[rows as i64, 2], &xv).unwrap();
        // w left out: its default.
        let out = rt.run(&[("x", &x)]).unwrap();
        let (l, gx, gw) = by_hand(&xv, &W);
        assert_close(&out["loss"].to_vec::<f32>().unwrap(), &[l], "loss");
        assert_close(&out["x.grad"].to_vec::<f32>().unwrap(), &gx, "x.grad");
        assert_close(&out["w.grad"].to_vec::<f32>().unwrap(), &gw, "w.grad");
        // w given by name replaces the default.
        let wa = Array::from_slice(&[2, 2], &w2).unwrap();
        let out = rt.run(&[("w", &wa), ("x", &x)]).unwrap();
        let (l, gx, gw) = by_hand(&xv, &w2);
        assert_close(
            &out["loss"].to_vec::<f32>().unwrap(),
            &[l],
            "loss (w given)",
        );
        assert_close(
            &out["x.grad"].to_vec::<f32>().unwrap(),
            &gx,
            "x.grad (w given)",
        );
        assert_close(
            &out["w.grad"].to_vec::<f32>().unwrap(),
            &gw,
            "w.grad (w given)",
        );
        // Naming the cotangent scales the gradient.
        let three = 3.0f32;
        let ct = ArrayView::scalar(&three).unwrap();
        let out = rt.run(&[("x", &x), ("loss.cotangent", &ct)]).unwrap();
        let (_, gx, _) = by_hand(&xv, &W);
        let gx3: Vec<f64> = gx.iter().map(|v| v * 3.0).collect();
        assert_close(
            &out["x.grad"].to_vec::<f32>().unwrap(),
            &gx3,
            "x.grad scaled",
        );
    }

    // A parameter given with the wrong shape, a missing data input.
    let xv = [1.0f32, 2.0];
    let x = ArrayView::new(&[1, 2], &xv).unwrap();
    let bad = Array::from_slice(&[4], &W).unwrap();
    let e = rt.run(&[("x", &x), ("w", &bad)]).unwrap_err();
    assert_eq!(e.code(), Code::ShapeMismatch, "{}", e);
    let e = rt.run(&[]).unwrap_err();
    assert_eq!(e.code(), Code::InvalidArgument);
    assert!(e.message().contains("input 'x' is missing"), "{}", e);
}

#[test]
fn only_defaulted_inputs_left_out() {
    // Every input has a default: a run without inputs binds by name (none) and uses them all.
    let s = Scope::new(&[]).unwrap();
    let w = s.parameter::<f64>("w", &[3], &[1.0, -2.0, 0.5]).unwrap();
    let l = w
        .mul(w)
        .unwrap()
        .reduce(shapepoly::ReduceOp::Sum, &[], false)
        .unwrap();
    let g = s
        .program(&[w], &[("l", l)])
        .unwrap()
        .grad("l", &["w"])
        .unwrap();
    let out = Twin::new(&g).run(&[]).unwrap();
    assert_eq!(out["l"].to_vec::<f64>().unwrap(), [5.25]);
    assert_eq!(out["w.grad"].to_vec::<f64>().unwrap(), [2.0, -4.0, 1.0]);
}

#[test]
fn jvp_vjp_and_composition() {
    let p = reload(&loss());
    let j = p.jvp(&["w"]).unwrap();
    let ins = j.inputs().unwrap();
    assert_eq!(ins[2].name, "w.tangent");
    assert_eq!(ins[2].role, InputRole::Tangent);
    assert!(!ins[2].has_default);
    assert_eq!(j.output_name(1).unwrap(), "loss.tangent");
    assert_eq!(j.output_role(1), Some(OutputRole::Tangent));
    // The directional derivative along the tangent equals <w.grad, tangent>.
    let xv = [1.0f32, 2.0, -1.0, 0.5, 0.0, 3.0];
    let t = [1.0f32, 0.0, -2.0, 0.5];
    let x = ArrayView::new(&[3, 2], &xv).unwrap();
    let tv = ArrayView::new(&[2, 2], &t).unwrap();
    let out = Twin::new(&j).run(&[("x", &x), ("w.tangent", &tv)]).unwrap();
    let (_, _, gw) = by_hand(&xv, &W);
    let dot: f64 = gw.iter().zip(&t).map(|(g, t)| g * *t as f64).sum();
    assert_close(
        &out["loss.tangent"].to_vec::<f32>().unwrap(),
        &[dot],
        "loss.tangent",
    );
    // Leaving the tangent out names what it is.
    let e = Twin::new(&j).run(&[("x", &x)]).unwrap_err();
    assert!(
        e.message().contains("'w.tangent' (the tangent of 'w')"),
        "{}",
        e
    );

    let v = p.vjp(&["loss"], &["w"]).unwrap();
    assert_eq!(v.input_name(2).unwrap(), "loss.cotangent");
    assert_eq!(v.input_role(2), Some(InputRole::Cotangent));
    assert!(!v.input_has_default(2)); // only grad gives the cotangent a default
    assert_eq!(v.output_role(1), Some(OutputRole::Grad));
    let two = 2.0f32;
    let ct = ArrayView::scalar(&two).unwrap();
    let out = Twin::new(&v)
        .run(&[("x", &x), ("loss.cotangent", &ct)])
        .unwrap();
    let gw2: Vec<f64> = gw.iter().map(|g| g * 2.0).collect();
    assert_close(&out["w.grad"].to_vec::<f32>().unwrap(), &gw2, "vjp w.grad");

    // jvp of grad (a Hessian-vector product): derived names repeat their suffix.
    let hvp = p.grad("loss", &["x"]).unwrap().jvp(&["x"]).unwrap();
    assert_eq!(hvp.input_role(3), Some(InputRole::Tangent));
    assert_eq!(hvp.output_name(3).unwrap(), "x.grad.tangent");
    assert_eq!(hvp.output_role(3), Some(OutputRole::Tangent));
}

#[test]
fn transformation_errors() {
    let p = loss();
    let e = p.grad("loss", &["nope"]).unwrap_err();
    assert_eq!(e.code(), Code::NotFound);
    assert!(
        e.message().contains("no input 'nope' (the inputs: x, w)"),
        "{}",
        e
    );
    let e = p.jvp(&["nope"]).unwrap_err();
    assert_eq!(e.code(), Code::NotFound);
    let e = p.vjp(&["nope"], &["w"]).unwrap_err();
    assert_eq!(e.code(), Code::NotFound);
    let e = p.grad("nope", &["w"]).unwrap_err();
    assert_eq!(e.code(), Code::NotFound);
    let e = p.grad("loss", &["w", "w"]).unwrap_err();
    assert_eq!(e.code(), Code::InvalidArgument);
    let e = p.grad("loss", &["a\0b"]).unwrap_err();
    assert_eq!(e.code(), Code::InvalidArgument);
    // grad wants a scalar output.
    let s = Scope::new(&[]).unwrap();
    let x = s.input("x", DType::F32, "n").unwrap();
    let y = x.exp().unwrap();
    let q = s.program(&[x], &[("y", y)]).unwrap();
    assert_eq!(q.grad("y", &["x"]).unwrap_err().code(), Code::ShapeMismatch);
    // Integer inputs carry no derivative.
    let i = s.input("i", DType::I32, "n").unwrap();
    let q = s.program(&[i], &[("j", i)]).unwrap();
    assert_eq!(q.jvp(&["i"]).unwrap_err().code(), Code::DtypeMismatch);
}

/// Tangents may have defaults (issue 38 item 12): `jvp_with_default_tangents` gives x.tangent the
/// fill 1 over x's symbolic shape and w.tangent 0.5; a run that leaves them out equals a run
/// that gives those arrays, after a save/load round trip too.
#[test]
fn jvp_default_tangents() {
    let p = loss();
    let j = p
        .jvp_with_default_tangents(&["x", "w"], &[1.0, 0.5])
        .unwrap();
    let ins = j.inputs().unwrap();
    assert_eq!(ins[2].name, "x.tangent");
    assert!(ins[2].has_default && ins[3].has_default);
    assert_eq!(j.input_default_fill(2).unwrap(), 1.0);
    assert_eq!(j.input_default_fill(3).unwrap(), 0.5);
    assert_eq!(
        j.input_default_fill(1).unwrap_err().code(),
        Code::InvalidArgument
    );
    // x.tangent's shape is symbolic: no array; w.tangent's is constant.
    assert_eq!(
        j.input_default(2).unwrap_err().code(),
        Code::InvalidArgument
    );
    assert_eq!(
        j.input_default(3).unwrap().to_vec::<f32>().unwrap(),
        [0.5; 4]
    );
    let xv = [1.0f32, 2.0, -1.0, 0.5, 0.0, 3.0];
    let ones = [1.0f32; 6];
    let halves = [0.5f32; 4];
    let x = ArrayView::new(&[3, 2], &xv).unwrap();
    let tx = ArrayView::new(&[3, 2], &ones).unwrap();
    let tw = ArrayView::new(&[2, 2], &halves).unwrap();
    for prog in [reload(&j), j] {
        let by_default = Twin::new(&prog).run(&[("x", &x)]).unwrap();
        let given = Twin::new(&prog)
            .run(&[("x", &x), ("x.tangent", &tx), ("w.tangent", &tw)])
            .unwrap();
        assert_eq!(
            by_default["loss.tangent"].to_vec::<f32>().unwrap(),
            given["loss.tangent"].to_vec::<f32>().unwrap()
        );
    }
    // One value per name; values must be finite in the tangent's dtype.
    assert_eq!(
        p.jvp_with_default_tangents(&["x", "w"], &[1.0])
            .unwrap_err()
            .code(),
        Code::InvalidArgument
    );
    let e = p
        .jvp_with_default_tangents(&["x"], &[f64::NAN])
        .unwrap_err();
    assert_eq!(e.code(), Code::InvalidArgument);
    assert!(e.message().contains("not a finite f32 value"), "{}", e);
}

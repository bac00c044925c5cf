//! Batching (`Program::vmap`, `shp_program_vmap`) through the safe crate: the contract MLP's
//! loss for one example (its weights as parameters) batched over x and labels, against the
//! unbatched program run on each example; per-example gradients (vmap of grad) against grad
//! per example; vmap of a vmap; the errors, after which the program stays usable; and the
//! save/load round trip of a batched program.
mod common;
use common::mlp;
use common::twin::{reload, Twin};

use shapepoly::{Array, ArrayView, Code, DType, Outputs, Program, ReduceOp, Runtime, Scope};

/// The batch sizes every comparison runs at (0: an empty batch runs).
const BATCHES: [usize; 4] = [0, 1, 7, 64];

/// The loss of one example: x `(64)`, one-hot labels `(10)`, the contract's six weights as
/// parameters; outputs `loss` (a scalar, the cross-entropy) and `probs` `(10)`.
fn example_loss() -> Program {
    let scope = Scope::new(&[]).unwrap();
    let x = scope.input("x", DType::F32, "64").unwrap();
    let labels = scope.input("labels", DType::F32, "10").unwrap();
    let mut w = Vec::new();
    for (name, seed, shape) in mlp::PARAMETERS {
        let n = shape.iter().product::<i64>() as usize;
        w.push(
            scope
                .parameter::<f32>(name, shape, &mlp::constant_data(n, seed))
                .unwrap(),
        );
    }
    let zero = scope.constant::<f32>(&[], &[0.0]).unwrap();
    let h1 = x.matmul(w[0]).unwrap().add(w[1]).unwrap();
    let h1 = h1.maximum(zero).unwrap();
    let h2 = h1.matmul(w[2]).unwrap().add(w[3]).unwrap();
    let h2 = h2.maximum(zero).unwrap();
    let logits = h2.matmul(w[4]).unwrap().add(w[5]).unwrap();
    let probs = logits.softmax(0).unwrap();
    let loss = labels
        .mul(probs.log().unwrap())
        .unwrap()
        .reduce(ReduceOp::Sum, &[], false)
        .unwrap()
        .neg()
        .unwrap();
    let mut inputs = vec![x, labels];
    inputs.extend(&w);
    scope
        .program(&inputs, &[("loss", loss), ("probs", probs)])
        .unwrap()
}

/// in_axes of `example_loss` (and of its grad, whose last input is `loss.cotangent`): x and
/// labels batched on axis 0, every other input shared.
fn data_axes(p: &Program) -> Vec<i64> {
    (0..p.input_count())
        .map(|i| match p.input_name(i).as_deref() {
            Some("x") | Some("labels") => 0,
            _ => -1,
        })
        .collect()
}

fn run_batch(rt: &mut Twin, batch: usize) -> Outputs {
    let x = mlp::input_data(batch);
    let labels = mlp::labels_data(batch);
    let xv = ArrayView::new(&[batch as i64, 64], &x).unwrap();
    let lv = ArrayView::new(&[batch as i64, 10], &labels).unwrap();
    rt.run(&[("x", &xv), ("labels", &lv)]).unwrap()
}

fn run_example(rt: &mut Runtime, batch: usize, e: usize) -> Outputs {
    let x = mlp::input_data(batch);
    let labels = mlp::labels_data(batch);
    let xv = ArrayView::new(&[64], &x[e * 64..(e + 1) * 64]).unwrap();
    let lv = ArrayView::new(&[10], &labels[e * 10..(e + 1) * 10]).unwrap();
    rt.run(&[("x", &xv), ("labels", &lv)]).unwrap()
}

/// Element `e` of the batched output `got` (batch axes first, `batch_axes` of them) against
/// the unbatched `want`, within 1e-6 relative (the bits agree today; the tolerance leaves a
/// batched kernel free to order its sums differently).
fn assert_element(got: &Array, batch_axes: usize, e: usize, want: &Array, what: &str) {
    let n = want.len();
    assert_eq!(&got.shape()[batch_axes..], want.shape(), "{} shape", what);
    let g = &got.as_slice::<f32>().unwrap()[e * n..(e + 1) * n];
    let w = want.as_slice::<f32>().unwrap();
    for (k, (a, b)) in g.iter().zip(w).enumerate() {
        assert!(
            (a - b).abs() <= 1e-6 * b.abs().max(1.0),
            "{}: element {} entry {}: batched {} vs alone {}",
            what,
            e,
            k,
            a,
            b
        );
    }
}

#[test]
fn vmap_of_the_mlp_loss_matches_each_example() {
    let p = example_loss();
    let v = p.vmap(&data_axes(&p), None, None).unwrap();
    let ins = v.inputs().unwrap();
    assert_eq!(ins[0].name, "x");
    assert_eq!(ins[0].shape, "(vmap0, 64)");
    assert_eq!(ins[1].shape, "(vmap0, 10)");
    assert_eq!(ins[2].name, "W1");
    assert_eq!(ins[2].shape, "(64, 32)", "the weights are shared");
    assert!(ins[2].has_default, "a parameter keeps its default");
    assert_eq!(v.output_shape_string(0).unwrap(), "(vmap0,)");
    assert_eq!(v.output_shape_string(1).unwrap(), "(vmap0, 10)");
    // The same by name.
    let by_name = p.vmap_by_name(&[("x", 0), ("labels", 0)], None).unwrap();
    assert_eq!(by_name.serialize().unwrap(), v.serialize().unwrap());

    let mut rt = Twin::new(&v);
    let mut one = Runtime::new(&p).unwrap();
    for batch in BATCHES {
        let got = run_batch(&mut rt, batch);
        assert_eq!(got["loss"].shape(), &[batch as i64]);
        assert_eq!(got["probs"].shape(), &[batch as i64, 10]);
        for e in 0..batch {
            let want = run_example(&mut one, batch, e);
            assert_element(&got["loss"], 1, e, &want["loss"], "loss");
            assert_element(&got["probs"], 1, e, &want["probs"], "probs");
        }
    }

    // out_axes: probs' batch axis last.
    let last = p.vmap(&data_axes(&p), Some(&[0, 1]), Some("n")).unwrap();
    assert_eq!(last.output_shape_string(1).unwrap(), "(10, n)");
    let got = run_batch(&mut Twin::new(&last), 7);
    let first = run_batch(&mut rt, 7);
    let (a, b) = (
        got["probs"].as_slice::<f32>().unwrap(),
        first["probs"].as_slice::<f32>().unwrap(),
    );
    for e in 0..7 {
        for j in 0..10 {
            assert_eq!(a[j * 7 + e].to_bits(), b[e * 10 + j].to_bits());
        }
    }
}

#[test]
fn per_example_gradients_are_vmap_of_grad() {
    let wrt: Vec<&str> = mlp::PARAMETERS.iter().map(|p| p.0).collect();
    let g = example_loss().grad("loss", &wrt).unwrap();
    let axes = data_axes(&g);
    assert_eq!(axes, [0, 0, -1, -1, -1, -1, -1, -1, -1]);
    assert_eq!(g.input_name(8).as_deref(), Some("loss.cotangent"));
    let vg = g.vmap(&axes, None, None).unwrap();
    let outs = vg.outputs().unwrap();
    assert_eq!(outs[1].name, "W1.grad");
    assert_eq!(outs[1].shape, "(vmap0, 64, 32)");
    let mut rt = Twin::new(&vg);
    let mut one = Runtime::new(&g).unwrap();
    for batch in BATCHES {
        let got = run_batch(&mut rt, batch);
        for e in 0..batch {
            let want = run_example(&mut one, batch, e);
            for name in [
                "loss", "W1.grad", "b1.grad", "W2.grad", "b2.grad", "W3.grad", "b3.grad",
            ] {
                assert_element(&got[name], 1, e, &want[name], name);
            }
        }
        assert_eq!(got["W1.grad"].shape(), &[batch as i64, 64, 32]);
    }
}

#[test]
fn vmap_of_vmap_adds_two_batch_axes() {
    let p = example_loss();
    let v1 = p.vmap(&data_axes(&p), None, None).unwrap();
    // No name needed: vmap0 is taken, so the second batch variable is vmap1.
    let v2 = v1
        .vmap(
            &data_axes(&v1)
                .iter()
                .map(|&a| if a == 0 { 1 } else { a })
                .collect::<Vec<_>>(),
            Some(&[1, 1]),
            None,
        )
        .unwrap();
    assert_eq!(v2.input_shape(0).unwrap(), "(vmap0, vmap1, 64)");
    assert_eq!(v2.input_shape(1).unwrap(), "(vmap0, vmap1, 10)");
    assert_eq!(v2.output_shape_string(0).unwrap(), "(vmap0, vmap1)");
    assert_eq!(v2.output_shape_string(1).unwrap(), "(vmap0, vmap1, 10)");
    // With the defaults the new axis goes first.
    let outer = v1.vmap(&data_axes(&v1), None, None).unwrap();
    assert_eq!(outer.input_shape(0).unwrap(), "(vmap1, vmap0, 64)");

    let (b0, b1) = (3usize, 5usize);
    let mut rt = Twin::new(&v2);
    let x = mlp::input_data(b0 * b1);
    let labels = mlp::labels_data(b0 * b1);
    let xv = ArrayView::new(&[b0 as i64, b1 as i64, 64], &x).unwrap();
    let lv = ArrayView::new(&[b0 as i64, b1 as i64, 10], &labels).unwrap();
    let got = rt.run(&[("x", &xv), ("labels", &lv)]).unwrap();
    assert_eq!(got["loss"].shape(), &[b0 as i64, b1 as i64]);
    let mut one = Runtime::new(&p).unwrap();
    for e in 0..b0 * b1 {
        let want = run_example(&mut one, b0 * b1, e);
        assert_element(&got["loss"], 2, e, &want["loss"], "loss");
        assert_element(&got["probs"], 2, e, &want["probs"], "probs");
    }
}

#[test]
fn errors_name_the_input_or_output_and_leave_the_program_usable() {
    let p = example_loss();
    let axes = data_axes(&p);
    let check = |r: shapepoly::Result<Program>, code: Code, parts: &[&str]| {
        let e = match r {
            Ok(_) => panic!("expected an error"),
            Err(e) => e,
        };
        assert_eq!(e.code(), code, "{}", e);
        for part in parts {
            assert!(
                e.message().contains(part),
                "{:?} lacks {:?}",
                e.message(),
                part
            );
        }
    };
    // Counts.
    check(
        p.vmap(&[0, 0], None, None),
        Code::InvalidArgument,
        &["2 in_axes for a program with 8 inputs"],
    );
    check(
        p.vmap(&[], None, None),
        Code::InvalidArgument,
        &["0 in_axes"],
    );
    check(
        p.vmap(&axes, Some(&[0, 0, 0]), None),
        Code::InvalidArgument,
        &["3 out_axes for a program with 2 outputs"],
    );
    // Axes out of range name the input or output.
    let mut bad = axes.clone();
    bad[0] = 2;
    check(
        p.vmap(&bad, None, None),
        Code::InvalidArgument,
        &["in_axes[0] = 2", "input 'x'", "[0, 1]"],
    );
    bad[0] = -2;
    check(
        p.vmap(&bad, None, None),
        Code::InvalidArgument,
        &["input 'x'"],
    );
    check(
        p.vmap(&axes, Some(&[0, 2]), None),
        Code::InvalidArgument,
        &["out_axes[1] = 2", "output 'probs'"],
    );
    check(
        p.vmap(&axes, Some(&[-1, 0]), None),
        Code::InvalidArgument,
        &["output 'loss' depends on a batched input"],
    );
    // A parameter has a default of a fixed shape.
    let mut bad = axes.clone();
    bad[2] = 0;
    check(
        p.vmap(&bad, None, None),
        Code::InvalidArgument,
        &["'W1'", "default"],
    );
    // No batched input.
    check(
        p.vmap(&[-1; 8], None, None),
        Code::InvalidArgument,
        &["no input is batched"],
    );
    // Taken, empty and invalid batch names.
    let v = p.vmap(&axes, None, None).unwrap();
    check(
        v.vmap(&data_axes(&v), None, Some("vmap0")),
        Code::InvalidArgument,
        &["'vmap0' is already a dimension variable"],
    );
    let s = Scope::new(&[]).unwrap();
    let x = s.input("x", DType::F32, "batch, 3").unwrap();
    let q = s.program(&[x], &[("y", x.neg().unwrap())]).unwrap();
    check(
        q.vmap(&[0], None, Some("batch")),
        Code::InvalidArgument,
        &["'batch' is already a dimension variable"],
    );
    check(
        p.vmap(&axes, None, Some("")),
        Code::InvalidArgument,
        &["batch_dim_name"],
    );
    check(p.vmap(&axes, None, Some("n\0")), Code::InvalidArgument, &[]);
    // An op whose result size differs per element cannot be batched.
    let z = s.input("z", DType::F32, "4").unwrap();
    let nz = s.program(&[z], &[("idx", z.nonzero().unwrap())]).unwrap();
    check(nz.vmap(&[0], None, None), Code::Unsupported, &["nonzero"]);
    // By name.
    check(
        p.vmap_by_name(&[("x", 0), ("nope", 0)], None),
        Code::NotFound,
        &["no input named 'nope'", "'x', 'labels', 'W1'"],
    );
    check(
        p.vmap_by_name(&[("x", 0), ("x", 1)], None),
        Code::InvalidArgument,
        &["'x' is given twice"],
    );
    check(
        p.vmap_by_name(&[], None),
        Code::InvalidArgument,
        &["no input is batched"],
    );

    // Every object is still usable: the program runs and batches.
    let mut one = Runtime::new(&p).unwrap();
    let want = run_example(&mut one, 1, 0);
    let got = run_batch(&mut Twin::new(&v), 1);
    assert_element(&got["loss"], 1, 0, &want["loss"], "loss after the errors");
    let w = p.vmap(&axes, None, Some("batch")).unwrap();
    assert_eq!(w.input_shape(0).unwrap(), "(batch, 64)");
    assert_eq!(
        q.vmap(&[1], None, None).unwrap().input_shape(0).unwrap(),
        "(batch, vmap0, 3)"
    );
}

#[test]
fn a_vmapped_program_saves_loads_and_runs_the_same() {
    let wrt: Vec<&str> = mlp::PARAMETERS.iter().map(|p| p.0).collect();
    let g = example_loss().grad("loss", &wrt).unwrap();
    let vg = g.vmap(&data_axes(&g), None, Some("examples")).unwrap();
    let bytes = vg.serialize().unwrap();
    let loaded = Program::load(&bytes).unwrap();
    assert_eq!(loaded.serialize().unwrap(), bytes);
    assert_eq!(loaded.to_text().unwrap(), vg.to_text().unwrap());
    assert_eq!(loaded.inputs().unwrap(), vg.inputs().unwrap());
    assert_eq!(loaded.outputs().unwrap(), vg.outputs().unwrap());
    assert_eq!(loaded.input_shape(0).unwrap(), "(examples, 64)");
    let path = std::env::temp_dir().join(format!("shapepoly_vmap_{}.shpoly", std::process::id()));
    vg.save(&path).unwrap();
    let from_file = Program::load_file(&path).unwrap();
    std::fs::remove_file(&path).unwrap();
    assert_eq!(from_file.serialize().unwrap(), bytes);
    for batch in BATCHES {
        let mut a = Twin::new(&vg); // the traced program against its reloaded copy
        let got = run_batch(&mut a, batch);
        let mut b = Twin::new(&from_file);
        let again = run_batch(&mut b, batch);
        for (name, x) in got.iter() {
            assert_eq!(x.shape(), again[name].shape(), "{}", name);
            assert_eq!(
                x.as_bytes(),
                again[name].as_bytes(),
                "{} at batch {}",
                name,
                batch
            );
        }
    }
    // A loaded program batches too (vmap works on loaded programs), and the result reloads.
    let loaded_g = reload(&g);
    let v2 = loaded_g
        .vmap(&data_axes(&g), None, Some("examples"))
        .unwrap();
    assert_eq!(v2.serialize().unwrap(), bytes);
}

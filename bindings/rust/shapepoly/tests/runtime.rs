//! Programs (create, introspect, serialize, load) and the runtime (named inputs and outputs).
//! Programs run through `Twin`, which reloads them and runs both copies.
use std::sync::Arc;

mod common;
use common::twin::{reload, Twin};

use shapepoly::{
    Array, ArrayRef, ArrayView, ArrayViewMut, Cmp, Code, DType, InputRole, LoadOptions, Program,
    Runtime, RuntimeOptions, Scope,
};

/// y = x @ w + 1 with x: (batch, 784) and a constant w: (784, 3) of ones/100.
fn dense_program() -> Program {
    let scope = Scope::new(&[]).unwrap();
    let x = scope.input("x", DType::F32, "batch, 784").unwrap();
    let w = scope
        .constant::<f32>(&[784, 3], &vec![0.01; 784 * 3])
        .unwrap();
    let one = scope.constant::<f32>(&[], &[1.0]).unwrap();
    let y = x.matmul(w).unwrap().add(one).unwrap();
    scope.program(&[x], &[("y", y)]).unwrap()
}

fn tmp_path(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("shapepoly-rust-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

#[test]
fn introspection_and_text() {
    let scope = Scope::new(&["n >= 2"]).unwrap();
    let x = scope.input("x", DType::F32, "n, 2*m").unwrap();
    let k = scope.dim_input("k").unwrap();
    let kf = k.convert(DType::F32).unwrap();
    let y = x.mul(kf).unwrap();
    let s = x.reduce(shapepoly::ReduceOp::Sum, &[1], false).unwrap();
    let n = scope.dim("n").unwrap();
    scope
        .check(
            n,
            Cmp::Le,
            scope.dim("100").unwrap(),
            Some("n is at most 100"),
        )
        .unwrap();
    let p = scope.program(&[x, k], &[("y", y), ("s", s)]).unwrap();
    drop(scope); // the program is independent of its scope

    assert_eq!(p.input_count(), 2);
    let ins = p.inputs().unwrap();
    assert_eq!(
        (ins[0].name.as_str(), ins[0].dtype, ins[0].role),
        ("x", DType::F32, InputRole::Data)
    );
    assert_eq!(ins[0].shape, "(n, 2*m)");
    assert_eq!(
        (ins[1].name.as_str(), ins[1].dtype, ins[1].role),
        ("k", DType::I64, InputRole::Dim)
    );
    let outs = p.outputs().unwrap();
    assert_eq!(outs.len(), 2);
    assert_eq!(
        (outs[0].name.as_str(), outs[0].dtype, outs[0].shape.as_str()),
        ("y", DType::F32, "(n, 2*m)")
    );
    assert_eq!(
        (outs[1].name.as_str(), outs[1].shape.as_str()),
        ("s", "(n,)")
    );
    assert_eq!(p.input_name(2), None);
    assert_eq!(p.input_dtype(2), None);
    assert_eq!(p.input_role(2), None);
    assert_eq!(p.output_dtype(9), None);
    assert_eq!(p.input_shape(7).unwrap_err().code(), Code::InvalidArgument);
    let mut vars = p.variables();
    vars.sort();
    assert_eq!(vars, ["k", "m", "n"]);
    assert_eq!(p.constraints(), ["n >= 2"]);
    let a = p.assertions();
    assert_eq!(a.len(), 1);
    assert_eq!(a[0].message, "n is at most 100");
    let text = p.to_text().unwrap();
    assert!(
        text.starts_with("program(x: f32[n, 2*m], k: i64[]) -> (y: f32[n, 2*m], s: f32[n])"),
        "{}",
        text
    );
    assert!(
        text.contains("n >= 2")
            && text.contains("\"n is at most 100\"")
            && text.contains("reduce_sum"),
        "{}",
        text
    );
    assert!(format!("{:?}", p).contains("\"x\""));

    let b = p.check_shapes(&[("x", &[5, 8]), ("k", &[3])]).unwrap();
    assert_eq!(
        (b.get("n"), b.get("m"), b.get("k")),
        (Some(5), Some(4), Some(3))
    );
    assert_eq!(p.output_shape(0, &b).unwrap(), [5, 8]);
    assert_eq!(p.output_shape(1, &b).unwrap(), [5]);
    let err = p.check_shapes(&[("x", &[5, 7]), ("k", &[3])]).unwrap_err();
    assert_eq!(err.code(), Code::ShapeMismatch, "{}", err);
    let err = p.check_shapes(&[("x", &[1, 8]), ("k", &[3])]).unwrap_err();
    assert_eq!(err.code(), Code::ConstraintViolation, "{}", err);
    let err = p
        .check_shapes(&[("x", &[200, 8]), ("k", &[3])])
        .unwrap_err();
    assert_eq!(err.code(), Code::ConstraintViolation, "{}", err);
    let err = p
        .check_shapes(&[("nope", &[5, 8]), ("k", &[3])])
        .unwrap_err();
    assert_eq!(err.code(), Code::NotFound, "{}", err);
    let err = p.check_shapes(&[("x", &[5, 8])]).unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument, "{}", err);
    let err = p.check_shapes(&[("x", &[5, 8]), ("k", &[])]).unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument, "{}", err);
}

#[test]
fn program_create_errors() {
    let scope = Scope::new(&[]).unwrap();
    let x = scope.input("x", DType::F32, "n").unwrap();
    let y = scope.input("y", DType::F32, "n").unwrap();
    let z = x.add(y).unwrap();
    let err = scope.program(&[x], &[("z", z)]).unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument, "{}", err);
    assert!(err.message().contains('y'), "{}", err);
    let err = scope.program(&[x, y], &[("z", z), ("z", z)]).unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument, "{}", err);
    let err = scope.program(&[x, z], &[("z", z)]).unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument, "{}", err);
    // A variable that no input determines.
    let io = scope
        .iota(DType::I32, &[scope.dim("len").unwrap()], 0)
        .unwrap();
    let err = scope.program(&[x], &[("io", io)]).unwrap_err();
    assert_eq!(err.code(), Code::Unsolvable, "{}", err);
    assert!(err.message().contains("len"), "{}", err);
    let other = Scope::new(&[]).unwrap();
    let w = other.input("w", DType::F32, "n").unwrap();
    let err = scope.program(&[w], &[("w", w)]).unwrap_err();
    assert_eq!(err.code(), Code::ScopeMismatch, "{}", err);
}

#[test]
fn serialize_load_round_trip() {
    let p = dense_program();
    let bytes = p.serialize().unwrap();
    assert_eq!(&bytes[4..8], b"SHP1");
    let q = Program::load(&bytes).unwrap();
    assert_eq!(
        q.serialize().unwrap(),
        bytes,
        "serialization is deterministic"
    );
    let path = tmp_path("dense.shpoly");
    p.save(&path).unwrap();
    let r = Program::load_file(&path).unwrap();
    assert_eq!(r.serialize().unwrap(), bytes);
    assert_eq!(r.inputs().unwrap(), p.inputs().unwrap());
    std::fs::remove_file(&path).unwrap();
}

#[test]
fn load_options_cap_the_constants() {
    let bytes = dense_program().serialize().unwrap();
    let total = 784 * 3 * 4 + 4; // the constants' bytes
    let q = Program::load_with_options(&bytes, &LoadOptions::new()).unwrap();
    assert_eq!(q.serialize().unwrap(), bytes);
    let q = Program::load_with_options(&bytes, &LoadOptions::new().max_bytes(total)).unwrap();
    assert_eq!(q.input_count(), 1);
    let err =
        Program::load_with_options(&bytes, &LoadOptions::new().max_bytes(total - 1)).unwrap_err();
    assert_eq!(err.code(), Code::InvalidProgram, "{}", err);
    assert!(
        err.message()
            .contains(&format!("max_bytes = {}", total - 1)),
        "{}",
        err
    );
    assert!(
        err.message().contains("shp_load_options_set_max_bytes"),
        "{}",
        err
    );
}

#[test]
fn corrupt_and_missing_files() {
    let err = Program::load(b"definitely not a program").unwrap_err();
    assert_eq!(err.code(), Code::InvalidProgram, "{}", err);
    let err = Program::load(&[]).unwrap_err();
    assert_eq!(err.code(), Code::InvalidProgram, "{}", err);
    let bytes = dense_program().serialize().unwrap();
    let err = Program::load(&bytes[..bytes.len() / 2]).unwrap_err();
    assert_eq!(err.code(), Code::InvalidProgram, "{}", err);
    // Flip bytes everywhere: never a crash, always a clean error or a valid program.
    for i in (0..bytes.len()).step_by(7) {
        let mut b = bytes.clone();
        b[i] ^= 0x5a;
        if let Err(e) = Program::load(&b) {
            assert!(
                matches!(e.code(), Code::InvalidProgram | Code::VersionMismatch),
                "{}",
                e
            );
        }
    }
    let path = tmp_path("corrupt.shpoly");
    let mut b = bytes.clone();
    b.truncate(40);
    std::fs::write(&path, &b).unwrap();
    let err = Program::load_file(&path).unwrap_err();
    assert_eq!(err.code(), Code::InvalidProgram, "{}", err);
    std::fs::remove_file(&path).unwrap();
    let err = Program::load_file(tmp_path("missing.shpoly")).unwrap_err();
    assert_eq!(err.code(), Code::NotFound, "{}", err);
    assert!(err.message().contains("missing.shpoly"), "{}", err);
}

#[test]
fn run_by_name_and_exact_errors() {
    let p = dense_program();
    let mut rt = Twin::new(&p);
    drop(p); // the runtime keeps the program alive
    assert_eq!(rt.input_names(), ["x"]);
    assert_eq!(rt.output_names(), ["y"]);

    let x: Vec<f32> = (0..2 * 784).map(|i| (i % 7) as f32).collect();
    let out = rt
        .run(&[("x", &ArrayView::new(&[2, 784], &x).unwrap())])
        .unwrap();
    assert_eq!(out.len(), 1);
    let y = &out["y"];
    assert_eq!((y.dtype(), y.shape()), (DType::F32, &[2i64, 3][..]));
    let want0: f32 = x[..784].iter().sum::<f32>() * 0.01 + 1.0;
    let got = y.as_slice::<f32>().unwrap();
    assert!(
        (got[0] - want0).abs() < 1e-3 * want0,
        "{} vs {}",
        got[0],
        want0
    );
    assert_eq!(y.as_slice::<f64>().unwrap_err().code(), Code::DtypeMismatch);
    assert!(out.get("nope").is_none());
    assert_eq!(out.names().collect::<Vec<_>>(), ["y"]);

    // Shape mismatch, with the exact message.
    let bad = vec![0f32; 2 * 5];
    let err = rt
        .run(&[("x", &ArrayView::new(&[2, 5], &bad).unwrap())])
        .unwrap_err();
    assert_eq!(err.code(), Code::ShapeMismatch);
    assert_eq!(
        err.message(),
        "input 'x': axis 1 is 5 but the program requires 784"
    );
    // Unknown input name.
    let xa = Array::from_slice(&[2, 784], &x).unwrap();
    let err = rt.run(&[("z", &xa)]).unwrap_err();
    assert_eq!(err.code(), Code::NotFound, "{}", err);
    assert!(err.message().contains("'z'"), "{}", err);
    // Missing input, wrong dtype, wrong rank.
    let err = rt.run(&[]).unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument, "{}", err);
    let xd: Vec<f64> = vec![0.0; 784];
    let err = rt
        .run(&[("x", &ArrayView::new(&[1, 784], &xd).unwrap())])
        .unwrap_err();
    assert_eq!(err.code(), Code::DtypeMismatch, "{}", err);
    let err = rt
        .run(&[("x", &ArrayView::new(&[784], &x[..784]).unwrap())])
        .unwrap_err();
    assert_eq!(err.code(), Code::ShapeMismatch, "{}", err);
    // A view whose data does not match its shape.
    let err = ArrayView::new(&[3, 784], &x).unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument, "{}", err);
    assert_eq!(
        err.message(),
        "1568 elements given, shape (3, 784) needs 2352"
    );

    // After errors the runtime is fully usable; the owned array works as an input too.
    let again = rt.run(&[("x", &xa)]).unwrap();
    assert_eq!(again["y"].to_vec::<f32>().unwrap(), got);
    assert!(rt.plans_built() >= 1);
    assert!(rt.cache_hits() >= 1);
    assert!(rt.last_plan_build_ns() > 0);
    assert!(rt.num_threads() >= 1);
    assert!(!rt.simd_target().is_empty());
}

#[test]
fn dim_inputs_assertions_run_into_and_dry_run() {
    let scope = Scope::new(&[]).unwrap();
    let x = scope.input("x", DType::F32, "n").unwrap();
    let k = scope.dim_input("k").unwrap();
    let n = scope.dim("n").unwrap();
    let two = scope.constant_dim(2).unwrap();
    scope
        .check(
            n.modulo(two).unwrap(),
            Cmp::Eq,
            scope.constant_dim(0).unwrap(),
            Some("n must be even"),
        )
        .unwrap();
    // y = cumsum(x) * k ; r = iota(k) as f32
    let y = x
        .cumsum(0)
        .unwrap()
        .mul(k.convert(DType::F32).unwrap())
        .unwrap();
    let r = scope
        .iota(DType::F32, &[scope.dim("k").unwrap()], 0)
        .unwrap();
    let mask = x
        .compare(Cmp::Gt, scope.constant::<f32>(&[], &[1.5]).unwrap())
        .unwrap();
    let p = scope
        .program(&[x, k], &[("y", y), ("r", r), ("mask", mask)])
        .unwrap();
    let mut rt = Twin::with_options(
        &p,
        &RuntimeOptions::new().num_threads(1).plan_cache_capacity(2),
    );
    assert_eq!(rt.num_threads(), 1);

    let xs = [1.0f32, 2.0, 3.0, 4.0];
    let kv = 3i64;
    let out = rt
        .run(&[
            ("x", &ArrayView::new(&[4], &xs).unwrap()),
            ("k", &ArrayView::scalar(&kv).unwrap()),
        ])
        .unwrap();
    assert_eq!(out["y"].as_slice::<f32>().unwrap(), &[3.0, 9.0, 18.0, 30.0]);
    assert_eq!(out["r"].as_slice::<f32>().unwrap(), &[0.0, 1.0, 2.0]);
    assert_eq!(
        out["mask"].as_slice::<bool>().unwrap(),
        &[false, true, true, true]
    );
    // Inputs in any order, the dim input as an owned scalar array.
    let k4 = Array::scalar(4i64).unwrap();
    let out = rt
        .run(&[("k", &k4), ("x", &ArrayView::new(&[4], &xs).unwrap())])
        .unwrap();
    assert_eq!(out["r"].shape(), &[4]);
    let mut outs: Vec<_> = out.into_iter().collect();
    assert_eq!(outs.remove(0).0, "y");

    // The assertion is checked before running, with its message.
    let odd = [1.0f32, 2.0, 3.0];
    let err = rt
        .run(&[("x", &ArrayView::new(&[3], &odd).unwrap()), ("k", &k4)])
        .unwrap_err();
    assert_eq!(err.code(), Code::ConstraintViolation, "{}", err);
    assert!(err.message().contains("n must be even"), "{}", err);
    // A dim input of the wrong dtype.
    let kf = 3.0f32;
    let err = rt
        .run(&[
            ("x", &ArrayView::new(&[4], &xs).unwrap()),
            ("k", &ArrayView::scalar(&kf).unwrap()),
        ])
        .unwrap_err();
    assert_eq!(err.code(), Code::DtypeMismatch, "{}", err);

    // dry_run: output shapes from input shapes alone.
    assert_eq!(
        rt.dry_run(&[("x", &[6]), ("k", &[5])]).unwrap(),
        vec![vec![6], vec![5], vec![6]]
    );
    assert_eq!(rt.output_shape(1).unwrap(), [5]);
    assert_eq!(
        rt.dry_run(&[("x", &[5]), ("k", &[5])]).unwrap_err().code(),
        Code::ConstraintViolation
    );
    assert_eq!(
        rt.output_shape(9).unwrap_err().code(),
        Code::InvalidArgument
    );

    // run_into: caller-provided outputs, by name.
    let mut y = vec![0f32; 4];
    let mut r = Array::zeros(DType::F32, &[3]).unwrap();
    let mut m = Array::zeros(DType::Bool, &[4]).unwrap();
    {
        let mut yv = ArrayViewMut::new(&[4], &mut y).unwrap();
        let k3 = Array::scalar(3i64).unwrap();
        let xv = ArrayView::new(&[4], &xs).unwrap();
        rt.run_into(
            &[("x", &xv), ("k", &k3)],
            &mut [("r", &mut r), ("mask", &mut m), ("y", &mut yv)],
        )
        .unwrap();
        let err = rt
            .run_into(
                &[("x", &xv), ("k", &k3)],
                &mut [("r", &mut r), ("y", &mut yv)],
            )
            .unwrap_err();
        assert_eq!(err.code(), Code::InvalidArgument, "{}", err);
        let err = rt
            .run_into(&[("x", &xv), ("k", &k3)], &mut [("zz", &mut r)])
            .unwrap_err();
        assert_eq!(err.code(), Code::NotFound, "{}", err);
        let mut small = Array::zeros(DType::F32, &[2]).unwrap();
        let err = rt
            .run_into(
                &[("x", &xv), ("k", &k3)],
                &mut [("r", &mut small), ("mask", &mut m), ("y", &mut yv)],
            )
            .unwrap_err();
        assert_eq!(err.code(), Code::ShapeMismatch, "{}", err);
        assert_eq!(yv.shape(), [4]);
    }
    assert_eq!(y, [3.0, 9.0, 18.0, 30.0]);
    assert_eq!(r.as_slice::<f32>().unwrap(), &[0.0, 1.0, 2.0]);
    assert_eq!(m.as_slice::<bool>().unwrap(), &[false, true, true, true]);
    let mut bools = [false; 2];
    assert_eq!(
        ArrayViewMut::new(&[2], &mut bools).unwrap_err().code(),
        Code::InvalidArgument
    );

    // Options errors.
    let err = Runtime::with_options(&p, &RuntimeOptions::new().num_threads(-1)).unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument, "{}", err);
}

#[test]
fn arrays() {
    let mut a = Array::from_vec(&[2, 3], vec![1i32, 2, 3, 4, 5, 6]).unwrap();
    assert_eq!(
        (a.dtype(), a.shape(), a.len(), a.nbytes()),
        (DType::I32, &[2i64, 3][..], 6, 24)
    );
    a.as_mut_slice::<i32>().unwrap()[5] = 60;
    assert_eq!(a.to_vec::<i32>().unwrap(), [1, 2, 3, 4, 5, 60]);
    assert_eq!(a.as_bytes().len(), 24);
    let z = Array::zeros(DType::F64, &[0, 4]).unwrap();
    assert!(z.is_empty());
    assert_eq!(z.as_slice::<f64>().unwrap(), &[] as &[f64]);
    let s = Array::scalar(true).unwrap();
    assert_eq!(
        (s.shape(), s.as_slice::<bool>().unwrap()),
        (&[][..], &[true][..])
    );
    assert_eq!(
        Array::zeros(DType::F32, &[-1]).unwrap_err().code(),
        Code::InvalidArgument
    );
    assert_eq!(
        Array::zeros(DType::F32, &[i64::MAX, 4]).unwrap_err().code(),
        Code::Overflow
    );
    assert_eq!(
        Array::from_vec(&[4], vec![1.0f32]).unwrap_err().code(),
        Code::InvalidArgument
    );
    assert_eq!(format!("{:?}", a), "Array(i32[2, 3])");
    // Arrays move between threads.
    let h = std::thread::spawn(move || a.to_vec::<i32>().unwrap());
    assert_eq!(h.join().unwrap()[0], 1);
}

/// Data that does not fill its shape is reported in elements (the C API counts bytes), by every
/// constructor that takes typed data and a shape; the library still reports bad shapes itself.
#[test]
fn data_length_errors_count_elements() {
    let msg = |r: Result<(), shapepoly::Error>| {
        let err = r.unwrap_err();
        assert_eq!(err.code(), Code::InvalidArgument, "{}", err);
        err.message().to_string()
    };
    let six = [0.0f32; 6];
    let needs8 = "6 elements given, shape (2, 4) needs 8";
    assert_eq!(msg(ArrayView::new(&[2, 4], &six).map(drop)), needs8);
    assert_eq!(
        msg(ArrayViewMut::new(&[2, 4], &mut [0i64; 6]).map(drop)),
        needs8
    );
    assert_eq!(
        msg(Array::from_vec(&[2, 4], vec![0.0f64; 6]).map(drop)),
        needs8
    );
    assert_eq!(
        msg(Array::from_slice(&[2, 4], &[1i32; 6]).map(drop)),
        needs8
    );
    assert_eq!(
        msg(Array::from_vec(&[4], vec![1.0f32]).map(drop)),
        "1 element given, shape (4,) needs 4"
    );
    assert_eq!(
        msg(ArrayView::new(&[], &[true, false]).map(drop)),
        "2 elements given, shape () needs 1"
    );
    assert_eq!(
        msg(ArrayView::new(&[3, 0], &six).map(drop)),
        "6 elements given, shape (3, 0) needs 0"
    );
    let scope = Scope::new(&[]).unwrap();
    assert_eq!(msg(scope.constant(&[2, 4], &six).map(drop)), needs8);
    assert_eq!(msg(scope.parameter("w", &[2, 4], &six).map(drop)), needs8);
    // Matching lengths (also empty) work; negative and overflowing shapes are the library's.
    assert!(ArrayView::new(&[3, 2], &six).is_ok());
    assert!(ArrayView::new::<f32>(&[0, 5], &[]).is_ok());
    let err = ArrayView::new(&[-2, -3], &six).unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument, "{}", err);
    assert!(err.message().contains("negative"), "{}", err);
    let err = ArrayView::new(&[i64::MAX, 4], &six).unwrap_err();
    assert_eq!(err.code(), Code::Overflow, "{}", err);
}

/// One shared program, one runtime per thread; half of them run the reloaded copy.
#[test]
fn one_program_many_threads() {
    let traced = dense_program();
    let shared = [Arc::new(reload(&traced)), Arc::new(traced)];
    let handles: Vec<_> = (1..=4)
        .map(|batch| {
            let p = Arc::clone(&shared[batch % 2]);
            std::thread::spawn(move || {
                let mut rt = Runtime::new(&p).unwrap();
                let x = vec![1.0f32; batch * 784];
                let out = rt
                    .run(&[("x", &ArrayView::new(&[batch as i64, 784], &x).unwrap())])
                    .unwrap();
                out["y"].to_vec::<f32>().unwrap()
            })
        })
        .collect();
    for (i, h) in handles.into_iter().enumerate() {
        let y = h.join().unwrap();
        assert_eq!(y.len(), (i + 1) * 3);
        assert!(y.iter().all(|v| (v - 8.84).abs() < 1e-3), "{:?}", y);
    }
}

/// Empty integer-list attributes (dot_general without batch or contracting dims, transpose,
/// reduce and slice of a scalar) once serialized but failed to load ("misaligned vector").
/// Each program runs through `Twin` (reload, then both copies) and is checked against values
/// computed here.
#[test]
fn empty_integer_lists_survive_reload() {
    fn run_one(
        scope: &Scope,
        ins: &[shapepoly::Tensor<'_>],
        out: shapepoly::Tensor<'_>,
        shape: &str,
        feed: &[(&str, &dyn ArrayRef)],
    ) -> Array {
        let p = scope.program(ins, &[("out", out)]).unwrap();
        assert_eq!(p.outputs().unwrap()[0].shape, shape);
        let mut rt = Twin::new(&p);
        rt.run(feed).unwrap().remove("out").unwrap()
    }
    let scope = Scope::new(&[]).unwrap();

    // No batch dims: the common case.
    let a = scope.input("a", DType::F32, "m, k").unwrap();
    let b = scope.input("b", DType::F32, "k, n").unwrap();
    let (av, bv) = (
        [1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0],
        [1.0f32, -1.0, 2.0, 0.5, 0.0, 3.0],
    );
    let mm = a.dot_general(b, (&[], &[]), (&[1], &[0])).unwrap();
    let y = run_one(
        &scope,
        &[a, b],
        mm,
        "(m, n)",
        &[
            ("a", &ArrayView::new(&[2, 3], &av).unwrap()),
            ("b", &ArrayView::new(&[3, 2], &bv).unwrap()),
        ],
    );
    let mut want = [0f32; 4];
    for i in 0..2 {
        for j in 0..2 {
            want[i * 2 + j] = (0..3).map(|k| av[i * 3 + k] * bv[k * 2 + j]).sum();
        }
    }
    assert_eq!(
        (y.shape(), y.as_slice::<f32>().unwrap()),
        (&[2i64, 2][..], &want[..])
    );

    // Nothing at all: the outer product.
    let u = scope.input("u", DType::F64, "i").unwrap();
    let v = scope.input("v", DType::F64, "j").unwrap();
    let outer = u.dot_general(v, (&[], &[]), (&[], &[])).unwrap();
    let y = run_one(
        &scope,
        &[u, v],
        outer,
        "(i, j)",
        &[
            ("u", &ArrayView::new(&[3], &[1.0f64, 2.0, 3.0]).unwrap()),
            ("v", &ArrayView::new(&[2], &[10.0f64, -1.0]).unwrap()),
        ],
    );
    assert_eq!(y.shape(), [3, 2]);
    assert_eq!(
        y.as_slice::<f64>().unwrap(),
        [10.0, -1.0, 20.0, -2.0, 30.0, -3.0]
    );

    // Batch dims without contracting dims.
    let p = scope.input("p", DType::F32, "B, 2").unwrap();
    let q = scope.input("q", DType::F32, "B, 3").unwrap();
    let bo = p.dot_general(q, (&[0], &[0]), (&[], &[])).unwrap();
    let y = run_one(
        &scope,
        &[p, q],
        bo,
        "(B, 2, 3)",
        &[
            (
                "p",
                &ArrayView::new(&[2, 2], &[1.0f32, 2.0, 3.0, 4.0]).unwrap(),
            ),
            (
                "q",
                &ArrayView::new(&[2, 3], &[1.0f32, 0.0, -1.0, 2.0, 3.0, 4.0]).unwrap(),
            ),
        ],
    );
    assert_eq!(y.shape(), [2, 2, 3]);
    assert_eq!(
        y.as_slice::<f32>().unwrap(),
        [1.0, 0.0, -1.0, 2.0, 0.0, -2.0, 6.0, 9.0, 12.0, 8.0, 12.0, 16.0]
    );

    // Transpose, reduce and slice of a scalar.
    let x = scope.input("x", DType::F32, "").unwrap();
    let xv = -2.5f32;
    let xa = ArrayView::scalar(&xv).unwrap();
    let y = run_one(&scope, &[x], x.transpose(&[]).unwrap(), "()", &[("x", &xa)]);
    assert_eq!(
        (y.shape(), y.as_slice::<f32>().unwrap()),
        (&[][..], &[xv][..])
    );
    for &op in shapepoly::ReduceOp::ALL {
        for keepdims in [false, true] {
            let y = run_one(
                &scope,
                &[x],
                x.reduce(op, &[], keepdims).unwrap(),
                "()",
                &[("x", &xa)],
            );
            assert_eq!(
                (y.shape(), y.as_slice::<f32>().unwrap()),
                (&[][..], &[xv][..]),
                "{:?} keepdims {}",
                op,
                keepdims
            );
        }
    }
    let y = run_one(
        &scope,
        &[x],
        x.slice(&[], &[], &[]).unwrap(),
        "()",
        &[("x", &xa)],
    );
    assert_eq!(y.as_slice::<f32>().unwrap(), [xv]);
    let xi = scope.input("xi", DType::I32, "").unwrap();
    let seven = 7i32;
    let y = run_one(
        &scope,
        &[xi],
        xi.reduce(shapepoly::ReduceOp::Sum, &[], false).unwrap(),
        "()",
        &[("xi", &ArrayView::scalar(&seven).unwrap())],
    );
    assert_eq!(y.as_slice::<i32>().unwrap(), [7]);
}

//! The element types beyond f32/f64/i32/i64/bool: f16 and bf16 (their bits, as `F16`/`Bf16`),
//! i8, u8, i16, u16, u32, u64. Programs on them run through `Twin` (traced and reloaded).
mod common;
use common::twin::Twin;

use shapepoly::{
    Array, ArrayRef, ArrayView, ArrayViewMut, Bf16, Cmp, Code, DType, Element, Program, Scope, F16,
};

const NEW: [(DType, i32, &str, usize); 8] = [
    (DType::F16, 5, "f16", 2),
    (DType::Bf16, 6, "bf16", 2),
    (DType::I8, 7, "i8", 1),
    (DType::U8, 8, "u8", 1),
    (DType::I16, 9, "i16", 2),
    (DType::U16, 10, "u16", 2),
    (DType::U32, 11, "u32", 4),
    (DType::U64, 12, "u64", 8),
];

#[test]
fn dtype_values_names_and_sizes() {
    for (d, raw, name, size) in NEW {
        assert_eq!(d.raw(), raw, "{}", name);
        assert_eq!(DType::from_raw(raw), d);
        assert_eq!(
            (d.to_string(), d.name(), d.size()),
            (name.to_string(), Some(name), Some(size))
        );
        assert_eq!(name.parse::<DType>().unwrap(), d);
        assert_eq!(name.to_uppercase().parse::<DType>().unwrap(), d);
    }
    assert_eq!(DType::ALL.len(), 13);
    for (i, d) in DType::ALL.iter().enumerate() {
        assert_eq!(d.raw(), i as i32);
        assert_eq!(DType::from_raw(i as i32), *d);
    }
    // One Rust type per dtype: u16 is U16; the 16-bit floats have their own types.
    fn dtype_of<T: Element>() -> DType {
        T::DTYPE
    }
    let got = [
        dtype_of::<F16>(),
        dtype_of::<Bf16>(),
        dtype_of::<i8>(),
        dtype_of::<u8>(),
        dtype_of::<i16>(),
        dtype_of::<u16>(),
        dtype_of::<u32>(),
        dtype_of::<u64>(),
    ];
    assert_eq!(got, NEW.map(|n| n.0));
}

/// y = x + x and z = x @ w with x: (batch, 4), w: (4, 3), traced in `dtype`.
fn add_and_matmul(dtype: DType) -> Program {
    let scope = Scope::new(&[]).unwrap();
    let x = scope.input("x", dtype, "batch, 4").unwrap();
    let w = scope.input("w", dtype, "4, 3").unwrap();
    let y = x.add(x).unwrap();
    let z = x.matmul(w).unwrap();
    assert_eq!((y.dtype(), z.dtype()), (dtype, dtype));
    scope.program(&[x, w], &[("y", y), ("z", z)]).unwrap()
}

fn close(got: f32, want: f32) -> bool {
    (got - want).abs() <= 1e-2 * want.abs()
}

/// Runs add_and_matmul in a 16-bit float type `T` and in f32 on the same (rounded) inputs, at
/// batch 1 and 5.
fn half_matches_f32<T: Element + Into<f32>>(from_f32: fn(f32) -> T) {
    let program = add_and_matmul(T::DTYPE);
    assert_eq!(program.input_dtype(0), Some(T::DTYPE));
    assert_eq!(program.output_dtype(1), Some(T::DTYPE));
    assert!(
        program
            .to_text()
            .unwrap()
            .contains(&format!("x: {}[batch, 4]", T::DTYPE)),
        "{}",
        program.to_text().unwrap()
    );
    let mut rt = Twin::new(&program);
    let mut reference = Twin::new(&add_and_matmul(DType::F32));
    let w: Vec<T> = (0..12).map(|i| from_f32(0.25 + 0.125 * i as f32)).collect();
    let w32: Vec<f32> = w.iter().map(|&v| v.into()).collect();
    for batch in [1i64, 5] {
        let x: Vec<T> = (0..batch * 4)
            .map(|i| from_f32(1.0 + 0.37 * i as f32))
            .collect();
        let x32: Vec<f32> = x.iter().map(|&v| v.into()).collect();
        let out = rt
            .run(&[
                ("x", &ArrayView::new(&[batch, 4], &x).unwrap()),
                ("w", &ArrayView::new(&[4, 3], &w).unwrap()),
            ])
            .unwrap();
        let want = reference
            .run(&[
                ("x", &ArrayView::new(&[batch, 4], &x32).unwrap()),
                ("w", &ArrayView::new(&[4, 3], &w32).unwrap()),
            ])
            .unwrap();
        for (name, shape) in [("y", vec![batch, 4]), ("z", vec![batch, 3])] {
            assert_eq!(
                (out[name].dtype(), out[name].shape()),
                (T::DTYPE, &shape[..])
            );
            let got = out[name].as_slice::<T>().unwrap();
            let want = want[name].as_slice::<f32>().unwrap();
            assert_eq!(got.len(), want.len());
            for (i, (&g, &w)) in got.iter().zip(want).enumerate() {
                let g: f32 = g.into();
                assert!(
                    close(g, w),
                    "{} {} batch {} element {}: {} vs f32 {}",
                    T::DTYPE,
                    name,
                    batch,
                    i,
                    g,
                    w
                );
            }
        }
        // The values are the 16-bit floats of the f32 results: y = x + x is exact.
        let y = out["y"].to_vec::<T>().unwrap();
        for (v, x) in y.iter().zip(&x32) {
            assert_eq!((*v).into(), 2.0 * x);
        }
    }
}

#[test]
fn f16_add_and_matmul_match_f32() {
    half_matches_f32::<F16>(F16::from_f32);
}

#[test]
fn bf16_add_and_matmul_match_f32() {
    half_matches_f32::<Bf16>(Bf16::from_f32);
}

#[test]
fn u8_add_wraps() {
    let scope = Scope::new(&[]).unwrap();
    let a = scope.input("a", DType::U8, "n").unwrap();
    let b = scope.input("b", DType::U8, "n").unwrap();
    let program = scope.program(&[a, b], &[("c", a.add(b).unwrap())]).unwrap();
    let mut rt = Twin::new(&program);
    let out = rt
        .run(&[
            ("a", &ArrayView::new(&[3], &[250u8, 255, 1]).unwrap()),
            ("b", &ArrayView::new(&[3], &[10u8, 1, 2]).unwrap()),
        ])
        .unwrap();
    assert_eq!(out["c"].dtype(), DType::U8);
    assert_eq!(out["c"].as_slice::<u8>().unwrap(), &[4, 0, 3]);
    // Another element type is refused, by dtype, not by size.
    let err = rt
        .run(&[
            ("a", &ArrayView::new(&[3], &[-6i8, 1, 1]).unwrap()),
            ("b", &ArrayView::new(&[3], &[10u8, 1, 2]).unwrap()),
        ])
        .unwrap_err();
    assert_eq!(err.code(), Code::DtypeMismatch, "{}", err);
}

#[test]
fn u64_compares_as_unsigned() {
    let scope = Scope::new(&[]).unwrap();
    let a = scope.input("a", DType::U64, "n").unwrap();
    let b = scope.input("b", DType::U64, "n").unwrap();
    let gt = a.compare(Cmp::Gt, b).unwrap();
    let lt = a.compare(Cmp::Lt, b).unwrap();
    assert_eq!(gt.dtype(), DType::Bool);
    let program = scope.program(&[a, b], &[("gt", gt), ("lt", lt)]).unwrap();
    let mut rt = Twin::new(&program);
    let big = [u64::MAX, 1 << 63, 1, 0];
    let small = [1u64, 1, u64::MAX, 0];
    let out = rt
        .run(&[
            ("a", &ArrayView::new(&[4], &big).unwrap()),
            ("b", &ArrayView::new(&[4], &small).unwrap()),
        ])
        .unwrap();
    assert_eq!(
        out["gt"].as_slice::<bool>().unwrap(),
        &[true, true, false, false]
    );
    assert_eq!(
        out["lt"].as_slice::<bool>().unwrap(),
        &[false, false, true, false]
    );
}

#[test]
fn i8_inputs_and_outputs_round_trip() {
    let scope = Scope::new(&[]).unwrap();
    let x = scope.input("x", DType::I8, "n, 2").unwrap();
    let t = x.transpose(&[1, 0]).unwrap();
    let neg = x.neg().unwrap();
    let program = scope
        .program(&[x], &[("x", x), ("t", t), ("neg", neg)])
        .unwrap();
    let ins = program.inputs().unwrap();
    assert_eq!((ins[0].dtype, ins[0].shape.as_str()), (DType::I8, "(n, 2)"));
    assert!(program
        .outputs()
        .unwrap()
        .iter()
        .all(|o| o.dtype == DType::I8));
    let mut rt = Twin::new(&program);
    let data = [-128i8, -1, 0, 1, 100, 127];
    let out = rt
        .run(&[("x", &ArrayView::new(&[3, 2], &data).unwrap())])
        .unwrap();
    assert_eq!(out["x"].as_slice::<i8>().unwrap(), &data);
    assert_eq!(out["t"].shape(), &[2, 3]);
    assert_eq!(
        out["t"].as_slice::<i8>().unwrap(),
        &[-128, 0, 100, -1, 1, 127]
    );
    // -(-128) wraps to -128.
    assert_eq!(
        out["neg"].as_slice::<i8>().unwrap(),
        &[-128, 1, 0, -1, -100, -127]
    );

    // Owned arrays and caller-provided outputs of i8 too.
    let owned = Array::from_vec(&[3, 2], data.to_vec()).unwrap();
    assert_eq!((owned.dtype(), owned.nbytes()), (DType::I8, 6));
    let mut x_out = [0i8; 6];
    let mut t_out = Array::zeros(DType::I8, &[2, 3]).unwrap();
    let mut neg_out = [0i8; 6];
    {
        let mut xv = ArrayViewMut::new(&[3, 2], &mut x_out).unwrap();
        let mut nv = ArrayViewMut::new(&[3, 2], &mut neg_out).unwrap();
        rt.run_into(
            &[("x", &owned)],
            &mut [("x", &mut xv), ("t", &mut t_out), ("neg", &mut nv)],
        )
        .unwrap();
    }
    assert_eq!(x_out, data);
    assert_eq!(neg_out, [-128, 1, 0, -1, -100, -127]);
    assert_eq!(t_out.to_vec::<i8>().unwrap(), [-128, 0, 100, -1, 1, 127]);
    let err = t_out.as_slice::<u8>().unwrap_err();
    assert_eq!(err.code(), Code::DtypeMismatch, "{}", err);
}

#[test]
fn every_new_dtype_moves_through_a_program() {
    // Zeros, constants and element-moving ops for each type; the bits come back unchanged.
    fn check<T: Element + PartialEq + std::fmt::Debug>(values: [T; 4]) {
        let d = T::DTYPE;
        let scope = Scope::new(&[]).unwrap();
        let x = scope.input("x", d, "n").unwrap();
        let c = scope.constant::<T>(&[2], &values[..2]).unwrap();
        assert_eq!(c.dtype(), d);
        let r = x.reverse(&[0]).unwrap();
        let program = scope.program(&[x], &[("r", r), ("c", c)]).unwrap();
        let mut rt = Twin::new(&program);
        let out = rt
            .run(&[("x", &ArrayView::new(&[4], &values).unwrap())])
            .unwrap();
        let mut rev = values;
        rev.reverse();
        assert_eq!(out["r"].to_vec::<T>().unwrap(), rev, "{}", d);
        assert_eq!(out["c"].to_vec::<T>().unwrap(), &values[..2], "{}", d);
        let z = Array::zeros(d, &[2, 3]).unwrap();
        assert_eq!((z.dtype(), z.nbytes()), (d, 6 * d.size().unwrap()));
        assert_eq!(format!("{:?}", z), format!("Array({}[2, 3])", d));
    }
    check([
        F16::from_f32(-1.5),
        F16::from_f32(65504.0),
        F16::from_bits(1),
        F16::from_f32(0.1),
    ]);
    check([
        Bf16::from_f32(-1.5),
        Bf16::from_f32(3e38),
        Bf16::from_bits(1),
        Bf16::from_f32(0.1),
    ]);
    check([i8::MIN, -1, 0, i8::MAX]);
    check([0u8, 1, 128, u8::MAX]);
    check([i16::MIN, -1, 0, i16::MAX]);
    check([0u16, 1, 0x8000, u16::MAX]);
    check([0u32, 1, 1 << 31, u32::MAX]);
    check([0u64, 1, 1 << 63, u64::MAX]);
}

#[test]
fn u16_bits_are_not_a_float() {
    // The same 16 bits as U16 and as F16 are different arrays; reading one as the other fails.
    let bits = [0x3c00u16, 0x4000];
    let as_u16 = Array::from_slice(&[2], &bits).unwrap();
    let halves: Vec<F16> = bits.iter().map(|&b| F16::from_bits(b)).collect();
    let as_f16 = Array::from_vec(&[2], halves).unwrap();
    assert_eq!((as_u16.dtype(), as_f16.dtype()), (DType::U16, DType::F16));
    assert_eq!(as_u16.as_bytes(), as_f16.as_bytes());
    assert_eq!(
        as_u16.as_slice::<F16>().unwrap_err().code(),
        Code::DtypeMismatch
    );
    assert_eq!(
        as_f16.as_slice::<u16>().unwrap_err().code(),
        Code::DtypeMismatch
    );
    assert_eq!(
        as_f16.as_slice::<Bf16>().unwrap_err().code(),
        Code::DtypeMismatch
    );
    let f: Vec<f32> = as_f16
        .as_slice::<F16>()
        .unwrap()
        .iter()
        .map(|h| h.to_f32())
        .collect();
    assert_eq!(f, [1.0, 2.0]);

    // A program input of F16 refuses U16 data.
    let scope = Scope::new(&[]).unwrap();
    let x = scope.input("x", DType::F16, "n").unwrap();
    let program = scope.program(&[x], &[("y", x.add(x).unwrap())]).unwrap();
    let mut rt = Twin::new(&program);
    let err = rt.run(&[("x", &as_u16)]).unwrap_err();
    assert_eq!(err.code(), Code::DtypeMismatch, "{}", err);
    let out = rt.run(&[("x", &as_f16)]).unwrap();
    let y: Vec<f32> = out["y"]
        .to_vec::<F16>()
        .unwrap()
        .into_iter()
        .map(f32::from)
        .collect();
    assert_eq!(y, [2.0, 4.0]);
}

#[test]
fn unknown_dtype_is_refused() {
    let d = DType::from_raw(99);
    assert_eq!(d, DType::Unknown(99));
    assert_eq!(
        (d.to_string(), d.name(), d.size()),
        ("dtype(99)".to_string(), None, None)
    );
    let err = "f8".parse::<DType>().unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert!(
        err.message().contains("\"f8\"") && err.message().contains("bf16"),
        "{}",
        err
    );

    let scope = Scope::new(&[]).unwrap();
    let err = scope.input("x", d, "n").unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument, "{}", err);
    assert!(err.message().contains("99"), "{}", err);
    let err = scope.constant_bytes(d, &[1], &[0; 8]).unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument, "{}", err);
    let x = scope.input("x", DType::F32, "n").unwrap();
    let err = x.convert(d).unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument, "{}", err);
    let err = Array::zeros(d, &[2]).unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument, "{}", err);
    assert!(err.message().contains("99"), "{}", err);
}

//! Symbolic cost (formulas, bounds, reasons, runtime values), variable bounds and the DOT
//! picture of a small MLP-like program.
use shapepoly::{sys, Code, CostKind, DType, Program, Runtime, Scope};

/// softmax(max(x @ w + b, 0), axis 1) with x: (batch, 8), constant w: (8, 4), b: (4,) and a
/// scalar constant 0, under `constraints`.
fn mlp(constraints: &[&str]) -> Program {
    let scope = Scope::new(constraints).unwrap();
    let x = scope.input("x", DType::F32, "batch, 8").unwrap();
    let w = scope.constant::<f32>(&[8, 4], &[0.125; 32]).unwrap();
    let b = scope.constant::<f32>(&[4], &[0.5; 4]).unwrap();
    let zero = scope.constant::<f32>(&[], &[0.0]).unwrap();
    let h = x.matmul(w).unwrap().add(b).unwrap().maximum(zero).unwrap();
    let y = h.softmax(1).unwrap();
    scope.program(&[x], &[("y", y)]).unwrap()
}

#[test]
fn formulas_and_bounds_under_a_constraint() {
    let p = mlp(&["batch <= 1000"]);
    assert_eq!(p.cost(CostKind::Flops).unwrap(), "92*batch");
    // w (32 floats) + b (4) + the scalar 0: 37 * 4 bytes.
    assert_eq!(p.cost(CostKind::ParameterBytes).unwrap(), "148");
    assert_eq!(p.cost_bounds(CostKind::Flops).unwrap(), (92, Some(92000)));
    assert_eq!(
        p.cost_bounds(CostKind::ParameterBytes).unwrap(),
        (148, Some(148))
    );
    for &kind in CostKind::ALL {
        assert!(!p.cost(kind).unwrap().is_empty(), "{:?}", kind);
        let (lo, hi) = p.cost_bounds(kind).unwrap();
        assert!(
            hi.is_some_and(|hi| lo <= hi),
            "{:?}: ({}, {:?})",
            kind,
            lo,
            hi
        );
        assert_eq!(p.cost_unbounded_reason(kind).unwrap(), "", "{:?}", kind);
    }
    assert_eq!(p.variables(), ["batch"]);
    assert_eq!(p.variable_bounds(0).unwrap(), (1, 1000));
    assert_eq!(
        p.variable_bounds(1).unwrap_err().code(),
        Code::InvalidArgument
    );
}

#[test]
fn runtime_cost_for_concrete_shapes() {
    let p = mlp(&["batch <= 1000"]);
    let mut rt = Runtime::new(&p).unwrap();
    assert_eq!(rt.cost(CostKind::Flops, &[("x", &[10, 8])]).unwrap(), 920);
    assert_eq!(
        rt.cost(CostKind::ParameterBytes, &[("x", &[10, 8])])
            .unwrap(),
        148
    );
    // The worst case of the peak is reached at the largest batch the constraint allows.
    let (_, hi) = p.cost_bounds(CostKind::PeakBytes).unwrap();
    let peak = rt.cost(CostKind::PeakBytes, &[("x", &[1000, 8])]).unwrap();
    assert_eq!(hi, Some(peak));
    // Every check of a dry run comes first, with its message.
    let err = rt.cost(CostKind::Flops, &[("x", &[10, 9])]).unwrap_err();
    assert_eq!(err.code(), Code::ShapeMismatch);
    assert!(err.message().contains("axis 1"), "{}", err);
    let err = rt.cost(CostKind::Flops, &[("x", &[1001, 8])]).unwrap_err();
    assert_eq!(err.code(), Code::ConstraintViolation);
    let err = rt.cost(CostKind::Flops, &[("z", &[10, 8])]).unwrap_err();
    assert_eq!(err.code(), Code::NotFound);
}

#[test]
fn unbounded_without_a_constraint() {
    let p = mlp(&[]);
    assert_eq!(p.cost(CostKind::Flops).unwrap(), "92*batch");
    let (lo, hi) = p.cost_bounds(CostKind::PeakBytes).unwrap();
    assert!(lo > 0, "{}", lo);
    assert_eq!(hi, None);
    let reason = p.cost_unbounded_reason(CostKind::PeakBytes).unwrap();
    assert!(reason.contains("no upper bound on batch"), "{}", reason);
    // Constant costs stay bounded.
    assert_eq!(
        p.cost_bounds(CostKind::ParameterBytes).unwrap(),
        (148, Some(148))
    );
    assert_eq!(
        p.cost_unbounded_reason(CostKind::ParameterBytes).unwrap(),
        ""
    );
    let (lo, hi) = p.variable_bounds(0).unwrap();
    assert_eq!((lo, hi), (1, i64::MAX));
}

#[test]
fn an_invalid_kind_is_an_error() {
    // The safe API cannot name one (CostKind is closed); the C API rejects a raw one.
    let p = mlp(&["batch <= 1000"]);
    let mut len = 0usize;
    // SAFETY: valid program; NULL buffer with cap 0 sizes the result.
    let err = unsafe { sys::shp_program_cost(p.as_raw(), 7, std::ptr::null_mut(), 0, &mut len) };
    assert!(!err.is_null());
    // SAFETY: `err` is an owned error.
    unsafe {
        assert_eq!(sys::shp_error_code(err), sys::SHP_INVALID_ARGUMENT);
        sys::shp_error_destroy(err);
    }
    let raw: Vec<i32> = CostKind::ALL.iter().map(|k| k.raw()).collect();
    assert_eq!(
        raw,
        [
            sys::SHP_COST_FLOPS,
            sys::SHP_COST_BYTES_ACCESSED,
            sys::SHP_COST_PEAK_BYTES,
            sys::SHP_COST_PARAMETER_BYTES
        ]
    );
}

#[test]
fn dot_picture() {
    let p = mlp(&["batch <= 1000"]);
    let dot = p.to_dot().unwrap();
    assert!(dot.contains("digraph"), "{}", dot);
    assert!(dot.contains("f32[batch, 8]"), "{}", dot);
    assert!(dot.contains("batch <= 1000"), "{}", dot);
}

//! Tracing every operation of the C API, with symbolic shape inference, and its errors.
use shapepoly::{BinaryOp, Cmp, Code, DType, ReduceOp, Scope, Tensor, UnaryOp};

fn shape(t: Tensor<'_>) -> String {
    let dims: Vec<String> = t.shape().unwrap().iter().map(|d| d.to_string()).collect();
    format!("({})", dims.join(", "))
}

#[test]
fn inputs_and_constants() {
    let scope = Scope::new(&[]).unwrap();
    let x = scope.input("x", DType::F32, "batch, 2*seq + 1").unwrap();
    assert_eq!(x.dtype(), DType::F32);
    assert_eq!(shape(x), "(batch, 2*seq + 1)");
    assert_eq!(x.rank().unwrap(), 2);
    let n = scope.dim("n").unwrap();
    let y = scope
        .input_dims("y", DType::I64, &[n, (n + 1).unwrap()])
        .unwrap();
    assert_eq!(shape(y), "(n, n + 1)");
    let k = scope.dim_input("k").unwrap();
    assert_eq!((k.dtype(), k.rank().unwrap()), (DType::I64, 0));
    let c = scope
        .constant::<f32>(&[2, 2], &[1.0, 2.0, 3.0, 4.0])
        .unwrap();
    assert_eq!(shape(c), "(2, 2)");
    let s = scope.constant::<bool>(&[], &[true]).unwrap();
    assert_eq!((s.dtype(), s.rank().unwrap()), (DType::Bool, 0));
    let b = scope
        .constant_bytes(DType::I32, &[2], &[1, 0, 0, 0, 2, 0, 0, 0])
        .unwrap();
    assert_eq!(b.dtype(), DType::I32);
    let io = scope
        .iota(DType::I32, &[n, scope.constant_dim(3).unwrap()], 1)
        .unwrap();
    assert_eq!(shape(io), "(n, 3)");
    let dv = scope.dim_value((n * 2).unwrap()).unwrap();
    assert_eq!((dv.dtype(), dv.rank().unwrap()), (DType::I64, 0));
    assert_eq!(format!("{:?}", x), "Tensor(f32[batch, 2*seq + 1])");

    let err = scope.constant::<f32>(&[3], &[1.0]).unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument, "{}", err);
    let err = scope.input("", DType::F32, "n").unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument, "{}", err);
    let err = scope.input("z", DType::F32, "n, +").unwrap_err();
    assert_eq!(err.code(), Code::ParseError, "{}", err);
    let err = scope.input("z", DType::Unknown(42), "n").unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument, "{}", err);
}

#[test]
fn every_unary_and_binary_op() {
    let scope = Scope::new(&[]).unwrap();
    let x = scope.input("x", DType::F32, "n, 4").unwrap();
    let bools = scope.input("b", DType::Bool, "n, 4").unwrap();
    let ints = scope.input("i", DType::I32, "n, 4").unwrap();
    for &op in UnaryOp::ALL {
        let input = match op {
            UnaryOp::Not => bools,
            _ => x,
        };
        let y = input.unary(op).unwrap();
        assert_eq!(
            (shape(y), y.dtype()),
            ("(n, 4)".to_string(), input.dtype()),
            "{:?}",
            op
        );
    }
    for y in [
        x.neg(),
        x.abs(),
        x.exp(),
        x.log(),
        x.log1p(),
        x.expm1(),
        x.sqrt(),
        x.rsqrt(),
        x.sin(),
        x.cos(),
        x.tanh(),
        x.logistic(),
        x.floor(),
        x.ceil(),
        x.round(),
        x.sign(),
        x.erf(),
        x.tan(),
        x.sinh(),
        x.cosh(),
        x.asin(),
        x.acos(),
        x.atan(),
        x.asinh(),
        x.acosh(),
        x.atanh(),
        bools.not(),
    ] {
        assert_eq!(shape(y.unwrap()), "(n, 4)");
    }
    let row = scope.input("row", DType::F32, "4").unwrap();
    for &op in BinaryOp::ALL {
        let (a, b) = match op {
            BinaryOp::And | BinaryOp::Or | BinaryOp::Xor => (ints, ints),
            _ => (x, row),
        };
        let y = a.binary(op, b).unwrap();
        assert_eq!(shape(y), "(n, 4)", "{:?}", op);
    }
    for y in [
        x.add(row),
        x.sub(row),
        x.mul(row),
        x.div(row),
        x.pow(row),
        x.maximum(row),
        x.minimum(row),
        x.rem(row),
        bools.and(bools),
        bools.or(bools),
        bools.xor(bools),
    ] {
        assert_eq!(shape(y.unwrap()), "(n, 4)");
    }
    let c = x.compare(Cmp::Lt, row).unwrap();
    assert_eq!((c.dtype(), shape(c)), (DType::Bool, "(n, 4)".to_string()));
    let s = c
        .select(x, row.broadcast_to(&x.shape().unwrap()).unwrap())
        .unwrap();
    assert_eq!(shape(s), "(n, 4)");
    assert_eq!(x.convert(DType::I64).unwrap().dtype(), DType::I64);

    let err = x.exp().unwrap().binary(BinaryOp::Add, ints).unwrap_err();
    assert_eq!(err.code(), Code::DtypeMismatch, "{}", err);
    let err = ints.exp().unwrap_err();
    assert_eq!(err.code(), Code::DtypeMismatch, "{}", err);
}

#[test]
fn shape_ops() {
    let scope = Scope::new(&[]).unwrap();
    let x = scope.input("x", DType::F32, "n, 4, 6").unwrap();
    let n = scope.dim("n").unwrap();
    let c = |v| scope.constant_dim(v).unwrap();
    assert_eq!(
        shape(x.reshape(&[Some(n), Some(c(24))]).unwrap()),
        "(n, 24)"
    );
    assert_eq!(shape(x.reshape(&[None, Some(c(6))]).unwrap()), "(4*n, 6)");
    assert_eq!(shape(x.transpose(&[2, 0, 1]).unwrap()), "(6, n, 4)");
    assert_eq!(
        shape(Tensor::concatenate(&[x, x], 0).unwrap()),
        "(2*n, 4, 6)"
    );
    assert_eq!(shape(x.slice(&[], &[], &[]).unwrap()), "(n, 4, 6)");
    assert_eq!(
        shape(x.slice(&[None, Some(c(1)), None], &[], &[1, 1, 2]).unwrap()),
        "(n, 3, 3)"
    );
    assert_eq!(
        shape(x.pad(&[c(1), c(0), c(0)], &[n, c(0), c(2)], 0.5).unwrap()),
        "(2*n + 1, 4, 8)"
    );
    for &op in ReduceOp::ALL {
        assert_eq!(
            shape(x.reduce(op, &[1], false).unwrap()),
            "(n, 6)",
            "{:?}",
            op
        );
    }
    assert_eq!(shape(x.reduce(ReduceOp::Sum, &[], false).unwrap()), "()");
    assert_eq!(
        shape(x.reduce(ReduceOp::Max, &[-1], true).unwrap()),
        "(n, 4, 1)"
    );
    let w = scope.input("w", DType::F32, "6, k").unwrap();
    assert_eq!(shape(x.matmul(w).unwrap()), "(n, 4, k)");
    let z = scope.input("z", DType::F32, "n, 6, m").unwrap();
    let dg = x.dot_general(z, (&[0], &[0]), (&[2], &[1])).unwrap();
    assert_eq!(shape(dg), "(n, 4, m)");
    assert_eq!(shape(x.softmax(-1).unwrap()), "(n, 4, 6)");
    assert_eq!(shape(x.layer_norm(2, 1e-5).unwrap()), "(n, 4, 6)");
    assert_eq!(shape(x.cumsum(1).unwrap()), "(n, 4, 6)");
    let idx = scope.input("idx", DType::I32, "t").unwrap();
    assert_eq!(shape(x.take(idx, 1).unwrap()), "(n, t, 6)");

    let err = x.transpose(&[0, 0, 1]).unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument, "{}", err);
    let err = x.softmax(5).unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument, "{}", err);
    let err = x.slice(&[None], &[None, None], &[]).unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument, "{}", err);
    let err = x.pad(&[c(1)], &[], 0.0).unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument, "{}", err);
    let err = x.dot_general(z, (&[0], &[]), (&[2], &[1])).unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument, "{}", err);
    let err = Tensor::concatenate(&[], 0).unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument, "{}", err);
    let err = x
        .matmul(scope.input("w5", DType::F32, "5, k").unwrap())
        .unwrap_err();
    assert_eq!(err.code(), Code::ShapeMismatch, "{}", err);
}

#[test]
fn inconclusive_and_shape_mismatch() {
    let scope = Scope::new(&[]).unwrap();
    let v = scope.input("v", DType::F32, "v").unwrap();
    let four = scope.input("f", DType::F32, "4").unwrap();
    let err = v.add(four).unwrap_err();
    assert_eq!(err.code(), Code::Inconclusive, "{}", err);
    assert!(err.message().contains("v"), "{}", err);
    let three = scope.input("t", DType::F32, "3").unwrap();
    let err = four.add(three).unwrap_err();
    assert_eq!(err.code(), Code::ShapeMismatch, "{}", err);
    assert!(err.message().starts_with("add: "), "{}", err);

    // With a constraint, the same broadcast is decided.
    let scope = Scope::new(&["v == 4"]).unwrap();
    let v = scope.input("v", DType::F32, "v").unwrap();
    let four = scope.input("f", DType::F32, "4").unwrap();
    assert_eq!(shape(v.add(four).unwrap()), "(v)");

    // Tensors of two scopes.
    let other = Scope::new(&[]).unwrap();
    let w = other.input("w", DType::F32, "4").unwrap();
    let err = four.add(w).unwrap_err();
    assert_eq!(err.code(), Code::ScopeMismatch, "{}", err);
}

#[test]
fn reshape_records_an_assertion() {
    let scope = Scope::new(&[]).unwrap();
    let x = scope.input("x", DType::F32, "n").unwrap();
    let y = x
        .reshape(&[None, Some(scope.constant_dim(4).unwrap())])
        .unwrap();
    assert_eq!(shape(y), "(floordiv(n, 4), 4)");
    let p = scope.program(&[x], &[("y", y)]).unwrap();
    let a = p.assertions();
    assert_eq!(a.len(), 1, "{:?}", a);
    assert!(a[0].text.contains("mod(n, 4)"), "{:?}", a);
}

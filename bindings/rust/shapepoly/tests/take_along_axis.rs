//! `Tensor::take_along_axis` (np.take_along_axis, ONNX GatherElements): traced over f32 and i64
//! with i32 and i64 indices (negative ones count from the end), saved, reloaded and run through
//! `Twin` at several sizes against a reference computed here; its errors at tracing and at run
//! time (an index outside [-n, n) named with its position and the axis).
mod common;
use common::twin::Twin;

use shapepoly::{ArrayView, Code, DType, Scope, Tensor};

/// The reference: x [outer, n, inner] gathered by idx [outer, num, inner] along the middle axis.
fn along<T: Copy>(x: &[T], (outer, n, inner): (usize, usize, usize), idx: &[i64]) -> Vec<T> {
    let num = idx.len() / (outer * inner).max(1);
    let mut out = Vec::with_capacity(idx.len());
    for o in 0..outer {
        for j in 0..num {
            for i in 0..inner {
                let k = idx[(o * num + j) * inner + i];
                let k = if k < 0 { k + n as i64 } else { k } as usize;
                out.push(x[(o * n + k) * inner + i]);
            }
        }
    }
    out
}

fn shape_text(t: Tensor<'_>) -> String {
    let dims: Vec<String> = t.shape().unwrap().iter().map(|d| d.to_string()).collect();
    format!("({})", dims.join(", "))
}

#[test]
fn take_along_axis_saved_reloaded_and_run() {
    let scope = Scope::new(&[]).unwrap();
    let x = scope.input("x", DType::F32, "n, 3").unwrap();
    let i = scope.input("i", DType::I32, "n, m").unwrap();
    let xl = scope.input("xl", DType::I64, "4, n").unwrap();
    let il = scope.input("il", DType::I64, "2, n").unwrap();
    let cols = x.take_along_axis(i, -1).unwrap(); // along axis 1: m positions per row
    let rows = xl.take_along_axis(il, 0).unwrap(); // 2 of the 4 rows per column
    assert_eq!(shape_text(cols), "(n, m)");
    assert_eq!(shape_text(rows), "(2, n)");
    assert_eq!(rows.dtype(), DType::I64);
    let p = scope
        .program(&[x, i, xl, il], &[("cols", cols), ("rows", rows)])
        .unwrap();
    let text = p.to_text().unwrap();
    assert!(text.contains("take_along_axis(%0, %1) axis=1"), "{}", text);

    let mut rt = Twin::new(&p);
    for (n, m) in [(2usize, 5usize), (1, 1), (4, 9)] {
        let xv: Vec<f32> = (0..n * 3).map(|k| k as f32 * 0.5 - 1.0).collect();
        let iv: Vec<i32> = (0..n * m).map(|j| (j % 6) as i32 - 3).collect(); // [-3, 3)
        let lv: Vec<i64> = (0..4 * n).map(|k| (k as i64 - 2) << 40).collect();
        let ilv: Vec<i64> = (0..2 * n).map(|k| (k % 8) as i64 - 4).collect(); // [-4, 4)
        let (ni, mi) = (n as i64, m as i64);
        let outs = rt
            .run(&[
                ("x", &ArrayView::new(&[ni, 3], &xv).unwrap()),
                ("i", &ArrayView::new(&[ni, mi], &iv).unwrap()),
                ("xl", &ArrayView::new(&[4, ni], &lv).unwrap()),
                ("il", &ArrayView::new(&[2, ni], &ilv).unwrap()),
            ])
            .unwrap();
        let what = format!("n = {}, m = {}", n, m);
        let idx: Vec<i64> = iv.iter().map(|&k| k as i64).collect();
        assert_eq!(outs["cols"].shape(), [ni, mi], "{}", what);
        assert_eq!(
            outs["cols"].as_slice::<f32>().unwrap(),
            along(&xv, (n, 3, 1), &idx),
            "{}",
            what
        );
        assert_eq!(
            outs["rows"].as_slice::<i64>().unwrap(),
            along(&lv, (1, 4, n), &ilv),
            "{}",
            what
        );
    }
    // Sanity of the reference: [10, 20, 30] at [2, -3, -1].
    assert_eq!(along(&[10, 20, 30], (1, 3, 1), &[2, -3, -1]), [30, 10, 30]);
}

#[test]
fn take_along_axis_errors() {
    let scope = Scope::new(&[]).unwrap();
    let x = scope.input("x", DType::F32, "n, 3").unwrap();
    let flat = scope.input("flat", DType::I64, "n").unwrap();
    let err = x.take_along_axis(flat, 1).unwrap_err();
    assert_eq!(err.code(), Code::ShapeMismatch, "{}", err);
    assert!(
        err.message().contains("must have the rank of the operand"),
        "{}",
        err
    );
    let other = scope.input("other", DType::I64, "m, 2").unwrap();
    let err = x.take_along_axis(other, 1).unwrap_err();
    assert_eq!(err.code(), Code::Inconclusive, "{}", err); // m == n is not provable
    let fi = scope.input("fi", DType::F32, "n, 2").unwrap();
    let err = x.take_along_axis(fi, 1).unwrap_err();
    assert_eq!(err.code(), Code::DtypeMismatch, "{}", err);
    let i = scope.input("i", DType::I64, "n, 2").unwrap();
    assert_eq!(
        x.take_along_axis(i, 2).unwrap_err().code(),
        Code::InvalidArgument
    );
    // At run time: an index outside [-3, 3) fails the run, naming it, its position, the axis.
    let y = x.take_along_axis(i, 1).unwrap();
    let p = scope.program(&[x, i], &[("y", y)]).unwrap();
    let mut rt = Twin::new(&p);
    let xv = [0f32; 6];
    let err = rt
        .run(&[
            ("x", &ArrayView::new(&[2, 3], &xv).unwrap()),
            ("i", &ArrayView::new(&[2, 2], &[0i64, -3, 2, 3]).unwrap()),
        ])
        .unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument, "{}", err);
    assert!(
        err.message().contains(
            "take_along_axis: index 3 (position 3 of the indices) is outside [-3, 3) on axis 1"
        ),
        "{}",
        err
    );
}

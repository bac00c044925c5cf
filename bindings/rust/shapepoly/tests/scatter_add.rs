//! `Tensor::scatter_add` (np.add.at on a copy of the base, the transpose of take): traced over
//! f32 and i64, saved, reloaded and run through `Twin` at several sizes against a reference
//! computed here (repeated indices accumulate); its errors at tracing and at run time.
mod common;
use common::twin::Twin;

use shapepoly::{ArrayView, Code, DType, Scope, Tensor};

/// The reference: base [outer, n, inner] plus updates [outer, num, inner] scattered at idx.
fn scatter<T: Copy + std::ops::Add<Output = T>>(
    base: &[T],
    (outer, n, inner): (usize, usize, usize),
    idx: &[usize],
    updates: &[T],
) -> Vec<T> {
    let mut out = base.to_vec();
    let num = idx.len();
    for o in 0..outer {
        for (j, &k) in idx.iter().enumerate() {
            for i in 0..inner {
                let d = (o * n + k) * inner + i;
                out[d] = out[d] + updates[(o * num + j) * inner + i];
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
fn scatter_add_saved_reloaded_and_run() {
    let scope = Scope::new(&[]).unwrap();
    let x = scope.input("x", DType::F32, "n, 3").unwrap();
    let i = scope.input("i", DType::I32, "m").unwrap();
    let u = scope.input("u", DType::F32, "n, m").unwrap();
    let xl = scope.input("xl", DType::I64, "3, 2").unwrap();
    let il = scope.input("il", DType::I64, "n, 2").unwrap();
    let ul = scope.input("ul", DType::I64, "n, 2, 2").unwrap();
    let cols = x.scatter_add(i, u, -1).unwrap(); // along axis 1
    let rows = xl.scatter_add(il, ul, 0).unwrap(); // rank-2 indices along axis 0
    assert_eq!(shape_text(cols), "(n, 3)");
    assert_eq!(shape_text(rows), "(3, 2)");
    assert_eq!(rows.dtype(), DType::I64);
    let p = scope
        .program(&[x, i, u, xl, il, ul], &[("cols", cols), ("rows", rows)])
        .unwrap();
    let text = p.to_text().unwrap();
    assert!(text.contains("scatter_add(%0, %1, %2) axis=1"), "{}", text);

    let mut rt = Twin::new(&p);
    for (n, m) in [(2usize, 5usize), (1, 1), (4, 9)] {
        let xv: Vec<f32> = (0..n * 3).map(|k| k as f32 * 0.5 - 1.0).collect();
        let iv: Vec<i32> = (0..m).map(|j| ((j * 2 + 1) % 3) as i32).collect(); // repeats
        let uv: Vec<f32> = (0..n * m).map(|k| 0.25 * k as f32 + 1.0).collect();
        let lv: Vec<i64> = (0..6).map(|k| (k as i64 - 2) << 40).collect();
        let ilv: Vec<i64> = (0..n * 2).map(|k| (k % 3) as i64).collect();
        let ulv: Vec<i64> = (0..n * 4).map(|k| k as i64 * 3 - 7).collect();
        let (ni, mi) = (n as i64, m as i64);
        let outs = rt
            .run(&[
                ("x", &ArrayView::new(&[ni, 3], &xv).unwrap()),
                ("i", &ArrayView::new(&[mi], &iv).unwrap()),
                ("u", &ArrayView::new(&[ni, mi], &uv).unwrap()),
                ("xl", &ArrayView::new(&[3, 2], &lv).unwrap()),
                ("il", &ArrayView::new(&[ni, 2], &ilv).unwrap()),
                ("ul", &ArrayView::new(&[ni, 2, 2], &ulv).unwrap()),
            ])
            .unwrap();
        let what = format!("n = {}, m = {}", n, m);
        let idx: Vec<usize> = iv.iter().map(|&k| k as usize).collect();
        assert_eq!(outs["cols"].shape(), [ni, 3], "{}", what);
        assert_eq!(
            outs["cols"].as_slice::<f32>().unwrap(),
            scatter(&xv, (n, 3, 1), &idx, &uv),
            "{}",
            what
        );
        let idx: Vec<usize> = ilv.iter().map(|&k| k as usize).collect();
        assert_eq!(
            outs["rows"].as_slice::<i64>().unwrap(),
            scatter(&lv, (1, 3, 2), &idx, &ulv),
            "{}",
            what
        );
    }
    // Sanity of the reference: [0, 0, 0] + [1, 2, 4] at [2, 0, 2].
    assert_eq!(
        scatter(&[0, 0, 0], (1, 3, 1), &[2, 0, 2], &[1, 2, 4]),
        [2, 0, 5]
    );
}

#[test]
fn scatter_add_errors() {
    let scope = Scope::new(&[]).unwrap();
    let x = scope.input("x", DType::F32, "n, 3").unwrap();
    let i = scope.input("i", DType::I64, "2").unwrap();
    let u = scope.input("u", DType::F32, "n, 2").unwrap();
    // Updates without take's shape: the message names the axis and where the dim comes from.
    let bad = scope.input("bad", DType::F32, "n, 4").unwrap();
    let err = x.scatter_add(i, bad, 1).unwrap_err();
    assert_eq!(err.code(), Code::ShapeMismatch, "{}", err);
    assert!(
        err.message()
            .contains("axis 1 of the updates is 4, axis 0 of the indices is 2"),
        "{}",
        err
    );
    let flat = scope.input("flat", DType::F32, "n").unwrap();
    let err = x.scatter_add(i, flat, 1).unwrap_err();
    assert_eq!(err.code(), Code::ShapeMismatch, "{}", err);
    assert!(err.message().contains("rank 1 instead of 2"), "{}", err);
    // A comparison the constraints cannot decide (m == 2?) is inconclusive, not a guess.
    let um = scope.input("um", DType::F32, "n, m").unwrap();
    let err = x.scatter_add(i, um, 1).unwrap_err();
    assert_eq!(err.code(), Code::Inconclusive, "{}", err);
    // Dtypes: float indices, a bool base, updates of another dtype; an axis out of range.
    let err = x.scatter_add(u, u, 1).unwrap_err();
    assert_eq!(err.code(), Code::DtypeMismatch, "{}", err);
    let b = scope.input("b", DType::Bool, "n, 3").unwrap();
    let ub = scope.input("ub", DType::Bool, "n, 2").unwrap();
    assert_eq!(
        b.scatter_add(i, ub, 1).unwrap_err().code(),
        Code::DtypeMismatch
    );
    let ud = scope.input("ud", DType::F64, "n, 2").unwrap();
    assert_eq!(
        x.scatter_add(i, ud, 1).unwrap_err().code(),
        Code::DtypeMismatch
    );
    assert_eq!(
        x.scatter_add(i, u, 2).unwrap_err().code(),
        Code::InvalidArgument
    );
    // An index outside [0, 3) at run time, as take; the runtime stays usable.
    let y = x.scatter_add(i, u, 1).unwrap();
    let p = scope.program(&[x, i, u], &[("y", y)]).unwrap();
    let mut rt = Twin::new(&p);
    let xv = [0f32; 3];
    let uv = [1f32, 2.0];
    let run = |rt: &mut Twin, iv: &[i64]| {
        rt.run(&[
            ("x", &ArrayView::new(&[1, 3], &xv).unwrap()),
            ("i", &ArrayView::new(&[2], iv).unwrap()),
            ("u", &ArrayView::new(&[1, 2], &uv).unwrap()),
        ])
    };
    let err = run(&mut rt, &[0, 3]).unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument, "{}", err);
    assert!(
        err.message()
            .contains("scatter_add: index 3 (position 1 of the indices) is outside [0, 3)"),
        "{}",
        err
    );
    let outs = run(&mut rt, &[2, 2]).unwrap();
    assert_eq!(outs["y"].as_slice::<f32>().unwrap(), [0.0, 0.0, 3.0]);
}

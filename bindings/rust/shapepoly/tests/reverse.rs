//! `Tensor::reverse` (np.flip): traced over every dtype, saved, reloaded and run through `Twin`
//! at several sizes (a size-0 one too) and checked against a flip computed here; its errors.
mod common;
use common::twin::Twin;

use shapepoly::{ArrayView, Code, DType, Element, Scope, Tensor};

/// np.flip of the row-major `data` of `shape` along `axes` (normalized).
fn flip<T: Copy>(shape: &[i64], data: &[T], axes: &[usize]) -> Vec<T> {
    let rank = shape.len();
    let mut strides = vec![1i64; rank];
    for i in (0..rank.saturating_sub(1)).rev() {
        strides[i] = strides[i + 1] * shape[i + 1];
    }
    (0..data.len() as i64)
        .map(|flat| {
            let mut src = 0;
            for i in 0..rank {
                let mut k = flat / strides[i] % shape[i];
                if axes.contains(&i) {
                    k = shape[i] - 1 - k;
                }
                src += k * strides[i];
            }
            data[src as usize]
        })
        .collect()
}

fn shape_text(t: Tensor<'_>) -> String {
    let dims: Vec<String> = t.shape().unwrap().iter().map(|d| d.to_string()).collect();
    format!("({})", dims.join(", "))
}

fn values<T: Element>(n: usize, f: impl Fn(usize) -> T) -> Vec<T> {
    (0..n).map(f).collect()
}

#[test]
fn reverse_saved_reloaded_and_run() {
    // n may be 0: a size-0 axis is an ordinary value.
    let scope = Scope::with_ranges(&[], &[("n", 0, 100)]).unwrap();
    let x = scope.input("x", DType::F32, "n, 3, 2").unwrap();
    let xd = scope.input("xd", DType::F64, "n").unwrap();
    let xi = scope.input("xi", DType::I32, "n, 3, 2").unwrap();
    let xl = scope.input("xl", DType::I64, "3, n").unwrap();
    let xb = scope.input("xb", DType::Bool, "n, 3, 2").unwrap();
    let s = scope.input("s", DType::F32, "").unwrap();
    // (name, tensor, normalized axes, the input it flips)
    let cases: Vec<(&str, Tensor<'_>, Vec<usize>, &str)> = vec![
        ("axis0", x.reverse(&[0]).unwrap(), vec![0], "x"),
        ("last_negative", x.reverse(&[-1]).unwrap(), vec![2], "x"),
        ("axes_2_0", x.reverse(&[2, 0]).unwrap(), vec![0, 2], "x"),
        ("all", x.reverse(&[0, 1, 2]).unwrap(), vec![0, 1, 2], "x"),
        ("copy", x.reverse(&[]).unwrap(), vec![], "x"),
        (
            "twice",
            x.reverse(&[1]).unwrap().reverse(&[-2]).unwrap(),
            vec![],
            "x",
        ),
        ("f64", xd.reverse(&[-1]).unwrap(), vec![0], "xd"),
        ("i32_middle", xi.reverse(&[1]).unwrap(), vec![1], "xi"),
        ("i64_both", xl.reverse(&[-2, -1]).unwrap(), vec![0, 1], "xl"),
        ("bool", xb.reverse(&[0, -1]).unwrap(), vec![0, 2], "xb"),
        ("scalar", s.reverse(&[]).unwrap(), vec![], "s"),
    ];
    for (name, t, _, input) in &cases {
        let want = match *input {
            "xd" => "(n)",
            "xl" => "(3, n)",
            "s" => "()",
            _ => "(n, 3, 2)",
        };
        assert_eq!(shape_text(*t), want, "{}: the shape does not change", name);
    }
    assert_eq!(cases[7].1.dtype(), DType::I32);
    assert_eq!(cases[9].1.dtype(), DType::Bool);
    let outputs: Vec<(&str, Tensor<'_>)> = cases.iter().map(|c| (c.0, c.1)).collect();
    let p = scope.program(&[x, xd, xi, xl, xb, s], &outputs).unwrap();
    let text = p.to_text().unwrap();
    // Axes are listed normalized and sorted.
    assert!(text.contains("reverse(%0) axes=[0, 2]"), "{}", text);
    assert!(text.contains("reverse(%0) axes=[2]"), "{}", text);
    assert!(text.contains("reverse(%5) axes=[]"), "{}", text);
    assert_eq!(p.outputs().unwrap()[3].shape, "(n, 3, 2)");

    let mut rt = Twin::new(&p);
    for n in [4i64, 1, 0, 7] {
        let n3 = (n * 6) as usize;
        let xv = values(n3, |i| i as f32 * 0.5 - 3.0);
        let dv = values(n as usize, |i| 1.0 / (i as f64 + 1.0));
        let iv = values(n3, |i| i as i32 * 7 - 20);
        let lv = values(3 * n as usize, |i| (i as i64 - 5) * (1 << 40));
        let bv = values(n3, |i| i % 3 == 1);
        let sv = -2.5f32;
        let (x3, xn, xl3) = ([n, 3, 2], [n], [3, n]);
        let outs = rt
            .run(&[
                ("x", &ArrayView::new(&x3, &xv).unwrap()),
                ("xd", &ArrayView::new(&xn, &dv).unwrap()),
                ("xi", &ArrayView::new(&x3, &iv).unwrap()),
                ("xl", &ArrayView::new(&xl3, &lv).unwrap()),
                ("xb", &ArrayView::new(&x3, &bv).unwrap()),
                ("s", &ArrayView::scalar(&sv).unwrap()),
            ])
            .unwrap();
        for (name, _, axes, input) in &cases {
            let y = &outs[*name];
            let what = format!("{} at n = {}", name, n);
            match *input {
                "x" => {
                    assert_eq!(y.shape(), x3, "{}", what);
                    assert_eq!(
                        y.as_slice::<f32>().unwrap(),
                        flip(&x3, &xv, axes),
                        "{}",
                        what
                    );
                }
                "xd" => {
                    assert_eq!(y.shape(), xn, "{}", what);
                    assert_eq!(
                        y.as_slice::<f64>().unwrap(),
                        flip(&xn, &dv, axes),
                        "{}",
                        what
                    );
                }
                "xi" => assert_eq!(
                    y.as_slice::<i32>().unwrap(),
                    flip(&x3, &iv, axes),
                    "{}",
                    what
                ),
                "xl" => {
                    assert_eq!(y.shape(), xl3, "{}", what);
                    assert_eq!(
                        y.as_slice::<i64>().unwrap(),
                        flip(&xl3, &lv, axes),
                        "{}",
                        what
                    );
                }
                "xb" => {
                    assert_eq!(y.dtype(), DType::Bool, "{}", what);
                    assert_eq!(
                        y.as_slice::<bool>().unwrap(),
                        flip(&x3, &bv, axes),
                        "{}",
                        what
                    );
                }
                _ => {
                    assert!(y.shape().is_empty(), "{}", what);
                    assert_eq!(y.as_slice::<f32>().unwrap(), [sv], "{}", what);
                }
            }
        }
    }
    // Sanity of the reference itself: [[0, 1, 2], [3, 4, 5]] flipped along axis 1.
    assert_eq!(flip(&[2, 3], &[0, 1, 2, 3, 4, 5], &[1]), [2, 1, 0, 5, 4, 3]);
}

#[test]
fn reverse_errors() {
    let scope = Scope::new(&[]).unwrap();
    let x = scope.input("x", DType::F32, "n, 3, 2").unwrap();
    for axes in [&[0i64, 0][..], &[1, -2], &[2, 0, -1]] {
        let err = x.reverse(axes).unwrap_err();
        assert_eq!(err.code(), Code::InvalidArgument, "{:?}: {}", axes, err);
        assert!(
            err.message().contains("an axis is listed twice"),
            "{:?}: {}",
            axes,
            err
        );
    }
    for (axes, bad) in [(&[3i64][..], "3"), (&[0, -4], "-4")] {
        let err = x.reverse(axes).unwrap_err();
        assert_eq!(err.code(), Code::InvalidArgument, "{:?}: {}", axes, err);
        assert!(
            err.message()
                .contains(&format!("axis {} is out of range", bad)),
            "{:?}: {}",
            axes,
            err
        );
    }
    let s = scope.input("s", DType::I64, "").unwrap();
    let err = s.reverse(&[0]).unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument, "{}", err);
    // The tensor and the scope stay usable after the errors.
    assert_eq!(shape_text(x.reverse(&[1]).unwrap()), "(n, 3, 2)");
}

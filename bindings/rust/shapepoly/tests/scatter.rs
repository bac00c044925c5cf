//! `Tensor::scatter` (scatter_add's layout with a reduction: 0 replace, 1 add, 2 mul, 3 max,
//! 4 min; `shapepoly_sys::SHP_SCATTER_*`): f32 rows along axis 0 with repeating i64 indices,
//! saved, reloaded and run through `Twin` at several sizes against a position-by-position
//! reference; an index out of range fails the run naming it, an unknown reduction is refused.
mod common;
use common::twin::Twin;

use shapepoly::{ArrayView, Code, DType, Scope};

/// x [n, inner] with the rows of upd [idx.len(), inner] combined at idx, one position at a time.
fn reference(x: &[f32], inner: usize, idx: &[i64], upd: &[f32], red: i64) -> Vec<f32> {
    let mut out = x.to_vec();
    for (j, &k) in idx.iter().enumerate() {
        for i in 0..inner {
            let (d, u) = (out[k as usize * inner + i], upd[j * inner + i]);
            out[k as usize * inner + i] = match red {
                0 => u,
                1 => d + u,
                2 => d * u,
                3 => d.max(u),
                _ => d.min(u),
            };
        }
    }
    out
}

#[test]
fn scatter_each_reduction_saved_reloaded_and_run() {
    for red in 0..5i64 {
        let scope = Scope::new(&[]).unwrap();
        let x = scope.input("x", DType::F32, "n, 3").unwrap();
        let i = scope.input("i", DType::I64, "m").unwrap();
        let u = scope.input("u", DType::F32, "m, 3").unwrap();
        let y = x.scatter(i, u, 0, red).unwrap();
        assert_eq!(y.dtype(), DType::F32);
        let p = scope.program(&[x, i, u], &[("y", y)]).unwrap();
        let mut rt = Twin::new(&p);
        for (n, m) in [(2usize, 5usize), (1, 1), (4, 9)] {
            let xv: Vec<f32> = (0..n * 3).map(|k| (k % 5) as f32 * 0.5 - 1.0).collect();
            let uv: Vec<f32> = (0..m * 3).map(|k| (k % 7) as f32 * 0.25 - 0.5).collect();
            let iv: Vec<i64> = (0..m).map(|k| ((k * 3) % n) as i64).collect(); // repeats
            let (ni, mi) = (n as i64, m as i64);
            let outs = rt
                .run(&[
                    ("x", &ArrayView::new(&[ni, 3], &xv).unwrap()),
                    ("i", &ArrayView::new(&[mi], &iv).unwrap()),
                    ("u", &ArrayView::new(&[mi, 3], &uv).unwrap()),
                ])
                .unwrap();
            assert_eq!(
                outs["y"].as_slice::<f32>().unwrap(),
                reference(&xv, 3, &iv, &uv, red),
                "reduction {} at n = {}, m = {}",
                red,
                n,
                m
            );
        }
        let err = rt
            .run(&[
                ("x", &ArrayView::new(&[1, 3], &[0f32; 3]).unwrap()),
                ("i", &ArrayView::new(&[2], &[0i64, 1]).unwrap()),
                ("u", &ArrayView::new(&[2, 3], &[0f32; 6]).unwrap()),
            ])
            .unwrap_err();
        assert_eq!(err.code(), Code::InvalidArgument, "{}", err);
        assert!(
            err.message()
                .contains("index 1 (position 1 of the indices) is outside [0, 1) on axis 0"),
            "{}",
            err
        );
    }
    let scope = Scope::new(&[]).unwrap();
    let x = scope.input("x", DType::F32, "n, 3").unwrap();
    let i = scope.input("i", DType::I64, "2").unwrap();
    let u = scope.input("u", DType::F32, "2, 3").unwrap();
    let err = x.scatter(i, u, 0, 7).unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument, "{}", err);
    assert!(
        err.message().contains("reduction 7 is not one of"),
        "{}",
        err
    );
}

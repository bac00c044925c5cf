//! The neural-network building blocks (conv, pooling, activations, layout shuffles): symbolic
//! shapes at tracing, values computed by hand through a saved and reloaded program (`Twin`),
//! and their argument errors surfacing as `Error` values naming the argument.
mod common;
use common::twin::Twin;

use shapepoly::{
    ArrayView, AutoPad, Code, ConvOptions, DType, DepthToSpaceMode, PadMode, PoolOptions, ReduceOp,
    ReduceWindowOptions, Scope, Tensor,
};

fn shape_text(t: Tensor<'_>) -> String {
    let dims: Vec<String> = t.shape().unwrap().iter().map(|d| d.to_string()).collect();
    format!("({})", dims.join(", "))
}

#[test]
fn conv_with_a_symbolic_batch() {
    let scope = Scope::new(&[]).unwrap();
    let x = scope.input("x", DType::F32, "batch, 2, 5, 5").unwrap();
    let w = scope.constant(&[3, 2, 3, 3], &[1.0f32; 54]).unwrap();
    let b = scope.constant(&[3], &[0.0f32, 100.0, 200.0]).unwrap();
    let options = ConvOptions {
        strides: &[2, 2],
        pads: &[1, 1, 1, 1],
        ..Default::default()
    };
    let y = x.conv(w, Some(b), &options).unwrap();
    assert_eq!(shape_text(y), "(batch, 3, 3, 3)");
    assert_eq!(y.dtype(), DType::F32);
    let p = scope.program(&[x], &[("y", y)]).unwrap();

    let mut rt = Twin::new(&p);
    for batch in [1usize, 3] {
        let xv = vec![1.0f32; batch * 2 * 25];
        let outs = rt
            .run(&[("x", &ArrayView::new(&[batch as i64, 2, 5, 5], &xv).unwrap())])
            .unwrap();
        assert_eq!(outs["y"].shape(), [batch as i64, 3, 3, 3]);
        // All ones: each output counts the window's in-bounds inputs over 2 channels; with pads
        // 1 and stride 2 a corner window covers 2 x 2 inputs (8), an edge 2 x 3 (12), the
        // centre 3 x 3 (18); plus the channel's bias.
        let plane = [8.0f32, 12.0, 8.0, 12.0, 18.0, 12.0, 8.0, 12.0, 8.0];
        let mut want = Vec::new();
        for _ in 0..batch {
            for bias in [0.0f32, 100.0, 200.0] {
                want.extend(plane.iter().map(|v| v + bias));
            }
        }
        assert_eq!(
            outs["y"].as_slice::<f32>().unwrap(),
            want,
            "batch = {}",
            batch
        );
    }
}

#[test]
fn conv_transpose_same_upper_doubles_the_spatial_size() {
    let scope = Scope::new(&[]).unwrap();
    let x = scope.input("x", DType::F32, "n, 2, h, w").unwrap();
    let k = scope.constant(&[2, 4, 3, 3], &[1.0f32; 72]).unwrap();
    let options = ConvOptions {
        strides: &[2, 2],
        auto_pad: AutoPad::SameUpper,
        ..Default::default()
    };
    let y = x.conv_transpose(k, None, &options).unwrap();
    assert_eq!(shape_text(y), "(n, 4, 2*h, 2*w)");
}

#[test]
fn max_pool_and_avg_pool() {
    let scope = Scope::new(&[]).unwrap();
    let x = scope.input("x", DType::F32, "n, 1, 4, 4").unwrap();
    let options = PoolOptions {
        strides: &[2, 2],
        ..Default::default()
    };
    let mx = x.max_pool(&[2, 2], &options).unwrap();
    let av = x.avg_pool(&[2, 2], &options).unwrap();
    // A 3 x 3 window with pads 1: a corner averages its 4 inputs (count_include_pad false).
    let padded = PoolOptions {
        pads: &[1, 1, 1, 1],
        ..Default::default()
    };
    let av_pad = x.avg_pool(&[3, 3], &padded).unwrap();
    let gmax = x.global_max_pool().unwrap();
    let gavg = x.global_avg_pool().unwrap();
    assert_eq!(shape_text(mx), "(n, 1, 2, 2)");
    assert_eq!(shape_text(av), "(n, 1, 2, 2)");
    assert_eq!(shape_text(av_pad), "(n, 1, 4, 4)");
    assert_eq!(shape_text(gmax), "(n, 1, 1, 1)");
    let p = scope
        .program(
            &[x],
            &[
                ("max", mx),
                ("avg", av),
                ("avg_pad", av_pad),
                ("gmax", gmax),
                ("gavg", gavg),
            ],
        )
        .unwrap();

    let mut rt = Twin::new(&p);
    let xv: Vec<f32> = (0..32).map(|k| (k % 16) as f32).collect(); // two planes 0..15
    let outs = rt
        .run(&[("x", &ArrayView::new(&[2, 1, 4, 4], &xv).unwrap())])
        .unwrap();
    assert_eq!(outs["max"].shape(), [2, 1, 2, 2]);
    assert_eq!(
        outs["max"].as_slice::<f32>().unwrap(),
        [5.0, 7.0, 13.0, 15.0, 5.0, 7.0, 13.0, 15.0]
    );
    assert_eq!(
        outs["avg"].as_slice::<f32>().unwrap(),
        [2.5, 4.5, 10.5, 12.5, 2.5, 4.5, 10.5, 12.5]
    );
    let ap = outs["avg_pad"].as_slice::<f32>().unwrap();
    assert_eq!(ap[0], (0.0 + 1.0 + 4.0 + 5.0) / 4.0); // top-left corner
    assert_eq!(
        ap[5],
        (0.0 + 1.0 + 2.0 + 4.0 + 5.0 + 6.0 + 8.0 + 9.0 + 10.0) / 9.0
    );
    assert_eq!(outs["gmax"].as_slice::<f32>().unwrap(), [15.0, 15.0]);
    assert_eq!(outs["gavg"].as_slice::<f32>().unwrap(), [7.5, 7.5]);
}

#[test]
fn reduce_window_sum_with_symbolic_pads() {
    let scope = Scope::new(&[]).unwrap();
    let x = scope.input("x", DType::I64, "n").unwrap();
    let one = scope.constant_dim(1).unwrap();
    let options = ReduceWindowOptions {
        pad_low: &[one],
        pad_high: &[one],
        ..Default::default()
    };
    let y = x.reduce_window(ReduceOp::Sum, &[3], &options).unwrap();
    assert_eq!(shape_text(y), "(n)");
    let p = scope.program(&[x], &[("y", y)]).unwrap();
    let outs = Twin::new(&p)
        .run(&[("x", &ArrayView::new(&[4], &[1i64, 2, 3, 4]).unwrap())])
        .unwrap();
    assert_eq!(outs["y"].as_slice::<i64>().unwrap(), [3, 6, 9, 7]);
}

#[test]
fn activations_values() {
    let scope = Scope::new(&[]).unwrap();
    let x = scope.input("x", DType::F64, "n").unwrap();
    let leaky = x.leaky_relu(0.1).unwrap();
    let clip = x.clip(-1.0, 2.0).unwrap();
    let softsign = x.softsign().unwrap();
    let hard = x.hard_sigmoid(0.2, 0.5).unwrap();
    let p = scope
        .program(
            &[x],
            &[
                ("leaky", leaky),
                ("clip", clip),
                ("softsign", softsign),
                ("hard", hard),
            ],
        )
        .unwrap();
    let outs = Twin::new(&p)
        .run(&[("x", &ArrayView::new(&[3], &[-2.0f64, 0.0, 3.0]).unwrap())])
        .unwrap();
    assert_eq!(outs["leaky"].as_slice::<f64>().unwrap(), [-0.2, 0.0, 3.0]);
    assert_eq!(outs["clip"].as_slice::<f64>().unwrap(), [-1.0, 0.0, 2.0]);
    assert_eq!(
        outs["softsign"].as_slice::<f64>().unwrap(),
        [-2.0 / 3.0, 0.0, 0.75]
    );
    let h = outs["hard"].as_slice::<f64>().unwrap();
    assert!(
        (h[0] - 0.1).abs() < 1e-15 && h[1] == 0.5 && h[2] == 1.0,
        "{:?}",
        h
    );
}

#[test]
fn other_blocks_trace_with_their_shapes() {
    let scope = Scope::new(&[]).unwrap();
    let x = scope.input("x", DType::F32, "n, 8, h, w").unwrap();
    let c = scope.constant(&[8], &[1.0f32; 8]).unwrap();
    let slope = scope.constant(&[8, 1, 1], &[0.5f32; 8]).unwrap();
    let d2s = x.depth_to_space(2, DepthToSpaceMode::Dcr).unwrap();
    assert_eq!(shape_text(d2s), "(n, 2, 2*h, 2*w)");
    let crd = x.depth_to_space(2, DepthToSpaceMode::Crd).unwrap();
    assert_eq!(shape_text(crd), "(n, 2, 2*h, 2*w)");
    assert_eq!(shape_text(d2s.space_to_depth(2).unwrap()), "(n, 8, h, w)");
    let same = "(n, 8, h, w)";
    assert_eq!(shape_text(x.prelu(slope).unwrap()), same);
    assert_eq!(shape_text(x.elu(1.0).unwrap()), same);
    assert_eq!(shape_text(x.selu(1.67, 1.05).unwrap()), same);
    assert_eq!(shape_text(x.softplus().unwrap()), same);
    assert_eq!(shape_text(x.log_softmax(1).unwrap()), same);
    assert_eq!(shape_text(x.batch_norm(c, c, c, c, 1e-5).unwrap()), same);
    assert_eq!(shape_text(x.lrn(3, 1e-4, 0.75, 1.0).unwrap()), same);
    let one = scope.constant_dim(1).unwrap();
    let zero = scope.constant_dim(0).unwrap();
    let padded = x
        .pad_mode(
            &[zero, zero, one, one],
            &[zero, zero, one, one],
            PadMode::Edge,
            0.0,
        )
        .unwrap();
    assert_eq!(shape_text(padded), "(n, 8, h + 2, w + 2)");
}

#[test]
fn bad_arguments_are_errors_naming_the_argument() {
    let scope = Scope::new(&[]).unwrap();
    let x = scope.input("x", DType::F32, "batch, 2, 5, 5").unwrap();
    let w = scope.constant(&[3, 2, 3, 3], &[1.0f32; 54]).unwrap();
    for groups in [0i64, 2] {
        let options = ConvOptions {
            groups,
            ..Default::default()
        };
        let e = x.conv(w, None, &options).unwrap_err();
        assert!(e.message().contains("groups"), "groups = {}: {}", groups, e);
        assert_ne!(e.code(), Code::Internal, "{}", e);
    }
    // Checked here before C reads the array: one stride for two spatial axes.
    let options = ConvOptions {
        strides: &[2],
        ..Default::default()
    };
    let e = x.conv(w, None, &options).unwrap_err();
    assert_eq!(e.code(), Code::InvalidArgument);
    assert!(
        e.message().contains("strides has 1 entries, expected 2"),
        "{}",
        e
    );
    let options = PoolOptions {
        pads: &[1, 1],
        ..Default::default()
    };
    let e = x.max_pool(&[2, 2], &options).unwrap_err();
    assert!(
        e.message()
            .contains("max_pool: pads has 2 entries, expected 4"),
        "{}",
        e
    );
    let e = x.depth_to_space(0, DepthToSpaceMode::Dcr).unwrap_err();
    assert!(e.message().contains("blocksize"), "{}", e);
    let e = x.leaky_relu(f64::NAN).unwrap_err();
    assert!(e.message().contains("alpha"), "{}", e);
}

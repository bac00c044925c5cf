//! The MLP of tests/cross_language/MLP_CONTRACT.md, built with the same sequence of C API calls
//! as every other language, so the serialized bytes are identical. Shared by
//! `examples/mlp_tool.rs` and `tests/mlp.rs`.
#![allow(dead_code)]

use shapepoly::{ArrayView, DType, Program, Result, Runtime, Scope};

/// Layer sizes: 64 -> 32 -> 32 -> 10.
pub const SIZES: [usize; 4] = [64, 32, 32, 10];

/// Constant with seed `s`, element `k` (row-major).
pub fn constant_value(k: i64, seed: i64) -> f32 {
    (((k * 7919 + seed * 104729) % 2001) - 1000) as f32 / 10000.0f32
}

pub fn constant_data(n: usize, seed: i64) -> Vec<f32> {
    (0..n as i64).map(|k| constant_value(k, seed)).collect()
}

/// Input `x` at batch `b`: `[b, 64]`.
pub fn input_data(batch: usize) -> Vec<f32> {
    (0..(batch * 64) as i64)
        .map(|k| (((k * 31 + 7) % 17) - 8) as f32 / 8.0f32)
        .collect()
}

/// Traces the MLP and creates the program (call order fixed by the contract).
pub fn build() -> Result<Program> {
    let scope = Scope::new(&[])?;
    let x = scope.input("x", DType::F32, "batch, 64")?;
    let w1 = scope.constant::<f32>(&[64, 32], &constant_data(64 * 32, 1))?;
    let b1 = scope.constant::<f32>(&[32], &constant_data(32, 2))?;
    let w2 = scope.constant::<f32>(&[32, 32], &constant_data(32 * 32, 3))?;
    let b2 = scope.constant::<f32>(&[32], &constant_data(32, 4))?;
    let w3 = scope.constant::<f32>(&[32, 10], &constant_data(32 * 10, 5))?;
    let b3 = scope.constant::<f32>(&[10], &constant_data(10, 6))?;
    let zero = scope.constant::<f32>(&[], &[0.0])?;
    let h1 = x.matmul(w1)?.add(b1)?.maximum(zero)?;
    let h2 = h1.matmul(w2)?.add(b2)?.maximum(zero)?;
    let logits = h2.matmul(w3)?.add(b3)?;
    let probs = logits.softmax(1)?;
    scope.program(&[x], &[("probs", probs)])
}

/// Runs `program` at `batch` with the contract's input, passed by name; returns "probs".
pub fn run(program: &Program, batch: usize) -> Result<Vec<f32>> {
    let mut rt = Runtime::new(program)?;
    let x = input_data(batch);
    let out = rt.run(&[("x", &ArrayView::new(&[batch as i64, 64], &x)?)])?;
    out["probs"].to_vec::<f32>()
}

/// A plain reference: the same MLP with loops, accumulating in double.
pub fn reference(batch: usize) -> Vec<f32> {
    let x = input_data(batch);
    let mut cur: Vec<f64> = x.iter().map(|&v| v as f64).collect();
    for layer in 0..3 {
        let (n_in, n_out) = (SIZES[layer], SIZES[layer + 1]);
        let w = constant_data(n_in * n_out, 2 * layer as i64 + 1);
        let b = constant_data(n_out, 2 * layer as i64 + 2);
        let mut next = vec![0f64; batch * n_out];
        for r in 0..batch {
            for j in 0..n_out {
                let mut acc = b[j] as f64;
                for k in 0..n_in {
                    acc += cur[r * n_in + k] * w[k * n_out + j] as f64;
                }
                next[r * n_out + j] = if layer < 2 && acc < 0.0 { 0.0 } else { acc };
            }
        }
        cur = next;
    }
    let mut out = vec![0f32; batch * 10];
    for r in 0..batch {
        let row = &cur[r * 10..(r + 1) * 10];
        let mx = row.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
        let sum: f64 = row.iter().map(|v| (v - mx).exp()).sum();
        for j in 0..10 {
            out[r * 10 + j] = ((row[j] - mx).exp() / sum) as f32;
        }
    }
    out
}

//! The MLP of tests/cross_language/MLP_CONTRACT.md, built with the same sequence of C API calls
//! as every other language, so the serialized bytes are identical. Shared by
//! `examples/mlp_tool.rs` and `tests/mlp.rs`.
#![allow(dead_code)]

use shapepoly::{
    ArrayRef, ArrayView, DType, InputRole, OutputRole, Program, Result, Runtime, Scope,
};

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

/// The weights of the derived grad program: (name, seed, shape), in the contract's order.
pub const PARAMETERS: [(&str, i64, &[i64]); 6] = [
    ("W1", 1, &[64, 32]),
    ("b1", 2, &[32]),
    ("W2", 3, &[32, 32]),
    ("b2", 4, &[32]),
    ("W3", 5, &[32, 10]),
    ("b3", 6, &[10]),
];

/// The class of row `r` for the derived program's labels.
pub fn label(r: usize) -> usize {
    (r * 3 + 1) % 10
}

/// The one-hot `labels` input at batch `b`: `[b, 10]`.
pub fn labels_data(batch: usize) -> Vec<f32> {
    (0..batch * 10)
        .map(|k| if k % 10 == label(k / 10) { 1.0 } else { 0.0 })
        .collect()
}

/// The derived program of the contract: the MLP with its weights as parameters (defaults: the
/// contract's constants), the mean cross-entropy `loss` against one-hot `labels`, then
/// `shp_program_grad` of `loss` with respect to the six weights.
pub fn build_grad() -> Result<Program> {
    let scope = Scope::new(&[])?;
    let x = scope.input("x", DType::F32, "batch, 64")?;
    let labels = scope.input("labels", DType::F32, "batch, 10")?;
    let mut w = Vec::new();
    for (name, seed, shape) in PARAMETERS {
        let n = shape.iter().product::<i64>() as usize;
        w.push(scope.parameter::<f32>(name, shape, &constant_data(n, seed))?);
    }
    let zero = scope.constant::<f32>(&[], &[0.0])?;
    let h1 = x.matmul(w[0])?.add(w[1])?.maximum(zero)?;
    let h2 = h1.matmul(w[2])?.add(w[3])?.maximum(zero)?;
    let logits = h2.matmul(w[4])?.add(w[5])?;
    let probs = logits.softmax(1)?;
    let picked = labels.mul(probs.log()?)?;
    let loss = picked
        .reduce(shapepoly::ReduceOp::Sum, &[1], false)?
        .neg()?
        .reduce(shapepoly::ReduceOp::Mean, &[], false)?;
    let mut inputs = vec![x, labels];
    inputs.extend(&w);
    let program = scope.program(&inputs, &[("loss", loss)])?;
    let wrt: Vec<&str> = PARAMETERS.iter().map(|p| p.0).collect();
    program.grad("loss", &wrt)
}

/// The signature of a program as the cross-language tools print it: `input NAME ROLE
/// [default]` per input, then `output NAME ROLE` per output.
pub fn signature(program: &Program) -> Result<String> {
    let mut out = String::new();
    for i in program.inputs()? {
        let role = match i.role {
            InputRole::Data => "data",
            InputRole::Dim => "dim",
            InputRole::Parameter => "parameter",
            InputRole::Tangent => "tangent",
            InputRole::Cotangent => "cotangent",
            _ => "unknown",
        };
        let default = if i.has_default { " default" } else { "" };
        out += &format!("input {} {}{}\n", i.name, role, default);
    }
    for o in program.outputs()? {
        let role = match o.role {
            OutputRole::Primal => "primal",
            OutputRole::Tangent => "tangent",
            OutputRole::Grad => "grad",
            _ => "unknown",
        };
        out += &format!("output {} {}\n", o.name, role);
    }
    Ok(out)
}

/// Runs the grad program at `batch` with `x` and `labels` by name, every defaulted input left
/// out; then again with every defaulted input given by name as its default, which must give
/// the same bits. Returns every output in the program's order, concatenated.
pub fn run_grad(program: &Program, batch: usize) -> Result<Vec<f32>> {
    let mut rt = Runtime::new(program)?;
    let x = input_data(batch);
    let labels = labels_data(batch);
    let xv = ArrayView::new(&[batch as i64, 64], &x)?;
    let lv = ArrayView::new(&[batch as i64, 10], &labels)?;
    let concat = |out: shapepoly::Outputs| -> Result<Vec<f32>> {
        let mut all = Vec::new();
        for (_, a) in out.iter() {
            all.extend_from_slice(a.as_slice::<f32>()?);
        }
        Ok(all)
    };
    let plain = concat(rt.run(&[("x", &xv), ("labels", &lv)])?)?;
    let defaults: Vec<(String, shapepoly::Array)> = (0..program.input_count())
        .filter(|&i| program.input_has_default(i))
        .map(|i| {
            Ok((
                program.input_name(i).unwrap_or_default(),
                program.input_default(i)?,
            ))
        })
        .collect::<Result<_>>()?;
    let mut inputs: Vec<(&str, &dyn ArrayRef)> = vec![("x", &xv), ("labels", &lv)];
    inputs.extend(
        defaults
            .iter()
            .map(|(n, a)| (n.as_str(), a as &dyn ArrayRef)),
    );
    let given = concat(rt.run(&inputs)?)?;
    let same = plain.len() == given.len()
        && plain
            .iter()
            .zip(&given)
            .all(|(a, b)| a.to_bits() == b.to_bits());
    if !same {
        return Err(shapepoly::Error::new(
            shapepoly::Code::Internal,
            "giving the defaulted inputs their defaults by name changed the outputs",
        ));
    }
    Ok(plain)
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

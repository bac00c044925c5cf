//! The derived program of the cross-language contract (tests/cross_language/MLP_CONTRACT.md):
//! the gradient of the contract MLP's mean cross-entropy with respect to its six weights
//! (parameters). Its signature, its loss and b3.grad against the double reference (for softmax
//! cross-entropy, dloss/dlogits = (probs - labels) / batch), and the defaults given by name.
mod common;
use common::mlp;
use common::twin::{reload, Twin};
use shapepoly::ArrayView;

const SIGNATURE: &str = "input x data
input labels data
input W1 parameter default
input b1 parameter default
input W2 parameter default
input b2 parameter default
input W3 parameter default
input b3 parameter default
input loss.cotangent cotangent default
output loss primal
output W1.grad grad
output b1.grad grad
output W2.grad grad
output b2.grad grad
output W3.grad grad
output b3.grad grad
";

#[test]
fn grad_program_signature_and_values() {
    let traced = mlp::build_grad().unwrap();
    let g = reload(&traced);
    assert_eq!(mlp::signature(&g).unwrap(), SIGNATURE);
    assert_eq!(
        mlp::build_grad().unwrap().serialize().unwrap(),
        g.serialize().unwrap(),
        "tracing and transforming are deterministic"
    );
    let mut twin = Twin::new(&traced);
    for batch in [1usize, 7, 64] {
        let all = mlp::run_grad(&g, batch).unwrap();
        // loss (1), W1.grad (64*32), b1.grad (32), W2.grad (32*32), b2.grad (32),
        // W3.grad (32*10), b3.grad (10).
        assert_eq!(all.len(), 1 + 2048 + 32 + 1024 + 32 + 320 + 10);
        let probs = mlp::reference(batch);
        let loss: f64 = (0..batch)
            .map(|r| -(probs[r * 10 + mlp::label(r)] as f64).ln())
            .sum::<f64>()
            / batch as f64;
        assert!(
            (all[0] as f64 - loss).abs() < 1e-5 * loss.max(1.0),
            "loss {} vs {}",
            all[0],
            loss
        );
        let labels = mlp::labels_data(batch);
        let b3 = &all[all.len() - 10..];
        for j in 0..10 {
            let want: f64 = (0..batch)
                .map(|r| probs[r * 10 + j] as f64 - labels[r * 10 + j] as f64)
                .sum::<f64>()
                / batch as f64;
            assert!(
                (b3[j] as f64 - want).abs() < 1e-5,
                "b3.grad[{}]: {} vs {}",
                j,
                b3[j],
                want
            );
        }
        // The traced program and its reloaded copy agree bit for bit.
        let x = mlp::input_data(batch);
        let xv = ArrayView::new(&[batch as i64, 64], &x).unwrap();
        let lv = ArrayView::new(&[batch as i64, 10], &labels).unwrap();
        let out = twin.run(&[("x", &xv), ("labels", &lv)]).unwrap();
        assert_eq!(out["b3.grad"].as_slice::<f32>().unwrap(), b3);
    }
}

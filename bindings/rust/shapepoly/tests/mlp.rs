//! End to end: the contract MLP traced, serialized, loaded and run at several batch sizes, in
//! process and through the `mlp_tool` example binary.
mod common;
use common::mlp;
use common::twin::Twin;
use shapepoly::{ArrayView, Program};

fn max_err(a: &[f32], b: &[f32]) -> f32 {
    assert_eq!(a.len(), b.len());
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f32::max)
}

#[test]
fn mlp_end_to_end() {
    let traced = mlp::build().unwrap();
    let bytes = traced.serialize().unwrap();
    let program = Program::load(&bytes).unwrap();
    assert_eq!(program.serialize().unwrap(), bytes);
    assert_eq!(
        mlp::build().unwrap().serialize().unwrap(),
        bytes,
        "tracing is deterministic"
    );
    let ins = program.inputs().unwrap();
    assert_eq!(
        (ins.len(), ins[0].name.as_str(), ins[0].shape.as_str()),
        (1, "x", "(batch, 64)")
    );
    assert_eq!(program.outputs().unwrap()[0].shape, "(batch, 10)");
    let mut twin = Twin::new(&traced); // the traced program and its reloaded copy agree
    for batch in [1usize, 7, 64] {
        let got = mlp::run(&program, batch).unwrap();
        let x = mlp::input_data(batch);
        let view = ArrayView::new(&[batch as i64, 64], &x).unwrap();
        let twin_out = twin.run(&[("x", &view)]).unwrap();
        assert_eq!(twin_out["probs"].as_slice::<f32>().unwrap(), &got[..]);
        let want = mlp::reference(batch);
        assert!(
            max_err(&got, &want) < 1e-5,
            "batch {}: max |err| {}",
            batch,
            max_err(&got, &want)
        );
        for r in 0..batch {
            let s: f32 = got[r * 10..(r + 1) * 10].iter().sum();
            assert!((s - 1.0).abs() < 1e-5);
        }
    }
}

/// The example binary cargo builds for `cargo test`: target/<profile>/examples/mlp_tool.
fn mlp_tool() -> Option<std::path::PathBuf> {
    let exe = std::env::current_exe().ok()?; // target/<profile>/deps/mlp-<hash>
    let p = exe.parent()?.parent()?.join("examples").join("mlp_tool");
    p.exists().then_some(p)
}

#[test]
fn mlp_tool_export_and_run() {
    let tool = mlp_tool().expect("examples/mlp_tool not built: run the whole `cargo test` (it builds the examples) or `cargo build --examples` first");
    let dir = std::env::temp_dir().join(format!("shapepoly-rust-mlp-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("mlp.shpoly");
    let st = std::process::Command::new(&tool)
        .arg("export")
        .arg(&file)
        .status()
        .unwrap();
    assert!(st.success());
    assert_eq!(
        std::fs::read(&file).unwrap(),
        mlp::build().unwrap().serialize().unwrap()
    );
    for batch in [1usize, 7, 64] {
        let out = dir.join(format!("out{}.bin", batch));
        let st = std::process::Command::new(&tool)
            .args([
                "run",
                file.to_str().unwrap(),
                &batch.to_string(),
                out.to_str().unwrap(),
            ])
            .status()
            .unwrap();
        assert!(st.success());
        let raw = std::fs::read(&out).unwrap();
        let got: Vec<f32> = raw
            .chunks_exact(4)
            .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
            .collect();
        assert_eq!(got.len(), batch * 10);
        assert!(max_err(&got, &mlp::reference(batch)) < 1e-5);
    }
    // Usage and load errors exit non-zero.
    assert!(!std::process::Command::new(&tool)
        .arg("bogus")
        .output()
        .unwrap()
        .status
        .success());
    let bad = dir.join("bad.shpoly");
    std::fs::write(&bad, b"garbage").unwrap();
    let out = std::process::Command::new(&tool)
        .args([
            "run",
            bad.to_str().unwrap(),
            "1",
            dir.join("x.bin").to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("InvalidProgram"));
    std::fs::remove_dir_all(&dir).unwrap();
}

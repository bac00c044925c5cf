//! The Rust side of the cross-language MLP test (tests/cross_language/MLP_CONTRACT.md).
//!
//! ```text
//! cargo run --offline --example mlp_tool -- export OUT.shpoly
//! cargo run --offline --example mlp_tool -- run FILE.shpoly BATCH OUT.bin
//! cargo run --offline --example mlp_tool -- grad-export OUT.shpoly
//! cargo run --offline --example mlp_tool -- grad-run FILE.shpoly BATCH OUT.bin
//! ```
//! `export` traces the MLP and writes the serialized program; `run` loads FILE, runs it at
//! BATCH with the input `x` passed by name, and writes output `probs` ([BATCH, 10]) as raw
//! little-endian float32. `grad-export` writes the contract's derived grad program;
//! `grad-run` loads one, prints its signature, runs it at BATCH with `x` and `labels` by name
//! (parameters and the cotangent left out, then given their defaults: the same bits), and
//! writes every output in order as raw little-endian float32.
use std::process::ExitCode;

#[path = "../tests/common/mlp.rs"]
mod mlp;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.iter().map(String::as_str).collect::<Vec<_>>()[..] {
        ["export", out] => export(out),
        ["run", file, batch, out] => match batch.parse::<usize>() {
            Ok(b) if b > 0 => run(file, b, out),
            _ => Err(format!("BATCH must be a positive integer, not {:?}", batch)),
        },
        ["grad-export", out] => grad_export(out),
        ["grad-run", file, batch, out] => match batch.parse::<usize>() {
            Ok(b) if b > 0 => grad_run(file, b, out),
            _ => Err(format!("BATCH must be a positive integer, not {:?}", batch)),
        },
        _ => Err(
            "usage: mlp_tool export OUT.shpoly | mlp_tool run FILE.shpoly BATCH OUT.bin | \
                  mlp_tool grad-export OUT.shpoly | mlp_tool grad-run FILE.shpoly BATCH OUT.bin"
                .to_string(),
        ),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("mlp_tool: {}", e);
            ExitCode::FAILURE
        }
    }
}

fn export(out: &str) -> Result<(), String> {
    let program = mlp::build().map_err(|e| e.to_string())?;
    program.save(out).map_err(|e| e.to_string())
}

fn run(file: &str, batch: usize, out: &str) -> Result<(), String> {
    let program = shapepoly::Program::load_file(file).map_err(|e| e.to_string())?;
    let probs = mlp::run(&program, batch).map_err(|e| e.to_string())?;
    let bytes: Vec<u8> = probs.iter().flat_map(|v| v.to_le_bytes()).collect();
    std::fs::write(out, bytes).map_err(|e| format!("cannot write {}: {}", out, e))
}

fn grad_export(out: &str) -> Result<(), String> {
    let program = mlp::build_grad().map_err(|e| e.to_string())?;
    program.save(out).map_err(|e| e.to_string())
}

fn grad_run(file: &str, batch: usize, out: &str) -> Result<(), String> {
    let program = shapepoly::Program::load_file(file).map_err(|e| e.to_string())?;
    print!("{}", mlp::signature(&program).map_err(|e| e.to_string())?);
    let values = mlp::run_grad(&program, batch).map_err(|e| e.to_string())?;
    let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
    std::fs::write(out, bytes).map_err(|e| format!("cannot write {}: {}", out, e))
}

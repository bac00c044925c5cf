//! Tests run programs through [`Twin`]: it serializes the program, reloads it, and runs the
//! reloaded copy and the program as traced on the same calls. A program that saves but does not
//! load, or computes something else once loaded, fails every test that runs it.
#![allow(dead_code)]

use std::ops::Deref;

use shapepoly::{
    Array, ArrayMut, ArrayRef, Bf16, DType, Outputs, Program, Result, Runtime, RuntimeOptions, F16,
};

/// Serializes `p` and loads the bytes; the copy must serialize to the same bytes and list the
/// same text.
pub fn reload(p: &Program) -> Program {
    let bytes = p.serialize().expect("serialize");
    let q = Program::load(&bytes).unwrap_or_else(|e| {
        panic!(
            "the program serializes but does not load: {}\n{}",
            e,
            p.to_text().unwrap()
        )
    });
    assert!(
        q.serialize().unwrap() == bytes,
        "the loaded program serializes to other bytes"
    );
    assert_eq!(
        q.to_text().unwrap(),
        p.to_text().unwrap(),
        "listing after reload"
    );
    q
}

/// The runtime of a reloaded program (whose results, statistics and errors the tests see,
/// also through `Deref`) and of the program as traced, driven by the same calls: both must
/// give the same error or bit-identical outputs.
pub struct Twin {
    loaded: Runtime,
    traced: Runtime,
}

impl Twin {
    pub fn new(p: &Program) -> Twin {
        Twin {
            loaded: Runtime::new(&reload(p)).unwrap(),
            traced: Runtime::new(p).unwrap(),
        }
    }

    pub fn with_options(p: &Program, options: &RuntimeOptions) -> Twin {
        Twin {
            loaded: Runtime::with_options(&reload(p), options).unwrap(),
            traced: Runtime::with_options(p, options).unwrap(),
        }
    }

    pub fn run(&mut self, inputs: &[(&str, &dyn ArrayRef)]) -> Result<Outputs> {
        let got = self.loaded.run(inputs);
        let want = self.traced.run(inputs);
        same_error("run", &got, &want);
        if let (Ok(a), Ok(b)) = (&got, &want) {
            let names: Vec<&str> = a.names().collect();
            assert_eq!(
                names,
                b.names().collect::<Vec<_>>(),
                "output names after reload"
            );
            for (name, x) in a.iter() {
                if let Some(d) = diff(x, &b[name]) {
                    panic!(
                        "output '{}' after reload differs from the traced program's: {}",
                        name, d
                    );
                }
            }
        }
        got
    }

    /// The reloaded program writes into `outputs`, the traced one into fresh arrays of the same
    /// dtypes and shapes.
    pub fn run_into(
        &mut self,
        inputs: &[(&str, &dyn ArrayRef)],
        outputs: &mut [(&str, &mut dyn ArrayMut)],
    ) -> Result<()> {
        let mut fresh: Vec<(String, Array)> = outputs
            .iter()
            .map(|(n, a)| (n.to_string(), Array::zeros(a.dtype(), &a.shape()).unwrap()))
            .collect();
        let got = self.loaded.run_into(inputs, outputs);
        let want = {
            let mut mine: Vec<(&str, &mut dyn ArrayMut)> = fresh
                .iter_mut()
                .map(|(n, a)| (n.as_str(), a as &mut dyn ArrayMut))
                .collect();
            self.traced.run_into(inputs, &mut mine)
        };
        same_error("run_into", &got, &want);
        if got.is_ok() && want.is_ok() {
            for ((name, a), (_, b)) in outputs.iter().zip(&fresh) {
                if let Some(d) = diff(&**a, b) {
                    panic!(
                        "run_into: output '{}' after reload differs from the traced program's: {}",
                        name, d
                    );
                }
            }
        }
        got
    }

    pub fn dry_run(&mut self, inputs: &[(&str, &[i64])]) -> Result<Vec<Vec<i64>>> {
        let got = self.loaded.dry_run(inputs);
        let want = self.traced.dry_run(inputs);
        same_error("dry_run", &got, &want);
        if let (Ok(a), Ok(b)) = (&got, &want) {
            assert_eq!(a, b, "dry_run shapes after reload");
        }
        got
    }
}

impl Deref for Twin {
    type Target = Runtime;
    fn deref(&self) -> &Runtime {
        &self.loaded
    }
}

fn same_error<T, U>(what: &str, loaded: &Result<T>, traced: &Result<U>) {
    match (loaded, traced) {
        (Ok(_), Ok(_)) => {}
        (Err(a), Err(b)) => assert!(
            a.code() == b.code() && a.message() == b.message(),
            "{}: the reloaded program fails with {}, the traced one with {}",
            what,
            a,
            b
        ),
        (Err(a), Ok(_)) => panic!("{}: only the reloaded program fails: {}", what, a),
        (Ok(_), Err(b)) => panic!("{}: only the traced program fails: {}", what, b),
    }
}

/// The bytes of an array (read only while `a` is borrowed).
fn bytes(a: &dyn ArrayRef) -> &[u8] {
    let raw = a.as_raw_array();
    // SAFETY: `raw` is valid while `a` is borrowed, and holds `nbytes` readable bytes.
    unsafe {
        let p = shapepoly::sys::shp_array_data(raw) as *const u8;
        if p.is_null() || a.nbytes() == 0 {
            &[]
        } else {
            std::slice::from_raw_parts(p, a.nbytes())
        }
    }
}

/// How `a` and `b` differ (`None` if equal: same dtype, shape and bits; NaNs of any payload
/// match).
pub fn diff(a: &dyn ArrayRef, b: &dyn ArrayRef) -> Option<String> {
    if a.dtype() != b.dtype() || a.shape() != b.shape() {
        return Some(format!(
            "{}{:?} vs {}{:?}",
            a.dtype(),
            a.shape(),
            b.dtype(),
            b.shape()
        ));
    }
    let size = match a.dtype().size() {
        Some(size) => size,
        None => return Some(format!("unknown dtype {}", a.dtype())),
    };
    let (x, y) = (bytes(a), bytes(b));
    for (i, (u, v)) in x.chunks(size).zip(y.chunks(size)).enumerate() {
        let nan = match a.dtype() {
            DType::F32 => {
                f32::from_le_bytes(u.try_into().unwrap()).is_nan()
                    && f32::from_le_bytes(v.try_into().unwrap()).is_nan()
            }
            DType::F64 => {
                f64::from_le_bytes(u.try_into().unwrap()).is_nan()
                    && f64::from_le_bytes(v.try_into().unwrap()).is_nan()
            }
            DType::F16 => {
                F16::from_bits(u16::from_le_bytes(u.try_into().unwrap())).is_nan()
                    && F16::from_bits(u16::from_le_bytes(v.try_into().unwrap())).is_nan()
            }
            DType::Bf16 => {
                Bf16::from_bits(u16::from_le_bytes(u.try_into().unwrap())).is_nan()
                    && Bf16::from_bits(u16::from_le_bytes(v.try_into().unwrap())).is_nan()
            }
            _ => false,
        };
        if u != v && !nan {
            return Some(format!("element {}: bytes {:?} vs {:?}", i, u, v));
        }
    }
    None
}

//! Compiled functions (issue 12) through the safe crate: automatic dynamic shapes (batch 4,
//! then 8, then other sizes without a trace), the stances FAIL_ON_RECOMPILE,
//! DYNAMIC_ON_LIMIT and FORCE_TRACE, mark_unbacked and maybe_mark_dynamic, a closure's error passed through with its code, a panic turned into an
//! error, and export -> save/load -> run giving the function's outputs on every shape it saw.
use std::cell::Cell;
use std::rc::Rc;

use shapepoly::{
    Array, ArrayView, Cmp, Code, DType, DynamicMode, Error, Function, FunctionOptions, Program,
    ReduceOp, Runtime, Scope, Stance, Tensor,
};

/// The input at rows x cols: 0.01 * (i % 97).
fn input(rows: i64, cols: i64) -> Vec<f32> {
    (0..rows * cols).map(|i| 0.01 * (i % 97) as f32).collect()
}

/// y = softmax(x, axis 1) * 2 when cols > 4 (decided with Dim::guard), else exp(x).
fn row_fn<'s>(scope: &'s Scope, x: &[Tensor<'s>]) -> shapepoly::Result<Vec<Tensor<'s>>> {
    let cols = x[0].shape()?[1];
    let wide = cols.guard(Cmp::Gt, scope.constant_dim(4)?, Some("wide rows"))?;
    if !wide {
        return Ok(vec![x[0].exp()?]);
    }
    let two = scope.constant(&[], &[2.0f32])?;
    Ok(vec![x[0].softmax(1)?.mul(two)?])
}

/// The reference of row_fn in f64.
fn reference(rows: i64, cols: i64) -> Vec<f32> {
    let x = input(rows, cols);
    let mut y = vec![0f32; x.len()];
    for r in 0..rows as usize {
        let row = &x[r * cols as usize..(r + 1) * cols as usize];
        let mx = row.iter().fold(f64::MIN, |m, &v| m.max(v as f64));
        let sum: f64 = row.iter().map(|&v| (v as f64 - mx).exp()).sum();
        for (k, &v) in row.iter().enumerate() {
            let v = v as f64;
            y[r * cols as usize + k] = if cols > 4 {
                (2.0 * (v - mx).exp() / sum) as f32
            } else {
                v.exp() as f32
            };
        }
    }
    y
}

/// A function of x: f32[rows, cols] -> y counting its traces in `traces`.
fn row_function(options: &FunctionOptions, traces: &Rc<Cell<u32>>) -> Function {
    let t = traces.clone();
    Function::with_options(&[("x", DType::F32, 2)], &["y"], options, move |scope, x| {
        t.set(t.get() + 1);
        row_fn(scope, x)
    })
    .unwrap()
}

/// Calls `f` at rows x cols and checks y against the reference; returns y.
fn call(f: &mut Function, rows: i64, cols: i64) -> shapepoly::Result<Vec<f32>> {
    let x = input(rows, cols);
    let out = f.call(&[("x", &ArrayView::new(&[rows, cols], &x)?)])?;
    let y = out["y"].to_vec::<f32>()?;
    for (i, (g, w)) in y.iter().zip(reference(rows, cols)).enumerate() {
        assert!(
            (g - w).abs() <= 1e-5 * (1.0 + w.abs()),
            "{}x{} [{}]: {} vs {}",
            rows,
            cols,
            i,
            g,
            w
        );
    }
    Ok(y)
}

fn contains(events: &[String], part: &str) -> bool {
    events.iter().any(|e| e.contains(part))
}

#[test]
fn automatic_dynamic_batch_4_then_8_then_no_more_traces() {
    let traces = Rc::new(Cell::new(0));
    let mut f = row_function(&FunctionOptions::new(), &traces);
    call(&mut f, 4, 8).unwrap();
    assert_eq!(f.trace_count(), 1);
    assert_eq!(f.variant_count(), 1);
    call(&mut f, 8, 8).unwrap(); // batch changed: traced again with a symbolic batch
    assert_eq!(f.trace_count(), 2);
    let events = f.events();
    assert_eq!(events.len(), f.event_count());
    assert!(
        contains(
            &events,
            "input 'x' axis 0: size 8 failed guard s0 == 4 (marked dynamic now)"
        ),
        "{:#?}",
        events
    );
    assert!(
        contains(
            &events,
            "variant 1: input 'x' axis 1: static (only one size seen)"
        ),
        "{:#?}",
        events
    );
    for b in [3, 100, 1, 17] {
        call(&mut f, b, 8).unwrap();
    }
    assert_eq!(f.trace_count(), 2); // a third size: no new trace
    assert_eq!(f.cache_hits(), 4);
    assert_eq!(traces.get(), 2);
    assert_eq!(f.event_text(f.event_count()), None);
    assert!(format!("{:?}", f).contains("traces: 2"));
}

#[test]
fn fail_on_recompile_names_the_guard() {
    let traces = Rc::new(Cell::new(0));
    let mut f = row_function(&FunctionOptions::new(), &traces);
    call(&mut f, 4, 8).unwrap();
    f.set_stance(Stance::FailOnRecompile).unwrap();
    let err = call(&mut f, 9, 8).unwrap_err();
    assert_eq!(err.code(), Code::GuardFailed, "{}", err);
    for part in ["FAIL_ON_RECOMPILE", "guard s0 == 4", "s0 = 9"] {
        assert!(err.message().contains(part), "{}", err);
    }
    call(&mut f, 4, 8).unwrap(); // the function stays usable
    assert_eq!(f.trace_count(), 1);
    f.set_stance(Stance::Default).unwrap();
    call(&mut f, 9, 8).unwrap();
    assert_eq!(f.trace_count(), 2);
}

#[test]
fn mark_static_up_to_the_limit_then_dynamic_on_limit() {
    let traces = Rc::new(Cell::new(0));
    let options = FunctionOptions::new()
        .recompile_limit(3)
        .stance(Stance::DynamicOnLimit)
        .num_threads(1);
    let mut f = row_function(&options, &traces);
    f.mark_static("x", 0).unwrap();
    for b in [2, 3, 4] {
        call(&mut f, b, 8).unwrap();
    }
    assert_eq!(f.trace_count(), 3);
    call(&mut f, 5, 8).unwrap(); // at the limit: one fully dynamic variant
    assert_eq!(f.trace_count(), 4);
    assert!(contains(&f.events(), "fully dynamic"), "{:#?}", f.events());
    for b in [6, 50] {
        call(&mut f, b, 8).unwrap();
    }
    assert_eq!(f.trace_count(), 4);
    assert_eq!(traces.get(), 4);

    // The default stance fails at the limit instead, giving the reasons.
    let mut g = row_function(&FunctionOptions::new().recompile_limit(2), &traces);
    g.mark_static("x", 0).unwrap();
    call(&mut g, 2, 8).unwrap();
    call(&mut g, 3, 8).unwrap();
    let err = call(&mut g, 4, 8).unwrap_err();
    assert_eq!(err.code(), Code::GuardFailed, "{}", err);
    assert!(err.message().contains("recompile limit 2"), "{}", err);
}

#[test]
fn mark_dynamic_and_argument_errors() {
    let traces = Rc::new(Cell::new(0));
    let mut f = row_function(&FunctionOptions::new().dynamic(DynamicMode::None), &traces);
    assert_eq!(f.export().unwrap_err().code(), Code::InvalidArgument); // nothing traced yet
    assert_eq!(
        f.mark_dynamic("x", 2, 0, 5).unwrap_err().code(),
        Code::InvalidArgument
    );
    assert_eq!(f.mark_static("q", 0).unwrap_err().code(), Code::NotFound);
    f.mark_dynamic("x", 0, 1, i64::MAX).unwrap();
    call(&mut f, 4, 8).unwrap();
    call(&mut f, 8, 8).unwrap(); // axis 0 marked dynamic: one variant for both
    assert_eq!(f.trace_count(), 1);
    let x = input(2, 2);
    let view = ArrayView::new(&[2, 2], &x).unwrap();
    assert_eq!(
        f.call(&[("nope", &view)]).unwrap_err().code(),
        Code::NotFound
    );
    let r3 = Array::zeros(DType::F32, &[2, 2, 2]).unwrap();
    assert_eq!(
        f.call(&[("x", &r3)]).unwrap_err().code(),
        Code::ShapeMismatch
    );
    let bad = FunctionOptions::new().recompile_limit(0);
    let err = Function::with_options(&[("x", DType::F32, 2)], &["y"], &bad, row_fn).unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert_eq!(f.output_names(), &["y".to_string()]);
}

#[test]
fn closure_error_passes_through_with_its_code() {
    let fail = Rc::new(Cell::new(true));
    let flag = fail.clone();
    let mut f = Function::new(&[("x", DType::F32, 2)], &["y"], move |scope, x| {
        if flag.get() {
            return Err(Error::new(
                Code::Unsupported,
                "the model refuses this shape",
            ));
        }
        row_fn(scope, x)
    })
    .unwrap();
    let err = call(&mut f, 2, 8).unwrap_err();
    assert_eq!(err.code(), Code::Unsupported, "{}", err);
    assert!(
        err.message()
            .starts_with("the trace function failed: the model refuses this shape"),
        "{}",
        err
    );
    // A library error inside the closure (a wrong op) keeps its code too.
    let g = Function::new(&[("x", DType::F32, 2)], &["y"], |_, x| {
        Ok(vec![x[0].matmul(x[0])?])
    });
    let err = call(&mut g.unwrap(), 2, 3).unwrap_err();
    assert_eq!(err.code(), Code::ShapeMismatch, "{}", err);
    // Too many outputs.
    let mut h =
        Function::new(&[("x", DType::F32, 2)], &["y"], |_, x| Ok(vec![x[0], x[0]])).unwrap();
    let err = call(&mut h, 2, 3).unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument, "{}", err);
    assert!(
        err.message().contains("returned 2 tensors for 1 outputs"),
        "{}",
        err
    );
    fail.set(false);
    call(&mut f, 2, 8).unwrap(); // usable after the error
    assert_eq!(f.trace_count(), 1);
}

#[test]
fn panic_in_the_closure_becomes_an_error() {
    let panics = Rc::new(Cell::new(true));
    let flag = panics.clone();
    let mut f = Function::new(&[("x", DType::F32, 2)], &["y"], move |scope, x| {
        if flag.get() {
            panic!("boom at {} inputs", x.len());
        }
        row_fn(scope, x)
    })
    .unwrap();
    let err = call(&mut f, 2, 8).unwrap_err();
    assert_eq!(err.code(), Code::Internal, "{}", err);
    assert!(
        err.message()
            .contains("the trace closure panicked: boom at 1 inputs"),
        "{}",
        err
    );
    panics.set(false);
    call(&mut f, 2, 8).unwrap();
    assert_eq!(f.trace_count(), 1);
}

#[test]
fn export_save_load_run_gives_the_same_outputs() {
    let traces = Rc::new(Cell::new(0));
    let mut f = row_function(&FunctionOptions::new().dynamic(DynamicMode::All), &traces);
    let shapes = [(2, 3), (2, 9), (5, 4), (5, 5), (1, 30)];
    let seen: Vec<Vec<f32>> = shapes
        .iter()
        .map(|&(r, c)| call(&mut f, r, c).unwrap())
        .collect();
    assert_eq!(f.trace_count(), 2, "{:#?}", f.events()); // cols <= 4 and cols > 4
    let program = f.export().unwrap();
    assert_eq!(program.variant_count(), 2);
    let path = std::env::temp_dir().join(format!("shapepoly_fn_{}.shpoly", std::process::id()));
    program.save(&path).unwrap();
    drop(program);
    drop(f); // the file runs without the closure
    let loaded = Program::load_file(&path).unwrap();
    std::fs::remove_file(&path).unwrap();
    let mut rt = Runtime::new(&loaded).unwrap();
    for (&(r, c), want) in shapes.iter().zip(&seen) {
        let x = input(r, c);
        let out = rt
            .run(&[("x", &ArrayView::new(&[r, c], &x).unwrap())])
            .unwrap();
        assert_eq!(&out["y"].to_vec::<f32>().unwrap(), want, "{}x{}", r, c);
    }
}

#[test]
fn mark_unbacked_has_no_hint_no_specialization_no_duck_sizing() {
    let seen = Rc::new(std::cell::RefCell::new(Vec::<(String, String)>::new()));
    let log = seen.clone();
    let inputs = [("x", DType::F32, 1), ("y", DType::F32, 1)];
    let mut f = Function::new(&inputs, &["z"], move |_, v| {
        let (x, y) = (v[0].shape()?[0], v[1].shape()?[0]);
        log.borrow_mut().push((x.to_string(), y.to_string()));
        let sx = v[0].reduce(ReduceOp::Sum, &[], false)?;
        let sy = v[1].reduce(ReduceOp::Sum, &[], false)?;
        Ok(vec![sx.add(sy)?])
    })
    .unwrap();
    f.mark_unbacked("x", 0).unwrap();
    f.mark_unbacked("y", 0).unwrap();
    for n in [0i64, 1, 3, 8] {
        // Sizes 0 and 1 included: one trace, symbolic.
        let ones = vec![1f32; n as usize];
        let a = ArrayView::new(&[n], &ones).unwrap();
        let out = f.call(&[("x", &a), ("y", &a)]).unwrap();
        assert_eq!(out["z"].to_vec::<f32>().unwrap(), vec![2.0 * n as f32]);
    }
    assert_eq!(f.trace_count(), 1, "{:#?}", f.events());
    let seen = seen.borrow();
    assert_eq!(seen.len(), 1);
    assert_ne!(seen[0].0, seen[0].1); // equal sizes, two variables: never duck-sized

    let mut g = Function::new(&[("x", DType::F32, 1)], &["y"], |scope, x| {
        let n = x[0].shape()?[0];
        // Undecidable, and no hint to guard on.
        if n.guard(Cmp::Ge, scope.constant_dim(2)?, Some("long"))? {
            return Ok(vec![x[0].mul(scope.constant(&[], &[2.0f32])?)?]);
        }
        Ok(vec![x[0]])
    })
    .unwrap();
    g.mark_unbacked("x", 0).unwrap();
    let ones = [1f32; 3];
    let err = g
        .call(&[("x", &ArrayView::new(&[3], &ones).unwrap())])
        .unwrap_err();
    assert_eq!(err.code(), Code::Inconclusive, "{}", err);
    assert_eq!(
        g.mark_unbacked("nope", 0).unwrap_err().code(),
        Code::NotFound
    );
    assert_eq!(
        g.mark_unbacked("x", 1).unwrap_err().code(),
        Code::InvalidArgument
    );
}

#[test]
fn maybe_mark_dynamic_is_symbolic_and_may_be_specialized() {
    // A guard pinning the axis (specializing it) is allowed after maybe_mark_dynamic.
    let mut f = Function::new(&[("x", DType::F32, 1)], &["y"], |scope, x| {
        let n = x[0].shape()?[0];
        if n.guard(Cmp::Eq, scope.constant_dim(4)?, None)? {
            return Ok(vec![x[0].mul(scope.constant(&[], &[2.0f32])?)?]);
        }
        Ok(vec![x[0]])
    })
    .unwrap();
    f.maybe_mark_dynamic("x", 0).unwrap();
    for (n, want) in [(4i64, 2f32), (3, 1.0)] {
        let ones = vec![1f32; n as usize];
        let out = f
            .call(&[("x", &ArrayView::new(&[n], &ones).unwrap())])
            .unwrap();
        assert_eq!(out["y"].to_vec::<f32>().unwrap(), vec![want; n as usize]);
    }

    let mut g = Function::new(&[("x", DType::F32, 1)], &["y"], |scope, x| {
        Ok(vec![x[0].mul(scope.constant(&[], &[2.0f32])?)?])
    })
    .unwrap();
    g.maybe_mark_dynamic("x", 0).unwrap();
    for n in [1i64, 2, 7] {
        let ones = vec![1f32; n as usize];
        g.call(&[("x", &ArrayView::new(&[n], &ones).unwrap())])
            .unwrap();
    }
    assert_eq!(g.trace_count(), 1, "{:#?}", g.events()); // symbolic from the first trace
    assert_eq!(
        g.maybe_mark_dynamic("nope", 0).unwrap_err().code(),
        Code::NotFound
    );
}

#[test]
fn force_trace_traces_every_call_and_keeps_the_variants() {
    let traced = Rc::new(Cell::new(0));
    let count = traced.clone();
    let mut f = Function::new(&[("x", DType::F32, 1)], &["y"], move |scope, x| {
        count.set(count.get() + 1);
        Ok(vec![x[0].add(scope.constant(&[], &[1.0f32])?)?])
    })
    .unwrap();
    let ones = [1f32; 2];
    let x = ArrayView::new(&[2], &ones).unwrap();
    f.call(&[("x", &x)]).unwrap();
    f.set_stance(Stance::ForceTrace).unwrap();
    for _ in 0..3 {
        let out = f.call(&[("x", &x)]).unwrap();
        assert_eq!(out["y"].to_vec::<f32>().unwrap(), vec![2.0, 2.0]);
    }
    assert_eq!(traced.get(), 4);
    assert_eq!(f.variant_count(), 1);
    assert!(contains(&f.events(), "FORCE_TRACE"), "{:#?}", f.events());
    f.set_stance(Stance::Default).unwrap();
    f.call(&[("x", &x)]).unwrap();
    assert_eq!(traced.get(), 4); // the cached variant again
}

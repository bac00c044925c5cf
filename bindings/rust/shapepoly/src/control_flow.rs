//! Control flow traced from closures, as JAX writes it: [`Scope::cond`], [`Scope::while_loop`]
//! and [`Scope::scan`] (shapepoly.h, "Control flow").
//!
//! Each closure is traced once, on fresh inputs of its operands' types, into a subprogram of
//! the scope (`shp_program_create_body`). Tensors a closure uses from the enclosing trace
//! (captures) become operands of the op automatically; two closures of one op (cond's
//! branches, while_loop's `cond_fn` and `body_fn`) take the union of their captures.
use std::ptr::{self, NonNull};

use crate::error::{check, Result};
use crate::program::Program;
use crate::scope::{Dim, Scope};
use crate::sys;
use crate::tensor::Tensor;
use crate::util::invalid;

type RawTensor = *const sys::shp_tensor_t;

fn raws(ts: &[Tensor<'_>]) -> Vec<RawTensor> {
    ts.iter().map(|t| t.raw()).collect()
}

/// A closure traced on fresh inputs: its program, captures, and outputs.
struct Body<'s> {
    scope: &'s Scope,
    mark: usize,
    inputs: Vec<Tensor<'s>>,
    outputs: Vec<Tensor<'s>>,
    program: Program,
    captures: Vec<Tensor<'s>>,
}

impl<'s> Body<'s> {
    /// Takes the mark, makes the inputs `specs` = (name, like) with `like`'s dtype and shape
    /// (less axis `drop_axis` when given), and runs `trace` on them.
    fn trace(
        scope: &'s Scope,
        specs: &[(String, Tensor<'s>, Option<usize>)],
        trace: impl FnOnce(&[Tensor<'s>]) -> Result<Vec<Tensor<'s>>>,
    ) -> Result<Body<'s>> {
        // SAFETY: valid scope.
        let mark = unsafe { sys::shp_scope_trace_mark(scope.as_raw()) };
        let mut inputs = Vec::with_capacity(specs.len());
        for (name, like, drop_axis) in specs {
            let mut dims = like.shape()?;
            if let Some(ax) = *drop_axis {
                dims.remove(ax);
            }
            inputs.push(scope.input_dims(name, like.dtype(), &dims)?);
        }
        let outputs = trace(&inputs)?;
        let (program, captures) = Body::cut(scope, mark, &inputs, &outputs, &[])?;
        Ok(Body {
            scope,
            mark,
            inputs,
            outputs,
            program,
            captures,
        })
    }

    /// `shp_program_create_body` with `given` as the first captures.
    fn cut(
        scope: &'s Scope,
        mark: usize,
        inputs: &[Tensor<'s>],
        outputs: &[Tensor<'s>],
        given: &[Tensor<'s>],
    ) -> Result<(Program, Vec<Tensor<'s>>)> {
        // Tensors older than the mark, the scope's variables (each may become a dimension
        // input's capture), the given ones: always enough.
        // SAFETY: the scope is live.
        let vars = unsafe { sys::shp_scope_variable_count(scope.as_raw()) };
        let cap = mark + vars + given.len() + 1;
        let mut caps: Vec<RawTensor> = vec![ptr::null(); cap];
        caps[..given.len()].copy_from_slice(&raws(given));
        let mut n = given.len();
        let (ins, outs) = (raws(inputs), raws(outputs));
        let mut prog = ptr::null_mut();
        // SAFETY: every array has the length passed with it (`caps` has room for `cap`); the
        // tensors belong to the live scope; nothing is retained.
        check(unsafe {
            sys::shp_program_create_body(
                scope.as_raw(),
                mark,
                ins.as_ptr(),
                ins.len(),
                outs.as_ptr(),
                outs.len(),
                caps.as_mut_ptr(),
                cap,
                &mut n,
                &mut prog,
            )
        })?;
        let owner = NonNull::new(scope.as_raw()).expect("live scope");
        let captures = caps[..n].iter().map(|&p| Tensor::new(p, owner)).collect();
        Ok((Program::from_raw(prog), captures))
    }

    /// The program taking exactly `union` (a superset of its captures) as captures.
    fn with_captures(self, union: &[Tensor<'s>]) -> Result<Program> {
        if raws(union) == raws(&self.captures) {
            return Ok(self.program);
        }
        Ok(Body::cut(self.scope, self.mark, &self.inputs, &self.outputs, union)?.0)
    }
}

fn union<'s>(a: &[Tensor<'s>], b: &[Tensor<'s>]) -> Vec<Tensor<'s>> {
    let mut out: Vec<Tensor<'s>> = a.to_vec();
    for t in b {
        if !out.iter().any(|u| u.raw() == t.raw()) {
            out.push(*t);
        }
    }
    out
}

/// Runs a C control-flow op writing `count` results.
fn results<'s>(
    scope: &'s Scope,
    count: usize,
    f: impl FnOnce(*mut RawTensor, usize) -> *mut sys::shp_error_t,
) -> Result<Vec<Tensor<'s>>> {
    let mut out: Vec<RawTensor> = vec![ptr::null(); count.max(1)];
    check(f(out.as_mut_ptr(), count))?;
    let owner = NonNull::new(scope.as_raw()).expect("live scope");
    Ok(out[..count]
        .iter()
        .map(|&p| Tensor::new(p, owner))
        .collect())
}

fn named<'s>(prefix: &str, ts: &[Tensor<'s>]) -> Vec<(String, Tensor<'s>, Option<usize>)> {
    ts.iter()
        .enumerate()
        .map(|(i, t)| (format!("{}{}", prefix, i), *t, None))
        .collect()
}

/// Control flow (`shp_tensor_cond`, `shp_tensor_while_loop`, `shp_tensor_scan`).
impl Scope {
    /// `lax.cond` / `torch.cond`: `true_fn(operands)` when the `Bool` scalar `pred` is true,
    /// else `false_fn(operands)`; only the taken branch runs (`shp_tensor_cond`). Both
    /// branches return the same number of tensors, with the same dtypes and ranks
    /// ([`Code::ShapeMismatch`](crate::Code::ShapeMismatch) naming both shapes otherwise); a
    /// dim whose sizes are not provably equal becomes a new data-dependent size (`u0`, ...)
    /// set by the branch that runs. Each closure is traced once, on fresh inputs of the operands' types;
    /// tensors it uses from the enclosing trace are passed to the op for it.
    pub fn cond<'s, T, F>(
        &'s self,
        pred: Tensor<'s>,
        true_fn: T,
        false_fn: F,
        operands: &[Tensor<'s>],
    ) -> Result<Vec<Tensor<'s>>>
    where
        T: FnOnce(&[Tensor<'s>]) -> Result<Vec<Tensor<'s>>>,
        F: FnOnce(&[Tensor<'s>]) -> Result<Vec<Tensor<'s>>>,
    {
        let specs = named("operand", operands);
        let t = Body::trace(self, &specs, true_fn)?;
        let f = Body::trace(self, &specs, false_fn)?;
        if t.outputs.len() != f.outputs.len() {
            return Err(invalid(format!(
                "cond: the true branch returns {} tensors but the false branch returns {}",
                t.outputs.len(),
                f.outputs.len()
            )));
        }
        let count = t.outputs.len();
        let caps = union(&t.captures, &f.captures);
        let (tp, fp) = (t.with_captures(&caps)?, f.with_captures(&caps)?);
        let mut ops = raws(operands);
        ops.extend(raws(&caps));
        results(self, count, |out, n| {
            // SAFETY: `ops` has `ops.len()` tensors and `out` room for `n`; the programs are
            // alive during the call and not retained.
            unsafe {
                sys::shp_tensor_cond(
                    self.as_raw(),
                    pred.raw(),
                    tp.as_raw(),
                    fp.as_raw(),
                    ops.as_ptr(),
                    ops.len(),
                    out,
                    n,
                )
            }
        })
    }

    /// `lax.while_loop`: `carry = init; while cond_fn(carry) { carry = body_fn(carry) }`;
    /// returns the final carry (`shp_tensor_while_loop`). `cond_fn` returns one `Bool`
    /// scalar; `body_fn` returns the next carry, each value with the dtype and (provably) the
    /// shape of its initial value. `max_trips` bounds the iterations (a run that would exceed
    /// it fails with [`Code::ConstraintViolation`](crate::Code::ConstraintViolation)); `None`:
    /// unbounded.
    pub fn while_loop<'s, C, B>(
        &'s self,
        cond_fn: C,
        body_fn: B,
        init: &[Tensor<'s>],
        max_trips: Option<i64>,
    ) -> Result<Vec<Tensor<'s>>>
    where
        C: FnOnce(&[Tensor<'s>]) -> Result<Tensor<'s>>,
        B: FnOnce(&[Tensor<'s>]) -> Result<Vec<Tensor<'s>>>,
    {
        if let Some(m) = max_trips {
            if m < 0 {
                return Err(invalid(format!("while_loop: max_trips is {}, not >= 0", m)));
            }
        }
        let specs = named("carry", init);
        let c = Body::trace(self, &specs, |xs| Ok(vec![cond_fn(xs)?]))?;
        let b = Body::trace(self, &specs, body_fn)?;
        if b.outputs.len() != init.len() {
            return Err(invalid(format!(
                "while_loop: body_fn returns {} tensors but the carry has {}",
                b.outputs.len(),
                init.len()
            )));
        }
        let caps = union(&c.captures, &b.captures);
        let (cp, bp) = (c.with_captures(&caps)?, b.with_captures(&caps)?);
        let (ins, consts) = (raws(init), raws(&caps));
        results(self, init.len(), |out, n| {
            // SAFETY: every array has the length passed with it; the programs are alive.
            unsafe {
                sys::shp_tensor_while_loop(
                    self.as_raw(),
                    cp.as_raw(),
                    bp.as_raw(),
                    ins.as_ptr(),
                    ins.len(),
                    consts.as_ptr(),
                    consts.len(),
                    max_trips.unwrap_or(-1),
                    out,
                    n,
                )
            }
        })
    }

    /// `lax.scan`: for each slice `x` of `xs` along `axis` (last to first when `reverse`):
    /// `(carry, y) = f(carry, x)`; returns `(carry, ys)` with each `y` stacked along `axis`
    /// (`shp_tensor_scan`). Every `xs` has the same (provably equal) size on `axis`, the
    /// length, which may be symbolic; `length` gives it when `xs` is empty. `f` returns the
    /// carry (dtypes and shapes of `init`) and any number of `y`s.
    pub fn scan<'s, F>(
        &'s self,
        f: F,
        init: &[Tensor<'s>],
        xs: &[Tensor<'s>],
        length: Option<Dim<'s>>,
        reverse: bool,
        axis: usize,
    ) -> Result<(Vec<Tensor<'s>>, Vec<Tensor<'s>>)>
    where
        F: FnOnce(&[Tensor<'s>], &[Tensor<'s>]) -> Result<(Vec<Tensor<'s>>, Vec<Tensor<'s>>)>,
    {
        let mut specs = named("carry", init);
        for (i, x) in xs.iter().enumerate() {
            let rank = x.rank()?;
            if rank <= axis {
                return Err(invalid(format!(
                    "scan: xs[{}] has rank {}, no axis {} to scan",
                    i, rank, axis
                )));
            }
            specs.push((format!("x{}", i), *x, Some(axis)));
        }
        let nc = init.len();
        let mut carry_count = None;
        let body = Body::trace(self, &specs, |ins| {
            let (carry, ys) = f(&ins[..nc], &ins[nc..])?;
            carry_count = Some(carry.len());
            let mut all = carry;
            all.extend(ys);
            Ok(all)
        })?;
        if carry_count != Some(nc) {
            return Err(invalid(format!(
                "scan: f returns a carry of {} tensors but init has {}",
                carry_count.unwrap_or(0),
                nc
            )));
        }
        let (ins, xr, consts) = (raws(init), raws(xs), raws(&body.captures));
        let len = length.map_or(ptr::null(), |d| d.raw());
        let mut res = results(self, body.outputs.len(), |out, n| {
            // SAFETY: every array has the length passed with it; the program is alive.
            unsafe {
                sys::shp_tensor_scan(
                    self.as_raw(),
                    body.program.as_raw(),
                    ins.as_ptr(),
                    ins.len(),
                    xr.as_ptr(),
                    xr.len(),
                    consts.as_ptr(),
                    consts.len(),
                    axis as i64,
                    len,
                    reverse,
                    out,
                    n,
                )
            }
        })?;
        let ys = res.split_off(nc);
        Ok((res, ys))
    }
}

//! Parameters, automatic differentiation and batching: jvp, vjp, grad and vmap are program
//! transformations (`shp_program_jvp`, `shp_program_vjp`, `shp_program_grad`,
//! `shp_program_vmap`) that work on traced and loaded programs alike and compose to any order;
//! the results run, serialize and load like any program.
use std::ptr;

use crate::array::{check_len, Array, Element};
use crate::error::{check, Code, Error, Result};
use crate::program::{OutputRole, Program};
use crate::scope::Scope;
use crate::sys;
use crate::tensor::{DType, Tensor};
use crate::util::{cstring, CStrings};

/// Parameters: named inputs of concrete shape with a stored default.
impl Scope {
    /// A named parameter of concrete `shape` whose default value is `data` (row-major; copied
    /// and stored in the program) (`shp_tensor_parameter`). Its dtype is `T`'s. A run may leave
    /// it out (the default is used) or give it by name (checked for dtype and shape): new
    /// weights without re-exporting. Names with `.` are reserved for derived names. `data.len()`
    /// must equal the product of `shape` (else an error counted in elements).
    pub fn parameter<T: Element>(
        &self,
        name: &str,
        shape: &[i64],
        data: &[T],
    ) -> Result<Tensor<'_>> {
        check_len(shape, data.len())?;
        // SAFETY: `data` is valid for its size in bytes (plain elements); copied.
        unsafe {
            self.parameter_raw(
                name,
                T::DTYPE,
                shape,
                data.as_ptr() as *const u8,
                std::mem::size_of_val(data),
            )
        }
    }

    /// A parameter from raw little-endian element bytes of `dtype` (`shp_tensor_parameter`).
    pub fn parameter_bytes(
        &self,
        name: &str,
        dtype: DType,
        shape: &[i64],
        bytes: &[u8],
    ) -> Result<Tensor<'_>> {
        // SAFETY: `bytes` is valid for its length; copied.
        unsafe { self.parameter_raw(name, dtype, shape, bytes.as_ptr(), bytes.len()) }
    }

    /// # Safety
    /// `data` is valid for `nbytes` bytes during the call.
    unsafe fn parameter_raw(
        &self,
        name: &str,
        dtype: DType,
        shape: &[i64],
        data: *const u8,
        nbytes: usize,
    ) -> Result<Tensor<'_>> {
        let n = cstring(name, "parameter name")?;
        self.traced(|out| {
            sys::shp_tensor_parameter(
                self.as_raw(),
                n.as_ptr(),
                dtype.raw(),
                shape.as_ptr(),
                shape.len(),
                data as *const _,
                nbytes,
                out,
            )
        })
    }
}

/// Roles, defaults and the transformations.
impl Program {
    /// Role of output `i` (`shp_program_output_role`); None if out of range.
    pub fn output_role(&self, i: usize) -> Option<OutputRole> {
        // SAFETY: valid program.
        let r = unsafe { sys::shp_program_output_role(self.as_raw(), i) };
        (i < self.output_count()).then(|| OutputRole::from_raw(r))
    }

    /// Whether input `i` has a default value (a parameter, or grad's cotangent), so a run
    /// may leave it out (`shp_program_input_has_default`); false if out of range.
    pub fn input_has_default(&self, i: usize) -> bool {
        // SAFETY: valid program.
        unsafe { sys::shp_program_input_has_default(self.as_raw(), i) }
    }

    /// A copy of the default value of input `i` (`shp_program_input_default`). An input
    /// without a default, or `i` out of range, is [`Code::InvalidArgument`](crate::Code).
    pub fn input_default(&self, i: usize) -> Result<Array> {
        let mut out = ptr::null_mut();
        // SAFETY: valid program and out-param; the array is owned by the caller.
        check(unsafe { sys::shp_program_input_default(self.as_raw(), i, &mut out) })?;
        Ok(Array::from_raw(out))
    }

    /// The value of input `i`'s fill default (`shp_program_input_default_fill`), such as a
    /// default tangent of [`Program::jvp_with_default_tangents`]: a run that leaves the input
    /// out uses it in every element. An input without a fill default (none, or a default
    /// array), or `i` out of range, is [`Code::InvalidArgument`](crate::Code).
    pub fn input_default_fill(&self, i: usize) -> Result<f64> {
        let mut v = 0.0f64;
        // SAFETY: valid program and out-param.
        check(unsafe { sys::shp_program_input_default_fill(self.as_raw(), i, &mut v) })?;
        Ok(v)
    }

    /// Forward mode (`shp_program_jvp`): the original inputs, then `x.tangent` for each input
    /// `x` in `wrt` (role [`InputRole::Tangent`](crate::InputRole)); the original outputs,
    /// then `y.tangent` for every floating-point output `y`. A name that is no input is
    /// [`Code::NotFound`](crate::Code) listing the inputs.
    pub fn jvp(&self, wrt: &[&str]) -> Result<Program> {
        let w = CStrings::new(wrt.iter().copied(), "input name")?;
        derived(|out| unsafe {
            // SAFETY: `w` holds `wrt.len()` valid strings; nothing is retained.
            sys::shp_program_jvp(self.as_raw(), w.as_ptr(), wrt.len(), out)
        })
    }

    /// [`Program::jvp`] whose tangents have defaults
    /// (`shp_program_jvp_with_default_tangents`): `x.tangent` of `wrt[k]` defaults to
    /// `default_fill[k]` in every element of x's shape at each run, so a run may leave it out
    /// (by name). `default_fill` has one value per name of `wrt` (else
    /// [`Code::InvalidArgument`](crate::Code)), each finite in its input's dtype.
    pub fn jvp_with_default_tangents(&self, wrt: &[&str], default_fill: &[f64]) -> Result<Program> {
        if default_fill.len() != wrt.len() {
            return Err(Error::new(
                Code::InvalidArgument,
                format!(
                    "jvp: {} default tangent values for {} inputs in wrt (give one per input)",
                    default_fill.len(),
                    wrt.len()
                ),
            ));
        }
        let w = CStrings::new(wrt.iter().copied(), "input name")?;
        derived(|out| unsafe {
            // SAFETY: `w` holds `wrt.len()` valid strings and `default_fill` as many values;
            // nothing is retained.
            sys::shp_program_jvp_with_default_tangents(
                self.as_raw(),
                w.as_ptr(),
                wrt.len(),
                default_fill.as_ptr(),
                out,
            )
        })
    }

    /// Reverse mode (`shp_program_vjp`): the original inputs, then `y.cotangent` for each
    /// output `y` in `of`; the original outputs, then `x.grad` for each input `x` in `wrt`.
    pub fn vjp(&self, of: &[&str], wrt: &[&str]) -> Result<Program> {
        let o = CStrings::new(of.iter().copied(), "output name")?;
        let w = CStrings::new(wrt.iter().copied(), "input name")?;
        derived(|out| unsafe {
            // SAFETY: `o` and `w` hold `of.len()` and `wrt.len()` valid strings.
            sys::shp_program_vjp(
                self.as_raw(),
                o.as_ptr(),
                of.len(),
                w.as_ptr(),
                wrt.len(),
                out,
            )
        })
    }

    /// The gradient of the scalar floating-point output `of` (`shp_program_grad`): the
    /// original inputs, then `of.cotangent` with the default 1 (a run that names it scales the
    /// gradient); outputs `of`, then `x.grad` for each input `x` in `wrt`.
    ///
    /// ```
    /// use shapepoly::{ArrayView, DType, OutputRole, ReduceOp, Runtime, Scope};
    ///
    /// # fn main() -> Result<(), shapepoly::Error> {
    /// // loss = sum(x * w) with the parameter w, whose default is stored in the program.
    /// let scope = Scope::new(&[])?;
    /// let x = scope.input("x", DType::F32, "batch, 3")?;
    /// let w = scope.parameter::<f32>("w", &[3], &[1.0, 2.0, 3.0])?;
    /// let loss = x.mul(w)?.reduce(ReduceOp::Sum, &[], false)?;
    /// let program = scope.program(&[x, w], &[("loss", loss)])?;
    ///
    /// let grad = program.grad("loss", &["x", "w"])?;
    /// assert_eq!(grad.output_name(2).as_deref(), Some("w.grad"));
    /// assert_eq!(grad.output_role(2), Some(OutputRole::Grad));
    /// let mut rt = Runtime::new(&grad)?;
    /// let xv = [4.0f32, 5.0, 6.0, -1.0, 0.0, 1.0];
    /// // w and loss.cotangent are left out: their defaults are used.
    /// let out = rt.run(&[("x", &ArrayView::new(&[2, 3], &xv)?)])?;
    /// assert_eq!(out["loss"].as_slice::<f32>()?, &[34.0]);
    /// assert_eq!(out["w.grad"].as_slice::<f32>()?, &[3.0, 5.0, 7.0]);
    /// # Ok(())
    /// # }
    /// ```
    pub fn grad(&self, of: &str, wrt: &[&str]) -> Result<Program> {
        let o = cstring(of, "output name")?;
        let w = CStrings::new(wrt.iter().copied(), "input name")?;
        derived(|out| unsafe {
            // SAFETY: valid strings; nothing is retained.
            sys::shp_program_grad(self.as_raw(), o.as_ptr(), w.as_ptr(), wrt.len(), out)
        })
    }
}

/// Batching (vmap): a program for one example becomes the program for a batch of them.
impl Program {
    /// Batches this program (`shp_program_vmap`): the program for one example becomes the
    /// program for a batch of them, the batch size a new dimension variable ranging over
    /// `[0, inf)` (a batch of 0 runs). The result keeps the inputs' names, roles and defaults,
    /// the outputs' names and roles, the constraints, assertions, guards and variants; it runs,
    /// serializes, differentiates and batches again like any program (each vmap adds one axis).
    ///
    /// - `in_axes`: one entry per input, in the program's order: the axis of that input's
    ///   batched shape (0 to the input's rank) that is the batch, or -1 for an input that is not
    ///   batched (the same value for every element, such as weights). At least one input must be
    ///   batched; dimension inputs and parameters (a default of a fixed shape) cannot be.
    /// - `out_axes`: `None` (or an empty slice, as in C) puts every output's batch axis first;
    ///   else one entry per output: where its batch axis goes (0 to its rank), or -1 for an
    ///   output that does not depend on a batched input (it keeps its shape).
    /// - `batch_dim_name`: the new variable's name, not one the program has; `None` gives
    ///   `vmap0` (or `vmap1`, ... when taken, so a vmap of a vmap needs no name).
    ///
    /// A wrong count, an axis out of range or not allowed (naming the input or output), no
    /// batched input, or a taken or invalid name is [`Code::InvalidArgument`](crate::Code); an
    /// op that cannot be batched (nonzero, boolean_mask, size_from_value on a batched operand,
    /// conv with batched weights) is [`Code::Unsupported`](crate::Code) naming it. This program
    /// is unchanged either way.
    ///
    /// Per-example gradients are the vmap of a grad:
    ///
    /// ```
    /// use shapepoly::{ArrayView, DType, ReduceOp, Runtime, Scope};
    ///
    /// # fn main() -> Result<(), shapepoly::Error> {
    /// // loss = sum(x * w) for one example x of 3 values; w a parameter.
    /// let scope = Scope::new(&[])?;
    /// let x = scope.input("x", DType::F32, "3")?;
    /// let w = scope.parameter::<f32>("w", &[3], &[1.0, 2.0, 3.0])?;
    /// let loss = x.mul(w)?.reduce(ReduceOp::Sum, &[], false)?;
    /// let program = scope.program(&[x, w], &[("loss", loss)])?;
    ///
    /// // Inputs x, w, loss.cotangent: x batched on axis 0, the others shared.
    /// let per_example = program.grad("loss", &["w"])?.vmap(&[0, -1, -1], None, None)?;
    /// assert_eq!(per_example.input_shape(0)?, "(vmap0, 3)");
    /// let mut rt = Runtime::new(&per_example)?;
    /// let xv = [4.0f32, 5.0, 6.0, -1.0, 0.0, 1.0];
    /// let out = rt.run(&[("x", &ArrayView::new(&[2, 3], &xv)?)])?;
    /// assert_eq!(out["loss"].as_slice::<f32>()?, &[32.0, 2.0]);
    /// assert_eq!(out["w.grad"].shape(), &[2, 3]); // one gradient per example: its x
    /// assert_eq!(out["w.grad"].as_slice::<f32>()?, &xv);
    /// # Ok(())
    /// # }
    /// ```
    pub fn vmap(
        &self,
        in_axes: &[i64],
        out_axes: Option<&[i64]>,
        batch_dim_name: Option<&str>,
    ) -> Result<Program> {
        let name = batch_dim_name
            .map(|n| cstring(n, "batch dimension name"))
            .transpose()?;
        let out_axes = out_axes.unwrap_or(&[]);
        derived(|out| unsafe {
            // SAFETY: `in_axes` and `out_axes` are valid for their lengths (C reads neither
            // pointer when its count is 0) and `name` is NULL or a valid string; nothing is
            // retained.
            sys::shp_program_vmap(
                self.as_raw(),
                in_axes.as_ptr(),
                in_axes.len(),
                out_axes.as_ptr(),
                out_axes.len(),
                name.as_ref().map_or(ptr::null(), |n| n.as_ptr()),
                out,
            )
        })
    }

    /// [`Program::vmap`] with the batched inputs given by name: `(input name, axis)` pairs;
    /// every input not named is not batched (-1), and every output's batch axis goes first.
    /// A name that is no input is [`Code::NotFound`](crate::Code) listing the inputs; a name
    /// given twice is [`Code::InvalidArgument`](crate::Code).
    ///
    /// `program.vmap_by_name(&[("x", 0), ("labels", 0)], None)` batches x and labels on their
    /// first axis and shares every other input (the weights).
    pub fn vmap_by_name(
        &self,
        in_axes: &[(&str, i64)],
        batch_dim_name: Option<&str>,
    ) -> Result<Program> {
        let names: Vec<String> = (0..self.input_count())
            .map(|i| self.input_name(i).unwrap_or_default())
            .collect();
        let mut axes = vec![-1i64; names.len()];
        let mut given = vec![false; names.len()];
        for &(name, axis) in in_axes {
            let Some(i) = names.iter().position(|n| n == name) else {
                let all: Vec<String> = names.iter().map(|n| format!("'{}'", n)).collect();
                return Err(Error::new(
                    Code::NotFound,
                    format!(
                        "vmap: the program has no input named '{}' (its inputs: {})",
                        name,
                        if all.is_empty() {
                            "none".to_string()
                        } else {
                            all.join(", ")
                        }
                    ),
                ));
            };
            if given[i] {
                return Err(Error::new(
                    Code::InvalidArgument,
                    format!("vmap: input '{}' is given twice in in_axes", name),
                ));
            }
            given[i] = true;
            axes[i] = axis;
        }
        self.vmap(&axes, None, batch_dim_name)
    }
}

fn derived(
    f: impl FnOnce(*mut *mut sys::shp_program_t) -> *mut sys::shp_error_t,
) -> Result<Program> {
    let mut raw = ptr::null_mut();
    check(f(&mut raw))?;
    Ok(Program::from_raw(raw))
}

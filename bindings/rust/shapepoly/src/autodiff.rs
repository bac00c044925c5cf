//! Parameters and automatic differentiation: jvp, vjp and grad are program transformations
//! (`shp_program_jvp`, `shp_program_vjp`, `shp_program_grad`) that work on traced and loaded
//! programs alike and compose to any order; the results run, serialize and load like any
//! program.
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

fn derived(
    f: impl FnOnce(*mut *mut sys::shp_program_t) -> *mut sys::shp_error_t,
) -> Result<Program> {
    let mut raw = ptr::null_mut();
    check(f(&mut raw))?;
    Ok(Program::from_raw(raw))
}

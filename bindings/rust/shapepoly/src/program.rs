//! Programs: immutable, serializable, introspectable.
use std::fmt;
use std::path::Path;
use std::ptr::{self, NonNull};

use crate::error::{check, Code, Error, Result};
use crate::scope::Bindings;
use crate::sys;
use crate::tensor::DType;
use crate::util::{opt_string, read_string, read_vec, CStrings};

/// Options of [`Program::load_with_options`] (applied through `shp_load_options_*`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LoadOptions {
    max_bytes: Option<usize>,
}

impl LoadOptions {
    /// The defaults: the constants may hold 1 GiB in total once inflated.
    pub fn new() -> LoadOptions {
        LoadOptions::default()
    }

    /// The most bytes the constants may hold once inflated, in total; checked against the
    /// sizes a file declares before anything is inflated (`shp_load_options_set_max_bytes`).
    pub fn max_bytes(mut self, n: usize) -> LoadOptions {
        self.max_bytes = Some(n);
        self
    }
}

/// An immutable program: named inputs and outputs with symbolic shapes, the operations between
/// them, constraints and assertions (`shp_program_t`). Independent of the scope it was traced
/// in. `Send + Sync`: the C API allows concurrent use of a `const shp_program_t*`, and every
/// method takes `&self`.
pub struct Program {
    raw: NonNull<sys::shp_program_t>,
}

// SAFETY: a program is immutable; the header allows any thread to use it, concurrently.
unsafe impl Send for Program {}
// SAFETY: every method passes `const shp_program_t*`, which may be used concurrently.
unsafe impl Sync for Program {}

/// The role of a program input (`shp_input_role_t`).
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum InputRole {
    /// A tensor whose shape determines dimension variables.
    Data,
    /// A scalar `I64` giving one dimension variable ([`Scope::dim_input`](crate::Scope::dim_input)).
    Dim,
    /// A tensor of constant shape with a default value, replaced only by name
    /// ([`Scope::parameter`](crate::Scope::parameter)).
    Parameter,
    /// `x.tangent`, the tangent of input `x`, made by [`Program::jvp`].
    Tangent,
    /// `y.cotangent`, the cotangent of output `y`, made by [`Program::vjp`] and
    /// [`Program::grad`] (which gives it the default 1).
    Cotangent,
    /// A role this binding does not know.
    Unknown(i32),
}

impl InputRole {
    pub(crate) fn from_raw(r: sys::shp_input_role_t) -> InputRole {
        match r {
            sys::SHP_INPUT_DATA => InputRole::Data,
            sys::SHP_INPUT_DIM => InputRole::Dim,
            sys::SHP_INPUT_PARAMETER => InputRole::Parameter,
            sys::SHP_INPUT_TANGENT => InputRole::Tangent,
            sys::SHP_INPUT_COTANGENT => InputRole::Cotangent,
            other => InputRole::Unknown(other),
        }
    }
}

/// The role of a program output (`shp_output_role_t`).
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum OutputRole {
    /// Computed by the program as traced.
    Primal,
    /// `y.tangent`, made by [`Program::jvp`].
    Tangent,
    /// `x.grad`, made by [`Program::vjp`] and [`Program::grad`].
    Grad,
    /// A role this binding does not know.
    Unknown(i32),
}

impl OutputRole {
    pub(crate) fn from_raw(r: sys::shp_output_role_t) -> OutputRole {
        match r {
            sys::SHP_OUTPUT_PRIMAL => OutputRole::Primal,
            sys::SHP_OUTPUT_TANGENT => OutputRole::Tangent,
            sys::SHP_OUTPUT_GRAD => OutputRole::Grad,
            other => OutputRole::Unknown(other),
        }
    }
}

/// An input of a program.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InputInfo {
    /// The input's name.
    pub name: String,
    /// Its element type.
    pub dtype: DType,
    /// Data, dimension, parameter, tangent or cotangent input.
    pub role: InputRole,
    /// Its symbolic shape, e.g. `"(batch, 784)"`.
    pub shape: String,
    /// Whether a run may leave it out (a parameter, or grad's cotangent); see
    /// [`Program::input_default`].
    pub has_default: bool,
}

/// An output of a program.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutputInfo {
    /// The output's name.
    pub name: String,
    /// Its element type.
    pub dtype: DType,
    /// Primal, tangent or gradient.
    pub role: OutputRole,
    /// Its symbolic shape, e.g. `"(batch, 10)"`.
    pub shape: String,
}

/// An assertion a program checks before running.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Assertion {
    /// The asserted fact, e.g. `"mod(n, 4) == 0"`.
    pub text: String,
    /// The message shown when it fails.
    pub message: String,
}

/// What [`Program::cost`] and [`Runtime::cost`](crate::Runtime::cost) measure
/// (`shp_cost_kind_t`). Non-exhaustive: a newer binding may add kinds.
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CostKind {
    /// Floating-point operations, a multiply-add counted as 2: the sum of each operation's rule
    /// (docs/ops.md, column FLOPs; e.g. matmul 2 * result elements * contracted size, an
    /// elementwise op 1 per result element, data movement 0).
    Flops,
    /// Per operation as traced (before fusion; constants excluded): the bytes of its operands
    /// read plus the bytes of its result written.
    BytesAccessed,
    /// The outputs' bytes plus the runtime's arena for intermediates under its own planning
    /// rules; the runtime never plans a larger arena for any shape.
    PeakBytes,
    /// The inputs with the parameter role plus the constants (the weights).
    ParameterBytes,
}

impl CostKind {
    /// Every kind, in the C enum's order.
    pub const ALL: &'static [CostKind] = &[
        CostKind::Flops,
        CostKind::BytesAccessed,
        CostKind::PeakBytes,
        CostKind::ParameterBytes,
    ];

    /// The raw `shp_cost_kind_t`.
    pub fn raw(self) -> sys::shp_cost_kind_t {
        match self {
            CostKind::Flops => sys::SHP_COST_FLOPS,
            CostKind::BytesAccessed => sys::SHP_COST_BYTES_ACCESSED,
            CostKind::PeakBytes => sys::SHP_COST_PEAK_BYTES,
            CostKind::ParameterBytes => sys::SHP_COST_PARAMETER_BYTES,
        }
    }
}

/// Names and shapes of inputs for the C calls taking `names, shapes, ranks`: a dimension
/// input is given as a one-element slice holding its value and passed with rank 0.
pub(crate) struct ShapeArgs {
    pub(crate) names: CStrings,
    pub(crate) shapes: Vec<*const i64>,
    pub(crate) ranks: Vec<usize>,
}

impl ShapeArgs {
    pub(crate) fn new(
        inputs: &[(&str, &[i64])],
        is_dim: impl Fn(&str) -> bool,
    ) -> Result<ShapeArgs> {
        let names = CStrings::new(inputs.iter().map(|i| i.0), "input name")?;
        let mut ranks = Vec::with_capacity(inputs.len());
        for (name, shape) in inputs {
            if is_dim(name) {
                if shape.len() != 1 {
                    return Err(Error::new(
                        Code::InvalidArgument,
                        format!(
                            "input '{}' is a dimension input: give its value as a one-element slice",
                            name
                        ),
                    ));
                }
                ranks.push(0);
            } else {
                ranks.push(shape.len());
            }
        }
        Ok(ShapeArgs {
            names,
            shapes: inputs.iter().map(|i| i.1.as_ptr()).collect(),
            ranks,
        })
    }
}

impl Program {
    pub(crate) fn from_raw(raw: *mut sys::shp_program_t) -> Program {
        Program {
            raw: NonNull::new(raw).expect("libshapepoly returned a NULL program"),
        }
    }

    /// The raw handle (still owned by this program).
    pub fn as_raw(&self) -> *const sys::shp_program_t {
        self.raw.as_ptr()
    }

    /// Loads a serialized program; verifies it fully (`shp_program_load`). The bytes are copied.
    pub fn load(bytes: &[u8]) -> Result<Program> {
        crate::ensure_abi()?;
        let mut raw = ptr::null_mut();
        // SAFETY: `bytes` is valid for its length during the call; copied.
        check(unsafe { sys::shp_program_load(bytes.as_ptr() as *const _, bytes.len(), &mut raw) })?;
        Ok(Program::from_raw(raw))
    }

    /// Loads a serialized program with `options` (`shp_load_options_create`, its setters,
    /// `shp_program_load_with_options`, `shp_load_options_destroy`). Constants above
    /// `max_bytes` are [`Code::InvalidProgram`], with a message naming the cap.
    pub fn load_with_options(bytes: &[u8], options: &LoadOptions) -> Result<Program> {
        crate::ensure_abi()?;
        let mut o = ptr::null_mut();
        // SAFETY: valid out-param.
        check(unsafe { sys::shp_load_options_create(&mut o) })?;
        struct Guard(*mut sys::shp_load_options_t);
        impl Drop for Guard {
            fn drop(&mut self) {
                // SAFETY: owned options.
                unsafe { sys::shp_load_options_destroy(self.0) }
            }
        }
        let guard = Guard(o);
        if let Some(n) = options.max_bytes {
            // SAFETY: valid options.
            check(unsafe { sys::shp_load_options_set_max_bytes(guard.0, n) })?;
        }
        let mut raw = ptr::null_mut();
        // SAFETY: `bytes` is valid for its length during the call (copied); options valid and
        // not retained.
        check(unsafe {
            sys::shp_program_load_with_options(
                bytes.as_ptr() as *const _,
                bytes.len(),
                guard.0,
                &mut raw,
            )
        })?;
        Ok(Program::from_raw(raw))
    }

    /// Loads a `.shpoly` file (`shp_program_load_file`). A missing file is
    /// [`Code::NotFound`], another I/O error [`Code::InvalidArgument`], both naming the path
    /// and the OS reason.
    pub fn load_file(path: impl AsRef<Path>) -> Result<Program> {
        let c = path_cstring(path.as_ref())?;
        let mut raw = ptr::null_mut();
        // SAFETY: `c` is a NUL-terminated path; `raw` receives an owned program on success.
        check(unsafe { sys::shp_program_load_file(c.as_ptr(), &mut raw) })?;
        Ok(Program::from_raw(raw))
    }

    /// Serializes to the portable, deterministic format (`shp_program_serialize`).
    pub fn serialize(&self) -> Result<Vec<u8>> {
        let mut buf = ptr::null_mut();
        // SAFETY: valid program.
        check(unsafe { sys::shp_program_serialize(self.as_raw(), &mut buf) })?;
        // SAFETY: `buf` is owned; its bytes are copied before it is destroyed.
        unsafe {
            let data = sys::shp_buffer_data(buf) as *const u8;
            let size = sys::shp_buffer_size(buf);
            let out = if size == 0 {
                Vec::new()
            } else {
                std::slice::from_raw_parts(data, size).to_vec()
            };
            sys::shp_buffer_destroy(buf);
            Ok(out)
        }
    }

    /// Serializes to a file (conventionally `.shpoly`; `shp_program_save_file`: written next to
    /// it and renamed, so a failed save leaves an existing file intact).
    pub fn save(&self, path: impl AsRef<Path>) -> Result<()> {
        let c = path_cstring(path.as_ref())?;
        // SAFETY: valid program and NUL-terminated path.
        check(unsafe { sys::shp_program_save_file(self.as_raw(), c.as_ptr()) })
    }

    /// Number of inputs (`shp_program_input_count`).
    pub fn input_count(&self) -> usize {
        // SAFETY: valid program.
        unsafe { sys::shp_program_input_count(self.as_raw()) }
    }

    /// Name of input `i` (`shp_program_input_name`).
    pub fn input_name(&self, i: usize) -> Option<String> {
        // SAFETY: valid program; the string is copied.
        unsafe { opt_string(sys::shp_program_input_name(self.as_raw(), i)) }
    }

    /// Dtype of input `i` (`shp_program_input_dtype`); None if out of range.
    pub fn input_dtype(&self, i: usize) -> Option<DType> {
        // SAFETY: valid program.
        let d = unsafe { sys::shp_program_input_dtype(self.as_raw(), i) };
        (i < self.input_count()).then(|| DType::from_raw(d))
    }

    /// Role of input `i` (`shp_program_input_role`); None if out of range.
    pub fn input_role(&self, i: usize) -> Option<InputRole> {
        // SAFETY: valid program.
        let r = unsafe { sys::shp_program_input_role(self.as_raw(), i) };
        (i < self.input_count()).then(|| InputRole::from_raw(r))
    }

    /// Symbolic shape of input `i`, e.g. `"(batch, 784)"` (`shp_program_input_shape_string`).
    pub fn input_shape(&self, i: usize) -> Result<String> {
        read_string(|buf, cap, len| {
            // SAFETY: `buf` has room for `cap` bytes.
            unsafe { sys::shp_program_input_shape_string(self.as_raw(), i, buf, cap, len) }
        })
    }

    /// Every input.
    pub fn inputs(&self) -> Result<Vec<InputInfo>> {
        (0..self.input_count())
            .map(|i| {
                Ok(InputInfo {
                    name: self.input_name(i).unwrap_or_default(),
                    dtype: self.input_dtype(i).unwrap_or(DType::Unknown(-1)),
                    role: self.input_role(i).unwrap_or(InputRole::Unknown(-1)),
                    shape: self.input_shape(i)?,
                    has_default: self.input_has_default(i),
                })
            })
            .collect()
    }

    /// Number of outputs (`shp_program_output_count`).
    pub fn output_count(&self) -> usize {
        // SAFETY: valid program.
        unsafe { sys::shp_program_output_count(self.as_raw()) }
    }

    /// Name of output `i` (`shp_program_output_name`).
    pub fn output_name(&self, i: usize) -> Option<String> {
        // SAFETY: valid program; the string is copied.
        unsafe { opt_string(sys::shp_program_output_name(self.as_raw(), i)) }
    }

    /// Dtype of output `i` (`shp_program_output_dtype`); None if out of range.
    pub fn output_dtype(&self, i: usize) -> Option<DType> {
        // SAFETY: valid program.
        let d = unsafe { sys::shp_program_output_dtype(self.as_raw(), i) };
        (i < self.output_count()).then(|| DType::from_raw(d))
    }

    /// Symbolic shape of output `i` (`shp_program_output_shape_string`).
    pub fn output_shape_string(&self, i: usize) -> Result<String> {
        read_string(|buf, cap, len| {
            // SAFETY: `buf` has room for `cap` bytes.
            unsafe { sys::shp_program_output_shape_string(self.as_raw(), i, buf, cap, len) }
        })
    }

    /// Every output.
    pub fn outputs(&self) -> Result<Vec<OutputInfo>> {
        (0..self.output_count())
            .map(|i| {
                Ok(OutputInfo {
                    name: self.output_name(i).unwrap_or_default(),
                    dtype: self.output_dtype(i).unwrap_or(DType::Unknown(-1)),
                    role: self.output_role(i).unwrap_or(OutputRole::Unknown(-1)),
                    shape: self.output_shape_string(i)?,
                })
            })
            .collect()
    }

    /// The dimension variables the program's shapes use (`shp_program_variable_*`).
    pub fn variables(&self) -> Vec<String> {
        // SAFETY: valid program; strings are copied.
        let n = unsafe { sys::shp_program_variable_count(self.as_raw()) };
        (0..n)
            .filter_map(|i| unsafe { opt_string(sys::shp_program_variable_name(self.as_raw(), i)) })
            .collect()
    }

    /// Sound inclusive bounds `(lo, hi)` of variable `i` ([`Program::variables`] order) under
    /// the declared ranges and constraints, of variant 0 for a multi-variant program
    /// (`shp_program_variable_bounds`); `i64::MIN` / `i64::MAX` mean unbounded, as for
    /// [`Dim::bounds`](crate::Dim::bounds). `i` out of range is [`Code::InvalidArgument`].
    pub fn variable_bounds(&self, i: usize) -> Result<(i64, i64)> {
        let (mut lo, mut hi) = (0i64, 0i64);
        // SAFETY: valid program and out-params.
        check(unsafe { sys::shp_program_variable_bounds(self.as_raw(), i, &mut lo, &mut hi) })?;
        Ok((lo, hi))
    }

    /// Whether variable `i` ([`Program::variables`] order) is unbacked: its value comes from
    /// the op that produces it at run time, never from input shapes
    /// (`shp_program_variable_is_unbacked`). False out of range.
    pub fn variable_is_unbacked(&self, i: usize) -> bool {
        // SAFETY: valid program.
        unsafe { sys::shp_program_variable_is_unbacked(self.as_raw(), i) }
    }

    /// The op that produces unbacked variable `i`, e.g. `"nonzero of a (n, 4) tensor"`
    /// (`shp_program_variable_origin`); `None` for other variables or out of range.
    pub fn variable_origin(&self, i: usize) -> Option<String> {
        // SAFETY: valid program; the string is copied.
        unsafe { opt_string(sys::shp_program_variable_origin(self.as_raw(), i)) }
    }

    /// The constraints as written (`shp_program_constraint_*`).
    pub fn constraints(&self) -> Vec<String> {
        // SAFETY: valid program; strings are copied.
        let n = unsafe { sys::shp_program_constraint_count(self.as_raw()) };
        (0..n)
            .filter_map(|i| unsafe {
                opt_string(sys::shp_program_constraint_text(self.as_raw(), i))
            })
            .collect()
    }

    /// The assertions, with their messages (`shp_program_assertion_*`).
    pub fn assertions(&self) -> Vec<Assertion> {
        // SAFETY: valid program; strings are copied.
        let n = unsafe { sys::shp_program_assertion_count(self.as_raw()) };
        (0..n)
            .map(|i| unsafe {
                Assertion {
                    text: opt_string(sys::shp_program_assertion_text(self.as_raw(), i))
                        .unwrap_or_default(),
                    message: opt_string(sys::shp_program_assertion_message(self.as_raw(), i))
                        .unwrap_or_default(),
                }
            })
            .collect()
    }

    /// A readable listing: signature, variables, constraints, assertions and one line per
    /// operation (`shp_program_to_text`).
    pub fn to_text(&self) -> Result<String> {
        read_string(|buf, cap, len| {
            // SAFETY: `buf` has room for `cap` bytes.
            unsafe { sys::shp_program_to_text(self.as_raw(), buf, cap, len) }
        })
    }

    /// The program as a Graphviz DOT graph: one node per operation with its attributes, edges
    /// labelled with dtypes and symbolic shapes (e.g. `f32[batch, 8]`), and a legend with the
    /// variables, constraints, assertions, guards and variants (`shp_program_to_dot`). Render
    /// it with `dot -Tsvg`.
    pub fn to_dot(&self) -> Result<String> {
        read_string(|buf, cap, len| {
            // SAFETY: `buf` has room for `cap` bytes.
            unsafe { sys::shp_program_to_dot(self.as_raw(), buf, cap, len) }
        })
    }

    /// What the program costs for every shape at once: a dim expression over its variables,
    /// e.g. `"92*batch"` FLOPs (`shp_program_cost`). A multi-variant program gives variant 0's
    /// formula. [`CostKind::PeakBytes`] of a program the runtime cannot plan is
    /// [`Code::Unsupported`].
    ///
    /// ```
    /// use shapepoly::{CostKind, DType, Runtime, Scope};
    /// # fn main() -> shapepoly::Result<()> {
    /// let scope = Scope::new(&["batch <= 1000"])?;
    /// let x = scope.input("x", DType::F32, "batch, 8")?;
    /// let w = scope.constant::<f32>(&[8, 4], &[0.5; 32])?;
    /// let program = scope.program(&[x], &[("y", x.matmul(w)?)])?;
    /// assert_eq!(program.cost(CostKind::Flops)?, "64*batch");
    /// assert_eq!(program.cost_bounds(CostKind::Flops)?, (64, Some(64000)));
    /// let mut runtime = Runtime::new(&program)?;
    /// assert_eq!(runtime.cost(CostKind::Flops, &[("x", &[10, 8])])?, 640);
    /// # Ok(())
    /// # }
    /// ```
    pub fn cost(&self, kind: CostKind) -> Result<String> {
        read_string(|buf, cap, len| {
            // SAFETY: `buf` has room for `cap` bytes.
            unsafe { sys::shp_program_cost(self.as_raw(), kind.raw(), buf, cap, len) }
        })
    }

    /// Sound bounds `(lo, hi)` of [`Program::cost`] under the declared ranges and constraints:
    /// every shape the program accepts costs within them. `hi` is the guaranteed worst case,
    /// or `None` when it is unbounded; [`Program::cost_unbounded_reason`] then says why
    /// (`shp_program_cost_bounds`, whose `INT64_MAX` becomes `None`).
    pub fn cost_bounds(&self, kind: CostKind) -> Result<(i64, Option<i64>)> {
        let (mut lo, mut hi) = (0i64, 0i64);
        // SAFETY: valid program and out-params.
        check(unsafe {
            sys::shp_program_cost_bounds(self.as_raw(), kind.raw(), &mut lo, &mut hi)
        })?;
        Ok((lo, (hi != i64::MAX).then_some(hi)))
    }

    /// Why the worst case of `kind` is unbounded, naming the variables, e.g. `"no upper bound
    /// on batch; declare a range (...) or add a constraint such as batch <= 4096 when
    /// tracing"`; `""` when [`Program::cost_bounds`] gives a finite `hi`
    /// (`shp_program_cost_unbounded_reason`).
    pub fn cost_unbounded_reason(&self, kind: CostKind) -> Result<String> {
        read_string(|buf, cap, len| {
            // SAFETY: `buf` has room for `cap` bytes.
            unsafe {
                sys::shp_program_cost_unbounded_reason(self.as_raw(), kind.raw(), buf, cap, len)
            }
        })
    }

    /// Index of the input named `name`.
    pub fn input_index(&self, name: &str) -> Option<usize> {
        (0..self.input_count()).find(|&i| self.input_name(i).as_deref() == Some(name))
    }

    /// Checks concrete input shapes without running (`shp_program_check_shapes`): `inputs`
    /// are `(name, shape)`; a dimension input is given as `(name, &[value])`. Returns the
    /// variables' values.
    pub fn check_shapes(&self, inputs: &[(&str, &[i64])]) -> Result<Bindings> {
        let args = ShapeArgs::new(inputs, |n| {
            self.input_index(n).and_then(|i| self.input_role(i)) == Some(InputRole::Dim)
        })?;
        let mut out = ptr::null_mut();
        // SAFETY: every array has `inputs.len()` entries; shape k has ranks[k] values (or one
        // value for a dimension input).
        check(unsafe {
            sys::shp_program_check_shapes(
                self.as_raw(),
                args.names.as_ptr(),
                args.shapes.as_ptr(),
                args.ranks.as_ptr(),
                inputs.len(),
                &mut out,
            )
        })?;
        Ok(Bindings::from_raw(out))
    }

    /// The concrete shape of output `i` for `bindings` from [`Program::check_shapes`]
    /// (`shp_program_output_shape`).
    pub fn output_shape(&self, i: usize, bindings: &Bindings) -> Result<Vec<i64>> {
        read_vec(0i64, |out, cap, rank| {
            // SAFETY: `out` has room for `cap` dims.
            unsafe {
                sys::shp_program_output_shape(self.as_raw(), i, bindings.as_raw(), out, cap, rank)
            }
        })
    }
}

impl Drop for Program {
    fn drop(&mut self) {
        // SAFETY: owned; runtimes keep their own reference.
        unsafe { sys::shp_program_destroy(self.raw.as_ptr()) }
    }
}

impl fmt::Debug for Program {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Program")
            .field("inputs", &self.inputs().unwrap_or_default())
            .field("outputs", &self.outputs().unwrap_or_default())
            .finish()
    }
}

/// A path as the C API takes it (bytes of the OS string, NUL-terminated).
fn path_cstring(path: &Path) -> Result<std::ffi::CString> {
    use std::os::unix::ffi::OsStrExt;
    std::ffi::CString::new(path.as_os_str().as_bytes()).map_err(|_| {
        Error::new(
            Code::InvalidArgument,
            format!("the path {} contains a NUL byte", path.display()),
        )
    })
}

/// Metadata: string key/value pairs saved with the program (`shp_program_metadata_*`), e.g. an
/// imported ONNX model's names (`onnx.names`). Transformations keep it.
impl Program {
    /// Every entry, in increasing byte order of the keys.
    pub fn metadata(&self) -> Vec<(String, String)> {
        // SAFETY: valid program; the strings are copied while it is alive.
        let n = unsafe { sys::shp_program_metadata_count(self.as_raw()) };
        (0..n)
            .filter_map(|i| unsafe {
                let k = sys::shp_program_metadata_key(self.as_raw(), i);
                let v = sys::shp_program_metadata_value(self.as_raw(), k);
                Some((opt_string(k)?, opt_string(v)?))
            })
            .collect()
    }

    /// The value of `key`, or `None` (also for a key with a NUL byte, which no entry has).
    pub fn metadata_value(&self, key: &str) -> Option<String> {
        let k = std::ffi::CString::new(key).ok()?;
        // SAFETY: valid program and key; the value is copied.
        unsafe { opt_string(sys::shp_program_metadata_value(self.as_raw(), k.as_ptr())) }
    }

    /// A copy of this program with `key` set to `value`, or removed for `None`
    /// (`shp_program_with_metadata`; this program is unchanged). A key must be non-empty
    /// printable UTF-8 of at most 256 bytes, a value at most 1 MiB, at most 1024 entries:
    /// otherwise [`Code::InvalidArgument`] naming the key and the limit.
    pub fn with_metadata(&self, key: &str, value: Option<&str>) -> Result<Program> {
        let k = crate::util::cstring(key, "metadata key")?;
        let v = value
            .map(|v| crate::util::cstring(v, "metadata value"))
            .transpose()?;
        let mut raw = ptr::null_mut();
        // SAFETY: valid program and strings (copied); `raw` receives an owned program.
        check(unsafe {
            sys::shp_program_with_metadata(
                self.as_raw(),
                k.as_ptr(),
                v.as_ref().map_or(ptr::null(), |v| v.as_ptr()),
                &mut raw,
            )
        })?;
        Ok(Program::from_raw(raw))
    }
}

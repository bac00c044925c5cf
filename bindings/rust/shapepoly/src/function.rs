//! Compiled functions: a Rust closure traced again whenever a call's shapes fit no variant
//! traced so far, like `torch.compile` with automatic dynamic shapes (`shp_function_t`).
use std::any::Any;
use std::ffi::CString;
use std::fmt;
use std::mem::ManuallyDrop;
use std::os::raw::c_void;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::ptr::{self, NonNull};

use crate::array::ArrayRef;
use crate::error::{check, Code, Error, Result};
use crate::program::Program;
use crate::runtime::Outputs;
use crate::scope::Scope;
use crate::sys;
use crate::tensor::{DType, Tensor};
use crate::util::{cstring, opt_string, CStrings};

/// Which axes are symbolic in a new trace (`shp_dynamic_mode_t`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum DynamicMode {
    /// The first trace is static; an axis whose size changes becomes symbolic in the next
    /// trace (the default).
    #[default]
    Auto,
    /// Every axis is symbolic from the first trace.
    All,
    /// Every new shape is traced statically.
    None,
}

impl DynamicMode {
    fn raw(self) -> sys::shp_dynamic_mode_t {
        match self {
            DynamicMode::Auto => sys::SHP_DYNAMIC_AUTO,
            DynamicMode::All => sys::SHP_DYNAMIC_ALL,
            DynamicMode::None => sys::SHP_DYNAMIC_NONE,
        }
    }
}

/// What a call does when no variant covers its shapes, or whether it traces every time
/// (`shp_stance_t`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Stance {
    /// Trace again up to the recompile limit, then fail with
    /// [`Code::GuardFailed`] giving the reasons (the default).
    #[default]
    Default,
    /// Never trace again once a variant exists: fail with [`Code::GuardFailed`] naming the
    /// failed guards.
    FailOnRecompile,
    /// At the limit, trace one fully dynamic variant instead of failing.
    DynamicOnLimit,
    /// Trace every call and run that trace once (no cache): the variants are neither used nor
    /// changed (to debug a trace function, as PyTorch's `force_eager`); each such call logs an
    /// event naming FORCE_TRACE.
    ForceTrace,
}

impl Stance {
    fn raw(self) -> sys::shp_stance_t {
        match self {
            Stance::Default => sys::SHP_STANCE_DEFAULT,
            Stance::FailOnRecompile => sys::SHP_STANCE_FAIL_ON_RECOMPILE,
            Stance::DynamicOnLimit => sys::SHP_STANCE_DYNAMIC_ON_LIMIT,
            Stance::ForceTrace => sys::SHP_STANCE_FORCE_TRACE,
        }
    }
}

/// Options of [`Function::with_options`] (applied through `shp_function_options_*`); unset
/// fields keep the library's defaults.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FunctionOptions {
    dynamic: Option<DynamicMode>,
    duck_sizing: Option<bool>,
    recompile_limit: Option<i32>,
    stance: Option<Stance>,
    num_threads: Option<i32>,
}

impl FunctionOptions {
    /// The defaults: [`DynamicMode::Auto`], duck sizing on, recompile limit 8,
    /// [`Stance::Default`], every hardware thread.
    pub fn new() -> FunctionOptions {
        FunctionOptions::default()
    }

    /// Which axes are symbolic in a new trace (`shp_function_options_set_dynamic`).
    pub fn dynamic(mut self, mode: DynamicMode) -> FunctionOptions {
        self.dynamic = Some(mode);
        self
    }

    /// Duck sizing: dynamic axes of equal sizes share a variable, under a guard
    /// (`shp_function_options_set_duck_sizing`).
    pub fn duck_sizing(mut self, on: bool) -> FunctionOptions {
        self.duck_sizing = Some(on);
        self
    }

    /// The most variants the function traces, in `[1, 64]`
    /// (`shp_function_options_set_recompile_limit`).
    pub fn recompile_limit(mut self, limit: i32) -> FunctionOptions {
        self.recompile_limit = Some(limit);
        self
    }

    /// The initial stance (`shp_function_options_set_stance`).
    pub fn stance(mut self, stance: Stance) -> FunctionOptions {
        self.stance = Some(stance);
        self
    }

    /// Threads per kernel call of the function's runtime
    /// (`shp_function_options_set_num_threads`).
    pub fn num_threads(mut self, n: i32) -> FunctionOptions {
        self.num_threads = Some(n);
        self
    }
}

/// Owned C options, released on every path.
struct RawOptions(*mut sys::shp_function_options_t);

impl Drop for RawOptions {
    fn drop(&mut self) {
        // SAFETY: owned options (NULL is a no-op).
        unsafe { sys::shp_function_options_destroy(self.0) }
    }
}

impl FunctionOptions {
    fn to_raw(&self) -> Result<RawOptions> {
        let mut o = ptr::null_mut();
        // SAFETY: out-param.
        check(unsafe { sys::shp_function_options_create(&mut o) })?;
        let o = RawOptions(o);
        // SAFETY (every call below): valid options.
        if let Some(m) = self.dynamic {
            check(unsafe { sys::shp_function_options_set_dynamic(o.0, m.raw()) })?;
        }
        if let Some(on) = self.duck_sizing {
            check(unsafe { sys::shp_function_options_set_duck_sizing(o.0, on) })?;
        }
        if let Some(n) = self.recompile_limit {
            check(unsafe { sys::shp_function_options_set_recompile_limit(o.0, n) })?;
        }
        if let Some(s) = self.stance {
            check(unsafe { sys::shp_function_options_set_stance(o.0, s.raw()) })?;
        }
        if let Some(n) = self.num_threads {
            check(unsafe { sys::shp_function_options_set_num_threads(o.0, n) })?;
        }
        Ok(o)
    }
}

/// The trace closure as the library sees it (through `user_data`).
type TraceClosure = dyn for<'s> Fn(&'s Scope, &[Tensor<'s>]) -> Result<Vec<Tensor<'s>>>;

/// A compiled function (`shp_function_t`): a trace closure and the variants it traced.
///
/// The closure receives a scope owned by the library and one traced tensor per input (every
/// axis a variable `s0, s1, ...` with the call's size as its hint, guard policy
/// [`GuardPolicy::FromHints`](crate::GuardPolicy)), and returns one tensor per output. It is
/// called again only when a call's shapes fit no variant. An `Err` it returns reaches the
/// caller of [`Function::call`] with its code; a panic inside it is caught and becomes a
/// [`Code::Internal`] error (it never unwinds through the C library).
///
/// Used by one thread at a time (neither `Send` nor `Sync`).
///
/// ```
/// use shapepoly::{ArrayView, DType, Function};
///
/// # fn main() -> Result<(), shapepoly::Error> {
/// let mut f = Function::new(&[("x", DType::F32, 1)], &["y"], |_scope, x| {
///     Ok(vec![x[0].exp()?])
/// })?;
/// for n in [4, 8, 100] {
///     let data = vec![0.0f32; n];
///     let out = f.call(&[("x", &ArrayView::new(&[n as i64], &data)?)])?;
///     assert_eq!(out["y"].as_slice::<f32>()?, &data.iter().map(|_| 1.0).collect::<Vec<_>>()[..]);
/// }
/// assert_eq!(f.trace_count(), 2); // static at 4, then a symbolic size from 8 on
/// # Ok(())
/// # }
/// ```
pub struct Function {
    raw: NonNull<sys::shp_function_t>,
    output_names: Vec<String>,
    // Boxed twice so `user_data` is a thin pointer that stays put when the Function moves.
    // Dropped after `raw` is destroyed (Drop runs before the fields are dropped).
    _trace: Box<Box<TraceClosure>>,
}

/// Copies a binding error into a new C error for the library.
fn c_error(code: i32, message: &str) -> *mut sys::shp_error_t {
    let m = CString::new(message.replace('\0', " ")).unwrap_or_default();
    // SAFETY: a valid string, copied by the library.
    unsafe { sys::shp_error_create(code, m.as_ptr()) }
}

fn panic_text(payload: &(dyn Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "a non-string panic payload".to_string()
    }
}

/// The `shp_trace_fn` of every Rust function: runs the closure behind `user_data` and turns
/// its error or panic into a C error.
unsafe extern "C" fn trampoline(
    scope: *mut sys::shp_scope_t,
    inputs: *const *const sys::shp_tensor_t,
    num_inputs: usize,
    outputs: *mut *const sys::shp_tensor_t,
    num_outputs: usize,
    user_data: *mut c_void,
) -> *mut sys::shp_error_t {
    let run = || -> Result<()> {
        // SAFETY: `user_data` is the Box<TraceClosure> owned by the Function being called.
        let trace = unsafe { &*(user_data as *const Box<TraceClosure>) };
        // The scope belongs to the library: borrowed for the call, never destroyed here.
        let scope = ManuallyDrop::new(Scope::from_raw(scope));
        let handle = NonNull::new(scope.as_raw()).expect("NULL scope");
        let ins: Vec<Tensor<'_>> = (0..num_inputs)
            // SAFETY: the library passes `num_inputs` tensors of `scope`.
            .map(|i| Tensor::new(unsafe { *inputs.add(i) }, handle))
            .collect();
        let outs = trace(&scope, &ins)?;
        if outs.len() != num_outputs {
            return Err(Error::new(
                Code::InvalidArgument,
                format!(
                    "the trace closure returned {} tensors for {} outputs",
                    outs.len(),
                    num_outputs
                ),
            ));
        }
        for (i, t) in outs.iter().enumerate() {
            // SAFETY: the library gives room for `num_outputs` tensors.
            unsafe { *outputs.add(i) = t.raw() };
        }
        Ok(())
    };
    match catch_unwind(AssertUnwindSafe(run)) {
        Ok(Ok(())) => ptr::null_mut(),
        Ok(Err(e)) => c_error(e.code().raw(), e.message()),
        Err(payload) => c_error(
            sys::SHP_INTERNAL,
            &format!("the trace closure panicked: {}", panic_text(&*payload)),
        ),
    }
}

impl Function {
    /// A compiled function with the default options: inputs `(name, dtype, rank)`, outputs by
    /// name, and the trace closure (`shp_function_create`). Nothing is traced before the
    /// first call.
    pub fn new<F>(inputs: &[(&str, DType, usize)], outputs: &[&str], trace: F) -> Result<Function>
    where
        F: for<'s> Fn(&'s Scope, &[Tensor<'s>]) -> Result<Vec<Tensor<'s>>> + 'static,
    {
        Function::create(inputs, outputs, None, Box::new(trace))
    }

    /// A compiled function with `options` (`shp_function_options_*`, `shp_function_create`).
    pub fn with_options<F>(
        inputs: &[(&str, DType, usize)],
        outputs: &[&str],
        options: &FunctionOptions,
        trace: F,
    ) -> Result<Function>
    where
        F: for<'s> Fn(&'s Scope, &[Tensor<'s>]) -> Result<Vec<Tensor<'s>>> + 'static,
    {
        Function::create(inputs, outputs, Some(options), Box::new(trace))
    }

    fn create(
        inputs: &[(&str, DType, usize)],
        outputs: &[&str],
        options: Option<&FunctionOptions>,
        trace: Box<TraceClosure>,
    ) -> Result<Function> {
        crate::ensure_abi()?;
        let in_names = CStrings::new(inputs.iter().map(|i| i.0), "input name")?;
        let dtypes: Vec<sys::shp_dtype_t> = inputs.iter().map(|i| i.1.raw()).collect();
        let ranks: Vec<usize> = inputs.iter().map(|i| i.2).collect();
        let out_names = CStrings::new(outputs.iter().copied(), "output name")?;
        let opts = options.map(|o| o.to_raw()).transpose()?;
        let trace = Box::new(trace);
        let user_data = &*trace as *const Box<TraceClosure> as *mut c_void;
        let mut raw = ptr::null_mut();
        // SAFETY: every array has the length passed with it; names and options are copied;
        // `user_data` lives in the returned Function until after shp_function_destroy.
        check(unsafe {
            sys::shp_function_create(
                Some(trampoline),
                user_data,
                in_names.as_ptr(),
                dtypes.as_ptr(),
                ranks.as_ptr(),
                inputs.len(),
                out_names.as_ptr(),
                outputs.len(),
                opts.as_ref().map_or(ptr::null(), |o| o.0),
                &mut raw,
            )
        })?;
        Ok(Function {
            raw: NonNull::new(raw).expect("shp_function_create returned NULL"),
            output_names: outputs.iter().map(|s| s.to_string()).collect(),
            _trace: trace,
        })
    }

    /// The raw handle (still owned by this function).
    pub fn as_raw(&self) -> *mut sys::shp_function_t {
        self.raw.as_ptr()
    }

    /// The output names, in declared order.
    pub fn output_names(&self) -> &[String] {
        &self.output_names
    }

    /// Makes axis `axis` of input `input` symbolic in every later trace, with sizes in
    /// `[min, max]` (`i64::MAX`: unbounded) (`shp_function_mark_dynamic`).
    pub fn mark_dynamic(&mut self, input: &str, axis: i64, min: i64, max: i64) -> Result<()> {
        let n = cstring(input, "input name")?;
        // SAFETY: valid function and string; not retained.
        check(unsafe { sys::shp_function_mark_dynamic(self.as_raw(), n.as_ptr(), axis, min, max) })
    }

    /// Keeps axis `axis` of input `input` static in every later trace: a new size is a new
    /// variant (`shp_function_mark_static`).
    pub fn mark_static(&mut self, input: &str, axis: i64) -> Result<()> {
        let n = cstring(input, "input name")?;
        // SAFETY: valid function and string; not retained.
        check(unsafe { sys::shp_function_mark_static(self.as_raw(), n.as_ptr(), axis) })
    }

    /// `torch._dynamo.mark_unbacked`: axis `axis` of input `input` is symbolic in every later
    /// trace, sizes 0 and 1 included, with no hint: a comparison on it that cannot be decided
    /// is [`Code::Inconclusive`] instead of a guard on the call's size, and it is never
    /// duck-sized with another axis (`shp_function_mark_unbacked`).
    pub fn mark_unbacked(&mut self, input: &str, axis: i64) -> Result<()> {
        let n = cstring(input, "input name")?;
        // SAFETY: valid function and string; not retained.
        check(unsafe { sys::shp_function_mark_unbacked(self.as_raw(), n.as_ptr(), axis) })
    }

    /// `torch._dynamo.maybe_mark_dynamic`: axis `axis` of input `input` is symbolic in every
    /// later trace, but a trace function that specializes it (a guard pinning its size) is not
    /// an error, unlike [`Function::mark_dynamic`] (`shp_function_maybe_mark_dynamic`).
    pub fn maybe_mark_dynamic(&mut self, input: &str, axis: i64) -> Result<()> {
        let n = cstring(input, "input name")?;
        // SAFETY: valid function and string; not retained.
        check(unsafe { sys::shp_function_maybe_mark_dynamic(self.as_raw(), n.as_ptr(), axis) })
    }

    /// Sets the stance, at any time (`shp_function_set_stance`).
    pub fn set_stance(&mut self, stance: Stance) -> Result<()> {
        // SAFETY: valid function.
        check(unsafe { sys::shp_function_set_stance(self.as_raw(), stance.raw()) })
    }

    /// Calls the function on named inputs, returning the outputs by name
    /// (`shp_function_call`): runs the first variant whose guards hold, or traces a new one
    /// as the policy and the stance allow. A refused trace is [`Code::GuardFailed`] with the
    /// reasons; the trace closure's own error keeps its code.
    pub fn call(&mut self, inputs: &[(&str, &dyn ArrayRef)]) -> Result<Outputs> {
        let names = CStrings::new(inputs.iter().map(|i| i.0), "input name")?;
        let arrays: Vec<*const sys::shp_array_t> =
            inputs.iter().map(|i| i.1.as_raw_array()).collect();
        let mut outs: Vec<*mut sys::shp_array_t> = vec![ptr::null_mut(); self.output_names.len()];
        // SAFETY: the arrays are borrowed for the call; `outs` has one slot per output.
        check(unsafe {
            sys::shp_function_call(
                self.as_raw(),
                names.as_ptr(),
                arrays.as_ptr(),
                arrays.len(),
                outs.as_mut_ptr(),
                outs.len(),
            )
        })?;
        Ok(Outputs::from_raw(&self.output_names, outs))
    }

    /// Number of events logged (`shp_function_event_count`).
    pub fn event_count(&self) -> usize {
        // SAFETY: valid function.
        unsafe { sys::shp_function_event_count(self.as_raw()) }
    }

    /// Event `i`, e.g. `"trace 2 for call 2 (x: (8, 8)): variant 1: input 'x' axis 0: size 8
    /// failed guard s0 == 4 (marked dynamic now)"`; `None` if out of range
    /// (`shp_function_event_text`).
    pub fn event_text(&self, i: usize) -> Option<String> {
        // SAFETY: valid function; the text is copied.
        unsafe { opt_string(sys::shp_function_event_text(self.as_raw(), i)) }
    }

    /// Every event logged so far: why each trace happened, why axes stayed static, the
    /// guards of each variant and refused traces.
    pub fn events(&self) -> Vec<String> {
        (0..self.event_count())
            .filter_map(|i| self.event_text(i))
            .collect()
    }

    /// Number of traces made, one per variant (`shp_function_trace_count`).
    pub fn trace_count(&self) -> u64 {
        // SAFETY: valid function.
        unsafe { sys::shp_function_trace_count(self.as_raw()) }
    }

    /// Number of calls served by an existing variant (`shp_function_cache_hits`).
    pub fn cache_hits(&self) -> u64 {
        // SAFETY: valid function.
        unsafe { sys::shp_function_cache_hits(self.as_raw()) }
    }

    /// Number of variants (`shp_function_variant_count`).
    pub fn variant_count(&self) -> usize {
        // SAFETY: valid function.
        unsafe { sys::shp_function_variant_count(self.as_raw()) }
    }

    /// The variants traced so far as one multi-variant program with their guards
    /// (`shp_function_export`): it runs without the closure, in any language. Nothing traced
    /// yet is [`Code::InvalidArgument`].
    pub fn export(&self) -> Result<Program> {
        let mut raw = ptr::null_mut();
        // SAFETY: valid function; out-param.
        check(unsafe { sys::shp_function_export(self.as_raw(), &mut raw) })?;
        Ok(Program::from_raw(raw))
    }
}

impl Drop for Function {
    fn drop(&mut self) {
        // SAFETY: owned; the closure (`_trace`) is dropped only after this.
        unsafe { sys::shp_function_destroy(self.raw.as_ptr()) }
    }
}

impl fmt::Debug for Function {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Function")
            .field("outputs", &self.output_names)
            .field("variants", &self.variant_count())
            .field("traces", &self.trace_count())
            .finish()
    }
}

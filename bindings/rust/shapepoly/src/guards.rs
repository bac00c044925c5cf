//! Hints, guards, assumptions and multi-variant programs: code that branches on a shape
//! comparison the engine cannot decide either decides it on example values (the hints) and
//! records the choice as a guard that runs check, or traces each branch under an assumption
//! and combines the traces into one program whose runtime picks the variant that applies.
use std::ptr;

use crate::error::{check, Result};
use crate::program::Program;
use crate::runtime::Runtime;
use crate::scope::{Bindings, Cmp, Dim, Scope, Truth};
use crate::sys;
use crate::util::{cstring, opt_string, read_string};

/// What an op does with a shape comparison it needs and cannot decide
/// (`shp_guard_policy_t`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum GuardPolicy {
    /// Fail with [`Code::Inconclusive`](crate::Code) (the default).
    #[default]
    Never,
    /// Decide it on the hints and record a guard named after the op (PyTorch's behaviour); a
    /// hint of 1 never makes a dim broadcast.
    FromHints,
}

impl GuardPolicy {
    fn raw(self) -> sys::shp_guard_policy_t {
        match self {
            GuardPolicy::Never => sys::SHP_GUARDS_NEVER,
            GuardPolicy::FromHints => sys::SHP_GUARDS_FROM_HINTS,
        }
    }
}

/// A guard: a precondition a program checks before running, failing with
/// [`Code::GuardFailed`](crate::Code).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Guard {
    /// The guarded comparison, e.g. `"s0 == s1"`.
    pub text: String,
    /// The message shown when it fails (`""` when none was given).
    pub message: String,
    /// What recorded it: `"shp_dim_guard"`, `"shp_scope_assume"`, or the op and axis. `None`
    /// in the guard lists of [`Program::variant_guards`], for which the library keeps none.
    pub origin: Option<String>,
}

/// Hints, the guard policy and assumptions.
impl Scope {
    /// Gives variable `name` an example value (`shp_scope_set_hint`), creating the variable
    /// if the scope does not know it yet. A hint is never a fact: comparisons and bounds ignore
    /// it; only [`Dim::guard`] and [`GuardPolicy::FromHints`] read it. 0 and 1 are ordinary
    /// values (nothing is specialized on them). A value outside the variable's range, or one
    /// violating a fact whose variables all have hints, is
    /// [`Code::ConstraintViolation`](crate::Code) and keeps the previous hint.
    pub fn set_hint(&self, name: &str, value: i64) -> Result<()> {
        let n = cstring(name, "variable name")?;
        // SAFETY: valid scope and string; not retained.
        check(unsafe { sys::shp_scope_set_hint(self.as_raw(), n.as_ptr(), value) })
    }

    /// The hint of variable `name`, `None` when it has none (`shp_scope_hint`). An unknown
    /// variable is [`Code::NotFound`](crate::Code).
    pub fn hint(&self, name: &str) -> Result<Option<i64>> {
        let n = cstring(name, "variable name")?;
        let (mut has, mut value) = (false, 0i64);
        // SAFETY: valid scope, string and out-params.
        check(unsafe { sys::shp_scope_hint(self.as_raw(), n.as_ptr(), &mut has, &mut value) })?;
        Ok(has.then_some(value))
    }

    /// Sets what ops do with a shape comparison they cannot decide
    /// (`shp_scope_set_guard_policy`). Under [`GuardPolicy::FromHints`] an op whose hints
    /// satisfy what it needs records that as a guard; one whose hints do not fails with
    /// [`Code::ShapeMismatch`](crate::Code) naming the hint values.
    pub fn set_guard_policy(&self, policy: GuardPolicy) -> Result<()> {
        // SAFETY: valid scope.
        check(unsafe { sys::shp_scope_set_guard_policy(self.as_raw(), policy.raw()) })
    }

    /// Adds the guard `a op b` explicitly (`shp_scope_assume`), typically to trace one variant
    /// of a program; nothing is recorded when it already follows from the facts. One that
    /// contradicts the constraints is [`Code::Unsatisfiable`](crate::Code).
    pub fn assume<'s>(
        &'s self,
        a: Dim<'s>,
        op: Cmp,
        b: Dim<'s>,
        message: Option<&str>,
    ) -> Result<()> {
        let m = message.map(|m| cstring(m, "message")).transpose()?;
        let mp = m.as_ref().map_or(ptr::null(), |m| m.as_ptr());
        // SAFETY: dims are alive (borrowing a live scope); the message is copied.
        check(unsafe { sys::shp_scope_assume(self.as_raw(), a.raw(), op.raw(), b.raw(), mp) })
    }
}

impl<'s> Dim<'s> {
    /// Decides `self op other` for code that branches on shapes (`shp_dim_guard`). A decided
    /// comparison gives its value and records nothing; an undecidable one is evaluated on the
    /// hints and the comparison or its negation, whichever holds there, becomes a guard: a
    /// fact of the scope and a precondition of every program built from it afterwards. An
    /// undecidable comparison with an unhinted variable is
    /// [`Code::Inconclusive`](crate::Code).
    pub fn guard(self, op: Cmp, other: Dim<'s>, message: Option<&str>) -> Result<bool> {
        let m = message.map(|m| cstring(m, "message")).transpose()?;
        let mp = m.as_ref().map_or(ptr::null(), |m| m.as_ptr());
        let mut out = false;
        // SAFETY: both dims are alive; the message is copied.
        check(unsafe { sys::shp_dim_guard(self.raw(), op.raw(), other.raw(), mp, &mut out) })?;
        Ok(out)
    }
}

/// Guards and variants.
impl Program {
    /// The guards of the program, of variant 0 for a multi-variant program
    /// (`shp_program_guard_*`).
    pub fn guards(&self) -> Vec<Guard> {
        // SAFETY: valid program; strings are copied.
        let n = unsafe { sys::shp_program_guard_count(self.as_raw()) };
        (0..n)
            .map(|i| unsafe {
                Guard {
                    text: opt_string(sys::shp_program_guard_text(self.as_raw(), i))
                        .unwrap_or_default(),
                    message: opt_string(sys::shp_program_guard_message(self.as_raw(), i))
                        .unwrap_or_default(),
                    origin: opt_string(sys::shp_program_guard_origin(self.as_raw(), i)),
                }
            })
            .collect()
    }

    /// Combines programs traced under different guards into one program whose variants are
    /// theirs, in this order (`shp_program_create_variants`). A run evaluates each variant's
    /// guards in order and runs the first whose guards all hold. The variants must agree on
    /// constraints, inputs and outputs (names, roles, dtypes, ranks); a symbolic shape may
    /// differ only where the variant's guards make it equal, otherwise
    /// [`Code::InvalidArgument`](crate::Code) names the difference.
    ///
    /// ```
    /// use shapepoly::{ArrayView, Cmp, DType, Program, Runtime, Scope, Truth};
    ///
    /// # fn main() -> Result<(), shapepoly::Error> {
    /// let trace = |small: bool| -> Result<Program, shapepoly::Error> {
    ///     let scope = Scope::new(&[])?;
    ///     let n = scope.variable("n")?;
    ///     let op = if small { Cmp::Le } else { Cmp::Gt };
    ///     scope.assume(n, op, scope.constant_dim(4)?, None)?;
    ///     let x = scope.input("x", DType::F32, "n")?;
    ///     let y = if small { x.exp()? } else { x.neg()? };
    ///     scope.program(&[x], &[("y", y)])
    /// };
    /// let program = Program::create_variants(&[&trace(true)?, &trace(false)?])?;
    /// assert_eq!(program.variant_count(), 2);
    /// assert_eq!(program.variants_exhaustive(), Truth::True);
    /// let mut rt = Runtime::new(&program)?;
    /// let out = rt.run(&[("x", &ArrayView::new(&[5], &[1.0f32; 5])?)])?;
    /// assert_eq!(rt.last_variant(), Some(1));
    /// assert_eq!(out["y"].as_slice::<f32>()?, &[-1.0; 5]);
    /// # Ok(())
    /// # }
    /// ```
    pub fn create_variants(variants: &[&Program]) -> Result<Program> {
        crate::ensure_abi()?;
        let raws: Vec<*const sys::shp_program_t> = variants.iter().map(|p| p.as_raw()).collect();
        let mut raw = ptr::null_mut();
        // SAFETY: `raws` holds `variants.len()` live programs, copied by the library.
        check(unsafe { sys::shp_program_create_variants(raws.as_ptr(), raws.len(), &mut raw) })?;
        Ok(Program::from_raw(raw))
    }

    /// Number of variants: 1 for a traced or derived program (`shp_program_variant_count`).
    pub fn variant_count(&self) -> usize {
        // SAFETY: valid program.
        unsafe { sys::shp_program_variant_count(self.as_raw()) }
    }

    /// The guards of variant `v`, without origins; empty if out of range
    /// (`shp_program_variant_guard_*`).
    pub fn variant_guards(&self, v: usize) -> Vec<Guard> {
        // SAFETY: valid program; strings are copied.
        let n = unsafe { sys::shp_program_variant_guard_count(self.as_raw(), v) };
        (0..n)
            .map(|i| unsafe {
                Guard {
                    text: opt_string(sys::shp_program_variant_guard_text(self.as_raw(), v, i))
                        .unwrap_or_default(),
                    message: opt_string(sys::shp_program_variant_guard_message(
                        self.as_raw(),
                        v,
                        i,
                    ))
                    .unwrap_or_default(),
                    origin: None,
                }
            })
            .collect()
    }

    /// Whether the variants' guards cover every valuation the constraints allow
    /// (`shp_program_variants_exhaustive`): `True` when proven, `False` when a checked
    /// counterexample exists ([`Program::counterexample`]), `Unknown` when neither could be
    /// shown (an uncovered shape then fails at run time with
    /// [`Code::GuardFailed`](crate::Code)).
    pub fn variants_exhaustive(&self) -> Truth {
        // SAFETY: valid program.
        Truth::from_raw(unsafe { sys::shp_program_variants_exhaustive(self.as_raw()) })
    }

    /// The valuation no variant covers when [`Program::variants_exhaustive`] is `False`, e.g.
    /// `"n = 3 satisfies the constraints and no variant's guards (...)"`; `""` otherwise
    /// (`shp_program_variants_counterexample`).
    pub fn counterexample(&self) -> Result<String> {
        read_string(|buf, cap, len| {
            // SAFETY: `buf` has room for `cap` bytes.
            unsafe { sys::shp_program_variants_counterexample(self.as_raw(), buf, cap, len) }
        })
    }
}

impl Bindings {
    /// The variant [`Program::check_shapes`] chose for these values; `None` for bindings from
    /// [`Scope::solve`] (`shp_bindings_variant`).
    pub fn variant(&self) -> Option<usize> {
        // SAFETY: valid handle.
        usize::try_from(unsafe { sys::shp_bindings_variant(self.as_raw()) }).ok()
    }
}

/// Which variant ran, and the plan cache per variant.
impl Runtime {
    /// The variant the last successful run used (0 for a single-variant program), `None`
    /// before any (`shp_runtime_last_variant`).
    pub fn last_variant(&self) -> Option<usize> {
        // SAFETY: valid runtime.
        usize::try_from(unsafe { sys::shp_runtime_last_variant(self.as_raw()) }).ok()
    }

    /// Plans built for shapes that variant `v` ran on; 0 if out of range
    /// (`shp_runtime_variant_plans_built`).
    pub fn variant_plans_built(&self, v: usize) -> u64 {
        // SAFETY: valid runtime.
        unsafe { sys::shp_runtime_variant_plans_built(self.as_raw(), v) }
    }

    /// Calls on variant `v` that found their plan cached; 0 if out of range
    /// (`shp_runtime_variant_cache_hits`).
    pub fn variant_cache_hits(&self, v: usize) -> u64 {
        // SAFETY: valid runtime.
        unsafe { sys::shp_runtime_variant_cache_hits(self.as_raw(), v) }
    }
}

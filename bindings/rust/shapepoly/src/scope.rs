//! Scopes, symbolic dims, three-valued comparisons and solving.
use std::fmt;
use std::hash::{Hash, Hasher};
use std::marker::PhantomData;
use std::ops::{Add, Mul, Neg, Sub};
use std::ptr::{self, NonNull};

use crate::error::{check, Result};
use crate::sys;
use crate::util::{cstring, opt_string, read_string, read_vec, CStrings};

/// A scope: dimension variables, constraints, and every dim and traced tensor built in it
/// (`shp_scope_t`). Destroyed on drop, which is why [`Dim`]s and [`Tensor`](crate::Tensor)s
/// borrow it.
///
/// A scope is used by one thread at a time, so it is neither `Send` nor `Sync`. Its methods
/// take `&self` (the C object is changed behind the handle, like a `RefCell`), so dims and
/// tensors can be created while others are alive.
pub struct Scope {
    raw: NonNull<sys::shp_scope_t>,
    _not_send_sync: PhantomData<*mut ()>,
}

/// A declared (or default) variable of a scope.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Variable {
    /// The variable's name.
    pub name: String,
    /// Inclusive lower bound (`i64::MIN`: unbounded).
    pub min: i64,
    /// Inclusive upper bound (`i64::MAX`: unbounded).
    pub max: i64,
    /// Whether the variable is data-dependent (made by [`Tensor::nonzero`](crate::Tensor::nonzero),
    /// [`Tensor::boolean_mask`](crate::Tensor::boolean_mask) or
    /// [`Tensor::size_from_value`](crate::Tensor::size_from_value)).
    pub unbacked: bool,
    /// For an unbacked variable, the op that produces it, e.g. `"nonzero of a (n, 4) tensor"`.
    pub origin: Option<String>,
}

/// Comparison operators (`shp_cmp_t`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Cmp {
    /// `==`
    Eq,
    /// `!=`
    Ne,
    /// `<`
    Lt,
    /// `<=`
    Le,
    /// `>`
    Gt,
    /// `>=`
    Ge,
}

impl Cmp {
    pub(crate) fn raw(self) -> sys::shp_cmp_t {
        match self {
            Cmp::Eq => sys::SHP_CMP_EQ,
            Cmp::Ne => sys::SHP_CMP_NE,
            Cmp::Lt => sys::SHP_CMP_LT,
            Cmp::Le => sys::SHP_CMP_LE,
            Cmp::Gt => sys::SHP_CMP_GT,
            Cmp::Ge => sys::SHP_CMP_GE,
        }
    }
}

/// The three-valued result of [`Dim::compare`] (`shp_truth_t`): `Unknown` means the engine can
/// prove neither the comparison nor its negation; it is never turned into `False`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Truth {
    /// Holds for no valuation satisfying the scope's facts.
    False,
    /// Holds for every valuation satisfying the scope's facts.
    True,
    /// Neither could be proved.
    Unknown,
}

impl Truth {
    /// `Some(true)`, `Some(false)`, or `None` for `Unknown`.
    pub fn known(self) -> Option<bool> {
        match self {
            Truth::True => Some(true),
            Truth::False => Some(false),
            Truth::Unknown => None,
        }
    }

    /// True only when proved true.
    pub fn is_true(self) -> bool {
        self == Truth::True
    }

    /// True only when proved false.
    pub fn is_false(self) -> bool {
        self == Truth::False
    }

    /// The truth of a raw `shp_truth_t`; any value other than TRUE and FALSE is `Unknown`.
    pub(crate) fn from_raw(t: sys::shp_truth_t) -> Truth {
        match t {
            sys::SHP_TRUE => Truth::True,
            sys::SHP_FALSE => Truth::False,
            _ => Truth::Unknown,
        }
    }
}

impl Scope {
    /// Creates a scope with constraints such as `"n >= 2"`, `"mod(seq, 8) == 0"`
    /// (`shp_scope_create`). Every variable is >= 1 unless declared otherwise.
    pub fn new(constraints: &[&str]) -> Result<Scope> {
        crate::ensure_abi()?;
        let c = CStrings::new(constraints.iter().copied(), "constraint")?;
        let mut raw = ptr::null_mut();
        // SAFETY: `c` holds `constraints.len()` valid strings; not retained.
        check(unsafe { sys::shp_scope_create(c.as_ptr(), c.ptrs.len(), &mut raw) })?;
        Ok(Scope::from_raw(raw))
    }

    /// Creates a scope whose variables `ranges` = `(name, min, max)` (inclusive; `i64::MIN` /
    /// `i64::MAX` for unbounded) are declared first, so the constraints are checked under
    /// them (`shp_scope_create_with_ranges`).
    pub fn with_ranges(constraints: &[&str], ranges: &[(&str, i64, i64)]) -> Result<Scope> {
        crate::ensure_abi()?;
        let c = CStrings::new(constraints.iter().copied(), "constraint")?;
        let names = CStrings::new(ranges.iter().map(|r| r.0), "variable name")?;
        let mins: Vec<i64> = ranges.iter().map(|r| r.1).collect();
        let maxs: Vec<i64> = ranges.iter().map(|r| r.2).collect();
        let mut raw = ptr::null_mut();
        // SAFETY: every array has the length passed with it; nothing is retained.
        check(unsafe {
            sys::shp_scope_create_with_ranges(
                c.as_ptr(),
                c.ptrs.len(),
                names.as_ptr(),
                mins.as_ptr(),
                maxs.as_ptr(),
                ranges.len(),
                &mut raw,
            )
        })?;
        Ok(Scope::from_raw(raw))
    }

    pub(crate) fn from_raw(raw: *mut sys::shp_scope_t) -> Scope {
        Scope {
            raw: NonNull::new(raw).expect("shp_scope_create returned NULL"),
            _not_send_sync: PhantomData,
        }
    }

    /// The raw handle (still owned by this scope).
    pub fn as_raw(&self) -> *mut sys::shp_scope_t {
        self.raw.as_ptr()
    }

    pub(crate) fn dim_from(&self, raw: *const sys::shp_dim_t) -> Dim<'_> {
        Dim::from_raw(raw, self.raw)
    }

    /// Declares variable `name` with the inclusive range `[min, max]`; only before the variable
    /// is used in an expression (`shp_scope_declare`).
    pub fn declare(&self, name: &str, min: i64, max: i64) -> Result<()> {
        let n = cstring(name, "variable name")?;
        // SAFETY: valid scope and string; not retained.
        check(unsafe { sys::shp_scope_declare(self.as_raw(), n.as_ptr(), min, max) })
    }

    /// Asserts `a op b` (like `torch._check`): used by the decision procedure from now on and
    /// carried by programs built afterwards, which check it before running and fail with
    /// `message` (`shp_scope_check`).
    pub fn check<'s>(
        &'s self,
        a: Dim<'s>,
        op: Cmp,
        b: Dim<'s>,
        message: Option<&str>,
    ) -> Result<()> {
        let m = message.map(|m| cstring(m, "message")).transpose()?;
        let mp = m.as_ref().map_or(ptr::null(), |m| m.as_ptr());
        // SAFETY: dims are alive (borrowing a live scope); the message is copied.
        check(unsafe { sys::shp_scope_check(self.as_raw(), a.raw(), op.raw(), b.raw(), mp) })
    }

    /// Number of variables the scope knows (`shp_scope_variable_count`).
    pub fn variable_count(&self) -> usize {
        // SAFETY: valid scope.
        unsafe { sys::shp_scope_variable_count(self.as_raw()) }
    }

    /// Name of variable `i`, in order of first mention (`shp_scope_variable_name`).
    pub fn variable_name(&self, i: usize) -> Option<String> {
        // SAFETY: valid scope; the result is NULL or a string borrowed from the scope.
        unsafe { opt_string(sys::shp_scope_variable_name(self.as_raw(), i)) }
    }

    /// Declared range of variable `i` (`shp_scope_variable_range`).
    pub fn variable_range(&self, i: usize) -> Result<(i64, i64)> {
        let (mut lo, mut hi) = (0, 0);
        // SAFETY: valid scope and out-params.
        check(unsafe { sys::shp_scope_variable_range(self.as_raw(), i, &mut lo, &mut hi) })?;
        Ok((lo, hi))
    }

    /// Whether variable `i` is unbacked: its value comes from the data at run time, never
    /// from input shapes (`shp_scope_variable_is_unbacked`). False out of range.
    pub fn variable_is_unbacked(&self, i: usize) -> bool {
        // SAFETY: valid scope.
        unsafe { sys::shp_scope_variable_is_unbacked(self.as_raw(), i) }
    }

    /// The op that produces unbacked variable `i`, e.g. `"nonzero of a (n, 4) tensor"`
    /// (`shp_scope_variable_origin`); `None` for other variables or out of range.
    pub fn variable_origin(&self, i: usize) -> Option<String> {
        // SAFETY: valid scope; the result is NULL or a string borrowed from the scope.
        unsafe { opt_string(sys::shp_scope_variable_origin(self.as_raw(), i)) }
    }

    /// Every variable with its range, and whether it is unbacked.
    pub fn variables(&self) -> Result<Vec<Variable>> {
        (0..self.variable_count())
            .map(|i| {
                let (min, max) = self.variable_range(i)?;
                Ok(Variable {
                    name: self.variable_name(i).unwrap_or_default(),
                    min,
                    max,
                    unbacked: self.variable_is_unbacked(i),
                    origin: self.variable_origin(i),
                })
            })
            .collect()
    }

    /// Number of facts: constraints, then assertions (`shp_scope_constraint_count`).
    pub fn constraint_count(&self) -> usize {
        // SAFETY: valid scope.
        unsafe { sys::shp_scope_constraint_count(self.as_raw()) }
    }

    /// Text of fact `i` (`shp_scope_constraint_text`).
    pub fn constraint_text(&self, i: usize) -> Option<String> {
        // SAFETY: valid scope; copied before the scope can change.
        unsafe { opt_string(sys::shp_scope_constraint_text(self.as_raw(), i)) }
    }

    /// The texts of every fact.
    pub fn constraints(&self) -> Vec<String> {
        (0..self.constraint_count())
            .filter_map(|i| self.constraint_text(i))
            .collect()
    }

    /// Parses a dimension expression such as `"2*batch + 1"` (`shp_dim_parse`).
    pub fn dim(&self, text: &str) -> Result<Dim<'_>> {
        let t = cstring(text, "dimension expression")?;
        let mut out = ptr::null();
        // SAFETY: valid scope and string.
        check(unsafe { sys::shp_dim_parse(self.as_raw(), t.as_ptr(), &mut out) })?;
        Ok(self.dim_from(out))
    }

    /// The constant `value` as a dim (`shp_dim_constant`).
    pub fn constant_dim(&self, value: i64) -> Result<Dim<'_>> {
        Dim::constant_in(self.raw, value)
    }

    /// The variable `name`, created on first mention (`shp_dim_variable`).
    pub fn variable(&self, name: &str) -> Result<Dim<'_>> {
        let n = cstring(name, "variable name")?;
        let mut out = ptr::null();
        // SAFETY: valid scope and string.
        check(unsafe { sys::shp_dim_variable(self.as_raw(), n.as_ptr(), &mut out) })?;
        Ok(self.dim_from(out))
    }

    /// Parses a shape spec such as `"batch, 2*seq + 1"`; `_` takes one dim of `like` and `...`
    /// (last) the rest (`shp_shape_parse`).
    pub fn parse_shape(&self, spec: &str, like: Option<&[i64]>) -> Result<Vec<Dim<'_>>> {
        let s = cstring(spec, "shape spec")?;
        let (lp, ln) = like.map_or((ptr::null(), 0), |l| (l.as_ptr(), l.len()));
        let raws = read_vec(ptr::null(), |out, cap, rank| {
            // SAFETY: `out` has room for `cap` dims; `like` is valid for `ln` values.
            unsafe { sys::shp_shape_parse(self.as_raw(), s.as_ptr(), lp, ln, out, cap, rank) }
        })?;
        Ok(raws.into_iter().map(|r| self.dim_from(r)).collect())
    }

    /// Solves every variable of the specs from concrete shapes: `args[i] = (spec, shape)`
    /// (`shp_scope_solve`).
    pub fn solve(&self, args: &[(&str, &[i64])]) -> Result<Bindings> {
        let specs = CStrings::new(args.iter().map(|a| a.0), "shape spec")?;
        let shapes: Vec<*const i64> = args.iter().map(|a| a.1.as_ptr()).collect();
        let ranks: Vec<usize> = args.iter().map(|a| a.1.len()).collect();
        let mut out = ptr::null_mut();
        // SAFETY: all arrays have `args.len()` entries; shape i has ranks[i] values.
        check(unsafe {
            sys::shp_scope_solve(
                self.as_raw(),
                args.len(),
                specs.as_ptr(),
                shapes.as_ptr(),
                ranks.as_ptr(),
                &mut out,
            )
        })?;
        Ok(Bindings::from_raw(out))
    }
}

impl Drop for Scope {
    fn drop(&mut self) {
        // SAFETY: owned; every Dim/Tensor borrowing it is gone (borrow checker).
        unsafe { sys::shp_scope_destroy(self.raw.as_ptr()) }
    }
}

impl fmt::Debug for Scope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Scope")
            .field("constraints", &self.constraints())
            .finish()
    }
}

/// A symbolic dimension expression in normal form, owned by its scope (`shp_dim_t`).
///
/// `Copy`; it borrows its [`Scope`] (`'s`), so it cannot outlive it. `==`/`Hash` compare the
/// interned normal forms (identical expressions); use [`Dim::compare`] for semantic
/// comparisons under the scope's constraints. Arithmetic operators return `Result<Dim>`.
#[derive(Clone, Copy)]
pub struct Dim<'s> {
    raw: NonNull<sys::shp_dim_t>,
    scope: NonNull<sys::shp_scope_t>,
    _scope: PhantomData<&'s Scope>,
}

macro_rules! dim_binary {
    ($(#[$m:meta])* $name:ident, $cfn:ident) => {
        $(#[$m])*
        pub fn $name(self, other: Dim<'s>) -> Result<Dim<'s>> {
            let mut out = ptr::null();
            // SAFETY: both dims are alive; C reports dims of two scopes as SCOPE_MISMATCH.
            check(unsafe { sys::$cfn(self.raw(), other.raw(), &mut out) })?;
            Ok(self.with(out))
        }
    };
}

impl<'s> Dim<'s> {
    pub(crate) fn from_raw(
        raw: *const sys::shp_dim_t,
        scope: NonNull<sys::shp_scope_t>,
    ) -> Dim<'s> {
        Dim {
            raw: NonNull::new(raw as *mut _).expect("libshapepoly returned a NULL dim"),
            scope,
            _scope: PhantomData,
        }
    }

    fn with(self, raw: *const sys::shp_dim_t) -> Dim<'s> {
        Dim::from_raw(raw, self.scope)
    }

    fn constant_in(scope: NonNull<sys::shp_scope_t>, value: i64) -> Result<Dim<'s>> {
        let mut out = ptr::null();
        // SAFETY: the scope is alive for 's.
        check(unsafe { sys::shp_dim_constant(scope.as_ptr(), value, &mut out) })?;
        Ok(Dim::from_raw(out, scope))
    }

    /// The raw handle (owned by the scope).
    pub fn raw(self) -> *const sys::shp_dim_t {
        self.raw.as_ptr()
    }

    /// The constant `value` in this dim's scope.
    pub fn constant(self, value: i64) -> Result<Dim<'s>> {
        Dim::constant_in(self.scope, value)
    }

    dim_binary!(
        /// `floordiv(self, other)` (Python floor division; the divisor must be provably
        /// non-zero).
        floordiv, shp_dim_floordiv
    );
    dim_binary!(
        /// `mod(self, other)` (Python semantics: the sign of the divisor).
        modulo, shp_dim_mod
    );
    dim_binary!(
        /// `max(self, other)`.
        max, shp_dim_max
    );
    dim_binary!(
        /// `min(self, other)`.
        min, shp_dim_min
    );
    dim_binary!(
        /// `self + other` (also the `+` operator).
        try_add, shp_dim_add
    );
    dim_binary!(
        /// `self - other` (also the `-` operator).
        try_sub, shp_dim_sub
    );
    dim_binary!(
        /// `self * other` (also the `*` operator).
        try_mul, shp_dim_mul
    );

    /// `-self` (also the unary `-` operator).
    pub fn try_neg(self) -> Result<Dim<'s>> {
        let mut out = ptr::null();
        // SAFETY: the dim is alive.
        check(unsafe { sys::shp_dim_neg(self.raw(), &mut out) })?;
        Ok(self.with(out))
    }

    /// `self ^ exponent` (exponent >= 0).
    pub fn pow(self, exponent: i64) -> Result<Dim<'s>> {
        let mut out = ptr::null();
        // SAFETY: the dim is alive.
        check(unsafe { sys::shp_dim_pow(self.raw(), exponent, &mut out) })?;
        Ok(self.with(out))
    }

    /// The canonical text, e.g. `"2*b + 1"` (`shp_dim_to_string`); also `Display`.
    pub fn text(self) -> Result<String> {
        read_string(|buf, cap, len| {
            // SAFETY: `buf` has room for `cap` bytes.
            unsafe { sys::shp_dim_to_string(self.raw(), buf, cap, len) }
        })
    }

    /// The value when the dim is a constant (`shp_dim_is_constant`).
    pub fn as_constant(self) -> Option<i64> {
        let mut v = 0;
        // SAFETY: the dim is alive.
        if unsafe { sys::shp_dim_is_constant(self.raw(), &mut v) } {
            Some(v)
        } else {
            None
        }
    }

    /// The variables occurring in the dim (also inside floordiv/mod/max/min), in order of
    /// their first mention in the scope (`shp_dim_variables`).
    pub fn variables(self) -> Result<Vec<String>> {
        let names = read_vec(ptr::null(), |out, cap, count| {
            // SAFETY: `out` has room for `cap` names, borrowed from the scope and copied below.
            unsafe { sys::shp_dim_variables(self.raw(), out, cap, count) }
        })?;
        // SAFETY: each name is a valid string owned by the scope, alive for 's.
        Ok(names
            .into_iter()
            .filter_map(|p| unsafe { opt_string(p) })
            .collect())
    }

    /// Sound inclusive bounds `(lo, hi)` under the scope's facts (`shp_dim_bounds`);
    /// `i64::MIN` / `i64::MAX` mean unbounded.
    pub fn bounds(self) -> Result<(i64, i64)> {
        let (mut lo, mut hi) = (0, 0);
        // SAFETY: the dim is alive.
        check(unsafe { sys::shp_dim_bounds(self.raw(), &mut lo, &mut hi) })?;
        Ok((lo, hi))
    }

    /// Three-valued `self op other` under the scope's facts (`shp_dim_compare`).
    pub fn compare(self, op: Cmp, other: Dim<'s>) -> Result<Truth> {
        let mut t = sys::SHP_UNKNOWN;
        // SAFETY: both dims are alive.
        check(unsafe { sys::shp_dim_compare(self.raw(), op.raw(), other.raw(), &mut t) })?;
        Ok(Truth::from_raw(t))
    }

    /// Evaluates the dim with variable values given by name (`shp_dim_evaluate`).
    pub fn evaluate(self, values: &[(&str, i64)]) -> Result<i64> {
        let names = CStrings::new(values.iter().map(|v| v.0), "variable name")?;
        let vals: Vec<i64> = values.iter().map(|v| v.1).collect();
        let mut out = 0;
        // SAFETY: both arrays have `values.len()` entries.
        check(unsafe {
            sys::shp_dim_evaluate(
                self.raw(),
                names.as_ptr(),
                vals.as_ptr(),
                vals.len(),
                &mut out,
            )
        })?;
        Ok(out)
    }
}

impl PartialEq for Dim<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.raw == other.raw
    }
}
impl Eq for Dim<'_> {}
impl Hash for Dim<'_> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.raw.hash(state)
    }
}

impl fmt::Display for Dim<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.text() {
            Ok(s) => f.write_str(&s),
            Err(_) => f.write_str("<invalid dim>"),
        }
    }
}

impl fmt::Debug for Dim<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Dim({})", self)
    }
}

macro_rules! dim_operator {
    ($trait:ident, $method:ident, $try:ident) => {
        impl<'s> $trait<Dim<'s>> for Dim<'s> {
            type Output = Result<Dim<'s>>;
            fn $method(self, rhs: Dim<'s>) -> Result<Dim<'s>> {
                self.$try(rhs)
            }
        }
        impl<'s> $trait<i64> for Dim<'s> {
            type Output = Result<Dim<'s>>;
            fn $method(self, rhs: i64) -> Result<Dim<'s>> {
                self.$try(self.constant(rhs)?)
            }
        }
        impl<'s> $trait<Dim<'s>> for i64 {
            type Output = Result<Dim<'s>>;
            fn $method(self, rhs: Dim<'s>) -> Result<Dim<'s>> {
                rhs.constant(self)?.$try(rhs)
            }
        }
    };
}

dim_operator!(Add, add, try_add);
dim_operator!(Sub, sub, try_sub);
dim_operator!(Mul, mul, try_mul);

impl<'s> Neg for Dim<'s> {
    type Output = Result<Dim<'s>>;
    fn neg(self) -> Result<Dim<'s>> {
        self.try_neg()
    }
}

/// Variable values found by [`Scope::solve`] or [`Program::check_shapes`](crate::Program::check_shapes)
/// (`shp_bindings_t`).
pub struct Bindings {
    raw: NonNull<sys::shp_bindings_t>,
}

// SAFETY: owned, immutable after creation and not tied to any thread. Not `Sync`: the header
// promises concurrent use only for programs.
unsafe impl Send for Bindings {}

impl Bindings {
    pub(crate) fn from_raw(raw: *mut sys::shp_bindings_t) -> Bindings {
        Bindings {
            raw: NonNull::new(raw).expect("libshapepoly returned NULL bindings"),
        }
    }

    /// The raw handle (still owned).
    pub fn as_raw(&self) -> *const sys::shp_bindings_t {
        self.raw.as_ptr()
    }

    /// Number of variables (`shp_bindings_count`).
    pub fn len(&self) -> usize {
        // SAFETY: valid handle.
        unsafe { sys::shp_bindings_count(self.as_raw()) }
    }

    /// True if no variable was bound.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Name of binding `i` (`shp_bindings_name`).
    pub fn name(&self, i: usize) -> Option<String> {
        // SAFETY: valid handle; the string is copied.
        unsafe { opt_string(sys::shp_bindings_name(self.as_raw(), i)) }
    }

    /// Value of binding `i` (`shp_bindings_value`; 0 if out of range).
    pub fn value(&self, i: usize) -> i64 {
        // SAFETY: valid handle.
        unsafe { sys::shp_bindings_value(self.as_raw(), i) }
    }

    /// The value of variable `name`.
    pub fn get(&self, name: &str) -> Option<i64> {
        (0..self.len())
            .find(|&i| self.name(i).as_deref() == Some(name))
            .map(|i| self.value(i))
    }

    /// Every `(name, value)` in order of the variables' first mention.
    pub fn to_vec(&self) -> Vec<(String, i64)> {
        (0..self.len())
            .map(|i| (self.name(i).unwrap_or_default(), self.value(i)))
            .collect()
    }
}

impl Drop for Bindings {
    fn drop(&mut self) {
        // SAFETY: owned.
        unsafe { sys::shp_bindings_destroy(self.raw.as_ptr()) }
    }
}

impl fmt::Debug for Bindings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.to_vec()).finish()
    }
}

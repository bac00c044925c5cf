//! Tracing: traced tensors with symbolic shapes and every operation of the C API.
use std::fmt;
use std::marker::PhantomData;
use std::ptr::{self, NonNull};

use crate::array::{check_len, Element};
use crate::error::{check, Result};
use crate::program::Program;
use crate::scope::{Cmp, Dim, Scope};
use crate::sys;
use crate::util::{cstring, invalid, read_vec, CStrings};

/// Element types (`shp_dtype_t`). Non-exhaustive: a dtype added by a newer library arrives as
/// `Unknown(raw)`.
///
/// `F32`, `F64`, `I32`, `I64` and `Bool` are the compute types. The others are storage types:
/// an operation on them computes in `f32` (`F16`, `Bf16`), `i32` (`I8`, `U8`, `I16`, `U16`) or
/// `i64` (`U32`, `U64`) and rounds (to nearest even) or wraps once when it stores its result.
/// Their Rust element types: [`F16`](crate::F16) and [`Bf16`](crate::Bf16) (the 16 bits),
/// `i8`, `u8`, `i16`, `u16`, `u32` and `u64`.
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DType {
    /// 32-bit float.
    F32,
    /// 64-bit float.
    F64,
    /// 32-bit signed integer.
    I32,
    /// 64-bit signed integer.
    I64,
    /// Boolean, one byte per element.
    Bool,
    /// IEEE binary16 (half precision), stored as its 16 bits ([`F16`](crate::F16)).
    F16,
    /// bfloat16 (the upper half of a binary32), stored as its 16 bits ([`Bf16`](crate::Bf16)).
    Bf16,
    /// 8-bit signed integer.
    I8,
    /// 8-bit unsigned integer.
    U8,
    /// 16-bit signed integer.
    I16,
    /// 16-bit unsigned integer.
    U16,
    /// 32-bit unsigned integer.
    U32,
    /// 64-bit unsigned integer.
    U64,
    /// A dtype this binding does not know.
    Unknown(i32),
}

impl DType {
    /// Every dtype this binding knows, in the C enum's order.
    pub const ALL: &'static [DType] = &[
        DType::F32,
        DType::F64,
        DType::I32,
        DType::I64,
        DType::Bool,
        DType::F16,
        DType::Bf16,
        DType::I8,
        DType::U8,
        DType::I16,
        DType::U16,
        DType::U32,
        DType::U64,
    ];

    /// The dtype of a raw `shp_dtype_t`.
    pub fn from_raw(raw: i32) -> DType {
        match raw {
            sys::SHP_F32 => DType::F32,
            sys::SHP_F64 => DType::F64,
            sys::SHP_I32 => DType::I32,
            sys::SHP_I64 => DType::I64,
            sys::SHP_BOOL => DType::Bool,
            sys::SHP_F16 => DType::F16,
            sys::SHP_BF16 => DType::Bf16,
            sys::SHP_I8 => DType::I8,
            sys::SHP_U8 => DType::U8,
            sys::SHP_I16 => DType::I16,
            sys::SHP_U16 => DType::U16,
            sys::SHP_U32 => DType::U32,
            sys::SHP_U64 => DType::U64,
            other => DType::Unknown(other),
        }
    }

    /// The raw `shp_dtype_t`.
    pub fn raw(self) -> i32 {
        match self {
            DType::F32 => sys::SHP_F32,
            DType::F64 => sys::SHP_F64,
            DType::I32 => sys::SHP_I32,
            DType::I64 => sys::SHP_I64,
            DType::Bool => sys::SHP_BOOL,
            DType::F16 => sys::SHP_F16,
            DType::Bf16 => sys::SHP_BF16,
            DType::I8 => sys::SHP_I8,
            DType::U8 => sys::SHP_U8,
            DType::I16 => sys::SHP_I16,
            DType::U16 => sys::SHP_U16,
            DType::U32 => sys::SHP_U32,
            DType::U64 => sys::SHP_U64,
            DType::Unknown(v) => v,
        }
    }

    /// Bytes per element (None for an unknown dtype).
    pub fn size(self) -> Option<usize> {
        match self {
            DType::Bool | DType::I8 | DType::U8 => Some(1),
            DType::F16 | DType::Bf16 | DType::I16 | DType::U16 => Some(2),
            DType::F32 | DType::I32 | DType::U32 => Some(4),
            DType::F64 | DType::I64 | DType::U64 => Some(8),
            DType::Unknown(_) => None,
        }
    }

    /// The short name: `"f32"`, `"bf16"`, `"u8"`, `"bool"`, ... (None for an unknown dtype).
    /// [`Display`](fmt::Display) prints it, and [`str::parse`] reads it back.
    pub fn name(self) -> Option<&'static str> {
        Some(match self {
            DType::F32 => "f32",
            DType::F64 => "f64",
            DType::I32 => "i32",
            DType::I64 => "i64",
            DType::Bool => "bool",
            DType::F16 => "f16",
            DType::Bf16 => "bf16",
            DType::I8 => "i8",
            DType::U8 => "u8",
            DType::I16 => "i16",
            DType::U16 => "u16",
            DType::U32 => "u32",
            DType::U64 => "u64",
            DType::Unknown(_) => return None,
        })
    }
}

impl fmt::Display for DType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.name() {
            Some(name) => f.write_str(name),
            None => write!(f, "dtype({})", self.raw()),
        }
    }
}

impl std::str::FromStr for DType {
    type Err = crate::Error;

    /// Parses a short name (`"f32"`, `"f16"`, `"bf16"`, `"u8"`, ...; case-insensitive) into a
    /// known dtype; anything else is [`Code::InvalidArgument`](crate::Code::InvalidArgument).
    fn from_str(s: &str) -> Result<DType> {
        let lower = s.to_ascii_lowercase();
        DType::ALL
            .iter()
            .copied()
            .find(|d| d.name() == Some(lower.as_str()))
            .ok_or_else(|| {
                invalid(format!(
                    "unknown dtype {:?} (f32, f64, i32, i64, bool, f16, bf16, i8, u8, i16, u16, \
                     u32, u64)",
                    s
                ))
            })
    }
}

macro_rules! op_enum {
    ($(#[$m:meta])* $name:ident { $($(#[$vm:meta])* $v:ident = $c:ident),* $(,)? }) => {
        $(#[$m])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum $name { $($(#[$vm])* $v),* }
        impl $name {
            /// The raw C enum value.
            pub fn raw(self) -> i32 { match self { $($name::$v => sys::$c),* } }
            /// Every variant, in the C enum's order.
            pub const ALL: &'static [$name] = &[$($name::$v),*];
        }
    };
}

op_enum!(
    /// Elementwise unary operations (`shp_unary_op_t`).
    UnaryOp {
        Neg = SHP_NEG, Abs = SHP_ABS, Exp = SHP_EXP, Log = SHP_LOG, Log1p = SHP_LOG1P,
        Expm1 = SHP_EXPM1, Sqrt = SHP_SQRT, Rsqrt = SHP_RSQRT, Sin = SHP_SIN, Cos = SHP_COS,
        Tanh = SHP_TANH, Logistic = SHP_LOGISTIC, Floor = SHP_FLOOR, Ceil = SHP_CEIL,
        Round = SHP_ROUND, Sign = SHP_SIGN, Not = SHP_NOT, Erf = SHP_ERF, Tan = SHP_TAN,
        Sinh = SHP_SINH, Cosh = SHP_COSH, Asin = SHP_ASIN, Acos = SHP_ACOS, Atan = SHP_ATAN,
        Asinh = SHP_ASINH, Acosh = SHP_ACOSH, Atanh = SHP_ATANH,
    }
);

op_enum!(
    /// Elementwise binary operations with NumPy broadcasting (`shp_binary_op_t`).
    BinaryOp {
        Add = SHP_ADD, Sub = SHP_SUB, Mul = SHP_MUL, Div = SHP_DIV, Pow = SHP_POW,
        Max = SHP_MAX, Min = SHP_MIN, Rem = SHP_REM, And = SHP_AND, Or = SHP_OR, Xor = SHP_XOR,
    }
);

op_enum!(
    /// Reductions (`shp_reduce_op_t`).
    ReduceOp {
        Sum = SHP_REDUCE_SUM, Mean = SHP_REDUCE_MEAN, Max = SHP_REDUCE_MAX,
        Min = SHP_REDUCE_MIN, Prod = SHP_REDUCE_PROD,
    }
);

/// A traced tensor: a dtype and a symbolic shape, owned by its scope (`shp_tensor_t`).
/// `Copy`; it borrows its [`Scope`] (`'s`). Every operation returns a new tensor or an
/// [`Error`](crate::Error) (shape mismatch, inconclusive, dtype mismatch, ...).
#[derive(Clone, Copy)]
pub struct Tensor<'s> {
    raw: NonNull<sys::shp_tensor_t>,
    scope: NonNull<sys::shp_scope_t>,
    _scope: PhantomData<&'s Scope>,
}

fn dim_ptrs(dims: &[Dim<'_>]) -> Vec<*const sys::shp_dim_t> {
    dims.iter().map(|d| d.raw()).collect()
}

fn opt_dim_ptrs(dims: &[Option<Dim<'_>>]) -> Vec<*const sys::shp_dim_t> {
    dims.iter()
        .map(|d| d.map_or(ptr::null(), |d| d.raw()))
        .collect()
}

macro_rules! unary_methods {
    ($($(#[$m:meta])* $name:ident => $op:ident;)*) => {$(
        $(#[$m])*
        pub fn $name(self) -> Result<Tensor<'s>> { self.unary(UnaryOp::$op) }
    )*};
}

macro_rules! binary_methods {
    ($($(#[$m:meta])* $name:ident => $op:ident;)*) => {$(
        $(#[$m])*
        pub fn $name(self, other: Tensor<'s>) -> Result<Tensor<'s>> { self.binary(BinaryOp::$op, other) }
    )*};
}

// Elementwise ops are methods named like jax.numpy (`add`, `mul`, `not`, ...) returning
// `Result`, so a failed shape check is an error value rather than a panic.
#[allow(clippy::should_implement_trait)]
impl<'s> Tensor<'s> {
    pub(crate) fn new(
        raw: *const sys::shp_tensor_t,
        scope: NonNull<sys::shp_scope_t>,
    ) -> Tensor<'s> {
        Tensor {
            raw: NonNull::new(raw as *mut _).expect("libshapepoly returned a NULL tensor"),
            scope,
            _scope: PhantomData,
        }
    }

    /// Runs a C op builder writing a tensor of this tensor's scope.
    pub(crate) fn op(
        self,
        f: impl FnOnce(*mut *const sys::shp_tensor_t) -> *mut sys::shp_error_t,
    ) -> Result<Tensor<'s>> {
        let mut out = ptr::null();
        check(f(&mut out))?;
        Ok(Tensor::new(out, self.scope))
    }

    /// The raw handle (owned by the scope).
    pub fn raw(self) -> *const sys::shp_tensor_t {
        self.raw.as_ptr()
    }

    /// The element type (`shp_tensor_dtype`).
    pub fn dtype(self) -> DType {
        // SAFETY: the tensor is alive.
        DType::from_raw(unsafe { sys::shp_tensor_dtype(self.raw()) })
    }

    /// The symbolic shape (`shp_tensor_shape`).
    pub fn shape(self) -> Result<Vec<Dim<'s>>> {
        let raws = read_vec(ptr::null(), |out, cap, rank| {
            // SAFETY: `out` has room for `cap` dims.
            unsafe { sys::shp_tensor_shape(self.raw(), out, cap, rank) }
        })?;
        let scope = self.scope;
        Ok(raws.into_iter().map(|r| Dim::from_raw(r, scope)).collect())
    }

    /// The rank.
    pub fn rank(self) -> Result<usize> {
        let mut rank = 0;
        // SAFETY: cap 0 writes no dims.
        check(unsafe { sys::shp_tensor_shape(self.raw(), ptr::null_mut(), 0, &mut rank) })?;
        Ok(rank)
    }

    /// Elementwise `op(self)` (`shp_tensor_unary`).
    pub fn unary(self, op: UnaryOp) -> Result<Tensor<'s>> {
        // SAFETY: the tensor is alive.
        self.op(|out| unsafe { sys::shp_tensor_unary(op.raw(), self.raw(), out) })
    }

    unary_methods! {
        /// Elementwise `-x`.
        neg => Neg;
        /// Elementwise `|x|`.
        abs => Abs;
        /// Elementwise `e^x`.
        exp => Exp;
        /// Elementwise natural logarithm.
        log => Log;
        /// Elementwise `ln(1 + x)`.
        log1p => Log1p;
        /// Elementwise `e^x - 1`.
        expm1 => Expm1;
        /// Elementwise square root.
        sqrt => Sqrt;
        /// Elementwise `1/sqrt(x)`.
        rsqrt => Rsqrt;
        /// Elementwise sine.
        sin => Sin;
        /// Elementwise cosine.
        cos => Cos;
        /// Elementwise tanh.
        tanh => Tanh;
        /// Elementwise `1/(1 + e^-x)`.
        logistic => Logistic;
        /// Elementwise floor.
        floor => Floor;
        /// Elementwise ceil.
        ceil => Ceil;
        /// Elementwise round (half to even).
        round => Round;
        /// Elementwise sign.
        sign => Sign;
        /// Elementwise logical / bitwise not.
        not => Not;
        /// Elementwise error function.
        erf => Erf;
        /// Elementwise tangent.
        tan => Tan;
        /// Elementwise hyperbolic sine.
        sinh => Sinh;
        /// Elementwise hyperbolic cosine.
        cosh => Cosh;
        /// Elementwise arc sine (NaN outside [-1, 1]).
        asin => Asin;
        /// Elementwise arc cosine (NaN outside [-1, 1]).
        acos => Acos;
        /// Elementwise arc tangent.
        atan => Atan;
        /// Elementwise inverse hyperbolic sine.
        asinh => Asinh;
        /// Elementwise inverse hyperbolic cosine (NaN below 1).
        acosh => Acosh;
        /// Elementwise inverse hyperbolic tangent (NaN outside [-1, 1], +-inf at +-1).
        atanh => Atanh;
    }

    /// Elementwise `self op other` with broadcasting (`shp_tensor_binary`).
    pub fn binary(self, op: BinaryOp, other: Tensor<'s>) -> Result<Tensor<'s>> {
        // SAFETY: both tensors are alive.
        self.op(|out| unsafe { sys::shp_tensor_binary(op.raw(), self.raw(), other.raw(), out) })
    }

    binary_methods! {
        /// Elementwise `a + b`.
        add => Add;
        /// Elementwise `a - b`.
        sub => Sub;
        /// Elementwise `a * b`.
        mul => Mul;
        /// Elementwise `a / b` (integers round toward zero).
        div => Div;
        /// Elementwise `a ^ b`.
        pow => Pow;
        /// Elementwise maximum.
        maximum => Max;
        /// Elementwise minimum.
        minimum => Min;
        /// Elementwise remainder (sign of the dividend).
        rem => Rem;
        /// Elementwise logical / bitwise and.
        and => And;
        /// Elementwise logical / bitwise or.
        or => Or;
        /// Elementwise logical / bitwise xor.
        xor => Xor;
    }

    /// Elementwise comparison with broadcasting; the result is `Bool` (`shp_tensor_compare`).
    pub fn compare(self, op: Cmp, other: Tensor<'s>) -> Result<Tensor<'s>> {
        // SAFETY: both tensors are alive.
        self.op(|out| unsafe { sys::shp_tensor_compare(self.raw(), op.raw(), other.raw(), out) })
    }

    /// `self ? on_true : on_false` elementwise; `self` is `Bool` (`shp_tensor_select`).
    pub fn select(self, on_true: Tensor<'s>, on_false: Tensor<'s>) -> Result<Tensor<'s>> {
        // SAFETY: all tensors are alive.
        self.op(|out| unsafe {
            sys::shp_tensor_select(self.raw(), on_true.raw(), on_false.raw(), out)
        })
    }

    /// Converts the elements to `dtype` (`shp_tensor_convert`).
    pub fn convert(self, dtype: DType) -> Result<Tensor<'s>> {
        // SAFETY: the tensor is alive.
        self.op(|out| unsafe { sys::shp_tensor_convert(self.raw(), dtype.raw(), out) })
    }

    /// Broadcasts to the shape `dims` (`shp_tensor_broadcast_to`).
    pub fn broadcast_to(self, dims: &[Dim<'s>]) -> Result<Tensor<'s>> {
        let d = dim_ptrs(dims);
        // SAFETY: `d` has `d.len()` dims.
        self.op(|out| unsafe { sys::shp_tensor_broadcast_to(self.raw(), d.as_ptr(), d.len(), out) })
    }

    /// Reshapes to `dims`; one entry may be `None` (inferred) (`shp_tensor_reshape`).
    pub fn reshape(self, dims: &[Option<Dim<'s>>]) -> Result<Tensor<'s>> {
        let d = opt_dim_ptrs(dims);
        // SAFETY: `d` has `d.len()` entries (NULL = inferred).
        self.op(|out| unsafe { sys::shp_tensor_reshape(self.raw(), d.as_ptr(), d.len(), out) })
    }

    /// Permutes the axes: result axis i is axis `permutation[i]` (`shp_tensor_transpose`).
    pub fn transpose(self, permutation: &[i64]) -> Result<Tensor<'s>> {
        // SAFETY: `permutation` has `permutation.len()` entries.
        self.op(|out| unsafe {
            sys::shp_tensor_transpose(self.raw(), permutation.as_ptr(), permutation.len(), out)
        })
    }

    /// Concatenates tensors of one dtype and rank along `axis` (`shp_tensor_concatenate`).
    pub fn concatenate(xs: &[Tensor<'s>], axis: i64) -> Result<Tensor<'s>> {
        let p: Vec<*const sys::shp_tensor_t> = xs.iter().map(|t| t.raw()).collect();
        let mut out = ptr::null();
        // SAFETY: `p` has `p.len()` tensors; with 0 the library reports the error.
        check(unsafe { sys::shp_tensor_concatenate(p.as_ptr(), p.len(), axis, &mut out) })?;
        match xs.first() {
            Some(t) => Ok(Tensor::new(out, t.scope)),
            None => Err(invalid("concatenate: no tensors")),
        }
    }

    /// `self[start:limit:stride]` on every axis (`shp_tensor_slice`). Each of `start`, `limit`
    /// and `strides` is either empty (the default on every axis: 0, the dimension, 1) or has
    /// one entry per axis (`None`: that axis' default).
    pub fn slice(
        self,
        start: &[Option<Dim<'s>>],
        limit: &[Option<Dim<'s>>],
        strides: &[i64],
    ) -> Result<Tensor<'s>> {
        let lens = [start.len(), limit.len(), strides.len()];
        let rank = match lens.iter().copied().filter(|&n| n > 0).max() {
            Some(n) => n,
            None => self.rank()?,
        };
        if lens.iter().any(|&n| n != 0 && n != rank) {
            return Err(invalid(format!(
                "slice: start, limit and strides must be empty or have one entry per axis \
                 (got {}, {} and {})",
                lens[0], lens[1], lens[2]
            )));
        }
        let s = opt_dim_ptrs(start);
        let l = opt_dim_ptrs(limit);
        let sp = if s.is_empty() {
            ptr::null()
        } else {
            s.as_ptr()
        };
        let lp = if l.is_empty() {
            ptr::null()
        } else {
            l.as_ptr()
        };
        let tp = if strides.is_empty() {
            ptr::null()
        } else {
            strides.as_ptr()
        };
        // SAFETY: each non-NULL array has `rank` entries.
        self.op(|out| unsafe { sys::shp_tensor_slice(self.raw(), sp, lp, tp, rank, out) })
    }

    /// Pads each axis with `low[i]` elements before and `high[i]` after, filled with `value`
    /// (`shp_tensor_pad`).
    pub fn pad(self, low: &[Dim<'s>], high: &[Dim<'s>], value: f64) -> Result<Tensor<'s>> {
        if low.len() != high.len() {
            return Err(invalid(format!(
                "pad: low has {} entries but high has {}",
                low.len(),
                high.len()
            )));
        }
        let (l, h) = (dim_ptrs(low), dim_ptrs(high));
        // SAFETY: both arrays have `l.len()` dims.
        self.op(|out| unsafe {
            sys::shp_tensor_pad(self.raw(), l.as_ptr(), h.as_ptr(), l.len(), value, out)
        })
    }

    /// Reduces over `axes` (empty: every axis), keeping them as size 1 when `keepdims`
    /// (`shp_tensor_reduce`).
    pub fn reduce(self, op: ReduceOp, axes: &[i64], keepdims: bool) -> Result<Tensor<'s>> {
        // SAFETY: `axes` has `axes.len()` entries.
        self.op(|out| unsafe {
            sys::shp_tensor_reduce(
                op.raw(),
                self.raw(),
                axes.as_ptr(),
                axes.len(),
                keepdims,
                out,
            )
        })
    }

    /// XLA dot_general (`shp_tensor_dot_general`): `batch` and `contracting` are pairs of
    /// `(lhs axes, rhs axes)` of equal lengths.
    pub fn dot_general(
        self,
        other: Tensor<'s>,
        batch: (&[i64], &[i64]),
        contracting: (&[i64], &[i64]),
    ) -> Result<Tensor<'s>> {
        if batch.0.len() != batch.1.len() || contracting.0.len() != contracting.1.len() {
            return Err(invalid(format!(
                "dot_general: lhs/rhs batch axes ({} vs {}) and contracting axes ({} vs {}) \
                 must pair up",
                batch.0.len(),
                batch.1.len(),
                contracting.0.len(),
                contracting.1.len()
            )));
        }
        // SAFETY: the axis arrays have the lengths passed with them.
        self.op(|out| unsafe {
            sys::shp_tensor_dot_general(
                self.raw(),
                other.raw(),
                batch.0.as_ptr(),
                batch.1.as_ptr(),
                batch.0.len(),
                contracting.0.as_ptr(),
                contracting.1.as_ptr(),
                contracting.0.len(),
                out,
            )
        })
    }

    /// `np.argwhere(self)`: the indices of the nonzero elements (any dtype and rank; floats:
    /// `-0.0` is zero and NaN is nonzero; bool: `true`) as an `I64` tensor of shape
    /// `[u, rank]` in row-major order (`shp_tensor_nonzero`). `u` (`shape()?[0]`) is a new
    /// unbacked variable, named `u0`, `u1`, ..., with `0 <= u <= numel(self)`: its value comes
    /// from the data at run time.
    pub fn nonzero(self) -> Result<Tensor<'s>> {
        // SAFETY: the tensor is alive.
        self.op(|out| unsafe { sys::shp_tensor_nonzero(self.raw(), out) })
    }

    /// `self[mask]` along `axis`: the `Bool` `mask` (rank k >= 1) covers axes
    /// `axis..axis+k` (its shape must provably equal theirs); they are replaced by one axis of
    /// length `u`, a new unbacked variable with `0 <= u <= numel(mask)`, holding the slices
    /// whose mask entry is true in row-major order. `axis` may be negative
    /// (`shp_tensor_boolean_mask`).
    pub fn boolean_mask(self, mask: Tensor<'s>, axis: i64) -> Result<Tensor<'s>> {
        // SAFETY: both tensors are alive.
        self.op(|out| unsafe { sys::shp_tensor_boolean_mask(self.raw(), mask.raw(), axis, out) })
    }

    /// A dim whose value is this scalar `I64` tensor, computed by the program (like PyTorch's
    /// `.item()` used as a size): a new unbacked variable named `name` (`None`: `u0`, `u1`,
    /// ...) with the declared range `[min, max]` (`0 <= min <= max`; `i64::MAX`: unbounded).
    /// The engine uses the range as facts; a run whose value falls outside fails with
    /// [`Code::ConstraintViolation`](crate::Code::ConstraintViolation)
    /// (`shp_tensor_size_from_value`).
    pub fn size_from_value(self, name: Option<&str>, min: i64, max: i64) -> Result<Dim<'s>> {
        let n = name.map(|n| cstring(n, "variable name")).transpose()?;
        let np = n.as_ref().map_or(ptr::null(), |n| n.as_ptr());
        let mut out = ptr::null();
        // SAFETY: the tensor is alive; the name is copied.
        check(unsafe { sys::shp_tensor_size_from_value(self.raw(), np, min, max, &mut out) })?;
        Ok(Dim::from_raw(out, self.scope))
    }

    /// ONNX TopK (`torch.topk`): `(values, indices)` of the `k` largest (or smallest)
    /// elements along `axis` (negative: from the end), best first; equal values by the lower
    /// index; NaN is larger than +inf. Indices are `I64`. `k` is a dim with
    /// `0 <= k <= size`, asserted at run time when not provable (a data-dependent `k` must be
    /// checked first); `sorted == false` gives the sorted order too (`shp_tensor_top_k`).
    pub fn top_k(
        self,
        k: Dim<'s>,
        axis: i64,
        largest: bool,
        sorted: bool,
    ) -> Result<(Tensor<'s>, Tensor<'s>)> {
        let (mut v, mut i) = (ptr::null(), ptr::null());
        // SAFETY: the tensor and the dim are alive.
        check(unsafe {
            sys::shp_tensor_top_k(self.raw(), k.raw(), axis, largest, sorted, &mut v, &mut i)
        })?;
        Ok((Tensor::new(v, self.scope), Tensor::new(i, self.scope)))
    }
}

impl fmt::Debug for Tensor<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.shape() {
            Ok(dims) => {
                let dims: Vec<String> = dims.iter().map(|d| d.to_string()).collect();
                write!(f, "Tensor({}[{}])", self.dtype(), dims.join(", "))
            }
            Err(_) => write!(f, "Tensor({})", self.dtype()),
        }
    }
}

/// Tracing: inputs, constants, iota, dim values, and program creation.
impl Scope {
    pub(crate) fn traced(
        &self,
        f: impl FnOnce(*mut *const sys::shp_tensor_t) -> *mut sys::shp_error_t,
    ) -> Result<Tensor<'_>> {
        let mut out = ptr::null();
        check(f(&mut out))?;
        Ok(Tensor::new(out, NonNull::new(self.as_raw()).unwrap()))
    }

    /// A named data input with a shape spec such as `"batch, 784"` (`shp_tensor_input`).
    pub fn input(&self, name: &str, dtype: DType, shape_spec: &str) -> Result<Tensor<'_>> {
        let n = cstring(name, "input name")?;
        let s = cstring(shape_spec, "shape spec")?;
        // SAFETY: valid scope and strings; not retained.
        self.traced(|out| unsafe {
            sys::shp_tensor_input(self.as_raw(), n.as_ptr(), dtype.raw(), s.as_ptr(), out)
        })
    }

    /// A named data input with the shape `dims` (`shp_tensor_input_dims`).
    pub fn input_dims<'s>(
        &'s self,
        name: &str,
        dtype: DType,
        dims: &[Dim<'s>],
    ) -> Result<Tensor<'s>> {
        let n = cstring(name, "input name")?;
        let d = dim_ptrs(dims);
        // SAFETY: `d` has `d.len()` dims.
        self.traced(|out| unsafe {
            sys::shp_tensor_input_dims(
                self.as_raw(),
                n.as_ptr(),
                dtype.raw(),
                d.as_ptr(),
                d.len(),
                out,
            )
        })
    }

    /// A scalar `I64` input named `var_name` giving the value of that dimension variable
    /// (`shp_tensor_dim_input`).
    pub fn dim_input(&self, var_name: &str) -> Result<Tensor<'_>> {
        let n = cstring(var_name, "variable name")?;
        // SAFETY: valid scope and string.
        self.traced(|out| unsafe { sys::shp_tensor_dim_input(self.as_raw(), n.as_ptr(), out) })
    }

    /// A constant of concrete `shape` holding `data` (row-major; copied)
    /// (`shp_tensor_constant`). `shape` `[]` is a scalar. `data.len()` must equal the product
    /// of `shape` (else an error counted in elements, as for [`ArrayView::new`]).
    ///
    /// [`ArrayView::new`]: crate::ArrayView::new
    pub fn constant<T: Element>(&self, shape: &[i64], data: &[T]) -> Result<Tensor<'_>> {
        check_len(shape, data.len())?;
        let nbytes = std::mem::size_of_val(data);
        // SAFETY: `data` is valid for `nbytes` bytes (plain little-endian elements); copied.
        self.traced(|out| unsafe {
            sys::shp_tensor_constant(
                self.as_raw(),
                T::DTYPE.raw(),
                shape.as_ptr(),
                shape.len(),
                data.as_ptr() as *const _,
                nbytes,
                out,
            )
        })
    }

    /// A constant from raw little-endian bytes (`shp_tensor_constant`).
    pub fn constant_bytes(&self, dtype: DType, shape: &[i64], bytes: &[u8]) -> Result<Tensor<'_>> {
        // SAFETY: `bytes` is valid for its length; copied.
        self.traced(|out| unsafe {
            sys::shp_tensor_constant(
                self.as_raw(),
                dtype.raw(),
                shape.as_ptr(),
                shape.len(),
                bytes.as_ptr() as *const _,
                bytes.len(),
                out,
            )
        })
    }

    /// A tensor of shape `dims` counting 0, 1, ... along `axis` (`shp_tensor_iota`).
    pub fn iota<'s>(&'s self, dtype: DType, dims: &[Dim<'s>], axis: i64) -> Result<Tensor<'s>> {
        let d = dim_ptrs(dims);
        // SAFETY: `d` has `d.len()` dims.
        self.traced(|out| unsafe {
            sys::shp_tensor_iota(self.as_raw(), dtype.raw(), d.as_ptr(), d.len(), axis, out)
        })
    }

    /// The value of `dim` as a scalar `I64` tensor (`shp_tensor_dim_value`).
    pub fn dim_value<'s>(&'s self, dim: Dim<'s>) -> Result<Tensor<'s>> {
        // SAFETY: valid scope and dim.
        self.traced(|out| unsafe { sys::shp_tensor_dim_value(self.as_raw(), dim.raw(), out) })
    }

    /// Creates a program computing the named `outputs` from `inputs` (which keep this order
    /// and their names) (`shp_program_create`). The program is independent of the scope.
    pub fn program<'s>(
        &'s self,
        inputs: &[Tensor<'s>],
        outputs: &[(&str, Tensor<'s>)],
    ) -> Result<Program> {
        let ins: Vec<*const sys::shp_tensor_t> = inputs.iter().map(|t| t.raw()).collect();
        let outs: Vec<*const sys::shp_tensor_t> = outputs.iter().map(|o| o.1.raw()).collect();
        let names = CStrings::new(outputs.iter().map(|o| o.0), "output name")?;
        let mut raw = ptr::null_mut();
        // SAFETY: the arrays have the lengths passed with them; nothing is retained.
        check(unsafe {
            sys::shp_program_create(
                self.as_raw(),
                ins.as_ptr(),
                ins.len(),
                outs.as_ptr(),
                names.as_ptr(),
                outs.len(),
                &mut raw,
            )
        })?;
        Ok(Program::from_raw(raw))
    }
}

//! Safe Rust binding of libshapepoly (the C API in `c_api/include/shapepoly/shapepoly.h`).
//!
//! Trace a tensor program **once** with symbolic dimensions, serialize it, then load and run it
//! on any concrete shapes that satisfy its constraints:
//!
//! ```
//! use shapepoly::{ArrayView, DType, Program, Runtime, Scope};
//!
//! # fn main() -> Result<(), shapepoly::Error> {
//! let scope = Scope::new(&["n >= 2"])?;
//! let x = scope.input("x", DType::F32, "n, 3")?;
//! let y = x.exp()?.reduce(shapepoly::ReduceOp::Sum, &[1], false)?;
//! let program = scope.program(&[x], &[("y", y)])?;
//! let bytes = program.serialize()?;
//!
//! let loaded = Program::load(&bytes)?;
//! let mut rt = Runtime::new(&loaded)?;
//! let data = [0.0f32; 6];
//! let out = rt.run(&[("x", &ArrayView::new(&[2, 3], &data)?)])?;
//! assert_eq!(out["y"].as_slice::<f32>()?, &[3.0, 3.0]);
//! # Ok(())
//! # }
//! ```
//!
//! # Use it from your own crate
//! Depend on this crate by path (`shapepoly = { path = ".../bindings/rust/shapepoly" }`) and add
//! a one-line `build.rs` that turns `DEP_SHAPEPOLY_RS_LIB_DIR` (the folder of `libshapepoly.so`
//! this crate linked) into an rpath, so your binaries run without `LD_LIBRARY_PATH`. The
//! library is the clone's `build/lib` (`make lib`) or the folder in `SHAPEPOLY_LIB_DIR`, e.g.
//! `PREFIX/lib` after `make install PREFIX=...`. `bindings/rust/README.md` has the stanza and a
//! complete example.
//!
//! # Design
//! * One wrapper per C handle, one method per C function (plus a few conveniences built only
//!   from them); no shape logic lives here.
//! * Owned handles ([`Scope`], [`Program`], [`Runtime`], [`Array`], [`Bindings`]) release the C
//!   object in `Drop`. Dims and traced tensors are owned by their scope: [`Dim<'s>`] and
//!   [`Tensor<'s>`] are `Copy` handles borrowing the scope, so the borrow checker rejects a dim
//!   that outlives its scope:
//!
//! ```compile_fail,E0597
//! let dim = {
//!     let scope = shapepoly::Scope::new(&[]).unwrap();
//!     scope.dim("2*n").unwrap()
//! }; // error[E0597]: `scope` does not live long enough
//! println!("{}", dim);
//! ```
//!
//! The same holds for traced tensors:
//!
//! ```compile_fail,E0597
//! let x = {
//!     let scope = shapepoly::Scope::new(&[]).unwrap();
//!     scope.input("x", shapepoly::DType::F32, "n").unwrap()
//! }; // error[E0597]: `scope` does not live long enough
//! println!("{:?}", x);
//! ```
//!
//! * Threads: [`Program`] is `Send + Sync` (immutable; many runtimes may run it at once),
//!   [`Runtime`] is `Send` but not `Sync` (one thread at a time), [`Scope`] (and its dims and
//!   tensors) is neither `Send` nor `Sync`:
//!
//! ```compile_fail,E0277
//! fn send<T: Send>(_: T) {}
//! send(shapepoly::Scope::new(&[]).unwrap());
//! ```
//!
//! ```compile_fail,E0277
//! fn send<T: Send>(_: T) {}
//! let scope = shapepoly::Scope::new(&[]).unwrap();
//! send(scope.dim("n").unwrap()); // dims and tensors stay on their scope's thread
//! ```
//!
//! ```compile_fail,E0277
//! fn sync<T: Sync>(_: &T) {}
//! let scope = shapepoly::Scope::new(&[]).unwrap();
//! let x = scope.input("x", shapepoly::DType::F32, "n").unwrap();
//! let program = scope.program(&[x], &[("y", x)]).unwrap();
//! sync(&shapepoly::Runtime::new(&program).unwrap());
//! ```
//!
//! ```
//! fn send_sync<T: Send + Sync>(_: &T) {}
//! fn send<T: Send>(_: &T) {}
//! let scope = shapepoly::Scope::new(&[]).unwrap();
//! let x = scope.input("x", shapepoly::DType::F32, "n").unwrap();
//! let program = scope.program(&[x], &[("y", x)]).unwrap();
//! send_sync(&program);
//! send(&shapepoly::Runtime::new(&program).unwrap());
//! ```
//!
//! * Dim arithmetic can fail (overflow, dims of two scopes), so the operators `+ - *` and unary
//!   `-` on [`Dim`] (and between a `Dim` and an `i64`) return `Result<Dim>`, never panic:
//!   write `((n * 2)? + 1)?`, or parse the expression: `scope.dim("2*n + 1")?`. `==` on dims
//!   is identity of the interned normal form; semantic comparison is [`Dim::compare`], which
//!   returns the three-valued [`Truth`].
//! * Code that branches on shapes: [`Dim::guard`] decides an undecidable comparison on the
//!   hints ([`Scope::set_hint`]) and records a guard that runs check ([`Code::GuardFailed`]);
//!   [`GuardPolicy::FromHints`] lets ops do the same. Or trace each branch under
//!   [`Scope::assume`] and combine them with [`Program::create_variants`]: the runtime runs the
//!   first variant whose guards hold ([`Runtime::last_variant`]).
//! * Compiled functions: [`Function`] wraps a trace closure and traces it again only when a
//!   call's shapes fit no variant (automatic dynamic shapes, [`Stance`]s, an event log), then
//!   [`Function::export`]s the variants as one [`Program`].
//! * What a program costs for every shape: [`Program::cost`] gives a formula per [`CostKind`]
//!   (FLOPs, bytes accessed, peak bytes, parameter bytes), [`Program::cost_bounds`] its sound
//!   bounds under the constraints, [`Runtime::cost`] the number for concrete shapes;
//!   [`Program::to_dot`] draws the program as a Graphviz graph.
//! * Control flow: [`Scope::cond`], [`Scope::while_loop`] and [`Scope::scan`] trace closures
//!   over flat lists of tensors into subprograms (as `jax.lax` does); tensors a closure uses
//!   from the enclosing trace become operands of the op automatically.
//! * Sizes that come from the data: [`Tensor::nonzero`], [`Tensor::boolean_mask`] and
//!   [`Tensor::size_from_value`] make unbacked variables with sound bounds; branching on one
//!   needs a [`Scope::check`], which the runtime enforces once the value is known. A dry run
//!   reports such a dim as -1 and [`Runtime::output_dim_bounds`] bounds it.
//! * Errors are [`Error`] values with a non-exhaustive [`Code`] and the library's message; an
//!   undecided comparison's error also carries [`Witness`]es and verified fixes
//!   ([`Error::witnesses`], [`Error::fixes`]).
//! * The first [`Scope`], [`Program`] or [`Array`] checks that the loaded library's
//!   `shp_abi_version()` equals [`ABI_VERSION`], failing with [`Code::VersionMismatch`].

pub use shapepoly_sys as sys;

mod array;
mod autodiff;
mod control_flow;
mod error;
mod float16;
mod function;
mod guards;
mod nn;
mod program;
mod runtime;
mod scope;
mod tensor;
mod tensor_ops; // generated by tools/gen_ops.py from cc/ops/ops.toml
mod util;

pub use array::{Array, ArrayMut, ArrayRef, ArrayView, ArrayViewMut, Element};
pub use error::{Code, Error, Result, Witness};
pub use float16::{Bf16, F16};
pub use function::{DynamicMode, Function, FunctionOptions, Stance};
pub use guards::{Guard, GuardPolicy};
pub use nn::{AutoPad, ConvOptions, DepthToSpaceMode, PadMode, PoolOptions, ReduceWindowOptions};
pub use program::{
    Assertion, CostKind, InputInfo, InputRole, LoadOptions, OutputInfo, OutputRole, Program,
};
pub use runtime::{OutputDimBounds, Outputs, Runtime, RuntimeOptions};
pub use scope::{Bindings, Cmp, Dim, Scope, Truth, Variable};
pub use tensor::{BinaryOp, DType, ReduceOp, Tensor, UnaryOp};

use std::sync::OnceLock;

/// The C ABI generation this binding was built for (`SHP_ABI_VERSION`).
pub const ABI_VERSION: i32 = sys::SHP_ABI_VERSION;

/// The version of the loaded library, e.g. `"0.1.0"` (`shp_version_string`).
pub fn version() -> &'static str {
    // SAFETY: takes no arguments; returns a static string.
    util::static_str(unsafe { sys::shp_version_string() })
}

/// The ABI generation of the loaded library (`shp_abi_version`).
pub fn abi_version() -> i32 {
    // SAFETY: takes no arguments.
    unsafe { sys::shp_abi_version() }
}

/// The newest program schema version the loaded library reads and writes
/// (`shp_program_schema_version`).
pub fn schema_version() -> i32 {
    // SAFETY: takes no arguments.
    unsafe { sys::shp_program_schema_version() }
}

/// The Highway SIMD target the kernels dispatch to on this CPU, e.g. `"AVX2"`
/// (`shp_simd_target`).
pub fn simd_target() -> &'static str {
    // SAFETY: takes no arguments; returns a static string.
    util::static_str(unsafe { sys::shp_simd_target() })
}

/// Makes every kernel dispatch to exactly the SIMD target `name` (`"AVX2"`, `"SSE4"`, ...);
/// `None` or `"best"` lifts the cap. Process-wide (`shp_set_simd_target`; also the
/// `SHP_SIMD_TARGET` environment variable).
pub fn set_simd_target(name: Option<&str>) -> Result<()> {
    let name = name.map(|n| util::cstring(n, "name")).transpose()?;
    let p = name.as_ref().map_or(std::ptr::null(), |n| n.as_ptr());
    // SAFETY: `p` is NULL or a NUL-terminated string alive during the call; not retained.
    error::check(unsafe { sys::shp_set_simd_target(p) })
}

/// Sums floats with the SIMD kernel, accumulating in double (`shp_simd_sum_f32`).
pub fn simd_sum_f32(data: &[f32]) -> Result<f32> {
    let mut sum = 0f32;
    // SAFETY: `data` is valid for `data.len()` floats during the call; not retained.
    error::check(unsafe { sys::shp_simd_sum_f32(data.as_ptr(), data.len(), &mut sum) })?;
    Ok(sum)
}

/// Compares the loaded library's ABI with the one this binding was built for (once per
/// process); every root constructor calls it.
pub(crate) fn ensure_abi() -> Result<()> {
    static ABI: OnceLock<Result<()>> = OnceLock::new();
    ABI.get_or_init(|| abi_check(abi_version(), ABI_VERSION))
        .clone()
}

fn abi_check(loaded: i32, built: i32) -> Result<()> {
    if loaded == built {
        Ok(())
    } else {
        Err(Error::new(
            Code::VersionMismatch,
            format!(
                "libshapepoly.so {} has ABI version {}, but this Rust binding was built for ABI \
                 version {}: rebuild the binding against the installed library (or install the \
                 matching library)",
                version(),
                loaded,
                built
            ),
        ))
    }
}

/// The ```rust blocks of the repository's README.md and of bindings/rust/README.md, run as
/// doctests (extracted by build.rs).
#[cfg(doctest)]
#[doc = include_str!(concat!(env!("OUT_DIR"), "/readme_rust.md"))]
pub struct ReadmeDoctests;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn abi_mismatch_is_a_clear_error() {
        assert!(abi_check(ABI_VERSION, ABI_VERSION).is_ok());
        let err = abi_check(ABI_VERSION + 1, ABI_VERSION).unwrap_err();
        assert_eq!(err.code(), Code::VersionMismatch);
        assert!(
            err.message()
                .contains(&format!("ABI version {}", ABI_VERSION + 1)),
            "{}",
            err
        );
        assert!(ensure_abi().is_ok());
    }

    #[test]
    fn version_and_simd() {
        assert_eq!(version(), sys::SHP_VERSION_STRING);
        assert_eq!(abi_version(), ABI_VERSION);
        assert!(schema_version() >= 1);
        assert!(!simd_target().is_empty());
        assert_eq!(simd_sum_f32(&[1e8, 1.0, -1e8]).unwrap(), 1.0);
        assert_eq!(simd_sum_f32(&[]).unwrap(), 0.0);
    }

    #[test]
    fn codes_round_trip() {
        for raw in 1..=18 {
            let c = Code::from_raw(raw);
            assert!(!matches!(c, Code::Unknown(_)), "{}", raw);
            assert_eq!(c.raw(), raw);
            assert!(c.description().starts_with("SHP_"), "{}", c.description());
        }
        assert_eq!(Code::from_raw(999), Code::Unknown(999));
        assert_eq!(Code::Unknown(999).raw(), 999);
        assert_eq!(Code::Unknown(999).to_string(), "unknown error code 999");
    }
}

//! Errors: every fallible function returns `Result<T, Error>`; an [`Error`] carries the C
//! error's code, message, witnesses and fixes (copied, then the C error object is destroyed).
use std::ffi::CStr;
use std::fmt;

use crate::sys;

/// `Result` with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// The code of an [`Error`]: the C API's `shp_code_t`.
///
/// Non-exhaustive: new codes may be appended by later library versions; a code this binding
/// does not know arrives as [`Code::Unknown`] with its raw value.
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Code {
    /// A NULL, out-of-range or otherwise invalid argument (also: a Rust string with a NUL byte,
    /// or slices whose lengths do not match).
    InvalidArgument,
    /// Text (e.g. a dimension expression) could not be parsed.
    ParseError,
    /// A symbolic comparison could not be decided.
    Inconclusive,
    /// Objects from different scopes were combined.
    ScopeMismatch,
    /// The constraints of a scope admit no assignment.
    Unsatisfiable,
    /// Shapes are incompatible (symbolically or concretely).
    ShapeMismatch,
    /// Concrete shapes violate a constraint or assertion.
    ConstraintViolation,
    /// Dimension variables cannot be solved from the inputs.
    Unsolvable,
    /// A dimension expression divides by zero.
    DivisionByZero,
    /// A dimension value or size overflows i64.
    Overflow,
    /// Element types are incompatible.
    DtypeMismatch,
    /// A named input, output, symbol (or file) does not exist.
    NotFound,
    /// A serialized program is malformed or fails verification.
    InvalidProgram,
    /// A serialized program needs a newer library, or the loaded library's ABI differs from
    /// the one this binding was built for.
    VersionMismatch,
    /// A valid request that this build does not support.
    Unsupported,
    /// An allocation failed.
    OutOfMemory,
    /// A bug in libshapepoly (or an I/O failure in this binding).
    Internal,
    /// Concrete shapes violate a guard (recorded from hints or assumed), or no variant of a
    /// multi-variant program applies; the message names each failing guard and the values.
    GuardFailed,
    /// A code this binding does not know (added by a newer library).
    Unknown(i32),
}

impl Code {
    /// The code for a raw `shp_code_t` value.
    pub fn from_raw(code: i32) -> Code {
        match code {
            sys::SHP_INVALID_ARGUMENT => Code::InvalidArgument,
            sys::SHP_PARSE_ERROR => Code::ParseError,
            sys::SHP_INCONCLUSIVE => Code::Inconclusive,
            sys::SHP_SCOPE_MISMATCH => Code::ScopeMismatch,
            sys::SHP_UNSATISFIABLE => Code::Unsatisfiable,
            sys::SHP_SHAPE_MISMATCH => Code::ShapeMismatch,
            sys::SHP_CONSTRAINT_VIOLATION => Code::ConstraintViolation,
            sys::SHP_UNSOLVABLE => Code::Unsolvable,
            sys::SHP_DIVISION_BY_ZERO => Code::DivisionByZero,
            sys::SHP_OVERFLOW => Code::Overflow,
            sys::SHP_DTYPE_MISMATCH => Code::DtypeMismatch,
            sys::SHP_NOT_FOUND => Code::NotFound,
            sys::SHP_INVALID_PROGRAM => Code::InvalidProgram,
            sys::SHP_VERSION_MISMATCH => Code::VersionMismatch,
            sys::SHP_UNSUPPORTED => Code::Unsupported,
            sys::SHP_OUT_OF_MEMORY => Code::OutOfMemory,
            sys::SHP_INTERNAL => Code::Internal,
            sys::SHP_GUARD_FAILED => Code::GuardFailed,
            other => Code::Unknown(other),
        }
    }

    /// The raw `shp_code_t` value.
    pub fn raw(self) -> i32 {
        match self {
            Code::InvalidArgument => sys::SHP_INVALID_ARGUMENT,
            Code::ParseError => sys::SHP_PARSE_ERROR,
            Code::Inconclusive => sys::SHP_INCONCLUSIVE,
            Code::ScopeMismatch => sys::SHP_SCOPE_MISMATCH,
            Code::Unsatisfiable => sys::SHP_UNSATISFIABLE,
            Code::ShapeMismatch => sys::SHP_SHAPE_MISMATCH,
            Code::ConstraintViolation => sys::SHP_CONSTRAINT_VIOLATION,
            Code::Unsolvable => sys::SHP_UNSOLVABLE,
            Code::DivisionByZero => sys::SHP_DIVISION_BY_ZERO,
            Code::Overflow => sys::SHP_OVERFLOW,
            Code::DtypeMismatch => sys::SHP_DTYPE_MISMATCH,
            Code::NotFound => sys::SHP_NOT_FOUND,
            Code::InvalidProgram => sys::SHP_INVALID_PROGRAM,
            Code::VersionMismatch => sys::SHP_VERSION_MISMATCH,
            Code::Unsupported => sys::SHP_UNSUPPORTED,
            Code::OutOfMemory => sys::SHP_OUT_OF_MEMORY,
            Code::Internal => sys::SHP_INTERNAL,
            Code::GuardFailed => sys::SHP_GUARD_FAILED,
            Code::Unknown(v) => v,
        }
    }

    /// The library's fixed text of the code (`shp_code_string`), e.g.
    /// `"SHP_INVALID_ARGUMENT: invalid argument"`.
    pub fn description(self) -> &'static str {
        // SAFETY: shp_code_string accepts any value and returns a static NUL-terminated string.
        unsafe { CStr::from_ptr(sys::shp_code_string(self.raw())) }
            .to_str()
            .unwrap_or("")
    }
}

impl fmt::Display for Code {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Code::Unknown(v) => write!(f, "unknown error code {}", v),
            other => write!(f, "{:?}", other),
        }
    }
}

/// One concrete valuation explaining an undecided comparison (see [`Error::witnesses`]): it
/// satisfies every fact of the scope and makes the comparison true (`holds`) or false.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Witness {
    /// Whether these values make the comparison true.
    pub holds: bool,
    /// `(variable, value)` for the variables of the comparison and those sharing a fact with
    /// them, in the scope's variable order.
    pub values: Vec<(String, i64)>,
}

impl Witness {
    /// The value this witness gives variable `name`, if it names it.
    pub fn value(&self, name: &str) -> Option<i64> {
        self.values.iter().find(|(n, _)| n == name).map(|&(_, v)| v)
    }
}

/// An error from libshapepoly (or from this binding's argument checks): a [`Code`] and the
/// library's message, which names the offending argument, input, axis or constraint. An
/// [`Code::Inconclusive`] error from an undecided comparison also carries [`Witness`]es and
/// verified fixes, copied out of the C error before it is destroyed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    code: Code,
    message: String,
    witnesses: Vec<Witness>,
    fixes: Vec<String>,
}

impl Error {
    /// An error made by the binding itself (argument checks before calling C, I/O).
    pub fn new(code: Code, message: impl Into<String>) -> Error {
        Error {
            code,
            message: message.into(),
            witnesses: Vec::new(),
            fixes: Vec::new(),
        }
    }

    /// The witnesses of an undecided comparison (`shp_error_witness_*`): up to two valuations
    /// satisfying every fact, the one making the comparison true first (when found), then one
    /// making it false. Empty for other errors.
    pub fn witnesses(&self) -> &[Witness] {
        &self.witnesses
    }

    /// Verified fixes, one sentence each (`shp_error_fix_count`, `shp_error_fix`), e.g.
    /// `"add the constraint 'n >= 8' when creating the scope"`: each was checked to decide the
    /// comparison without making the facts unsatisfiable. A run-time constraint violation may
    /// list the smallest change of one input dimension. Empty for other errors.
    pub fn fixes(&self) -> &[String] {
        &self.fixes
    }

    /// The error's code.
    pub fn code(&self) -> Code {
        self.code
    }

    /// The error's message, exactly as the library wrote it.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.code, self.message)
    }
}

impl std::error::Error for Error {}

/// Turns a C error into a `Result`: NULL is `Ok(())`; otherwise copies the code and message,
/// then destroys the C error (so it is never leaked and never used twice).
pub(crate) fn check(err: *mut sys::shp_error_t) -> Result<()> {
    if err.is_null() {
        return Ok(());
    }
    // SAFETY: `err` is an owned error object returned by the library; it is destroyed once,
    // after its message (borrowed from it) has been copied.
    unsafe {
        let code = Code::from_raw(sys::shp_error_code(err));
        let message = owned(sys::shp_error_message(err));
        let witnesses = (0..sys::shp_error_witness_count(err))
            .map(|i| Witness {
                holds: sys::shp_error_witness_holds(err, i),
                values: (0..sys::shp_error_witness_variable_count(err, i))
                    .map(|j| {
                        (
                            owned(sys::shp_error_witness_variable_name(err, i, j)),
                            sys::shp_error_witness_variable_value(err, i, j),
                        )
                    })
                    .collect(),
            })
            .collect();
        let fixes = (0..sys::shp_error_fix_count(err))
            .map(|i| owned(sys::shp_error_fix(err, i)))
            .collect();
        sys::shp_error_destroy(err);
        Err(Error {
            code,
            message,
            witnesses,
            fixes,
        })
    }
}

/// A copy of a string borrowed from a C error; NULL (an index the error does not have) is "".
///
/// # Safety
/// `p` is NULL or a NUL-terminated string alive during the call.
unsafe fn owned(p: *const std::os::raw::c_char) -> String {
    if p.is_null() {
        return String::new();
    }
    CStr::from_ptr(p).to_string_lossy().into_owned()
}

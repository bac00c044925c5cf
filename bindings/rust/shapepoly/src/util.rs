//! Helpers for strings and out-params crossing the C boundary.
use std::ffi::{CStr, CString};
use std::os::raw::c_char;

use crate::error::{check, Code, Error, Result};
use crate::sys;

/// A NUL-terminated copy of `s`; an interior NUL is an InvalidArgument error naming `what`.
pub(crate) fn cstring(s: &str, what: &str) -> Result<CString> {
    CString::new(s).map_err(|_| {
        Error::new(
            Code::InvalidArgument,
            format!("{} {:?} contains a NUL byte", what, s),
        )
    })
}

/// NUL-terminated copies of `items` plus the pointer array C expects.
pub(crate) struct CStrings {
    _owned: Vec<CString>,
    pub(crate) ptrs: Vec<*const c_char>,
}

impl CStrings {
    pub(crate) fn new<'a>(
        items: impl IntoIterator<Item = &'a str>,
        what: &str,
    ) -> Result<CStrings> {
        let owned = items
            .into_iter()
            .map(|s| cstring(s, what))
            .collect::<Result<Vec<_>>>()?;
        let ptrs = owned.iter().map(|c| c.as_ptr()).collect();
        Ok(CStrings {
            _owned: owned,
            ptrs,
        })
    }

    pub(crate) fn as_ptr(&self) -> *const *const c_char {
        self.ptrs.as_ptr()
    }
}

/// Copies a borrowed C string (NULL gives None).
///
/// # Safety
/// `p` is NULL or a valid NUL-terminated string.
pub(crate) unsafe fn opt_string(p: *const c_char) -> Option<String> {
    if p.is_null() {
        None
    } else {
        Some(CStr::from_ptr(p).to_string_lossy().into_owned())
    }
}

/// Copies a static C string of the library.
pub(crate) fn static_str(p: *const c_char) -> &'static str {
    if p.is_null() {
        return "";
    }
    // SAFETY: the library documents these strings as static and NUL-terminated.
    unsafe { CStr::from_ptr(p) }.to_str().unwrap_or("")
}

/// Reads a string written snprintf-style by `f(buf, cap, len_out)`: a first call sizes it.
pub(crate) fn read_string(
    mut f: impl FnMut(*mut c_char, usize, *mut usize) -> *mut sys::shp_error_t,
) -> Result<String> {
    let mut len = 0usize;
    check(f(std::ptr::null_mut(), 0, &mut len))?;
    let mut buf = vec![0u8; len + 1];
    let mut len2 = 0usize;
    check(f(buf.as_mut_ptr() as *mut c_char, buf.len(), &mut len2))?;
    buf.truncate(len2.min(len));
    Ok(String::from_utf8_lossy(&buf).into_owned())
}

/// Reads `rank` items written by `f(out, cap, rank_out)`: a first call sizes it.
pub(crate) fn read_vec<T: Copy>(
    fill: T,
    mut f: impl FnMut(*mut T, usize, *mut usize) -> *mut sys::shp_error_t,
) -> Result<Vec<T>> {
    let mut rank = 0usize;
    check(f(std::ptr::null_mut(), 0, &mut rank))?;
    let mut out = vec![fill; rank];
    let mut rank2 = 0usize;
    check(f(out.as_mut_ptr(), out.len(), &mut rank2))?;
    out.truncate(rank2.min(rank));
    Ok(out)
}

/// An InvalidArgument error made by the binding.
pub(crate) fn invalid(message: impl Into<String>) -> Error {
    Error::new(Code::InvalidArgument, message)
}

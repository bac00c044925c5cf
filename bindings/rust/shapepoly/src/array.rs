//! Arrays: concrete n-d data passed to and returned by the runtime (`shp_array_t`).
use std::any::Any;
use std::fmt;
use std::marker::PhantomData;
use std::ptr::{self, NonNull};

use crate::error::{check, Code, Error, Result};
use crate::float16::{Bf16, F16};
use crate::sys;
use crate::tensor::DType;

mod private {
    pub trait Sealed {}
}

/// A Rust element type with a libshapepoly dtype: `f32`, `f64`, `i32`, `i64`, `bool`
/// (one byte, 0 or 1), [`F16`], [`Bf16`] (their 16 bits), `i8`, `u8`, `i16`, `u16`, `u32`,
/// `u64`. Each type has exactly one dtype: `u16` is `U16`, never the bits of a 16-bit float
/// (wrap those as [`F16::from_bits`] or [`Bf16::from_bits`]). Sealed.
///
/// # Safety
/// Implemented only in this crate, for plain types whose bytes the library reads and writes.
pub unsafe trait Element: Copy + Send + Sync + 'static + private::Sealed {
    /// The matching dtype.
    const DTYPE: DType;
    /// Whether `bytes` (a whole number of elements written by the library) are valid values.
    #[doc(hidden)]
    fn valid_bytes(_bytes: &[u8]) -> bool {
        true
    }
}

macro_rules! element {
    ($($t:ty => $d:ident),*) => {$(
        impl private::Sealed for $t {}
        // SAFETY: every bit pattern is a valid value.
        unsafe impl Element for $t { const DTYPE: DType = DType::$d; }
    )*};
}
element!(
    f32 => F32, f64 => F64, i32 => I32, i64 => I64, F16 => F16, Bf16 => Bf16, i8 => I8,
    u8 => U8, i16 => I16, u16 => U16, u32 => U32, u64 => U64
);

impl private::Sealed for bool {}
// SAFETY: bytes are validated (0 or 1) before they are viewed as `bool`.
unsafe impl Element for bool {
    const DTYPE: DType = DType::Bool;
    fn valid_bytes(bytes: &[u8]) -> bool {
        bytes.iter().all(|&b| b <= 1)
    }
}

/// Anything that can be passed to the runtime as an array: [`Array`], [`ArrayView`],
/// [`ArrayViewMut`]. Sealed.
pub trait ArrayRef: private::Sealed {
    /// The raw handle, valid while `self` is borrowed.
    fn as_raw_array(&self) -> *const sys::shp_array_t;

    /// The element type (`shp_array_dtype`).
    fn dtype(&self) -> DType {
        // SAFETY: valid handle.
        DType::from_raw(unsafe { sys::shp_array_dtype(self.as_raw_array()) })
    }

    /// The shape (`shp_array_rank`, `shp_array_shape`).
    fn shape(&self) -> Vec<i64> {
        // SAFETY: valid handle; the shape is borrowed from it and copied.
        unsafe { raw_shape(self.as_raw_array()).to_vec() }
    }

    /// The size in bytes (`shp_array_nbytes`).
    fn nbytes(&self) -> usize {
        // SAFETY: valid handle.
        unsafe { sys::shp_array_nbytes(self.as_raw_array()) }
    }
}

/// Arrays the runtime may write into ([`Array`], [`ArrayViewMut`]).
pub trait ArrayMut: ArrayRef {}

/// # Safety
/// `a` is a valid array handle; the result borrows it.
unsafe fn raw_shape<'a>(a: *const sys::shp_array_t) -> &'a [i64] {
    let rank = sys::shp_array_rank(a);
    let p = sys::shp_array_shape(a);
    if rank == 0 || p.is_null() {
        &[]
    } else {
        std::slice::from_raw_parts(p, rank)
    }
}

/// # Safety
/// `a` is a valid array handle whose data is not written during `'a`.
unsafe fn raw_bytes<'a>(a: *const sys::shp_array_t) -> &'a [u8] {
    let n = sys::shp_array_nbytes(a);
    let p = sys::shp_array_data(a) as *const u8;
    if n == 0 || p.is_null() {
        &[]
    } else {
        std::slice::from_raw_parts(p, n)
    }
}

fn typed_check<T: Element>(a: *const sys::shp_array_t) -> Result<()> {
    // SAFETY: valid handle.
    let d = DType::from_raw(unsafe { sys::shp_array_dtype(a) });
    if d != T::DTYPE {
        return Err(Error::new(
            Code::DtypeMismatch,
            format!("the array has dtype {}, not {}", d, T::DTYPE),
        ));
    }
    // SAFETY: valid handle.
    let p = unsafe { sys::shp_array_data(a) } as usize;
    if !p.is_multiple_of(std::mem::align_of::<T>()) {
        return Err(Error::new(
            Code::InvalidArgument,
            format!("the array's data is not aligned for {}", T::DTYPE),
        ));
    }
    Ok(())
}

/// Checks that `given` elements fill `shape`, with an error in elements ("6 elements given,
/// shape (2, 4) needs 8"), not in the bytes the C API counts. A negative or overflowing shape
/// passes through to the library, whose error names it.
pub(crate) fn check_len(shape: &[i64], given: usize) -> Result<()> {
    let needed = shape
        .iter()
        .try_fold(1i64, |n, &d| if d < 0 { None } else { n.checked_mul(d) });
    match needed {
        Some(n) if n as u64 != given as u64 => Err(Error::new(
            Code::InvalidArgument,
            format!(
                "{} element{} given, shape {} needs {}",
                given,
                if given == 1 { "" } else { "s" },
                shape_text(shape),
                n
            ),
        )),
        _ => Ok(()),
    }
}

/// A concrete shape as the library writes it: `()`, `(4,)`, `(2, 4)`.
fn shape_text(shape: &[i64]) -> String {
    let dims: Vec<String> = shape.iter().map(|d| d.to_string()).collect();
    if dims.len() == 1 {
        format!("({},)", dims[0])
    } else {
        format!("({})", dims.join(", "))
    }
}

/// # Safety
/// `data` is valid for `nbytes` bytes for as long as the returned array exists.
unsafe fn wrap(
    dtype: DType,
    shape: &[i64],
    data: *mut u8,
    nbytes: usize,
) -> Result<NonNull<sys::shp_array_t>> {
    crate::ensure_abi()?;
    let mut raw = ptr::null_mut();
    check(sys::shp_array_wrap(
        dtype.raw(),
        shape.as_ptr(),
        shape.len(),
        data as *mut _,
        nbytes,
        &mut raw,
    ))?;
    Ok(NonNull::new(raw).expect("shp_array_wrap returned NULL"))
}

/// An owned array (`shp_array_t`): memory allocated by the library ([`Array::zeros`], outputs
/// of [`Runtime::run`](crate::Runtime::run)) or a `Vec` it took over ([`Array::from_vec`],
/// zero-copy). Destroyed on drop.
pub struct Array {
    raw: NonNull<sys::shp_array_t>,
    // Keeps a wrapped Vec alive (its heap buffer does not move with the Box).
    _owner: Option<Box<dyn Any + Send + Sync>>,
}

// SAFETY: the array owns (or exclusively holds) its memory; `&self` only reads, `&mut self`
// writes, as for a Vec.
unsafe impl Send for Array {}
// SAFETY: as above.
unsafe impl Sync for Array {}

impl Array {
    pub(crate) fn from_raw(raw: *mut sys::shp_array_t) -> Array {
        Array {
            raw: NonNull::new(raw).expect("libshapepoly returned a NULL array"),
            _owner: None,
        }
    }

    /// The raw handle (still owned by this array).
    pub fn as_raw(&self) -> *mut sys::shp_array_t {
        self.raw.as_ptr()
    }

    /// A zero-filled array of `dtype` and `shape`, 64-byte aligned (`shp_array_create`).
    pub fn zeros(dtype: DType, shape: &[i64]) -> Result<Array> {
        crate::ensure_abi()?;
        let mut raw = ptr::null_mut();
        // SAFETY: `shape` has `shape.len()` dims; copied.
        check(unsafe {
            sys::shp_array_create(dtype.raw(), shape.as_ptr(), shape.len(), &mut raw)
        })?;
        Ok(Array::from_raw(raw))
    }

    /// An array of `shape` that takes over `data` without copying (`shp_array_wrap`);
    /// `data.len()` must equal the product of `shape`.
    pub fn from_vec<T: Element>(shape: &[i64], mut data: Vec<T>) -> Result<Array> {
        check_len(shape, data.len())?;
        let nbytes = std::mem::size_of_val(&data[..]);
        // SAFETY: the Vec's buffer is kept alive (and not reallocated) by `_owner`.
        let raw = unsafe { wrap(T::DTYPE, shape, data.as_mut_ptr() as *mut u8, nbytes)? };
        Ok(Array {
            raw,
            _owner: Some(Box::new(data)),
        })
    }

    /// An array of `shape` holding a copy of `data`.
    pub fn from_slice<T: Element>(shape: &[i64], data: &[T]) -> Result<Array> {
        Array::from_vec(shape, data.to_vec())
    }

    /// A rank-0 array holding `value` (e.g. the value of a dimension input, as `i64`).
    pub fn scalar<T: Element>(value: T) -> Result<Array> {
        Array::from_vec(&[], vec![value])
    }

    /// The element type (`shp_array_dtype`).
    pub fn dtype(&self) -> DType {
        ArrayRef::dtype(self)
    }

    /// The shape, borrowed (`shp_array_rank`, `shp_array_shape`).
    pub fn shape(&self) -> &[i64] {
        // SAFETY: borrowed from the array while `self` is borrowed.
        unsafe { raw_shape(self.as_raw()) }
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        self.shape().iter().product::<i64>() as usize
    }

    /// True if the array has no elements.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The raw bytes (`shp_array_data`, `shp_array_nbytes`).
    pub fn as_bytes(&self) -> &[u8] {
        // SAFETY: no writer while `self` is shared.
        unsafe { raw_bytes(self.as_raw()) }
    }

    /// The elements, if `T` matches the dtype (else [`Code::DtypeMismatch`]).
    pub fn as_slice<T: Element>(&self) -> Result<&[T]> {
        typed_check::<T>(self.as_raw())?;
        let bytes = self.as_bytes();
        if !T::valid_bytes(bytes) {
            return Err(Error::new(
                Code::InvalidArgument,
                "the array holds bool bytes other than 0 and 1",
            ));
        }
        let n = bytes.len() / std::mem::size_of::<T>();
        if n == 0 {
            return Ok(&[]);
        }
        // SAFETY: dtype, alignment, size and (for bool) values were checked.
        Ok(unsafe { std::slice::from_raw_parts(bytes.as_ptr() as *const T, n) })
    }

    /// The elements, mutable, if `T` matches the dtype.
    pub fn as_mut_slice<T: Element>(&mut self) -> Result<&mut [T]> {
        let n = self.as_slice::<T>()?.len();
        if n == 0 {
            return Ok(&mut []);
        }
        // SAFETY: as in as_slice, and `&mut self` is exclusive.
        Ok(unsafe {
            std::slice::from_raw_parts_mut(sys::shp_array_data(self.as_raw()) as *mut T, n)
        })
    }

    /// A copy of the elements.
    pub fn to_vec<T: Element>(&self) -> Result<Vec<T>> {
        self.as_slice::<T>().map(|s| s.to_vec())
    }
}

impl Drop for Array {
    fn drop(&mut self) {
        // SAFETY: owned; a wrapped Vec is dropped after this (field order).
        unsafe { sys::shp_array_destroy(self.raw.as_ptr()) }
    }
}

impl private::Sealed for Array {}
impl ArrayRef for Array {
    fn as_raw_array(&self) -> *const sys::shp_array_t {
        self.as_raw()
    }
}
impl ArrayMut for Array {}

impl fmt::Debug for Array {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Array({}{:?})", self.dtype(), self.shape())
    }
}

/// A read-only, zero-copy view of Rust data as an array (`shp_array_wrap`), for inputs.
pub struct ArrayView<'a> {
    raw: NonNull<sys::shp_array_t>,
    _data: PhantomData<&'a [u8]>,
}

// SAFETY: views shared, immutable data of Sync element types.
unsafe impl Send for ArrayView<'_> {}
// SAFETY: as above.
unsafe impl Sync for ArrayView<'_> {}

impl<'a> ArrayView<'a> {
    /// Views `data` with `shape`; `data.len()` must equal the product of `shape`.
    ///
    /// A length that does not match is [`Code::InvalidArgument`], counted in elements:
    ///
    /// ```
    /// let err = shapepoly::ArrayView::new(&[2, 4], &[0.0f32; 6]).unwrap_err();
    /// assert_eq!(err.message(), "6 elements given, shape (2, 4) needs 8");
    /// ```
    pub fn new<T: Element>(shape: &[i64], data: &'a [T]) -> Result<ArrayView<'a>> {
        check_len(shape, data.len())?;
        // SAFETY: `data` outlives the view ('a); the library never writes an input array, and
        // this view is only ever passed as an input.
        let raw = unsafe {
            wrap(
                T::DTYPE,
                shape,
                data.as_ptr() as *mut u8,
                std::mem::size_of_val(data),
            )?
        };
        Ok(ArrayView {
            raw,
            _data: PhantomData,
        })
    }

    /// A rank-0 view of one value.
    pub fn scalar<T: Element>(value: &'a T) -> Result<ArrayView<'a>> {
        ArrayView::new(&[], std::slice::from_ref(value))
    }
}

impl Drop for ArrayView<'_> {
    fn drop(&mut self) {
        // SAFETY: owned handle; does not free the borrowed data.
        unsafe { sys::shp_array_destroy(self.raw.as_ptr()) }
    }
}

impl private::Sealed for ArrayView<'_> {}
impl ArrayRef for ArrayView<'_> {
    fn as_raw_array(&self) -> *const sys::shp_array_t {
        self.raw.as_ptr()
    }
}

impl fmt::Debug for ArrayView<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ArrayView({}{:?})", self.dtype(), self.shape())
    }
}

/// A zero-copy view of mutable Rust data as an array (`shp_array_wrap`), for the outputs of
/// [`Runtime::run_into`](crate::Runtime::run_into).
pub struct ArrayViewMut<'a> {
    raw: NonNull<sys::shp_array_t>,
    _data: PhantomData<&'a mut [u8]>,
}

// SAFETY: exclusive access to data of Send element types.
unsafe impl Send for ArrayViewMut<'_> {}

impl<'a> ArrayViewMut<'a> {
    /// Views `data` with `shape`; `data.len()` must equal the product of `shape` (else an
    /// error counted in elements, as for [`ArrayView::new`]). Not for
    /// `bool` (the library's bool bytes are only validated when read through [`Array`]): use
    /// an [`Array`] of dtype `Bool` as the output instead.
    pub fn new<T: Element>(shape: &[i64], data: &'a mut [T]) -> Result<ArrayViewMut<'a>> {
        if T::DTYPE == DType::Bool {
            return Err(Error::new(
                Code::InvalidArgument,
                "ArrayViewMut cannot view bool data: use Array::zeros(DType::Bool, shape)",
            ));
        }
        check_len(shape, data.len())?;
        // SAFETY: `data` is exclusively borrowed for 'a; every bit pattern is a valid value
        // of the (non-bool) element type.
        let raw = unsafe {
            wrap(
                T::DTYPE,
                shape,
                data.as_mut_ptr() as *mut u8,
                std::mem::size_of_val(data),
            )?
        };
        Ok(ArrayViewMut {
            raw,
            _data: PhantomData,
        })
    }
}

impl Drop for ArrayViewMut<'_> {
    fn drop(&mut self) {
        // SAFETY: owned handle; does not free the borrowed data.
        unsafe { sys::shp_array_destroy(self.raw.as_ptr()) }
    }
}

impl private::Sealed for ArrayViewMut<'_> {}
impl ArrayRef for ArrayViewMut<'_> {
    fn as_raw_array(&self) -> *const sys::shp_array_t {
        self.raw.as_ptr()
    }
}
impl ArrayMut for ArrayViewMut<'_> {}

impl fmt::Debug for ArrayViewMut<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ArrayViewMut({}{:?})", self.dtype(), self.shape())
    }
}

//! Raw FFI declarations of the libshapepoly C API, generated from
//! `c_api/include/shapepoly/shapepoly.h` by `tools/gen_ffi.py` into `src/generated.rs` (one
//! item per C declaration, same names, same order; `make test` fails when it is stale).
//!
//! Everything here is `unsafe` and follows the C rules stated in the header's preamble
//! (ownership table, threading, `shp_error_t*` = NULL on success). Use the safe `shapepoly`
//! crate instead. C enums are `i32` type aliases with constants, so an unknown value coming
//! back from C is never UB; the opaque handles are `!Send`, `!Sync` and `!Unpin`.
#![allow(non_camel_case_types)]

include!("generated.rs");

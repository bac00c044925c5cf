// Package shapepoly is a thin cgo binding of libshapepoly's stable C API
// (c_api/include/shapepoly/shapepoly.h): trace a tensor program once with symbolic
// dimensions, serialize it, then load and run it on any concrete shapes that satisfy its
// constraints.
//
// Every handle type (Scope, Program, Runtime, RuntimeOptions, Bindings) wraps one C handle,
// has an idempotent Close method and a finalizer as a safety net; using a handle after Close
// panics with "object has been closed already". Dim and Tensor values belong to a Scope and
// keep it alive. Every fallible call returns a *Error carrying the C error code and message.
//
// Threading follows the C API: a Scope or a Runtime is used by one goroutine at a time; a
// Program may be shared (create one Runtime per goroutine from a shared Program).
//
// Where the library comes from is chosen at build time: by default the clone's build/lib
// (link_clone.go); with -tags shapepoly_pkgconfig an installed library found through
// pkg-config (link_pkgconfig.go). README.md has the details.
//
// The package checks at load time that the loaded library has the ABI version this binding
// was compiled against; on a mismatch every constructor returns a VersionMismatch error
// (see CheckVersion).
package shapepoly

/*
#include <stdlib.h>
#include "shapepoly/shapepoly.h"
#include "shapepoly/shapepoly_experimental.h"  // shp_simd_sum_f32 (SimdSumF32, tests)
*/
import "C"

import (
	"fmt"
	"runtime"
	"sync/atomic"
	"unsafe"
)

// ABIVersion is the ABI version this binding was compiled against (SHP_ABI_VERSION).
const ABIVersion = int32(C.SHP_ABI_VERSION)

// Version returns the version of the loaded library, e.g. "0.1.0" (shp_version_string).
func Version() string { return C.GoString(C.shp_version_string()) }

// LibraryABIVersion returns the ABI version of the loaded library (shp_abi_version).
func LibraryABIVersion() int32 { return int32(C.shp_abi_version()) }

// SchemaVersion returns the newest program schema version the library reads and the one it
// writes (shp_program_schema_version).
func SchemaVersion() int32 { return int32(C.shp_program_schema_version()) }

// SimdTarget returns the Highway SIMD target the kernels dispatch to, e.g. "AVX2".
func SimdTarget() string { return C.GoString(C.shp_simd_target()) }

// SetSimdTarget makes every kernel dispatch to exactly the SIMD target name ("AVX2", "SSE4",
// ...); "best" lifts the cap. Process-wide (shp_set_simd_target; also SHP_SIMD_TARGET).
func SetSimdTarget(name string) error {
	cn := C.CString(name)
	defer C.free(unsafe.Pointer(cn))
	return check(C.shp_set_simd_target(cn))
}

// SimdSumF32 sums v with the dispatched SIMD kernel (accumulated in double, rounded once).
func SimdSumF32(v []float32) (float32, error) {
	var sum C.float
	var p *C.float
	if len(v) > 0 {
		p = (*C.float)(unsafe.Pointer(&v[0]))
	}
	err := check(C.shp_simd_sum_f32(p, C.size_t(len(v)), &sum))
	runtime.KeepAlive(v)
	return float32(sum), err
}

// abiError is computed once at load: nil when the library's ABI matches ABIVersion.
var abiError = compareABI(ABIVersion, LibraryABIVersion())

func compareABI(built, loaded int32) error {
	if built == loaded {
		return nil
	}
	return &Error{Code: VersionMismatch, Message: fmt.Sprintf(
		"libshapepoly ABI mismatch: this Go binding was built for ABI version %d, but the "+
			"loaded library (version %s) has ABI version %d; rebuild the binding against "+
			"the library's header, or load the matching library", built, Version(), loaded)}
}

// CheckVersion returns nil when the loaded library has the ABI version this binding was
// built for, and otherwise a *Error with code VersionMismatch. Every constructor of the
// package (NewScope, LoadProgram, NewRuntime, ...) returns this error too.
func CheckVersion() error { return abiError }

// liveHandles counts the C handles not yet released (by Close or a finalizer); tests
// use it to prove that finalizers release everything.
var liveHandles atomic.Int64

const closedMsg = "object has been closed already"

// cStrings converts strs to C strings; free releases them.
func cStrings(strs []string) (ptrs []*C.char, free func()) {
	ptrs = make([]*C.char, len(strs))
	for i, s := range strs {
		ptrs[i] = C.CString(s)
	}
	return ptrs, func() {
		for _, p := range ptrs {
			C.free(unsafe.Pointer(p))
		}
	}
}

// firstOrNil returns a pointer to the first element, or nil for an empty slice.
func firstOrNil[T any](s []T) *T {
	if len(s) == 0 {
		return nil
	}
	return &s[0]
}

// cShapes copies shapes into C memory as an array of pointers to int64 arrays (a Go pointer
// to memory holding Go pointers may not be passed to C), with a parallel array of ranks.
func cShapes(shapes [][]int64) (ptrs **C.int64_t, ranks *C.size_t, free func()) {
	n := len(shapes)
	if n == 0 {
		return nil, nil, func() {}
	}
	total := 0
	for _, s := range shapes {
		total += len(s)
	}
	ptrSize := C.size_t(unsafe.Sizeof((*C.int64_t)(nil)))
	pArr := (*[1 << 30]*C.int64_t)(C.malloc(C.size_t(n) * ptrSize))[:n:n]
	rArr := (*[1 << 30]C.size_t)(C.malloc(C.size_t(n) * C.size_t(unsafe.Sizeof(C.size_t(0)))))[:n:n]
	data := (*[1 << 30]C.int64_t)(C.malloc(C.size_t(total+1) * 8))[: total+1 : total+1]
	off := 0
	for i, s := range shapes {
		pArr[i] = &data[off]
		rArr[i] = C.size_t(len(s))
		for _, v := range s {
			data[off] = C.int64_t(v)
			off++
		}
	}
	return &pArr[0], &rArr[0], func() {
		C.free(unsafe.Pointer(&pArr[0]))
		C.free(unsafe.Pointer(&rArr[0]))
		C.free(unsafe.Pointer(&data[0]))
	}
}

// readString calls an snprintf-style C function twice: once to size, once to fill.
func readString(f func(buf *C.char, capacity C.size_t, length *C.size_t) *C.shp_error_t) (string, error) {
	var n C.size_t
	if err := check(f(nil, 0, &n)); err != nil {
		return "", err
	}
	buf := make([]byte, int(n)+1)
	if err := check(f((*C.char)(unsafe.Pointer(&buf[0])), C.size_t(len(buf)), &n)); err != nil {
		return "", err
	}
	if int(n)+1 > len(buf) { // changed between the calls (cannot happen for immutable objects)
		return readString(f)
	}
	return string(buf[:n]), nil
}

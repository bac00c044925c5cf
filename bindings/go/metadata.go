package shapepoly

/*
#include <stdlib.h>
#include "shapepoly/shapepoly.h"
*/
import "C"

import (
	"fmt"
	"runtime"
	"strings"
	"unsafe"
)

// MetadataEntry is one key/value pair of a program's metadata.
type MetadataEntry struct {
	Key, Value string
}

// Metadata returns the program's metadata (shp_program_metadata_*): string pairs saved with
// the program, such as an imported ONNX model's names ("onnx.names"), in increasing byte order
// of the keys. Transformations (Jvp, Vjp, Grad, Vmap) keep it.
func (p *Program) Metadata() []MetadataEntry {
	c := p.ptr()
	out := make([]MetadataEntry, int(C.shp_program_metadata_count(c)))
	for i := range out {
		k := C.shp_program_metadata_key(c, C.size_t(i))
		out[i] = MetadataEntry{Key: goStringOrEmpty(k), Value: goStringOrEmpty(C.shp_program_metadata_value(c, k))}
	}
	runtime.KeepAlive(p)
	return out
}

// MetadataValue returns the value of key and whether the program has it.
func (p *Program) MetadataValue(key string) (string, bool) {
	if strings.IndexByte(key, 0) >= 0 {
		return "", false // no key has a NUL byte
	}
	ck := C.CString(key)
	defer C.free(unsafe.Pointer(ck))
	v := C.shp_program_metadata_value(p.ptr(), ck)
	runtime.KeepAlive(p)
	if v == nil {
		return "", false
	}
	return C.GoString(v), true
}

// WithMetadata returns a copy of the program whose metadata has key set to value
// (shp_program_with_metadata; the program itself is unchanged). A key is non-empty printable
// UTF-8 of at most 256 bytes, a value UTF-8 of at most 1 MiB, at most 1024 entries: otherwise
// an InvalidArgument error naming the key and the limit.
func (p *Program) WithMetadata(key, value string) (*Program, error) {
	return p.withMetadata(key, &value)
}

// WithoutMetadata returns a copy of the program without metadata key (the same metadata when
// the program has no such key).
func (p *Program) WithoutMetadata(key string) (*Program, error) {
	return p.withMetadata(key, nil)
}

func (p *Program) withMetadata(key string, value *string) (*Program, error) {
	if strings.IndexByte(key, 0) >= 0 || (value != nil && strings.IndexByte(*value, 0) >= 0) {
		return nil, invalidArgument(fmt.Sprintf("WithMetadata: the key or value of %q contains a NUL byte", key))
	}
	ck := C.CString(key)
	defer C.free(unsafe.Pointer(ck))
	var cv *C.char
	if value != nil {
		cv = C.CString(*value)
		defer C.free(unsafe.Pointer(cv))
	}
	return p.derived(func(out **C.shp_program_t) *C.shp_error_t {
		return C.shp_program_with_metadata(p.ptr(), ck, cv, out)
	})
}

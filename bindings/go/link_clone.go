//go:build !shapepoly_pkgconfig

package shapepoly

// The default: the header of this clone and the library that `make lib` stages in its
// build/lib. The rpath names that folder, so programs run without LD_LIBRARY_PATH.

/*
#cgo CFLAGS: -I${SRCDIR}/../../c_api/include
#cgo LDFLAGS: -L${SRCDIR}/../../build/lib -lshapepoly -Wl,-rpath,${SRCDIR}/../../build/lib
*/
import "C"

// LinkedFrom says where the binding was told to find the library at build time: "clone"
// (this checkout's build/lib) or "pkg-config" (an installed library, -tags shapepoly_pkgconfig).
const LinkedFrom = "clone"

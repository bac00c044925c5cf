//go:build shapepoly_pkgconfig

package shapepoly

// An installed library (`make install PREFIX=...`): header and -L/-l come from shapepoly.pc,
// found through PKG_CONFIG_PATH. A .pc file carries no rpath and cgo directives cannot read
// pkg-config variables, so the program finds the library at run time through the system's
// loader paths, or an rpath given at build time (README.md: "Against an installed library").

/*
#cgo pkg-config: shapepoly
*/
import "C"

// LinkedFrom says where the binding was told to find the library at build time: "clone"
// (this checkout's build/lib) or "pkg-config" (an installed library, -tags shapepoly_pkgconfig).
const LinkedFrom = "pkg-config"

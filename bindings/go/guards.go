package shapepoly

// #include <stdlib.h>
// #include "shapepoly/shapepoly.h"
import "C"

import (
	"runtime"
	"unsafe"
)

// Hints, guards, assumptions and multi-variant programs: code that branches on a shape
// comparison the engine cannot decide either decides it on example values (the hints) and
// records the choice as a guard that runs check (GuardFailed), or traces each branch under
// Scope.Assume and combines the traces with CreateVariants; the runtime then runs the first
// variant whose guards hold.

// GuardPolicy says what an op does with a shape comparison it needs and cannot decide
// (shp_guard_policy_t).
type GuardPolicy int32

// Guard policies.
const (
	// GuardsNever fails with Inconclusive (the default).
	GuardsNever GuardPolicy = C.SHP_GUARDS_NEVER
	// GuardsFromHints decides it on the hints and records a guard named after the op; a hint
	// of 1 never makes a dim broadcast.
	GuardsFromHints GuardPolicy = C.SHP_GUARDS_FROM_HINTS
)

// String returns "never" or "from_hints".
func (p GuardPolicy) String() string {
	switch p {
	case GuardsNever:
		return "never"
	case GuardsFromHints:
		return "from_hints"
	}
	return "GuardPolicy(" + itoa(int64(p)) + ")"
}

// Guard is a precondition a program checks before running, failing with GuardFailed.
type Guard struct {
	Text    string // the guarded comparison, e.g. "s0 == s1"
	Message string // shown when it fails ("" when none was given)
	// Origin says what recorded it: "shp_dim_guard", "shp_scope_assume", or the op and axis.
	// Empty in the lists of Program.VariantGuards, for which the library keeps none.
	Origin string
}

// optCString returns a C copy of s, or nil for "" (the C API's "no message").
func optCString(s string) (*C.char, func()) {
	if s == "" {
		return nil, func() {}
	}
	c := C.CString(s)
	return c, func() { C.free(unsafe.Pointer(c)) }
}

// SetHint gives variable name an example value (shp_scope_set_hint), creating the variable
// if the scope does not know it yet. A hint is never a fact: comparisons and bounds ignore
// it; only Dim.Guard and GuardsFromHints read it. 0 and 1 are ordinary values (nothing is
// specialized on them). A value outside the variable's range, or one violating a fact whose
// variables all have hints, is a ConstraintViolation error and keeps the previous hint.
func (s *Scope) SetHint(name string, value int64) error {
	cn := C.CString(name)
	defer C.free(unsafe.Pointer(cn))
	err := check(C.shp_scope_set_hint(s.ptr(), cn, C.int64_t(value)))
	runtime.KeepAlive(s)
	return err
}

// Hint returns the hint of variable name and whether it has one (shp_scope_hint). An
// unknown variable is a NotFound error.
func (s *Scope) Hint(name string) (value int64, ok bool, err error) {
	cn := C.CString(name)
	defer C.free(unsafe.Pointer(cn))
	var has C.bool
	var v C.int64_t
	err = check(C.shp_scope_hint(s.ptr(), cn, &has, &v))
	runtime.KeepAlive(s)
	if err != nil || !bool(has) {
		return 0, false, err
	}
	return int64(v), true, nil
}

// SetGuardPolicy sets what ops do with a shape comparison they cannot decide
// (shp_scope_set_guard_policy). Under GuardsFromHints an op whose hints satisfy what it
// needs records that as a guard; one whose hints do not fails with ShapeMismatch naming the
// hint values.
func (s *Scope) SetGuardPolicy(policy GuardPolicy) error {
	err := check(C.shp_scope_set_guard_policy(s.ptr(), C.shp_guard_policy_t(policy)))
	runtime.KeepAlive(s)
	return err
}

// Assume adds the guard `a op b` explicitly (shp_scope_assume), typically to trace one
// variant of a program; nothing is recorded when it already follows from the facts. One that
// contradicts the constraints is an Unsatisfiable error. message "" gives the default.
func (s *Scope) Assume(a Dim, op Cmp, b Dim, message string) error {
	cm, free := optCString(message)
	defer free()
	err := check(C.shp_scope_assume(s.ptr(), a.ptr(), C.shp_cmp_t(op), b.ptr(), cm))
	runtime.KeepAlive(s)
	runtime.KeepAlive(a.scope)
	runtime.KeepAlive(b.scope)
	return err
}

// Guard decides `d op b` for code that branches on shapes (shp_dim_guard). A decided
// comparison gives its value and records nothing; an undecidable one is evaluated on the
// hints, and the comparison or its negation, whichever holds there, becomes a guard: a fact
// of the scope and a precondition of every program built from it afterwards. An undecidable
// comparison with an unhinted variable is an Inconclusive error.
func (d Dim) Guard(op Cmp, b Dim, message string) (bool, error) {
	cm, free := optCString(message)
	defer free()
	var out C.bool
	err := check(C.shp_dim_guard(d.ptr(), C.shp_cmp_t(op), b.ptr(), cm, &out))
	runtime.KeepAlive(d.scope)
	runtime.KeepAlive(b.scope)
	return bool(out), err
}

// Guards returns the guards of the program, of variant 0 for a multi-variant program
// (shp_program_guard_*).
func (p *Program) Guards() []Guard {
	c := p.ptr()
	out := make([]Guard, int(C.shp_program_guard_count(c)))
	for i := range out {
		k := C.size_t(i)
		out[i] = Guard{
			Text:    goStringOrEmpty(C.shp_program_guard_text(c, k)),
			Message: goStringOrEmpty(C.shp_program_guard_message(c, k)),
			Origin:  goStringOrEmpty(C.shp_program_guard_origin(c, k)),
		}
	}
	runtime.KeepAlive(p)
	return out
}

// CreateVariants combines programs traced under different guards into one program whose
// variants are theirs, in this order (shp_program_create_variants; a multi-variant argument
// contributes its variants). A run evaluates each variant's guards in order and runs the first
// whose guards all hold. The variants must agree on constraints, inputs and outputs (names,
// roles, dtypes, ranks); a symbolic shape may differ only where the variant's guards make it
// equal, otherwise an InvalidArgument error names the difference.
func CreateVariants(variants ...*Program) (*Program, error) {
	if abiError != nil {
		return nil, abiError
	}
	cs := make([]*C.shp_program_t, len(variants))
	for i, v := range variants {
		if v == nil {
			return nil, invalidArgument("CreateVariants: variant " + itoa(int64(i)) + " is nil")
		}
		cs[i] = v.ptr()
	}
	var q *C.shp_program_t
	err := check(C.shp_program_create_variants(firstOrNil(cs), C.size_t(len(cs)), &q))
	runtime.KeepAlive(variants)
	if err != nil {
		return nil, err
	}
	return newProgram(q), nil
}

// VariantCount returns the number of variants: 1 for a traced or derived program
// (shp_program_variant_count).
func (p *Program) VariantCount() int {
	n := int(C.shp_program_variant_count(p.ptr()))
	runtime.KeepAlive(p)
	return n
}

// VariantGuards returns the guards of variant v, without origins; nil if out of range
// (shp_program_variant_guard_*).
func (p *Program) VariantGuards(v int) []Guard {
	if v < 0 {
		return nil
	}
	c, cv := p.ptr(), C.size_t(v)
	n := int(C.shp_program_variant_guard_count(c, cv))
	if n == 0 {
		runtime.KeepAlive(p)
		return nil
	}
	out := make([]Guard, n)
	for i := range out {
		k := C.size_t(i)
		out[i] = Guard{
			Text:    goStringOrEmpty(C.shp_program_variant_guard_text(c, cv, k)),
			Message: goStringOrEmpty(C.shp_program_variant_guard_message(c, cv, k)),
		}
	}
	runtime.KeepAlive(p)
	return out
}

// VariantsExhaustive reports whether the variants' guards cover every valuation the
// constraints allow (shp_program_variants_exhaustive): True when proven, False when a checked
// counterexample exists (Counterexample), Unknown when neither could be shown (an uncovered
// shape then fails at run time with GuardFailed).
func (p *Program) VariantsExhaustive() Truth {
	t := Truth(C.shp_program_variants_exhaustive(p.ptr()))
	runtime.KeepAlive(p)
	return t
}

// Counterexample returns the valuation no variant covers when VariantsExhaustive is False,
// e.g. "n = 3 satisfies the constraints and no variant's guards (...)"; "" otherwise
// (shp_program_variants_counterexample).
func (p *Program) Counterexample() (string, error) {
	s, err := readString(func(buf *C.char, n C.size_t, length *C.size_t) *C.shp_error_t {
		return C.shp_program_variants_counterexample(p.ptr(), buf, n, length)
	})
	runtime.KeepAlive(p)
	return s, err
}

// Variant returns the variant Program.CheckShapes chose for these values, -1 for bindings
// from Scope.Solve (shp_bindings_variant).
func (b *Bindings) Variant() int {
	v := int(C.shp_bindings_variant(b.ptr()))
	runtime.KeepAlive(b)
	return v
}

// LastVariant returns the variant the last successful run used (0 for a single-variant
// program), -1 before any (shp_runtime_last_variant).
func (r *Runtime) LastVariant() int {
	v := int(C.shp_runtime_last_variant(r.ptr()))
	runtime.KeepAlive(r)
	return v
}

// VariantPlansBuilt returns the plans built for shapes that variant v ran on; 0 if out of
// range (shp_runtime_variant_plans_built).
func (r *Runtime) VariantPlansBuilt(v int) uint64 {
	if v < 0 {
		return 0
	}
	n := uint64(C.shp_runtime_variant_plans_built(r.ptr(), C.size_t(v)))
	runtime.KeepAlive(r)
	return n
}

// VariantCacheHits returns the calls on variant v that found their plan cached; 0 if out of
// range (shp_runtime_variant_cache_hits).
func (r *Runtime) VariantCacheHits(v int) uint64 {
	if v < 0 {
		return 0
	}
	n := uint64(C.shp_runtime_variant_cache_hits(r.ptr(), C.size_t(v)))
	runtime.KeepAlive(r)
	return n
}

package shapepoly

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// Structured explanations (issue 14): an Inconclusive error carries its witnesses and verified
// fixes, copied out of the C error before it is destroyed.

// constraintFix and rangeFix match the fixes that add a constraint at scope creation and
// that declare a variable's range.
var (
	constraintFix = regexp.MustCompile(`^add the constraint '([^']+)' when creating the scope`)
	rangeFix      = regexp.MustCompile(`^declare '(\w+)' with the range \[(\d+), (inf|\d+)\]`)
)

func TestInconclusiveGuardHasWitnessesAndFixes(t *testing.T) {
	s := newScope(t)
	n := must(s.Var("n"))
	five := must(s.Const(5))
	_, err := n.Guard(CmpGe, five, "")
	e := wantCode(t, err, Inconclusive, "n")
	if len(e.Witnesses) != 2 {
		t.Fatalf("want 2 witnesses, got %+v\n%s", e.Witnesses, e.Message)
	}
	if !e.Witnesses[0].Holds || e.Witnesses[1].Holds {
		t.Fatalf("want the true witness first, then the false one: %+v", e.Witnesses)
	}
	for _, w := range e.Witnesses {
		if len(w.Values) != 1 || w.Values[0].Name != "n" {
			t.Fatalf("witness %+v: want a value of n only", w)
		}
		v, ok := w.Value("n")
		if !ok || v != w.Values[0].Value {
			t.Fatalf("Witness.Value(n) = %d, %v", v, ok)
		}
		if _, ok := w.Value("m"); ok {
			t.Fatal("Witness.Value finds a variable it does not list")
		}
		if v < 1 || (v >= 5) != w.Holds {
			t.Fatalf("witness n = %d (holds %v) does not decide n >= 5 that way or leaves n's range", v, w.Holds)
		}
		// The same comparison, evaluated at the witness.
		if got := must(n.Evaluate(map[string]int64{"n": v})) >= 5; got != w.Holds {
			t.Fatalf("n = %d: Evaluate says %v, the witness %v", v, got, w.Holds)
		}
		verb := "false"
		if w.Holds {
			verb = "true"
		}
		if want := fmt.Sprintf("n = %d makes it %s", v, verb); !strings.Contains(e.Message, want) {
			t.Fatalf("the message does not show %q:\n%s", want, e.Message)
		}
	}
	if len(e.Fixes) == 0 {
		t.Fatalf("no fix:\n%s", e.Message)
	}
	verified := 0
	for _, fix := range e.Fixes {
		if fix == "" || !strings.Contains(e.Message, fix) {
			t.Fatalf("fix %q is not in the message:\n%s", fix, e.Message)
		}
		// A constraint fix decides the comparison in a scope created with it.
		if m := constraintFix.FindStringSubmatch(fix); m != nil {
			fixed := newScope(t, m[1])
			if b, err := must(fixed.Var("n")).Guard(CmpGe, must(fixed.Const(5)), ""); err != nil || !b {
				t.Fatalf("with the fix %q: %v, %v", m[1], b, err)
			}
			verified++
		}
		// A range fix decides it in a scope that declares the range.
		if m := rangeFix.FindStringSubmatch(fix); m != nil {
			hi := int64(math.MaxInt64)
			if m[3] != "inf" {
				hi = must(strconv.ParseInt(m[3], 10, 64))
			}
			fixed, err := NewScopeWithRanges(nil, Range{Name: m[1], Min: must(strconv.ParseInt(m[2], 10, 64)), Max: hi})
			noErr(t, err)
			defer fixed.Close()
			if b, err := must(fixed.Var("n")).Guard(CmpGe, must(fixed.Const(5)), ""); err != nil || !b {
				t.Fatalf("with the fix %q: %v, %v", m[0], b, err)
			}
			verified++
		}
	}
	if verified < 2 {
		t.Fatalf("want a constraint fix and a range fix, both verified here: %q", e.Fixes)
	}

	// errors.As reaches the details through wrapping.
	var got *Error
	if !errors.As(fmt.Errorf("tracing: %w", err), &got) || len(got.Witnesses) != 2 || len(got.Fixes) != len(e.Fixes) {
		t.Fatal("the details are lost through a wrapped error")
	}
	// errors.Is still matches by code.
	if !errors.Is(err, &Error{Code: Inconclusive}) {
		t.Fatal("errors.Is by code fails on an error with details")
	}
}

// A witness names every variable of the comparison: a broadcast of (a, 3) with (b, 3).
func TestShapeCheckWitnessesNameEveryVariable(t *testing.T) {
	s := newScope(t)
	x := must(s.Input("x", F32, "a, 3"))
	y := must(s.Input("y", F32, "b, 3"))
	_, err := x.Add(y)
	e := wantCode(t, err, Inconclusive)
	if len(e.Witnesses) != 2 {
		t.Fatalf("want 2 witnesses, got %+v\n%s", e.Witnesses, e.Message)
	}
	holds := 0
	for _, w := range e.Witnesses {
		a, okA := w.Value("a")
		b, okB := w.Value("b")
		if !okA || !okB || len(w.Values) != 2 || a < 1 || b < 1 {
			t.Fatalf("witness %+v: want values of a and b within their ranges", w)
		}
		if w.Holds {
			holds++
		}
	}
	if holds != 1 {
		t.Fatalf("want one true and one false witness: %+v", e.Witnesses)
	}
	hasMax := false
	for _, fix := range e.Fixes {
		hasMax = hasMax || strings.Contains(fix, "max(a, b)")
	}
	if !hasMax {
		t.Fatalf("no fix writes max(a, b): %q", e.Fixes)
	}
}

func TestOtherErrorsHaveNoDetails(t *testing.T) {
	s := newScope(t)
	_, err := s.Parse("2 *")
	e := wantCode(t, err, ParseError)
	if e.Witnesses != nil || e.Fixes != nil {
		t.Fatalf("a parse error has details: %+v %q", e.Witnesses, e.Fixes)
	}
	// A decided guard raises nothing.
	if b, err := must(s.Var("m")).Guard(CmpGe, must(s.Const(1)), ""); err != nil || !b {
		t.Fatal(b, err)
	}
}

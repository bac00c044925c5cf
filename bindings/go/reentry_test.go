package shapepoly

import (
	"errors"
	"strings"
	"testing"
)

// Issue 39 item 1: a TraceFunc that re-enters its own Function. A call is refused by the C
// layer (InvalidArgument, passed back through the trace); Close from inside the trace used to
// destroy the function under the running call (use after free): it now takes effect when the
// call returns. Nothing blocks.
func TestReentryFromTheTraceFunc(t *testing.T) {
	for _, what := range []string{"call", "close", "mark_dynamic", "set_stance"} {
		t.Run(what, func(t *testing.T) {
			var f *Function
			var inner error
			f, err := NewFunction(func(s *Scope, in []Tensor) ([]Tensor, error) {
				switch what {
				case "call":
					_, inner = f.Call(map[string]*Array{"x": must(NewArray([]float32{1, 2}, 2))})
				case "close":
					f.Close()
				case "mark_dynamic":
					inner = f.MarkDynamic("x", 0, 0, 100)
				case "set_stance":
					inner = f.SetStance(StanceFailOnRecompile)
				}
				if inner != nil {
					return nil, inner
				}
				one, err := s.Constant(must(NewArray([]float32{1})))
				if err != nil {
					return nil, err
				}
				y, err := in[0].Add(one)
				return []Tensor{y}, err
			}, []FunctionInput{{Name: "x", DType: F32, Rank: 1}}, []string{"y"}, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			x := must(NewArray([]float32{1, 2, 3}, 3))
			out, err := f.Call(map[string]*Array{"x": x})
			switch what {
			case "call":
				var e *Error
				if !errors.As(err, &e) || e.Code != InvalidArgument ||
					!strings.Contains(e.Message, "own trace function") {
					t.Fatalf("want the C layer's InvalidArgument, got %v", err)
				}
				if inner == nil {
					t.Fatal("the inner call was not refused")
				}
			case "close":
				if err != nil {
					t.Fatal(err)
				}
				if got := out["y"].Float32s(); got[0] != 2 || got[2] != 4 {
					t.Fatalf("got %v", got)
				}
				if f._ptr != nil {
					t.Fatal("Close from the trace did not take effect when the call returned")
				}
				return
			default:
				if err != nil {
					t.Fatal(err)
				}
			}
			// Still usable afterwards.
			if _, err := f.Call(map[string]*Array{"x": x}); err != nil && what != "call" {
				t.Fatal(err)
			}
		})
	}
}

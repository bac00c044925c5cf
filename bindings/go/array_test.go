package shapepoly

import (
	"strings"
	"testing"
)

// TestArraySizeErrors: data that does not fill its shape is reported in elements, never in
// bytes, wherever an array reaches the library (issue 20).
func TestArraySizeErrors(t *testing.T) {
	_, err := NewArray([]float32{1, 2, 3, 4, 5, 6}, 2, 4)
	e := wantCode(t, err, InvalidArgument)
	if e.Message != "NewArray: 6 elements given, shape (2, 4) needs 8" {
		t.Fatalf("message %q", e.Message)
	}
	_, err = NewArray([]int64{1, 2}) // no shape: a scalar
	e = wantCode(t, err, InvalidArgument)
	if e.Message != "NewArray: 2 elements given, shape () needs 1" {
		t.Fatalf("message %q", e.Message)
	}
	_, err = NewArray([]bool{true}, 0, 3)
	wantCode(t, err, InvalidArgument, "1 element given, shape (0, 3) needs 0")
	_, err = NewArray([]float64{1, 2, 3}, 4) // rank 1 prints as the library does: (4,)
	wantCode(t, err, InvalidArgument, "NewArray: 3 elements given, shape (4,) needs 4")

	// The zero Array holds no data for its shape (), whatever path it takes.
	s := newScope(t, "n >= 1")
	_, err = s.Constant(&Array{})
	wantCode(t, err, InvalidArgument, "Constant: 0 elements given, shape () needs 1")
	_, err = s.Parameter("p", &Array{})
	wantCode(t, err, InvalidArgument, "parameter 'p': 0 elements given, shape () needs 1")

	p := smallProgram(t)
	rt := must(NewRuntime(p, nil))
	defer rt.Close()
	in := smallInputs(2)
	in["b"] = &Array{}
	_, err = rt.Run(in)
	e = wantCode(t, err, InvalidArgument, "input 'b': 0 elements given, shape () needs 1")
	if strings.Contains(e.Message, "byte") {
		t.Fatalf("message %q speaks in bytes", e.Message)
	}
	outs := map[string]*Array{"probs": must(Zeros(F32, 2, 3)), "pairs": &Array{}}
	err = rt.RunInto(smallInputs(2), outs)
	wantCode(t, err, InvalidArgument, "RunInto: output 'pairs': 0 elements given, shape () needs 1")
	// The runtime stays usable.
	res := must(rt.Run(smallInputs(2)))
	if len(res["probs"].Float32s()) != 6 {
		t.Fatal(res["probs"])
	}
}

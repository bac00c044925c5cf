package shapepoly

import (
	"strings"
	"testing"
)

// alongRef gathers x [outer, n, inner] by idx [outer, len(idx)/(outer*inner), inner] along the
// middle axis; a negative index counts from the end.
func alongRef[T int64 | float32](x []T, outer, n, inner int, idx []int) []T {
	num := 0
	if outer*inner > 0 {
		num = len(idx) / (outer * inner)
	}
	out := make([]T, 0, len(idx))
	for o := 0; o < outer; o++ {
		for j := 0; j < num; j++ {
			for i := 0; i < inner; i++ {
				k := idx[(o*num+j)*inner+i]
				if k < 0 {
					k += n
				}
				out = append(out, x[(o*n+k)*inner+i])
			}
		}
	}
	return out
}

// TestTakeAlongAxis: TakeAlongAxis (np.take_along_axis, ONNX GatherElements) along a negative
// axis with int32 indices (f32) and along axis 0 with int64 indices (i64), negative indices
// among them, saved, reloaded and run through newTwinRuntime at several sizes against alongRef.
func TestTakeAlongAxis(t *testing.T) {
	s := newScope(t)
	x := must(s.Input("x", F32, "n, 3"))
	i := must(s.Input("i", I32, "n, m"))
	xl := must(s.Input("xl", I64, "4, n"))
	il := must(s.Input("il", I64, "2, n"))
	cols := must(x.TakeAlongAxis(i, -1))
	rows := must(xl.TakeAlongAxis(il, 0))
	if cols.String() != "f32(n, m)" || rows.String() != "i64(2, n)" {
		t.Fatalf("types %s, %s", cols, rows)
	}
	p := must(s.CreateProgram([]Tensor{x, i, xl, il},
		Output{Name: "cols", Tensor: cols}, Output{Name: "rows", Tensor: rows}))
	defer p.Close()
	if text := p.String(); !strings.Contains(text, "take_along_axis(%0, %1) axis=1") {
		t.Errorf("the listing lacks the normalized axis:\n%s", text)
	}
	rt := newTwinRuntime(t, p, nil)
	defer rt.Close()
	for _, nm := range [][2]int{{2, 5}, {1, 1}, {4, 9}} {
		n, m := nm[0], nm[1]
		xv, iv, idx := make([]float32, n*3), make([]int32, n*m), make([]int, n*m)
		for k := range xv {
			xv[k] = float32(k)*0.5 - 1
		}
		for k := range iv {
			idx[k] = k%6 - 3 // [-3, 3)
			iv[k] = int32(idx[k])
		}
		lv, ilv, lidx := make([]int64, 4*n), make([]int64, 2*n), make([]int, 2*n)
		for k := range lv {
			lv[k] = int64(k-2) << 40
		}
		for k := range ilv {
			lidx[k] = k%8 - 4 // [-4, 4)
			ilv[k] = int64(lidx[k])
		}
		res := must(rt.Run(map[string]*Array{
			"x": must(NewArray(xv, int64(n), 3)), "i": must(NewArray(iv, int64(n), int64(m))),
			"xl": must(NewArray(lv, 4, int64(n))), "il": must(NewArray(ilv, 2, int64(n))),
		}))
		if got := res["cols"]; !slicesEqual(got.Shape(), []int64{int64(n), int64(m)}) ||
			!sameElems(got.Float32s(), alongRef(xv, n, 3, 1, idx)) {
			t.Errorf("cols at n = %d, m = %d: %v", n, m, got.Data())
		}
		if got := res["rows"]; !sameElems(got.Int64s(), alongRef(lv, 1, 4, n, lidx)) {
			t.Errorf("rows at n = %d: %v", n, got.Data())
		}
	}
	if got := alongRef([]int64{10, 20, 30}, 1, 3, 1, []int{2, -3, -1}); !sameElems(got, []int64{30, 10, 30}) {
		t.Fatalf("alongRef: %v", got)
	}
}

func TestTakeAlongAxisErrors(t *testing.T) {
	s := newScope(t)
	x := must(s.Input("x", F32, "n, 3"))
	i := must(s.Input("i", I64, "n, 2"))
	_, err := x.TakeAlongAxis(must(s.Input("flat", I64, "n")), 1)
	wantCode(t, err, ShapeMismatch, "must have the rank of the operand")
	_, err = x.TakeAlongAxis(must(s.Input("other", I64, "m, 2")), 1)
	wantCode(t, err, Inconclusive)
	_, err = x.TakeAlongAxis(must(s.Input("fi", F32, "n, 2")), 1)
	wantCode(t, err, DTypeMismatch)
	_, err = x.TakeAlongAxis(i, 2)
	wantCode(t, err, InvalidArgument)
	// An index outside [-3, 3) at run time; the runtime stays usable.
	p := must(s.CreateProgram([]Tensor{x, i}, Output{Name: "y", Tensor: must(x.TakeAlongAxis(i, 1))}))
	defer p.Close()
	rt := newTwinRuntime(t, p, nil)
	defer rt.Close()
	run := func(iv []int64) (map[string]*Array, error) {
		return rt.Run(map[string]*Array{"x": must(NewArray([]float32{1, 2, 3}, 1, 3)),
			"i": must(NewArray(iv, 1, 2))})
	}
	_, err = run([]int64{0, 3})
	wantCode(t, err, InvalidArgument, "take_along_axis: index 3 (position 1 of the indices) is outside [-3, 3) on axis 1")
	if got := must(run([]int64{-1, 0}))["y"].Float32s(); !sameElems(got, []float32{3, 1}) {
		t.Fatalf("after the error: %v", got)
	}
}

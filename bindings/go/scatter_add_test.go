package shapepoly

import (
	"strings"
	"testing"
)

// scatterRef adds updates [outer, len(idx), inner] into a copy of base [outer, n, inner] at
// the rows idx names, in the order of the positions.
func scatterRef[T int64 | float32](base []T, outer, n, inner int, idx []int, updates []T) []T {
	out := append([]T(nil), base...)
	for o := 0; o < outer; o++ {
		for j, k := range idx {
			for i := 0; i < inner; i++ {
				out[(o*n+k)*inner+i] += updates[(o*len(idx)+j)*inner+i]
			}
		}
	}
	return out
}

// TestScatterAdd: ScatterAdd (the transpose of Take) along a negative axis with repeated int32
// indices (f32), and along axis 0 with rank-2 int64 indices (i64), saved, reloaded and run
// through newTwinRuntime at several sizes against scatterRef.
func TestScatterAdd(t *testing.T) {
	s := newScope(t)
	x := must(s.Input("x", F32, "n, 3"))
	i := must(s.Input("i", I32, "m"))
	u := must(s.Input("u", F32, "n, m"))
	xl := must(s.Input("xl", I64, "3, 2"))
	il := must(s.Input("il", I64, "n, 2"))
	ul := must(s.Input("ul", I64, "n, 2, 2"))
	cols := must(x.ScatterAdd(i, u, -1))
	rows := must(xl.ScatterAdd(il, ul, 0))
	if cols.String() != "f32(n, 3)" || rows.String() != "i64(3, 2)" {
		t.Fatalf("types %s, %s", cols, rows)
	}
	p := must(s.CreateProgram([]Tensor{x, i, u, xl, il, ul},
		Output{Name: "cols", Tensor: cols}, Output{Name: "rows", Tensor: rows}))
	defer p.Close()
	if text := p.String(); !strings.Contains(text, "scatter_add(%0, %1, %2) axis=1") {
		t.Errorf("the listing lacks the normalized axis:\n%s", text)
	}
	rt := newTwinRuntime(t, p, nil)
	defer rt.Close()
	for _, nm := range [][2]int{{2, 5}, {1, 1}, {4, 9}} {
		n, m := nm[0], nm[1]
		xv, uv := make([]float32, n*3), make([]float32, n*m)
		iv, idx := make([]int32, m), make([]int, m)
		for k := range xv {
			xv[k] = float32(k)*0.5 - 1
		}
		for k := range uv {
			uv[k] = 0.25*float32(k) + 1
		}
		for j := range iv {
			idx[j] = (j*2 + 1) % 3 // repeats
			iv[j] = int32(idx[j])
		}
		lv, ilv, ulv := make([]int64, 6), make([]int64, n*2), make([]int64, n*4)
		lidx := make([]int, n*2)
		for k := range lv {
			lv[k] = int64(k-2) << 40
		}
		for k := range ilv {
			lidx[k] = k % 3
			ilv[k] = int64(lidx[k])
		}
		for k := range ulv {
			ulv[k] = int64(k)*3 - 7
		}
		res := must(rt.Run(map[string]*Array{
			"x": must(NewArray(xv, int64(n), 3)), "i": must(NewArray(iv, int64(m))),
			"u": must(NewArray(uv, int64(n), int64(m))), "xl": must(NewArray(lv, 3, 2)),
			"il": must(NewArray(ilv, int64(n), 2)), "ul": must(NewArray(ulv, int64(n), 2, 2)),
		}))
		if got := res["cols"]; !slicesEqual(got.Shape(), []int64{int64(n), 3}) ||
			!sameElems(got.Float32s(), scatterRef(xv, n, 3, 1, idx, uv)) {
			t.Errorf("cols at n = %d, m = %d: %v", n, m, got.Data())
		}
		if got := res["rows"]; !sameElems(got.Int64s(), scatterRef(lv, 1, 3, 2, lidx, ulv)) {
			t.Errorf("rows at n = %d: %v", n, got.Data())
		}
	}
	if got := scatterRef([]int64{0, 0, 0}, 1, 3, 1, []int{2, 0, 2}, []int64{1, 2, 4}); !sameElems(got, []int64{2, 0, 5}) {
		t.Fatalf("scatterRef: %v", got)
	}
}

func TestScatterAddErrors(t *testing.T) {
	s := newScope(t)
	x := must(s.Input("x", F32, "n, 3"))
	i := must(s.Input("i", I64, "2"))
	u := must(s.Input("u", F32, "n, 2"))
	_, err := x.ScatterAdd(i, must(s.Input("bad", F32, "n, 4")), 1)
	wantCode(t, err, ShapeMismatch, "axis 1 of the updates is 4, axis 0 of the indices is 2")
	_, err = x.ScatterAdd(i, must(s.Input("flat", F32, "n")), 1)
	wantCode(t, err, ShapeMismatch, "rank 1 instead of 2")
	_, err = x.ScatterAdd(i, must(s.Input("um", F32, "n, m")), 1)
	wantCode(t, err, Inconclusive)
	_, err = x.ScatterAdd(u, u, 1)
	wantCode(t, err, DTypeMismatch)
	_, err = must(s.Input("b", Bool, "n, 3")).ScatterAdd(i, must(s.Input("ub", Bool, "n, 2")), 1)
	wantCode(t, err, DTypeMismatch)
	_, err = x.ScatterAdd(i, u, 2)
	wantCode(t, err, InvalidArgument)
	_, err = x.ScatterAdd(i, Tensor{}, 1)
	wantCode(t, err, InvalidArgument)
	// An index outside [0, 3) at run time, as Take; the runtime stays usable.
	p := must(s.CreateProgram([]Tensor{x, i, u}, Output{Name: "y", Tensor: must(x.ScatterAdd(i, u, 1))}))
	defer p.Close()
	rt := newTwinRuntime(t, p, nil)
	defer rt.Close()
	run := func(iv []int64) (map[string]*Array, error) {
		return rt.Run(map[string]*Array{"x": must(NewArray([]float32{0, 0, 0}, 1, 3)),
			"i": must(NewArray(iv, 2)), "u": must(NewArray([]float32{1, 2}, 1, 2))})
	}
	_, err = run([]int64{0, 3})
	wantCode(t, err, InvalidArgument, "scatter_add: index 3 (position 1 of the indices) is outside [0, 3)")
	if got := must(run([]int64{2, 2}))["y"].Float32s(); !sameElems(got, []float32{0, 0, 3}) {
		t.Fatalf("after the error: %v", got)
	}
}

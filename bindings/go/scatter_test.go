package shapepoly

import (
	"math"
	"testing"
)

// reducedScatterRef combines the rows of upd [num, inner] into x [n, inner] at idx, position by
// position (red: 0 replace, 1 add, 2 mul, 3 max, 4 min).
func reducedScatterRef(x []float32, inner int, idx []int, upd []float32, red int) []float32 {
	out := append([]float32(nil), x...)
	for j, k := range idx {
		for i := 0; i < inner; i++ {
			d, u := &out[k*inner+i], upd[j*inner+i]
			switch red {
			case 0:
				*d = u
			case 1:
				*d += u
			case 2:
				*d *= u
			case 3:
				*d = float32(math.Max(float64(*d), float64(u)))
			default:
				*d = float32(math.Min(float64(*d), float64(u)))
			}
		}
	}
	return out
}

// TestScatter: Scatter with each reduction along axis 0 of an f32 [n, 3] base with int32
// indices that repeat (replace: the last repeat wins), saved, reloaded and run through
// newTwinRuntime at several sizes against reducedScatterRef; an index out of range fails the run
// naming it, and the runtime stays usable.
func TestScatter(t *testing.T) {
	for red := int64(0); red < 5; red++ {
		s := newScope(t)
		x := must(s.Input("x", F32, "n, 3"))
		i := must(s.Input("i", I32, "m"))
		u := must(s.Input("u", F32, "m, 3"))
		y := must(x.Scatter(i, u, 0, red))
		if y.String() != "f32(n, 3)" {
			t.Fatalf("type %s", y)
		}
		p := must(s.CreateProgram([]Tensor{x, i, u}, Output{Name: "y", Tensor: y}))
		rt := newTwinRuntime(t, p, nil)
		for _, nm := range [][2]int{{2, 5}, {1, 1}, {4, 9}} {
			n, m := nm[0], nm[1]
			xv, uv, iv, idx := make([]float32, n*3), make([]float32, m*3), make([]int32, m), make([]int, m)
			for k := range xv {
				xv[k] = float32(k%5)*0.5 - 1
			}
			for k := range uv {
				uv[k] = float32(k%7)*0.25 - 0.5
			}
			for k := range iv {
				idx[k] = (k * 3) % n
				iv[k] = int32(idx[k])
			}
			res := must(rt.Run(map[string]*Array{
				"x": must(NewArray(xv, int64(n), 3)), "i": must(NewArray(iv, int64(m))),
				"u": must(NewArray(uv, int64(m), 3)),
			}))
			if got := res["y"]; !sameElems(got.Float32s(), reducedScatterRef(xv, 3, idx, uv, int(red))) {
				t.Errorf("reduction %d at n = %d, m = %d: %v", red, n, m, got.Data())
			}
		}
		_, err := rt.Run(map[string]*Array{"x": must(NewArray([]float32{1, 2, 3}, 1, 3)),
			"i": must(NewArray([]int32{0, 1}, 2)), "u": must(NewArray(make([]float32, 6), 2, 3))})
		wantCode(t, err, InvalidArgument, "index 1 (position 1 of the indices) is outside [0, 1) on axis 0")
		rt.Close()
		p.Close()
	}
	s := newScope(t)
	x := must(s.Input("x", F32, "n, 3"))
	_, err := x.Scatter(must(s.Input("i", I32, "2")), must(s.Input("u", F32, "2, 3")), 0, 7)
	wantCode(t, err, InvalidArgument, "reduction 7 is not one of")
}

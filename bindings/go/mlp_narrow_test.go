package shapepoly

import (
	"math"
	"testing"
)

// The demo MLP (784-256-256-10, relu, softmax) as an f16 and a bf16 copy of the f32 model
// (weights rounded to nearest even, parameters of the program), traced once with a symbolic
// batch, saved and loaded, and run at batch 1, 7, 64 and 1000: within 1e-2 (max-norm relative)
// of the f32 model on the same inputs.

var mlpDims = []int64{784, 256, 256, 10}

func mlpWeights() [][]float32 {
	seed := uint32(42)
	next := func(scale float32) float32 {
		seed = seed*1664525 + 1013904223
		return scale * (float32(seed>>8)/8388608 - 1)
	}
	var ws [][]float32
	for l := 0; l < 3; l++ {
		w := make([]float32, mlpDims[l]*mlpDims[l+1])
		for i := range w {
			w[i] = next(1 / float32(math.Sqrt(float64(mlpDims[l]))))
		}
		b := make([]float32, mlpDims[l+1])
		for i := range b {
			b[i] = next(0.1)
		}
		ws = append(ws, w, b)
	}
	return ws
}

// encodeAs gives floats as an array of dtype (F32, F16 or BF16) of the given shape.
func encodeAs(t *testing.T, dtype DType, v []float32, shape ...int64) *Array {
	switch dtype {
	case F16:
		h := make([]Float16, len(v))
		for i, x := range v {
			h[i] = Float16FromFloat32(x)
		}
		return must(NewArray(h, shape...))
	case BF16:
		h := make([]BFloat16, len(v))
		for i, x := range v {
			h[i] = BFloat16FromFloat32(x)
		}
		return must(NewArray(h, shape...))
	}
	return must(NewArray(append([]float32(nil), v...), shape...))
}

func decodeAs(a *Array) []float32 {
	switch a.DType() {
	case F16:
		h := a.Data().([]Float16)
		out := make([]float32, len(h))
		for i, x := range h {
			out[i] = x.Float32()
		}
		return out
	case BF16:
		h := a.Data().([]BFloat16)
		out := make([]float32, len(h))
		for i, x := range h {
			out[i] = x.Float32()
		}
		return out
	}
	return a.Float32s()
}

func mlpRuntime(t *testing.T, dtype DType, ws [][]float32) *Runtime {
	s := newScope(t)
	x := must(s.Input("x", dtype, "batch, 784"))
	ins := []Tensor{x}
	h := x
	names := []string{"w1", "b1", "w2", "b2", "w3", "b3"}
	for l := 0; l < 3; l++ {
		w := must(s.Parameter(names[2*l], encodeAs(t, dtype, ws[2*l], mlpDims[l], mlpDims[l+1])))
		b := must(s.Parameter(names[2*l+1], encodeAs(t, dtype, ws[2*l+1], mlpDims[l+1])))
		ins = append(ins, w, b)
		h = must(must(h.Matmul(w)).Add(b))
		if l < 2 {
			h = must(h.Max(must(s.Constant(encodeAs(t, dtype, []float32{0})))))
		}
	}
	p := must(s.CreateProgram(ins, Output{"probs", must(h.Softmax(-1))}))
	defer p.Close()
	loaded := must(LoadProgram(must(p.Serialize())))
	defer loaded.Close()
	rt := must(NewRuntime(loaded, nil))
	t.Cleanup(rt.Close)
	return rt
}

func TestHalfPrecisionMLPMatchesF32(t *testing.T) {
	ws := mlpWeights()
	ref := mlpRuntime(t, F32, ws)
	seed := uint32(7)
	for _, batch := range []int64{1, 7, 64, 1000} {
		x := make([]float32, batch*784)
		for i := range x {
			seed = seed*1664525 + 1013904223
			x[i] = float32(seed>>8)/8388608 - 1
		}
		want := must(ref.Run(map[string]*Array{"x": encodeAs(t, F32, x, batch, 784)}))["probs"].Float32s()
		scale := 0.0
		for _, v := range want {
			scale = math.Max(scale, math.Abs(float64(v)))
		}
		for _, dtype := range []DType{F16, BF16} {
			rt := mlpRuntime(t, dtype, ws)
			out := must(rt.Run(map[string]*Array{"x": encodeAs(t, dtype, x, batch, 784)}))["probs"]
			if out.DType() != dtype || !slicesEqual(out.Shape(), []int64{batch, 10}) {
				t.Fatalf("%v batch %d: %v", dtype, batch, out)
			}
			worst := 0.0
			for i, g := range decodeAs(out) {
				worst = math.Max(worst, math.Abs(float64(g-want[i])))
			}
			if worst/scale > 1e-2 {
				t.Errorf("%v batch %d: max |p - p_f32| / max |p_f32| = %.2e", dtype, batch, worst/scale)
			}
		}
	}
}

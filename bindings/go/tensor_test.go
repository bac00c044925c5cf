package shapepoly

import (
	"math"
	"strings"
	"testing"
)

func near(a, b float64) bool {
	return math.Abs(a-b) <= 1e-5*math.Max(1, math.Abs(b)) || (math.IsNaN(a) && math.IsNaN(b))
}

// TestEveryOp traces every operation of the C API into one program, runs it, and checks the
// symbolic shapes and the values against a Go reference.
func TestEveryOp(t *testing.T) {
	s := newScope(t)
	x := must(s.Input("x", F32, "n, 3"))
	n := must(s.Var("n"))
	if x.DType() != F32 || x.String() != "f32(n, 3)" || x.Scope() != s {
		t.Fatal(x.String())
	}
	y := must(s.Constant(must(NewArray([]float32{0.5, 2, 0.25}, 3))))
	yi := must(s.Constant(must(NewArray([]int32{6, 3, 5}, 3))))
	idx := must(s.Constant(must(NewArray([]int32{2, 0}, 2))))
	w := must(s.Constant(must(NewArray([]float32{1, 2, 3, 4, 5, 6}, 3, 2))))

	type check struct {
		shape string
		want  func(r, c int, xv func(r, c int) float64) float64 // value at row r, column c
	}
	outs := []Output{}
	checks := map[string]check{}
	add := func(name string, t2 Tensor, err error, shape string, want func(r, c int, xv func(r, c int) float64) float64) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		outs = append(outs, Output{Name: name, Tensor: t2})
		checks[name] = check{shape, want}
	}
	ew := func(f func(float64) float64) func(r, c int, xv func(r, c int) float64) float64 {
		return func(r, c int, xv func(r, c int) float64) float64 { return f(xv(r, c)) }
	}
	unary := map[UnaryOp]func(float64) float64{
		UnaryNeg: func(v float64) float64 { return -v }, UnaryAbs: math.Abs, UnaryExp: math.Exp,
		UnaryLog: math.Log, UnaryLog1p: math.Log1p, UnaryExpm1: math.Expm1, UnarySqrt: math.Sqrt,
		UnaryRsqrt: func(v float64) float64 { return 1 / math.Sqrt(v) }, UnarySin: math.Sin,
		UnaryCos: math.Cos, UnaryTanh: math.Tanh,
		UnaryLogistic: func(v float64) float64 { return 1 / (1 + math.Exp(-v)) },
		UnaryFloor:    math.Floor, UnaryCeil: math.Ceil, UnaryRound: math.RoundToEven,
		UnarySign: func(v float64) float64 { return math.Copysign(1, v) },
		UnaryTan:  math.Tan, UnarySinh: math.Sinh, UnaryCosh: math.Cosh, UnaryAsin: math.Asin,
		UnaryAcos: math.Acos, UnaryAtan: math.Atan, UnaryAsinh: math.Asinh, UnaryAcosh: math.Acosh,
		UnaryAtanh: math.Atanh,
	}
	named := map[UnaryOp]func() (Tensor, error){
		UnaryNeg: x.Neg, UnaryAbs: x.Abs, UnaryExp: x.Exp, UnaryLog: x.Log, UnaryLog1p: x.Log1p,
		UnaryExpm1: x.Expm1, UnarySqrt: x.Sqrt, UnaryRsqrt: x.Rsqrt, UnarySin: x.Sin, UnaryCos: x.Cos,
		UnaryTanh: x.Tanh, UnaryLogistic: x.Logistic, UnaryFloor: x.Floor, UnaryCeil: x.Ceil,
		UnaryRound: x.Round, UnarySign: x.Sign, UnaryTan: x.Tan, UnarySinh: x.Sinh, UnaryCosh: x.Cosh,
		UnaryAsin: x.Asin, UnaryAcos: x.Acos, UnaryAtan: x.Atan, UnaryAsinh: x.Asinh,
		UnaryAcosh: x.Acosh, UnaryAtanh: x.Atanh,
	}
	for op, f := range unary {
		r, err := named[op]()
		add("unary"+itoa(int64(op)), r, err, "(n, 3)", ew(f))
	}
	yv := []float64{0.5, 2, 0.25}
	binary := map[string]struct {
		f  func(Tensor) (Tensor, error)
		op func(a, b float64) float64
	}{
		"add": {x.Add, func(a, b float64) float64 { return a + b }},
		"sub": {x.Sub, func(a, b float64) float64 { return a - b }},
		"mul": {x.Mul, func(a, b float64) float64 { return a * b }},
		"div": {x.Div, func(a, b float64) float64 { return a / b }},
		"pow": {x.Pow, math.Pow},
		"max": {x.Max, math.Max},
		"min": {x.Min, math.Min},
		"rem": {x.Rem, math.Mod},
	}
	for name, b := range binary {
		r, err := b.f(y)
		op := b.op
		add(name, r, err, "(n, 3)", func(r, c int, xv func(r, c int) float64) float64 { return op(xv(r, c), yv[c]) })
	}
	// Integer and bool ops on converted values.
	xi := must(must(x.Mul(must(s.Constant(must(NewArray([]float32{10})))))).Convert(I32))
	yiv := []int64{6, 3, 5}
	toI := func(r, c int, xv func(r, c int) float64) int64 { return int64(float32(xv(r, c)) * 10) }
	for name, f := range map[string]struct {
		f  func(Tensor) (Tensor, error)
		op func(a, b int64) int64
	}{
		"and": {xi.And, func(a, b int64) int64 { return a & b }},
		"or":  {xi.Or, func(a, b int64) int64 { return a | b }},
		"xor": {xi.Xor, func(a, b int64) int64 { return a ^ b }},
	} {
		r, err := f.f(yi)
		op := f.op
		add(name, r, err, "(n, 3)", func(r, c int, xv func(r, c int) float64) float64 {
			return float64(op(toI(r, c, xv), yiv[c]))
		})
	}
	lt := must(x.Compare(CmpLt, y))
	add("lt_as_f32", must(lt.Convert(F32)), nil, "(n, 3)", func(r, c int, xv func(r, c int) float64) float64 {
		if xv(r, c) < yv[c] {
			return 1
		}
		return 0
	})
	add("not", must(must(lt.Not()).Convert(F32)), nil, "(n, 3)", func(r, c int, xv func(r, c int) float64) float64 {
		if xv(r, c) < yv[c] {
			return 0
		}
		return 1
	})
	sel, err := lt.Select(x, must(y.BroadcastTo(n, must(s.Const(3)))))
	add("select", sel, err, "(n, 3)", func(r, c int, xv func(r, c int) float64) float64 {
		if xv(r, c) < yv[c] {
			return xv(r, c)
		}
		return yv[c]
	})
	// Structural ops: flatten values row-major to compare.
	flat, err := x.Reshape(Dim{})
	add("reshape", flat, err, "(3*n,)", nil)
	add("transpose", must(x.Transpose(1, 0)), nil, "(3, n)", nil)
	add("concat", must(Concatenate(0, x, x)), nil, "(2*n, 3)", nil)
	one := must(s.Const(1))
	add("slice", must(x.Slice([]Dim{one, {}}, nil, []int64{1, 2})), nil, "(n - 1, 2)", nil)
	zero := must(s.Const(0))
	add("pad", must(x.Pad([]Dim{zero, one}, []Dim{one, zero}, 9)), nil, "(n + 1, 4)", nil)
	add("sum1", must(x.Reduce(ReduceSum, []int64{1}, false)), nil, "(n,)", nil)
	add("maxkeep", must(x.Reduce(ReduceMax, []int64{0}, true)), nil, "(1, 3)", nil)
	add("meanall", must(x.Reduce(ReduceMean, nil, false)), nil, "()", nil)
	add("matmul", must(x.Matmul(w)), nil, "(n, 2)", nil)
	add("dot", must(x.DotGeneral(w, nil, nil, []int64{1}, []int64{0})), nil, "(n, 2)", nil)
	add("iota", must(s.Iota(I64, []Dim{n}, 0)), nil, "(n,)", nil)
	add("softmax", must(x.Softmax(1)), nil, "(n, 3)", nil)
	add("layernorm", must(x.LayerNorm(-1, 0)), nil, "(n, 3)", nil)
	add("cumsum", must(x.Cumsum(0)), nil, "(n, 3)", nil)
	add("take", must(x.Take(idx, 1)), nil, "(n, 2)", nil)
	add("reverse", must(x.Reverse(0, -1)), nil, "(n, 3)", nil)
	add("dimvalue", must(s.DimValue(must(n.Mul(must(s.Const(3)))))), nil, "()", nil)

	p := must(s.CreateProgram([]Tensor{x}, outs...))
	defer p.Close()
	for i, o := range outs {
		if shape := must(p.OutputShape(i)); shape != checks[o.Name].shape {
			t.Errorf("%s: shape %s, want %s", o.Name, shape, checks[o.Name].shape)
		}
		if dims := must(o.Tensor.Shape()); len(dims) == 0 && checks[o.Name].shape != "()" {
			t.Errorf("%s: no dims", o.Name)
		}
	}
	opts := must(NewRuntimeOptions())
	noErr(t, opts.SetNumThreads(1))
	rt := newTwinRuntime(t, p, opts)
	opts.Close()
	defer rt.Close()
	const rows = 4
	xd := []float32{0.3, 1.7, 2.5, -0.6, 0.9, 1.2, 3.3, 0.1, -2.5, 0.45, 0.75, 1.5}
	xv := func(r, c int) float64 { return float64(xd[r*3+c]) }
	res := must(rt.Run(map[string]*Array{"x": must(NewArray(xd, rows, 3))}))
	for name, c := range checks {
		if c.want == nil {
			continue
		}
		got := res[name]
		vals := asFloat64(got)
		for r := 0; r < rows; r++ {
			for col := 0; col < 3; col++ {
				want := c.want(r, col, xv)
				if (name == "unary3" || name == "unary4" || name == "unary6" || name == "unary7") && xv(r, col) < 0 {
					continue // log/sqrt of a negative: NaN either way
				}
				if !near(vals[r*3+col], float64(float32(want))) {
					t.Errorf("%s[%d,%d] = %v, want %v", name, r, col, vals[r*3+col], want)
				}
			}
		}
	}
	wantVals := map[string][]float64{
		"reshape":   f64(xd),
		"transpose": {0.3, -0.6, 3.3, 0.45, 1.7, 0.9, 0.1, 0.75, 2.5, 1.2, -2.5, 1.5},
		"concat":    append(f64(xd), f64(xd)...),
		"slice":     {-0.6, 1.2, 3.3, -2.5, 0.45, 1.5},
		"pad":       {9, 0.3, 1.7, 2.5, 9, -0.6, 0.9, 1.2, 9, 3.3, 0.1, -2.5, 9, 0.45, 0.75, 1.5, 9, 9, 9, 9},
		"sum1":      {4.5, 1.5, 0.9, 2.7},
		"maxkeep":   {3.3, 1.7, 2.5},
		"meanall":   {9.6 / 12},
		"matmul":    {0.3 + 5.1 + 12.5, 0.6 + 6.8 + 15, -0.6 + 2.7 + 6, -1.2 + 3.6 + 7.2, 3.3 + 0.3 - 12.5, 6.6 + 0.4 - 15, 0.45 + 2.25 + 7.5, 0.9 + 3 + 9},
		"iota":      {0, 1, 2, 3},
		"cumsum":    {0.3, 1.7, 2.5, -0.3, 2.6, 3.7, 3.0, 2.7, 1.2, 3.45, 3.45, 2.7},
		"take":      {2.5, 0.3, 1.2, -0.6, -2.5, 3.3, 1.5, 0.45},
		"reverse":   {1.5, 0.75, 0.45, -2.5, 0.1, 3.3, 1.2, 0.9, -0.6, 2.5, 1.7, 0.3},
		"dimvalue":  {12},
	}
	wantVals["dot"] = wantVals["matmul"]
	for name, want := range wantVals {
		got := asFloat64(res[name])
		if len(got) != len(want) {
			t.Errorf("%s: %d values, want %d", name, len(got), len(want))
			continue
		}
		for i := range want {
			if !near(got[i], want[i]) {
				t.Errorf("%s[%d] = %v, want %v", name, i, got[i], want[i])
			}
		}
	}
	// Softmax rows sum to 1; layer norm rows have mean 0.
	sm, ln := asFloat64(res["softmax"]), asFloat64(res["layernorm"])
	for r := 0; r < rows; r++ {
		if !near(sm[3*r]+sm[3*r+1]+sm[3*r+2], 1) || math.Abs(ln[3*r]+ln[3*r+1]+ln[3*r+2]) > 1e-5 {
			t.Errorf("row %d: softmax %v layer norm %v", r, sm[3*r:3*r+3], ln[3*r:3*r+3])
		}
	}
	if s := res["iota"].Shape(); len(s) != 1 || s[0] != rows || res["iota"].DType() != I64 {
		t.Fatal(res["iota"])
	}
}

func f64(v []float32) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = float64(x)
	}
	return out
}

func asFloat64(a *Array) []float64 {
	switch d := a.Data().(type) {
	case []float32:
		return f64(d)
	case []float64:
		return d
	case []int32:
		out := make([]float64, len(d))
		for i, v := range d {
			out[i] = float64(v)
		}
		return out
	case []int64:
		out := make([]float64, len(d))
		for i, v := range d {
			out[i] = float64(v)
		}
		return out
	case []bool:
		out := make([]float64, len(d))
		for i, v := range d {
			if v {
				out[i] = 1
			}
		}
		return out
	}
	return nil
}

func TestTracingErrors(t *testing.T) {
	s := newScope(t)
	v := must(s.Input("v", F32, "v"))
	four := must(s.Input("four", F32, "4"))
	// Broadcasting v against 4 with no constraint cannot be decided.
	_, err := v.Add(four)
	wantCode(t, err, Inconclusive, "v", "4")
	a := must(s.Input("a", F32, "n, 4"))
	b := must(s.Input("b", F32, "5, 3"))
	_, err = a.Matmul(b)
	wantCode(t, err, ShapeMismatch, "matmul")
	_, err = a.Add(must(s.Input("c", F32, "3")))
	wantCode(t, err, ShapeMismatch)
	_, err = a.Add(must(s.Input("d", I32, "4")))
	wantCode(t, err, DTypeMismatch)
	_, err = a.Softmax(5)
	wantCode(t, err, InvalidArgument)
	_, err = a.Unary(UnaryOp(99))
	wantCode(t, err, InvalidArgument)
	_, err = (Tensor{}).Exp()
	wantCode(t, err, InvalidArgument)
	_, err = a.Slice([]Dim{{}}, nil, nil) // wrong length, caught before C reads past it
	wantCode(t, err, InvalidArgument)
	_, err = a.Pad([]Dim{{}}, nil, 0)
	wantCode(t, err, InvalidArgument)
	_, err = a.DotGeneral(b, []int64{0}, nil, nil, nil)
	wantCode(t, err, InvalidArgument)
	_, err = s.Constant(nil)
	wantCode(t, err, InvalidArgument)
	_, err = Concatenate(0)
	wantCode(t, err, InvalidArgument)
	_, err = s.Input("", F32, "3")
	wantCode(t, err, InvalidArgument)
	// A fact added with Check makes the broadcast decidable.
	vd, fourD := must(s.Var("v")), must(s.Const(4))
	noErr(t, s.Check(vd, CmpEq, fourD, "v must be 4"))
	sum := must(v.Add(four))
	if sum.String() != "f32(v,)" {
		t.Fatal(sum.String())
	}
	// Program creation errors.
	_, err = s.CreateProgram(nil, Output{"y", sum})
	wantCode(t, err, InvalidArgument, "input 'four'", "not listed")
	_, err = s.CreateProgram([]Tensor{v, four}, Output{"y", sum}, Output{"y", sum})
	wantCode(t, err, InvalidArgument)
	other := newScope(t)
	_, err = other.CreateProgram([]Tensor{v, four}, Output{"y", sum})
	wantCode(t, err, ScopeMismatch)
	m := must(s.Input("m", F32, "m*k"))
	_, err = s.CreateProgram([]Tensor{m}, Output{"y", m})
	wantCode(t, err, Unsolvable)
}

func TestInputDimsAndDimInput(t *testing.T) {
	s := newScope(t)
	n := must(s.Var("n"))
	twoN := must(n.Mul(must(s.Const(2))))
	x := must(s.InputDims("x", F64, twoN))
	if x.String() != "f64(2*n,)" {
		t.Fatal(x.String())
	}
	mIn := must(s.DimInput("m"))
	m := must(s.Var("m"))
	io := must(s.Iota(F64, []Dim{m}, 0))
	total := must(must(io.Reduce(ReduceSum, nil, false)).Add(must(x.Reduce(ReduceSum, nil, false))))
	p := must(s.CreateProgram([]Tensor{x, mIn}, Output{"total", total}, Output{"m2", must(mIn.Mul(mIn))}))
	defer p.Close()
	if p.InputRole(1) != InputDim || p.InputRole(0) != InputData || p.InputDType(1) != I64 {
		t.Fatal(p.InputRole(1))
	}
	rt := newTwinRuntime(t, p, nil)
	defer rt.Close()
	res := must(rt.Run(map[string]*Array{
		"x": must(NewArray([]float64{1, 2, 3, 4}, 4)),
		"m": must(NewArray([]int64{5})),
	}))
	if v := res["total"].Float64s(); len(v) != 1 || v[0] != 10+10 {
		t.Fatal(v)
	}
	if v := res["m2"].Int64s(); v[0] != 25 || len(res["m2"].Shape()) != 0 {
		t.Fatal(v)
	}
	// DryRun / CheckShapes with a dimension input given as a one-element slice.
	noErr(t, rt.DryRun(map[string][]int64{"x": {6}, "m": {7}}))
	b := must(p.CheckShapes(map[string][]int64{"x": {6}, "m": {7}}))
	if bm := b.Map(); bm["n"] != 3 || bm["m"] != 7 {
		t.Fatal(bm)
	}
}

// TestEmptyListAttributes: ops whose integer-list attributes are empty (dot_general without
// batch or contracting dims, transpose, reduce and slice of a scalar) must survive a save and
// reload; they once serialized but failed to load ("misaligned vector"). Each runs through
// newTwinRuntime (reload, then both programs) and is checked against values computed here.
func TestEmptyListAttributes(t *testing.T) {
	run := func(t *testing.T, inputs []Tensor, out Tensor, shape string, feed map[string]*Array) *Array {
		t.Helper()
		s := out.Scope()
		p := must(s.CreateProgram(inputs, Output{"out", out}))
		defer p.Close()
		if got := must(p.OutputShape(0)); got != shape {
			t.Fatalf("shape %s, want %s", got, shape)
		}
		rt := newTwinRuntime(t, p, nil)
		defer rt.Close()
		return must(rt.Run(feed))["out"]
	}
	want := func(t *testing.T, got *Array, shape []int64, vals []float64) {
		t.Helper()
		if !slicesEqual(got.Shape(), shape) {
			t.Fatalf("shape %v, want %v", got.Shape(), shape)
		}
		g := asFloat64(got)
		if len(g) != len(vals) {
			t.Fatalf("%d values, want %d", len(g), len(vals))
		}
		for i := range vals {
			if !near(g[i], vals[i]) {
				t.Errorf("[%d] = %v, want %v", i, g[i], vals[i])
			}
		}
	}
	t.Run("dot_general without batch dims", func(t *testing.T) {
		s := newScope(t)
		a := must(s.Input("a", F32, "m, k"))
		b := must(s.Input("b", F32, "k, n"))
		av, bv := []float32{1, 2, 3, 4, 5, 6}, []float32{1, -1, 2, 0.5, 0, 3}
		got := run(t, []Tensor{a, b}, must(a.DotGeneral(b, nil, nil, []int64{1}, []int64{0})), "(m, n)",
			map[string]*Array{"a": must(NewArray(av, 2, 3)), "b": must(NewArray(bv, 3, 2))})
		var ref []float64
		for i := 0; i < 2; i++ {
			for j := 0; j < 2; j++ {
				acc := 0.0
				for k := 0; k < 3; k++ {
					acc += float64(av[i*3+k]) * float64(bv[k*2+j])
				}
				ref = append(ref, acc)
			}
		}
		want(t, got, []int64{2, 2}, ref)
	})
	t.Run("dot_general without any dims (outer product)", func(t *testing.T) {
		s := newScope(t)
		u := must(s.Input("u", F64, "k"))
		v := must(s.Input("v", F64, "j"))
		got := run(t, []Tensor{u, v}, must(u.DotGeneral(v, nil, nil, nil, nil)), "(k, j)",
			map[string]*Array{"u": must(NewArray([]float64{1, 2, 3}, 3)), "v": must(NewArray([]float64{10, -1}, 2))})
		want(t, got, []int64{3, 2}, []float64{10, -1, 20, -2, 30, -3})
	})
	t.Run("dot_general with batch dims but no contracting dims", func(t *testing.T) {
		s := newScope(t)
		p := must(s.Input("p", F32, "B, 2"))
		q := must(s.Input("q", F32, "B, 3"))
		got := run(t, []Tensor{p, q}, must(p.DotGeneral(q, []int64{0}, []int64{0}, nil, nil)), "(B, 2, 3)",
			map[string]*Array{"p": must(NewArray([]float32{1, 2, 3, 4}, 2, 2)), "q": must(NewArray([]float32{1, 0, -1, 2, 3, 4}, 2, 3))})
		want(t, got, []int64{2, 2, 3}, []float64{1, 0, -1, 2, 0, -2, 6, 9, 12, 8, 12, 16})
	})
	t.Run("transpose of a scalar", func(t *testing.T) {
		s := newScope(t)
		x := must(s.Input("x", F32, ""))
		got := run(t, []Tensor{x}, must(x.Transpose()), "()", map[string]*Array{"x": must(NewArray([]float32{2.5}))})
		want(t, got, []int64{}, []float64{2.5})
	})
	for _, c := range []struct {
		name     string
		op       ReduceOp
		keepdims bool
	}{{"sum", ReduceSum, false}, {"max keepdims", ReduceMax, true}, {"mean", ReduceMean, false}, {"prod keepdims", ReduceProd, true}} {
		t.Run("reduce of a scalar: "+c.name, func(t *testing.T) {
			s := newScope(t)
			x := must(s.Input("x", F64, ""))
			got := run(t, []Tensor{x}, must(x.Reduce(c.op, nil, c.keepdims)), "()", map[string]*Array{"x": must(NewArray([]float64{-3.25}))})
			want(t, got, []int64{}, []float64{-3.25})
		})
	}
	t.Run("reduce of an i32 scalar", func(t *testing.T) {
		s := newScope(t)
		x := must(s.Input("x", I32, ""))
		got := run(t, []Tensor{x}, must(x.Reduce(ReduceMin, []int64{}, false)), "()", map[string]*Array{"x": must(NewArray([]int32{-7}))})
		want(t, got, []int64{}, []float64{-7})
	})
	t.Run("slice of a scalar", func(t *testing.T) {
		s := newScope(t)
		x := must(s.Input("x", F32, ""))
		got := run(t, []Tensor{x}, must(x.Slice(nil, nil, nil)), "()", map[string]*Array{"x": must(NewArray([]float32{4}))})
		want(t, got, []int64{}, []float64{4})
	})
}

// flipRef is np.flip of the row-major data of shape along axes (normalized).
func flipRef[T any](shape []int64, data []T, axes ...int) []T {
	rank := len(shape)
	strides := make([]int64, rank)
	for i, st := rank-1, int64(1); i >= 0; i-- {
		strides[i], st = st, st*shape[i]
	}
	out := make([]T, len(data))
	for flat := range data {
		src := int64(0)
		for i := 0; i < rank; i++ {
			k := int64(flat) / strides[i] % shape[i]
			for _, a := range axes {
				if a == i {
					k = shape[i] - 1 - k
				}
			}
			src += k * strides[i]
		}
		out[flat] = data[src]
	}
	return out
}

// sameElems: equal lengths and elements (nil and empty slices alike).
func sameElems[T comparable](a, b []T) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestReverse: Reverse (np.flip) over every dtype, with no axes, one, a negative one and
// several, of a scalar and of symbolic shapes, saved, reloaded and run through newTwinRuntime
// at several sizes (0 too), against flipRef.
func TestReverse(t *testing.T) {
	s, err := NewScopeWithRanges(nil, Range{"n", 0, 100}) // n = 0 is an ordinary size
	noErr(t, err)
	defer s.Close()
	x := must(s.Input("x", F32, "n, 3, 2"))
	xd := must(s.Input("xd", F64, "n"))
	xi := must(s.Input("xi", I32, "n, 3, 2"))
	xl := must(s.Input("xl", I64, "3, n"))
	xb := must(s.Input("xb", Bool, "n, 3, 2"))
	sc := must(s.Input("s", F32, ""))
	type rc struct {
		name, input, shape string
		out                Tensor
		axes               []int // normalized
	}
	cases := []rc{
		{"axis0", "x", "(n, 3, 2)", must(x.Reverse(0)), []int{0}},
		{"last_negative", "x", "(n, 3, 2)", must(x.Reverse(-1)), []int{2}},
		{"axes_2_0", "x", "(n, 3, 2)", must(x.Reverse(2, 0)), []int{0, 2}},
		{"all", "x", "(n, 3, 2)", must(x.Reverse(0, 1, 2)), []int{0, 1, 2}},
		{"copy", "x", "(n, 3, 2)", must(x.Reverse()), nil},
		{"twice", "x", "(n, 3, 2)", must(must(x.Reverse(1)).Reverse(-2)), nil},
		{"f64", "xd", "(n,)", must(xd.Reverse(-1)), []int{0}},
		{"i32_middle", "xi", "(n, 3, 2)", must(xi.Reverse(1)), []int{1}},
		{"i64_both", "xl", "(3, n)", must(xl.Reverse(-2, -1)), []int{0, 1}},
		{"bool", "xb", "(n, 3, 2)", must(xb.Reverse(0, -1)), []int{0, 2}},
		{"scalar", "s", "()", must(sc.Reverse()), nil},
	}
	outs := make([]Output, len(cases))
	for i, c := range cases {
		outs[i] = Output{Name: c.name, Tensor: c.out}
	}
	p := must(s.CreateProgram([]Tensor{x, xd, xi, xl, xb, sc}, outs...))
	defer p.Close()
	for i, c := range cases {
		if got := must(p.OutputShape(i)); got != c.shape {
			t.Errorf("%s: shape %s, want %s", c.name, got, c.shape)
		}
		if p.OutputDType(i) != c.out.DType() {
			t.Errorf("%s: dtype %v, want %v", c.name, p.OutputDType(i), c.out.DType())
		}
	}
	text := p.String()
	for _, want := range []string{"reverse(%0) axes=[0, 2]", "reverse(%0) axes=[2]", "reverse(%5) axes=[]"} {
		if !strings.Contains(text, want) {
			t.Errorf("the listing lacks %q (axes normalized and sorted):\n%s", want, text)
		}
	}
	rt := newTwinRuntime(t, p, nil)
	defer rt.Close()
	for _, n := range []int64{4, 1, 0, 7} {
		x3, xn, xl3 := []int64{n, 3, 2}, []int64{n}, []int64{3, n}
		xv, iv, bv := make([]float32, 6*n), make([]int32, 6*n), make([]bool, 6*n)
		for i := range xv {
			xv[i], iv[i], bv[i] = float32(i)*0.5-3, int32(i)*7-20, i%3 == 1
		}
		dv, lv := make([]float64, n), make([]int64, 3*n)
		for i := range dv {
			dv[i] = 1 / float64(i+1)
		}
		for i := range lv {
			lv[i] = int64(i-5) << 40
		}
		res := must(rt.Run(map[string]*Array{
			"x": must(NewArray(xv, x3...)), "xd": must(NewArray(dv, xn...)), "xi": must(NewArray(iv, x3...)),
			"xl": must(NewArray(lv, xl3...)), "xb": must(NewArray(bv, x3...)), "s": must(NewArray([]float32{-2.5})),
		}))
		for _, c := range cases {
			got := res[c.name]
			var shape []int64
			var ok bool
			switch c.input {
			case "x":
				shape, ok = x3, sameElems(got.Float32s(), flipRef(x3, xv, c.axes...))
			case "xd":
				shape, ok = xn, sameElems(got.Float64s(), flipRef(xn, dv, c.axes...))
			case "xi":
				shape, ok = x3, sameElems(got.Int32s(), flipRef(x3, iv, c.axes...))
			case "xl":
				shape, ok = xl3, sameElems(got.Int64s(), flipRef(xl3, lv, c.axes...))
			case "xb":
				shape, ok = x3, sameElems(got.Bools(), flipRef(x3, bv, c.axes...))
			default:
				shape, ok = []int64{}, sameElems(got.Float32s(), []float32{-2.5})
			}
			if !slicesEqual(got.Shape(), shape) || !ok {
				t.Errorf("%s at n = %d: got %v %v", c.name, n, got, got.Data())
			}
		}
	}
	if got := flipRef([]int64{2, 3}, []int{0, 1, 2, 3, 4, 5}, 1); !sameElems(got, []int{2, 1, 0, 5, 4, 3}) {
		t.Fatalf("flipRef: %v", got)
	}
}

func TestReverseErrors(t *testing.T) {
	s := newScope(t)
	x := must(s.Input("x", F32, "n, 3, 2"))
	for _, axes := range [][]int64{{0, 0}, {1, -2}, {2, 0, -1}} {
		_, err := x.Reverse(axes...)
		wantCode(t, err, InvalidArgument, "an axis is listed twice")
	}
	_, err := x.Reverse(3)
	wantCode(t, err, InvalidArgument, "axis 3 is out of range")
	_, err = x.Reverse(0, -4)
	wantCode(t, err, InvalidArgument, "axis -4 is out of range")
	_, err = must(s.Input("s", I64, "")).Reverse(0)
	wantCode(t, err, InvalidArgument)
	_, err = (Tensor{}).Reverse()
	wantCode(t, err, InvalidArgument)
	// The tensor stays usable.
	if y := must(x.Reverse(1)); y.String() != "f32(n, 3, 2)" {
		t.Fatal(y.String())
	}
}

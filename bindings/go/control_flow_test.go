package shapepoly

import (
	"math"
	"os"
	"strings"
	"testing"
)

// Control flow traced from Go functions: Scan (an Elman RNN over a symbolic sequence length,
// saved and reloaded), WhileLoop (Newton's square root, a data-dependent count, max trips) and
// Cond (a data-dependent predicate), each checked against a plain Go loop.

const rnnD, rnnH = 3, 4

// lcgWeights returns n deterministic values in [-0.5, 0.5).
func lcgWeights(n int, seed uint64) []float32 {
	out := make([]float32, n)
	s := seed
	for i := range out {
		s = s*6364136223846793005 + 1442695040888963407
		out[i] = float32(float64(s>>11)/float64(uint64(1)<<53) - 0.5)
	}
	return out
}

// rnnReference is h_t = tanh(x_t W + h_{t-1} U) as a plain loop: the final h and every h.
func rnnReference(xs, h0, w, u []float32) ([]float32, []float32) {
	h := append([]float32(nil), h0...)
	var ys []float32
	for t := 0; t+rnnD <= len(xs); t += rnnD {
		next := make([]float32, rnnH)
		for j := 0; j < rnnH; j++ {
			acc := 0.0
			for i := 0; i < rnnD; i++ {
				acc += float64(xs[t+i]) * float64(w[i*rnnH+j])
			}
			for i := 0; i < rnnH; i++ {
				acc += float64(h[i]) * float64(u[i*rnnH+j])
			}
			next[j] = float32(math.Tanh(acc))
		}
		h = next
		ys = append(ys, h...)
	}
	return h, ys
}

func closeF32(t *testing.T, what string, got, want []float32) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, want %d", what, len(got), len(want))
	}
	for i := range got {
		if math.Abs(float64(got[i]-want[i])) > 1e-5 {
			t.Fatalf("%s[%d] = %v, want %v", what, i, got[i], want[i])
		}
	}
}

// vecMat is v @ m for a vector v.
func vecMat(v, m Tensor) (Tensor, error) { return v.DotGeneral(m, nil, nil, []int64{0}, []int64{0}) }

func rnnProgram(t *testing.T) *Program {
	s := newScope(t)
	noErr(t, s.Declare("t", 0, 1<<20))
	x := must(s.Input("x", F32, "t, 3"))
	h0 := must(s.Input("h0", F32, "4"))
	w := must(s.Input("w", F32, "3, 4"))
	u := must(s.Input("u", F32, "4, 4"))
	carry, ys, err := s.Scan(func(c, xt []Tensor) ([]Tensor, []Tensor, error) {
		a, err := vecMat(xt[0], w)
		if err != nil {
			return nil, nil, err
		}
		b, err := vecMat(c[0], u)
		if err != nil {
			return nil, nil, err
		}
		h, err := must(a.Add(b)).Tanh()
		return []Tensor{h}, []Tensor{h}, err
	}, []Tensor{h0}, []Tensor{x}, Dim{}, false, 0)
	noErr(t, err)
	if len(carry) != 1 || len(ys) != 1 {
		t.Fatalf("Scan gave %d carries and %d ys", len(carry), len(ys))
	}
	if got := ys[0].String(); got != "f32(t, 4)" {
		t.Fatalf("ys is %s", got)
	}
	p, err := s.CreateProgram([]Tensor{x, h0, w, u}, Output{"h", carry[0]}, Output{"ys", ys[0]})
	noErr(t, err)
	t.Cleanup(p.Close)
	return p
}

func runRNN(t *testing.T, rt *Runtime, steps int) {
	xs := lcgWeights(steps*rnnD, uint64(1+steps))
	h0, w, u := lcgWeights(rnnH, 2), lcgWeights(rnnD*rnnH, 3), lcgWeights(rnnH*rnnH, 4)
	out, err := rt.Run(map[string]*Array{
		"x":  must(NewArray(xs, int64(steps), rnnD)),
		"h0": must(NewArray(h0, rnnH)),
		"w":  must(NewArray(w, rnnD, rnnH)),
		"u":  must(NewArray(u, rnnH, rnnH)),
	})
	noErr(t, err)
	h, ys := rnnReference(xs, h0, w, u)
	if got := out["ys"].Shape(); len(got) != 2 || got[0] != int64(steps) || got[1] != rnnH {
		t.Fatalf("ys has shape %v", got)
	}
	closeF32(t, "h", out["h"].Float32s(), h)
	closeF32(t, "ys", out["ys"].Float32s(), ys)
}

func TestScanElmanRNNOverSymbolicLength(t *testing.T) {
	p := rnnProgram(t)
	rt := must(NewRuntime(p, nil))
	defer rt.Close()
	for _, steps := range []int{0, 1, 7} {
		runRNN(t, rt, steps)
	}
	// Saved once, loaded, and run again.
	loaded := must(LoadProgram(must(p.Serialize())))
	defer loaded.Close()
	rt2 := must(NewRuntime(loaded, nil))
	defer rt2.Close()
	for _, steps := range []int{0, 1, 7} {
		runRNN(t, rt2, steps)
	}
}

func TestScanReverseWithLengthAndNoXs(t *testing.T) {
	s := newScope(t)
	noErr(t, s.Declare("n", 0, 100))
	n := must(s.DimInput("n"))
	c0 := must(s.Constant(must(NewArray([]int64{10}))))
	one := must(s.Constant(must(NewArray([]int64{1}))))
	carry, ys, err := s.Scan(func(c, _ []Tensor) ([]Tensor, []Tensor, error) {
		next, err := c[0].Add(one)
		return []Tensor{next}, []Tensor{c[0]}, err
	}, []Tensor{c0}, nil, must(s.Var("n")), true, 0)
	noErr(t, err)
	p := must(s.CreateProgram([]Tensor{n}, Output{"c", carry[0]}, Output{"ys", ys[0]}))
	defer p.Close()
	rt := newTwinRuntime(t, p, nil)
	out, err := rt.Run(map[string]*Array{"n": must(NewArray([]int64{4}))})
	noErr(t, err)
	if got := out["c"].Int64s(); len(got) != 1 || got[0] != 14 {
		t.Fatalf("c = %v", got)
	}
	want := []int64{13, 12, 11, 10} // reversed: step 3 runs first and stores 10
	if got := out["ys"].Int64s(); len(got) != 4 || got[0] != want[0] || got[3] != want[3] {
		t.Fatalf("ys = %v, want %v", got, want)
	}
}

func TestWhileLoopNewtonSqrtAndCount(t *testing.T) {
	s := newScope(t)
	a := must(s.Input("a", F32, "n"))
	k := must(s.Input("k", I64, ""))
	f32 := func(v float32) Tensor { return must(s.Constant(must(NewArray([]float32{v})))) }
	i64 := func(v int64) Tensor { return must(s.Constant(must(NewArray([]int64{v})))) }
	half, tol, zeroF, two := f32(0.5), f32(1e-5), f32(0), f32(2)
	zero, one := i64(0), i64(1)
	// Newton's iteration y <- (y + a/y) / 2 from y = a while some |y*y - a| > tol*a,
	// counting the steps.
	newton, err := s.WhileLoop(func(c []Tensor) (Tensor, error) {
		e := must(must(must(c[0].Mul(c[0])).Sub(a)).Abs())
		e = must(e.Sub(must(tol.Mul(a))))
		return must(e.Reduce(ReduceMax, nil, false)).Compare(CmpGt, zeroF)
	}, func(c []Tensor) ([]Tensor, error) {
		y := must(must(c[0].Add(must(a.Div(c[0])))).Mul(half))
		return []Tensor{y, must(c[1].Add(one))}, nil
	}, []Tensor{a, zero}, 100)
	noErr(t, err)
	// Count up to the data-dependent bound k, doubling an accumulator.
	counted, err := s.WhileLoop(func(c []Tensor) (Tensor, error) {
		return c[0].Compare(CmpLt, k)
	}, func(c []Tensor) ([]Tensor, error) {
		return []Tensor{must(c[0].Add(one)), must(c[1].Mul(two))}, nil
	}, []Tensor{zero, a}, -1)
	noErr(t, err)
	p := must(s.CreateProgram([]Tensor{a, k}, Output{"y", newton[0]}, Output{"steps", newton[1]},
		Output{"i", counted[0]}, Output{"acc", counted[1]}))
	defer p.Close()
	rt := newTwinRuntime(t, p, nil)
	av := []float32{2, 9, 0.25, 100}
	for _, kv := range []int64{0, 3} {
		out, err := rt.Run(map[string]*Array{"a": must(NewArray(av, 4)), "k": must(NewArray([]int64{kv}))})
		noErr(t, err)
		// The plain loop, in the same f32 operations.
		y := append([]float32(nil), av...)
		steps := int64(0)
		for {
			more := false
			for i := range y {
				d := y[i]*y[i] - av[i]
				if d < 0 {
					d = -d
				}
				more = more || d-float32(1e-5)*av[i] > 0
			}
			if !more {
				break
			}
			for i := range y {
				y[i] = (y[i] + av[i]/y[i]) * 0.5
			}
			steps++
		}
		if got := out["steps"].Int64s()[0]; got != steps || steps < 3 {
			t.Fatalf("steps = %d, want %d", got, steps)
		}
		closeF32(t, "y", out["y"].Float32s(), y)
		for i, g := range out["y"].Float32s() {
			if r := math.Sqrt(float64(av[i])); math.Abs(float64(g)-r) > 1e-4*math.Max(r, 1) {
				t.Fatalf("sqrt(%v) = %v", av[i], g)
			}
		}
		if got := out["i"].Int64s()[0]; got != kv {
			t.Fatalf("i = %d, want %d", got, kv)
		}
		acc := make([]float32, len(av))
		for i, v := range av {
			acc[i] = v * float32(int64(1)<<kv)
		}
		closeF32(t, "acc", out["acc"].Float32s(), acc)
	}

	// A run that needs more trips than maxTrips fails.
	lim := newScope(t)
	k = must(lim.Input("k", I64, ""))
	zero = must(lim.Constant(must(NewArray([]int64{0}))))
	one = must(lim.Constant(must(NewArray([]int64{1}))))
	r, err := lim.WhileLoop(func(c []Tensor) (Tensor, error) { return c[0].Compare(CmpLt, k) },
		func(c []Tensor) ([]Tensor, error) { return []Tensor{must(c[0].Add(one))}, nil },
		[]Tensor{zero}, 5)
	noErr(t, err)
	p2 := must(lim.CreateProgram([]Tensor{k}, Output{"i", r[0]}))
	defer p2.Close()
	rt2 := must(NewRuntime(p2, nil))
	defer rt2.Close()
	out, err := rt2.Run(map[string]*Array{"k": must(NewArray([]int64{5}))})
	noErr(t, err)
	if got := out["i"].Int64s()[0]; got != 5 {
		t.Fatalf("i = %d", got)
	}
	_, err = rt2.Run(map[string]*Array{"k": must(NewArray([]int64{6}))})
	wantCode(t, err, ConstraintViolation)
}

func TestCondTakesBothBranches(t *testing.T) {
	s := newScope(t)
	x := must(s.Input("x", F32, "n"))
	b := must(s.Input("b", F32, "n"))
	zero := must(s.Constant(must(NewArray([]float32{0}))))
	two := must(s.Constant(must(NewArray([]float32{2}))))
	pred := must(must(x.Reduce(ReduceSum, nil, false)).Compare(CmpGt, zero))
	// The true branch captures the input b, the false branch nothing: the op takes the union.
	out, err := s.Cond(pred, func(ops []Tensor) ([]Tensor, error) {
		return []Tensor{must(must(ops[0].Mul(two)).Add(b)), ops[0]}, nil
	}, func(ops []Tensor) ([]Tensor, error) {
		return []Tensor{must(ops[0].Neg()), must(ops[0].Exp())}, nil
	}, x)
	noErr(t, err)
	if len(out) != 2 {
		t.Fatalf("Cond gave %d results", len(out))
	}
	p := must(s.CreateProgram([]Tensor{x, b}, Output{"y", out[0]}, Output{"z", out[1]}))
	defer p.Close()
	rt := newTwinRuntime(t, p, nil)
	bv := []float32{10, 20, 30}
	for _, xv := range [][]float32{{1, 2, -0.5}, {-1, 0.5, -3}} {
		o, err := rt.Run(map[string]*Array{"x": must(NewArray(xv, 3)), "b": must(NewArray(bv, 3))})
		noErr(t, err)
		sum := float32(0)
		for _, v := range xv {
			sum += v
		}
		y, z := make([]float32, 3), make([]float32, 3)
		for i, v := range xv {
			if sum > 0 {
				y[i], z[i] = v*2+bv[i], v
			} else {
				y[i], z[i] = -v, float32(math.Exp(float64(v)))
			}
		}
		closeF32(t, "y", o["y"].Float32s(), y)
		closeF32(t, "z", o["z"].Float32s(), z)
	}
}

func TestCondBranchShapeMismatchAndErrors(t *testing.T) {
	s := newScope(t)
	x := must(s.Input("x", F32, "n"))
	pred := must(s.Constant(must(NewArray([]bool{true}))))
	id := func(ops []Tensor) ([]Tensor, error) { return []Tensor{ops[0]}, nil }
	// Sizes that differ (n and 2n) give a data-dependent size; ranks that differ are refused.
	r, err := s.Cond(pred, id, func(ops []Tensor) ([]Tensor, error) {
		c, err := Concatenate(0, ops[0], ops[0])
		return []Tensor{c}, err
	}, x)
	if err != nil || len(r) != 1 {
		t.Fatalf("cond of sizes n and 2n: %v", err)
	}
	_, err = s.Cond(pred, id, func(ops []Tensor) ([]Tensor, error) {
		c, err := ops[0].Reduce(ReduceSum, []int64{0}, false)
		return []Tensor{c}, err
	}, x)
	wantCode(t, err, ShapeMismatch, "equal ranks")
	// A different number of results is InvalidArgument.
	_, err = s.Cond(pred, id, func([]Tensor) ([]Tensor, error) { return nil, nil }, x)
	wantCode(t, err, InvalidArgument, "returns 1 tensors but the false branch returns 0")
	// An error inside a branch comes back as is.
	_, err = s.Cond(pred, func(ops []Tensor) ([]Tensor, error) {
		r, err := ops[0].Reduce(ReduceSum, []int64{3}, false)
		return []Tensor{r}, err
	}, id, x)
	wantCode(t, err, InvalidArgument)
	// A body that changes the carry's shape.
	_, err = s.WhileLoop(func([]Tensor) (Tensor, error) { return pred, nil },
		func(c []Tensor) ([]Tensor, error) {
			r, err := Concatenate(0, c[0], c[0])
			return []Tensor{r}, err
		}, []Tensor{x}, -1)
	wantCode(t, err, ShapeMismatch)
	// The scope is still usable afterwards.
	p := must(s.CreateProgram([]Tensor{x}, Output{"y", must(x.Neg())}))
	p.Close()
}

// TestReadmeControlFlowExample: the README's block marked
// "<!-- go_example: ExampleScope_Scan -->" is the body of that example, one tab less indented.
func TestReadmeControlFlowExample(t *testing.T) {
	raw, err := os.ReadFile("README.md")
	noErr(t, err)
	text := string(raw)
	marker := "<!-- go_example: ExampleScope_Scan -->\n"
	i := strings.Index(text, marker)
	if i < 0 {
		t.Fatal("README.md has no block marked ExampleScope_Scan")
	}
	block := fencedBlock(t, text[i+len(marker):], "```", "README.md's control-flow example")
	src, err := os.ReadFile("control_flow_example_test.go")
	noErr(t, err)
	code := string(src)
	open := "func ExampleScope_Scan() {\n"
	start := strings.Index(code, open)
	if start < 0 {
		t.Fatal("control_flow_example_test.go has no ExampleScope_Scan")
	}
	body := code[start+len(open):]
	body = body[:strings.Index(body, "\n}\n")+1]
	lines := strings.Split(body, "\n")
	for k, l := range lines {
		lines[k] = strings.TrimPrefix(l, "\t")
	}
	if want := strings.Join(lines, "\n"); block != want {
		t.Fatalf("README.md's control-flow example differs from ExampleScope_Scan; it should be:\n%s", want)
	}
}

func TestMaxLoopIterationsBoundsUntrustedLoops(t *testing.T) {
	s := newScope(t)
	noErr(t, s.Declare("n", 0, math.MaxInt64))
	x := must(s.Input("x", F32, "n"))
	zero := must(s.Constant(must(NewArray([]int64{0}))))
	one := must(s.Constant(must(NewArray([]int64{1}))))
	oneF := must(s.Constant(must(NewArray([]float32{1}))))
	zeroF := must(s.Constant(must(NewArray([]float32{0}))))
	// Never ends: the counter only grows.
	forever, err := s.WhileLoop(func(c []Tensor) (Tensor, error) { return c[1].Compare(CmpGe, zero) },
		func(c []Tensor) ([]Tensor, error) {
			return []Tensor{must(c[0].Add(oneF)), must(c[1].Add(one))}, nil
		}, []Tensor{x, zero}, -1)
	noErr(t, err)
	total, _, err := s.Scan(func(c, xi []Tensor) ([]Tensor, []Tensor, error) {
		next, err := c[0].Add(xi[0])
		return []Tensor{next}, nil, err
	}, []Tensor{zeroF}, []Tensor{x}, Dim{}, false, 0)
	noErr(t, err)
	p := must(s.CreateProgram([]Tensor{x}, Output{"forever", forever[0]}, Output{"total", total[0]}))
	defer p.Close()
	o := must(NewRuntimeOptions())
	defer o.Close()
	noErr(t, o.SetMaxLoopIterations(100))
	rt := newTwinRuntime(t, p, o)
	defer rt.Close()
	_, err = rt.Run(map[string]*Array{"x": must(NewArray([]float32{1, 1, 1}, 3))})
	wantCode(t, err, ConstraintViolation, "max_loop_iterations = 100")

	// A scan of 100 steps is allowed at 100 and refused (before it starts) at 101.
	q := must(s.CreateProgram([]Tensor{x}, Output{"total", total[0]}))
	defer q.Close()
	ones := func(n int) *Array {
		v := make([]float32, n)
		for i := range v {
			v[i] = 1
		}
		return must(NewArray(v, int64(n)))
	}
	rq := newTwinRuntime(t, q, o)
	defer rq.Close()
	out, err := rq.Run(map[string]*Array{"x": ones(100)})
	noErr(t, err)
	if got := out["total"].Float32s()[0]; got != 100 {
		t.Fatalf("total = %v", got)
	}
	_, err = rq.Run(map[string]*Array{"x": ones(101)})
	wantCode(t, err, ConstraintViolation, "scan")

	// -1 is no bound (the default); below -1 is refused.
	noErr(t, o.SetMaxLoopIterations(-1))
	ru := must(NewRuntime(q, o))
	defer ru.Close()
	out, err = ru.Run(map[string]*Array{"x": ones(101)})
	noErr(t, err)
	if got := out["total"].Float32s()[0]; got != 101 {
		t.Fatalf("total = %v", got)
	}
	wantCode(t, o.SetMaxLoopIterations(-2), InvalidArgument)
}

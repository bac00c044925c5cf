package shapepoly_test

import (
	"fmt"
	"log"

	"example.com/shapepoly"
)

// A running sum over a sequence of symbolic length (Scan), doubled while its sum is below 10
// (WhileLoop), negated if its sum is negative (Cond). The scan's function uses w from the
// enclosing trace: the op takes it as an operand automatically.
func ExampleScope_Scan() {
	scope, err := shapepoly.NewScope()
	if err != nil {
		log.Fatal(err)
	}
	defer scope.Close()
	if err := scope.Declare("t", 0, 1000); err != nil { // sequences may be empty
		log.Fatal(err)
	}
	xs, _ := scope.Input("xs", shapepoly.F32, "t, 2")
	w, _ := scope.Input("w", shapepoly.F32, "2")
	scalar := func(v float32) shapepoly.Tensor {
		a, _ := shapepoly.NewArray([]float32{v})
		c, _ := scope.Constant(a)
		return c
	}
	zeros, _ := shapepoly.NewArray([]float32{0, 0}, 2)
	h0, _ := scope.Constant(zeros)
	h, ys, err := scope.Scan(func(carry, x []shapepoly.Tensor) ([]shapepoly.Tensor, []shapepoly.Tensor, error) {
		wx, err := x[0].Mul(w)
		if err != nil {
			return nil, nil, err
		}
		next, err := carry[0].Add(wx)
		return []shapepoly.Tensor{next}, []shapepoly.Tensor{next}, err
	}, []shapepoly.Tensor{h0}, []shapepoly.Tensor{xs}, shapepoly.Dim{}, false, 0)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(ys[0])

	sum := func(v shapepoly.Tensor) shapepoly.Tensor {
		s, _ := v.Reduce(shapepoly.ReduceSum, nil, false)
		return s
	}
	grown, err := scope.WhileLoop(func(c []shapepoly.Tensor) (shapepoly.Tensor, error) {
		return sum(c[0]).Compare(shapepoly.CmpLt, scalar(10))
	}, func(c []shapepoly.Tensor) ([]shapepoly.Tensor, error) {
		d, err := c[0].Mul(scalar(2))
		return []shapepoly.Tensor{d}, err
	}, h, 100) // at most 100 trips (-1: unbounded)
	if err != nil {
		log.Fatal(err)
	}
	negative, _ := sum(grown[0]).Compare(shapepoly.CmpLt, scalar(0))
	out, err := scope.Cond(negative, func(v []shapepoly.Tensor) ([]shapepoly.Tensor, error) {
		n, err := v[0].Neg()
		return []shapepoly.Tensor{n}, err
	}, func(v []shapepoly.Tensor) ([]shapepoly.Tensor, error) {
		return v, nil
	}, grown...)
	if err != nil {
		log.Fatal(err)
	}
	program, err := scope.CreateProgram([]shapepoly.Tensor{xs, w},
		shapepoly.Output{Name: "y", Tensor: out[0]}, shapepoly.Output{Name: "ys", Tensor: ys[0]})
	if err != nil {
		log.Fatal(err)
	}
	defer program.Close()
	rt, err := shapepoly.NewRuntime(program, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer rt.Close()
	xa, _ := shapepoly.NewArray([]float32{1, 2, 3, 4}, 2, 2)
	wa, _ := shapepoly.NewArray([]float32{1, 0.5}, 2)
	res, err := rt.Run(map[string]*shapepoly.Array{"xs": xa, "w": wa})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res["ys"].Float32s(), res["y"].Float32s())
	// Output:
	// f32(t, 2)
	// [1 1 4 3] [8 6]
}

package shapepoly_test

import (
	"fmt"
	"log"

	"example.com/shapepoly"
)

// trace traces y = exp(x) for n <= 4 and y = -x for n > 4, each under its assumption.
func trace(small bool) *shapepoly.Program {
	scope, err := shapepoly.NewScope()
	if err != nil {
		log.Fatal(err)
	}
	defer scope.Close()
	n, _ := scope.Var("n")
	four, _ := scope.Const(4)
	op := shapepoly.CmpGt
	if small {
		op = shapepoly.CmpLe
	}
	if err := scope.Assume(n, op, four, ""); err != nil {
		log.Fatal(err)
	}
	x, _ := scope.Input("x", shapepoly.F32, "n")
	y, _ := x.Neg()
	if small {
		y, _ = x.Exp()
	}
	program, err := scope.CreateProgram([]shapepoly.Tensor{x}, shapepoly.Output{Name: "y", Tensor: y})
	if err != nil {
		log.Fatal(err)
	}
	return program
}

func ExampleCreateVariants() {
	small, large := trace(true), trace(false)
	defer small.Close()
	defer large.Close()
	program, err := shapepoly.CreateVariants(small, large)
	if err != nil {
		log.Fatal(err)
	}
	defer program.Close()
	fmt.Println(program.VariantCount(), program.VariantsExhaustive())
	for v := 0; v < program.VariantCount(); v++ {
		fmt.Println(v, program.VariantGuards(v)[0].Text)
	}
	rt, err := shapepoly.NewRuntime(program, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer rt.Close()
	x, _ := shapepoly.NewArray([]float32{1, 1, 1, 1, 1}, 5)
	out, err := rt.Run(map[string]*shapepoly.Array{"x": x})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(rt.LastVariant(), out["y"].Float32s())
	// Output:
	// 2 true
	// 0 n <= 4
	// 1 n > 4
	// 1 [-1 -1 -1 -1 -1]
}

package shapepoly_test

import (
	"fmt"
	"log"

	"example.com/shapepoly"
)

func ExampleProgram_Grad() {
	// loss = sum(x * w) over a batch of rows, with the parameter w: its default is stored in
	// the program.
	scope, err := shapepoly.NewScope()
	if err != nil {
		log.Fatal(err)
	}
	defer scope.Close()
	x, err := scope.Input("x", shapepoly.F32, "batch, 3")
	if err != nil {
		log.Fatal(err)
	}
	wDefault, _ := shapepoly.NewArray([]float32{1, 2, 3}, 3)
	w, err := scope.Parameter("w", wDefault)
	if err != nil {
		log.Fatal(err)
	}
	xw, err := x.Mul(w)
	if err != nil {
		log.Fatal(err)
	}
	loss, err := xw.Reduce(shapepoly.ReduceSum, nil, false)
	if err != nil {
		log.Fatal(err)
	}
	program, err := scope.CreateProgram([]shapepoly.Tensor{x, w}, shapepoly.Output{Name: "loss", Tensor: loss})
	if err != nil {
		log.Fatal(err)
	}
	defer program.Close()

	grad, err := program.Grad("loss", "x", "w")
	if err != nil {
		log.Fatal(err)
	}
	defer grad.Close()
	for i := 0; i < grad.OutputCount(); i++ {
		fmt.Println(grad.OutputName(i), grad.OutputRole(i))
	}
	rt, err := shapepoly.NewRuntime(grad, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer rt.Close()
	xv, _ := shapepoly.NewArray([]float32{4, 5, 6, -1, 0, 1}, 2, 3)
	// w and loss.cotangent are left out: their defaults are used.
	out, err := rt.Run(map[string]*shapepoly.Array{"x": xv})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(out["loss"].Float32s(), out["x.grad"].Float32s(), out["w.grad"].Float32s())
	// Output:
	// loss primal
	// x.grad grad
	// w.grad grad
	// [34] [1 2 3 1 2 3] [3 5 7]
}

package shapepoly_test

import (
	"errors"
	"fmt"
	"log"

	"example.com/shapepoly"
)

func Example() {
	// Trace y = sum(x * w, axis 1) once, for every batch size.
	scope, err := shapepoly.NewScope("batch >= 1")
	if err != nil {
		log.Fatal(err)
	}
	defer scope.Close()
	x, err := scope.Input("x", shapepoly.F32, "batch, 3")
	if err != nil {
		log.Fatal(err)
	}
	weights, _ := shapepoly.NewArray([]float32{1, 2, 3}, 3)
	w, err := scope.Constant(weights)
	if err != nil {
		log.Fatal(err)
	}
	xw, err := x.Mul(w)
	if err != nil {
		log.Fatal(err)
	}
	y, err := xw.Reduce(shapepoly.ReduceSum, []int64{1}, false)
	if err != nil {
		log.Fatal(err)
	}
	program, err := scope.CreateProgram([]shapepoly.Tensor{x}, shapepoly.Output{Name: "y", Tensor: y})
	if err != nil {
		log.Fatal(err)
	}
	defer program.Close()

	// Serialize, load, and run with inputs by name.
	data, err := program.Serialize()
	if err != nil {
		log.Fatal(err)
	}
	loaded, err := shapepoly.LoadProgram(data)
	if err != nil {
		log.Fatal(err)
	}
	defer loaded.Close()
	rt, err := shapepoly.NewRuntime(loaded, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer rt.Close()
	in, _ := shapepoly.NewArray([]float32{1, 1, 1, 0, 1, 0}, 2, 3)
	out, err := rt.Run(map[string]*shapepoly.Array{"x": in})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(out["y"].Shape(), out["y"].Float32s())

	// Wrong shapes are reported before anything runs.
	bad, _ := shapepoly.NewArray(make([]float32, 10), 2, 5)
	_, err = rt.Run(map[string]*shapepoly.Array{"x": bad})
	var e *shapepoly.Error
	if errors.As(err, &e) && e.Code == shapepoly.ShapeMismatch {
		fmt.Println(e.Message)
	}
	// Output:
	// [2] [6 2]
	// input 'x': axis 1 is 5 but the program requires 3
}

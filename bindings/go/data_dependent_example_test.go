package shapepoly_test

import (
	"errors"
	"fmt"
	"log"

	"example.com/shapepoly"
)

// The mean of the rows of x whose score exceeds 0.5: how many rows that is comes from the data.
func ExampleTensor_BooleanMask() {
	scope, err := shapepoly.NewScopeWithRanges(nil, shapepoly.Range{Name: "n", Min: 1, Max: 100})
	if err != nil {
		log.Fatal(err)
	}
	defer scope.Close()
	x, _ := scope.Input("x", shapepoly.F32, "n, 2")
	score, _ := scope.Input("score", shapepoly.F32, "n")
	threshold, _ := shapepoly.NewArray([]float32{0.5})
	half, _ := scope.Constant(threshold)
	mask, _ := score.Compare(shapepoly.CmpGt, half)
	rows, err := x.BooleanMask(mask, 0) // a new unbacked size u0 with 0 <= u0 <= n
	if err != nil {
		log.Fatal(err)
	}
	shape, _ := rows.Shape()
	u := shape[0]
	lo, hi, _ := u.Bounds()
	fmt.Println(rows, lo, hi)

	// A branch on u0 cannot be decided while tracing; the error names the check that settles it.
	one, _ := scope.Const(1)
	_, err = u.Guard(shapepoly.CmpGe, one, "")
	var e *shapepoly.Error
	fmt.Println(errors.As(err, &e) && e.Code == shapepoly.Inconclusive)
	// The check is a fact from now on, and an assertion the runtime checks on the data.
	if err := scope.Check(u, shapepoly.CmpGe, one, "no row is selected"); err != nil {
		log.Fatal(err)
	}
	sum, _ := rows.Reduce(shapepoly.ReduceSum, []int64{0}, false)
	count, _ := scope.DimValue(u)
	countF32, _ := count.Convert(shapepoly.F32)
	mean, _ := sum.Div(countF32)
	program, err := scope.CreateProgram([]shapepoly.Tensor{x, score},
		shapepoly.Output{Name: "mean", Tensor: mean}, shapepoly.Output{Name: "rows", Tensor: rows})
	if err != nil {
		log.Fatal(err)
	}
	defer program.Close()
	rt, err := shapepoly.NewRuntime(program, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer rt.Close()

	// A dry run knows every shape but u0: -1, with its bounds at these input shapes.
	if err := rt.DryRun(map[string][]int64{"x": {4, 2}, "score": {4}}); err != nil {
		log.Fatal(err)
	}
	rowsShape, _ := rt.OutputShape(1)
	bounds, _ := rt.OutputDimBounds(1, 0)
	fmt.Println(rowsShape, bounds.DataDependent, bounds.Min, bounds.Max)

	xs, _ := shapepoly.NewArray([]float32{1, 2, 3, 4, 5, 6, 7, 8}, 4, 2)
	scores, _ := shapepoly.NewArray([]float32{0.9, 0.1, 0.7, 0.5}, 4)
	out, err := rt.Run(map[string]*shapepoly.Array{"x": xs, "score": scores})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(out["rows"].Shape(), out["rows"].Float32s(), out["mean"].Float32s())
	none, _ := shapepoly.NewArray([]float32{0, 0, 0, 0}, 4)
	_, err = rt.Run(map[string]*shapepoly.Array{"x": xs, "score": none})
	fmt.Println(errors.As(err, &e) && e.Code == shapepoly.ConstraintViolation)
	// Output:
	// f32(u0, 2) 0 100
	// true
	// [-1 2] true 1 4
	// [2 2] [1 2 5 6] [3 4]
	// true
}

// Command mlp_tool implements tests/cross_language/MLP_CONTRACT.md with the Go binding:
//
//	mlp_tool export OUT.shpoly            trace the MLP and serialize it
//	mlp_tool run FILE.shpoly BATCH OUT.bin load FILE, run it at batch BATCH, write "probs"
//	                                       as raw little-endian float32
//	mlp_tool grad-run FILE.shpoly BATCH OUT.bin
//	                                       load the derived grad program FILE, print its
//	                                       signature, run it at batch BATCH (defaults left out,
//	                                       then given by name: the same bits), write every
//	                                       output in order as raw little-endian float32
package main

import (
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"strconv"

	"example.com/shapepoly"
)

// constant returns the contract's constant of the given shape and seed.
func constant(seed int64, shape ...int64) (*shapepoly.Array, error) {
	n := int64(1)
	for _, d := range shape {
		n *= d
	}
	data := make([]float32, n)
	for k := int64(0); k < n; k++ {
		data[k] = float32(((k*7919+seed*104729)%2001)-1000) / float32(10000)
	}
	return shapepoly.NewArray(data, shape...)
}

// input returns the contract's input x of shape [batch, 64].
func input(batch int64) (*shapepoly.Array, error) {
	data := make([]float32, batch*64)
	for k := range data {
		data[k] = float32(((int64(k)*31+7)%17)-8) / float32(8)
	}
	return shapepoly.NewArray(data, batch, 64)
}

func export(out string) error {
	scope, err := shapepoly.NewScope()
	if err != nil {
		return err
	}
	defer scope.Close()
	x, err := scope.Input("x", shapepoly.F32, "batch, 64")
	if err != nil {
		return err
	}
	specs := []struct {
		seed  int64
		shape []int64
	}{{1, []int64{64, 32}}, {2, []int64{32}}, {3, []int64{32, 32}}, {4, []int64{32}},
		{5, []int64{32, 10}}, {6, []int64{10}}}
	var c [6]shapepoly.Tensor
	for i, s := range specs {
		a, err := constant(s.seed, s.shape...)
		if err != nil {
			return err
		}
		if c[i], err = scope.Constant(a); err != nil {
			return err
		}
	}
	zeroArr, err := shapepoly.NewArray([]float32{0})
	if err != nil {
		return err
	}
	zero, err := scope.Constant(zeroArr)
	if err != nil {
		return err
	}
	// dense returns act(matmul(h, w) + b), with act = max(., 0) when relu.
	dense := func(h, w, b shapepoly.Tensor, relu bool) (shapepoly.Tensor, error) {
		m, err := h.Matmul(w)
		if err != nil {
			return m, err
		}
		a, err := m.Add(b)
		if err != nil || !relu {
			return a, err
		}
		return a.Max(zero)
	}
	h1, err := dense(x, c[0], c[1], true)
	if err != nil {
		return err
	}
	h2, err := dense(h1, c[2], c[3], true)
	if err != nil {
		return err
	}
	logits, err := dense(h2, c[4], c[5], false)
	if err != nil {
		return err
	}
	probs, err := logits.Softmax(1)
	if err != nil {
		return err
	}
	program, err := scope.CreateProgram([]shapepoly.Tensor{x}, shapepoly.Output{Name: "probs", Tensor: probs})
	if err != nil {
		return err
	}
	defer program.Close()
	return program.WriteFile(out)
}

func run(file string, batch int64, out string) error {
	program, err := shapepoly.LoadProgramFile(file)
	if err != nil {
		return err
	}
	defer program.Close()
	rt, err := shapepoly.NewRuntime(program, nil)
	if err != nil {
		return err
	}
	defer rt.Close()
	x, err := input(batch)
	if err != nil {
		return err
	}
	outputs, err := rt.Run(map[string]*shapepoly.Array{"x": x})
	if err != nil {
		return err
	}
	probs := outputs["probs"].Float32s()
	buf := make([]byte, 4*len(probs))
	for i, v := range probs {
		binary.LittleEndian.PutUint32(buf[4*i:], math.Float32bits(v))
	}
	return os.WriteFile(out, buf, 0o644)
}

// labels returns the derived program's one-hot labels of shape [batch, 10]: row r has class
// (3r + 1) mod 10.
func labels(batch int64) (*shapepoly.Array, error) {
	data := make([]float32, batch*10)
	for r := int64(0); r < batch; r++ {
		data[r*10+(3*r+1)%10] = 1
	}
	return shapepoly.NewArray(data, batch, 10)
}

// gradRun prints the grad program's signature, runs it with "x" and "labels" by name (every
// defaulted input left out, then given its default by name, which must not change a bit)
// and writes every output in the program's order.
func gradRun(file string, batch int64, out string) error {
	program, err := shapepoly.LoadProgramFile(file)
	if err != nil {
		return err
	}
	defer program.Close()
	for i := 0; i < program.InputCount(); i++ {
		def := ""
		if program.InputHasDefault(i) {
			def = " default"
		}
		fmt.Printf("input %s %s%s\n", program.InputName(i), program.InputRole(i), def)
	}
	for i := 0; i < program.OutputCount(); i++ {
		fmt.Printf("output %s %s\n", program.OutputName(i), program.OutputRole(i))
	}
	rt, err := shapepoly.NewRuntime(program, nil)
	if err != nil {
		return err
	}
	defer rt.Close()
	x, err := input(batch)
	if err != nil {
		return err
	}
	l, err := labels(batch)
	if err != nil {
		return err
	}
	inputs := map[string]*shapepoly.Array{"x": x, "labels": l}
	plain, err := rt.Run(inputs)
	if err != nil {
		return err
	}
	for i := 0; i < program.InputCount(); i++ {
		if program.InputHasDefault(i) {
			if inputs[program.InputName(i)], err = program.InputDefault(i); err != nil {
				return err
			}
		}
	}
	given, err := rt.Run(inputs)
	if err != nil {
		return err
	}
	var buf []byte
	for i := 0; i < program.OutputCount(); i++ {
		name := program.OutputName(i)
		a, b := plain[name].Float32s(), given[name].Float32s()
		for k, v := range a {
			if k >= len(b) || math.Float32bits(v) != math.Float32bits(b[k]) {
				return fmt.Errorf("giving the defaults by name changed output %s", name)
			}
			buf = binary.LittleEndian.AppendUint32(buf, math.Float32bits(v))
		}
	}
	return os.WriteFile(out, buf, 0o644)
}

func main() {
	args := os.Args[1:]
	var err error
	switch {
	case len(args) == 2 && args[0] == "export":
		err = export(args[1])
	case len(args) == 4 && args[0] == "run":
		batch, perr := strconv.ParseInt(args[2], 10, 64)
		if perr != nil || batch < 1 {
			fmt.Fprintf(os.Stderr, "mlp_tool: BATCH must be a positive integer, got %q\n", args[2])
			os.Exit(2)
		}
		err = run(args[1], batch, args[3])
	case len(args) == 4 && args[0] == "grad-run":
		batch, perr := strconv.ParseInt(args[2], 10, 64)
		if perr != nil || batch < 1 {
			fmt.Fprintf(os.Stderr, "mlp_tool: BATCH must be a positive integer, got %q\n", args[2])
			os.Exit(2)
		}
		err = gradRun(args[1], batch, args[3])
	default:
		fmt.Fprintln(os.Stderr, "usage: mlp_tool export OUT.shpoly | mlp_tool run FILE.shpoly BATCH OUT.bin |"+
			" mlp_tool grad-run FILE.shpoly BATCH OUT.bin")
		os.Exit(2)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "mlp_tool:", err)
		os.Exit(1)
	}
}

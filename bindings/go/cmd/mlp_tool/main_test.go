package main

import (
	"bytes"
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"testing"

	"example.com/shapepoly"
)

// reference computes the contract's MLP in float64.
func reference(batch int64) []float64 {
	weights := func(seed int64, n int64) []float64 {
		a, err := constant(seed, n)
		if err != nil {
			panic(err)
		}
		out := make([]float64, n)
		for i, v := range a.Float32s() {
			out[i] = float64(v)
		}
		return out
	}
	dense := func(h []float64, in, out int, w, b []float64, relu bool) []float64 {
		rows := len(h) / in
		r := make([]float64, rows*out)
		for i := 0; i < rows; i++ {
			for j := 0; j < out; j++ {
				acc := b[j]
				for k := 0; k < in; k++ {
					acc += h[i*in+k] * w[k*out+j]
				}
				if relu {
					acc = math.Max(acc, 0)
				}
				r[i*out+j] = acc
			}
		}
		return r
	}
	xa, _ := input(batch)
	x := make([]float64, batch*64)
	for i, v := range xa.Float32s() {
		x[i] = float64(v)
	}
	h1 := dense(x, 64, 32, weights(1, 64*32), weights(2, 32), true)
	h2 := dense(h1, 32, 32, weights(3, 32*32), weights(4, 32), true)
	l := dense(h2, 32, 10, weights(5, 32*10), weights(6, 10), false)
	for i := int64(0); i < batch; i++ {
		row := l[i*10 : i*10+10]
		mx := row[0]
		for _, v := range row {
			mx = math.Max(mx, v)
		}
		sum := 0.0
		for j := range row {
			row[j] = math.Exp(row[j] - mx)
			sum += row[j]
		}
		for j := range row {
			row[j] /= sum
		}
	}
	return l
}

// TestMLPEndToEnd exports the contract's MLP, loads the file, runs it at batch 1, 7 and 64,
// and compares the written float32 output with a float64 reference.
func TestMLPEndToEnd(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "mlp.shpoly")
	if err := export(file); err != nil {
		t.Fatal(err)
	}
	again := filepath.Join(dir, "again.shpoly")
	if err := export(again); err != nil {
		t.Fatal(err)
	}
	a, _ := os.ReadFile(file)
	b, _ := os.ReadFile(again)
	if len(a) == 0 || !bytes.Equal(a, b) {
		t.Fatal("export is not deterministic")
	}
	p, err := shapepoly.LoadProgramFile(file)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	ins, _ := p.Inputs()
	outs, _ := p.Outputs()
	if len(ins) != 1 || ins[0].Name != "x" || ins[0].Shape != "(batch, 64)" || len(outs) != 1 ||
		outs[0].Name != "probs" || outs[0].Shape != "(batch, 10)" {
		t.Fatalf("signature %+v -> %+v", ins, outs)
	}
	for _, batch := range []int64{1, 7, 64} {
		out := filepath.Join(dir, "out.bin")
		if err := run(file, batch, out); err != nil {
			t.Fatal(err)
		}
		raw, _ := os.ReadFile(out)
		if int64(len(raw)) != batch*10*4 {
			t.Fatalf("batch %d: %d bytes", batch, len(raw))
		}
		want := reference(batch)
		for i := range want {
			got := float64(math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:])))
			if math.Abs(got-want[i]) > 1e-5 {
				t.Fatalf("batch %d, element %d: %v, want %v", batch, i, got, want[i])
			}
		}
	}
	if err := run(filepath.Join(dir, "missing.shpoly"), 1, filepath.Join(dir, "o.bin")); err == nil {
		t.Fatal("expected an error for a missing file")
	}
	if err := os.WriteFile(filepath.Join(dir, "bad.shpoly"), a[:len(a)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	err = run(filepath.Join(dir, "bad.shpoly"), 1, filepath.Join(dir, "o.bin"))
	if e, ok := err.(*shapepoly.Error); !ok || e.Code != shapepoly.InvalidProgram {
		t.Fatalf("want InvalidProgram, got %v", err)
	}
}

package shapepoly

import (
	"bufio"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
	"time"
)

func rssKiB(t *testing.T) int64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		t.Skip("no /proc/self/status")
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), "VmRSS:") {
			v, _ := strconv.ParseInt(strings.Fields(sc.Text())[1], 10, 64)
			return v
		}
	}
	t.Skip("no VmRSS")
	return 0
}

// leakRound creates one of every object (a scope with dims and tensors carrying a 64 KiB
// constant, a program, its bytes, a loaded copy, options, a runtime, bindings, a run) and
// either closes them or drops them for the finalizers.
func leakRound(t *testing.T, closeThem bool, weights []float32) {
	s := must(NewScope("n >= 1"))
	n := must(s.Var("n"))
	_ = must(must(n.Mul(n)).Add(n)).String()
	x := must(s.Input("x", F32, "n, 128"))
	w := must(s.Constant(must(NewArray(weights, 128, 128))))
	y := must(must(x.Matmul(w)).Softmax(1))
	p := must(s.CreateProgram([]Tensor{x}, Output{"y", y}))
	data := must(p.Serialize())
	q := must(LoadProgram(data))
	o := must(NewRuntimeOptions())
	noErr(t, o.SetNumThreads(1))
	rt := must(NewRuntime(q, o))
	b := must(q.CheckShapes(map[string][]int64{"x": {2, 128}}))
	res := must(rt.Run(map[string]*Array{"x": must(Zeros(F32, 2, 128))}))
	if len(res["y"].Float32s()) != 256 {
		t.Fatal("bad output")
	}
	_, err := rt.Run(map[string]*Array{"nope": must(Zeros(F32, 2, 128))}) // an error object too
	if err == nil {
		t.Fatal("expected an error")
	}
	if closeThem {
		b.Close()
		rt.Close()
		o.Close()
		q.Close()
		p.Close()
		s.Close()
	}
}

// TestNoLeaks creates and releases thousands of objects, half closed explicitly and half
// left to the finalizers: every C handle must be released, and the resident set size must not
// grow.
func TestNoLeaks(t *testing.T) {
	weights := make([]float32, 128*128)
	rounds := 3000
	if testing.Short() {
		rounds = 600
	}
	for i := 0; i < 5; i++ { // finalize what earlier tests left behind
		runtime.GC()
		time.Sleep(5 * time.Millisecond)
	}
	baseline := liveHandles.Load()
	// settle runs the GC until the finalizers have released every handle made since the start
	// (the count may drop below the baseline when leftovers of earlier tests are finalized).
	settle := func() int64 {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for liveHandles.Load() > baseline && time.Now().Before(deadline) {
			runtime.GC() // queues the finalizers of unreachable handles
			time.Sleep(5 * time.Millisecond)
		}
		if n := liveHandles.Load() - baseline; n > 0 {
			t.Fatalf("%d handles were never released", n)
		}
		runtime.GC()
		debug.FreeOSMemory()
		return rssKiB(t)
	}
	phase := func(n int) {
		for i := 0; i < n; i++ {
			leakRound(t, i%2 == 0, weights)
			if i%25 == 0 {
				runtime.GC() // keeps the finalizer backlog (and so the malloc high-water mark) small
			}
		}
	}
	phase(600) // warm up allocator pools and the Go heap
	before := settle()
	phase(rounds)
	after := settle()
	// A leak of any object per round (the constant alone is 64 KiB, held by the scope, the
	// program, its bytes and the loaded copy) would add well over 100 MiB.
	t.Logf("RSS before %d KiB, after %d KiB (%d rounds)", before, after, rounds)
	if after-before > 32*1024 {
		t.Fatalf("RSS grew by %d KiB over %d rounds", after-before, rounds)
	}
}

package shapepoly

import (
	"math"
	"reflect"
	"strings"
	"testing"
)

// The element types beyond f32/f64/i32/i64/bool: f16 and bf16 (their bits, as Float16 and
// BFloat16), i8, u8, i16, u16, u32, u64. Programs on them run through newTwinRuntime (traced
// and reloaded).

func TestNewDTypeValuesNamesAndSizes(t *testing.T) {
	cases := []struct {
		d    DType
		raw  int32
		name string
		size int
	}{
		{F16, 5, "f16", 2}, {BF16, 6, "bf16", 2}, {I8, 7, "i8", 1}, {U8, 8, "u8", 1},
		{I16, 9, "i16", 2}, {U16, 10, "u16", 2}, {U32, 11, "u32", 4}, {U64, 12, "u64", 8},
	}
	for _, c := range cases {
		if int32(c.d) != c.raw || c.d.String() != c.name || c.d.Size() != c.size {
			t.Errorf("%d: %v (%d bytes), want %d %s (%d bytes)", c.d, c.d, c.d.Size(), c.raw, c.name, c.size)
		}
		for _, name := range []string{c.name, strings.ToUpper(c.name)} {
			if d, err := ParseDType(name); err != nil || d != c.d {
				t.Errorf("ParseDType(%q) = %v, %v", name, d, err)
			}
		}
	}
	for i, d := range knownDTypes {
		if int(d) != i || d.Size() == 0 || strings.HasPrefix(d.String(), "DType(") {
			t.Errorf("dtype %d: %v", i, d)
		}
	}
	// One Go type per dtype: uint16 is U16; the 16-bit floats have their own types.
	got := []DType{dtypeOf[Float16](), dtypeOf[BFloat16](), dtypeOf[int8](), dtypeOf[uint8](),
		dtypeOf[int16](), dtypeOf[uint16](), dtypeOf[uint32](), dtypeOf[uint64](), dtypeOf[bool]()}
	want := []DType{F16, BF16, I8, U8, I16, U16, U32, U64, Bool}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("dtypeOf: %v, want %v", got, want)
	}
}

// halfAddMatmul traces y = x + x and z = x @ w (x: (batch, 4), w: (4, 3)) in dtype.
func halfAddMatmul(t *testing.T, dtype DType) *Program {
	s := newScope(t)
	x := must(s.Input("x", dtype, "batch, 4"))
	w := must(s.Input("w", dtype, "4, 3"))
	y := must(x.Add(x))
	z := must(x.Matmul(w))
	if y.DType() != dtype || z.DType() != dtype {
		t.Fatalf("%v: y %v, z %v", dtype, y, z)
	}
	p := must(s.CreateProgram([]Tensor{x, w}, Output{"y", y}, Output{"z", z}))
	t.Cleanup(p.Close)
	return p
}

// halfMatchesF32 runs halfAddMatmul in a 16-bit float type and in f32 on the same (rounded)
// inputs at batch 1 and 5; the results agree within 1e-2 relative.
func halfMatchesF32[T Float16 | BFloat16](t *testing.T, from func(float32) T, to func(T) float32) {
	dtype := dtypeOf[T]()
	p := halfAddMatmul(t, dtype)
	if p.InputDType(0) != dtype || p.OutputDType(1) != dtype ||
		!strings.Contains(p.String(), "x: "+dtype.String()+"[batch, 4]") {
		t.Fatalf("%v program:\n%s", dtype, p)
	}
	rt := newTwinRuntime(t, p, nil)
	defer rt.Close()
	ref := newTwinRuntime(t, halfAddMatmul(t, F32), nil)
	defer ref.Close()
	w := make([]T, 12)
	w32 := make([]float32, 12)
	for i := range w {
		w[i] = from(0.25 + 0.125*float32(i))
		w32[i] = to(w[i])
	}
	for _, batch := range []int64{1, 5} {
		x := make([]T, batch*4)
		x32 := make([]float32, batch*4)
		for i := range x {
			x[i] = from(1 + 0.37*float32(i))
			x32[i] = to(x[i])
		}
		out := must(rt.Run(map[string]*Array{"x": must(NewArray(x, batch, 4)), "w": must(NewArray(w, 4, 3))}))
		want := must(ref.Run(map[string]*Array{"x": must(NewArray(x32, batch, 4)), "w": must(NewArray(w32, 4, 3))}))
		for name, shape := range map[string][]int64{"y": {batch, 4}, "z": {batch, 3}} {
			a := out[name]
			if a.DType() != dtype || !slicesEqual(a.Shape(), shape) {
				t.Fatalf("%v %s: %v, want shape %v", dtype, name, a, shape)
			}
			got := a.Data().([]T)
			ws := want[name].Float32s()
			for i := range got {
				g := to(got[i])
				if math.Abs(float64(g-ws[i])) > 1e-2*math.Abs(float64(ws[i])) {
					t.Errorf("%v %s batch %d element %d: %v vs f32 %v", dtype, name, batch, i, g, ws[i])
				}
			}
		}
		// y = x + x is exact in both types.
		for i, v := range out["y"].Data().([]T) {
			if to(v) != 2*x32[i] {
				t.Errorf("%v y[%d] = %v, want %v", dtype, i, to(v), 2*x32[i])
			}
		}
	}
}

func TestF16AddAndMatmulMatchF32(t *testing.T) {
	halfMatchesF32(t, Float16FromFloat32, Float16.Float32)
	a := must(Zeros(F16, 2))
	if a.Float16s() == nil || a.BFloat16s() != nil || a.Uint16s() != nil || len(a.Bits16()) != 2 {
		t.Fatal("the accessors of an F16 array")
	}
}

func TestBF16AddAndMatmulMatchF32(t *testing.T) {
	halfMatchesF32(t, BFloat16FromFloat32, BFloat16.Float32)
	a := must(Zeros(BF16, 2))
	if a.BFloat16s() == nil || a.Float16s() != nil || a.Uint16s() != nil || len(a.Bits16()) != 2 {
		t.Fatal("the accessors of a BF16 array")
	}
}

func TestU8AddWraps(t *testing.T) {
	s := newScope(t)
	a := must(s.Input("a", U8, "n"))
	b := must(s.Input("b", U8, "n"))
	p := must(s.CreateProgram([]Tensor{a, b}, Output{"c", must(a.Add(b))}))
	defer p.Close()
	rt := newTwinRuntime(t, p, nil)
	defer rt.Close()
	out := must(rt.Run(map[string]*Array{
		"a": must(NewArray([]uint8{250, 255, 1}, 3)),
		"b": must(NewArray([]uint8{10, 1, 2}, 3)),
	}))
	if c := out["c"]; c.DType() != U8 || !reflect.DeepEqual(c.Uint8s(), []uint8{4, 0, 3}) {
		t.Fatalf("250 + 10 in u8: %v %v", c, c.Data())
	}
	// Another element type of the same size is refused by dtype.
	_, err := rt.Run(map[string]*Array{
		"a": must(NewArray([]int8{-6, 1, 1}, 3)),
		"b": must(NewArray([]uint8{10, 1, 2}, 3)),
	})
	wantCode(t, err, DTypeMismatch)
}

func TestU64ComparesAsUnsigned(t *testing.T) {
	s := newScope(t)
	a := must(s.Input("a", U64, "n"))
	b := must(s.Input("b", U64, "n"))
	gt := must(a.Compare(CmpGt, b))
	lt := must(a.Compare(CmpLt, b))
	if gt.DType() != Bool {
		t.Fatal(gt)
	}
	p := must(s.CreateProgram([]Tensor{a, b}, Output{"gt", gt}, Output{"lt", lt}))
	defer p.Close()
	rt := newTwinRuntime(t, p, nil)
	defer rt.Close()
	out := must(rt.Run(map[string]*Array{
		"a": must(NewArray([]uint64{math.MaxUint64, 1 << 63, 1, 0}, 4)),
		"b": must(NewArray([]uint64{1, 1, math.MaxUint64, 0}, 4)),
	}))
	if g := out["gt"].Bools(); !reflect.DeepEqual(g, []bool{true, true, false, false}) {
		t.Fatalf("u64 >: %v", g)
	}
	if l := out["lt"].Bools(); !reflect.DeepEqual(l, []bool{false, false, true, false}) {
		t.Fatalf("u64 <: %v", l)
	}
}

func TestI8InputsAndOutputsRoundTrip(t *testing.T) {
	s := newScope(t)
	x := must(s.Input("x", I8, "n, 2"))
	tr := must(x.Transpose(1, 0))
	neg := must(x.Neg())
	p := must(s.CreateProgram([]Tensor{x}, Output{"x", x}, Output{"t", tr}, Output{"neg", neg}))
	defer p.Close()
	ins := must(p.Inputs())
	if ins[0].DType != I8 || ins[0].Shape != "(n, 2)" {
		t.Fatal(ins)
	}
	for _, o := range must(p.Outputs()) {
		if o.DType != I8 {
			t.Fatal(o)
		}
	}
	rt := newTwinRuntime(t, p, nil)
	defer rt.Close()
	data := []int8{-128, -1, 0, 1, 100, 127}
	out := must(rt.Run(map[string]*Array{"x": must(NewArray(data, 3, 2))}))
	if !reflect.DeepEqual(out["x"].Int8s(), data) {
		t.Fatalf("x: %v", out["x"].Data())
	}
	if !slicesEqual(out["t"].Shape(), []int64{2, 3}) ||
		!reflect.DeepEqual(out["t"].Int8s(), []int8{-128, 0, 100, -1, 1, 127}) {
		t.Fatalf("t: %v %v", out["t"], out["t"].Data())
	}
	// -(-128) wraps to -128.
	if !reflect.DeepEqual(out["neg"].Int8s(), []int8{-128, 1, 0, -1, -100, -127}) {
		t.Fatalf("neg: %v", out["neg"].Data())
	}
	// Caller-provided outputs of i8 too.
	outs := map[string]*Array{"x": must(Zeros(I8, 3, 2)), "t": must(Zeros(I8, 2, 3)), "neg": must(Zeros(I8, 3, 2))}
	noErr(t, rt.RunInto(map[string]*Array{"x": must(NewArray(data, 3, 2))}, outs))
	if !reflect.DeepEqual(outs["x"].Int8s(), data) || outs["t"].Int8s()[1] != 0 || outs["neg"].Int8s()[4] != -100 {
		t.Fatalf("RunInto: %v %v %v", outs["x"].Data(), outs["t"].Data(), outs["neg"].Data())
	}
	if outs["x"].Uint8s() != nil || outs["x"].Int32s() != nil {
		t.Fatal("an I8 array is not u8 or i32")
	}
}

// moves checks that values of T pass through reverse and a constant bit for bit.
func moves[T Element](t *testing.T, values []T) {
	t.Helper()
	d := dtypeOf[T]()
	s := newScope(t)
	x := must(s.Input("x", d, "n"))
	c := must(s.Constant(must(NewArray(values[:2], 2))))
	if c.DType() != d {
		t.Fatal(c)
	}
	p := must(s.CreateProgram([]Tensor{x}, Output{"r", must(x.Reverse(0))}, Output{"c", c}))
	defer p.Close()
	rt := newTwinRuntime(t, p, nil)
	defer rt.Close()
	out := must(rt.Run(map[string]*Array{"x": must(NewArray(values, int64(len(values))))}))
	rev := make([]T, len(values))
	for i, v := range values {
		rev[len(values)-1-i] = v
	}
	if got := out["r"].Data(); !reflect.DeepEqual(got, rev) {
		t.Errorf("%v reverse: %v, want %v", d, got, rev)
	}
	if got := out["c"].Data(); !reflect.DeepEqual(got, values[:2]) {
		t.Errorf("%v constant: %v, want %v", d, got, values[:2])
	}
	z := must(Zeros(d, 2, 3))
	if z.DType() != d || z.String() != d.String()+"[2, 3]" || reflect.TypeOf(z.Data()) != reflect.TypeOf(values) {
		t.Errorf("Zeros(%v): %v %T", d, z, z.Data())
	}
}

func TestEveryNewDTypeMovesThroughAProgram(t *testing.T) {
	moves(t, []Float16{Float16FromFloat32(-1.5), Float16FromFloat32(65504), 1, Float16FromFloat32(0.1)})
	moves(t, []BFloat16{BFloat16FromFloat32(-1.5), BFloat16FromFloat32(3e38), 1, BFloat16FromFloat32(0.1)})
	moves(t, []int8{math.MinInt8, -1, 0, math.MaxInt8})
	moves(t, []uint8{0, 1, 128, math.MaxUint8})
	moves(t, []int16{math.MinInt16, -1, 0, math.MaxInt16})
	moves(t, []uint16{0, 1, 0x8000, math.MaxUint16})
	moves(t, []uint32{0, 1, 1 << 31, math.MaxUint32})
	moves(t, []uint64{0, 1, 1 << 63, math.MaxUint64})
}

func TestUint16BitsAreNotAFloat(t *testing.T) {
	bits := []uint16{0x3c00, 0x4000}
	asU16 := must(NewArray(bits, 2))
	asF16 := must(NewArrayFromBits(F16, bits, 2))
	asBF16 := must(NewArrayFromBits(BF16, bits, 2))
	if asU16.DType() != U16 || asF16.DType() != F16 || asBF16.DType() != BF16 {
		t.Fatal(asU16, asF16, asBF16)
	}
	// The bits are shared, not copied.
	if &asF16.Bits16()[0] != &bits[0] || &asBF16.Bits16()[0] != &bits[0] || &asU16.Bits16()[0] != &bits[0] {
		t.Fatal("NewArrayFromBits copied the bits")
	}
	if h := asF16.Float16s(); h[0].Float32() != 1 || h[1].Float32() != 2 || asF16.Uint16s() != nil {
		t.Fatal(h)
	}
	if b := asBF16.BFloat16s(); b[0].Float32() != float32(math.Float32frombits(0x3c000000)) {
		t.Fatal(b)
	}
	_, err := NewArrayFromBits(F32, bits, 2)
	wantCode(t, err, InvalidArgument, "f32", "16-bit")
	_, err = NewArrayFromBits(F16, bits, 3)
	wantCode(t, err, InvalidArgument, "2 elements given, shape (3,) needs 3")
	if must(Zeros(F32, 2)).Bits16() != nil {
		t.Fatal("Bits16 of an F32 array")
	}

	// An F16 input refuses U16 data (same size, other dtype).
	s := newScope(t)
	x := must(s.Input("x", F16, "n"))
	p := must(s.CreateProgram([]Tensor{x}, Output{"y", must(x.Add(x))}))
	defer p.Close()
	rt := newTwinRuntime(t, p, nil)
	defer rt.Close()
	_, err = rt.Run(map[string]*Array{"x": asU16})
	wantCode(t, err, DTypeMismatch)
	out := must(rt.Run(map[string]*Array{"x": asF16}))
	if y := out["y"].Float16s(); y[0].Float32() != 2 || y[1].Float32() != 4 {
		t.Fatal(y)
	}
}

func TestFloat16Conversions(t *testing.T) {
	p2 := func(e int) float32 { return float32(math.Ldexp(1, e)) }
	f16 := []struct {
		v    float32
		bits uint16
	}{
		{0, 0x0000}, {float32(math.Copysign(0, -1)), 0x8000}, {1, 0x3c00}, {-2, 0xc000},
		{65504, 0x7bff}, {65519.99, 0x7bff}, {65520, 0x7c00}, {1e10, 0x7c00},
		{float32(math.Inf(1)), 0x7c00}, {float32(math.Inf(-1)), 0xfc00},
		{p2(-24), 0x0001}, {p2(-25), 0x0000}, {p2(-25) * 1.000001, 0x0001}, {-1.5 * p2(-24), 0x8002},
		{1023 * p2(-24), 0x03ff}, {p2(-14), 0x0400}, {1023.5 * p2(-24), 0x0400},
		{1 + 1.0/2048, 0x3c00}, {1 + 3.0/2048, 0x3c02}, {1e-10, 0}, {math.Float32frombits(1), 0},
	}
	for _, c := range f16 {
		if got := Float16FromFloat32(c.v); uint16(got) != c.bits {
			t.Errorf("Float16FromFloat32(%g) = %#04x, want %#04x", c.v, uint16(got), c.bits)
		}
	}
	for bits := 0; bits <= math.MaxUint16; bits++ {
		h := Float16(bits)
		back := Float16FromFloat32(h.Float32())
		if h.IsNaN() {
			if !back.IsNaN() || back&0x8000 != h&0x8000 || !math.IsNaN(float64(h.Float32())) {
				t.Fatalf("NaN %#04x -> %#04x", bits, uint16(back))
			}
		} else if back != h {
			t.Fatalf("f16 %#04x -> %g -> %#04x", bits, h.Float32(), uint16(back))
		}
		b := BFloat16(bits)
		if bb := BFloat16FromFloat32(b.Float32()); b.IsNaN() != bb.IsNaN() || (!b.IsNaN() && bb != b) {
			t.Fatalf("bf16 %#04x -> %#04x", bits, uint16(bb))
		}
	}
	if !Float16FromFloat32(float32(math.NaN())).IsNaN() || !Float16FromFloat32(math.Float32frombits(0x7f800001)).IsNaN() {
		t.Error("NaN to f16")
	}
	if Float16(1).Float32() != p2(-24) || Float16(0x3555).Float32() != 0.333251953125 {
		t.Error("f16 to f32")
	}
	bf16 := []struct {
		v    float32
		bits uint16
	}{
		{0, 0x0000}, {1, 0x3f80}, {1 + 1.0/256, 0x3f80}, {1 + 3.0/256, 0x3f82}, {1 + 1.0/255, 0x3f81},
		{math.MaxFloat32, 0x7f80}, {float32(math.Inf(-1)), 0xff80},
		{math.Float32frombits(0x00008000), 0x0000}, {math.Float32frombits(0x00018000), 0x0002},
		{math.Float32frombits(0x00017fff), 0x0001},
	}
	for _, c := range bf16 {
		if got := BFloat16FromFloat32(c.v); uint16(got) != c.bits {
			t.Errorf("BFloat16FromFloat32(%g) = %#04x, want %#04x", c.v, uint16(got), c.bits)
		}
	}
	if !BFloat16FromFloat32(float32(math.NaN())).IsNaN() || !BFloat16FromFloat32(math.Float32frombits(0x7f800001)).IsNaN() {
		t.Error("NaN to bf16")
	}
	if s := Float16FromFloat32(0.5).String() + " " + BFloat16FromFloat32(-3).String(); s != "0.5 -3" {
		t.Error(s)
	}
}

func TestUnknownDTypeIsRefused(t *testing.T) {
	d := DType(99)
	if d.String() != "DType(99)" || d.Size() != 0 {
		t.Fatal(d.String(), d.Size())
	}
	_, err := ParseDType("f8")
	wantCode(t, err, InvalidArgument, `"f8"`, "bf16")
	s := newScope(t)
	_, err = s.Input("x", d, "n")
	wantCode(t, err, InvalidArgument, "99")
	x := must(s.Input("x", F32, "n"))
	_, err = x.Convert(d)
	wantCode(t, err, InvalidArgument, "99")
	_, err = s.Iota(d, []Dim{must(s.Var("n"))}, 0)
	wantCode(t, err, InvalidArgument, "99")
	_, err = Zeros(d, 2)
	wantCode(t, err, InvalidArgument, "DType(99)")
	// An Array whose dtype field is unknown (not made by NewArray or Zeros) is refused too.
	_, err = s.Constant(&Array{dtype: d, shape: []int64{1}, data: []float32{1}, n: 1})
	wantCode(t, err, InvalidArgument, "DType(99)")
}

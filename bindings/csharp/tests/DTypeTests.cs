// The element types beyond f32/f64/i32/i64/bool: f16 and bf16 (ushort bits, F16Bits and
// BF16Bits), i8 (sbyte), u8 (byte), i16 (short), u16 (ushort), u32 (uint), u64 (ulong).
// Programs on them run through TwinRuntime (traced and reloaded).
using System;
using System.Collections.Generic;
using System.Linq;
using ShapePoly;

public static class DTypeTests
{
    public static void TestValuesNamesAndSizes()
    {
        var cases = new (DType D, int Raw, string Name, int Size)[]
        {
            (DType.F16, 5, "f16", 2), (DType.BF16, 6, "bf16", 2), (DType.I8, 7, "i8", 1), (DType.U8, 8, "u8", 1),
            (DType.I16, 9, "i16", 2), (DType.U16, 10, "u16", 2), (DType.U32, 11, "u32", 4), (DType.U64, 12, "u64", 8),
        };
        foreach (var c in cases)
        {
            Assert.Equal(c.Raw, (int)c.D, c.Name);
            Assert.Equal(c.Name, c.D.ToString().ToLowerInvariant());
            Assert.Equal(c.D, (DType)Enum.Parse(typeof(DType), c.Name, true), c.Name);
            var z = NdArray.Zeros(c.D, 2, 3);
            Assert.Equal(c.D, z.DType);
            Assert.Equal(6L, z.Length, c.Name);
            Assert.Equal("NdArray(" + c.Name + "[2, 3])", z.ToString());
            Assert.Equal(c.Size, System.Runtime.InteropServices.Marshal.SizeOf(z.Data.GetType().GetElementType()), c.Name + " element size");
        }
        // The generated constants and the enum agree.
        Assert.Seq(new[] { 5, 6, 7, 8, 9, 10, 11, 12 }, new[] {
            NativeConst("SHP_F16"), NativeConst("SHP_BF16"), NativeConst("SHP_I8"), NativeConst("SHP_U8"),
            NativeConst("SHP_I16"), NativeConst("SHP_U16"), NativeConst("SHP_U32"), NativeConst("SHP_U64") });
        // One C# array type per dtype; ushort[] is U16 unless made from 16-bit float bits.
        Assert.Equal(DType.I8, new NdArray(new sbyte[1], 1).DType);
        Assert.Equal(DType.U8, new NdArray(new byte[1], 1).DType);
        Assert.Equal(DType.I16, new NdArray(new short[1], 1).DType);
        Assert.Equal(DType.U16, new NdArray(new ushort[1], 1).DType);
        Assert.Equal(DType.U32, new NdArray(new uint[1], 1).DType);
        Assert.Equal(DType.U64, new NdArray(new ulong[1], 1).DType);
        Assert.Equal(DType.F16, NdArray.FromF16Bits(new ushort[1], 1).DType);
        Assert.Equal(DType.BF16, NdArray.FromBF16Bits(new ushort[1], 1).DType);
    }

    static int NativeConst(string name)
    {
        var f = typeof(NdArray).Assembly.GetType("ShapePoly.NativeMethods")
            .GetField(name, System.Reflection.BindingFlags.NonPublic | System.Reflection.BindingFlags.Static);
        return (int)f.GetValue(null);
    }

    // y = x + x and z = x @ w (x: (batch, 4), w: (4, 3)) in dtype.
    static Program AddAndMatMul(DType dtype)
    {
        using (var s = new Scope())
        {
            var x = s.Input("x", dtype, "batch, 4");
            var w = s.Input("w", dtype, "4, 3");
            var y = x + x;
            var z = x.MatMul(w);
            Assert.Equal(dtype, y.DType);
            Assert.Equal(dtype, z.DType);
            return s.CreateProgram(new[] { x, w }, ("y", y), ("z", z));
        }
    }

    // AddAndMatMul in a 16-bit float type and in f32 on the same (rounded) inputs, at batch 1
    // and 5: within 1e-2 relative.
    static void HalfMatchesF32(DType dtype, Func<float, ushort> from, Func<ushort, float> to,
                               Func<ushort[], long[], NdArray> wrap, Func<NdArray, ushort[]> bits)
    {
        using (var p = AddAndMatMul(dtype))
        using (var f = AddAndMatMul(DType.F32))
        using (var rt = new TwinRuntime(p))
        using (var reference = new TwinRuntime(f))
        {
            Assert.Equal(dtype, p.Inputs[0].DType);
            Assert.Equal(dtype, p.Outputs[1].DType);
            var name = dtype.ToString().ToLowerInvariant();
            Assert.Contains(p.ToText(), "x: " + name + "[batch, 4]");
            var w = Enumerable.Range(0, 12).Select(i => from(0.25f + 0.125f * i)).ToArray();
            var w32 = w.Select(to).ToArray();
            foreach (long batch in new long[] { 1, 5 })
            {
                var x = Enumerable.Range(0, (int)batch * 4).Select(i => from(1 + 0.37f * i)).ToArray();
                var x32 = x.Select(to).ToArray();
                var got = rt.Run(("x", wrap(x, new[] { batch, 4L })), ("w", wrap(w, new[] { 4L, 3L })));
                var want = reference.Run(("x", new NdArray(x32, batch, 4)), ("w", new NdArray(w32, 4, 3)));
                foreach (var o in new[] { ("y", 4L), ("z", 3L) })
                {
                    var a = got[o.Item1];
                    Assert.Equal(dtype, a.DType, o.Item1);
                    Assert.Seq(new[] { batch, o.Item2 }, a.Shape, o.Item1);
                    var g = bits(a).Select(to).ToArray();
                    var ws = want[o.Item1].AsFloat();
                    Assert.Equal(ws.Length, g.Length, o.Item1);
                    for (int i = 0; i < g.Length; i++)
                        Assert.True(Math.Abs(g[i] - ws[i]) <= 1e-2 * Math.Abs(ws[i]),
                            name + " " + o.Item1 + " batch " + batch + " element " + i + ": " + g[i] + " vs f32 " + ws[i]);
                }
                // y = x + x is exact in both types.
                Assert.Seq(x32.Select(v => 2 * v), bits(got["y"]).Select(to), name + " y");
            }
        }
    }

    public static void TestF16AddAndMatMulMatchF32()
    {
        HalfMatchesF32(DType.F16, F16Bits.FromSingle, F16Bits.ToSingle, NdArray.FromF16Bits, a => a.AsF16Bits());
    }

    public static void TestBF16AddAndMatMulMatchF32()
    {
        HalfMatchesF32(DType.BF16, BF16Bits.FromSingle, BF16Bits.ToSingle, NdArray.FromBF16Bits, a => a.AsBF16Bits());
    }

    public static void TestU8AddWraps()
    {
        using (var s = new Scope())
        {
            var a = s.Input("a", DType.U8, "n");
            var b = s.Input("b", DType.U8, "n");
            using (var p = s.CreateProgram(new[] { a, b }, ("c", a + b)))
            using (var rt = new TwinRuntime(p))
            {
                var c = rt.Run(("a", new NdArray(new byte[] { 250, 255, 1 }, 3)), ("b", new NdArray(new byte[] { 10, 1, 2 }, 3)))["c"];
                Assert.Equal(DType.U8, c.DType);
                Assert.Seq(new byte[] { 4, 0, 3 }, c.AsByte());
                // Same size, other dtype: refused by dtype.
                var e = Assert.Code(ShapePolyCode.DTypeMismatch, () => rt.Run(
                    ("a", new NdArray(new sbyte[] { -6, 1, 1 }, 3)), ("b", new NdArray(new byte[] { 10, 1, 2 }, 3))));
                Assert.Equal("input 'a' has dtype i8 but the program requires u8", e.Message);
            }
        }
    }

    public static void TestU64ComparesAsUnsigned()
    {
        using (var s = new Scope())
        {
            var a = s.Input("a", DType.U64, "n");
            var b = s.Input("b", DType.U64, "n");
            var gt = a.Compare(CmpOp.Gt, b);
            var lt = a.Compare(CmpOp.Lt, b);
            Assert.Equal(DType.Bool, gt.DType);
            using (var p = s.CreateProgram(new[] { a, b }, ("gt", gt), ("lt", lt)))
            using (var rt = new TwinRuntime(p))
            {
                var out_ = rt.Run(("a", new NdArray(new ulong[] { ulong.MaxValue, 1UL << 63, 1, 0 }, 4)),
                                  ("b", new NdArray(new ulong[] { 1, 1, ulong.MaxValue, 0 }, 4)));
                Assert.Seq(new[] { true, true, false, false }, out_["gt"].AsBool(), "u64 >");
                Assert.Seq(new[] { false, false, true, false }, out_["lt"].AsBool(), "u64 <");
            }
        }
    }

    public static void TestI8InputsAndOutputsRoundTrip()
    {
        using (var s = new Scope())
        {
            var x = s.Input("x", DType.I8, "n, 2");
            using (var p = s.CreateProgram(new[] { x }, ("x", x), ("t", x.Transpose(1, 0)), ("neg", -x)))
            using (var rt = new TwinRuntime(p))
            {
                Assert.Equal(DType.I8, p.Inputs[0].DType);
                Assert.Equal("(n, 2)", p.Inputs[0].Shape);
                Assert.True(p.Outputs.All(o => o.DType == DType.I8), "i8 outputs");
                var data = new sbyte[] { -128, -1, 0, 1, 100, 127 };
                var res = rt.Run(("x", new NdArray(data, 3, 2)));
                Assert.Seq(data, res["x"].AsSByte());
                Assert.Seq(new long[] { 2, 3 }, res["t"].Shape);
                Assert.Seq(new sbyte[] { -128, 0, 100, -1, 1, 127 }, res["t"].AsSByte());
                // -(-128) wraps to -128.
                Assert.Seq(new sbyte[] { -128, 1, 0, -1, -100, -127 }, res["neg"].AsSByte());
                Assert.Throws<InvalidOperationException>(() => res["x"].AsByte());
                // Caller-provided outputs of i8 too.
                var outs = new Dictionary<string, NdArray> {
                    { "x", NdArray.Zeros(DType.I8, 3, 2) }, { "t", NdArray.Zeros(DType.I8, 2, 3) }, { "neg", new NdArray(new sbyte[6], 3, 2) } };
                rt.RunInto(new Dictionary<string, NdArray> { { "x", new NdArray(data, 3, 2) } }, outs);
                Assert.Seq(data, outs["x"].AsSByte());
                Assert.Seq(new sbyte[] { -128, 0, 100, -1, 1, 127 }, outs["t"].AsSByte());
                Assert.Seq(new sbyte[] { -128, 1, 0, -1, -100, -127 }, outs["neg"].AsSByte());
            }
        }
    }

    // Values pass through reverse, a constant and a parameter bit for bit.
    static void Moves<T>(NdArray values, Func<NdArray, T[]> get)
    {
        var d = values.DType;
        var v = get(values);
        using (var s = new Scope())
        {
            var x = s.Input("x", d, "n");
            var c = s.Constant(values);
            var prm = s.Parameter("p", values);
            Assert.Equal(d, c.DType);
            using (var p = s.CreateProgram(new[] { x, prm }, ("r", x.Reverse(0)), ("c", c), ("p", prm)))
            using (var rt = new TwinRuntime(p))
            {
                var res = rt.Run(("x", values));
                Assert.Seq(v.Reverse(), get(res["r"]), d + " reverse");
                Assert.Seq(v, get(res["c"]), d + " constant");
                Assert.Seq(v, get(res["p"]), d + " parameter");
                Assert.Seq(v, get(p.InputDefault(1)), d + " parameter default");
            }
        }
    }

    public static void TestEveryNewDTypeMovesThroughAProgram()
    {
        Moves(NdArray.FromF16Bits(F16Bits.FromSingles(new[] { -1.5f, 65504f, 0.1f }).Concat(new ushort[] { 1 }).ToArray(), 4), a => a.AsF16Bits());
        Moves(NdArray.FromBF16Bits(BF16Bits.FromSingles(new[] { -1.5f, 3e38f, 0.1f }).Concat(new ushort[] { 1 }).ToArray(), 4), a => a.AsBF16Bits());
        Moves(new NdArray(new sbyte[] { sbyte.MinValue, -1, 0, sbyte.MaxValue }, 4), a => a.AsSByte());
        Moves(new NdArray(new byte[] { 0, 1, 128, byte.MaxValue }, 4), a => a.AsByte());
        Moves(new NdArray(new short[] { short.MinValue, -1, 0, short.MaxValue }, 4), a => a.AsShort());
        Moves(new NdArray(new ushort[] { 0, 1, 0x8000, ushort.MaxValue }, 4), a => a.AsUShort());
        Moves(new NdArray(new uint[] { 0, 1, 1u << 31, uint.MaxValue }, 4), a => a.AsUInt());
        Moves(new NdArray(new ulong[] { 0, 1, 1UL << 63, ulong.MaxValue }, 4), a => a.AsULong());
        using (var s = new Scope())
        {
            Assert.Equal(DType.U8, s.Constant(new byte[] { 1, 2 }, 2).DType);
            Assert.Equal(DType.U64, s.Constant(new ulong[] { 1 }).DType);
            Assert.Equal(DType.I16, s.Parameter("q", new short[] { 1, 2 }, 2).DType);
            Assert.Equal(DType.Bool, s.Constant(new NdArray(new[] { true, false }, 2)).DType);
            var e = Assert.Code(ShapePolyCode.InvalidArgument, () => s.Constant(new ushort[3], 2, 2));
            Assert.Equal("Constant: 3 elements given, shape (2, 2) needs 4", e.Message);
        }
    }

    public static void TestUShortBitsAreNotAFloat()
    {
        var bits = new ushort[] { 0x3c00, 0x4000 };
        var asU16 = new NdArray(bits, 2);
        var asF16 = NdArray.FromF16Bits(bits, 2);
        Assert.True(ReferenceEquals(bits, asF16.AsF16Bits()), "FromF16Bits does not copy");
        Assert.Throws<InvalidOperationException>(() => asF16.AsUShort());
        Assert.Throws<InvalidOperationException>(() => asF16.AsBF16Bits());
        Assert.Throws<InvalidOperationException>(() => asU16.AsF16Bits());
        Assert.Seq(new[] { 1f, 2f }, F16Bits.ToSingles(asF16.AsF16Bits()));
        using (var s = new Scope())
        {
            var x = s.Input("x", DType.F16, "n");
            using (var p = s.CreateProgram(new[] { x }, ("y", x + x)))
            using (var rt = new TwinRuntime(p))
            {
                var e = Assert.Code(ShapePolyCode.DTypeMismatch, () => rt.Run(("x", asU16)));
                Assert.Equal("input 'x' has dtype u16 but the program requires f16", e.Message);
                Assert.Seq(new[] { 2f, 4f }, F16Bits.ToSingles(rt.Run(("x", asF16))["y"].AsF16Bits()));
            }
        }
    }

    public static void TestF16AndBF16Conversions()
    {
        Func<int, float> p2 = e => (float)Math.Pow(2, e);
        var f16 = new (float V, ushort Bits)[]
        {
            (0f, 0x0000), (-0f, 0x8000), (1f, 0x3c00), (-2f, 0xc000), (65504f, 0x7bff), (65519.99f, 0x7bff),
            (65520f, 0x7c00), (1e10f, 0x7c00), (float.PositiveInfinity, 0x7c00), (float.NegativeInfinity, 0xfc00),
            (p2(-24), 0x0001), (p2(-25), 0x0000), (p2(-25) * 1.000001f, 0x0001), (-1.5f * p2(-24), 0x8002),
            (1023 * p2(-24), 0x03ff), (p2(-14), 0x0400), (1023.5f * p2(-24), 0x0400),
            (1 + 1f / 2048, 0x3c00), (1 + 3f / 2048, 0x3c02), (1e-10f, 0x0000), (float.Epsilon, 0x0000),
        };
        foreach (var c in f16)
            Assert.Equal(c.Bits, F16Bits.FromSingle(c.V), "F16Bits.FromSingle(" + c.V.ToString("R") + ")");
        for (int i = 0; i <= ushort.MaxValue; i++)
        {
            var h = (ushort)i;
            var back = F16Bits.FromSingle(F16Bits.ToSingle(h));
            if (F16Bits.IsNaN(h))
                Assert.True(F16Bits.IsNaN(back) && (back & 0x8000) == (h & 0x8000) && float.IsNaN(F16Bits.ToSingle(h)), "f16 NaN " + i);
            else if (back != h)
                throw new Exception("f16 " + i + " -> " + F16Bits.ToSingle(h) + " -> " + back);
            var bb = BF16Bits.FromSingle(BF16Bits.ToSingle(h));
            if (BF16Bits.IsNaN(h) != BF16Bits.IsNaN(bb) || (!BF16Bits.IsNaN(h) && bb != h))
                throw new Exception("bf16 " + i + " -> " + bb);
        }
        Assert.True(F16Bits.IsNaN(F16Bits.FromSingle(float.NaN)), "NaN to f16");
        Assert.Equal(p2(-24), F16Bits.ToSingle(1));
        Assert.Equal(0.333251953125f, F16Bits.ToSingle(0x3555));
        var bf16 = new (float V, ushort Bits)[]
        {
            (0f, 0x0000), (1f, 0x3f80), (1 + 1f / 256, 0x3f80), (1 + 3f / 256, 0x3f82), (1 + 1f / 255, 0x3f81),
            (float.MaxValue, 0x7f80), (float.NegativeInfinity, 0xff80),
        };
        foreach (var c in bf16)
            Assert.Equal(c.Bits, BF16Bits.FromSingle(c.V), "BF16Bits.FromSingle(" + c.V.ToString("R") + ")");
        Assert.True(BF16Bits.IsNaN(BF16Bits.FromSingle(float.NaN)), "NaN to bf16");
        Assert.Equal(3.140625f, BF16Bits.ToSingle(0x4049));
        Assert.Seq(new ushort[] { 0x3c00, 0xc000 }, F16Bits.FromSingles(new[] { 1f, -2f }));
        Assert.Seq(new[] { 1f, -2f }, BF16Bits.ToSingles(new ushort[] { 0x3f80, 0xc000 }));
    }

    public static void TestUnknownDTypeIsRefused()
    {
        var d = (DType)99;
        Assert.Equal("99", d.ToString());
        var ae = Assert.Throws<ArgumentException>(() => NdArray.Zeros(d, 2));
        Assert.Contains(ae.Message, "unknown dtype 99");
        using (var s = new Scope())
        {
            var e = Assert.Code(ShapePolyCode.InvalidArgument, () => s.Input("x", d, "n"));
            Assert.Contains(e.Message, "99");
            e = Assert.Code(ShapePolyCode.InvalidArgument, () => s.Input("x", DType.F32, "n").Convert(d));
            Assert.Contains(e.Message, "99");
            e = Assert.Code(ShapePolyCode.InvalidArgument, () => s.ConstantBytes(d, new byte[8], 2));
            Assert.Contains(e.Message, "99");
        }
    }
}

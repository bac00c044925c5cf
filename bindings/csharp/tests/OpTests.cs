// Every tracing operation of the C API, run through the runtime and checked against values
// computed here.
using System;
using System.Collections.Generic;
using System.Linq;
using ShapePoly;

public static class OpTests
{
    // Runs a single-output program made of `inputs` -> `output` and returns the output.
    static NdArray Run1(Scope s, Tensor[] inputs, Tensor output, params (string Name, NdArray Array)[] args)
    {
        var d = new Dictionary<string, NdArray>();
        foreach (var a in args) d.Add(a.Name, a.Array);
        return Run1(s, inputs, output, d);
    }

    static NdArray Run1(Scope s, Tensor[] inputs, Tensor output, IDictionary<string, NdArray> args)
    {
        using (var p = s.CreateProgram(inputs, ("out", output)))
        using (var rt = new TwinRuntime(p))
            return rt.Run(args)["out"];
    }

    static Dictionary<string, NdArray> Args(string n1, NdArray a1, string n2, NdArray a2)
    {
        return new Dictionary<string, NdArray> { { n1, a1 }, { n2, a2 } };
    }

    static double[] D(params double[] v) { return v; }
    static double[] Map(float[] x, Func<double, double> f) { return x.Select(v => f(v)).ToArray(); }

    public static void TestUnaryOps()
    {
        var pos = new float[] { 0.3f, 1.2f, 2.7f, 4.0f };
        var mixed = new float[] { -1.4f, 0.3f, 2.7f, -4.0f };
        var unit = new float[] { -0.9f, 0.3f, 0.7f, -0.5f };
        var big = new float[] { 1.2f, 2.5f, 3.0f, 4.0f };
        var ops = new[] { UnaryOp.Neg, UnaryOp.Abs, UnaryOp.Exp, UnaryOp.Log, UnaryOp.Log1p, UnaryOp.Expm1, UnaryOp.Sqrt, UnaryOp.Rsqrt,
                          UnaryOp.Sin, UnaryOp.Cos, UnaryOp.Tanh, UnaryOp.Logistic, UnaryOp.Floor, UnaryOp.Ceil, UnaryOp.Round, UnaryOp.Sign,
                          UnaryOp.Tan, UnaryOp.Sinh, UnaryOp.Cosh, UnaryOp.Asin, UnaryOp.Acos, UnaryOp.Atan, UnaryOp.Asinh, UnaryOp.Acosh,
                          UnaryOp.Atanh };
        var ins = new[] { mixed, mixed, pos, pos, pos, pos, pos, pos, mixed, mixed, mixed, mixed, mixed, mixed, mixed, mixed,
                          mixed, mixed, mixed, unit, unit, mixed, mixed, big, unit };
        var fs = new Func<double, double>[] { v => -v, Math.Abs, Math.Exp, Math.Log, v => Math.Log(1 + v), v => Math.Exp(v) - 1, Math.Sqrt,
                          v => 1 / Math.Sqrt(v), Math.Sin, Math.Cos, Math.Tanh, v => 1 / (1 + Math.Exp(-v)), Math.Floor, Math.Ceiling,
                          v => Math.Round(v), v => Math.Sign(v), Math.Tan, Math.Sinh, Math.Cosh, Math.Asin, Math.Acos, Math.Atan,
                          v => Math.Log(v + Math.Sqrt(v * v + 1)), v => Math.Log(v + Math.Sqrt(v * v - 1)),
                          v => 0.5 * Math.Log((1 + v) / (1 - v)) };
        using (var s = new Scope())
        {
            var x = s.Input("x", DType.F32, "n");
            for (int k = 0; k < ops.Length; k++)
            {
                var y = Run1(s, new[] { x }, x.Unary(ops[k]), ("x", new NdArray(ins[k], 4)));
                Assert.Close(Map(ins[k], fs[k]), y.AsFloat(), 1e-5, ops[k].ToString());
            }
            // The named helpers are the same operations.
            Assert.Equal("f32[n]", x.Tanh().ToString());
            Assert.Close(Map(pos, Math.Sqrt), Run1(s, new[] { x }, x.Sqrt(), ("x", new NdArray(pos, 4))).AsFloat(), 1e-6, "Sqrt()");
            Assert.Close(Map(mixed, v => -v), Run1(s, new[] { x }, -x, ("x", new NdArray(mixed, 4))).AsFloat(), 0, "-x");
            var bl = s.Input("bl", DType.Bool, "2");
            Assert.Seq(new[] { false, true }, Run1(s, new[] { bl }, bl.Not(), ("bl", new NdArray(new[] { true, false }, 2))).AsBool());
            var xi = s.Input("xi", DType.I32, "2");
            Assert.Seq(new[] { ~5, ~-1 }, Run1(s, new[] { xi }, xi.Not(), ("xi", new NdArray(new[] { 5, -1 }, 2))).AsInt());
            Assert.Code(ShapePolyCode.DTypeMismatch, () => xi.Exp());
        }
    }

    public static void TestBinaryOpsWithBroadcasting()
    {
        using (var s = new Scope())
        {
            var a = s.Input("a", DType.F32, "2, 3");
            var b = s.Input("b", DType.F32, "3");
            var av = new float[] { 1, 2, 3, 4, 5, 6 };
            var bv = new float[] { 2, 0.5f, 4 };
            Action<Tensor, Func<double, double, double>> check = (t, f) =>
            {
                var expected = Enumerable.Range(0, 6).Select(k => f(av[k], bv[k % 3])).ToArray();
                var y = Run1(s, new[] { a, b }, t, ("a", new NdArray(av, 2, 3)), ("b", new NdArray(bv, 3)));
                Assert.Seq(new long[] { 2, 3 }, y.Shape);
                Assert.Close(expected, y.AsFloat(), 1e-6, t.ToString());
            };
            check(a + b, (x, y) => x + y);
            check(a - b, (x, y) => x - y);
            check(a * b, (x, y) => x * y);
            check(a / b, (x, y) => x / y);
            check(a.Pow(b), Math.Pow);
            check(a.Maximum(b), Math.Max);
            check(a.Minimum(b), Math.Min);
            check(a % b, (x, y) => x % y);  // C fmod
            var i = s.Input("i", DType.I32, "4");
            var j = s.Input("j", DType.I32, "4");
            var iv = new[] { -7, 7, 12, 5 };
            var jv = new[] { 2, -2, 10, 3 };
            NdArray[] ints = { new NdArray(iv, 4), new NdArray(jv, 4) };
            Func<Tensor, int[]> runInt = t => Run1(s, new[] { i, j }, t, ("i", ints[0]), ("j", ints[1])).AsInt();
            Assert.Seq(new[] { -3, -3, 1, 1 }, runInt(i / j), "int div toward zero");
            Assert.Seq(new[] { -1, 1, 2, 2 }, runInt(i % j), "int rem");
            Assert.Seq(iv.Zip(jv, (x, y) => x & y), runInt(i & j));
            Assert.Seq(iv.Zip(jv, (x, y) => x | y), runInt(i | j));
            Assert.Seq(iv.Zip(jv, (x, y) => x ^ y), runInt(i ^ j));
            var p = s.Input("p", DType.Bool, "2");
            var q = s.Input("q", DType.Bool, "2");
            var pq = Args("p", new NdArray(new[] { true, false }, 2), "q", new NdArray(new[] { true, true }, 2));
            Assert.Seq(new[] { true, false }, Run1(s, new[] { p, q }, p.And(q), pq).AsBool());
            Assert.Seq(new[] { true, true }, Run1(s, new[] { p, q }, p.Or(q), pq).AsBool());
            Assert.Seq(new[] { false, true }, Run1(s, new[] { p, q }, p.Xor(q), pq).AsBool());
            Assert.Code(ShapePolyCode.DTypeMismatch, () => a.Add(i));
        }
    }

    public static void TestCompareSelectConvert()
    {
        using (var s = new Scope())
        {
            var a = s.Input("a", DType.F32, "n");
            var b = s.Input("b", DType.F32, "n");
            var args = Args("a", new NdArray(new float[] { 1, 5, 3 }, 3), "b", new NdArray(new float[] { 2, 5, 1 }, 3));
            Assert.Seq(new[] { true, false, false }, Run1(s, new[] { a, b }, a.Less(b), args).AsBool());
            Assert.Seq(new[] { true, true, false }, Run1(s, new[] { a, b }, a.LessEqual(b), args).AsBool());
            Assert.Seq(new[] { false, true, false }, Run1(s, new[] { a, b }, a.Equal(b), args).AsBool());
            Assert.Seq(new[] { true, false, true }, Run1(s, new[] { a, b }, a.NotEqual(b), args).AsBool());
            Assert.Seq(new[] { false, false, true }, Run1(s, new[] { a, b }, a.Greater(b), args).AsBool());
            Assert.Seq(new[] { false, true, true }, Run1(s, new[] { a, b }, a.GreaterEqual(b), args).AsBool());
            Assert.Seq(new[] { 1f, 5f, 1f }, Run1(s, new[] { a, b }, Tensor.Select(a.Less(b), a, b), args).AsFloat(), "select = min");
            var c = s.Input("c", DType.F32, "2");
            var cv = ("c", new NdArray(new float[] { -1.7f, 2.9f }, 2));
            Assert.Seq(new[] { -1, 2 }, Run1(s, new[] { c }, c.Convert(DType.I32), cv).AsInt());
            Assert.Seq(new[] { -1L, 2L }, Run1(s, new[] { c }, c.Convert(DType.I64), cv).AsLong());
            Assert.Seq(new[] { -1.7f, 2.9f }, Run1(s, new[] { c }, c.Convert(DType.F64), cv).AsDouble().Select(v => (float)v));
            Assert.Seq(new[] { true, true }, Run1(s, new[] { c }, c.Convert(DType.Bool), cv).AsBool());
            Assert.Code(ShapePolyCode.DTypeMismatch, () => Tensor.Select(a, a, b), "pred must be bool");
        }
    }

    public static void TestShapeOps()
    {
        using (var s = new Scope("L >= 2"))
        {
            var n = s.Variable("n");
            var x = s.Input("x", DType.F32, "n, 1");
            var xv = new NdArray(new float[] { 1, 2 }, 2, 1);
            var bc = x.BroadcastTo(n, s.Constant(3));
            Assert.Equal("f32[n, 3]", bc.ToString());
            Assert.Seq(new float[] { 1, 1, 1, 2, 2, 2 }, Run1(s, new[] { x }, bc, ("x", xv)).AsFloat());

            var m = s.Input("m", DType.F32, "n, 6");
            var r = m.Reshape(null, s.Constant(3));
            Assert.Equal("f32[2*n, 3]", r.ToString());
            var mv = new NdArray(Enumerable.Range(0, 12).Select(e => (float)e).ToArray(), 2, 6);
            var ry = Run1(s, new[] { m }, r, ("m", mv));
            Assert.Seq(new long[] { 4, 3 }, ry.Shape);
            var t = m.Transpose(1, 0);
            Assert.Equal("f32[6, n]", t.ToString());
            var ty = Run1(s, new[] { m }, t, ("m", mv));
            Assert.Seq(new float[] { 0, 6, 1, 7, 2, 8 }, ty.AsFloat().Take(6));

            var u = s.Input("u", DType.F32, "k, 2");
            var w = s.Input("w", DType.F32, "j, 2");
            var cat = Tensor.Concatenate(0, u, w);
            Assert.Equal("f32[j + k, 2]", cat.ToString());
            var cy = Run1(s, new[] { u, w }, cat, ("u", new NdArray(new float[] { 1, 2 }, 1, 2)), ("w", new NdArray(new float[] { 3, 4, 5, 6 }, 2, 2)));
            Assert.Seq(new float[] { 1, 2, 3, 4, 5, 6 }, cy.AsFloat());

            var v = s.Input("v", DType.F32, "L");
            var L = s.Variable("L");
            var vv = new NdArray(new float[] { 0, 1, 2, 3, 4, 5, 6 }, 7);
            var sl = v.Slice(new Dim?[] { s.Constant(1) }, new Dim?[] { L }, new long[] { 2 });
            Assert.Seq(new float[] { 1, 3, 5 }, Run1(s, new[] { v }, sl, ("v", vv)).AsFloat());
            Assert.Seq(new float[] { 2, 3, 4, 5, 6 }, Run1(s, new[] { v }, v.Slice(new Dim?[] { s.Constant(2) }, null), ("v", vv)).AsFloat());
            var pd = v.Pad(new[] { s.Constant(1) }, new[] { s.Constant(2) }, 9);
            Assert.Equal("f32[L + 3]", pd.ToString());
            Assert.Seq(new float[] { 9, 0, 1, 2, 9, 9 }, Run1(s, new[] { v }, pd, ("v", new NdArray(new float[] { 0, 1, 2 }, 3))).AsFloat());
            Assert.Code(ShapePolyCode.Inconclusive, () => v.Slice(new Dim?[] { s.Constant(3) }, null), "3 <= L is unknown");
            Assert.Code(ShapePolyCode.InvalidArgument, () => m.Transpose(0, 0));
        }
    }

    public static void TestReductionsAndNormalizations()
    {
        using (var s = new Scope())
        {
            var x = s.Input("x", DType.F32, "r, 3");
            var xv = ("x", new NdArray(new float[] { 1, 2, 3, 4, 5, 6 }, 2, 3));
            Assert.Seq(new float[] { 6, 15 }, Run1(s, new[] { x }, x.Sum(new long[] { 1 }), xv).AsFloat());
            Assert.Seq(new float[] { 2.5f, 3.5f, 4.5f }, Run1(s, new[] { x }, x.Mean(new long[] { 0 }), xv).AsFloat());
            Assert.Seq(new float[] { 3, 6 }, Run1(s, new[] { x }, x.ReduceMax(new long[] { -1 }), xv).AsFloat());
            Assert.Seq(new float[] { 1, 4 }, Run1(s, new[] { x }, x.ReduceMin(new long[] { 1 }), xv).AsFloat());
            Assert.Seq(new float[] { 720 }, Run1(s, new[] { x }, x.Prod(), xv).AsFloat());
            var kd = Run1(s, new[] { x }, x.Sum(new long[] { 1 }, keepdims: true), xv);
            Assert.Seq(new long[] { 2, 1 }, kd.Shape);
            Assert.Seq(new float[] { 1, 3, 6, 4, 9, 15 }, Run1(s, new[] { x }, x.CumSum(1), xv).AsFloat());
            var e = Math.Exp(1);
            var sm = Run1(s, new[] { x }, x.Softmax(1), xv).AsFloat();
            Assert.Close(new[] { 1 / (1 + e + e * e), e / (1 + e + e * e), e * e / (1 + e + e * e) }, sm.Take(3).ToArray(), 1e-6, "softmax");
            var ln = Run1(s, new[] { x }, x.LayerNorm(1, 0), xv).AsFloat();
            var sd = Math.Sqrt(2.0 / 3);
            Assert.Close(new[] { -1 / sd, 0, 1 / sd, -1 / sd, 0, 1 / sd }, ln, 1e-5, "layer_norm");
            Assert.Code(ShapePolyCode.InvalidArgument, () => x.Sum(new long[] { 2 }), "axis out of range");
        }
    }

    public static void TestMatMulAndDotGeneral()
    {
        using (var s = new Scope())
        {
            var a = s.Input("a", DType.F32, "n, 3");
            var b = s.Constant(new float[] { 1, 0, 0, 1, 1, 1 }, 3, 2);
            var av = ("a", new NdArray(new float[] { 1, 2, 3, 4, 5, 6 }, 2, 3));
            Assert.Seq(new float[] { 4, 5, 10, 11 }, Run1(s, new[] { a }, a.MatMul(b), av).AsFloat());
            var dg = a.DotGeneral(b, null, null, new long[] { 1 }, new long[] { 0 });
            Assert.Equal("f32[n, 2]", dg.ToString());
            Assert.Seq(new float[] { 4, 5, 10, 11 }, Run1(s, new[] { a }, dg, av).AsFloat());
            var p = s.Input("p", DType.F64, "B, 2, 2");
            var q = s.Input("q", DType.F64, "B, 2");
            var bd = p.DotGeneral(q, new long[] { 0 }, new long[] { 0 }, new long[] { 2 }, new long[] { 1 });
            Assert.Equal("f64[B, 2]", bd.ToString());
            var y = Run1(s, new[] { p, q }, bd, ("p", new NdArray(new double[] { 1, 2, 3, 4, 1, 0, 0, 1 }, 2, 2, 2)),
                ("q", new NdArray(new double[] { 1, 1, 5, 7 }, 2, 2)));
            Assert.Seq(new double[] { 3, 7, 5, 7 }, y.AsDouble());
            var e = Assert.Code(ShapePolyCode.ShapeMismatch, () => a.MatMul(s.Input("c", DType.F32, "4, 2")));
            Assert.Equal("matmul: contracting dimensions differ: 3 vs 4 (shapes (n, 3) and (4, 2))", e.Message);
        }
    }

    // Empty integer-list attributes (dot_general without batch or contracting dims, transpose,
    // reduce and slice of a scalar) once serialized but failed to load ("misaligned vector");
    // Run1 goes through TwinRuntime, which reloads the program before running it.
    public static void TestEmptyListAttributesSurviveReload()
    {
        using (var s = new Scope())
        {
            var a = s.Input("a", DType.F32, "m, k");
            var b = s.Input("b", DType.F32, "k, n");
            var av = new float[] { 1, 2, 3, 4, 5, 6 };
            var bv = new float[] { 1, -1, 2, 0.5f, 0, 3 };
            var mm = a.DotGeneral(b, null, null, new long[] { 1 }, new long[] { 0 });
            Assert.Equal("f32[m, n]", mm.ToString());
            var expected = new double[4];
            for (int i = 0; i < 2; i++)
                for (int j = 0; j < 2; j++)
                    for (int k = 0; k < 3; k++) expected[i * 2 + j] += av[i * 3 + k] * bv[k * 2 + j];
            var y = Run1(s, new[] { a, b }, mm, ("a", new NdArray(av, 2, 3)), ("b", new NdArray(bv, 3, 2)));
            Assert.Seq(new long[] { 2, 2 }, y.Shape);
            Assert.Close(expected, y.AsFloat(), 1e-6, "dot_general without batch dims");

            var u = s.Input("u", DType.F64, "i");
            var v = s.Input("v", DType.F64, "j");
            var outer = u.DotGeneral(v, new long[0], new long[0], new long[0], new long[0]);
            Assert.Equal("f64[i, j]", outer.ToString());
            var o = Run1(s, new[] { u, v }, outer, ("u", new NdArray(new double[] { 1, 2, 3 }, 3)), ("v", new NdArray(new double[] { 10, -1 }, 2)));
            Assert.Seq(new long[] { 3, 2 }, o.Shape);
            Assert.Seq(new double[] { 10, -1, 20, -2, 30, -3 }, o.AsDouble(), "outer product");

            var p = s.Input("p", DType.F32, "B, 2");
            var q = s.Input("q", DType.F32, "B, 3");
            var bo = Run1(s, new[] { p, q }, p.DotGeneral(q, new long[] { 0 }, new long[] { 0 }, null, null),
                ("p", new NdArray(new float[] { 1, 2, 3, 4 }, 2, 2)), ("q", new NdArray(new float[] { 1, 0, -1, 2, 3, 4 }, 2, 3)));
            Assert.Seq(new long[] { 2, 2, 3 }, bo.Shape);
            Assert.Seq(new float[] { 1, 0, -1, 2, 0, -2, 6, 9, 12, 8, 12, 16 }, bo.AsFloat(), "batch dims, no contracting dims");

            var x = s.Input("x", DType.F32, "");
            var xv = ("x", new NdArray(new float[] { -2.5f }));
            var t = x.Transpose();
            Assert.Equal("f32[]", t.ToString());
            var ty = Run1(s, new[] { x }, t, xv);
            Assert.Equal(0, ty.Rank);
            Assert.Seq(new float[] { -2.5f }, ty.AsFloat(), "transpose of a scalar");
            foreach (var op in new[] { ReduceOp.Sum, ReduceOp.Mean, ReduceOp.Max, ReduceOp.Min, ReduceOp.Prod })
                foreach (var keep in new[] { false, true })
                {
                    var r = Run1(s, new[] { x }, x.Reduce(op, null, keep), xv);
                    Assert.Equal(0, r.Rank);
                    Assert.Seq(new float[] { -2.5f }, r.AsFloat(), "reduce of a scalar: " + op + (keep ? " keepdims" : ""));
                }
            var xi = s.Input("xi", DType.I64, "");
            Assert.Seq(new long[] { 7 }, Run1(s, new[] { xi }, xi.Sum(new long[0]), ("xi", new NdArray(new long[] { 7 }))).AsLong(), "i64 scalar sum");
            Assert.Seq(new float[] { -2.5f }, Run1(s, new[] { x }, x.Slice(new Dim?[0], new Dim?[0], new long[0]), xv).AsFloat(), "slice of a scalar");
        }
    }

    public static void TestIotaDimInputTakeDimValue()
    {
        using (var s = new Scope())
        {
            var n = s.DimInput("n");
            var io = s.Iota(DType.I64, 0, s.Variable("n"));
            Assert.Equal("i64[n]", io.ToString());
            using (var p = s.CreateProgram(new[] { n }, ("iota", io)))
            {
                Assert.Equal(InputRole.Dim, p.Inputs[0].Role);
                using (var rt = new TwinRuntime(p))
                    Assert.Seq(new long[] { 0, 1, 2, 3, 4 }, rt.Run(("n", NdArray.Scalar(5)))["iota"].AsLong());
            }
            var x = s.Input("x", DType.F32, "m");
            var idx = s.Input("idx", DType.I32, "k");
            var tk = x.Take(idx, 0);
            Assert.Equal("f32[k]", tk.ToString());
            var dv = s.DimValue(s.Variable("m") * 2);
            Assert.Equal("i64[]", dv.ToString());
            using (var p = s.CreateProgram(new[] { x, idx }, ("take", tk), ("twice_m", dv)))
            using (var rt = new TwinRuntime(p))
            {
                var outs = rt.Run(("x", new NdArray(new float[] { 10, 11, 12, 13 }, 4)), ("idx", new NdArray(new[] { 3, 0, 3 }, 3)));
                Assert.Seq(new float[] { 13, 10, 13 }, outs["take"].AsFloat());
                Assert.Seq(new long[] { 8 }, outs["twice_m"].AsLong());
                Assert.Equal(0, outs["twice_m"].Rank);
                var e = Assert.Code(ShapePolyCode.InvalidArgument, () => rt.Run(("x", new NdArray(new float[4], 4)), ("idx", new NdArray(new[] { 4 }, 1))));
                Assert.Contains(e.Message, "4");
            }
            Assert.Code(ShapePolyCode.DTypeMismatch, () => x.Take(x, 0), "float indices");
        }
    }

    public static void TestConstantsOfEveryDType()
    {
        using (var s = new Scope())
        {
            var x = s.Input("x", DType.F32, "2");  // a program needs no input, but keep one
            Func<Tensor, NdArray> run = t => Run1(s, new[] { x }, t, ("x", new NdArray(new float[2], 2)));
            Assert.Equal("1.5,2", string.Join(",", run(s.Constant(new float[] { 1.5f, 2 }, 2)).AsFloat()));
            Assert.Equal("0.25", string.Join(",", run(s.Constant(new double[] { 0.25 }, 1)).AsDouble()));
            var m = run(s.Constant(new[] { 1, -2, 3, 4 }, 2, 2));
            Assert.Equal("1,-2,3,4", string.Join(",", m.AsInt()));
            Assert.Seq(new long[] { 2, 2 }, m.Shape);
            Assert.Equal(long.MaxValue, run(s.Constant(new[] { long.MaxValue })).AsLong()[0]);
            Assert.Seq(new[] { true, false, true }, run(s.Constant(new[] { true, false, true }, 3)).AsBool());
            Assert.Equal(7, run(s.Scalar(7)).AsInt()[0]);
            Assert.Equal(2.5, run(s.Scalar(2.5)).AsDouble()[0]);
            Assert.Equal(-3L, run(s.Scalar(-3L)).AsLong()[0]);
            Assert.Equal(true, run(s.Scalar(true)).AsBool()[0]);
            Assert.Equal(0.5f, run(s.Scalar(0.5f)).AsFloat()[0]);
            Assert.Equal(258, run(s.ConstantBytes(DType.I32, BitConverter.GetBytes(258), 1)).AsInt()[0]);
            Assert.Code(ShapePolyCode.InvalidArgument, () => s.Constant(new float[3], 2, 2), "nbytes");
        }
    }
}

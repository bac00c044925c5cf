// Control flow traced from delegates: Scope.Scan (an Elman RNN over a symbolic sequence
// length, saved and reloaded), Scope.WhileLoop (Newton's square root, a data-dependent count,
// max trips) and Scope.Cond (a data-dependent predicate), each checked against a plain loop.
using System;
using System.Collections.Generic;
using System.IO;
using System.Linq;
using System.Text.RegularExpressions;
using ShapePoly;

public static class ControlFlowTests
{
    const int D = 3, H = 4;

    // n deterministic values in [-0.5, 0.5).
    static float[] Weights(int n, ulong seed)
    {
        var r = new float[n];
        ulong s = seed;
        for (int i = 0; i < n; i++)
        {
            s = unchecked(s * 6364136223846793005UL + 1442695040888963407UL);
            r[i] = (float)((s >> 11) / (double)(1UL << 53) - 0.5);
        }
        return r;
    }

    // h_t = tanh(x_t W + h_{t-1} U) as a plain loop: the final h and every h.
    static (double[] H, double[] Ys) RnnReference(float[] xs, float[] h0, float[] w, float[] u)
    {
        var h = h0.Select(v => (double)v).ToArray();
        var ys = new List<double>();
        for (int t = 0; t + D <= xs.Length; t += D)
        {
            var next = new double[H];
            for (int j = 0; j < H; j++)
            {
                double acc = 0;
                for (int i = 0; i < D; i++) acc += xs[t + i] * (double)w[i * H + j];
                for (int i = 0; i < H; i++) acc += (float)h[i] * (double)u[i * H + j];
                next[j] = (float)Math.Tanh(acc);
            }
            h = next;
            ys.AddRange(h);
        }
        return (h, ys.ToArray());
    }

    static Tensor VecMat(Tensor v, Tensor m) { return v.DotGeneral(m, new long[0], new long[0], new long[] { 0 }, new long[] { 0 }); }

    static Program RnnProgram()
    {
        using (var s = new Scope())
        {
            s.Declare("t", 0, 1 << 20);
            var x = s.Input("x", DType.F32, "t, 3");
            var h0 = s.Input("h0", DType.F32, "4");
            var w = s.Input("w", DType.F32, "3, 4");
            var u = s.Input("u", DType.F32, "4, 4");
            var (carry, ys) = s.Scan((c, xt) =>
            {
                var h = (VecMat(xt[0], w) + VecMat(c[0], u)).Tanh();
                return (new[] { h }, new[] { h });
            }, new[] { h0 }, new[] { x });
            Assert.Equal(1, carry.Length, "carry count");
            Assert.Equal(1, ys.Length, "ys count");
            Assert.Equal("f32[t, 4]", ys[0].ToString(), "ys type");
            return s.CreateProgram(new[] { x, h0, w, u }, ("h", carry[0]), ("ys", ys[0]));
        }
    }

    static void RunRnn(Runtime rt, int steps)
    {
        var xs = Weights(steps * D, (ulong)(1 + steps));
        var h0 = Weights(H, 2);
        var w = Weights(D * H, 3);
        var u = Weights(H * H, 4);
        var o = rt.Run(("x", new NdArray(xs, steps, D)), ("h0", new NdArray(h0, H)), ("w", new NdArray(w, D, H)),
                       ("u", new NdArray(u, H, H)));
        var (h, ys) = RnnReference(xs, h0, w, u);
        Assert.Seq(new long[] { steps, H }, o["ys"].Shape, "ys shape");
        Assert.Close(h, o["h"].AsFloat(), 1e-5, "h at length " + steps);
        Assert.Close(ys, o["ys"].AsFloat(), 1e-5, "ys at length " + steps);
    }

    public static void TestScanElmanRnnOverSymbolicLength()
    {
        using (var p = RnnProgram())
        {
            using (var rt = new Runtime(p))
                foreach (var steps in new[] { 0, 1, 7 }) RunRnn(rt, steps);
            // Saved once, loaded, and run again.
            using (var loaded = Program.Load(p.Serialize()))
            using (var rt = new Runtime(loaded))
                foreach (var steps in new[] { 0, 1, 7 }) RunRnn(rt, steps);
        }
    }

    public static void TestScanReverseWithLengthAndNoXs()
    {
        using (var s = new Scope())
        {
            s.Declare("n", 0, 100);
            var n = s.DimInput("n");
            var c0 = s.Constant(new long[] { 10 });
            var one = s.Constant(new long[] { 1 });
            var (carry, ys) = s.Scan((c, _) => (new[] { c[0] + one }, new[] { c[0] }), new[] { c0 },
                                     length: s.Variable("n"), reverse: true);
            using (var p = s.CreateProgram(new[] { n }, ("c", carry[0]), ("ys", ys[0])))
            using (var rt = new Runtime(p))
            {
                var o = rt.Run(("n", NdArray.Scalar(4)));
                Assert.Seq(new long[] { 14 }, o["c"].AsLong(), "carry");
                Assert.Seq(new long[] { 13, 12, 11, 10 }, o["ys"].AsLong(), "reversed ys");
            }
        }
    }

    public static void TestWhileLoopNewtonSqrtAndCount()
    {
        using (var s = new Scope())
        {
            var a = s.Input("a", DType.F32, "n");
            var k = s.Input("k", DType.I64, "");
            var half = s.Constant(new[] { 0.5f });
            var tol = s.Constant(new[] { 1e-5f });
            var zeroF = s.Constant(new[] { 0f });
            var two = s.Constant(new[] { 2f });
            var zero = s.Constant(new long[] { 0 });
            var one = s.Constant(new long[] { 1 });
            // Newton's iteration y <- (y + a/y) / 2 from y = a while some |y*y - a| > tol*a,
            // counting the steps.
            var newton = s.WhileLoop(
                c => ((c[0] * c[0] - a).Abs() - tol * a).ReduceMax().Compare(CmpOp.Gt, zeroF),
                c => new[] { (c[0] + a / c[0]) * half, c[1] + one },
                new[] { a, zero }, 100);
            // Count up to the data-dependent bound k, doubling an accumulator.
            var counted = s.WhileLoop(c => c[0].Compare(CmpOp.Lt, k), c => new[] { c[0] + one, c[1] * two },
                                      new[] { zero, a });
            using (var p = s.CreateProgram(new[] { a, k }, ("y", newton[0]), ("steps", newton[1]), ("i", counted[0]),
                                           ("acc", counted[1])))
            using (var rt = new Runtime(p))
            {
                var av = new[] { 2f, 9f, 0.25f, 100f };
                foreach (var kv in new long[] { 0, 3 })
                {
                    var o = rt.Run(("a", new NdArray(av, 4)), ("k", NdArray.Scalar(kv)));
                    // The plain loop, in the same f32 operations.
                    var y = (float[])av.Clone();
                    long steps = 0;
                    while (Enumerable.Range(0, y.Length).Any(i => Math.Abs(y[i] * y[i] - av[i]) - 1e-5f * av[i] > 0))
                    {
                        for (int i = 0; i < y.Length; i++) y[i] = (y[i] + av[i] / y[i]) * 0.5f;
                        steps++;
                    }
                    Assert.True(steps >= 3, "Newton takes a few steps");
                    Assert.Seq(new[] { steps }, o["steps"].AsLong(), "steps");
                    Assert.Close(y.Select(v => (double)v).ToArray(), o["y"].AsFloat(), 1e-5, "y");
                    Assert.Close(av.Select(v => Math.Sqrt(v)).ToArray(), o["y"].AsFloat(), 1e-4, "sqrt");
                    Assert.Seq(new[] { kv }, o["i"].AsLong(), "count");
                    Assert.Close(av.Select(v => (double)v * (1L << (int)kv)).ToArray(), o["acc"].AsFloat(), 1e-6, "acc");
                }
            }
        }
        // A run that needs more trips than maxTrips fails.
        using (var s = new Scope())
        {
            var k = s.Input("k", DType.I64, "");
            var one = s.Constant(new long[] { 1 });
            var r = s.WhileLoop(c => c[0].Compare(CmpOp.Lt, k), c => new[] { c[0] + one },
                                new[] { s.Constant(new long[] { 0 }) }, 5);
            using (var p = s.CreateProgram(new[] { k }, ("i", r[0])))
            using (var rt = new Runtime(p))
            {
                Assert.Seq(new long[] { 5 }, rt.Run(("k", NdArray.Scalar(5)))["i"].AsLong(), "5 trips");
                Assert.Code(ShapePolyCode.ConstraintViolation, () => rt.Run(("k", NdArray.Scalar(6))));
            }
        }
    }

    public static void TestMaxLoopIterationsBoundsUntrustedLoops()
    {
        using (var s = new Scope())
        {
            s.Declare("n", 0, long.MaxValue);
            var x = s.Input("x", DType.F32, "n");
            var zero = s.Constant(new long[] { 0 });
            var one = s.Constant(new long[] { 1 });
            var oneF = s.Constant(new[] { 1f });
            // Never ends: the counter only grows.
            var forever = s.WhileLoop(c => c[1].Compare(CmpOp.Ge, zero), c => new[] { c[0] + oneF, c[1] + one },
                                      new[] { x, zero });
            var total = s.Scan((c, xi) => (new[] { c[0] + xi[0] }, new Tensor[0]),
                               new[] { s.Constant(new[] { 0f }) }, new[] { x }).Item1;
            Func<int, NdArray> ones = n => new NdArray(Enumerable.Repeat(1f, n).ToArray(), n);
            using (var opts = new RuntimeOptions { MaxLoopIterations = 100 })
            {
                Assert.Equal(100L, opts.MaxLoopIterations, "the bound");
                using (var p = s.CreateProgram(new[] { x }, ("forever", forever[0]), ("total", total[0])))
                using (var rt = new Runtime(p, opts))
                {
                    var e = Assert.Code(ShapePolyCode.ConstraintViolation, () => rt.Run(("x", ones(3))));
                    Assert.Contains(e.Message, "max_loop_iterations = 100");
                }
                // A scan of 100 steps is allowed at 100 and refused (before it starts) at 101.
                using (var q = s.CreateProgram(new[] { x }, ("total", total[0])))
                {
                    using (var rt = new Runtime(q, opts))
                        Assert.Seq(new[] { 100f }, rt.Run(("x", ones(100)))["total"].AsFloat(), "100 steps");
                    using (var rt = new Runtime(q, opts))
                    {
                        var e = Assert.Code(ShapePolyCode.ConstraintViolation, () => rt.Run(("x", ones(101))));
                        Assert.Contains(e.Message, "scan");
                    }
                    // -1 is no bound (the default); below -1 is refused and leaves the value.
                    opts.MaxLoopIterations = -1;
                    using (var rt = new Runtime(q, opts))
                        Assert.Seq(new[] { 101f }, rt.Run(("x", ones(101)))["total"].AsFloat(), "unbounded");
                }
                Assert.Code(ShapePolyCode.InvalidArgument, () => opts.MaxLoopIterations = -2);
                Assert.Equal(-1L, opts.MaxLoopIterations, "unchanged by the refused value");
            }
            using (var o = new RuntimeOptions()) Assert.Equal(-1L, o.MaxLoopIterations, "default");
        }
    }

    public static void TestCondTakesBothBranches()
    {
        using (var s = new Scope())
        {
            var x = s.Input("x", DType.F32, "n");
            var b = s.Input("b", DType.F32, "n");
            var two = s.Constant(new[] { 2f });
            var pred = x.Sum().Compare(CmpOp.Gt, s.Constant(new[] { 0f }));
            // The true branch captures the input b, the false branch nothing: the op takes the union.
            var outs = s.Cond(pred, ops => new[] { ops[0] * two + b, ops[0] }, ops => new[] { -ops[0], ops[0].Exp() }, x);
            Assert.Equal(2, outs.Length, "results count");
            using (var p = s.CreateProgram(new[] { x, b }, ("y", outs[0]), ("z", outs[1])))
            using (var rt = new Runtime(p))
            {
                var bv = new[] { 10f, 20f, 30f };
                foreach (var xv in new[] { new[] { 1f, 2f, -0.5f }, new[] { -1f, 0.5f, -3f } })
                {
                    var o = rt.Run(("x", new NdArray(xv, 3)), ("b", new NdArray(bv, 3)));
                    bool taken = xv.Sum() > 0;
                    var y = taken ? xv.Select((v, i) => (double)v * 2 + bv[i]) : xv.Select(v => -(double)v);
                    var z = taken ? xv.Select(v => (double)v) : xv.Select(v => Math.Exp(v));
                    Assert.Close(y.ToArray(), o["y"].AsFloat(), 1e-6, "y");
                    Assert.Close(z.ToArray(), o["z"].AsFloat(), 1e-6, "z");
                }
            }
        }
    }

    public static void TestCondBranchShapeMismatchAndErrors()
    {
        using (var s = new Scope())
        {
            var x = s.Input("x", DType.F32, "n");
            var pred = s.Constant(new[] { true });
            Func<Tensor[], Tensor[]> id = ops => new[] { ops[0] };
            // Sizes that differ (n and 2n) give a data-dependent size; ranks that differ are refused.
            Assert.Equal(1, s.Cond(pred, id, ops => new[] { Tensor.Concatenate(0, ops[0], ops[0]) }, x).Length,
                         "results");
            var r = Assert.Code(ShapePolyCode.ShapeMismatch,
                                () => s.Cond(pred, id, ops => new[] { ops[0].Sum(new long[] { 0 }) }, x));
            Assert.Contains(r.Message, "equal ranks");
            // A different number of results is InvalidArgument.
            var e = Assert.Code(ShapePolyCode.InvalidArgument, () => s.Cond(pred, id, ops => new Tensor[0], x));
            Assert.Contains(e.Message, "returns 1 tensors but the false branch returns 0");
            // An exception inside a branch propagates unchanged.
            Assert.Throws<InvalidOperationException>(
                () => s.Cond(pred, ops => { throw new InvalidOperationException("from the branch"); }, id, x));
            // A body that changes the carry's shape.
            Assert.Code(ShapePolyCode.ShapeMismatch,
                        () => s.WhileLoop(c => pred, c => new[] { Tensor.Concatenate(0, c[0], c[0]) }, new[] { x }));
            // The scope is still usable afterwards.
            using (var p = s.CreateProgram(new[] { x }, ("y", -x)))
                Assert.Equal(1, p.Outputs.Count, "outputs");
        }
    }

    // The fenced block right after '<!-- csharp-readme-test: NAME -->' in this binding's README.
    static string ReadmeBlock(string readme, string name)
    {
        var m = Regex.Match(readme, "<!-- csharp-readme-test: " + Regex.Escape(name) + " -->\n```[a-z]*\n(.*?)```", RegexOptions.Singleline);
        Assert.True(m.Success, "README block '" + name + "'");
        return m.Groups[1].Value;
    }

    // The README's control-flow example, compiled against ShapePoly.dll and run as written.
    public static void TestReadmeExample()
    {
        var readme = File.ReadAllText(Path.Combine(Tests.Root, "bindings", "csharp", "README.md"));
        var code = ReadmeBlock(readme, "control-flow.cs");
        var expected = ReadmeBlock(readme, "control-flow output");
        var dir = Tests.TempDir();
        try
        {
            File.WriteAllText(Path.Combine(dir, "RunningSum.cs"), code);
            File.Copy(Path.Combine(Tests.OutDir, "ShapePoly.dll"), Path.Combine(dir, "ShapePoly.dll"));
            var c = Tests.Exec("mcs", "-nologo -langversion:7.2 -warnaserror+ -r:ShapePoly.dll -out:RunningSum.exe RunningSum.cs", dir);
            Assert.Equal(0, c.Code, c.Output);
            var r = Tests.Exec("mono", "RunningSum.exe", dir);
            Assert.Equal(0, r.Code, r.Output);
            Assert.Equal(expected.Trim(), r.Output.Trim().Replace("\r", ""), "README output");
        }
        finally
        {
            Directory.Delete(dir, true);
        }
    }
}

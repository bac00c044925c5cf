// Compiled functions (issue 12): automatic dynamic shapes, stances, the delegate's error
// passed through, an exception turned into an error, and export -> save/load -> run.
using System;
using System.IO;
using System.Linq;
using ShapePoly;

public static class FunctionTests
{
    // The input at rows x cols: 0.01 * (i % 97).
    static NdArray Input(long rows, long cols)
    {
        var x = new float[rows * cols];
        for (long i = 0; i < x.Length; i++) x[i] = (float)(0.01 * (i % 97));
        return new NdArray(x, rows, cols);
    }

    // y = softmax(x, axis 1) * 2 when cols > 4 (decided with Dim.Guard), else exp(x).
    static Tensor[] RowFn(Scope scope, Tensor[] x)
    {
        if (!x[0].Shape[1].Guard(CmpOp.Gt, 4, "wide rows")) return new[] { x[0].Exp() };
        return new[] { x[0].Softmax(1) * scope.Constant(new[] { 2f }) };
    }

    static double[] Reference(long rows, long cols)
    {
        var x = (float[])Input(rows, cols).Data;
        var y = new double[x.Length];
        for (long r = 0; r < rows; r++)
        {
            double mx = double.MinValue, sum = 0;
            for (long k = 0; k < cols; k++) mx = Math.Max(mx, x[r * cols + k]);
            for (long k = 0; k < cols; k++) sum += Math.Exp(x[r * cols + k] - mx);
            for (long k = 0; k < cols; k++)
            {
                double v = x[r * cols + k];
                y[r * cols + k] = cols > 4 ? 2 * Math.Exp(v - mx) / sum : Math.Exp(v);
            }
        }
        return y;
    }

    static readonly FunctionInput[] XInput = { new FunctionInput("x", DType.F32, 2) };

    static Function RowFunction(FunctionOptions options = null)
    {
        return new Function(RowFn, XInput, new[] { "y" }, options);
    }

    // Calls f at rows x cols and checks y against the reference.
    static float[] Call(Function f, long rows, long cols)
    {
        var y = (float[])f.Call(("x", Input(rows, cols)))["y"].Data;
        Assert.Close(Reference(rows, cols), y, 1e-5, rows + "x" + cols);
        return y;
    }

    static bool HasEvent(Function f, string part) { return f.Events.Any(e => e.Contains(part)); }

    public static void TestAutomaticDynamic()
    {
        using (var f = RowFunction())
        {
            Call(f, 4, 8);
            Assert.Equal(1UL, f.TraceCount);
            Call(f, 8, 8);  // batch changed: traced again with a symbolic batch
            Assert.Equal(2UL, f.TraceCount);
            Assert.True(HasEvent(f, "input 'x' axis 0: size 8 failed guard s0 == 4 (marked dynamic now)"), string.Join("\n", f.Events));
            Assert.True(HasEvent(f, "variant 1: input 'x' axis 1: static (only one size seen)"), string.Join("\n", f.Events));
            foreach (var b in new long[] { 3, 100, 1, 17 }) Call(f, b, 8);
            Assert.Equal(2UL, f.TraceCount);  // a third size: no new trace
            Assert.Equal(4UL, f.CacheHits);
            Assert.Equal(2, f.VariantCount);
            Assert.Equal(f.EventCount, f.Events.Count);
            Assert.Equal(null, f.EventText(f.EventCount));
            Assert.Seq(new[] { "y" }, f.OutputNames);
        }
    }

    public static void TestFailOnRecompileNamesTheGuard()
    {
        using (var f = RowFunction())
        {
            Call(f, 4, 8);
            f.SetStance(Stance.FailOnRecompile);
            var e = Assert.Code(ShapePolyCode.GuardFailed, () => Call(f, 9, 8));
            foreach (var part in new[] { "FAIL_ON_RECOMPILE", "guard s0 == 4", "s0 = 9" }) Assert.Contains(e.Message, part);
            Call(f, 4, 8);  // still usable
            Assert.Equal(1UL, f.TraceCount);
        }
    }

    public static void TestMarkStaticThenDynamicOnLimit()
    {
        using (var o = new FunctionOptions { RecompileLimit = 3, Stance = Stance.DynamicOnLimit, NumThreads = 1, DuckSizing = true })
        using (var f = RowFunction(o))
        {
            f.MarkStatic("x", 0);
            foreach (var b in new long[] { 2, 3, 4, 5, 6, 50 }) Call(f, b, 8);
            Assert.Equal(4UL, f.TraceCount);
            Assert.True(HasEvent(f, "fully dynamic"), string.Join("\n", f.Events));
        }
        using (var o = new FunctionOptions { RecompileLimit = 2 })
        using (var g = RowFunction(o))
        {
            g.MarkStatic("x", 0);
            Call(g, 2, 8);
            Call(g, 3, 8);
            Assert.Contains(Assert.Code(ShapePolyCode.GuardFailed, () => Call(g, 4, 8)).Message, "recompile limit 2");
        }
    }

    public static void TestMarksAndErrors()
    {
        using (var o = new FunctionOptions { Dynamic = DynamicMode.None })
        {
            Assert.Code(ShapePolyCode.InvalidArgument, () => o.RecompileLimit = 0);
            var f = RowFunction(o);
            Assert.Code(ShapePolyCode.InvalidArgument, () => f.Export());  // nothing traced yet
            Assert.Code(ShapePolyCode.InvalidArgument, () => f.MarkDynamic("x", 2, 0, 5));
            Assert.Code(ShapePolyCode.NotFound, () => f.MarkStatic("q", 0));
            f.MarkDynamic("x", 0, 1);
            Call(f, 4, 8);
            Call(f, 8, 8);  // axis 0 marked dynamic: one variant for both
            Assert.Equal(1UL, f.TraceCount);
            Assert.Code(ShapePolyCode.NotFound, () => f.Call(("nope", Input(2, 2))));
            Assert.Code(ShapePolyCode.ShapeMismatch, () => f.Call(("x", NdArray.Zeros(DType.F32, 2, 2, 2))));
            f.Dispose();
            Assert.Throws<ObjectDisposedException>(() => Call(f, 2, 8));
        }
    }

    public static void TestDelegateErrorPassesThrough()
    {
        bool fail = true;
        using (var f = new Function((s, x) =>
        {
            if (fail) throw new ShapePolyException(ShapePolyCode.Unsupported, "the model refuses this shape");
            return RowFn(s, x);
        }, XInput, new[] { "y" }))
        {
            var e = Assert.Code(ShapePolyCode.Unsupported, () => Call(f, 2, 8));
            Assert.True(e.Message.StartsWith("the trace function failed: the model refuses this shape"), e.Message);
            fail = false;
            Call(f, 2, 8);  // usable after the error
            Assert.Equal(1UL, f.TraceCount);
        }
        using (var bad = new Function((s, x) => new[] { x[0].MatMul(x[0]) }, XInput, new[] { "y" }))
            Assert.Code(ShapePolyCode.ShapeMismatch, () => Call(bad, 2, 3));
        using (var two = new Function((s, x) => new[] { x[0], x[0] }, XInput, new[] { "y" }))
            Assert.Contains(Assert.Code(ShapePolyCode.InvalidArgument, () => Call(two, 2, 3)).Message, "returned 2 tensors for 1 outputs");
        // A tensor of another scope is refused by the library; one kept past its trace is closed.
        using (var other = new Scope())
        {
            var z = other.Input("z", DType.F32, "3");
            Tensor kept = default(Tensor);
            using (var foreign = new Function((s, x) => { kept = x[0]; return new[] { z }; }, XInput, new[] { "y" }))
                Assert.Contains(Assert.Code(ShapePolyCode.ScopeMismatch, () => Call(foreign, 2, 3)).Message, "another scope");
            Assert.Throws<ObjectDisposedException>(() => { var d = kept.DType; });
        }
    }

    public static void TestExceptionBecomesAnError()
    {
        bool throws = true;
        using (var f = new Function((s, x) =>
        {
            if (throws) throw new InvalidOperationException("boom");
            return RowFn(s, x);
        }, XInput, new[] { "y" }))
        {
            var e = Assert.Code(ShapePolyCode.Internal, () => Call(f, 2, 8));
            Assert.Contains(e.Message, "the trace delegate threw System.InvalidOperationException: boom");
            throws = false;
            Call(f, 2, 8);
            Assert.Equal(1UL, f.TraceCount);
        }
    }

    public static void TestExportSaveLoadRun()
    {
        var shapes = new[] { (2L, 3L), (2L, 9L), (5L, 4L), (5L, 5L), (1L, 30L) };
        var seen = new float[shapes.Length][];
        var path = Path.Combine(Path.GetTempPath(), "shapepoly_fn_" + Guid.NewGuid().ToString("N") + ".shpoly");
        using (var o = new FunctionOptions { Dynamic = DynamicMode.All })
        using (var f = RowFunction(o))
        {
            for (int i = 0; i < shapes.Length; i++) seen[i] = Call(f, shapes[i].Item1, shapes[i].Item2);
            Assert.Equal(2UL, f.TraceCount, string.Join("\n", f.Events));  // cols <= 4 and cols > 4
            using (var p = f.Export())
            {
                Assert.Equal(2, p.VariantCount);
                p.SaveFile(path);
            }
        }
        try
        {
            // The file runs without the delegate.
            using (var loaded = Program.LoadFile(path))
            using (var rt = new Runtime(loaded))
            {
                for (int i = 0; i < shapes.Length; i++)
                    Assert.Seq(seen[i], (float[])rt.Run(("x", Input(shapes[i].Item1, shapes[i].Item2)))["y"].Data, shapes[i].ToString());
            }
        }
        finally
        {
            File.Delete(path);
        }
    }

    // MarkUnbacked (torch._dynamo.mark_unbacked): sizes 0, 1, 3 and 8 served by one trace; two
    // unbacked axes of equal sizes get two variables (never duck-sized); a guard on an unbacked
    // axis has no hint to decide it on, so the call is Inconclusive.
    public static void TestMarkUnbackedNoHintNoSpecializationNoDuckSizing()
    {
        var seen = new System.Collections.Generic.List<(string X, string Y)>();
        var xy = new[] { new FunctionInput("x", DType.F32, 1), new FunctionInput("y", DType.F32, 1) };
        using (var f = new Function((s, v) =>
        {
            seen.Add((v[0].Shape[0].ToString(), v[1].Shape[0].ToString()));
            return new[] { v[0].Sum() + v[1].Sum() };
        }, xy, new[] { "z" }))
        {
            f.MarkUnbacked("x", 0);
            f.MarkUnbacked("y", 0);
            foreach (long n in new long[] { 0, 1, 3, 8 })  // sizes 0 and 1 included: one trace, symbolic
            {
                var ones = Enumerable.Repeat(1f, (int)n).ToArray();
                var z = (float[])f.Call(("x", new NdArray(ones, n)), ("y", new NdArray(ones, n)))["z"].Data;
                Assert.Equal(1, z.Length, "z of n=" + n);
                Assert.Equal(2f * n, z[0], "z of n=" + n);
            }
            Assert.Equal(1UL, f.TraceCount, string.Join("; ", f.Events));
            Assert.Equal(1, seen.Count);
            Assert.True(seen[0].X != seen[0].Y, "equal sizes, two variables: never duck-sized, got " + seen[0]);
        }

        using (var g = new Function((s, x) =>
        {
            if (x[0].Shape[0].Guard(CmpOp.Ge, 2, "long"))  // undecidable, no hint to guard on
                return new[] { x[0] * s.Constant(new[] { 2f }) };
            return new[] { x[0] };
        }, new[] { new FunctionInput("x", DType.F32, 1) }, new[] { "y" }))
        {
            g.MarkUnbacked("x", 0);
            Assert.Code(ShapePolyCode.Inconclusive, () => g.Call(("x", new NdArray(new[] { 1f, 1f, 1f }, 3))));
            Assert.Code(ShapePolyCode.NotFound, () => g.MarkUnbacked("nope", 0));
            Assert.Code(ShapePolyCode.InvalidArgument, () => g.MarkUnbacked("x", 1));
        }
    }

    static NdArray Ones(long n) { return new NdArray(Enumerable.Repeat(1f, (int)n).ToArray(), n); }

    // MaybeMarkDynamic (torch._dynamo.maybe_mark_dynamic): symbolic from the next trace, but a
    // delegate that specializes the axis is no error (unlike MarkDynamic).
    public static void TestMaybeMarkDynamicIsSymbolicAndMayBeSpecialized()
    {
        var x1 = new[] { new FunctionInput("x", DType.F32, 1) };
        using (var f = new Function((s, x) =>
        {
            if (x[0].Shape[0].Guard(CmpOp.Eq, 4))  // specializes the axis: allowed
                return new[] { x[0] * s.Constant(new[] { 2f }) };
            return new[] { x[0] };
        }, x1, new[] { "y" }))
        {
            f.MaybeMarkDynamic("x", 0);
            Assert.Seq(new[] { 2f, 2f, 2f, 2f }, (float[])f.Call(("x", Ones(4)))["y"].Data, "n=4");
            Assert.Seq(new[] { 1f, 1f, 1f }, (float[])f.Call(("x", Ones(3)))["y"].Data, "n=3");
        }

        using (var g = new Function((s, x) => new[] { x[0] * s.Constant(new[] { 2f }) }, x1, new[] { "y" }))
        {
            g.MaybeMarkDynamic("x", 0);
            foreach (long n in new long[] { 1, 2, 7 }) g.Call(("x", Ones(n)));
            Assert.Equal(1UL, g.TraceCount, string.Join("; ", g.Events));  // symbolic from the first trace
            Assert.Code(ShapePolyCode.NotFound, () => g.MaybeMarkDynamic("nope", 0));
        }
    }

    // Stance.ForceTrace (PyTorch's force_eager): every call traces; the variants stay as they were.
    public static void TestForceTraceStanceTracesEveryCallAndKeepsTheVariants()
    {
        int traced = 0;
        using (var f = new Function((s, x) =>
        {
            traced++;
            return new[] { x[0] + s.Constant(new[] { 1f }) };
        }, new[] { new FunctionInput("x", DType.F32, 1) }, new[] { "y" }))
        {
            f.Call(("x", Ones(2)));
            f.SetStance(Stance.ForceTrace);
            for (int i = 0; i < 3; i++)
                Assert.Seq(new[] { 2f, 2f }, (float[])f.Call(("x", Ones(2)))["y"].Data, "call " + i);
            Assert.Equal(4, traced);
            Assert.Equal(1, f.VariantCount);
            Assert.True(f.Events.Any(e => e.Contains("FORCE_TRACE")), string.Join("; ", f.Events));
            f.SetStance(Stance.Default);
            f.Call(("x", Ones(2)));
            Assert.Equal(4, traced, "the cached variant again");
        }
    }
}

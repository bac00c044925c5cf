// Tensor.ScatterAdd (the transpose of Take): traced along a negative axis with repeated int32
// indices (f32) and along axis 0 with rank-2 int64 indices (i64), saved, reloaded and run
// through TwinRuntime at several sizes against a reference computed here; its errors.
using System;
using System.Collections.Generic;
using System.Linq;
using ShapePoly;

public static class ScatterAddTests
{
    // base [outer, n, inner] plus updates [outer, idx.Length, inner] added at the rows idx names,
    // in the order of the positions.
    static float[] Scatter(float[] b, int outer, int n, int inner, int[] idx, float[] u)
    {
        var r = (float[])b.Clone();
        for (int o = 0; o < outer; o++)
            for (int j = 0; j < idx.Length; j++)
                for (int i = 0; i < inner; i++) r[(o * n + idx[j]) * inner + i] += u[(o * idx.Length + j) * inner + i];
        return r;
    }

    static long[] Scatter(long[] b, int outer, int n, int inner, int[] idx, long[] u)
    {
        var r = (long[])b.Clone();
        for (int o = 0; o < outer; o++)
            for (int j = 0; j < idx.Length; j++)
                for (int i = 0; i < inner; i++) r[(o * n + idx[j]) * inner + i] += u[(o * idx.Length + j) * inner + i];
        return r;
    }

    public static void TestScatterAddRunsReloaded()
    {
        Assert.Seq(new long[] { 2, 0, 5 }, Scatter(new long[3], 1, 3, 1, new[] { 2, 0, 2 }, new long[] { 1, 2, 4 }), "the reference");
        using (var s = new Scope())
        {
            var x = s.Input("x", DType.F32, "n, 3");
            var i = s.Input("i", DType.I32, "m");
            var u = s.Input("u", DType.F32, "n, m");
            var xl = s.Input("xl", DType.I64, "3, 2");
            var il = s.Input("il", DType.I64, "n, 2");
            var ul = s.Input("ul", DType.I64, "n, 2, 2");
            var cols = x.ScatterAdd(i, u, -1);
            var rows = xl.ScatterAdd(il, ul, 0);
            Assert.Equal("f32[n, 3]", cols.ToString());
            Assert.Equal("i64[3, 2]", rows.ToString());
            using (var p = s.CreateProgram(new[] { x, i, u, xl, il, ul }, new List<string> { "cols", "rows" },
                                           new List<Tensor> { cols, rows }))
            {
                var text = p.ToText();
                Assert.True(text.Contains("scatter_add(%0, %1, %2) axis=1"), "the listing lacks the normalized axis:\n" + text);
                using (var rt = new TwinRuntime(p))
                {
                    foreach (var nm in new[] { new[] { 2, 5 }, new[] { 1, 1 }, new[] { 4, 9 } })
                    {
                        int n = nm[0], m = nm[1];
                        var xv = Enumerable.Range(0, n * 3).Select(k => k * 0.5f - 1).ToArray();
                        var idx = Enumerable.Range(0, m).Select(j => (j * 2 + 1) % 3).ToArray();  // repeats
                        var uv = Enumerable.Range(0, n * m).Select(k => 0.25f * k + 1).ToArray();
                        var lv = Enumerable.Range(0, 6).Select(k => (long)(k - 2) << 40).ToArray();
                        var lidx = Enumerable.Range(0, n * 2).Select(k => k % 3).ToArray();
                        var ulv = Enumerable.Range(0, n * 4).Select(k => (long)k * 3 - 7).ToArray();
                        var outs = rt.Run(("x", new NdArray(xv, new long[] { n, 3 })), ("i", new NdArray(idx, new long[] { m })),
                            ("u", new NdArray(uv, new long[] { n, m })), ("xl", new NdArray(lv, new long[] { 3, 2 })),
                            ("il", new NdArray(lidx.Select(k => (long)k).ToArray(), new long[] { n, 2 })),
                            ("ul", new NdArray(ulv, new long[] { n, 2, 2 })));
                        var what = "n = " + n + ", m = " + m;
                        Assert.Seq(new long[] { n, 3 }, outs["cols"].Shape, what);
                        Assert.Seq(Scatter(xv, n, 3, 1, idx, uv), outs["cols"].AsFloat(), what);
                        Assert.Seq(Scatter(lv, 1, 3, 2, lidx, ulv), outs["rows"].AsLong(), what);
                    }
                }
            }
        }
    }

    public static void TestScatterAddErrors()
    {
        using (var s = new Scope())
        {
            var x = s.Input("x", DType.F32, "n, 3");
            var i = s.Input("i", DType.I64, "2");
            var u = s.Input("u", DType.F32, "n, 2");
            var bad = s.Input("bad", DType.F32, "n, 4");
            Assert.Contains(Assert.Code(ShapePolyCode.ShapeMismatch, () => x.ScatterAdd(i, bad, 1)).Message,
                            "axis 1 of the updates is 4, axis 0 of the indices is 2");
            var flat = s.Input("flat", DType.F32, "n");
            Assert.Contains(Assert.Code(ShapePolyCode.ShapeMismatch, () => x.ScatterAdd(i, flat, 1)).Message, "rank 1 instead of 2");
            var um = s.Input("um", DType.F32, "n, m");
            Assert.Code(ShapePolyCode.Inconclusive, () => x.ScatterAdd(i, um, 1), "m == 2 is undecided");
            Assert.Code(ShapePolyCode.DTypeMismatch, () => x.ScatterAdd(u, u, 1), "float indices");
            var b = s.Input("b", DType.Bool, "n, 3");
            var ub = s.Input("ub", DType.Bool, "n, 2");
            Assert.Code(ShapePolyCode.DTypeMismatch, () => b.ScatterAdd(i, ub, 1), "a bool base");
            Assert.Code(ShapePolyCode.InvalidArgument, () => x.ScatterAdd(i, u, 2), "axis 2");
            // An index outside [0, 3) at run time, as Take; the runtime stays usable.
            using (var p = s.CreateProgram(new[] { x, i, u }, new List<string> { "y" }, new List<Tensor> { x.ScatterAdd(i, u, 1) }))
            using (var rt = new TwinRuntime(p))
            {
                Func<long[], Dictionary<string, NdArray>> run = iv => rt.Run(("x", new NdArray(new float[3], new long[] { 1, 3 })),
                    ("i", new NdArray(iv, new long[] { 2 })), ("u", new NdArray(new[] { 1f, 2f }, new long[] { 1, 2 })));
                Assert.Contains(Assert.Code(ShapePolyCode.InvalidArgument, () => run(new long[] { 0, 3 })).Message,
                                "scatter_add: index 3 (position 1 of the indices) is outside [0, 3)");
                Assert.Seq(new[] { 0f, 0f, 3f }, run(new long[] { 2, 2 })["y"].AsFloat(), "after the error");
            }
        }
    }
}

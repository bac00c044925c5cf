// Tensor.TakeAlongAxis (np.take_along_axis, ONNX GatherElements): traced along a negative axis
// with int32 indices (f32) and along axis 0 with int64 indices (i64), negative indices among
// them, saved, reloaded and run through TwinRuntime at several sizes against a reference
// computed here; its errors at tracing and at run time.
using System;
using System.Collections.Generic;
using System.Linq;
using ShapePoly;

public static class TakeAlongAxisTests
{
    // x [outer, n, inner] gathered by idx [outer, idx.Length / (outer * inner), inner] along the
    // middle axis; a negative index counts from the end.
    static T[] Along<T>(T[] x, int outer, int n, int inner, int[] idx)
    {
        int num = outer * inner == 0 ? 0 : idx.Length / (outer * inner);
        var r = new List<T>();
        for (int o = 0; o < outer; o++)
            for (int j = 0; j < num; j++)
                for (int i = 0; i < inner; i++)
                {
                    int k = idx[(o * num + j) * inner + i];
                    r.Add(x[(o * n + (k < 0 ? k + n : k)) * inner + i]);
                }
        return r.ToArray();
    }

    public static void TestTakeAlongAxisRunsReloaded()
    {
        Assert.Seq(new long[] { 30, 10, 30 }, Along(new long[] { 10, 20, 30 }, 1, 3, 1, new[] { 2, -3, -1 }), "the reference");
        using (var s = new Scope())
        {
            var x = s.Input("x", DType.F32, "n, 3");
            var i = s.Input("i", DType.I32, "n, m");
            var xl = s.Input("xl", DType.I64, "4, n");
            var il = s.Input("il", DType.I64, "2, n");
            var cols = x.TakeAlongAxis(i, -1);
            var rows = xl.TakeAlongAxis(il, 0);
            Assert.Equal("f32[n, m]", cols.ToString());
            Assert.Equal("i64[2, n]", rows.ToString());
            using (var p = s.CreateProgram(new[] { x, i, xl, il }, new List<string> { "cols", "rows" },
                                           new List<Tensor> { cols, rows }))
            {
                var text = p.ToText();
                Assert.True(text.Contains("take_along_axis(%0, %1) axis=1"), "the listing lacks the normalized axis:\n" + text);
                using (var rt = new TwinRuntime(p))
                {
                    foreach (var nm in new[] { new[] { 2, 5 }, new[] { 1, 1 }, new[] { 4, 9 } })
                    {
                        int n = nm[0], m = nm[1];
                        var xv = Enumerable.Range(0, n * 3).Select(k => k * 0.5f - 1).ToArray();
                        var idx = Enumerable.Range(0, n * m).Select(k => k % 6 - 3).ToArray();  // [-3, 3)
                        var lv = Enumerable.Range(0, 4 * n).Select(k => (long)(k - 2) << 40).ToArray();
                        var lidx = Enumerable.Range(0, 2 * n).Select(k => k % 8 - 4).ToArray();  // [-4, 4)
                        var outs = rt.Run(("x", new NdArray(xv, new long[] { n, 3 })), ("i", new NdArray(idx, new long[] { n, m })),
                            ("xl", new NdArray(lv, new long[] { 4, n })),
                            ("il", new NdArray(lidx.Select(k => (long)k).ToArray(), new long[] { 2, n })));
                        var what = "n = " + n + ", m = " + m;
                        Assert.Seq(new long[] { n, m }, outs["cols"].Shape, what);
                        Assert.Seq(Along(xv, n, 3, 1, idx), outs["cols"].AsFloat(), what);
                        Assert.Seq(Along(lv, 1, 4, n, lidx), outs["rows"].AsLong(), what);
                    }
                }
            }
        }
    }

    public static void TestTakeAlongAxisErrors()
    {
        using (var s = new Scope())
        {
            var x = s.Input("x", DType.F32, "n, 3");
            var i = s.Input("i", DType.I64, "n, 2");
            var flat = s.Input("flat", DType.I64, "n");
            Assert.Contains(Assert.Code(ShapePolyCode.ShapeMismatch, () => x.TakeAlongAxis(flat, 1)).Message,
                            "must have the rank of the operand");
            var other = s.Input("other", DType.I64, "m, 2");
            Assert.Code(ShapePolyCode.Inconclusive, () => x.TakeAlongAxis(other, 1), "m == n is undecided");
            var fi = s.Input("fi", DType.F32, "n, 2");
            Assert.Code(ShapePolyCode.DTypeMismatch, () => x.TakeAlongAxis(fi, 1), "float indices");
            Assert.Code(ShapePolyCode.InvalidArgument, () => x.TakeAlongAxis(i, 2), "axis 2");
            // An index outside [-3, 3) at run time; the runtime stays usable.
            using (var p = s.CreateProgram(new[] { x, i }, new List<string> { "y" }, new List<Tensor> { x.TakeAlongAxis(i, 1) }))
            using (var rt = new TwinRuntime(p))
            {
                Func<long[], Dictionary<string, NdArray>> run = iv => rt.Run(("x", new NdArray(new[] { 1f, 2f, 3f }, new long[] { 1, 3 })),
                    ("i", new NdArray(iv, new long[] { 1, 2 })));
                Assert.Contains(Assert.Code(ShapePolyCode.InvalidArgument, () => run(new long[] { 0, 3 })).Message,
                                "take_along_axis: index 3 (position 1 of the indices) is outside [-3, 3) on axis 1");
                Assert.Seq(new[] { 3f, 1f }, run(new long[] { -1, 0 })["y"].AsFloat(), "after the error");
            }
        }
    }
}

// Tensor.Scatter (scatter_add's layout with a reduction: 0 replace, 1 add, 2 mul, 3 max, 4 min):
// f32 rows along axis 0 with repeating int64 indices (replace: the last repeat wins), saved,
// reloaded and run through TwinRuntime at several sizes against a position-by-position
// reference; an index out of range fails the run naming it; an unknown reduction is refused.
using System;
using System.Linq;
using ShapePoly;

public static class ScatterTests
{
    static float[] Reference(float[] x, int inner, long[] idx, float[] upd, long red)
    {
        var r = (float[])x.Clone();
        for (int j = 0; j < idx.Length; j++)
            for (int i = 0; i < inner; i++)
            {
                long at = idx[j] * inner + i;
                float d = r[at], u = upd[j * inner + i];
                r[at] = red == 0 ? u : red == 1 ? d + u : red == 2 ? d * u : red == 3 ? Math.Max(d, u) : Math.Min(d, u);
            }
        return r;
    }

    public static void TestScatterEachReductionRunsReloaded()
    {
        for (long red = 0; red < 5; red++)
        {
            using (var s = new Scope())
            {
                var x = s.Input("x", DType.F32, "n, 3");
                var i = s.Input("i", DType.I64, "m");
                var u = s.Input("u", DType.F32, "m, 3");
                var y = x.Scatter(i, u, 0, red);
                Assert.Equal("f32[n, 3]", y.ToString());
                using (var p = s.CreateProgram(new[] { x, i, u }, new System.Collections.Generic.List<string> { "y" },
                                               new System.Collections.Generic.List<Tensor> { y }))
                using (var rt = new TwinRuntime(p))
                {
                    foreach (var nm in new[] { new[] { 2, 5 }, new[] { 1, 1 }, new[] { 4, 9 } })
                    {
                        int n = nm[0], m = nm[1];
                        var xv = Enumerable.Range(0, n * 3).Select(k => (k % 5) * 0.5f - 1).ToArray();
                        var uv = Enumerable.Range(0, m * 3).Select(k => (k % 7) * 0.25f - 0.5f).ToArray();
                        var iv = Enumerable.Range(0, m).Select(k => (long)((k * 3) % n)).ToArray();
                        var outs = rt.Run(("x", new NdArray(xv, new long[] { n, 3 })), ("i", new NdArray(iv, new long[] { m })),
                                          ("u", new NdArray(uv, new long[] { m, 3 })));
                        Assert.Seq(Reference(xv, 3, iv, uv, red), outs["y"].AsFloat(), "reduction " + red + " at n = " + n + ", m = " + m);
                    }
                    var e = Assert.Code(ShapePolyCode.InvalidArgument, () => rt.Run(
                        ("x", new NdArray(new float[3], new long[] { 1, 3 })), ("i", new NdArray(new long[] { 0, 1 }, new long[] { 2 })),
                        ("u", new NdArray(new float[6], new long[] { 2, 3 }))), "an index out of range");
                    Assert.Contains(e.Message, "index 1 (position 1 of the indices) is outside [0, 1) on axis 0");
                }
            }
        }
        using (var s = new Scope())
        {
            var x = s.Input("x", DType.F32, "n, 3");
            var i = s.Input("i", DType.I64, "2");
            var u = s.Input("u", DType.F32, "2, 3");
            Assert.Contains(Assert.Code(ShapePolyCode.InvalidArgument, () => x.Scatter(i, u, 0, 7)).Message, "reduction 7 is not one of");
        }
    }
}

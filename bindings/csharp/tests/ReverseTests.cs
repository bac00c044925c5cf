// Tensor.Reverse (np.flip): traced over every dtype, saved, reloaded and run through
// TwinRuntime at several sizes (0 too) and checked against a flip computed here; its errors.
using System;
using System.Collections.Generic;
using System.Linq;
using ShapePoly;

public static class ReverseTests
{
    // np.flip of the row-major data of shape along axes (normalized).
    static T[] Flip<T>(long[] shape, T[] data, params int[] axes)
    {
        int rank = shape.Length;
        var strides = new long[rank];
        for (long i = rank - 1, st = 1; i >= 0; st *= shape[i], i--) strides[i] = st;
        var outv = new T[data.Length];
        for (long flat = 0; flat < data.Length; flat++)
        {
            long src = 0;
            for (int i = 0; i < rank; i++)
            {
                long k = flat / strides[i] % shape[i];
                if (axes.Contains(i)) k = shape[i] - 1 - k;
                src += k * strides[i];
            }
            outv[flat] = data[src];
        }
        return outv;
    }

    public static void TestReverseOfEveryDTypeRunsReloaded()
    {
        Assert.Seq(new[] { 2, 1, 0, 5, 4, 3 }, Flip(new long[] { 2, 3 }, new[] { 0, 1, 2, 3, 4, 5 }, 1), "the reference");
        // n = 0 is an ordinary size.
        using (var s = new Scope(new string[0], new[] { new VariableRange("n", 0, 100) }))
        {
            var x = s.Input("x", DType.F32, "n, 3, 2");
            var xd = s.Input("xd", DType.F64, "n");
            var xi = s.Input("xi", DType.I32, "n, 3, 2");
            var xl = s.Input("xl", DType.I64, "3, n");
            var xb = s.Input("xb", DType.Bool, "n, 3, 2");
            var sc = s.Input("s", DType.F32, "");
            // (name, input, tensor, normalized axes)
            var cases = new (string Name, string Input, Tensor Out, int[] Axes)[]
            {
                ("axis0", "x", x.Reverse(0), new[] { 0 }),
                ("last_negative", "x", x.Reverse(-1), new[] { 2 }),
                ("axes_2_0", "x", x.Reverse(2, 0), new[] { 0, 2 }),
                ("all", "x", x.Reverse(0, 1, 2), new[] { 0, 1, 2 }),
                ("copy", "x", x.Reverse(), new int[0]),
                ("copy_null", "x", x.Reverse(null), new int[0]),
                ("twice", "x", x.Reverse(1).Reverse(-2), new int[0]),
                ("f64", "xd", xd.Reverse(-1), new[] { 0 }),
                ("i32_middle", "xi", xi.Reverse(1), new[] { 1 }),
                ("i64_both", "xl", xl.Reverse(-2, -1), new[] { 0, 1 }),
                ("bool", "xb", xb.Reverse(0, -1), new[] { 0, 2 }),
                ("scalar", "s", sc.Reverse(), new int[0]),
            };
            var inputs = new Dictionary<string, Tensor> { { "x", x }, { "xd", xd }, { "xi", xi }, { "xl", xl }, { "xb", xb }, { "s", sc } };
            foreach (var c in cases)
                Assert.Equal(inputs[c.Input].ToString(), c.Out.ToString(), c.Name + ": dtype and shape do not change");
            var names = cases.Select(c => c.Name).ToList();
            using (var p = s.CreateProgram(new[] { x, xd, xi, xl, xb, sc }, names, cases.Select(c => c.Out).ToList()))
            {
                var text = p.ToText();
                // Axes are listed normalized and sorted.
                foreach (var want in new[] { "reverse(%0) axes=[0, 2]", "reverse(%0) axes=[2]", "reverse(%5) axes=[]" })
                    Assert.True(text.Contains(want), "the listing lacks " + want + ":\n" + text);
                using (var rt = new TwinRuntime(p))
                {
                    foreach (long n in new long[] { 4, 1, 0, 7 })
                    {
                        long[] x3 = { n, 3, 2 }, xn = { n }, xl3 = { 3, n };
                        var xv = Enumerable.Range(0, (int)(6 * n)).Select(i => i * 0.5f - 3).ToArray();
                        var dv = Enumerable.Range(0, (int)n).Select(i => 1.0 / (i + 1)).ToArray();
                        var iv = Enumerable.Range(0, (int)(6 * n)).Select(i => i * 7 - 20).ToArray();
                        var lv = Enumerable.Range(0, (int)(3 * n)).Select(i => (long)(i - 5) << 40).ToArray();
                        var bv = Enumerable.Range(0, (int)(6 * n)).Select(i => i % 3 == 1).ToArray();
                        var outs = rt.Run(("x", new NdArray(xv, x3)), ("xd", new NdArray(dv, xn)), ("xi", new NdArray(iv, x3)),
                            ("xl", new NdArray(lv, xl3)), ("xb", new NdArray(bv, x3)), ("s", new NdArray(new[] { -2.5f })));
                        foreach (var c in cases)
                        {
                            var y = outs[c.Name];
                            var what = c.Name + " at n = " + n;
                            switch (c.Input)
                            {
                                case "x":
                                    Assert.Seq(x3, y.Shape, what);
                                    Assert.Seq(Flip(x3, xv, c.Axes), y.AsFloat(), what);
                                    break;
                                case "xd":
                                    Assert.Seq(xn, y.Shape, what);
                                    Assert.Seq(Flip(xn, dv, c.Axes), y.AsDouble(), what);
                                    break;
                                case "xi":
                                    Assert.Seq(x3, y.Shape, what);
                                    Assert.Seq(Flip(x3, iv, c.Axes), y.AsInt(), what);
                                    break;
                                case "xl":
                                    Assert.Seq(xl3, y.Shape, what);
                                    Assert.Seq(Flip(xl3, lv, c.Axes), y.AsLong(), what);
                                    break;
                                case "xb":
                                    Assert.Seq(x3, y.Shape, what);
                                    Assert.Seq(Flip(x3, bv, c.Axes), y.AsBool(), what);
                                    break;
                                default:
                                    Assert.Equal(0, y.Rank, what);
                                    Assert.Seq(new[] { -2.5f }, y.AsFloat(), what);
                                    break;
                            }
                        }
                    }
                }
            }
        }
    }

    public static void TestReverseErrors()
    {
        using (var s = new Scope())
        {
            var x = s.Input("x", DType.F32, "n, 3, 2");
            foreach (var axes in new[] { new long[] { 0, 0 }, new long[] { 1, -2 }, new long[] { 2, 0, -1 } })
            {
                var e = Assert.Code(ShapePolyCode.InvalidArgument, () => x.Reverse(axes), string.Join(",", axes));
                Assert.Contains(e.Message, "an axis is listed twice");
            }
            Assert.Contains(Assert.Code(ShapePolyCode.InvalidArgument, () => x.Reverse(3)).Message, "axis 3 is out of range");
            Assert.Contains(Assert.Code(ShapePolyCode.InvalidArgument, () => x.Reverse(0, -4)).Message, "axis -4 is out of range");
            var sc = s.Input("s", DType.I64, "");
            Assert.Code(ShapePolyCode.InvalidArgument, () => sc.Reverse(0), "an axis of a scalar");
            // The tensor stays usable.
            Assert.Equal("f32[n, 3, 2]", x.Reverse(1).ToString());
        }
    }
}

// The neural-network building blocks of the C API (conv, pools, activations, depth_to_space),
// run through the runtime and checked against values computed by hand.
using System;
using System.Collections.Generic;
using System.Linq;
using ShapePoly;

public static class NnOpTests
{
    static NdArray Run1(Scope s, Tensor x, Tensor output, NdArray xv)
    {
        using (var p = s.CreateProgram(new[] { x }, ("out", output)))
        using (var rt = new TwinRuntime(p))
            return rt.Run(new Dictionary<string, NdArray> { { "x", xv } })["out"];
    }

    static float[] Ones(int n) { return Enumerable.Repeat(1f, n).ToArray(); }

    public static void TestConvWithSymbolicBatch()
    {
        using (var s = new Scope())
        {
            var x = s.Input("x", DType.F32, "batch, 2, 5, 5");
            var w = s.Constant(Ones(3 * 2 * 3 * 3), 3, 2, 3, 3);
            var y = x.Conv(w, strides: new long[] { 2, 2 }, pads: new long[] { 1, 1, 1, 1 });
            Assert.Equal("f32[batch, 3, 3, 3]", y.ToString());
            var out_ = Run1(s, x, y, new NdArray(Ones(2 * 2 * 5 * 5), 2, 2, 5, 5));
            Assert.Seq(new long[] { 2, 3, 3, 3 }, out_.Shape);
            var v = out_.AsFloat();
            // A window at output (1, 1) covers input rows and columns 1..3: 9 ones in each of
            // 2 channels; at (0, 0) the padding leaves rows and columns 0..1: 4 ones each.
            Assert.Equal(18f, v[4], "centre of batch 0, channel 0");
            Assert.Equal(8f, v[0], "corner of batch 0, channel 0");
            Assert.Equal(8f, v[v.Length - 1], "last corner of batch 1, channel 2");
            // With a bias [O] added to every position.
            var b = s.Constant(new float[] { 1, 2, 3 }, 3);
            var yb = Run1(s, x, x.Conv(w, b, new long[] { 2, 2 }, pads: new long[] { 1, 1, 1, 1 }), new NdArray(Ones(50), 1, 2, 5, 5));
            Assert.Equal(18f + 3f, yb.AsFloat()[2 * 9 + 4], "centre of channel 2 plus its bias");
        }
    }

    public static void TestConvErrors()
    {
        using (var s = new Scope())
        {
            var x = s.Input("x", DType.F32, "batch, 2, 5, 5");
            var w = s.Constant(Ones(3 * 2 * 3 * 3), 3, 2, 3, 3);
            // 4 groups do not divide the 2 input channels (nor the 3 output channels).
            var e = Assert.Throws<ShapePolyException>(() => x.Conv(w, groups: 4));
            Assert.Contains(e.Message, "groups");
            var e0 = Assert.Throws<ShapePolyException>(() => x.Conv(w, groups: 0));
            Assert.Contains(e0.Message, "groups");
            var ae = Assert.Throws<ArgumentException>(() => x.Conv(w, pads: new long[] { 1, 1 }));
            Assert.Contains(ae.Message, "pads has 2 entries, expected 4");
            var v = s.Input("v", DType.F32, "5");
            Assert.Contains(Assert.Throws<ArgumentException>(() => v.Conv(w)).Message, "x has rank 1");
        }
    }

    public static void TestConvTranspose()
    {
        using (var s = new Scope())
        {
            var x = s.Input("x", DType.F32, "n, 1, 3");
            var w = s.Constant(Ones(2 * 2), 1, 2, 2);
            var y = x.ConvTranspose(w, strides: new long[] { 2 });
            Assert.Equal("f32[n, 2, 6]", y.ToString());
            var v = Run1(s, x, y, new NdArray(new float[] { 1, 2, 3 }, 1, 1, 3)).AsFloat();
            Assert.Seq(new float[] { 1, 1, 2, 2, 3, 3, 1, 1, 2, 2, 3, 3 }, v);
        }
    }

    public static void TestPools()
    {
        using (var s = new Scope())
        {
            var x = s.Input("x", DType.F32, "n, 1, 4, 4");
            var xv = new NdArray(Enumerable.Range(0, 16).Select(i => (float)i).ToArray(), 1, 1, 4, 4);
            var mp = x.MaxPool(new long[] { 2, 2 }, strides: new long[] { 2, 2 });
            Assert.Equal("f32[n, 1, 2, 2]", mp.ToString());
            Assert.Seq(new float[] { 5, 7, 13, 15 }, Run1(s, x, mp, xv).AsFloat());
            var ap = x.AvgPool(new long[] { 2, 2 }, strides: new long[] { 2, 2 });
            Assert.Equal("f32[n, 1, 2, 2]", ap.ToString());
            Assert.Seq(new float[] { 2.5f, 4.5f, 10.5f, 12.5f }, Run1(s, x, ap, xv).AsFloat());
            // A 3x3 window with pads 1 at the corner sees 4 inputs (0, 1, 4, 5), or 9 counting pads.
            var pads = new long[] { 1, 1, 1, 1 };
            Assert.Equal(2.5f, Run1(s, x, x.AvgPool(new long[] { 3, 3 }, pads: pads), xv).AsFloat()[0], "avg without pads");
            Assert.Equal(10f / 9, Run1(s, x, x.AvgPool(new long[] { 3, 3 }, pads: pads, countIncludePad: true), xv).AsFloat()[0],
                "avg counting pads");
            Assert.Equal("f32[n, 1, 2, 2]", x.MaxPool(new long[] { 3, 3 }, strides: new long[] { 2, 2 }, autoPad: AutoPad.SameUpper).ToString());
            Assert.Seq(new float[] { 15 }, Run1(s, x, x.GlobalMaxPool(), xv).AsFloat());
            Assert.Seq(new float[] { 7.5f }, Run1(s, x, x.GlobalAvgPool(), xv).AsFloat());
            // ReduceWindow: a sum over windows of 2 along the last axis only.
            var rw = x.ReduceWindow(ReduceOp.Sum, new long[] { 1, 1, 1, 2 }, strides: new long[] { 1, 1, 1, 2 });
            Assert.Seq(new float[] { 1, 5, 9, 13, 17, 21, 25, 29 }, Run1(s, x, rw, xv).AsFloat());
            Assert.Contains(Assert.Throws<ArgumentException>(() => x.MaxPool(new long[] { 2, 2 }, strides: new long[] { 2 })).Message,
                "strides has 1 entries, expected 2");
            Assert.Throws<ShapePolyException>(() => x.MaxPool(new long[] { 0, 2 }));
        }
    }

    public static void TestActivations()
    {
        using (var s = new Scope())
        {
            var x = s.Input("x", DType.F32, "n");
            var xv = new NdArray(new float[] { -2, 0, 3 }, 3);
            Assert.Close(new[] { -0.2, 0, 3 }, Run1(s, x, x.LeakyRelu(0.1), xv).AsFloat(), 1e-6, "leaky_relu");
            Assert.Close(new[] { Math.Exp(-2) - 1, 0, 3 }, Run1(s, x, x.Elu(), xv).AsFloat(), 1e-6, "elu");
            Assert.Close(new[] { -1, 0, 2.5 }, Run1(s, x, x.Clip(-1, 2.5), xv).AsFloat(), 0, "clip");
            Assert.Close(new[] { 0.1, 0.5, 1 }, Run1(s, x, x.HardSigmoid(), xv).AsFloat(), 1e-6, "hard_sigmoid");
            Assert.Close(new[] { -2.0 / 3, 0, 0.75 }, Run1(s, x, x.Softsign(), xv).AsFloat(), 1e-6, "softsign");
            Assert.Close(new[] { Math.Log(1 + Math.Exp(-2)), Math.Log(2), Math.Log(1 + Math.Exp(3)) },
                Run1(s, x, x.Softplus(), xv).AsFloat(), 1e-6, "softplus");
            var lse = Math.Log(Math.Exp(-2) + 1 + Math.Exp(3));
            Assert.Close(new[] { -2 - lse, -lse, 3 - lse }, Run1(s, x, x.LogSoftmax(0), xv).AsFloat(), 1e-5, "log_softmax");
            var slope = s.Constant(new float[] { 0.5f }, 1);
            Assert.Close(new[] { -1.0, 0, 3 }, Run1(s, x, x.PRelu(slope), xv).AsFloat(), 0, "prelu");
            Assert.Equal("f32[n]", x.Selu().ToString());
            Assert.Code(ShapePolyCode.DTypeMismatch, () => s.Input("i", DType.I32, "n").LeakyRelu(0.1));
        }
    }

    public static void TestNormalizationsAndLayout()
    {
        using (var s = new Scope())
        {
            var x = s.Input("x", DType.F32, "n, 8, h, w");
            Assert.Equal("f32[n, 2, 2*h, 2*w]", x.DepthToSpace(2).ToString());
            Assert.Equal("f32[n, 2, 2*h, 2*w]", x.DepthToSpace(2, DepthToSpaceMode.Crd).ToString());
            Assert.Throws<ShapePolyException>(() => x.DepthToSpace(3));
            var c = s.Input("c", DType.F32, "n, 2, 4, 4");
            Assert.Equal("f32[n, 8, 2, 2]", c.SpaceToDepth(2).ToString());
            var p = s.Constant(new float[] { 1, 1 }, 2);
            var z = s.Constant(new float[] { 0, 0 }, 2);
            Assert.Equal("f32[n, 2, 4, 4]", c.BatchNorm(p, z, z, p, 0).ToString());
            Assert.Equal("f32[n, 2, 4, 4]", c.Lrn(3).ToString());
            var v = s.Input("v", DType.F32, "L");
            var r = v.Pad(new[] { s.Constant(2) }, new[] { s.Constant(1) }, PadMode.Reflect);
            Assert.Equal("f32[L + 3]", r.ToString());
            using (var prog = s.CreateProgram(new[] { v }, ("out", r)))
            using (var rt = new TwinRuntime(prog))
            {
                var o = rt.Run(new Dictionary<string, NdArray> { { "v", new NdArray(new float[] { 1, 2, 3 }, 3) } })["out"];
                Assert.Seq(new float[] { 3, 2, 1, 2, 3, 2 }, o.AsFloat());
            }
        }
    }
}

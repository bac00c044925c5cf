// Parameters, input and output roles, defaults, and Jvp/Vjp/Grad: the gradient of a small loss
// with a parameter, saved, reloaded and run through TwinRuntime with and without the parameter
// given, against values computed here by hand; positional runs of a program with defaults.
using System;
using System.Collections.Generic;
using System.Linq;
using ShapePoly;

public static class AutodiffTests
{
    static readonly float[] W = { 0.5f, -1.0f, 2.0f, 0.25f };

    // loss = sum(tanh(x @ w)), x of shape (batch, 2), w a 2x2 parameter.
    static Program Loss()
    {
        using (var s = new Scope())
        {
            var x = s.Input("x", DType.F32, "batch, 2");
            var w = s.Parameter("w", W, 2, 2);
            var l = x.MatMul(w).Tanh().Sum();
            return s.CreateProgram(new[] { x, w }, new List<string> { "loss" }, new List<Tensor> { l });
        }
    }

    // (loss, dloss/dx, dloss/dw) by hand, in double: d tanh(h) = 1 - tanh(h)^2.
    static (double L, double[] Gx, double[] Gw) ByHand(float[] x, float[] w)
    {
        int rows = x.Length / 2;
        double l = 0;
        var gx = new double[x.Length];
        var gw = new double[4];
        for (int r = 0; r < rows; r++)
            for (int c = 0; c < 2; c++)
            {
                double t = Math.Tanh((double)x[r * 2] * w[c] + (double)x[r * 2 + 1] * w[2 + c]);
                l += t;
                double d = 1 - t * t;
                for (int k = 0; k < 2; k++)
                {
                    gw[k * 2 + c] += x[r * 2 + k] * d;
                    gx[r * 2 + k] += w[k * 2 + c] * d;
                }
            }
        return (l, gx, gw);
    }

    public static void TestParameterRolesAndDefault()
    {
        using (var p = Loss())
        {
            var ins = p.Inputs;
            Assert.Equal(InputRole.Data, ins[0].Role);
            Assert.True(!ins[0].HasDefault, "x has no default");
            Assert.Equal("w", ins[1].Name);
            Assert.Equal(InputRole.Parameter, ins[1].Role);
            Assert.Equal("(2, 2)", ins[1].Shape);
            Assert.True(ins[1].HasDefault, "w has a default");
            Assert.True(p.InputHasDefault(1) && !p.InputHasDefault(7) && !p.InputHasDefault(-1), "InputHasDefault");
            var w = p.InputDefault(1);
            Assert.Seq(new long[] { 2, 2 }, w.Shape);
            Assert.Seq(W, w.AsFloat());
            Assert.Seq(W, p.InputDefault("w").AsFloat());
            Assert.Contains(Assert.Code(ShapePolyCode.InvalidArgument, () => p.InputDefault(0)).Message, "'x' has no default");
            Assert.Code(ShapePolyCode.InvalidArgument, () => p.InputDefault(-1));
            Assert.Contains(Assert.Code(ShapePolyCode.NotFound, () => p.InputDefault("nope")).Message, "its inputs: x, w");
            Assert.Equal(OutputRole.Primal, p.Outputs[0].Role);
            using (var q = TwinRuntime.Reload(p)) Assert.Seq(W, q.InputDefault(1).AsFloat(), "the default after reload");
        }
        using (var s = new Scope())
        {
            Assert.Equal(DType.F64, s.Parameter("b", new[] { 2.5 }).DType);
            Assert.Equal(DType.I64, s.Parameter("n", new NdArray(new long[] { 1, 2, 3 }, 3)).DType);
            Assert.Code(ShapePolyCode.InvalidArgument, () => s.Parameter("w.grad", new[] { 1f }));
            Assert.Code(ShapePolyCode.InvalidArgument, () => s.Parameter("v", new[] { 1f, 2f }, 3));
            Assert.Throws<ArgumentNullException>(() => s.Parameter("v", (NdArray)null));
        }
    }

    public static void TestGradRunsWithAndWithoutTheParameter()
    {
        using (var p = Loss())
        using (var g = p.Grad("loss", "x", "w"))
        {
            Assert.Seq(new[] { "x", "w", "loss.cotangent" }, g.Inputs.Select(i => i.Name));
            Assert.Equal(InputRole.Cotangent, g.Inputs[2].Role);
            Assert.True(g.Inputs[2].HasDefault, "grad's cotangent has a default");
            Assert.Seq(new[] { 1f }, g.InputDefault(2).AsFloat());
            Assert.Seq(new[] { "loss", "x.grad", "w.grad" }, g.Outputs.Select(o => o.Name));
            Assert.Seq(new[] { OutputRole.Primal, OutputRole.Grad, OutputRole.Grad }, g.Outputs.Select(o => o.Role));
            var w2 = W.Select(v => v * -0.5f).ToArray();
            using (var rt = new TwinRuntime(g))
            {
                foreach (int rows in new[] { 3, 1, 5 })
                {
                    var xv = Enumerable.Range(0, rows * 2).Select(k => (k - 2.5f) * 0.4f).ToArray();
                    var x = new NdArray(xv, rows, 2);
                    // w left out: its default.
                    var o = rt.Run(new Dictionary<string, NdArray> { { "x", x } });
                    var h = ByHand(xv, W);
                    Assert.Close(new[] { h.L }, o["loss"].AsFloat(), 1e-5, "loss");
                    Assert.Close(h.Gx, o["x.grad"].AsFloat(), 1e-5, "x.grad");
                    Assert.Close(h.Gw, o["w.grad"].AsFloat(), 1e-5, "w.grad");
                    // w given by name replaces the default.
                    o = rt.Run(new Dictionary<string, NdArray> { { "w", new NdArray(w2, 2, 2) }, { "x", x } });
                    h = ByHand(xv, w2);
                    Assert.Close(new[] { h.L }, o["loss"].AsFloat(), 1e-5, "loss (w given)");
                    Assert.Close(h.Gx, o["x.grad"].AsFloat(), 1e-5, "x.grad (w given)");
                    Assert.Close(h.Gw, o["w.grad"].AsFloat(), 1e-5, "w.grad (w given)");
                    // Naming the cotangent scales the gradient.
                    o = rt.Run(new Dictionary<string, NdArray> { { "x", x }, { "loss.cotangent", new NdArray(new[] { 3f }) } });
                    Assert.Close(ByHand(xv, W).Gx.Select(v => 3 * v).ToArray(), o["x.grad"].AsFloat(), 1e-5, "x.grad scaled");
                }
                var x1 = new NdArray(new[] { 1f, 2f }, 1, 2);
                Assert.Code(ShapePolyCode.ShapeMismatch, () => rt.Run(new Dictionary<string, NdArray> { { "x", x1 }, { "w", new NdArray(W, 4) } }));
                Assert.Contains(Assert.Code(ShapePolyCode.InvalidArgument, () => rt.Run(new Dictionary<string, NdArray>())).Message,
                    "input 'x' is missing");
                // Positional binding is refused for a program with defaults, with the library's words.
                var e = Assert.Code(ShapePolyCode.InvalidArgument, () => rt.RunPositional(x1, new NdArray(W, 2, 2), new NdArray(new[] { 1f })));
                Assert.Contains(e.Message, "bind every input by name");
                Assert.Contains(e.Message, "'w', 'loss.cotangent'");
            }
        }
    }

    public static void TestOnlyDefaultedInputsLeftOut()
    {
        // Every input has a default: a run with no inputs uses them all.
        using (var s = new Scope())
        {
            var w = s.Parameter("w", new[] { 1.0, -2.0, 0.5 }, 3);
            using (var p = s.CreateProgram(new[] { w }, new List<string> { "l" }, new List<Tensor> { (w * w).Sum() }))
            using (var g = p.Grad("l", "w"))
            using (var rt = new TwinRuntime(g))
            {
                var o = rt.Run(new Dictionary<string, NdArray>());
                Assert.Seq(new[] { 5.25 }, o["l"].AsDouble());
                Assert.Seq(new[] { 2.0, -4.0, 1.0 }, o["w.grad"].AsDouble());
            }
        }
    }

    public static void TestJvpVjpAndComposition()
    {
        using (var p0 = Loss())
        using (var p = TwinRuntime.Reload(p0))
        {
            var xv = new[] { 1f, 2f, -1f, 0.5f, 0f, 3f };
            var t = new[] { 1f, 0f, -2f, 0.5f };
            var x = new NdArray(xv, 3, 2);
            var gw = ByHand(xv, W).Gw;
            using (var j = p.Jvp("w"))
            {
                Assert.Equal("w.tangent", j.Inputs[2].Name);
                Assert.Equal(InputRole.Tangent, j.Inputs[2].Role);
                Assert.True(!j.Inputs[2].HasDefault, "a tangent has no default");
                Assert.Equal("loss.tangent", j.Outputs[1].Name);
                Assert.Equal(OutputRole.Tangent, j.Outputs[1].Role);
                using (var rt = new TwinRuntime(j))
                {
                    var o = rt.Run(new Dictionary<string, NdArray> { { "x", x }, { "w.tangent", new NdArray(t, 2, 2) } });
                    double dot = 0;
                    for (int i = 0; i < 4; i++) dot += gw[i] * t[i];
                    Assert.Close(new[] { dot }, o["loss.tangent"].AsFloat(), 1e-5, "loss.tangent");
                    Assert.Contains(Assert.Code(ShapePolyCode.InvalidArgument,
                        () => rt.Run(new Dictionary<string, NdArray> { { "x", x } })).Message, "'w.tangent' (the tangent of 'w')");
                }
            }
            using (var v = p.Vjp(new[] { "loss" }, new[] { "w" }))
            {
                Assert.Equal("loss.cotangent", v.Inputs[2].Name);
                Assert.Equal(InputRole.Cotangent, v.Inputs[2].Role);
                Assert.True(!v.InputHasDefault(2), "only Grad gives the cotangent a default");
                Assert.Equal(OutputRole.Grad, v.Outputs[1].Role);
                using (var rt = new TwinRuntime(v))
                {
                    var o = rt.Run(new Dictionary<string, NdArray> { { "x", x }, { "loss.cotangent", new NdArray(new[] { 2f }) } });
                    Assert.Close(gw.Select(g => 2 * g).ToArray(), o["w.grad"].AsFloat(), 1e-5, "vjp w.grad");
                }
            }
            using (var g = p.Grad("loss", "x"))
            using (var hvp = g.Jvp("x"))
            {
                Assert.Equal(InputRole.Tangent, hvp.Inputs[3].Role);
                Assert.Equal("x.grad.tangent", hvp.Outputs[3].Name);
                Assert.Equal(OutputRole.Tangent, hvp.Outputs[3].Role);
            }
        }
    }

    // Tangents may have defaults (issue 38 item 12): x.tangent defaults to 1 over x's symbolic
    // shape and w.tangent to 0.5; a run that leaves them out equals a run that gives those
    // arrays, after a reload too.
    public static void TestJvpDefaultTangents()
    {
        using (var p = Loss())
        using (var j = p.JvpWithDefaultTangents(new[] { "x", "w" }, new[] { 1.0, 0.5 }))
        {
            Assert.True(j.Inputs[2].HasDefault && j.Inputs[3].HasDefault, "the tangents have defaults");
            Assert.Equal(1.0, j.InputDefaultFill(2));
            Assert.Equal(0.5, j.InputDefaultFill(3));
            Assert.Contains(Assert.Code(ShapePolyCode.InvalidArgument, () => j.InputDefaultFill(1)).Message,
                "input 'w' has no fill default");
            Assert.Contains(Assert.Code(ShapePolyCode.InvalidArgument, () => j.InputDefault(2)).Message,
                "over the symbolic shape (batch, 2)");
            var x = new NdArray(new[] { 1f, 2f, -1f, 0.5f, 0f, 3f }, 3, 2);
            var ones = new NdArray(new[] { 1f, 1f, 1f, 1f, 1f, 1f }, 3, 2);
            var halves = new NdArray(new[] { 0.5f, 0.5f, 0.5f, 0.5f }, 2, 2);
            using (var loaded = TwinRuntime.Reload(j))
                foreach (var prog in new[] { j, loaded })
                    using (var rt = new TwinRuntime(prog))
                    {
                        var byDefault = rt.Run(new Dictionary<string, NdArray> { { "x", x } });
                        var given = rt.Run(new Dictionary<string, NdArray> {
                            { "x", x }, { "x.tangent", ones }, { "w.tangent", halves } });
                        Assert.Seq(given["loss.tangent"].AsFloat(), byDefault["loss.tangent"].AsFloat());
                    }
            Assert.Code(ShapePolyCode.InvalidArgument, () => p.JvpWithDefaultTangents(new[] { "x", "w" }, new[] { 1.0 }));
            Assert.Contains(Assert.Code(ShapePolyCode.InvalidArgument,
                () => p.JvpWithDefaultTangents(new[] { "x" }, new[] { double.NaN })).Message, "not a finite f32 value");
        }
    }

    public static void TestTransformationErrors()
    {
        using (var p = Loss())
        {
            Assert.Contains(Assert.Code(ShapePolyCode.NotFound, () => p.Grad("loss", "nope")).Message, "no input 'nope' (the inputs: x, w)");
            Assert.Code(ShapePolyCode.NotFound, () => p.Jvp("nope"));
            Assert.Code(ShapePolyCode.NotFound, () => p.Vjp(new[] { "nope" }, new[] { "w" }));
            Assert.Code(ShapePolyCode.NotFound, () => p.Grad("nope", "w"));
            Assert.Code(ShapePolyCode.InvalidArgument, () => p.Grad("loss", "w", "w"));
            Assert.Code(ShapePolyCode.InvalidArgument, () => p.Jvp(new string[] { null }));
            Assert.Throws<ArgumentNullException>(() => p.Grad(null, "w"));
            Assert.Throws<ArgumentNullException>(() => p.Vjp(null, new[] { "w" }));
        }
        using (var s = new Scope())
        {
            var x = s.Input("x", DType.F32, "n");
            var i = s.Input("i", DType.I32, "n");
            using (var q = s.CreateProgram(new[] { x, i }, new List<string> { "y", "j" }, new List<Tensor> { x.Exp(), i }))
            {
                Assert.Code(ShapePolyCode.ShapeMismatch, () => q.Grad("y", "x"));
                Assert.Code(ShapePolyCode.DTypeMismatch, () => q.Jvp("i"));
            }
        }
    }
}

// Batching (Program.Vmap, shp_program_vmap): the contract MLP's loss for one example (its
// weights as parameters) batched over x and labels, against the unbatched program run on each
// example; per-example gradients (Vmap of Grad) against Grad per example; Vmap of a Vmap; the
// errors, after which the program stays usable; and the save/load round trip.
using System;
using System.Collections.Generic;
using System.IO;
using System.Linq;
using ShapePoly;

public static class VmapTests
{
    // The batch sizes every comparison runs at (0: an empty batch runs).
    static readonly long[] Batches = { 0, 1, 7, 64 };

    // The contract MLP's weights: name, seed of the constant, shape.
    static readonly (string Name, int Seed, long[] Shape)[] Weights =
    {
        ("W1", 1, new long[] { 64, 32 }), ("b1", 2, new long[] { 32 }),
        ("W2", 3, new long[] { 32, 32 }), ("b2", 4, new long[] { 32 }),
        ("W3", 5, new long[] { 32, 10 }), ("b3", 6, new long[] { 10 }),
    };

    static readonly string[] GradOutputs = { "loss", "W1.grad", "b1.grad", "W2.grad", "b2.grad", "W3.grad", "b3.grad" };

    // The loss of one example: x (64), one-hot labels (10), the six weights as parameters;
    // outputs loss (a scalar, the cross-entropy) and probs (10).
    static Program ExampleLoss()
    {
        using (var s = new Scope())
        {
            var x = s.Input("x", DType.F32, "64");
            var labels = s.Input("labels", DType.F32, "10");
            var inputs = new List<Tensor> { x, labels };
            foreach (var w in Weights)
                inputs.Add(s.Parameter(w.Name, MlpContract.ConstantData(w.Seed, w.Shape.Aggregate(1L, (a, b) => a * b)), w.Shape));
            var zero = s.Constant(new float[] { 0.0f });
            var h1 = x.MatMul(inputs[2]).Add(inputs[3]).Maximum(zero);
            var h2 = h1.MatMul(inputs[4]).Add(inputs[5]).Maximum(zero);
            var probs = h2.MatMul(inputs[6]).Add(inputs[7]).Softmax(0);
            var loss = labels.Mul(probs.Log()).Sum().Neg();
            return s.CreateProgram(inputs, ("loss", loss), ("probs", probs));
        }
    }

    static Program Grad(Program loss) { return loss.Grad("loss", Weights.Select(w => w.Name).ToArray()); }

    // x and labels batched on axis 0, every other input (the weights, a cotangent) shared.
    static long[] DataAxes(Program p)
    {
        return p.Inputs.Select(i => i.Name == "x" || i.Name == "labels" ? 0L : -1L).ToArray();
    }

    // Runs a program batched on x and labels (batch axes first, of the given sizes).
    static Dictionary<string, NdArray> RunBatch(Func<IDictionary<string, NdArray>, Dictionary<string, NdArray>> run, params long[] sizes)
    {
        long n = sizes.Aggregate(1L, (a, b) => a * b);
        return run(new Dictionary<string, NdArray>
        {
            { "x", new NdArray(MlpContract.InputData(n), sizes.Concat(new long[] { 64 }).ToArray()) },
            { "labels", new NdArray(MlpContract.LabelsData(n), sizes.Concat(new long[] { 10 }).ToArray()) },
        });
    }

    // Runs the unbatched program on example e of the data of a batch.
    static Dictionary<string, NdArray> RunExample(Runtime rt, long batch, long e)
    {
        var x = MlpContract.InputData(batch).Skip((int)(e * 64)).Take(64).ToArray();
        var labels = MlpContract.LabelsData(batch).Skip((int)(e * 10)).Take(10).ToArray();
        return rt.Run(("x", new NdArray(x, 64)), ("labels", new NdArray(labels, 10)));
    }

    // Element e of the batched got (batchAxes leading batch axes) against the unbatched want.
    static void SameElement(string what, NdArray got, int batchAxes, long e, NdArray want)
    {
        Assert.Seq(want.Shape, got.Shape.Skip(batchAxes), what + " shape");
        var g = got.AsFloat();
        var w = want.AsFloat();
        long n = w.Length;
        for (long k = 0; k < n; k++)
            if (!(Math.Abs(g[e * n + k] - w[k]) <= 1e-6 * Math.Max(1.0, Math.Abs(w[k]))))
                throw new Exception(what + ": element " + e + " entry " + k + ": batched " + g[e * n + k] + ", alone " + w[k]);
    }

    public static void TestVmapOfTheMlpLossMatchesEachExample()
    {
        using (var p = ExampleLoss())
        using (var v = p.Vmap(DataAxes(p)))
        using (var byName = p.VmapByName(new Dictionary<string, long> { { "x", 0 }, { "labels", 0 } }))
        using (var rt = new TwinRuntime(v))
        using (var one = new Runtime(p))
        {
            var ins = v.Inputs;
            Assert.Equal("(vmap0, 64)", ins[0].Shape);
            Assert.Equal("(vmap0, 10)", ins[1].Shape);
            Assert.Equal("W1", ins[2].Name);
            Assert.Equal("(64, 32)", ins[2].Shape, "the weights are shared");
            Assert.Equal(InputRole.Parameter, ins[2].Role);
            Assert.True(ins[2].HasDefault, "a parameter keeps its default");
            Assert.Equal("(vmap0,)", v.Outputs[0].Shape);
            Assert.Equal("(vmap0, 10)", v.Outputs[1].Shape);
            Assert.Seq(v.Serialize(), byName.Serialize(), "VmapByName and Vmap");
            foreach (var b in Batches)
            {
                var got = RunBatch(rt.Run, b);
                Assert.Seq(new[] { b }, got["loss"].Shape);
                Assert.Seq(new[] { b, 10 }, got["probs"].Shape);
                for (long e = 0; e < b; e++)
                {
                    var want = RunExample(one, b, e);
                    SameElement("loss", got["loss"], 1, e, want["loss"]);
                    SameElement("probs", got["probs"], 1, e, want["probs"]);
                }
            }

            // out_axes: probs' batch axis last, under a given name.
            using (var last = p.Vmap(DataAxes(p), new long[] { 0, 1 }, "n"))
            using (var lrt = new TwinRuntime(last))
            {
                Assert.Equal("(10, n)", last.Outputs[1].Shape);
                var a = RunBatch(lrt.Run, 7)["probs"].AsFloat();
                var f = RunBatch(rt.Run, 7)["probs"].AsFloat();
                for (int e = 0; e < 7; e++)
                    for (int j = 0; j < 10; j++)
                        Assert.Equal(f[e * 10 + j], a[j * 7 + e], "probs[" + e + "][" + j + "]");
            }
        }
    }

    public static void TestVmapPerExampleGradients()
    {
        using (var loss = ExampleLoss())
        using (var g = Grad(loss))
        {
            var axes = DataAxes(g);
            Assert.Seq(new long[] { 0, 0, -1, -1, -1, -1, -1, -1, -1 }, axes);
            Assert.Equal("loss.cotangent", g.Inputs[8].Name);
            using (var vg = g.Vmap(axes))
            using (var rt = new TwinRuntime(vg))
            using (var one = new Runtime(g))
            {
                Assert.Equal("W1.grad", vg.Outputs[1].Name);
                Assert.Equal("(vmap0, 64, 32)", vg.Outputs[1].Shape);
                foreach (var b in Batches)
                {
                    var got = RunBatch(rt.Run, b);
                    Assert.Seq(new[] { b, 64, 32 }, got["W1.grad"].Shape);
                    for (long e = 0; e < b; e++)
                    {
                        var want = RunExample(one, b, e);
                        foreach (var name in GradOutputs) SameElement(name, got[name], 1, e, want[name]);
                    }
                }
            }
        }
    }

    public static void TestVmapOfVmap()
    {
        using (var p = ExampleLoss())
        using (var v1 = p.Vmap(DataAxes(p)))
        using (var v2 = v1.Vmap(DataAxes(v1).Select(a => a == 0 ? 1L : a).ToArray(), new long[] { 1, 1 }))
        using (var outer = v1.Vmap(DataAxes(v1)))
        using (var rt = new TwinRuntime(v2))
        using (var one = new Runtime(p))
        {
            // No name needed: vmap0 is taken, so the second batch variable is vmap1.
            Assert.Equal("(vmap0, vmap1, 64)", v2.Inputs[0].Shape);
            Assert.Equal("(vmap0, vmap1, 10)", v2.Inputs[1].Shape);
            Assert.Equal("(vmap0, vmap1)", v2.Outputs[0].Shape);
            Assert.Equal("(vmap0, vmap1, 10)", v2.Outputs[1].Shape);
            Assert.Equal("(vmap1, vmap0, 64)", outer.Inputs[0].Shape, "the defaults put the new axis first");
            var got = RunBatch(rt.Run, 3, 5);
            for (long e = 0; e < 15; e++)
            {
                var want = RunExample(one, 15, e);
                SameElement("loss", got["loss"], 2, e, want["loss"]);
                SameElement("probs", got["probs"], 2, e, want["probs"]);
            }
        }
    }

    public static void TestVmapErrors()
    {
        using (var p = ExampleLoss())
        {
            var axes = DataAxes(p);
            Func<int, long, long[]> with = (i, a) => { var c = (long[])axes.Clone(); c[i] = a; return c; };
            Action<ShapePolyCode, Func<Program>, string[]> fails = (code, f, parts) =>
            {
                var e = Assert.Code(code, () => f().Dispose());
                foreach (var part in parts) Assert.Contains(e.Message, part);
            };
            fails(ShapePolyCode.InvalidArgument, () => p.Vmap(new long[] { 0, 0 }), new[] { "2 in_axes for a program with 8 inputs" });
            fails(ShapePolyCode.InvalidArgument, () => p.Vmap(new long[0]), new[] { "0 in_axes" });
            fails(ShapePolyCode.InvalidArgument, () => p.Vmap(axes, new long[] { 0, 0, 0 }), new[] { "3 out_axes for a program with 2 outputs" });
            fails(ShapePolyCode.InvalidArgument, () => p.Vmap(with(0, 2)), new[] { "in_axes[0] = 2", "input 'x'", "[0, 1]" });
            fails(ShapePolyCode.InvalidArgument, () => p.Vmap(with(0, -2)), new[] { "input 'x'" });
            fails(ShapePolyCode.InvalidArgument, () => p.Vmap(axes, new long[] { 0, 2 }), new[] { "out_axes[1] = 2", "output 'probs'" });
            fails(ShapePolyCode.InvalidArgument, () => p.Vmap(axes, new long[] { -1, 0 }), new[] { "output 'loss' depends on a batched input" });
            fails(ShapePolyCode.InvalidArgument, () => p.Vmap(with(2, 0)), new[] { "'W1'", "default" });
            fails(ShapePolyCode.InvalidArgument, () => p.Vmap(Enumerable.Repeat(-1L, 8).ToArray()), new[] { "no input is batched" });
            fails(ShapePolyCode.InvalidArgument, () => p.Vmap(axes, null, ""), new[] { "batch_dim_name" });
            fails(ShapePolyCode.NotFound, () => p.VmapByName(new Dictionary<string, long> { { "x", 0 }, { "nope", 0 } }),
                new[] { "no input named 'nope'", "'x', 'labels', 'W1'" });
            fails(ShapePolyCode.InvalidArgument, () => p.VmapByName(new Dictionary<string, long>()), new[] { "no input is batched" });
            Assert.Throws<ArgumentNullException>(() => p.Vmap(null));
            Assert.Throws<ArgumentNullException>(() => p.VmapByName(null));
            using (var v = p.Vmap(axes))
            using (var s = new Scope())
            {
                fails(ShapePolyCode.InvalidArgument, () => v.Vmap(DataAxes(v), null, "vmap0"), new[] { "'vmap0' is already a dimension variable" });
                var x = s.Input("x", DType.F32, "batch, 3");
                var z = s.Input("z", DType.F32, "4");
                using (var nz = s.CreateProgram(new[] { z }, ("idx", z.Nonzero())))
                    fails(ShapePolyCode.Unsupported, () => nz.Vmap(new long[] { 0 }), new[] { "nonzero" });
                using (var q = s.CreateProgram(new[] { x }, ("y", x.Neg())))
                {
                    fails(ShapePolyCode.InvalidArgument, () => q.Vmap(new long[] { 0 }, null, "batch"), new[] { "'batch' is already a dimension variable" });
                    // Still usable: the batched program runs, the programs batch again.
                    using (var rt = new TwinRuntime(v))
                    using (var one = new Runtime(p))
                        SameElement("loss", RunBatch(rt.Run, 1)["loss"], 1, 0, RunExample(one, 1, 0)["loss"]);
                    using (var w = p.Vmap(axes, null, "batch")) Assert.Equal("(batch, 64)", w.Inputs[0].Shape);
                    using (var qv = q.Vmap(new long[] { 1 })) Assert.Equal("(batch, vmap0, 3)", qv.Inputs[0].Shape);
                }
            }
        }
    }

    public static void TestVmapSaveLoad()
    {
        var path = Path.Combine(Path.GetTempPath(), "shapepoly_vmap_" + System.Diagnostics.Process.GetCurrentProcess().Id + ".shpoly");
        using (var loss = ExampleLoss())
        using (var g = Grad(loss))
        using (var vg = g.Vmap(DataAxes(g), null, "examples"))
        {
            var bytes = vg.Serialize();
            vg.SaveFile(path);
            using (var loaded = TwinRuntime.Reload(vg))
            using (var fromFile = Program.LoadFile(path))
            using (var a = new TwinRuntime(vg))
            using (var b = new Runtime(fromFile))
            using (var gl = TwinRuntime.Reload(g))
            using (var v2 = gl.Vmap(DataAxes(g), null, "examples"))
            {
                File.Delete(path);
                Assert.Equal("(examples, 64)", loaded.Inputs[0].Shape);
                Assert.Seq(bytes, fromFile.Serialize(), "the file's bytes");
                Assert.Seq(bytes, v2.Serialize(), "batching the loaded grad program");
                foreach (var n in Batches)
                {
                    var got = RunBatch(a.Run, n);
                    var again = RunBatch(b.Run, n);
                    foreach (var name in GradOutputs)
                    {
                        Assert.Seq(got[name].Shape, again[name].Shape, name);
                        Assert.Seq(got[name].AsFloat().Select(BitConverter.SingleToInt32Bits),
                            again[name].AsFloat().Select(BitConverter.SingleToInt32Bits), name + " at batch " + n);
                    }
                }
            }
        }
    }
}

// Data-dependent sizes (issue 13) through the binding: Nonzero, BooleanMask and SizeFromValue
// make unbacked variables with sound bounds; a guard on one fails Inconclusive until
// Scope.Check states it, which the runtime then checks; dry runs report -1 with bounds.
// Programs run through TwinRuntime, so each is also saved, reloaded and run again.
using System;
using System.Collections.Generic;
using System.IO;
using System.Linq;
using System.Text.RegularExpressions;
using ShapePoly;

public static class DataDependentTests
{
    // Row-major np.argwhere of a (rows, cols) matrix, computed here.
    static long[] ArgWhere(float[] x, long cols)
    {
        var r = new List<long>();
        for (long i = 0; i < x.Length; i++)
            if (x[i] != 0) { r.Add(i / cols); r.Add(i % cols); }
        return r.ToArray();
    }

    // The fenced block right after '<!-- csharp-readme-test: NAME -->' in this binding's README.
    static string ReadmeBlock(string readme, string name)
    {
        var m = Regex.Match(readme, "<!-- csharp-readme-test: " + Regex.Escape(name) + " -->\n```[a-z]*\n(.*?)```", RegexOptions.Singleline);
        Assert.True(m.Success, "README block '" + name + "'");
        return m.Groups[1].Value;
    }

    // The README's data-dependent example, compiled against ShapePoly.dll and run as written.
    public static void TestReadmeExample()
    {
        var readme = File.ReadAllText(Path.Combine(Tests.Root, "bindings", "csharp", "README.md"));
        var code = ReadmeBlock(readme, "data-dependent.cs");
        var expected = ReadmeBlock(readme, "data-dependent output");
        var dir = Tests.TempDir();
        try
        {
            File.WriteAllText(Path.Combine(dir, "MaskedMean.cs"), code);
            File.Copy(Path.Combine(Tests.OutDir, "ShapePoly.dll"), Path.Combine(dir, "ShapePoly.dll"));
            var c = Tests.Exec("mcs", "-nologo -langversion:7.2 -warnaserror+ -r:ShapePoly.dll -out:MaskedMean.exe MaskedMean.cs", dir);
            Assert.Equal(0, c.Code, c.Output);
            var r = Tests.Exec("mono", "MaskedMean.exe", dir);
            Assert.Equal(0, r.Code, r.Output);
            Assert.Equal(expected.Trim(), r.Output.Trim().Replace("\r", ""), "README output");
        }
        finally
        {
            Directory.Delete(dir, true);
        }
    }

    public static void TestNonzeroEmptyPartialFull()
    {
        using (var s = new Scope(new string[0], new[] { new VariableRange("n", 1, 10) }))
        {
            var x = s.Input("x", DType.F32, "n, 4");
            var idx = x.Nonzero();
            Assert.Equal(DType.I64, idx.DType);
            Assert.Equal("i64[u0, 2]", idx.ToString());
            var u = idx.Shape[0];
            Assert.Equal("u0", u.ToString());
            Assert.Equal((0L, 40L), u.Bounds, "u0 in [0, 4*10]");
            // The bound relative to n is a fact; a tighter one is not.
            Assert.Equal(true, u.Compare(CmpOp.Le, s.Parse("4*n")));
            Assert.Equal(null, u.Compare(CmpOp.Le, s.Parse("3*n")));
            Assert.Seq(new[] { "n", "u0" }, s.Variables);
            Assert.True(s.IsUnbacked("u0") && s.IsUnbacked(1), "u0 is unbacked");
            Assert.True(!s.IsUnbacked("n") && !s.IsUnbacked(0), "n is backed");
            Assert.True(!s.IsUnbacked(2) && !s.IsUnbacked(-1), "out of range is false");
            Assert.Contains(s.VariableOrigin("u0"), "nonzero");
            Assert.Equal(null, s.VariableOrigin("n"));
            Assert.Equal(null, s.VariableOrigin(7));
            Assert.Code(ShapePolyCode.NotFound, () => s.IsUnbacked("m"));
            // A second op makes the next free name.
            Assert.Equal("u1", x.Nonzero().Shape[0].ToString());
            using (var p = s.CreateProgram(new[] { x }, ("idx", idx)))
            using (var rt = new TwinRuntime(p))
            {
                var vars = p.Variables.ToList();
                int ui = vars.IndexOf("u0"), ni = vars.IndexOf("n");
                Assert.True(ui >= 0 && ni >= 0, "program variables " + string.Join(", ", vars));
                Assert.True(p.IsUnbacked(ui) && !p.IsUnbacked(ni), "program: u0 unbacked, n not");
                Assert.Contains(p.VariableOrigin(ui), "nonzero");
                Assert.Equal(null, p.VariableOrigin(ni));
                Assert.True(!p.IsUnbacked(vars.Count) && p.VariableOrigin(vars.Count) == null, "program: out of range");
                var rng = new Random(7);
                foreach (long n in new long[] { 1, 3, 10 })
                    foreach (double density in new[] { 0.0, 0.3, 1.0 })
                    {
                        var data = new float[n * 4];
                        for (int i = 0; i < data.Length; i++) data[i] = rng.NextDouble() < density ? (i % 2 == 0 ? 1.5f : -2f) : 0f;
                        if (density == 0.3) { data[0] = 0; data[1] = 3; }  // partial even when the draw is not
                        var want = ArgWhere(data, 4);
                        var got = rt.Run(("x", new NdArray(data, n, 4)))["idx"];
                        Assert.Seq(new long[] { want.Length / 2, 2 }, got.Shape, "n " + n + " density " + density);
                        Assert.Seq(want, got.AsLong(), "argwhere, n " + n + " density " + density);
                        if (density == 0.0) Assert.Equal(0L, got.Shape[0]);
                        if (density == 1.0) Assert.Equal(4 * n, got.Shape[0]);
                    }
                // Declared range: n = 11 is rejected before anything runs.
                Assert.Code(ShapePolyCode.ConstraintViolation, () => rt.Run(("x", new NdArray(new float[44], 11, 4))));
            }
        }
    }

    // -0.0 is zero, NaN is not; other dtypes and ranks.
    public static void TestNonzeroSpecialsAndDTypes()
    {
        using (var s = new Scope(new string[0], new[] { new VariableRange("n", 0, 100), new VariableRange("m", 0, 100) }))
        {
            var f = s.Input("f", DType.F32, "n");
            var b = s.Input("b", DType.Bool, "2, m, 2");
            var i = s.Input("i", DType.I32, "");
            using (var p = s.CreateProgram(new[] { f, b, i }, ("f", f.Nonzero()), ("b", b.Nonzero()), ("i", i.Nonzero())))
            using (var rt = new TwinRuntime(p))
            {
                var outs = rt.Run(("f", new NdArray(new[] { -0.0f, float.NaN, 0f, 1f, float.NegativeInfinity }, 5)),
                                  ("b", new NdArray(new[] { false, true, false, false, true, false, false, true }, 2, 2, 2)),
                                  ("i", new NdArray(new[] { 7 })));
                Assert.Seq(new long[] { 3, 1 }, outs["f"].Shape);
                Assert.Seq(new long[] { 1, 3, 4 }, outs["f"].AsLong());
                Assert.Seq(new long[] { 3, 3 }, outs["b"].Shape);
                Assert.Seq(new long[] { 0, 0, 1, 1, 0, 0, 1, 1, 1 }, outs["b"].AsLong());
                Assert.Seq(new long[] { 1, 0 }, outs["i"].Shape, "a nonzero scalar: one row of no indices");
                outs = rt.Run(("f", new NdArray(new float[0], 0)), ("b", new NdArray(new bool[0], 2, 0, 2)),
                              ("i", new NdArray(new[] { 0 })));
                Assert.Seq(new long[] { 0, 1 }, outs["f"].Shape);
                Assert.Seq(new long[] { 0, 3 }, outs["b"].Shape);
                Assert.Seq(new long[] { 0, 0 }, outs["i"].Shape);
            }
        }
    }

    // The mean of the rows of x whose score exceeds 0.5: count 0 gives NaN.
    public static void TestMaskThenAverage()
    {
        using (var s = new Scope())
        {
            var x = s.Input("x", DType.F32, "n, 3");
            var score = s.Input("score", DType.F32, "n");
            var rows = x.BooleanMask(score.Greater(s.Scalar(0.5f)), 0);
            Assert.Equal("f32[u0, 3]", rows.ToString());
            Assert.Contains(s.VariableOrigin("u0"), "boolean_mask");
            var count = s.DimValue(rows.Shape[0]).Convert(DType.F32);
            var mean = rows.Sum(new long[] { 0 }) / count;
            using (var p = s.CreateProgram(new[] { x, score }, ("mean", mean), ("rows", rows)))
            using (var rt = new TwinRuntime(p))
                foreach (int n in new[] { 5, 8 })
                    for (int selected = 0; selected <= n; selected++)
                    {
                        var xs = Enumerable.Range(0, n * 3).Select(i => (float)i).ToArray();
                        // Odd rows first, then even ones, until `selected` are chosen; scores
                        // just above and below the threshold.
                        var order = Enumerable.Range(0, n).Where(i => i % 2 == 1).Concat(Enumerable.Range(0, n).Where(i => i % 2 == 0));
                        var pick = new HashSet<int>(order.Take(selected));
                        var sc = Enumerable.Range(0, n).Select(i => pick.Contains(i) ? 0.75f : 0.5f).ToArray();
                        var outs = rt.Run(("x", new NdArray(xs, n, 3)), ("score", new NdArray(sc, n)));
                        var chosen = Enumerable.Range(0, n).Where(pick.Contains).ToArray();
                        Assert.Seq(new long[] { selected, 3 }, outs["rows"].Shape, "rows at count " + selected);
                        Assert.Seq(chosen.SelectMany(i => new[] { xs[3 * i], xs[3 * i + 1], xs[3 * i + 2] }), outs["rows"].AsFloat());
                        var got = outs["mean"].AsFloat();
                        Assert.Seq(new long[] { 3 }, outs["mean"].Shape);
                        for (int c = 0; c < 3; c++)
                        {
                            if (selected == 0)
                            {
                                Assert.True(float.IsNaN(got[c]), "count 0 gives NaN, got " + got[c]);
                                continue;
                            }
                            double want = chosen.Sum(i => (double)xs[3 * i + c]) / selected;
                            Assert.Close(new[] { want }, new[] { got[c] }, 1e-6, "mean n " + n + " count " + selected + " column " + c);
                        }
                    }
        }
    }

    public static void TestSizeFromValueRangeIsChecked()
    {
        using (var s = new Scope())
        {
            var v = s.Input("v", DType.I64, "");
            var k = v.SizeFromValue("k", 1, 5);
            Assert.Equal("k", k.ToString());
            Assert.Equal((1L, 5L), k.Bounds);
            Assert.True(s.IsUnbacked("k"), "k is unbacked");
            Assert.Contains(s.VariableOrigin("k"), "size_from_value");
            var io = s.Iota(DType.I64, 0, k);
            using (var p = s.CreateProgram(new[] { v }, ("iota", io)))
            using (var rt = new TwinRuntime(p))
            {
                foreach (long val in new long[] { 1, 5, 3 })
                {
                    var y = rt.Run(("v", NdArray.Scalar(val)))["iota"];
                    Assert.Seq(new[] { val }, y.Shape);
                    Assert.Seq(Enumerable.Range(0, (int)val).Select(i => (long)i), y.AsLong());
                }
                foreach (long val in new long[] { 0, 6 })
                {
                    var e = Assert.Code(ShapePolyCode.ConstraintViolation, () => rt.Run(("v", NdArray.Scalar(val))), "value " + val);
                    Assert.Contains(e.Message, "k = " + val);
                    Assert.Contains(e.Message, "[1, 5]");
                    Assert.Contains(e.Message, "size_from_value");
                }
                Assert.Seq(new long[] { 2 }, rt.Run(("v", NdArray.Scalar(2L)))["iota"].Shape, "usable after errors");
            }
            // Argument errors, each named.
            Assert.Contains(Assert.Code(ShapePolyCode.InvalidArgument, () => v.SizeFromValue("k2", -1, 5)).Message, "-1");
            Assert.Code(ShapePolyCode.InvalidArgument, () => v.SizeFromValue("k2", 5, 4));
            Assert.Code(ShapePolyCode.InvalidArgument, () => v.SizeFromValue("k", 0, 4), "taken name");
            Assert.Code(ShapePolyCode.DTypeMismatch, () => s.Input("f", DType.F32, "").SizeFromValue("k2", 0, 4));
            Assert.Code(ShapePolyCode.ShapeMismatch, () => s.Input("w", DType.I64, "3").SizeFromValue("k2", 0, 4));
            // Unnamed: the first free u name, and the default range [0, unbounded].
            var d = v.SizeFromValue();
            Assert.Equal("u0", d.ToString());
            Assert.Equal((0L, long.MaxValue), d.Bounds);
        }
    }

    public static void TestBooleanMaskErrors()
    {
        using (var s = new Scope())
        {
            var x = s.Input("x", DType.F32, "n, 3");
            var mask = s.Input("m", DType.Bool, "n");
            Assert.Contains(Assert.Code(ShapePolyCode.DTypeMismatch, () => x.BooleanMask(s.Input("fm", DType.F32, "n"))).Message, "bool");
            Assert.Contains(Assert.Code(ShapePolyCode.InvalidArgument, () => x.BooleanMask(mask, 2)).Message, "axis");
            Assert.Code(ShapePolyCode.ShapeMismatch, () => x.BooleanMask(s.Input("m4", DType.Bool, "4"), 1));
            Assert.Code(ShapePolyCode.Inconclusive, () => x.BooleanMask(s.Input("o", DType.Bool, "k"), 0));
            Assert.Equal("f32[u0, 3]", x.BooleanMask(mask, -2).ToString());
            // A mask over the last axis.
            Assert.Equal("f32[n, u1]", x.BooleanMask(s.Input("c", DType.Bool, "3"), 1).ToString());
        }
    }

    public static void TestGuardNeedsCheckWhichRunsAtRunTime()
    {
        using (var s = new Scope())
        {
            var x = s.Input("x", DType.F32, "n");
            var idx = x.Nonzero();
            var u = idx.Shape[0];
            var e = Assert.Code(ShapePolyCode.Inconclusive, () => u.Guard(CmpOp.Ge, 1, "need a hit"));
            Assert.Contains(e.Message, "data-dependent");
            Assert.Contains(e.Message, "u0");
            Assert.Contains(e.Message, "shp_scope_check(scope, u0, SHP_CMP_GE, 1");
            // No hint stands in for the data.
            Assert.Contains(Assert.Code(ShapePolyCode.InvalidArgument, () => s.SetHint("u0", 3)).Message, "data-dependent");
            Assert.Equal(true, u.Guard(CmpOp.Ge, 0), "decided without a check");
            s.Check(u, CmpOp.Ge, s.Constant(1), "at least one hit");
            Assert.Equal(true, u.Compare(CmpOp.Ge, 1));
            Assert.Equal(true, u.Guard(CmpOp.Ge, 1), "decided after the check");
            Assert.Equal(true, u.Guard(CmpOp.Gt, 0));
            using (var p = s.CreateProgram(new[] { x }, ("idx", idx)))
            using (var rt = new TwinRuntime(p))
            {
                Assert.Equal(1, p.Assertions.Count);
                var hit = new NdArray(new float[] { 0, 1, 0 }, 3);
                Assert.Seq(new long[] { 1 }, rt.Run(("x", hit))["idx"].AsLong());
                var none = new NdArray(new float[] { 0, 0, 0 }, 3);
                var v = Assert.Code(ShapePolyCode.ConstraintViolation, () => rt.Run(("x", none)));
                Assert.Contains(v.Message, "at least one hit");
                Assert.Contains(v.Message, "u0 >= 1");
                Assert.Contains(v.Message, "u0 = 0");
                Assert.Seq(new long[] { 1 }, rt.Run(("x", hit))["idx"].AsLong(), "usable after the violation");
            }
        }
    }

    public static void TestDryRunReportsDataDependentDims()
    {
        using (var s = new Scope())
        {
            var x = s.Input("x", DType.F32, "n, 4");
            using (var p = s.CreateProgram(new[] { x }, ("idx", x.Nonzero())))
            using (var rt = new TwinRuntime(p))
            {
                var shapes = rt.DryRun(new Dictionary<string, long[]> { { "x", new long[] { 10, 4 } } });
                Assert.Seq(new long[] { -1, 2 }, shapes["idx"]);
                Assert.Seq(new long[] { -1, 2 }, rt.OutputShape(0));
                Assert.Equal((true, 0L, 40L), rt.OutputDimBounds(0, 0));
                Assert.Equal((false, 2L, 2L), rt.OutputDimBounds(0, 1));
                Assert.Contains(Assert.Code(ShapePolyCode.InvalidArgument, () => rt.OutputDimBounds(0, 2)).Message, "axis 2");
                Assert.Code(ShapePolyCode.InvalidArgument, () => rt.OutputDimBounds(1, 0));
                Assert.Throws<ArgumentOutOfRangeException>(() => rt.OutputDimBounds(0, -1));
                // After a run: the computed size.
                var data = Enumerable.Range(0, 40).Select(i => i % 5 == 0 ? 1f : 0f).ToArray();
                Assert.Seq(new long[] { 8, 2 }, rt.Run(("x", new NdArray(data, 10, 4)))["idx"].Shape);
                Assert.Seq(new long[] { 8, 2 }, rt.OutputShape(0));
                Assert.Equal((true, 8L, 8L), rt.OutputDimBounds(0, 0));
                // The cost depends on the data: refused, with the reason.
                var e = Assert.Code(ShapePolyCode.Unsupported, () => rt.Cost(CostKind.Flops, new Dictionary<string, long[]> { { "x", new long[] { 10, 4 } } }));
                Assert.Contains(e.Message, "data-dependent");
            }
        }
        using (var s = new Scope())
        {
            var x = s.Input("x", DType.F32, "n");
            using (var p = s.CreateProgram(new[] { x }, ("y", x * x)))
            using (var rt = new Runtime(p))
            {
                Assert.Code(ShapePolyCode.InvalidArgument, () => rt.OutputDimBounds(0, 0), "no run yet");
                rt.Run(("x", new NdArray(new float[] { 1, 2, 3 }, 3)));
                Assert.Equal((false, 3L, 3L), rt.OutputDimBounds(0, 0), "a dim from the input shape");
            }
        }
    }

    public static void TestBoundAllocationGivesTheSameResults()
    {
        using (var s = new Scope())
        {
            var x = s.Input("x", DType.F32, "n");
            var sel = x.BooleanMask(x.NotEqual(s.Scalar(0f)));
            var sq = sel * sel;
            using (var p = s.CreateProgram(new[] { x }, ("sq", sq)))
            using (var bounded = new RuntimeOptions { NumThreads = 1, BoundAllocationBytes = 1 << 20 })
            using (var plainRt = new TwinRuntime(p))
            using (var boundRt = new TwinRuntime(p, bounded))
            {
                Assert.Equal(1L << 20, bounded.BoundAllocationBytes);
                Assert.Code(ShapePolyCode.InvalidArgument, () => bounded.BoundAllocationBytes = -1);
                Assert.Equal(1L << 20, bounded.BoundAllocationBytes, "unchanged by the refused value");
                var rng = new Random(11);
                for (int trial = 0; trial < 20; trial++)
                {
                    var data = Enumerable.Range(0, 257).Select(i => rng.Next(4) == 0 ? 0f : i).ToArray();
                    var want = data.Where(f => f != 0).Select(f => f * f).ToArray();
                    var a = plainRt.Run(("x", new NdArray(data, 257)))["sq"];
                    var b = boundRt.Run(("x", new NdArray(data, 257)))["sq"];
                    Assert.Seq(want, a.AsFloat(), "plain trial " + trial);
                    Assert.Equal(null, TwinRuntime.Diff(a, b), "bounded vs plain, trial " + trial);
                }
            }
            using (var o = new RuntimeOptions()) Assert.Equal(0L, o.BoundAllocationBytes);
        }
    }
}

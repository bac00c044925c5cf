// Hints, guards, assumptions and multi-variant programs (issue 11): PyTorch's guard from a
// broadcast decided on hints, Dim.Guard, two variants dispatched on both sides of their guards
// (also after a save/load round trip), a set of variants that leaves a gap with its
// counterexample, and no specialization on a hint of 1.
using System;
using System.Collections.Generic;
using System.IO;
using System.Linq;
using System.Text.RegularExpressions;
using ShapePoly;

public static class GuardTests
{
    // x: [s0], y: [s1] -> x * y under GuardPolicy.FromHints with hints h0 and h1.
    static Program PyTorchMul(long h0, long h1)
    {
        using (var s = new Scope())
        {
            s.SetGuardPolicy(GuardPolicy.FromHints);
            s.SetHint("s0", h0);
            s.SetHint("s1", h1);
            var x = s.Input("x", DType.F32, "s0");
            var y = s.Input("y", DType.F32, "s1");
            return s.CreateProgram(new[] { x, y }, ("z", x.Mul(y)));
        }
    }

    public static void TestPyTorchExampleGuardFromHints()
    {
        using (var p = PyTorchMul(5, 5))
        {
            Assert.Equal(1, p.Guards.Count);
            Assert.Equal("s0 == s1", p.Guards[0].Text);
            Assert.True(p.Guards[0].Origin.StartsWith("mul"), p.Guards[0].Origin);
            Assert.Equal(1, p.VariantCount);
            Assert.Equal("s0 == s1", p.VariantGuards(0)[0].Text);
            Assert.Equal(null, p.VariantGuards(0)[0].Origin);
            Assert.Equal(0, p.VariantGuards(1).Count);
            Assert.Equal(0, p.VariantGuards(-1).Count);
            Assert.Contains(p.ToText(), "s0 == s1");
            using (var rt = new TwinRuntime(p))
            {
                Assert.Equal(-1, rt.LastVariant);
                var z = rt.Run(("x", new NdArray(new float[] { 1, 2, 3, 4, 5 }, 5)), ("y", new NdArray(new float[] { 2, 2, 2, 2, 2 }, 5)))["z"];
                Assert.Seq(new float[] { 2, 4, 6, 8, 10 }, z.AsFloat());
                Assert.Equal(0, rt.LastVariant);
                var e = Assert.Code(ShapePolyCode.GuardFailed,
                    () => rt.Run(("x", new NdArray(new float[5], 5)), ("y", new NdArray(new float[6], 6))));
                Assert.Contains(e.Message, "s0 == s1");
                Assert.Equal(18, (int)e.Code);
            }
            Assert.Code(ShapePolyCode.GuardFailed,
                () => p.CheckShapes(new Dictionary<string, long[]> { { "x", new long[] { 5 } }, { "y", new long[] { 6 } } }));
            Assert.Equal(0, p.CheckShapes(new Dictionary<string, long[]> { { "x", new long[] { 7 } }, { "y", new long[] { 7 } } }).Variant);
        }

        // Hints 5 and 6: the multiply fails, naming both hint values.
        var m = Assert.Code(ShapePolyCode.ShapeMismatch, () => PyTorchMul(5, 6));
        Assert.Contains(m.Message, "s0 = 5");
        Assert.Contains(m.Message, "s1 = 6");

        // The default policy keeps today's behaviour.
        using (var s = new Scope())
        {
            s.SetHint("s0", 5);
            s.SetHint("s1", 5);
            var x = s.Input("x", DType.F32, "s0");
            var y = s.Input("y", DType.F32, "s1");
            Assert.Code(ShapePolyCode.Inconclusive, () => x.Mul(y));
            Assert.Code(ShapePolyCode.InvalidArgument, () => s.SetGuardPolicy((GuardPolicy)7));
        }
    }

    public static void TestHints()
    {
        using (var s = new Scope(new[] { "n <= 4*m" }, new[] { new VariableRange("n", 0, 100) }))
        {
            Assert.Equal(null, s.Hint("n"));
            s.SetHint("n", 0);
            Assert.Equal(0L, s.Hint("n"));
            Assert.Code(ShapePolyCode.ConstraintViolation, () => s.SetHint("n", 101));
            s.SetHint("m", 2);
            s.SetHint("n", 8);
            Assert.Code(ShapePolyCode.ConstraintViolation, () => s.SetHint("n", 9));
            Assert.Equal(8L, s.Hint("n"), "the previous hint stays");
            Assert.Code(ShapePolyCode.NotFound, () => s.Hint("nope"));
            Assert.Equal(Truth.Unknown, s.Parse("n").CompareTruth(CmpOp.Eq, s.Constant(8)), "a hint is not a fact");
        }
    }

    public static void TestDimGuard()
    {
        using (var s = new Scope())
        {
            s.SetHint("seq", 2048);
            var seq = s.Parse("seq");
            Assert.True(seq.Guard(CmpOp.Ge, 1), "decided: records nothing");
            Assert.True(seq.Guard(CmpOp.Gt, 1024, "blocked attention"), "the hint is 2048");
            Assert.Equal(true, seq.Compare(CmpOp.Gt, 1024), "later decisions rely on the guard");
            var x = s.Input("x", DType.F32, "seq");
            using (var p = s.CreateProgram(new[] { x }, ("y", x.Exp())))
            {
                Assert.Equal(1, p.Guards.Count);
                Assert.Equal("seq > 1024", p.Guards[0].Text);
                Assert.Equal("blocked attention", p.Guards[0].Message);
                Assert.Equal("shp_dim_guard", p.Guards[0].Origin);
                using (var rt = new Runtime(p))
                {
                    rt.Run(("x", new NdArray(new float[1025], 1025)));
                    var e = Assert.Code(ShapePolyCode.GuardFailed, () => rt.Run(("x", new NdArray(new float[1024], 1024))));
                    Assert.Contains(e.Message, "blocked attention");
                }
            }
            // An unhinted variable: inconclusive, nothing recorded.
            var m = s.Parse("m");
            Assert.Code(ShapePolyCode.Inconclusive, () => m.Guard(CmpOp.Gt, 1024));
            Assert.Equal(null, m.Compare(CmpOp.Gt, 1024));
        }
    }

    // x: (rows, cols) traced under cols <= 16 (y = x + x) or cols > 16 (y = -x).
    static Program ColsVariant(bool small)
    {
        using (var s = new Scope())
        {
            var cols = s.Parse("cols");
            var x = s.Input("x", DType.F32, "rows, cols");
            if (small)
            {
                s.Assume(cols, CmpOp.Le, 16, "small rows");
                return s.CreateProgram(new[] { x }, ("y", x.Add(x)));
            }
            s.Assume(cols, CmpOp.Gt, s.Constant(16), "large rows");
            return s.CreateProgram(new[] { x }, ("y", x.Neg()));
        }
    }

    public static void TestTwoVariants()
    {
        using (var small = ColsVariant(true))
        using (var large = ColsVariant(false))
        using (var p = Program.CreateVariants(small, large))
        {
            Assert.Equal("shp_scope_assume", small.Guards[0].Origin);
            Assert.Equal(2, p.VariantCount);
            Assert.Equal(Truth.True, p.VariantsExhaustive);
            Assert.Equal("", p.Counterexample);
            Assert.Equal("cols <= 16", p.VariantGuards(0)[0].Text);
            Assert.Equal("small rows", p.VariantGuards(0)[0].Message);
            Assert.Equal("cols > 16", p.VariantGuards(1)[0].Text);
            Assert.Equal("large rows", p.VariantGuards(1)[0].Message);
            Assert.Equal(0, p.VariantGuards(2).Count);
            var c16 = p.CheckShapes(new Dictionary<string, long[]> { { "x", new long[] { 2, 16 } } });
            var c17 = p.CheckShapes(new Dictionary<string, long[]> { { "x", new long[] { 2, 17 } } });
            Assert.Equal(0, c16.Variant);
            Assert.Equal(1, c17.Variant);
            Assert.Seq(new long[] { 2, 17 }, c17.OutputShapes["y"]);

            using (var rt = new TwinRuntime(p))
            {
                Assert.Equal(-1, rt.LastVariant);
                foreach (var c in new[] { (Cols: 16L, Variant: 0), (17L, 1), (16L, 0), (1L, 0), (100L, 1) })
                {
                    long cols = c.Cols;
                    int variant = c.Variant;
                    var data = Enumerable.Range(0, (int)(2 * cols)).Select(i => (float)i).ToArray();
                    var y = rt.Run(("x", new NdArray(data, 2, cols)))["y"].AsFloat();
                    Assert.Equal(variant, rt.LastVariant, "cols " + cols);
                    Assert.Seq(data.Select(v => variant == 0 ? 2 * v : -v), y, "cols " + cols);
                }
                // cols 16 and 1 built plans of variant 0, 17 and 100 of variant 1; the second 16 hit.
                Assert.Equal(2UL, rt.VariantPlansBuilt(0));
                Assert.Equal(2UL, rt.VariantPlansBuilt(1));
                Assert.Equal(1UL, rt.VariantCacheHits(0));
                Assert.Equal(0UL, rt.VariantCacheHits(1));
                Assert.Equal(0UL, rt.VariantPlansBuilt(2));
                Assert.Equal(0UL, rt.VariantCacheHits(-1));
                Assert.Equal(4UL, rt.PlansBuilt);
            }

            // Saved and loaded: still two variants with their guards.
            var path = Path.Combine(Path.GetTempPath(), "shapepoly-cs-variants-" + System.Diagnostics.Process.GetCurrentProcess().Id + ".shpoly");
            try
            {
                p.SaveFile(path);
                using (var q = Program.LoadFile(path))
                {
                    Assert.Equal(2, q.VariantCount);
                    Assert.Equal("cols > 16", q.VariantGuards(1)[0].Text);
                    Assert.Equal(Truth.True, q.VariantsExhaustive);
                }
            }
            finally
            {
                File.Delete(path);
            }

            // A multi-variant argument contributes its variants; mismatched signatures are refused.
            using (var pp = Program.CreateVariants(p, small))
                Assert.Equal(3, pp.VariantCount);
            using (var s = new Scope())
            {
                var x = s.Input("x", DType.F32, "rows");
                using (var other = s.CreateProgram(new[] { x }, ("y", x)))
                    Assert.Code(ShapePolyCode.InvalidArgument, () => Program.CreateVariants(small, other));
            }
            Assert.Code(ShapePolyCode.InvalidArgument, () => Program.CreateVariants());
            Assert.Throws<ArgumentNullException>(() => Program.CreateVariants(small, null));
            var disposed = ColsVariant(true);
            disposed.Dispose();
            Assert.Throws<ObjectDisposedException>(() => Program.CreateVariants(small, disposed));
        }
    }

    static Program Bounded(CmpOp op, long bound)
    {
        using (var s = new Scope())
        {
            s.Assume(s.Parse("cols"), op, bound);
            var x = s.Input("x", DType.F32, "cols");
            return s.CreateProgram(new[] { x }, ("y", x.Exp()));
        }
    }

    public static void TestVariantsWithAGap()
    {
        using (var a = Bounded(CmpOp.Le, 16))
        using (var b = Bounded(CmpOp.Ge, 20))
        using (var p = Program.CreateVariants(a, b))
        {
            Assert.Equal(Truth.False, p.VariantsExhaustive);
            var cex = p.Counterexample;
            var m = Regex.Match(cex, @"^cols = (\d+)\b");
            Assert.True(m.Success, cex);
            var n = long.Parse(m.Groups[1].Value);
            Assert.True(16 < n && n < 20, cex + " is no uncovered value");
            using (var q = TwinRuntime.Reload(p))
                Assert.Equal(Truth.False, q.VariantsExhaustive);
            using (var rt = new Runtime(p))
            {
                var e = Assert.Code(ShapePolyCode.GuardFailed, () => rt.Run(("x", new NdArray(new float[18], 18))));
                Assert.Contains(e.Message, "cols");
                Assert.Equal(-1, rt.LastVariant);
                rt.Run(("x", new NdArray(new float[20], 20)));
                Assert.Equal(1, rt.LastVariant);
            }
        }
    }

    public static void TestAssumeContradictingConstraints()
    {
        using (var s = new Scope("n >= 10"))
        {
            var n = s.Parse("n");
            Assert.Code(ShapePolyCode.Unsatisfiable, () => s.Assume(n, CmpOp.Lt, 5, "tiny"));
            s.Assume(n, CmpOp.Ge, 3);  // implied: nothing recorded
            var x = s.Input("x", DType.F32, "n");
            using (var p = s.CreateProgram(new[] { x }, ("y", x)))
                Assert.Equal(0, p.Guards.Count);
        }
    }

    public static void TestHintOfOneDoesNotSpecialize()
    {
        using (var s = new Scope())
        {
            s.SetGuardPolicy(GuardPolicy.FromHints);
            s.SetHint("batch", 1);
            var x = s.Input("x", DType.F32, "batch, 4");
            var w = s.Input("w", DType.F32, "4, 3");
            using (var p = s.CreateProgram(new[] { x, w }, ("y", x.MatMul(w))))
            {
                Assert.Equal(0, p.Guards.Count);
                Assert.Equal(Truth.True, p.VariantsExhaustive);
                var wv = new NdArray(new float[] { 1, 2, 3, 1, 2, 3, 1, 2, 3, 1, 2, 3 }, 4, 3);
                using (var rt = new TwinRuntime(p))
                {
                    foreach (var batch in new long[] { 1, 1000 })
                    {
                        var xs = Enumerable.Repeat(1f, (int)(4 * batch)).ToArray();
                        var y = rt.Run(("x", new NdArray(xs, batch, 4)), ("w", wv))["y"];
                        Assert.Seq(new long[] { batch, 3 }, y.Shape);
                        Assert.Seq(new float[] { 4, 8, 12 }, y.AsFloat().Take(3));
                    }
                }
            }
        }
    }
}

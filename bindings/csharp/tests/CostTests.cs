using System;
using System.Collections.Generic;
using System.Linq;
using ShapePoly;

public static class CostTests
{
    static readonly CostKind[] Kinds =
        { CostKind.Flops, CostKind.BytesAccessed, CostKind.PeakBytes, CostKind.ParameterBytes };

    // A small MLP: softmax(max(x[batch, 8] @ w[8, 4] + b, 0), axis 1). FLOPs per row: the
    // matmul 2*8*4 = 64, the add 4, the max 4, the softmax 20; parameter bytes: w 128, b 16 and
    // the scalar 0 (4).
    static Program Mlp(params string[] constraints)
    {
        using (var s = new Scope(constraints))
        {
            var x = s.Input("x", DType.F32, "batch, 8");
            var w = s.Constant(Enumerable.Range(0, 32).Select(i => (i % 5) / 10f).ToArray(), 8, 4);
            var b = s.Constant(new[] { 0.1f, -0.2f, 0.3f, 0f }, 4);
            var y = (x.MatMul(w) + b).Maximum(s.Scalar(0f)).Softmax(1);
            return s.CreateProgram(new[] { x }, ("y", y));
        }
    }

    static Dictionary<string, long[]> Batch(long batch)
    {
        return new Dictionary<string, long[]> { { "x", new long[] { batch, 8 } } };
    }

    public static void TestFormulasAndBounds()
    {
        using (var p = Mlp("batch <= 1000"))
        {
            Assert.Equal("92*batch", p.Cost(CostKind.Flops));
            Assert.Equal("148", p.Cost(CostKind.ParameterBytes));
            Assert.Equal((92L, (long?)92000L), p.CostBounds(CostKind.Flops));
            Assert.Equal((148L, (long?)148L), p.CostBounds(CostKind.ParameterBytes));
            foreach (var k in Kinds)
            {
                Assert.True(p.CostBounds(k).Hi.HasValue, k + " is bounded under batch <= 1000");
                Assert.Equal("", p.CostUnboundedReason(k), k.ToString());
            }
            Assert.Seq(new[] { "batch" }, p.Variables);
            Assert.Equal((1L, 1000L), p.VariableBounds(0));
            Assert.Code(ShapePolyCode.InvalidArgument, () => p.VariableBounds(1));
            Assert.Throws<ArgumentOutOfRangeException>(() => p.VariableBounds(-1));
            // The formulas survive serialization.
            using (var q = Program.Load(p.Serialize()))
                foreach (var k in Kinds)
                {
                    Assert.Equal(p.Cost(k), q.Cost(k), k.ToString());
                    Assert.Equal(p.CostBounds(k), q.CostBounds(k), k.ToString());
                }
        }
    }

    public static void TestRuntimeCostEvaluatesTheFormula()
    {
        using (var p = Mlp("batch <= 1000"))
        using (var rt = new Runtime(p))
        using (var s = new Scope())
        {
            Assert.Equal(920L, rt.Cost(CostKind.Flops, Batch(10)));
            Assert.Equal(148L, rt.Cost(CostKind.ParameterBytes, Batch(10)));
            // The worst case of the peak is reached at the largest batch the constraint allows.
            Assert.Equal(p.CostBounds(CostKind.PeakBytes).Hi,
                         (long?)rt.Cost(CostKind.PeakBytes, Batch(1000)));
            foreach (var k in Kinds)
            {
                var formula = s.Parse(p.Cost(k));
                var (lo, hi) = p.CostBounds(k);
                foreach (long batch in new long[] { 1, 7, 1000 })
                {
                    long v = rt.Cost(k, Batch(batch));
                    Assert.Equal(formula.Evaluate(("batch", batch)), v, k + " at batch " + batch);
                    Assert.True(lo <= v && v <= hi.Value, k + " at " + batch + " within bounds");
                }
            }
            // The dtypes argument works as in DryRun.
            Assert.Equal(920L, rt.Cost(CostKind.Flops, Batch(10),
                                       new Dictionary<string, DType> { { "x", DType.F32 } }));
        }
    }

    public static void TestRuntimeCostChecksLikeADryRun()
    {
        using (var p = Mlp("batch <= 1000"))
        using (var rt = new Runtime(p))
        {
            var e = Assert.Code(ShapePolyCode.ShapeMismatch,
                                () => rt.Cost(CostKind.Flops, new Dictionary<string, long[]> {
                                    { "x", new long[] { 10, 9 } } }));
            Assert.Equal("input 'x': axis 1 is 9 but the program requires 8", e.Message);
            Assert.Code(ShapePolyCode.ConstraintViolation,
                        () => rt.Cost(CostKind.Flops, Batch(1001)));
            Assert.Code(ShapePolyCode.NotFound, () => rt.Cost(CostKind.Flops,
                new Dictionary<string, long[]> { { "z", new long[] { 10, 8 } } }));
            Assert.Code(ShapePolyCode.DTypeMismatch, () => rt.Cost(CostKind.Flops, Batch(10),
                new Dictionary<string, DType> { { "x", DType.F64 } }));
            Assert.Throws<ArgumentNullException>(() => rt.Cost(CostKind.Flops, null));
            // After an error the runtime still answers.
            Assert.Equal(920L, rt.Cost(CostKind.Flops, Batch(10)));
        }
    }

    public static void TestUnboundedPeakNamesTheVariable()
    {
        using (var p = Mlp())
        {
            Assert.Equal("92*batch", p.Cost(CostKind.Flops));
            var (lo, hi) = p.CostBounds(CostKind.PeakBytes);
            Assert.True(lo > 0, "a positive lower bound: " + lo);
            Assert.Equal((long?)null, hi, "unbounded peak");
            Assert.Contains(p.CostUnboundedReason(CostKind.PeakBytes), "no upper bound on batch");
            Assert.Equal((148L, (long?)148L), p.CostBounds(CostKind.ParameterBytes));
            Assert.Equal("", p.CostUnboundedReason(CostKind.ParameterBytes));
            Assert.Equal((1L, long.MaxValue), p.VariableBounds(0));
        }
    }

    public static void TestInvalidKindIsAnError()
    {
        var bad = (CostKind)7;
        using (var p = Mlp("batch <= 1000"))
        using (var rt = new Runtime(p))
        {
            Assert.Code(ShapePolyCode.InvalidArgument, () => p.Cost(bad));
            Assert.Code(ShapePolyCode.InvalidArgument, () => p.CostBounds(bad));
            Assert.Code(ShapePolyCode.InvalidArgument, () => p.CostUnboundedReason(bad));
            Assert.Code(ShapePolyCode.InvalidArgument, () => rt.Cost(bad, Batch(10)));
            Assert.Code(ShapePolyCode.InvalidArgument, () => p.Cost((CostKind)(-1)));
        }
    }

    public static void TestToDot()
    {
        using (var p = Mlp("batch <= 1000"))
        {
            var dot = p.ToDot();
            Assert.Contains(dot, "digraph");
            Assert.Contains(dot, "f32[batch, 8]");
            Assert.Contains(dot, "batch <= 1000");
            Assert.Equal(dot, p.ToDot());
            p.Dispose();
            Assert.Throws<ObjectDisposedException>(() => p.ToDot());
            Assert.Throws<ObjectDisposedException>(() => p.Cost(CostKind.Flops));
            Assert.Throws<ObjectDisposedException>(() => p.CostBounds(CostKind.Flops));
            Assert.Throws<ObjectDisposedException>(() => p.VariableBounds(0));
        }
    }
}

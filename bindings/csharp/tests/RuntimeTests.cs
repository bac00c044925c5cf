using System;
using System.Collections.Generic;
using System.Linq;
using ShapePoly;

public static class RuntimeTests
{
    static NdArray X(long batch, int cols = 784) { return new NdArray(new float[batch * cols], batch, cols); }

    public static void TestRunByNameAllForms()
    {
        using (var p = ProgramTests.Classifier())
        using (var opts = new RuntimeOptions { NumThreads = 1, PlanCacheCapacity = 4 })
        using (var rt = new TwinRuntime(p, opts))
        {
            Assert.Equal(1, rt.NumThreads);
            Assert.True(rt.SimdTarget.Length > 0, "simd target");
            Assert.Seq(new[] { "x" }, rt.InputNames);
            Assert.Seq(new[] { "probs" }, rt.OutputNames);
            var a = rt.Run(new Dictionary<string, NdArray> { { "x", X(2) } })["probs"];
            var b = rt.Run(("x", X(2)))["probs"];
            var c = rt.RunPositional(X(2))["probs"];
            Assert.Seq(new long[] { 2, 10 }, a.Shape);
            Assert.Seq(a.AsFloat(), b.AsFloat());
            Assert.Seq(a.AsFloat(), c.AsFloat());
            Assert.Close(Enumerable.Repeat(0.1, 20).ToArray(), a.AsFloat(), 1e-6, "softmax of zeros");
            Assert.Equal(1UL, rt.PlansBuilt);
            Assert.Equal(2UL, rt.CacheHits);
            Assert.True(rt.LastPlanBuildNs > 0, "plan build time");
            Assert.Code(ShapePolyCode.InvalidArgument, () => opts.NumThreads = -1);
        }
    }

    public static void TestRunErrorsWithExactMessages()
    {
        using (var p = ProgramTests.Classifier())
        using (var rt = new TwinRuntime(p))
        {
            var e = Assert.Code(ShapePolyCode.ShapeMismatch, () => rt.Run(("x", X(2, 5))));
            Assert.Equal("input 'x': axis 1 is 5 but the program requires 784", e.Message);
            e = Assert.Code(ShapePolyCode.ShapeMismatch, () => rt.Run(("x", new NdArray(new float[5], 5))));
            Assert.Equal("input 'x': rank is 1 but the program requires rank 2 (shape (batch, 784))", e.Message);
            e = Assert.Code(ShapePolyCode.NotFound, () => rt.Run(("y", X(2))));
            Assert.Equal("the program has no input named 'y' (its inputs: 'x')", e.Message);
            e = Assert.Code(ShapePolyCode.InvalidArgument, () => rt.Run());
            Assert.Equal("input 'x' is missing", e.Message);
            e = Assert.Code(ShapePolyCode.DTypeMismatch, () => rt.Run(("x", new NdArray(new double[2 * 784], 2, 784))));
            Assert.Equal("input 'x' has dtype f64 but the program requires f32", e.Message);
            Assert.Code(ShapePolyCode.InvalidArgument, () => rt.Run(("x", new NdArray(new float[3], 2, 784))), "data too short");
            Assert.Code(ShapePolyCode.InvalidArgument, () => rt.Run(("x", X(1)), ("x", X(1))), "repeated input");
            Assert.Code(ShapePolyCode.ConstraintViolation, () => rt.Run(("x", X(4097))));
            Assert.Throws<ArgumentNullException>(() => rt.Run(("x", (NdArray)null)));
            // After errors the runtime is fully usable.
            Assert.Seq(new long[] { 3, 10 }, rt.Run(("x", X(3)))["probs"].Shape);
        }
    }

    public static void TestZeroCopyInputAndRunInto()
    {
        using (var s = new Scope())
        {
            var x = s.Input("x", DType.F64, "n");
            var y = x * x;
            using (var p = s.CreateProgram(new[] { x }, ("y", y), ("s", y.Sum())))
            using (var rt = new TwinRuntime(p))
            {
                var input = new double[] { 1, 2, 3 };
                var outY = NdArray.Zeros(DType.F64, 3);
                var outS = NdArray.Zeros(DType.F64);
                rt.RunInto(new Dictionary<string, NdArray> { { "x", new NdArray(input, 3) } },
                           new Dictionary<string, NdArray> { { "y", outY }, { "s", outS } });
                Assert.Seq(new double[] { 1, 4, 9 }, outY.AsDouble());
                Assert.Seq(new double[] { 14 }, outS.AsDouble());
                // The caller's array is read in place: change it and run again.
                input[0] = 10;
                rt.RunInto(new Dictionary<string, NdArray> { { "x", new NdArray(input, 3) } },
                           new Dictionary<string, NdArray> { { "y", outY }, { "s", outS } });
                Assert.Seq(new double[] { 100, 4, 9 }, outY.AsDouble());
                var e = Assert.Code(ShapePolyCode.ShapeMismatch, () => rt.RunInto(
                    new Dictionary<string, NdArray> { { "x", new NdArray(input, 3) } },
                    new Dictionary<string, NdArray> { { "y", NdArray.Zeros(DType.F64, 4) }, { "s", outS } }));
                Assert.Contains(e.Message, "y");
                Assert.Code(ShapePolyCode.NotFound, () => rt.RunInto(new Dictionary<string, NdArray> { { "x", new NdArray(input, 3) } },
                    new Dictionary<string, NdArray> { { "zz", outY } }));
                Assert.Code(ShapePolyCode.InvalidArgument, () => rt.RunInto(new Dictionary<string, NdArray> { { "x", new NdArray(input, 3) } },
                    new Dictionary<string, NdArray> { { "y", outY } }));
                Assert.Throws<InvalidOperationException>(() => outY.AsFloat());
            }
        }
    }

    public static void TestDryRunAndOutputShape()
    {
        using (var s = new Scope())
        {
            var x = s.Input("x", DType.F32, "n, 2");
            var k = s.DimInput("k");
            var y = Tensor.Concatenate(0, x, s.Iota(DType.F32, 0, s.Variable("k"), s.Constant(2)));
            using (var p = s.CreateProgram(new[] { x, k }, ("y", y)))
            using (var rt = new TwinRuntime(p))
            {
                var shapes = rt.DryRun(new Dictionary<string, long[]> { { "x", new long[] { 3, 2 } }, { "k", new long[] { 4 } } });
                Assert.Seq(new long[] { 7, 2 }, shapes["y"]);
                Assert.Seq(new long[] { 7, 2 }, rt.OutputShape(0));
                Assert.Equal(1UL, rt.PlansBuilt);
                var outs = rt.Run(("x", new NdArray(new float[6], 3, 2)), ("k", NdArray.Scalar(4)));
                Assert.Equal(1UL, rt.CacheHits);
                Assert.Seq(new float[] { 0, 0, 1, 1, 2, 2, 3, 3 }, outs["y"].AsFloat().Skip(6));
                var c = p.CheckShapes(new Dictionary<string, long[]> { { "x", new long[] { 1, 2 } }, { "k", new long[] { 2 } } });
                Assert.Seq(new long[] { 3, 2 }, c.OutputShapes["y"]);
                Assert.Code(ShapePolyCode.DTypeMismatch, () => rt.DryRun(new Dictionary<string, long[]> { { "x", new long[] { 3, 2 } }, { "k", new long[] { 4 } } },
                    new Dictionary<string, DType> { { "x", DType.I32 }, { "k", DType.I64 } }));
                Assert.Code(ShapePolyCode.ShapeMismatch, () => rt.DryRun(new Dictionary<string, long[]> { { "x", new long[] { 3, 3 } }, { "k", new long[] { 4 } } }));
            }
        }
    }

    public static void TestRankZeroInputsAndSpecs()
    {
        using (var s = new Scope())
        {
            Assert.Equal(3L, s.Solve(("", new long[0]), ("n", new long[] { 3 }))["n"]);
            var x = s.Input("x", DType.F32, "");
            using (var p = s.CreateProgram(new[] { x }, ("y", x.Exp())))
            using (var rt = new TwinRuntime(p))
            {
                Assert.Equal("()", p.Inputs[0].Shape);
                var y = rt.Run(("x", new NdArray(new float[] { 0 })))["y"];
                Assert.Equal(0, y.Rank);
                Assert.Seq(new float[] { 1 }, y.AsFloat());
                Assert.Equal(0, p.CheckShapes(new Dictionary<string, long[]> { { "x", new long[0] } }).OutputShapes["y"].Length);
            }
        }
    }

    public static void TestRuntimeOutlivesProgram()
    {
        TwinRuntime rt;
        using (var p = ProgramTests.Classifier()) rt = new TwinRuntime(p);
        using (rt) Assert.Seq(new long[] { 1, 10 }, rt.Run(("x", X(1)))["probs"].Shape);
    }
}

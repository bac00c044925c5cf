using System;
using System.Collections.Generic;
using ShapePoly;

public static class DimTests
{
    public static void TestLibraryInfo()
    {
        Assert.Equal("0.1.0", Library.Version);
        Assert.Equal(Library.BindingAbiVersion, Library.AbiVersion);
        Assert.True(Library.SimdTarget.Length > 0, "SIMD target");
        Assert.True(Library.ProgramSchemaVersion >= 1, "schema version");
        Assert.Contains(Library.CodeString(ShapePolyCode.ParseError), "SHP_PARSE_ERROR");
        Assert.Equal(1f, Library.SimdSum(new float[] { 1e8f, 1f, -1e8f }));
    }

    public static void TestScopeConstraintsAndVariables()
    {
        using (var s = new Scope("batch >= 128", "batch <= 1024", "mod(seq, 8) == 0"))
        {
            Assert.Seq(new[] { "batch", "seq" }, s.Variables);
            Assert.Seq(new[] { "batch >= 128", "batch <= 1024", "mod(seq, 8) == 0" }, s.Constraints);
            var r = s.VariableRanges;
            Assert.Equal(1L, r[0].Min);
            Assert.Equal(long.MaxValue, r[0].Max);
            var e = s.Parse("2*batch + 1");
            Assert.Equal((257L, 2049L), e.Bounds);
            Assert.Equal(true, s.Parse("8*floordiv(seq, 8)").Compare(CmpOp.Eq, s.Parse("seq")));
        }
    }

    public static void TestDeclaredRanges()
    {
        using (var s = new Scope(new[] { "n >= 2" }, new[] { new VariableRange("n", 0, 10), new VariableRange("m", long.MinValue, long.MaxValue) }))
        {
            Assert.Equal((2L, 10L), s.Variable("n").Bounds);
            Assert.Equal((long.MinValue, long.MaxValue), s.Variable("m").Bounds);
        }
        using (var s = new Scope())
        {
            s.Declare("k", 0, 7);
            Assert.Equal((0L, 7L), s.Variable("k").Bounds);
            Assert.Code(ShapePolyCode.InvalidArgument, () => s.Declare("k", 0, 8), "declared twice");
            Assert.Code(ShapePolyCode.InvalidArgument, () => s.Declare("j", 5, 1), "min > max");
        }
        Assert.Code(ShapePolyCode.Unsatisfiable, () => new Scope(new[] { "n >= 20" }, new[] { new VariableRange("n", 0, 10) }));
    }

    public static void TestDimArithmeticAndText()
    {
        using (var s = new Scope())
        {
            var b = s.Variable("b");
            var a = s.Parse("a");
            Assert.Equal("2*b + 1", (2 * b + 1).ToString());
            Assert.Equal("-b + 3", (3 - b).ToString());
            Assert.Equal("-b", (-b).ToString());
            Assert.Equal("a*b", (a * b).ToString());
            Assert.Equal("a - b", (a - b).ToString());
            Assert.Equal("floordiv(b, 3)", b.FloorDiv(3).ToString());
            Assert.Equal("mod(b, 4)", b.Mod(4).ToString());
            Assert.Equal("max(a, b)", a.Max(b).ToString());
            Assert.Equal("min(a, b)", a.Min(b).ToString());
            Assert.Equal("b^2", b.Pow(2).ToString());
            Assert.True((b * 2 + 1).Equals(s.Parse("1 + 2*b")), "interned normal form");
            Assert.True(!(b + 1).Equals(b + 2), "different dims");
            Assert.Equal(6L, (s.Constant(2) * 3).ConstantValue);
            Assert.Equal(null, b.ConstantValue);
            long v;
            Assert.True(s.Parse("2*3 + 1").TryGetConstant(out v) && v == 7, "constant 7");
            Assert.Equal(1L, b.Max(1).Compare(CmpOp.Eq, b) == true ? 1L : 0L);  // max(b, 1) folds to b
            Assert.Equal(s.Parse("max(a, b)").ToString(), s.Parse(a.Max(b).ToString()).ToString());
            Assert.Seq(new[] { "b", "a" }, (a.FloorDiv(2) + b.Max(3)).Variables, "first mention in the scope");
            Assert.Equal(0, s.Constant(5).Variables.Length);
        }
    }

    public static void TestDimThreeValuedCompare()
    {
        using (var s = new Scope("n >= 4"))
        {
            var n = s.Variable("n");
            var b = s.Variable("b");
            Assert.Equal(true, n.Compare(CmpOp.Ge, 3));
            Assert.Equal(false, n.Compare(CmpOp.Lt, 4));
            Assert.Equal(null, b.Compare(CmpOp.Eq, 1));
            Assert.Equal(Truth.Unknown, b.CompareTruth(CmpOp.Eq, s.Constant(1)));
            Assert.Equal(Truth.True, s.Parse("2*floordiv(a, 2) + mod(a, 2)").CompareTruth(CmpOp.Eq, s.Variable("a")));
            Assert.Equal(true, (n + b).Compare(CmpOp.Gt, n));
        }
    }

    public static void TestDimEvaluate()
    {
        using (var s = new Scope())
        {
            var e = s.Parse("a*b + floordiv(a, 3)");
            Assert.Equal(4L * 5 + 1, e.Evaluate(("a", 4L), ("b", 5L)));
            Assert.Equal(4L * 5 + 1, e.Evaluate(new Dictionary<string, long> { { "a", 4 }, { "b", 5 } }));
            Assert.Code(ShapePolyCode.NotFound, () => e.Evaluate(("a", 4L), ("b", 5L), ("zz", 1L)));
            Assert.Code(ShapePolyCode.InvalidArgument, () => e.Evaluate(("a", 4L)), "missing variable");
            Assert.Code(ShapePolyCode.InvalidArgument, () => e.Evaluate(("a", 0L), ("b", 1L)), "outside the range");
        }
    }

    public static void TestDimErrors()
    {
        using (var s = new Scope())
        using (var other = new Scope())
        {
            var b = s.Variable("b");
            var pe = Assert.Code(ShapePolyCode.ParseError, () => s.Parse("2*+"));
            Assert.Equal("syntax error in symbolic dimension '2*+' at column 2: expected a dimension expression but found '+'", pe.Message);
            Assert.Code(ShapePolyCode.DivisionByZero, () => b.FloorDiv(b - b));
            Assert.Code(ShapePolyCode.DivisionByZero, () => b.Mod(0));
            Assert.Code(ShapePolyCode.Overflow, () => { var x = s.Constant(long.MaxValue) + 1; GC.KeepAlive(x); });
            Assert.Code(ShapePolyCode.ScopeMismatch, () => { var x = b + other.Variable("b"); GC.KeepAlive(x); });
            Assert.Code(ShapePolyCode.ScopeMismatch, () => b.Compare(CmpOp.Eq, other.Variable("b")));
            Assert.Code(ShapePolyCode.InvalidArgument, () => b.Pow(-1));
            Assert.Throws<InvalidOperationException>(() => { var x = default(Dim) + b; GC.KeepAlive(x); });
        }
        Assert.Code(ShapePolyCode.Unsatisfiable, () => new Scope("a >= 5", "a <= 2"));
        Assert.Code(ShapePolyCode.ParseError, () => new Scope("a >= "));
    }

    public static void TestScopeCheckAssertion()
    {
        using (var s = new Scope())
        {
            var n = s.Variable("n");
            Assert.Equal(null, n.Compare(CmpOp.Ge, 8));
            s.Check(n, CmpOp.Ge, s.Constant(8), "n must be at least 8");
            Assert.Equal(true, n.Compare(CmpOp.Ge, 8));
            Assert.Equal(1, s.Constraints.Count);
            Assert.Code(ShapePolyCode.Unsatisfiable, () => s.Check(n, CmpOp.Lt, s.Constant(3)));
            var x = s.Input("x", DType.F32, "n");
            using (var p = s.CreateProgram(new[] { x }, ("y", x.Exp())))
            {
                Assert.Equal(1, p.Assertions.Count);
                Assert.Equal("n must be at least 8", p.Assertions[0].Message);
                using (var rt = new TwinRuntime(p))
                {
                    var e = Assert.Code(ShapePolyCode.ConstraintViolation, () => rt.Run(("x", new NdArray(new float[3], 3))));
                    Assert.Contains(e.Message, "n must be at least 8");
                    Assert.Equal(9L, rt.Run(("x", new NdArray(new float[9], 9)))["y"].Length);
                }
            }
        }
    }

    public static void TestSolveAndParseShape()
    {
        using (var s = new Scope("batch >= 128", "batch <= 1024", "mod(seq, 8) == 0"))
        {
            var b = s.Solve(("batch, seq", new long[] { 256, 64 }), ("seq, 2*seq + 1", new long[] { 64, 129 }));
            Assert.Seq(new[] { "batch", "seq" }, b.Keys);
            Assert.Equal(256L, b["batch"]);
            Assert.Equal(64L, b["seq"]);
            var e = Assert.Code(ShapePolyCode.ConstraintViolation, () => s.Solve(("batch, seq", new long[] { 256, 63 })));
            Assert.Contains(e.Message, "constraint mod(seq, 8) == 0 violated");
            Assert.Code(ShapePolyCode.ShapeMismatch, () => s.Solve(("batch, 3", new long[] { 256, 4 })));
            Assert.Code(ShapePolyCode.Unsolvable, () => s.Solve(("batch*seq", new long[] { 1024 })));
            var dims = s.ParseShape("batch, _, ...", new long[] { 1, 2, 3, 4 });
            Assert.Seq(new[] { "batch", "2", "3", "4" }, Array.ConvertAll(dims, d => d.ToString()));
            Assert.Equal(0, s.ParseShape("()").Length);
            Assert.Code(ShapePolyCode.ParseError, () => s.ParseShape("batch,, 3"));
        }
    }
}

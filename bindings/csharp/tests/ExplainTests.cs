// Structured explanations of errors (issue 14): an Inconclusive error carries witnesses
// (values that make the comparison true / false) and verified fixes, copied out of the C error;
// each is checked against the facts here, and each fix is applied to see that it decides the
// comparison.
using System;
using System.Collections.Generic;
using System.Linq;
using System.Text.RegularExpressions;
using ShapePoly;

public static class ExplainTests
{
    // Every witness and fix is shown in the message, as the library promises.
    static void ShownInMessage(ShapePolyException e)
    {
        foreach (var w in e.Witnesses) Assert.Contains(e.Message, w.ToString());
        foreach (var f in e.Fixes) Assert.Contains(e.Message, f);
    }

    // The constraint a fix of the form "add the constraint 'C' when creating the scope" names.
    static string ConstraintFix(ShapePolyException e)
    {
        foreach (var f in e.Fixes)
        {
            var m = Regex.Match(f, "^add the constraint '([^']+)' when creating the scope");
            if (m.Success) return m.Groups[1].Value;
        }
        throw new Exception("no constraint fix among: " + string.Join(" | ", e.Fixes));
    }

    public static void TestGuardWithoutHintHasTwoWitnessesAndFixes()
    {
        ShapePolyException e;
        using (var s = new Scope())
        {
            var n = s.Variable("n");
            e = Assert.Code(ShapePolyCode.Inconclusive, () => n.Guard(CmpOp.Ge, 5));
        }
        // Copied out: still readable after the C error and the scope are gone.
        Assert.Equal(2, e.Witnesses.Count, e.Message);
        var yes = e.Witnesses[0];
        var no = e.Witnesses[1];
        Assert.True(yes.Holds, "the true witness comes first");
        Assert.True(!no.Holds, "the second witness makes it false");
        Assert.Seq(new[] { "n" }, yes.Variables.Select(v => v.Name));
        Assert.Seq(new[] { "n" }, no.Variables.Select(v => v.Name));
        Assert.True(yes["n"] >= 5, "n = " + yes["n"] + " satisfies n >= 5");
        Assert.True(no["n"] >= 1 && no["n"] < 5, "n = " + no["n"] + " violates n >= 5 within n's range [1, inf]");
        Assert.Equal("n = " + yes["n"] + " makes it true", yes.ToString());
        Assert.Equal("n = " + no["n"] + " makes it false", no.ToString());
        Assert.Throws<KeyNotFoundException>(() => { var unused = yes["m"]; });
        Assert.True(e.Fixes.Count >= 1, "at least one fix: " + e.Message);
        Assert.True(e.Fixes.All(f => !string.IsNullOrEmpty(f)), "fixes are sentences");
        ShownInMessage(e);
        // The constraint fix decides the guard.
        var c = ConstraintFix(e);
        Assert.Equal("n >= 5", c);
        using (var s = new Scope(c)) Assert.Equal(true, s.Variable("n").Guard(CmpOp.Ge, 5));
    }

    public static void TestWitnessesNameVariablesSharingAFact()
    {
        using (var s = new Scope("a + b == 10"))
        {
            s.Variable("c");  // shares no fact with a: not named
            var e = Assert.Code(ShapePolyCode.Inconclusive, () => s.Variable("a").Guard(CmpOp.Ge, 7));
            Assert.Equal(2, e.Witnesses.Count, e.Message);
            foreach (var w in e.Witnesses)
            {
                Assert.Seq(new[] { "a", "b" }, w.Variables.Select(v => v.Name), w.ToString());
                Assert.Equal(10L, w["a"] + w["b"], "the witness satisfies a + b == 10: " + w);
                Assert.True(w["a"] >= 1 && w["b"] >= 1, "within the default ranges: " + w);
                Assert.Equal(w["a"] >= 7, w.Holds, "holds exactly when a >= 7: " + w);
            }
            Assert.True(e.Witnesses[0].Holds != e.Witnesses[1].Holds, "one true, one false");
            ShownInMessage(e);
            var c = ConstraintFix(e);
            using (var fixedScope = new Scope("a + b == 10", c))
                Assert.Equal(true, fixedScope.Variable("a").Guard(CmpOp.Ge, 7), "after the fix '" + c + "'");
        }
    }

    // An op's shape check while tracing explains itself too.
    public static void TestBroadcastInconclusiveExplains()
    {
        using (var s = new Scope())
        {
            var x = s.Input("x", DType.F32, "n");
            var y = s.Input("y", DType.F32, "m");
            var e = Assert.Code(ShapePolyCode.Inconclusive, () => x.Add(y));
            Assert.Equal(2, e.Witnesses.Count, e.Message);
            foreach (var w in e.Witnesses)
            {
                Assert.Seq(new[] { "n", "m" }, w.Variables.Select(v => v.Name), w.ToString());
                Assert.Equal(w["n"] == w["m"], w.Holds, "holds exactly when n == m: " + w);
            }
            ShownInMessage(e);
            var c = ConstraintFix(e);
            using (var fixedScope = new Scope(c))
            {
                var z = fixedScope.Input("x", DType.F32, "n") + fixedScope.Input("y", DType.F32, "m");
                Assert.Equal(1, z.Rank, "after the fix '" + c + "'");
            }
        }
    }

    public static void TestOtherErrorsHaveNone()
    {
        using (var s = new Scope("n >= 2"))
        {
            var e = Assert.Code(ShapePolyCode.ParseError, () => s.Parse("n +"));
            Assert.Equal(0, e.Witnesses.Count);
            Assert.Equal(0, e.Fixes.Count);
            // A decided comparison raises nothing.
            Assert.Equal(true, s.Variable("n").Guard(CmpOp.Ge, 1));
        }
        var own = Assert.Code(ShapePolyCode.InvalidArgument, () => new NdArray(new float[3], 2, 2));
        Assert.True(own.Witnesses != null && own.Witnesses.Count == 0 && own.Fixes != null && own.Fixes.Count == 0,
            "the binding's own errors have empty lists");
        var made = new ShapePolyException(ShapePolyCode.Internal, "x");
        Assert.True(made.Witnesses.Count == 0 && made.Fixes.Count == 0, "constructed: empty lists");
    }
}

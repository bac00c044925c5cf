// A self-contained test runner: every public static void method named Test* without
// parameters in a class of this assembly runs (optionally filtered by substrings given on the
// command line); the last line is 'N passed, M failed', and the exit code is 1 on any failure.
using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.Linq;
using System.Reflection;
using ShapePoly;

public static class Assert
{
    public static void True(bool cond, string what)
    {
        if (!cond) throw new Exception("assertion failed: " + what);
    }

    public static void Equal<T>(T expected, T actual, string what = "")
    {
        if (!EqualityComparer<T>.Default.Equals(expected, actual))
            throw new Exception("expected <" + expected + "> but got <" + actual + ">" + (what == "" ? "" : " (" + what + ")"));
    }

    public static void Seq<T>(IEnumerable<T> expected, IEnumerable<T> actual, string what = "")
    {
        var e = expected.ToArray();
        var a = actual.ToArray();
        if (!e.SequenceEqual(a))
            throw new Exception("expected [" + string.Join(", ", e) + "] but got [" + string.Join(", ", a) + "]" + (what == "" ? "" : " (" + what + ")"));
    }

    public static void Close(double[] expected, IList<float> actual, double tol, string what = "")
    {
        Equal(expected.Length, actual.Count, what + " length");
        for (int i = 0; i < expected.Length; i++)
            if (!(Math.Abs(expected[i] - actual[i]) <= tol * Math.Max(1.0, Math.Abs(expected[i]))))
                throw new Exception(what + "[" + i + "]: expected " + expected[i] + " but got " + actual[i]);
    }

    public static T Throws<T>(Action a, string what = "") where T : Exception
    {
        try { a(); }
        catch (T e) { return e; }
        catch (Exception e) { throw new Exception("expected " + typeof(T).Name + " but got " + e.GetType().Name + ": " + e.Message + " " + what); }
        throw new Exception("expected " + typeof(T).Name + " but nothing was thrown " + what);
    }

    public static ShapePolyException Code(ShapePolyCode code, Action a, string what = "")
    {
        var e = Throws<ShapePolyException>(a, what);
        if (e.Code != code) throw new Exception("expected code " + code + " but got " + e.Code + ": " + e.Message + " " + what);
        return e;
    }

    public static void Contains(string haystack, string needle)
    {
        if (haystack == null || !haystack.Contains(needle))
            throw new Exception("expected text containing <" + needle + "> but got <" + haystack + ">");
    }
}

public static class TestRunner
{
    public static int Main(string[] args)
    {
        if (args.Length > 0 && args[0] == "--abi-probe") return Tests.AbiProbe();
        if (args.Length > 0 && args[0] == "--load-probe") return UsageTests.LoadProbe();
        int passed = 0, failed = 0;
        var methods = typeof(TestRunner).Assembly.GetTypes()
            .SelectMany(t => t.GetMethods(BindingFlags.Public | BindingFlags.Static))
            .Where(m => m.Name.StartsWith("Test") && m.GetParameters().Length == 0 && m.ReturnType == typeof(void))
            .Where(m => args.Length == 0 || args.Any(f => (m.DeclaringType.Name + "." + m.Name).Contains(f)))
            .OrderBy(m => m.DeclaringType.Name).ThenBy(m => m.MetadataToken);
        foreach (var m in methods)
        {
            var name = m.DeclaringType.Name + "." + m.Name;
            var sw = Stopwatch.StartNew();
            try
            {
                m.Invoke(null, null);
                passed++;
                Console.WriteLine("PASS " + name + " (" + sw.ElapsedMilliseconds + " ms)");
            }
            catch (TargetInvocationException e)
            {
                failed++;
                Console.WriteLine("FAIL " + name + ": " + e.InnerException);
            }
        }
        Console.WriteLine(passed + " passed, " + failed + " failed");
        return failed == 0 ? 0 : 1;
    }
}

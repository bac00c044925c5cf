// What a user outside the repository meets first: array sizes counted in elements, the
// assembly version (the library's), and the message when libshapepoly.so cannot be found.
using System;
using System.IO;
using System.Text.RegularExpressions;
using ShapePoly;

public static class UsageTests
{
    static void Elements(string expected, Func<object> make)
    {
        var e = Assert.Code(ShapePolyCode.InvalidArgument, () => make());
        Assert.Equal(expected, e.Message);
    }

    public static void TestNdArrayCountsElements()
    {
        const string N = "NdArray: ";
        Elements(N + "6 elements given, shape (2, 4) needs 8",
            () => new NdArray(new float[6], 2, 4));
        Elements(N + "4 elements given, shape (3,) needs 3", () => new NdArray(new double[4], 3));
        Elements(N + "2 elements given, shape () needs 1", () => new NdArray(new int[2]));
        Elements(N + "0 elements given, shape (2, 1) needs 2",
            () => new NdArray(new long[0], 2, 1));
        Elements(N + "1 elements given, shape (0, 5) needs 0",
            () => new NdArray(new bool[1], 0, 5));
        Elements(N + "dimension 1 of shape (2, -3) is negative",
            () => new NdArray(new float[6], 2, -3));
        var big = Assert.Code(ShapePolyCode.Overflow,
            () => new NdArray(new float[1], long.MaxValue, 2));
        Assert.Contains(big.Message, "overflows");
        // Matching sizes construct, including empty and rank-0 arrays.
        Assert.Seq(new long[] { 2, 4 }, new NdArray(new float[8], 2, 4).Shape);
        Assert.Equal(2, new NdArray(new int[0], 3, 0).Rank);
        Assert.Equal(1L, new NdArray(new long[] { 7 }).Length);
        Assert.Equal(1L, NdArray.Scalar(7).Length);
        Assert.Throws<ArgumentNullException>(() => new NdArray((float[])null, 1));
    }

    public static void TestConstantsAndParametersCountElements()
    {
        using (var s = new Scope())
        {
            Elements("Constant: 3 elements given, shape (2, 2) needs 4",
                () => s.Constant(new float[3], 2, 2));
            Elements("Constant: 5 elements given, shape (2,) needs 2",
                () => s.Constant(new[] { true, false, true, true, false }, 2));
            Elements("NdArray: 3 elements given, shape (4,) needs 4",
                () => s.Parameter("w", new float[3], 4));
            // Raw bytes stay counted in bytes, by the library.
            var e = Assert.Code(ShapePolyCode.InvalidArgument,
                () => s.ConstantBytes(DType.I32, new byte[3], 1));
            Assert.Contains(e.Message, "3 bytes given");
            Assert.Code(ShapePolyCode.InvalidArgument, () => s.Constant(new float[2], -1, 2));
        }
    }

    public static void TestAssemblyVersionIsTheLibrarys()
    {
        var v = typeof(Library).Assembly.GetName().Version;
        Assert.Equal(Library.Version, v.Major + "." + v.Minor + "." + v.Build, "loaded library");
        Assert.Equal(0, v.Revision);
        Assert.Equal(Library.Version, Library.BindingVersion);
        var header = File.ReadAllText(
            Path.Combine(Tests.Root, "c_api", "include", "shapepoly", "shapepoly.h"));
        Func<string, string> part =
            n => Regex.Match(header, @"#define SHP_VERSION_" + n + @" (\d+)").Groups[1].Value;
        var fromHeader = part("MAJOR") + "." + part("MINOR") + "." + part("PATCH");
        Assert.Equal(fromHeader, Library.BindingVersion, "shapepoly.h");
    }

    // Child mode (--load-probe): the first use of the binding, reporting how it failed.
    public static int LoadProbe()
    {
        for (int round = 0; round < 2; round++)  // the second use fails the same way
        {
            try
            {
                using (new Scope("n >= 1")) { }
                Console.WriteLine("loaded");
                return 0;
            }
            catch (DllNotFoundException e)
            {
                Console.WriteLine("round " + round + ": " + e.Message);
            }
            catch (Exception e)
            {
                Console.WriteLine("unexpected " + e.GetType().Name + ": " + e);
                return 5;
            }
        }
        try
        {
            Console.WriteLine(Library.Version);
            return 0;
        }
        catch (DllNotFoundException e)
        {
            Console.WriteLine("Library.Version: " + e.Message);
            return 4;
        }
    }

    public static void TestMissingLibrarySaysWhatToSet()
    {
        var empty = Tests.TempDir();
        try
        {
            var exe = typeof(UsageTests).Assembly.Location;
            var r = Tests.Exec("mono", "\"" + exe + "\" --load-probe", null, empty);
            Assert.Equal(4, r.Code, r.Output);
            foreach (var prefix in new[] { "round 0: ", "round 1: ", "Library.Version: " })
            {
                var line = Regex.Match(r.Output, "^" + Regex.Escape(prefix) + "(.*)$",
                    RegexOptions.Multiline);
                Assert.True(line.Success, "a line '" + prefix + "' in " + r.Output);
                var m = line.Groups[1].Value;
                Assert.Contains(m, "could not load libshapepoly.so");
                Assert.Contains(m, "LD_LIBRARY_PATH=<directory containing libshapepoly.so>");
                Assert.Contains(m, "ShapePoly.dll.config");
                Assert.Contains(m,
                    "<dllmap dll=\"shapepoly\" target=\"PREFIX/lib/libshapepoly.so.0\" />");
            }
            // With the library on the path, the same probe loads.
            var ok = Tests.Exec("mono", "\"" + exe + "\" --load-probe");
            Assert.Equal(0, ok.Code, ok.Output);
        }
        finally
        {
            Directory.Delete(empty, true);
        }
    }
}

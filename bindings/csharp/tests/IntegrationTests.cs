// End-to-end tests: the contract MLP, the README example, the load-time ABI check, and the
// binding's coverage of every function in shapepoly.h.
using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.IO;
using System.Linq;
using System.Reflection;
using System.Text.RegularExpressions;
using ShapePoly;

public static class Tests
{
    internal static string Root
    {
        get
        {
            var env = Environment.GetEnvironmentVariable("SHAPEPOLY_ROOT");
            if (!string.IsNullOrEmpty(env)) return env;
            // out/TestRunner.exe -> bindings/csharp/out -> repository root
            return Path.GetFullPath(Path.Combine(Path.GetDirectoryName(typeof(Tests).Assembly.Location), "..", "..", ".."));
        }
    }

    internal static string OutDir { get { return Path.GetDirectoryName(typeof(Tests).Assembly.Location); } }

    internal static (int Code, string Output) Exec(string file, string args, string workDir = null, string ldLibraryPath = null)
    {
        var psi = new ProcessStartInfo(file, args)
        {
            UseShellExecute = false,
            RedirectStandardOutput = true,
            RedirectStandardError = true,
            WorkingDirectory = workDir ?? Environment.CurrentDirectory,
        };
        if (ldLibraryPath != null) psi.EnvironmentVariables["LD_LIBRARY_PATH"] = ldLibraryPath;
        using (var p = Process.Start(psi))
        {
            var err = p.StandardError.ReadToEndAsync();
            var output = p.StandardOutput.ReadToEnd();
            p.WaitForExit();
            return (p.ExitCode, output + err.Result);
        }
    }

    internal static string TempDir()
    {
        var d = Path.Combine(Path.GetTempPath(), "shapepoly_cs_" + Guid.NewGuid().ToString("N"));
        Directory.CreateDirectory(d);
        return d;
    }

    // ---- The contract MLP

    static double[] MlpReference(float[] x, long batch)
    {
        int[] dims = { 64, 32, 32, 10 };
        var cur = x.Select(v => (double)v).ToArray();
        for (int layer = 0; layer < 3; layer++)
        {
            int nIn = dims[layer], nOut = dims[layer + 1];
            var w = MlpContract.ConstantData(2 * layer + 1, nIn * nOut);
            var b = MlpContract.ConstantData(2 * layer + 2, nOut);
            var next = new double[batch * nOut];
            for (long r = 0; r < batch; r++)
                for (int j = 0; j < nOut; j++)
                {
                    double acc = b[j];
                    for (int k = 0; k < nIn; k++) acc += cur[r * nIn + k] * w[k * nOut + j];
                    next[r * nOut + j] = layer < 2 && acc < 0 ? 0 : acc;
                }
            cur = next;
        }
        for (long r = 0; r < batch; r++)
        {
            var row = cur.Skip((int)(r * 10)).Take(10).ToArray();
            var m = row.Max();
            var sum = row.Sum(v => Math.Exp(v - m));
            for (int j = 0; j < 10; j++) cur[r * 10 + j] = Math.Exp(row[j] - m) / sum;
        }
        return cur;
    }

    public static void TestMlpEndToEnd()
    {
        byte[] bytes;
        using (var p = MlpContract.Build())
        {
            Assert.Equal("(batch, 64)", p.Inputs[0].Shape);
            Assert.Equal("(batch, 10)", p.Outputs[0].Shape);
            bytes = p.Serialize();
        }
        using (var again = MlpContract.Build()) Assert.Seq(bytes, again.Serialize(), "same calls, same bytes");
        using (var p = Program.Load(bytes))
            foreach (long batch in new long[] { 1, 7, 64 })
            {
                var probs = MlpContract.Run(p, batch);
                Assert.Close(MlpReference(MlpContract.InputData(batch), batch), probs, 1e-5, "batch " + batch);
            }
    }

    public static void TestMlpTool()
    {
        var dir = TempDir();
        try
        {
            var tool = Path.Combine(OutDir, "MlpTool.exe");
            var file = Path.Combine(dir, "mlp.shpoly");
            var r = Exec("mono", "\"" + tool + "\" export \"" + file + "\"");
            Assert.Equal(0, r.Code, r.Output);
            using (var p = MlpContract.Build()) Assert.Seq(p.Serialize(), File.ReadAllBytes(file));
            var bin = Path.Combine(dir, "out.bin");
            r = Exec("mono", "\"" + tool + "\" run \"" + file + "\" 7 \"" + bin + "\"");
            Assert.Equal(0, r.Code, r.Output);
            var raw = File.ReadAllBytes(bin);
            Assert.Equal(7 * 10 * 4, raw.Length);
            var got = new float[70];
            Buffer.BlockCopy(raw, 0, got, 0, raw.Length);
            Assert.Close(MlpReference(MlpContract.InputData(7), 7), got, 1e-5, "tool output");
            r = Exec("mono", "\"" + tool + "\" run \"" + Path.Combine(dir, "missing.shpoly") + "\" 7 \"" + bin + "\"");
            Assert.Equal(1, r.Code, r.Output);
            File.WriteAllBytes(file, new byte[] { 0, 1, 2, 3, 4, 5, 6, 7, 8 });
            r = Exec("mono", "\"" + tool + "\" run \"" + file + "\" 7 \"" + bin + "\"");
            Assert.Equal(1, r.Code, r.Output);
            Assert.Contains(r.Output, "InvalidProgram");
            Assert.Equal(2, Exec("mono", "\"" + tool + "\"").Code);
        }
        finally
        {
            Directory.Delete(dir, true);
        }
    }

    // ---- The README example, compiled and run as written

    public static void TestReadmeExample()
    {
        var readme = File.ReadAllText(Path.Combine(Root, "README.md"));
        var section = Regex.Match(readme, @"^## [^\n]*C#[^\n]*\n(.*?)(?=^## |\z)", RegexOptions.Multiline | RegexOptions.Singleline);
        Assert.True(section.Success, "README has a '## ... C# ...' section");
        var code = Regex.Match(section.Groups[1].Value, @"```csharp\n(.*?)```", RegexOptions.Singleline);
        Assert.True(code.Success, "the C# section has a ```csharp block");
        var expected = Regex.Match(section.Groups[1].Value, @"```text\n(.*?)```", RegexOptions.Singleline);
        Assert.True(expected.Success, "the C# section shows the output in a ```text block");
        var dir = TempDir();
        try
        {
            File.WriteAllText(Path.Combine(dir, "Example.cs"), code.Groups[1].Value);
            File.Copy(Path.Combine(OutDir, "ShapePoly.dll"), Path.Combine(dir, "ShapePoly.dll"));
            var c = Exec("mcs", "-nologo -langversion:7.2 -r:ShapePoly.dll -out:Example.exe Example.cs", dir);
            Assert.Equal(0, c.Code, c.Output);
            var r = Exec("mono", "Example.exe", dir);
            Assert.Equal(0, r.Code, r.Output);
            Assert.Equal(expected.Groups[1].Value.Trim(), r.Output.Trim().Replace("\r", ""), "README output");
        }
        finally
        {
            Directory.Delete(dir, true);
        }
    }

    // ---- ABI check at load time

    // Child mode (--abi-probe): touch the library and report what happened.
    public static int AbiProbe()
    {
        try
        {
            Console.WriteLine("loaded " + Library.Version);
            return 0;
        }
        catch (TypeInitializationException e) when (e.InnerException is ShapePolyException)
        {
            var inner = (ShapePolyException)e.InnerException;
            Console.WriteLine(inner.Code + ": " + inner.Message);
            return 3;
        }
    }

    public static void TestAbiMismatchFailsAtLoad()
    {
        var dir = TempDir();
        try
        {
            File.WriteAllText(Path.Combine(dir, "fake.c"),
                "int shp_abi_version(void) { return 99; }\nconst char* shp_version_string(void) { return \"9.9.9\"; }\n");
            var cc = Exec("cc", "-shared -fPIC -o libshapepoly.so fake.c", dir);
            Assert.Equal(0, cc.Code, cc.Output);
            var exe = typeof(Tests).Assembly.Location;
            var r = Exec("mono", "\"" + exe + "\" --abi-probe", null, dir);
            Assert.Equal(3, r.Code, r.Output);
            Assert.Contains(r.Output, "VersionMismatch: libshapepoly ABI version mismatch: the loaded library has ABI 99 but the C# binding ShapePoly.dll was built for ABI 1");
            // And with the real library the probe loads.
            var ok = Exec("mono", "\"" + exe + "\" --abi-probe");
            Assert.Equal(0, ok.Code, ok.Output);
        }
        finally
        {
            Directory.Delete(dir, true);
        }
    }

    // ---- Coverage: every function of shapepoly.h has a P/Invoke declaration

    public static void TestBindingCoversEveryCFunction()
    {
        // The stable header and the experimental one (test-only functions the tests call).
        var header = File.ReadAllText(Path.Combine(Root, "c_api", "include", "shapepoly", "shapepoly.h")) +
                     File.ReadAllText(Path.Combine(Root, "c_api", "include", "shapepoly", "shapepoly_experimental.h"));
        var declared = Regex.Matches(header, @"SHP_API\b[^;]*?\b(shp_\w+)\s*\(").Cast<Match>().Select(m => m.Groups[1].Value).Distinct().ToList();
        Assert.True(declared.Count > 100, "parsed " + declared.Count + " functions from the header");
        var native = typeof(Library).Assembly.GetType("ShapePoly.NativeMethods", true)
            .GetMethods(BindingFlags.NonPublic | BindingFlags.Static).Select(m => m.Name).ToList();
        // Functions whose binding is still to come, each with the reason (none now: every
        // function of the header is declared and wrapped).
        var notWrapped = new Dictionary<string, string>();
        var missing = declared.Where(f => !native.Contains(f) && !notWrapped.ContainsKey(f)).ToList();
        Assert.True(missing.Count == 0, "functions without a binding: " + string.Join(", ", missing));
        var extra = native.Where(n => n.StartsWith("shp_") && !declared.Contains(n)).ToList();
        Assert.True(extra.Count == 0, "bindings of functions the header lacks: " + string.Join(", ", extra));
        // Declared is not wrapped: each declaration must be called by the safe layer, except
        // these, each with the reason.
        var notCalled = new Dictionary<string, string> {
            ["shp_array_create"] = "NdArray keeps its data in managed arrays: inputs and RunInto outputs are " +
                                   "pinned and wrapped (shp_array_wrap), run outputs copied out, so a C-allocated array is never needed",
        };
        var called = NativeCallsOutsideNativeMethods();
        var unused = declared.Where(f => !called.Contains(f) && !notWrapped.ContainsKey(f) && !notCalled.ContainsKey(f)).ToList();
        Assert.True(unused.Count == 0, "declared but never called by the binding: " + string.Join(", ", unused));
        var stale = notCalled.Keys.Where(called.Contains).ToList();
        Assert.True(stale.Count == 0, "listed as not called but called: " + string.Join(", ", stale));
    }

    // The shp_* functions of NativeMethods that some other method of ShapePoly.dll (lambdas
    // included) calls or takes as a delegate, found in the IL: call, callvirt and ldftn operands.
    static HashSet<string> NativeCallsOutsideNativeMethods()
    {
        var asm = typeof(Library).Assembly;
        var nativeType = asm.GetType("ShapePoly.NativeMethods", true);
        var found = new HashSet<string>();
        const BindingFlags all = BindingFlags.Public | BindingFlags.NonPublic | BindingFlags.Instance |
                                 BindingFlags.Static | BindingFlags.DeclaredOnly;
        foreach (var type in asm.GetTypes())
        {
            if (type == nativeType) continue;
            var methods = type.GetMethods(all).Cast<MethodBase>().Concat(type.GetConstructors(all));
            foreach (var m in methods)
            {
                var body = m.GetMethodBody();
                if (body == null) continue;
                var il = body.GetILAsByteArray();
                for (int i = 0; i + 4 < il.Length; i++)
                {
                    bool call = il[i] == 0x28 || il[i] == 0x6F;                  // call, callvirt
                    bool ldftn = il[i] == 0xFE && i + 5 < il.Length && il[i + 1] == 0x06;
                    if (!call && !ldftn) continue;
                    int at = ldftn ? i + 2 : i + 1;
                    int token = BitConverter.ToInt32(il, at);
                    if ((token >> 24) != 0x06) continue;                       // a MethodDef of this assembly
                    MethodBase target;
                    try { target = m.Module.ResolveMethod(token); }
                    catch (ArgumentException) { continue; }
                    if (target.DeclaringType == nativeType && target.Name.StartsWith("shp_")) found.Add(target.Name);
                }
            }
        }
        return found;
    }
}

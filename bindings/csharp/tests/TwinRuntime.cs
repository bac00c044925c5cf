// Tests run programs through TwinRuntime: it serializes the program, reloads it, and runs the
// reloaded copy and the program as traced on the same calls. A program that saves but does not
// load, or computes something else once loaded, fails every test that runs it.
using System;
using System.Collections.Generic;
using System.Linq;
using System.Reflection;
using System.Runtime.ExceptionServices;
using ShapePoly;

public sealed class TwinRuntime : IDisposable
{
    readonly Program loadedProgram;
    readonly Runtime loaded;  // results, statistics and exceptions the tests see come from it
    readonly Runtime traced;

    // Serializes p and loads the bytes; the copy must serialize to the same bytes and list the
    // same text.
    public static Program Reload(Program p)
    {
        var bytes = p.Serialize();
        Program q;
        try { q = Program.Load(bytes); }
        catch (ShapePolyException e)
        {
            throw new Exception("the program serializes but does not load: " + e.Code + ": " + e.Message + "\n" + p.ToText());
        }
        if (!bytes.SequenceEqual(q.Serialize())) throw new Exception("the loaded program serializes to other bytes");
        if (q.ToText() != p.ToText()) throw new Exception("listing after reload:\n" + q.ToText() + "\nbefore:\n" + p.ToText());
        return q;
    }

    public TwinRuntime(Program p, RuntimeOptions options = null)
    {
        loadedProgram = Reload(p);
        loaded = new Runtime(loadedProgram, options);
        traced = new Runtime(p, options);
    }

    public void Dispose()
    {
        loaded.Dispose();
        traced.Dispose();
        loadedProgram.Dispose();
    }

    public IReadOnlyList<string> InputNames { get { return loaded.InputNames; } }
    public IReadOnlyList<string> OutputNames { get { return loaded.OutputNames; } }
    public ulong PlansBuilt { get { return loaded.PlansBuilt; } }
    public ulong CacheHits { get { return loaded.CacheHits; } }
    public long LastPlanBuildNs { get { return loaded.LastPlanBuildNs; } }
    public int NumThreads { get { return loaded.NumThreads; } }
    public string SimdTarget { get { return loaded.SimdTarget; } }
    // Both copies must pick the same variant.
    public int LastVariant
    {
        get
        {
            if (loaded.LastVariant != traced.LastVariant)
                throw new Exception("variant after reload " + loaded.LastVariant + ", as traced " + traced.LastVariant);
            return loaded.LastVariant;
        }
    }
    public ulong VariantPlansBuilt(int v) { return loaded.VariantPlansBuilt(v); }
    public ulong VariantCacheHits(int v) { return loaded.VariantCacheHits(v); }

    public Dictionary<string, NdArray> Run(IDictionary<string, NdArray> inputs)
    {
        return Both("Run", rt => rt.Run(inputs), SameOutputs);
    }

    public Dictionary<string, NdArray> Run(params (string Name, NdArray Array)[] inputs)
    {
        return Both("Run", rt => RunTuples(rt, inputs), SameOutputs);
    }

    // mcs rejects passing a tuple array to the params overload in normal form (it compares
    // the tuple types as different), so the call goes through reflection.
    static readonly MethodInfo RunParams = typeof(Runtime).GetMethods()
        .Single(m => m.Name == "Run" && m.GetParameters()[0].ParameterType.IsArray);

    static Dictionary<string, NdArray> RunTuples(Runtime rt, object inputs)
    {
        try { return (Dictionary<string, NdArray>)RunParams.Invoke(rt, new[] { inputs }); }
        catch (TargetInvocationException e)
        {
            ExceptionDispatchInfo.Capture(e.InnerException).Throw();
            throw;
        }
    }

    public Dictionary<string, NdArray> RunPositional(params NdArray[] inputs)
    {
        return Both("RunPositional", rt => rt.RunPositional(inputs), SameOutputs);
    }

    // The reloaded program writes into the caller's outputs, the traced one into fresh arrays
    // of the same dtypes and shapes.
    public void RunInto(IDictionary<string, NdArray> inputs, IDictionary<string, NdArray> outputs)
    {
        var fresh = outputs == null ? null : outputs.ToDictionary(kv => kv.Key,
            kv => kv.Value == null ? null : NdArray.Zeros(kv.Value.DType, kv.Value.Shape));
        Both("RunInto", rt =>
        {
            rt.RunInto(inputs, rt == loaded ? outputs : fresh);
            return rt == loaded ? outputs : fresh;
        }, (a, b) => SameOutputs(new Dictionary<string, NdArray>(a), new Dictionary<string, NdArray>(b)));
    }

    public Dictionary<string, long[]> DryRun(IDictionary<string, long[]> shapes, IDictionary<string, DType> dtypes = null)
    {
        return Both("DryRun", rt => rt.DryRun(shapes, dtypes), (a, b) =>
        {
            Assert.Seq(b.Keys, a.Keys, "DryRun outputs after reload");
            foreach (var kv in a) Assert.Seq(b[kv.Key], kv.Value, "DryRun shape of '" + kv.Key + "' after reload");
        });
    }

    public long[] OutputShape(int i)
    {
        return Both("OutputShape", rt => rt.OutputShape(i), (a, b) => Assert.Seq(b, a, "OutputShape after reload"));
    }

    public (bool DataDependent, long Min, long Max) OutputDimBounds(int i, int axis)
    {
        return Both("OutputDimBounds", rt => rt.OutputDimBounds(i, axis), (a, b) => Assert.Equal(b, a, "OutputDimBounds after reload"));
    }

    public long Cost(CostKind kind, IDictionary<string, long[]> shapes, IDictionary<string, DType> dtypes = null)
    {
        return Both("Cost", rt => rt.Cost(kind, shapes, dtypes), (a, b) => Assert.Equal(b, a, "Cost after reload"));
    }

    // Calls f on both runtimes: both must throw the same exception (type, code, message) or
    // both return results that `same` accepts. Returns or rethrows the reloaded program's.
    T Both<T>(string what, Func<Runtime, T> f, Action<T, T> same)
    {
        T a = default(T), b = default(T);
        Exception ea = null, eb = null;
        try { a = f(loaded); } catch (Exception e) { ea = e; }
        try { b = f(traced); } catch (Exception e) { eb = e; }
        if ((ea == null) != (eb == null) || (ea != null && Describe(ea) != Describe(eb)))
            throw new Exception(what + ": the reloaded program gives " + (ea == null ? "a result" : Describe(ea)) +
                                ", the traced one " + (eb == null ? "a result" : Describe(eb)));
        if (ea != null) ExceptionDispatchInfo.Capture(ea).Throw();
        same(a, b);
        return a;
    }

    static string Describe(Exception e)
    {
        var sp = e as ShapePolyException;
        return e.GetType().Name + (sp != null ? " " + sp.Code : "") + ": " + e.Message;
    }

    static void SameOutputs(Dictionary<string, NdArray> loaded, Dictionary<string, NdArray> traced)
    {
        Assert.Seq(traced.Keys, loaded.Keys, "output names after reload");
        foreach (var kv in loaded)
        {
            var diff = Diff(kv.Value, traced[kv.Key]);
            if (diff != null) throw new Exception("output '" + kv.Key + "' after reload differs from the traced program's: " + diff);
        }
    }

    // How a and b differ (null if equal: same dtype, shape and bits; NaNs of any payload match).
    public static string Diff(NdArray a, NdArray b)
    {
        if (a.DType != b.DType || !a.Shape.SequenceEqual(b.Shape)) return a + " vs " + b;
        for (int i = 0; i < a.Data.Length; i++)
        {
            object x = a.Data.GetValue(i), y = b.Data.GetValue(i);
            bool same;
            if (x is float)
                same = BitConverter.GetBytes((float)x).SequenceEqual(BitConverter.GetBytes((float)y)) || (float.IsNaN((float)x) && float.IsNaN((float)y));
            else if (x is double)
                same = BitConverter.DoubleToInt64Bits((double)x) == BitConverter.DoubleToInt64Bits((double)y) || (double.IsNaN((double)x) && double.IsNaN((double)y));
            else if (a.DType == DType.F16)
                same = x.Equals(y) || (F16Bits.IsNaN((ushort)x) && F16Bits.IsNaN((ushort)y));
            else if (a.DType == DType.BF16)
                same = x.Equals(y) || (BF16Bits.IsNaN((ushort)x) && BF16Bits.IsNaN((ushort)y));
            else
                same = x.Equals(y);
            if (!same) return "element " + i + ": " + x + " vs " + y;
        }
        return null;
    }
}

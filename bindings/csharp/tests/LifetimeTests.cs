using System;
using System.IO;
using System.Linq;
using ShapePoly;

public static class LifetimeTests
{
    public static void TestObjectDisposedAfterDispose()
    {
        var s = new Scope();
        var d = s.Variable("n");
        var x = s.Input("x", DType.F32, "n");
        var p = s.CreateProgram(new[] { x }, ("y", x.Exp()));
        s.Dispose();
        s.Dispose();  // idempotent
        Assert.True(s.IsDisposed, "IsDisposed");
        Assert.Throws<ObjectDisposedException>(() => d.ToString());
        Assert.Throws<ObjectDisposedException>(() => { var e = d + 1; GC.KeepAlive(e); });
        Assert.Throws<ObjectDisposedException>(() => x.Exp());
        Assert.Throws<ObjectDisposedException>(() => s.Parse("n"));
        // The program is independent of its scope.
        var rt = new Runtime(p);
        Assert.Equal("(n,)", p.Inputs[0].Shape);
        p.Dispose();
        Assert.Throws<ObjectDisposedException>(() => p.Serialize());
        Assert.Throws<ObjectDisposedException>(() => new Runtime(p));
        Assert.Seq(new long[] { 2 }, rt.Run(("x", new NdArray(new float[2], 2)))["y"].Shape);
        rt.Dispose();
        Assert.Throws<ObjectDisposedException>(() => rt.Run(("x", new NdArray(new float[2], 2))));
        var o = new RuntimeOptions();
        o.Dispose();
        Assert.Throws<ObjectDisposedException>(() => o.NumThreads = 2);
        Assert.Throws<InvalidOperationException>(() => default(Tensor).Exp());
    }

    static long RssBytes()
    {
        var fields = File.ReadAllText("/proc/self/statm").Split(' ');
        return long.Parse(fields[1]) * 4096;
    }

    // One round of everything that allocates native memory, including error paths.
    static void Churn(bool dispose)
    {
        var s = new Scope("n <= 100000");
        var x = s.Input("x", DType.F32, "n, 64");
        var w = s.Constant(new float[64 * 64], 64, 64);  // 16 KiB per scope, copied into the program
        var y = x.MatMul(w).Softmax(1);
        var d = (s.Variable("n") * 2 + 1).FloorDiv(3);
        GC.KeepAlive(d.ToString());
        try { s.Parse("n +"); } catch (ShapePolyException) { }
        var p = s.CreateProgram(new[] { x }, ("y", y));
        var q = Program.Load(p.Serialize());
        var opts = new RuntimeOptions { NumThreads = 1 };
        var rt = new Runtime(q, opts);
        var outs = rt.Run(("x", new NdArray(new float[4 * 64], 4, 64)));
        GC.KeepAlive(outs);
        try { rt.Run(("x", new NdArray(new float[4 * 63], 4, 63))); } catch (ShapePolyException) { }
        GC.KeepAlive(p.ToText());
        if (dispose)
        {
            rt.Dispose();
            opts.Dispose();
            q.Dispose();
            p.Dispose();
            s.Dispose();
        }
    }

    static void Settle()
    {
        for (int i = 0; i < 3; i++) { GC.Collect(); GC.WaitForPendingFinalizers(); }
    }

    public static void TestNoLeaksDisposeAndFinalize()
    {
        const int N = 2000;
        for (int i = 0; i < 300; i++) { Churn(true); Churn(false); }  // warm up pools, caches, JIT
        Settle();
        long before = RssBytes();
        for (int i = 0; i < N; i++) Churn(true);
        Settle();
        long afterDispose = RssBytes();
        for (int i = 0; i < N; i++)
        {
            Churn(false);
            if (i % 200 == 199) Settle();  // finalizers release the native objects
        }
        Settle();
        long afterFinalize = RssBytes();
        // A leaked scope or program alone would be >= 16 KiB per round: >= 32 MB for N rounds.
        const long limit = 12L << 20;
        Console.WriteLine("    RSS: start " + (before >> 20) + " MB, after " + N + " disposed rounds " + (afterDispose >> 20) +
                          " MB, after " + N + " finalized rounds " + (afterFinalize >> 20) + " MB");
        Assert.True(afterDispose - before < limit, "RSS grew by " + ((afterDispose - before) >> 10) + " KiB with Dispose");
        Assert.True(afterFinalize - before < limit, "RSS grew by " + ((afterFinalize - before) >> 10) + " KiB with finalizers");
    }
}

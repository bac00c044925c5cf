using System;
using System.Collections.Generic;
using System.IO;
using System.Linq;
using ShapePoly;

public static class ProgramTests
{
    // x: f32[batch, 784] -> probs: f32[batch, 10], with a constraint and a reshape assertion.
    internal static Program Classifier()
    {
        using (var s = new Scope("batch <= 4096"))
        {
            var x = s.Input("x", DType.F32, "batch, 784");
            var w = s.Constant(Enumerable.Range(0, 7840).Select(i => (i % 7) / 100f).ToArray(), 784, 10);
            var probs = x.MatMul(w).Softmax(1);
            return s.CreateProgram(new[] { x }, ("probs", probs));
        }
    }

    public static void TestIntrospectionAndListing()
    {
        using (var p = Classifier())
        {
            Assert.Equal(1, p.Inputs.Count);
            Assert.Equal("x", p.Inputs[0].Name);
            Assert.Equal(DType.F32, p.Inputs[0].DType);
            Assert.Equal(InputRole.Data, p.Inputs[0].Role);
            Assert.Equal("(batch, 784)", p.Inputs[0].Shape);
            Assert.Equal("probs", p.Outputs[0].Name);
            Assert.Equal(DType.F32, p.Outputs[0].DType);
            Assert.Equal("(batch, 10)", p.Outputs[0].Shape);
            Assert.Seq(new[] { "batch" }, p.Variables);
            Assert.Seq(new[] { "batch <= 4096" }, p.Constraints);
            Assert.Equal(0, p.Assertions.Count);
            var text = p.ToText();
            Assert.Contains(text, "program(x: f32[batch, 784]) -> (probs: f32[batch, 10])");
            Assert.Contains(text, "softmax");
            Assert.Equal(text, p.ToString());
        }
    }

    public static void TestReshapeAssertionIsCarried()
    {
        using (var s = new Scope())
        {
            var x = s.Input("x", DType.F32, "n");
            var y = x.Reshape(null, s.Constant(4));
            using (var p = s.CreateProgram(new[] { x }, ("y", y)))
            {
                Assert.Equal(1, p.Assertions.Count);
                Assert.Contains(p.Assertions[0].Text, "mod(n, 4)");
                using (var rt = new TwinRuntime(p))
                {
                    Assert.Seq(new long[] { 2, 4 }, rt.Run(("x", new NdArray(new float[8], 8)))["y"].Shape);
                    Assert.Code(ShapePolyCode.ConstraintViolation, () => rt.Run(("x", new NdArray(new float[7], 7))));
                }
            }
        }
    }

    public static void TestProgramCreateErrors()
    {
        using (var s = new Scope())
        {
            var x = s.Input("x", DType.F32, "n");
            var y = s.Input("y", DType.F32, "n");
            var z = x + y;
            Assert.Code(ShapePolyCode.InvalidArgument, () => s.CreateProgram(new[] { x }, ("z", z)), "unlisted input y");
            Assert.Code(ShapePolyCode.InvalidArgument, () => s.CreateProgram(new[] { x, y }, ("z", z), ("z", x)), "duplicate name");
            Assert.Code(ShapePolyCode.InvalidArgument, () => s.CreateProgram(new[] { x, z }, ("z", z)), "non-input as input");
            var m = s.Input("m", DType.F32, "a*b");
            Assert.Code(ShapePolyCode.Unsolvable, () => s.CreateProgram(new[] { m }, ("m2", m.Exp())));
            using (var other = new Scope())
            {
                var o = other.Input("o", DType.F32, "n");
                Assert.Code(ShapePolyCode.ScopeMismatch, () => s.CreateProgram(new[] { o }, ("o", o.Exp())));
                Assert.Code(ShapePolyCode.ScopeMismatch, () => { var t = x + o; GC.KeepAlive(t); });
            }
            Assert.Code(ShapePolyCode.ParseError, () => s.Input("bad", DType.F32, "n,, 3"));
            Assert.Code(ShapePolyCode.InvalidArgument, () => s.Input("", DType.F32, "n"));
        }
    }

    public static void TestSerializeLoadRoundTrip()
    {
        using (var p = Classifier())
        {
            var bytes = p.Serialize();
            Assert.Equal("SHP1", System.Text.Encoding.ASCII.GetString(bytes, 4, 4));
            using (var q = Program.Load(bytes))
            {
                Assert.Seq(bytes, q.Serialize(), "deterministic bytes");
                Assert.Equal(p.ToText(), q.ToText());
            }
            var path = Path.Combine(Path.GetTempPath(), "shapepoly_cs_" + Guid.NewGuid().ToString("N") + ".shpoly");
            try
            {
                p.SaveFile(path);
                Assert.Seq(bytes, File.ReadAllBytes(path));
                using (var q = Program.LoadFile(path))
                using (var rt = new Runtime(q))
                    Assert.Seq(new long[] { 3, 10 }, rt.Run(("x", new NdArray(new float[3 * 784], 3, 784)))["probs"].Shape);
            }
            finally
            {
                File.Delete(path);
            }
        }
    }

    public static void TestLoadOptionsCapTheConstants()
    {
        using (var p = Classifier())
        using (var o = new LoadOptions())
        {
            var bytes = p.Serialize();
            const long total = 7840 * 4; // the constant's bytes
            Assert.Equal(LoadOptions.DefaultMaxBytes, o.MaxBytes);
            using (var q = Program.Load(bytes, o)) Assert.Seq(bytes, q.Serialize(), "default cap");
            using (var q = Program.Load(bytes, (LoadOptions)null)) Assert.Seq(bytes, q.Serialize(), "null options");
            o.MaxBytes = total;
            using (var q = Program.Load(bytes, o)) Assert.Equal(1, q.Inputs.Count);
            o.MaxBytes = total - 1;
            var e = Assert.Code(ShapePolyCode.InvalidProgram, () => Program.Load(bytes, o));
            Assert.Contains(e.Message, "max_bytes = " + (total - 1));
            Assert.Contains(e.Message, "shp_load_options_set_max_bytes");
            Assert.Code(ShapePolyCode.InvalidArgument, () => o.MaxBytes = -1);
            o.Dispose();
            Assert.Throws<ObjectDisposedException>(() => Program.Load(bytes, o));
        }
    }

    public static void TestCorruptPrograms()
    {
        var e = Assert.Code(ShapePolyCode.InvalidProgram, () => Program.Load(new byte[] { 1, 2, 3, 4, 5, 6, 7, 8 }));
        Assert.Contains(e.Message, "not a shapepoly program");
        Assert.Code(ShapePolyCode.InvalidProgram, () => Program.Load(new byte[0]));
        using (var p = Classifier())
        {
            var bytes = p.Serialize();
            Assert.Code(ShapePolyCode.InvalidProgram, () => Program.Load(bytes.Take(bytes.Length / 2).ToArray()), "truncated");
            // A corrupt file on disk: flip bytes everywhere; every load either fails cleanly or verifies.
            var path = Path.Combine(Path.GetTempPath(), "shapepoly_cs_corrupt_" + Guid.NewGuid().ToString("N") + ".shpoly");
            try
            {
                var bad = (byte[])bytes.Clone();
                for (int i = 8; i < bad.Length; i += 13) bad[i] ^= 0x5a;
                File.WriteAllBytes(path, bad);
                Assert.Code(ShapePolyCode.InvalidProgram, () => Program.LoadFile(path));
            }
            finally
            {
                File.Delete(path);
            }
            for (int i = 0; i < bytes.Length; i += 7)
            {
                var bad = (byte[])bytes.Clone();
                bad[i] ^= 0xff;
                try { using (Program.Load(bad)) { } }
                catch (ShapePolyException ex)
                {
                    Assert.True(ex.Code == ShapePolyCode.InvalidProgram || ex.Code == ShapePolyCode.VersionMismatch, "byte " + i + ": " + ex.Code);
                }
            }
        }
        var missing = Assert.Throws<ShapePolyException>(() => Program.LoadFile("/nonexistent/x.shpoly"));
        Assert.True(missing.Code == ShapePolyCode.NotFound, "a missing file: " + missing.Code);
        Assert.True(missing.Message.Contains("/nonexistent/x.shpoly': No such file"), missing.Message);
        Assert.Throws<ArgumentNullException>(() => Program.Load(null));
    }

    public static void TestCheckShapes()
    {
        using (var p = Classifier())
        {
            var c = p.CheckShapes(new Dictionary<string, long[]> { { "x", new long[] { 7, 784 } } });
            Assert.Equal(7L, c.Variables["batch"]);
            Assert.Seq(new long[] { 7, 10 }, c.OutputShapes["probs"]);
            var e = Assert.Code(ShapePolyCode.ShapeMismatch, () => p.CheckShapes(new Dictionary<string, long[]> { { "x", new long[] { 7, 785 } } }));
            Assert.Equal("input 'x': axis 1 is 785 but the program requires 784", e.Message);
            Assert.Code(ShapePolyCode.NotFound, () => p.CheckShapes(new Dictionary<string, long[]> { { "y", new long[] { 7, 784 } } }));
            Assert.Code(ShapePolyCode.ConstraintViolation, () => p.CheckShapes(new Dictionary<string, long[]> { { "x", new long[] { 5000, 784 } } }));
        }
    }
}

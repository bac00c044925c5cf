// Program metadata: set, read, saved and loaded back, kept by Grad, removed, and the errors.
using System;
using System.Collections.Generic;
using System.Linq;
using ShapePoly;

public static class MetadataTests
{
    static Program Small()
    {
        using (var s = new Scope())
        {
            var x = s.Input("x", DType.F32, "n, 3");
            return s.CreateProgram(new[] { x }, ("y", x.Tanh().Sum()));
        }
    }

    public static void TestMetadataIsSavedWithTheProgram()
    {
        using (var p = Small())
        using (var a = p.WithMetadata("onnx.names", "{\"inputs\": {}}"))
        using (var q = a.WithMetadata("author", "\u00e9t\u00e9"))
        {
            Assert.Equal(0, p.Metadata.Count);
            var want = new[] { "author=\u00e9t\u00e9", "onnx.names={\"inputs\": {}}" };
            Func<Program, string[]> entries = r => r.Metadata.Select(kv => kv.Key + "=" + kv.Value).ToArray();
            Assert.True(entries(q).SequenceEqual(want), string.Join(", ", entries(q)));
            using (var loaded = Program.Load(q.Serialize()))
            using (var grad = loaded.Grad("y", "x"))
            using (var one = loaded.WithMetadata("author", null))
            using (var none = one.WithMetadata("onnx.names", null))
            {
                Assert.True(entries(loaded).SequenceEqual(want), "loaded");
                Assert.Equal("\u00e9t\u00e9", loaded.MetadataValue("author"));
                Assert.Equal(null, loaded.MetadataValue("missing"));
                Assert.True(entries(grad).SequenceEqual(want), "grad keeps it");
                Assert.True(none.Serialize().SequenceEqual(p.Serialize()), "all removed: the original bytes");
            }
            Assert.Contains(Assert.Code(ShapePolyCode.InvalidArgument, () => p.WithMetadata("", "v")).Message,
                            "key must not be empty");
            Assert.Contains(Assert.Code(ShapePolyCode.InvalidArgument, () => p.WithMetadata(new string('k', 257), "v")).Message,
                            "above the limit of 256");
            Assert.Contains(Assert.Code(ShapePolyCode.InvalidArgument, () => p.WithMetadata("k", new string('v', (1 << 20) + 1))).Message,
                            "above the limit of 1048576");
            Assert.Throws<ArgumentException>(() => p.WithMetadata("k", "a\0b"));
            Assert.Throws<ArgumentNullException>(() => p.WithMetadata(null, "v"));
        }
    }
}

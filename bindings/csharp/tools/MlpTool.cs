// The C# side of tests/cross_language/MLP_CONTRACT.md.
//   mono MlpTool.exe export OUT.shpoly           trace the MLP, serialize it to OUT.shpoly
//   mono MlpTool.exe run FILE.shpoly BATCH OUT.bin  load, run at batch BATCH with input "x",
//                                                  write output "probs" as raw f32 (little-endian)
//   mono MlpTool.exe grad-run FILE.shpoly BATCH OUT.bin  load the derived grad program, print its
//                                                  signature, run it at BATCH (defaults left out,
//                                                  then given by name: the same bits), write
//                                                  every output in order as raw f32
// Build: bindings/csharp/build.sh (writes bindings/csharp/out/MlpTool.exe next to ShapePoly.dll);
// run with LD_LIBRARY_PATH pointing at the directory of libshapepoly.so (e.g. build/lib).
using System;
using System.Collections.Generic;
using System.IO;
using System.Text;
using ShapePoly;

/// <summary>The MLP of the contract: the same C API calls in the same order as mlp_ref.c.</summary>
public static class MlpContract
{
    /// <summary>Constant element k of seed s: ((k*7919 + s*104729) % 2001 - 1000) / 10000 in f32.</summary>
    public static float[] ConstantData(int seed, long count)
    {
        var v = new float[count];
        for (long k = 0; k < count; k++)
        {
            float num = (float)(((k * 7919L + seed * 104729L) % 2001L) - 1000L);
            v[k] = (float)(num / 10000.0f);
        }
        return v;
    }

    /// <summary>The input x of shape [batch, 64]: ((k*31 + 7) % 17 - 8) / 8 in f32.</summary>
    public static float[] InputData(long batch)
    {
        var v = new float[batch * 64];
        for (long k = 0; k < v.Length; k++)
        {
            float num = (float)(((k * 31L + 7L) % 17L) - 8L);
            v[k] = (float)(num / 8.0f);
        }
        return v;
    }

    /// <summary>Traces the MLP in a new scope and creates the program (input "x", output "probs").</summary>
    public static Program Build()
    {
        using (var s = new Scope())
        {
            var x = s.Input("x", DType.F32, "batch, 64");
            var w1 = s.Constant(ConstantData(1, 64 * 32), 64, 32);
            var b1 = s.Constant(ConstantData(2, 32), 32);
            var w2 = s.Constant(ConstantData(3, 32 * 32), 32, 32);
            var b2 = s.Constant(ConstantData(4, 32), 32);
            var w3 = s.Constant(ConstantData(5, 32 * 10), 32, 10);
            var b3 = s.Constant(ConstantData(6, 10), 10);
            var zero = s.Constant(new float[] { 0.0f });  // rank 0
            var h1 = x.MatMul(w1).Add(b1).Maximum(zero);
            var h2 = h1.MatMul(w2).Add(b2).Maximum(zero);
            var logits = h2.MatMul(w3).Add(b3);
            var probs = logits.Softmax(1);
            return s.CreateProgram(new[] { x }, ("probs", probs));
        }
    }

    /// <summary>Runs a loaded program at <paramref name="batch"/> with the contract's input.</summary>
    public static float[] Run(Program program, long batch)
    {
        using (var rt = new Runtime(program))
        {
            var outs = rt.Run(("x", new NdArray(InputData(batch), batch, 64)));
            return outs["probs"].AsFloat();
        }
    }

    /// <summary>The derived program's one-hot labels [batch, 10]: row r has class (3r + 1) mod 10.</summary>
    public static float[] LabelsData(long batch)
    {
        var v = new float[batch * 10];
        for (long r = 0; r < batch; r++) v[r * 10 + (3 * r + 1) % 10] = 1.0f;
        return v;
    }

    /// <summary>The signature as the cross-language tools print it: "input NAME ROLE [default]"
    /// per input, then "output NAME ROLE" per output.</summary>
    public static string Signature(Program program)
    {
        var sb = new StringBuilder();
        foreach (var i in program.Inputs)
            sb.Append("input ").Append(i.Name).Append(' ').Append(i.Role.ToString().ToLowerInvariant())
              .Append(i.HasDefault ? " default" : "").Append('\n');
        foreach (var o in program.Outputs)
            sb.Append("output ").Append(o.Name).Append(' ').Append(o.Role.ToString().ToLowerInvariant()).Append('\n');
        return sb.ToString();
    }

    /// <summary>Runs the derived grad program at <paramref name="batch"/> with "x" and "labels"
    /// by name, every defaulted input left out; then again with each given its default by name,
    /// which must not change a bit. Returns every output in the program's order, concatenated.</summary>
    public static float[] RunGrad(Program program, long batch)
    {
        using (var rt = new Runtime(program))
        {
            var inputs = new Dictionary<string, NdArray>
            {
                { "x", new NdArray(InputData(batch), batch, 64) },
                { "labels", new NdArray(LabelsData(batch), batch, 10) },
            };
            var plain = rt.Run(inputs);
            var ins = program.Inputs;
            for (int i = 0; i < ins.Count; i++)
                if (ins[i].HasDefault) inputs[ins[i].Name] = program.InputDefault(i);
            var given = rt.Run(inputs);
            var all = new List<float>();
            foreach (var name in rt.OutputNames)
            {
                var a = plain[name].AsFloat();
                var b = given[name].AsFloat();
                for (int k = 0; k < a.Length; k++)
                    if (k >= b.Length || BitConverter.ToInt32(BitConverter.GetBytes(a[k]), 0) != BitConverter.ToInt32(BitConverter.GetBytes(b[k]), 0))
                        throw new ShapePolyException(ShapePolyCode.Internal, "giving the defaults by name changed output " + name);
                all.AddRange(a);
            }
            return all.ToArray();
        }
    }

    /// <summary>Raw little-endian float32 bytes.</summary>
    public static byte[] ToLittleEndianBytes(float[] v)
    {
        var bytes = new byte[v.Length * 4];
        Buffer.BlockCopy(v, 0, bytes, 0, bytes.Length);
        if (!BitConverter.IsLittleEndian)
            for (int i = 0; i < bytes.Length; i += 4) Array.Reverse(bytes, i, 4);
        return bytes;
    }
}

public static class MlpTool
{
    public static int Main(string[] args)
    {
        try
        {
            if (args.Length == 2 && args[0] == "export")
            {
                using (var p = MlpContract.Build()) p.SaveFile(args[1]);
                return 0;
            }
            long batch;
            if (args.Length == 4 && args[0] == "run" && long.TryParse(args[2], out batch) && batch >= 0)
            {
                using (var p = Program.LoadFile(args[1]))
                    File.WriteAllBytes(args[3], MlpContract.ToLittleEndianBytes(MlpContract.Run(p, batch)));
                return 0;
            }
            if (args.Length == 4 && args[0] == "grad-run" && long.TryParse(args[2], out batch) && batch >= 1)
            {
                using (var p = Program.LoadFile(args[1]))
                {
                    Console.Out.Write(MlpContract.Signature(p));
                    File.WriteAllBytes(args[3], MlpContract.ToLittleEndianBytes(MlpContract.RunGrad(p, batch)));
                }
                return 0;
            }
            Console.Error.WriteLine("usage: mono MlpTool.exe export OUT.shpoly\n       mono MlpTool.exe run FILE.shpoly BATCH OUT.bin\n" +
                                    "       mono MlpTool.exe grad-run FILE.shpoly BATCH OUT.bin");
            return 2;
        }
        catch (ShapePolyException e)
        {
            Console.Error.WriteLine("mlp_tool: " + e.Code + ": " + e.Message);
            return 1;
        }
        catch (IOException e)
        {
            Console.Error.WriteLine("mlp_tool: " + e.Message);
            return 1;
        }
    }
}

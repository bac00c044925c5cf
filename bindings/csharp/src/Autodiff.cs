// Parameters, automatic differentiation and batching: Jvp, Vjp, Grad and Vmap are program
// transformations (shp_program_jvp/_vjp/_grad/_vmap) that work on traced and loaded programs
// alike and compose to any order; the results run, serialize and load like any program.
using System;
using System.Collections.Generic;

namespace ShapePoly
{
    public sealed partial class Scope
    {
        /// <summary>A named parameter (shp_tensor_parameter): an input of concrete shape whose
        /// default value is <paramref name="value"/> (its dtype, shape and elements; copied and
        /// stored in the program). A run may leave it out (the default is used) or give it by
        /// name (checked for dtype and shape): new weights without re-exporting. Names with '.'
        /// are reserved for derived names (x.tangent, y.cotangent, x.grad).</summary>
        public Tensor Parameter(string name, NdArray value)
        {
            if (value == null) throw new ArgumentNullException("value");
            var h = Handle;
            var shape = value.Shape;
            IntPtr t;
            using (var pins = new Pins())
            {
                var p = pins.Add(value.Data);
                ShapePolyException.Check(NativeMethods.shp_tensor_parameter(h, Utf8.Encode(name), (int)value.DType, shape,
                    Sizes.U(shape.Length), p, Sizes.U(value.Length * NdArray.ElementSize(value.DType)), out t));
            }
            return new Tensor(t, this);
        }

        /// <summary>A named parameter of <paramref name="shape"/> (empty for a scalar) whose
        /// default is <paramref name="data"/> (row-major; copied).</summary>
        public Tensor Parameter(string name, float[] data, params long[] shape) { return Parameter(name, new NdArray(data, shape)); }
        public Tensor Parameter(string name, double[] data, params long[] shape) { return Parameter(name, new NdArray(data, shape)); }
        public Tensor Parameter(string name, int[] data, params long[] shape) { return Parameter(name, new NdArray(data, shape)); }
        public Tensor Parameter(string name, long[] data, params long[] shape) { return Parameter(name, new NdArray(data, shape)); }
        public Tensor Parameter(string name, bool[] data, params long[] shape) { return Parameter(name, new NdArray(data, shape)); }
        public Tensor Parameter(string name, sbyte[] data, params long[] shape) { return Parameter(name, new NdArray(data, shape)); }
        public Tensor Parameter(string name, byte[] data, params long[] shape) { return Parameter(name, new NdArray(data, shape)); }
        public Tensor Parameter(string name, short[] data, params long[] shape) { return Parameter(name, new NdArray(data, shape)); }
        public Tensor Parameter(string name, ushort[] data, params long[] shape) { return Parameter(name, new NdArray(data, shape)); }
        public Tensor Parameter(string name, uint[] data, params long[] shape) { return Parameter(name, new NdArray(data, shape)); }
        public Tensor Parameter(string name, ulong[] data, params long[] shape) { return Parameter(name, new NdArray(data, shape)); }
    }

    public sealed partial class Program
    {
        /// <summary>Whether input <paramref name="i"/> has a default value (a parameter, or
        /// Grad's cotangent), so a run may leave it out; false if out of range.</summary>
        public bool InputHasDefault(int i)
        {
            return i >= 0 && NativeMethods.shp_program_input_has_default(Handle, Sizes.U(i));
        }

        /// <summary>A copy of the default value of input <paramref name="i"/>. An input without
        /// a default (or out of range) is an InvalidArgument error naming it.</summary>
        public NdArray InputDefault(int i)
        {
            if (i < 0) throw new ShapePolyException(ShapePolyCode.InvalidArgument, "input index " + i + " is negative");
            IntPtr a;
            ShapePolyException.Check(NativeMethods.shp_program_input_default(Handle, Sizes.U(i), out a));
            try { return NdArray.CopyFrom(a); }
            finally { NativeMethods.shp_array_destroy(a); }
        }

        /// <summary>A copy of the default value of the input named <paramref name="name"/>.</summary>
        public NdArray InputDefault(string name)
        {
            var ins = Inputs;
            for (int i = 0; i < ins.Count; i++)
                if (ins[i].Name == name) return InputDefault(i);
            var all = new List<string>();
            foreach (var inp in ins) all.Add(inp.Name);
            throw new ShapePolyException(ShapePolyCode.NotFound, "the program has no input named '" + name + "' (its inputs: " +
                (all.Count == 0 ? "none" : string.Join(", ", all)) + ")");
        }

        /// <summary>Forward mode (shp_program_jvp): the original inputs, then <c>x.tangent</c>
        /// (role Tangent) for each input x in <paramref name="wrt"/>; the original outputs, then
        /// <c>y.tangent</c> for every floating-point output y. A name that is no input is a
        /// NotFound error listing the inputs.</summary>
        public Program Jvp(params string[] wrt)
        {
            if (wrt == null) throw new ArgumentNullException("wrt");
            IntPtr p;
            using (var w = new NativeStrings(wrt))
                ShapePolyException.Check(NativeMethods.shp_program_jvp(Handle, w.Ptrs, Sizes.U(wrt.Length), out p));
            return new Program(new ProgramHandle(p));
        }

        /// <summary>Jvp whose tangents have defaults (shp_program_jvp_with_default_tangents):
        /// <c>x.tangent</c> of <c>wrt[k]</c> defaults to <c>defaultFill[k]</c> in every element of
        /// x's shape at each run, so a run may leave it out (by name). One value per name of
        /// <paramref name="wrt"/> (else InvalidArgument), each finite in its input's dtype.</summary>
        public Program JvpWithDefaultTangents(IList<string> wrt, IList<double> defaultFill)
        {
            if (wrt == null) throw new ArgumentNullException("wrt");
            if (defaultFill == null) throw new ArgumentNullException("defaultFill");
            if (defaultFill.Count != wrt.Count)
                throw new ShapePolyException(ShapePolyCode.InvalidArgument, "jvp: " + defaultFill.Count +
                    " default tangent values for " + wrt.Count + " inputs in wrt (give one per input)");
            var fills = new double[defaultFill.Count];
            defaultFill.CopyTo(fills, 0);
            IntPtr p;
            using (var w = new NativeStrings(wrt))
                ShapePolyException.Check(NativeMethods.shp_program_jvp_with_default_tangents(Handle, w.Ptrs, Sizes.U(wrt.Count), fills, out p));
            return new Program(new ProgramHandle(p));
        }

        /// <summary>The value of input <paramref name="i"/>'s fill default
        /// (shp_program_input_default_fill), such as a default tangent of
        /// JvpWithDefaultTangents: a run that leaves the input out uses it in every element. An
        /// input without a fill default (none, or a default array), or out of range, is an
        /// InvalidArgument error.</summary>
        public double InputDefaultFill(int i)
        {
            if (i < 0) throw new ShapePolyException(ShapePolyCode.InvalidArgument, "input index " + i + " is negative");
            double v;
            ShapePolyException.Check(NativeMethods.shp_program_input_default_fill(Handle, Sizes.U(i), out v));
            return v;
        }

        /// <summary>Reverse mode (shp_program_vjp): the original inputs, then
        /// <c>y.cotangent</c> (role Cotangent) for each output y in <paramref name="of"/>; the
        /// original outputs, then <c>x.grad</c> for each input x in <paramref name="wrt"/>.</summary>
        public Program Vjp(IList<string> of, IList<string> wrt)
        {
            if (of == null) throw new ArgumentNullException("of");
            if (wrt == null) throw new ArgumentNullException("wrt");
            IntPtr p;
            using (var o = new NativeStrings(of))
            using (var w = new NativeStrings(wrt))
                ShapePolyException.Check(NativeMethods.shp_program_vjp(Handle, o.Ptrs, Sizes.U(of.Count), w.Ptrs, Sizes.U(wrt.Count), out p));
            return new Program(new ProgramHandle(p));
        }

        /// <summary>The gradient of the scalar floating-point output <paramref name="of"/>
        /// (shp_program_grad): the original inputs, then <c>of.cotangent</c> with the default 1
        /// (a run that names it scales the gradient); outputs <c>of</c>, then <c>x.grad</c> for
        /// each input x in <paramref name="wrt"/>.</summary>
        public Program Grad(string of, params string[] wrt)
        {
            if (of == null) throw new ArgumentNullException("of");
            if (wrt == null) throw new ArgumentNullException("wrt");
            IntPtr p;
            using (var w = new NativeStrings(wrt))
                ShapePolyException.Check(NativeMethods.shp_program_grad(Handle, Utf8.Encode(of), w.Ptrs, Sizes.U(wrt.Length), out p));
            return new Program(new ProgramHandle(p));
        }

        /// <summary>Batches the program (shp_program_vmap): the program for one example becomes
        /// the program for a batch of them, the batch size a new dimension variable ranging over
        /// [0, inf) (a batch of 0 runs). The result keeps the inputs' names, roles and defaults,
        /// the outputs' names and roles, the constraints, assertions, guards and variants; it
        /// runs, serializes, differentiates and batches again like any program (each Vmap adds
        /// one axis). Per-example gradients are the Vmap of a Grad:
        /// <c>grad.Vmap(new long[] { 0, 0, -1, -1 })</c>.
        /// <para>A wrong count, an axis out of range or not allowed (naming the input or
        /// output), no batched input, or a taken or invalid name is an InvalidArgument
        /// <see cref="ShapePolyException"/>; an op that cannot be batched (nonzero,
        /// boolean_mask, size_from_value on a batched operand, conv with batched weights) is
        /// Unsupported, naming it. This program is unchanged either way.</para></summary>
        /// <param name="inAxes">One entry per input, in the program's order: the axis of that
        /// input's batched shape (0 to the input's rank) that is the batch, or -1 for an input
        /// that is not batched (the same value for every element, such as weights). At least
        /// one input must be batched; dimension inputs and parameters (a default of a fixed
        /// shape) cannot be.</param>
        /// <param name="outAxes">null (or empty, as in C): every output's batch axis first;
        /// else one entry per output: where its batch axis goes (0 to its rank), or -1 for an
        /// output that does not depend on a batched input (it keeps its shape).</param>
        /// <param name="batchDimName">The new variable's name, not one the program has; null
        /// gives <c>vmap0</c> (or <c>vmap1</c>, ... when taken, so a Vmap of a Vmap needs no
        /// name).</param>
        public Program Vmap(long[] inAxes, long[] outAxes = null, string batchDimName = null)
        {
            if (inAxes == null) throw new ArgumentNullException("inAxes");
            int numOut = outAxes == null ? 0 : outAxes.Length;
            IntPtr p;
            ShapePolyException.Check(NativeMethods.shp_program_vmap(Handle, inAxes, Sizes.U(inAxes.Length), outAxes,
                Sizes.U(numOut), Utf8.Encode(batchDimName), out p));
            return new Program(new ProgramHandle(p));
        }

        /// <summary>Vmap with the batched inputs given by name: <paramref name="inAxes"/> maps
        /// an input's name to its batch axis; every input not in it is not batched (-1), and
        /// every output's batch axis goes first. A name that is no input is a NotFound
        /// <see cref="ShapePolyException"/> listing the inputs.
        /// <c>grad.VmapByName(new Dictionary&lt;string, long&gt; { { "x", 0 }, { "labels", 0 } })</c>
        /// batches x and labels on their first axis and shares every other input.</summary>
        public Program VmapByName(IDictionary<string, long> inAxes, string batchDimName = null)
        {
            if (inAxes == null) throw new ArgumentNullException("inAxes");
            var ins = Inputs;
            var axes = new long[ins.Count];
            var index = new Dictionary<string, int>();
            for (int i = 0; i < ins.Count; i++)
            {
                axes[i] = -1;
                index[ins[i].Name] = i;
            }
            var names = new List<string>(inAxes.Keys);
            names.Sort(StringComparer.Ordinal); // the same error whatever the dictionary's order
            foreach (var name in names)
            {
                int i;
                if (!index.TryGetValue(name, out i))
                {
                    var all = new List<string>();
                    foreach (var inp in ins) all.Add("'" + inp.Name + "'");
                    throw new ShapePolyException(ShapePolyCode.NotFound, "vmap: the program has no input named '" + name +
                        "' (its inputs: " + (all.Count == 0 ? "none" : string.Join(", ", all)) + ")");
                }
                axes[i] = inAxes[name];
            }
            return Vmap(axes, null, batchDimName);
        }
    }
}

using System;
using System.Collections.Generic;
using System.Linq;

namespace ShapePoly
{
    /// <summary>A declared inclusive range of a dimension variable (long.MinValue /
    /// long.MaxValue for unbounded).</summary>
    public struct VariableRange
    {
        public string Name;
        public long Min;
        public long Max;
        public VariableRange(string name, long min, long max) { Name = name; Min = min; Max = max; }
        public override string ToString() { return Name + " in [" + Min + ", " + Max + "]"; }
    }

    /// <summary>A scope (shp_scope_t): dimension variables, constraints, and every dim and
    /// traced tensor built in it. Dims and tensors hold their scope, so it stays alive while
    /// they are reachable; after <see cref="Dispose"/> every use of them throws
    /// ObjectDisposedException. Use from one thread at a time.</summary>
    public sealed partial class Scope : IDisposable
    {
        private readonly ScopeHandle handle;

        /// <summary>Creates a scope with constraints such as "batch >= 128", "mod(seq, 8) == 0".</summary>
        public Scope(params string[] constraints) : this(constraints, null) { }

        /// <summary>Creates a scope whose variables <paramref name="ranges"/> are declared
        /// first, so the constraints are checked under those ranges.</summary>
        public Scope(IList<string> constraints, IList<VariableRange> ranges)
        {
            Loader.Ensure();
            IntPtr raw;
            using (var cs = new NativeStrings(constraints))
            {
                if (ranges == null || ranges.Count == 0)
                {
                    ShapePolyException.Check(NativeMethods.shp_scope_create(cs.Ptrs, Sizes.U(cs.Ptrs.Length), out raw));
                }
                else
                {
                    var names = new string[ranges.Count];
                    var mins = new long[ranges.Count];
                    var maxs = new long[ranges.Count];
                    for (int i = 0; i < ranges.Count; i++) { names[i] = ranges[i].Name; mins[i] = ranges[i].Min; maxs[i] = ranges[i].Max; }
                    using (var ns = new NativeStrings(names))
                        ShapePolyException.Check(NativeMethods.shp_scope_create_with_ranges(
                            cs.Ptrs, Sizes.U(cs.Ptrs.Length), ns.Ptrs, mins, maxs, Sizes.U(names.Length), out raw));
                }
            }
            handle = new ScopeHandle(raw);
        }

        internal ScopeHandle Handle
        {
            get
            {
                if (handle.IsClosed) throw new ObjectDisposedException("Scope");
                return handle;
            }
        }

        internal void ThrowIfDisposed() { if (handle.IsClosed) throw new ObjectDisposedException("Scope"); }

        /// <summary>Destroys the scope with every dim and traced tensor built in it.</summary>
        public void Dispose() { handle.Dispose(); }

        /// <summary>True after Dispose.</summary>
        public bool IsDisposed { get { return handle.IsClosed; } }

        // ---- Variables and facts

        /// <summary>Declares variable <paramref name="name"/> with the range [min, max], before it is used.</summary>
        public void Declare(string name, long min, long max)
        {
            ShapePolyException.Check(NativeMethods.shp_scope_declare(Handle, Utf8.Encode(name), min, max));
        }

        /// <summary>Asserts <c>a op b</c> (like torch._check): used by the decision procedure
        /// from now on, and checked at run time by programs built afterwards.</summary>
        public void Check(Dim a, CmpOp op, Dim b, string message = null)
        {
            var h = Handle;
            ShapePolyException.Check(NativeMethods.shp_scope_check(h, a.Ptr, (int)op, b.Ptr, Utf8.Encode(message)));
            GC.KeepAlive(a.Owner);
            GC.KeepAlive(b.Owner);
        }

        /// <summary>The variables in order of first mention.</summary>
        public IReadOnlyList<string> Variables
        {
            get
            {
                var h = Handle;
                int n = Sizes.I(NativeMethods.shp_scope_variable_count(h));
                var r = new string[n];
                for (int i = 0; i < n; i++) r[i] = Utf8.Decode(NativeMethods.shp_scope_variable_name(h, Sizes.U(i)));
                return r;
            }
        }

        /// <summary>The declared ranges of the variables ([1, long.MaxValue] unless declared).</summary>
        public IReadOnlyList<VariableRange> VariableRanges
        {
            get
            {
                var h = Handle;
                int n = Sizes.I(NativeMethods.shp_scope_variable_count(h));
                var r = new VariableRange[n];
                for (int i = 0; i < n; i++)
                {
                    long lo, hi;
                    ShapePolyException.Check(NativeMethods.shp_scope_variable_range(h, Sizes.U(i), out lo, out hi));
                    r[i] = new VariableRange(Utf8.Decode(NativeMethods.shp_scope_variable_name(h, Sizes.U(i))), lo, hi);
                }
                return r;
            }
        }

        /// <summary>Whether variable <paramref name="i"/> (as listed by <see cref="Variables"/>)
        /// is unbacked: a data-dependent size made by <see cref="Tensor.Nonzero"/>,
        /// <see cref="Tensor.BooleanMask"/> or <see cref="Tensor.SizeFromValue"/>, never
        /// solved from input shapes (shp_scope_variable_is_unbacked). False out of range.</summary>
        public bool IsUnbacked(int i)
        {
            return i >= 0 && NativeMethods.shp_scope_variable_is_unbacked(Handle, Sizes.U(i));
        }

        /// <summary>IsUnbacked of the variable named <paramref name="name"/>; an unknown name
        /// is a NotFound error.</summary>
        public bool IsUnbacked(string name) { return IsUnbacked(VariableIndex(name)); }

        /// <summary>The op that produces unbacked variable <paramref name="i"/>, e.g. "nonzero
        /// of a (n, 4) tensor" (shp_scope_variable_origin); null for other variables and out of
        /// range.</summary>
        public string VariableOrigin(int i)
        {
            return i < 0 ? null : Utf8.Decode(NativeMethods.shp_scope_variable_origin(Handle, Sizes.U(i)));
        }

        /// <summary>VariableOrigin of the variable named <paramref name="name"/>; an unknown
        /// name is a NotFound error.</summary>
        public string VariableOrigin(string name) { return VariableOrigin(VariableIndex(name)); }

        private int VariableIndex(string name)
        {
            if (name == null) throw new ArgumentNullException(nameof(name));
            var vars = Variables;
            for (int i = 0; i < vars.Count; i++)
                if (vars[i] == name) return i;
            throw new ShapePolyException(ShapePolyCode.NotFound, "the scope has no variable '" + name + "' (its variables: " +
                string.Join(", ", vars) + ")");
        }

        /// <summary>The facts: the constraints given at creation, then the assertions added by Check.</summary>
        public IReadOnlyList<string> Constraints
        {
            get
            {
                var h = Handle;
                int n = Sizes.I(NativeMethods.shp_scope_constraint_count(h));
                var r = new string[n];
                for (int i = 0; i < n; i++) r[i] = Utf8.Decode(NativeMethods.shp_scope_constraint_text(h, Sizes.U(i)));
                return r;
            }
        }

        // ---- Dims

        /// <summary>Parses a dimension expression such as "2*batch + 1".</summary>
        public Dim Parse(string text)
        {
            IntPtr d;
            ShapePolyException.Check(NativeMethods.shp_dim_parse(Handle, Utf8.Encode(text), out d));
            return new Dim(d, this);
        }

        /// <summary>The constant <paramref name="value"/> as a dim.</summary>
        public Dim Constant(long value)
        {
            IntPtr d;
            ShapePolyException.Check(NativeMethods.shp_dim_constant(Handle, value, out d));
            return new Dim(d, this);
        }

        /// <summary>The variable <paramref name="name"/> (created on first mention).</summary>
        public Dim Variable(string name)
        {
            IntPtr d;
            ShapePolyException.Check(NativeMethods.shp_dim_variable(Handle, Utf8.Encode(name), out d));
            return new Dim(d, this);
        }

        /// <summary>Parses a shape spec such as "batch, 2*seq + 1"; <c>_</c> and <c>...</c>
        /// take dims from <paramref name="like"/>.</summary>
        public Dim[] ParseShape(string spec, long[] like = null)
        {
            var h = Handle;
            var bytes = Utf8.Encode(spec);
            UIntPtr rank;
            var likeRank = Sizes.U(like == null ? 0 : like.Length);
            ShapePolyException.Check(NativeMethods.shp_shape_parse(h, bytes, like, likeRank, null, UIntPtr.Zero, out rank));
            var raw = new IntPtr[Sizes.I(rank)];
            ShapePolyException.Check(NativeMethods.shp_shape_parse(h, bytes, like, likeRank, raw, Sizes.U(raw.Length), out rank));
            return Dim.Wrap(raw, this);
        }

        /// <summary>Solves every variable of the specs from concrete shapes: argument i has
        /// spec specs[i] and shape shapes[i]. Returns the values in order of first mention.</summary>
        public IReadOnlyDictionary<string, long> Solve(IList<string> specs, IList<long[]> shapes)
        {
            if (specs == null) throw new ArgumentNullException("specs");
            if (shapes == null) throw new ArgumentNullException("shapes");
            if (specs.Count != shapes.Count) throw new ArgumentException("specs and shapes differ in length");
            var h = Handle;
            IntPtr b;
            using (var ss = new NativeStrings(specs))
            using (var pins = new Pins())
            {
                var ptrs = new IntPtr[shapes.Count];
                var ranks = new UIntPtr[shapes.Count];
                for (int i = 0; i < shapes.Count; i++)
                {
                    ptrs[i] = pins.Add(shapes[i]);
                    ranks[i] = Sizes.U(shapes[i] == null ? 0 : shapes[i].Length);
                }
                ShapePolyException.Check(NativeMethods.shp_scope_solve(h, Sizes.U(specs.Count), ss.Ptrs, ptrs, ranks, out b));
            }
            return BindingsToDictionary(b);
        }

        /// <summary>Solve with (spec, shape) pairs.</summary>
        public IReadOnlyDictionary<string, long> Solve(params (string Spec, long[] Shape)[] args)
        {
            var specs = new string[args.Length];
            var shapes = new long[args.Length][];
            for (int i = 0; i < args.Length; i++) { specs[i] = args[i].Spec; shapes[i] = args[i].Shape; }
            return Solve(specs, shapes);
        }

        /// <summary>Copies and destroys an owned shp_bindings_t*.</summary>
        internal static Dictionary<string, long> BindingsToDictionary(IntPtr b)
        {
            try
            {
                int n = Sizes.I(NativeMethods.shp_bindings_count(b));
                var r = new Dictionary<string, long>(n);
                for (int i = 0; i < n; i++)
                    r.Add(Utf8.Decode(NativeMethods.shp_bindings_name(b, Sizes.U(i))), NativeMethods.shp_bindings_value(b, Sizes.U(i)));
                return r;
            }
            finally
            {
                NativeMethods.shp_bindings_destroy(b);
            }
        }

        // ---- Tracing: inputs and constants

        /// <summary>A named data input with a shape spec, e.g. <c>Input("x", DType.F32, "batch, 784")</c>.</summary>
        public Tensor Input(string name, DType dtype, string shapeSpec)
        {
            IntPtr t;
            ShapePolyException.Check(NativeMethods.shp_tensor_input(Handle, Utf8.Encode(name), (int)dtype, Utf8.Encode(shapeSpec), out t));
            return new Tensor(t, this);
        }

        /// <summary>A named data input with dims of this scope.</summary>
        public Tensor Input(string name, DType dtype, params Dim[] dims)
        {
            var h = Handle;
            IntPtr t;
            var raw = Dim.Unwrap(dims);
            ShapePolyException.Check(NativeMethods.shp_tensor_input_dims(h, Utf8.Encode(name), (int)dtype, raw, Sizes.U(raw.Length), out t));
            Dim.KeepAlive(dims);
            return new Tensor(t, this);
        }

        /// <summary>A scalar i64 input named <paramref name="variable"/> giving that dimension
        /// variable's value at run time.</summary>
        public Tensor DimInput(string variable)
        {
            IntPtr t;
            ShapePolyException.Check(NativeMethods.shp_tensor_dim_input(Handle, Utf8.Encode(variable), out t));
            return new Tensor(t, this);
        }

        /// <summary>A constant (copied) of a concrete shape; shape may be empty for a scalar.</summary>
        public Tensor Constant(float[] data, params long[] shape) { return ConstantOf(DType.F32, data, 4, shape); }
        public Tensor Constant(double[] data, params long[] shape) { return ConstantOf(DType.F64, data, 8, shape); }
        public Tensor Constant(int[] data, params long[] shape) { return ConstantOf(DType.I32, data, 4, shape); }
        public Tensor Constant(long[] data, params long[] shape) { return ConstantOf(DType.I64, data, 8, shape); }
        public Tensor Constant(bool[] data, params long[] shape)
        {
            if (data == null) throw new ArgumentNullException("data");
            var bytes = new byte[data.Length];
            for (int i = 0; i < data.Length; i++) bytes[i] = data[i] ? (byte)1 : (byte)0;
            return ConstantOf(DType.Bool, bytes, 1, shape);
        }

        public Tensor Constant(sbyte[] data, params long[] shape) { return ConstantOf(DType.I8, data, 1, shape); }
        public Tensor Constant(byte[] data, params long[] shape) { return ConstantOf(DType.U8, data, 1, shape); }
        public Tensor Constant(short[] data, params long[] shape) { return ConstantOf(DType.I16, data, 2, shape); }
        /// <summary>A U16 constant; for the bits of 16-bit floats pass an NdArray made by
        /// <see cref="NdArray.FromF16Bits"/> or <see cref="NdArray.FromBF16Bits"/>.</summary>
        public Tensor Constant(ushort[] data, params long[] shape) { return ConstantOf(DType.U16, data, 2, shape); }
        public Tensor Constant(uint[] data, params long[] shape) { return ConstantOf(DType.U32, data, 4, shape); }
        public Tensor Constant(ulong[] data, params long[] shape) { return ConstantOf(DType.U64, data, 8, shape); }

        /// <summary>A constant (copied) with the dtype, shape and elements of <paramref name="value"/>
        /// (any element type, e.g. an F16 array from <see cref="NdArray.FromF16Bits"/>).</summary>
        public Tensor Constant(NdArray value)
        {
            if (value == null) throw new ArgumentNullException("value");
            if (value.DType == DType.Bool) return Constant((bool[])value.Data, value.Shape);
            return ConstantOf(value.DType, value.Data, NdArray.ElementSize(value.DType), value.Shape);
        }

        /// <summary>A constant from raw little-endian element bytes.</summary>
        public Tensor ConstantBytes(DType dtype, byte[] data, params long[] shape) { return ConstantOf(dtype, data, 1, shape); }

        /// <summary>Rank-0 constants.</summary>
        public Tensor Scalar(float value) { return Constant(new[] { value }); }
        public Tensor Scalar(double value) { return Constant(new[] { value }); }
        public Tensor Scalar(int value) { return Constant(new[] { value }); }
        public Tensor Scalar(long value) { return Constant(new[] { value }); }
        public Tensor Scalar(bool value) { return Constant(new[] { value }); }

        private Tensor ConstantOf(DType dtype, Array data, int elementSize, long[] shape)
        {
            if (data == null) throw new ArgumentNullException("data");
            shape = shape ?? new long[0];
            var h = Handle;
            // Typed data is counted in elements (the library counts bytes); a negative
            // dimension is left to the library's message.
            if (elementSize == NdArray.ElementSize(dtype) && shape.All(d => d >= 0))
            {
                long need = NdArray.ElementCount(shape, "Constant");
                if (data.LongLength != need)
                    throw new ShapePolyException(ShapePolyCode.InvalidArgument, "Constant: " +
                        data.LongLength + " elements given, shape " + NdArray.FormatShape(shape) +
                        " needs " + need);
            }
            IntPtr t;
            using (var pins = new Pins())
            {
                var p = pins.Add(data);
                ShapePolyException.Check(NativeMethods.shp_tensor_constant(h, (int)dtype, shape, Sizes.U(shape.Length), p,
                    Sizes.U((long)data.Length * elementSize), out t));
            }
            return new Tensor(t, this);
        }

        /// <summary>A tensor of shape <paramref name="dims"/> counting 0, 1, ... along <paramref name="axis"/>.</summary>
        public Tensor Iota(DType dtype, long axis, params Dim[] dims)
        {
            var h = Handle;
            IntPtr t;
            var raw = Dim.Unwrap(dims);
            ShapePolyException.Check(NativeMethods.shp_tensor_iota(h, (int)dtype, raw, Sizes.U(raw.Length), axis, out t));
            Dim.KeepAlive(dims);
            return new Tensor(t, this);
        }

        /// <summary>The value of <paramref name="dim"/> as a scalar i64 tensor.</summary>
        public Tensor DimValue(Dim dim)
        {
            var h = Handle;
            IntPtr t;
            ShapePolyException.Check(NativeMethods.shp_tensor_dim_value(h, dim.Ptr, out t));
            GC.KeepAlive(dim.Owner);
            return new Tensor(t, this);
        }

        // ---- Programs

        /// <summary>Creates a program computing the named outputs from the inputs (in this order).</summary>
        public Program CreateProgram(IList<Tensor> inputs, params (string Name, Tensor Tensor)[] outputs)
        {
            var names = new string[outputs.Length];
            var tensors = new Tensor[outputs.Length];
            for (int i = 0; i < outputs.Length; i++) { names[i] = outputs[i].Name; tensors[i] = outputs[i].Tensor; }
            return CreateProgram(inputs, names, tensors);
        }

        /// <summary>Creates a program; output i is outputs[i] named outputNames[i].</summary>
        public Program CreateProgram(IList<Tensor> inputs, IList<string> outputNames, IList<Tensor> outputs)
        {
            if (inputs == null) throw new ArgumentNullException("inputs");
            if (outputNames == null) throw new ArgumentNullException("outputNames");
            if (outputs == null) throw new ArgumentNullException("outputs");
            if (outputNames.Count != outputs.Count) throw new ArgumentException("outputNames and outputs differ in length");
            var h = Handle;
            var ins = Tensor.Unwrap(inputs);
            var outs = Tensor.Unwrap(outputs);
            IntPtr p;
            using (var ns = new NativeStrings(outputNames))
                ShapePolyException.Check(NativeMethods.shp_program_create(h, ins, Sizes.U(ins.Length), outs, ns.Ptrs, Sizes.U(outs.Length), out p));
            Tensor.KeepAlive(inputs);
            Tensor.KeepAlive(outputs);
            return new Program(new ProgramHandle(p));
        }
    }
}

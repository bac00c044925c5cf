using System;
using System.Collections.Generic;
using System.IO;
using System.Runtime.InteropServices;

namespace ShapePoly
{
    /// <summary>A program input: name, dtype, role and symbolic shape, e.g. "(batch, 784)".</summary>
    public sealed class ProgramInput
    {
        public string Name { get; internal set; }
        public DType DType { get; internal set; }
        public InputRole Role { get; internal set; }
        public string Shape { get; internal set; }
        /// <summary>Whether a run may leave it out (a parameter, or Grad's cotangent); see
        /// <see cref="Program.InputDefault(int)"/>.</summary>
        public bool HasDefault { get; internal set; }
        public override string ToString() { return Name + ": " + DType.ToString().ToLowerInvariant() + Shape + (Role == InputRole.Dim ? " (dim)" : ""); }
    }

    /// <summary>A program output: name, dtype and symbolic shape.</summary>
    public sealed class ProgramOutput
    {
        public string Name { get; internal set; }
        public DType DType { get; internal set; }
        public OutputRole Role { get; internal set; }
        public string Shape { get; internal set; }
        public override string ToString() { return Name + ": " + DType.ToString().ToLowerInvariant() + Shape; }
    }

    /// <summary>A shape assertion a program checks before running, and its failure message.</summary>
    public sealed class ProgramAssertion
    {
        public string Text { get; internal set; }
        public string Message { get; internal set; }
        public override string ToString() { return Text + " (" + Message + ")"; }
    }

    /// <summary>The result of <see cref="Program.CheckShapes"/>: the variables' values and the
    /// concrete output shapes.</summary>
    public sealed class ShapeCheck
    {
        public IReadOnlyDictionary<string, long> Variables { get; internal set; }
        public IReadOnlyDictionary<string, long[]> OutputShapes { get; internal set; }
        /// <summary>The variant that would run (0 for a single-variant program).</summary>
        public int Variant { get; internal set; }
    }

    /// <summary>An immutable program (shp_program_t): named inputs and outputs with symbolic
    /// shapes. Independent of the scope it was traced in; safe to use from several threads.</summary>
    public sealed partial class Program : IDisposable
    {
        private readonly ProgramHandle handle;

        internal Program(ProgramHandle handle) { this.handle = handle; }

        internal ProgramHandle Handle
        {
            get
            {
                if (handle.IsClosed) throw new ObjectDisposedException("Program");
                return handle;
            }
        }

        public void Dispose() { handle.Dispose(); }
        public bool IsDisposed { get { return handle.IsClosed; } }

        // ---- Serialization

        /// <summary>Loads a serialized program (the bytes are copied and verified).</summary>
        public static Program Load(byte[] data)
        {
            if (data == null) throw new ArgumentNullException("data");
            Loader.Ensure();
            IntPtr p;
            ShapePolyException.Check(NativeMethods.shp_program_load(data, Sizes.U(data.Length), out p));
            return new Program(new ProgramHandle(p));
        }

        /// <summary>Loads a serialized program with <paramref name="options"/> (null: the
        /// defaults). Constants above <see cref="LoadOptions.MaxBytes"/> are an InvalidProgram
        /// error whose message names the cap.</summary>
        public static Program Load(byte[] data, LoadOptions options)
        {
            if (data == null) throw new ArgumentNullException("data");
            if (options == null) return Load(data);
            IntPtr p;
            ShapePolyException.Check(NativeMethods.shp_program_load_with_options(data, Sizes.U(data.Length), options.Handle, out p));
            return new Program(new ProgramHandle(p));
        }

        /// <summary>Loads a program from a .shpoly file (shp_program_load_file: a missing file is
        /// NotFound, errors name the path and the OS reason).</summary>
        public static Program LoadFile(string path)
        {
            if (path == null) throw new ArgumentNullException(nameof(path));
            Loader.Ensure();
            IntPtr p;
            ShapePolyException.Check(NativeMethods.shp_program_load_file(Utf8.Encode(path), out p));
            return new Program(new ProgramHandle(p));
        }

        /// <summary>The portable serialized form (deterministic).</summary>
        public byte[] Serialize()
        {
            IntPtr buf;
            ShapePolyException.Check(NativeMethods.shp_program_serialize(Handle, out buf));
            try
            {
                var n = Sizes.I(NativeMethods.shp_buffer_size(buf));
                var bytes = new byte[n];
                if (n > 0) Marshal.Copy(NativeMethods.shp_buffer_data(buf), bytes, 0, n);
                return bytes;
            }
            finally
            {
                NativeMethods.shp_buffer_destroy(buf);
            }
        }

        /// <summary>Serializes to a file (conventionally *.shpoly; shp_program_save_file: written next
        /// to it and renamed, so a failed save leaves an existing file intact).</summary>
        public void SaveFile(string path)
        {
            if (path == null) throw new ArgumentNullException(nameof(path));
            ShapePolyException.Check(NativeMethods.shp_program_save_file(Handle, Utf8.Encode(path)));
        }

        // ---- Introspection

        public IReadOnlyList<ProgramInput> Inputs
        {
            get
            {
                var h = Handle;
                int n = Sizes.I(NativeMethods.shp_program_input_count(h));
                var r = new ProgramInput[n];
                for (int i = 0; i < n; i++)
                {
                    var idx = Sizes.U(i);
                    r[i] = new ProgramInput
                    {
                        Name = Utf8.Decode(NativeMethods.shp_program_input_name(h, idx)),
                        DType = (DType)NativeMethods.shp_program_input_dtype(h, idx),
                        Role = (InputRole)NativeMethods.shp_program_input_role(h, idx),
                        Shape = Utf8.Snprintf((byte[] buf, UIntPtr cap, out UIntPtr len) =>
                            NativeMethods.shp_program_input_shape_string(h, idx, buf, cap, out len)),
                        HasDefault = NativeMethods.shp_program_input_has_default(h, idx),
                    };
                }
                return r;
            }
        }

        public IReadOnlyList<ProgramOutput> Outputs
        {
            get
            {
                var h = Handle;
                int n = Sizes.I(NativeMethods.shp_program_output_count(h));
                var r = new ProgramOutput[n];
                for (int i = 0; i < n; i++)
                {
                    var idx = Sizes.U(i);
                    r[i] = new ProgramOutput
                    {
                        Name = Utf8.Decode(NativeMethods.shp_program_output_name(h, idx)),
                        DType = (DType)NativeMethods.shp_program_output_dtype(h, idx),
                        Role = (OutputRole)NativeMethods.shp_program_output_role(h, idx),
                        Shape = Utf8.Snprintf((byte[] buf, UIntPtr cap, out UIntPtr len) =>
                            NativeMethods.shp_program_output_shape_string(h, idx, buf, cap, out len)),
                    };
                }
                return r;
            }
        }

        /// <summary>The dimension variables the program's shapes use.</summary>
        public IReadOnlyList<string> Variables
        {
            get
            {
                var h = Handle;
                int n = Sizes.I(NativeMethods.shp_program_variable_count(h));
                var r = new string[n];
                for (int i = 0; i < n; i++) r[i] = Utf8.Decode(NativeMethods.shp_program_variable_name(h, Sizes.U(i)));
                return r;
            }
        }

        /// <summary>Whether program variable <paramref name="i"/> (as listed by
        /// <see cref="Variables"/>) is unbacked: its value comes from the op that produces it at
        /// run time, never from input shapes (shp_program_variable_is_unbacked). False out of
        /// range.</summary>
        public bool IsUnbacked(int i)
        {
            return i >= 0 && NativeMethods.shp_program_variable_is_unbacked(Handle, Sizes.U(i));
        }

        /// <summary>The op that produces unbacked variable <paramref name="i"/>, e.g.
        /// "boolean_mask of a (n, 3) tensor" (shp_program_variable_origin); null for other
        /// variables and out of range.</summary>
        public string VariableOrigin(int i)
        {
            return i < 0 ? null : Utf8.Decode(NativeMethods.shp_program_variable_origin(Handle, Sizes.U(i)));
        }

        public IReadOnlyList<string> Constraints
        {
            get
            {
                var h = Handle;
                int n = Sizes.I(NativeMethods.shp_program_constraint_count(h));
                var r = new string[n];
                for (int i = 0; i < n; i++) r[i] = Utf8.Decode(NativeMethods.shp_program_constraint_text(h, Sizes.U(i)));
                return r;
            }
        }

        public IReadOnlyList<ProgramAssertion> Assertions
        {
            get
            {
                var h = Handle;
                int n = Sizes.I(NativeMethods.shp_program_assertion_count(h));
                var r = new ProgramAssertion[n];
                for (int i = 0; i < n; i++)
                    r[i] = new ProgramAssertion
                    {
                        Text = Utf8.Decode(NativeMethods.shp_program_assertion_text(h, Sizes.U(i))),
                        Message = Utf8.Decode(NativeMethods.shp_program_assertion_message(h, Sizes.U(i))),
                    };
                return r;
            }
        }

        /// <summary>The readable listing: signature, variables, constraints, assertions, operations.</summary>
        public string ToText()
        {
            var h = Handle;
            return Utf8.Snprintf((byte[] buf, UIntPtr cap, out UIntPtr len) => NativeMethods.shp_program_to_text(h, buf, cap, out len));
        }

        public override string ToString() { return IsDisposed ? "<disposed Program>" : ToText(); }

        // ---- Shape checks

        /// <summary>Checks concrete input shapes by name without running (a dimension input
        /// is given as a one-element array holding its value). Throws ShapePolyException with
        /// the solver's message (e.g. "input 'x': axis 1 is 785 but the program requires 784").</summary>
        public ShapeCheck CheckShapes(IDictionary<string, long[]> shapes)
        {
            if (shapes == null) throw new ArgumentNullException("shapes");
            var h = Handle;
            var roles = new Dictionary<string, InputRole>();
            foreach (var inp in Inputs) roles[inp.Name] = inp.Role;
            var names = new List<string>();
            var ptrs = new IntPtr[shapes.Count];
            var ranks = new UIntPtr[shapes.Count];
            IntPtr b;
            using (var pins = new Pins())
            {
                foreach (var kv in shapes)
                {
                    int k = names.Count;
                    names.Add(kv.Key);
                    ptrs[k] = pins.Add(kv.Value);
                    InputRole role;
                    bool isDim = kv.Key != null && roles.TryGetValue(kv.Key, out role) && role == InputRole.Dim;
                    ranks[k] = Sizes.U(isDim || kv.Value == null ? 0 : kv.Value.Length);
                }
                using (var ns = new NativeStrings(names))
                    ShapePolyException.Check(NativeMethods.shp_program_check_shapes(h, ns.Ptrs, ptrs, ranks, Sizes.U(names.Count), out b));
            }
            try
            {
                var outs = new Dictionary<string, long[]>();
                var outputs = Outputs;
                for (int i = 0; i < outputs.Count; i++)
                {
                    UIntPtr rank;
                    ShapePolyException.Check(NativeMethods.shp_program_output_shape(h, Sizes.U(i), b, null, UIntPtr.Zero, out rank));
                    var dims = new long[Sizes.I(rank)];
                    ShapePolyException.Check(NativeMethods.shp_program_output_shape(h, Sizes.U(i), b, dims, Sizes.U(dims.Length), out rank));
                    outs[outputs[i].Name] = dims;
                }
                var variant = checked((int)NativeMethods.shp_bindings_variant(b));
                var vars = Scope.BindingsToDictionary(b);
                b = IntPtr.Zero;
                return new ShapeCheck { Variables = vars, OutputShapes = outs, Variant = variant };
            }
            finally
            {
                if (b != IntPtr.Zero) NativeMethods.shp_bindings_destroy(b);
            }
        }
    }
}

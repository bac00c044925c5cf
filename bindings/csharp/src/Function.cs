// Compiled functions (shp_function_t): a C# delegate traced again whenever a call's shapes fit
// no variant traced so far, like torch.compile with automatic dynamic shapes. The delegate is
// reached from C through one static callback and a GCHandle (user_data) that the function's
// handle frees after destroying the C function, so it stays alive exactly as long as needed.
using System;
using System.Collections.Generic;
using System.Runtime.InteropServices;

namespace ShapePoly
{
    /// <summary>Options for <see cref="Function"/> (shp_function_options_t): the dynamic mode
    /// (default Auto), duck sizing (on), the recompile limit (8, in [1, 64]), the initial stance
    /// (Default) and threads per kernel call (0 = every hardware thread).</summary>
    public sealed class FunctionOptions : IDisposable
    {
        private readonly FunctionOptionsHandle handle;
        private DynamicMode dynamic = DynamicMode.Auto;
        private bool duckSizing = true;
        private int recompileLimit = 8;
        private Stance stance = Stance.Default;
        private int numThreads;

        public FunctionOptions()
        {
            Loader.Ensure();
            IntPtr o;
            ShapePolyException.Check(NativeMethods.shp_function_options_create(out o));
            handle = new FunctionOptionsHandle(o);
        }

        internal FunctionOptionsHandle Handle
        {
            get
            {
                if (handle.IsClosed) throw new ObjectDisposedException("FunctionOptions");
                return handle;
            }
        }

        /// <summary>Which axes are symbolic in a new trace.</summary>
        public DynamicMode Dynamic
        {
            get { return dynamic; }
            set { ShapePolyException.Check(NativeMethods.shp_function_options_set_dynamic(Handle, (int)value)); dynamic = value; }
        }

        /// <summary>Duck sizing: dynamic axes of equal sizes share a variable, under a guard.</summary>
        public bool DuckSizing
        {
            get { return duckSizing; }
            set { ShapePolyException.Check(NativeMethods.shp_function_options_set_duck_sizing(Handle, value)); duckSizing = value; }
        }

        /// <summary>The most variants (traces) the function makes.</summary>
        public int RecompileLimit
        {
            get { return recompileLimit; }
            set { ShapePolyException.Check(NativeMethods.shp_function_options_set_recompile_limit(Handle, value)); recompileLimit = value; }
        }

        /// <summary>The initial stance (<see cref="Function.SetStance"/> changes it later).</summary>
        public Stance Stance
        {
            get { return stance; }
            set { ShapePolyException.Check(NativeMethods.shp_function_options_set_stance(Handle, (int)value)); stance = value; }
        }

        /// <summary>Threads per kernel call of the function's runtime.</summary>
        public int NumThreads
        {
            get { return numThreads; }
            set { ShapePolyException.Check(NativeMethods.shp_function_options_set_num_threads(Handle, value)); numThreads = value; }
        }

        public void Dispose() { handle.Dispose(); }
    }

    public sealed partial class Scope
    {
        // A borrowed scope (the library's, during a trace); disposing it only closes this view.
        internal Scope(ScopeHandle borrowed) { handle = borrowed; }
    }

    /// <summary>An input of a <see cref="Function"/>: its name, dtype and rank.</summary>
    public readonly struct FunctionInput
    {
        public string Name { get; }
        public DType DType { get; }
        public int Rank { get; }
        public FunctionInput(string name, DType dtype, int rank) { Name = name; DType = dtype; Rank = rank; }
    }

    /// <summary>A compiled function (shp_function_t): a trace delegate and the variants it
    /// traced. The delegate receives a scope owned by the library (usable only during the
    /// call) and one traced tensor per input, every axis a variable s0, s1, ... with the call's
    /// size as its hint under <see cref="GuardPolicy.FromHints"/>; it returns one tensor per
    /// output. It runs again only when a call's shapes fit no variant. A ShapePolyException it
    /// throws reaches the caller of <see cref="Call(ValueTuple{string, NdArray}[])"/> with its
    /// code; any other exception becomes an Internal error naming its type and message (nothing
    /// unwinds through the C library). Use from one thread at a time.</summary>
    public sealed class Function : IDisposable
    {
        private sealed class TraceState
        {
            internal Func<Scope, Tensor[], Tensor[]> Trace;
        }

        // One delegate for every function, kept alive by this static field.
        private static readonly NativeMethods.TraceFn Callback = TraceCallback;

        private readonly FunctionHandle handle;
        private readonly string[] outputNames;

        /// <summary>Creates a compiled function with inputs (name, dtype, rank) and outputs by
        /// name; <paramref name="options"/> may be null (defaults) and may be disposed right
        /// after. Nothing is traced before the first call.</summary>
        public Function(Func<Scope, Tensor[], Tensor[]> trace, FunctionInput[] inputs, string[] outputs,
            FunctionOptions options = null)
        {
            if (trace == null) throw new ArgumentNullException("trace");
            if (inputs == null) throw new ArgumentNullException("inputs");
            if (outputs == null) throw new ArgumentNullException("outputs");
            Loader.Ensure();
            var names = new string[inputs.Length];
            var dtypes = new int[inputs.Length];
            var ranks = new UIntPtr[inputs.Length];
            for (int i = 0; i < inputs.Length; i++)
            {
                if (inputs[i].Rank < 0) throw new ArgumentException("input '" + inputs[i].Name + "' has a negative rank");
                names[i] = inputs[i].Name;
                dtypes[i] = (int)inputs[i].DType;
                ranks[i] = Sizes.U(inputs[i].Rank);
            }
            var state = GCHandle.Alloc(new TraceState { Trace = trace });
            IntPtr raw = IntPtr.Zero;
            try
            {
                using (var ins = new NativeStrings(names))
                using (var outs = new NativeStrings(outputs))
                {
                    var ud = GCHandle.ToIntPtr(state);
                    var n = Sizes.U(names.Length);
                    var m = Sizes.U(outputs.Length);
                    ShapePolyException.Check(options == null
                        ? NativeMethods.shp_function_create(Callback, ud, ins.Ptrs, dtypes, ranks, n, outs.Ptrs, m, IntPtr.Zero, out raw)
                        : NativeMethods.shp_function_create(Callback, ud, ins.Ptrs, dtypes, ranks, n, outs.Ptrs, m, options.Handle, out raw));
                }
            }
            catch
            {
                state.Free();
                throw;
            }
            handle = new FunctionHandle(raw, state);
            outputNames = (string[])outputs.Clone();
        }

        internal FunctionHandle Handle
        {
            get
            {
                if (handle.IsClosed) throw new ObjectDisposedException("Function");
                return handle;
            }
        }

        /// <summary>Destroys the function (its variants, runtime and log) and releases the delegate.</summary>
        public void Dispose() { handle.Dispose(); }

        /// <summary>The output names in declared order.</summary>
        public IReadOnlyList<string> OutputNames { get { return outputNames; } }

        private static IntPtr ErrorFor(ShapePolyCode code, string message)
        {
            return NativeMethods.shp_error_create((int)code, Utf8.Encode(message));
        }

        // The shp_trace_fn of every C# function: never lets an exception reach C.
        private static IntPtr TraceCallback(IntPtr scope, IntPtr inputs, UIntPtr numInputs, IntPtr outputs, UIntPtr numOutputs,
            IntPtr userData)
        {
            Scope s = null;
            try
            {
                var state = (TraceState)GCHandle.FromIntPtr(userData).Target;
                s = new Scope(new ScopeHandle(scope, false));
                var ins = new Tensor[Sizes.I(numInputs)];
                for (int i = 0; i < ins.Length; i++) ins[i] = new Tensor(Marshal.ReadIntPtr(inputs, i * IntPtr.Size), s);
                var outs = state.Trace(s, ins);
                int want = Sizes.I(numOutputs);
                if (outs == null || outs.Length != want)
                    return ErrorFor(ShapePolyCode.InvalidArgument, "the trace delegate returned " + (outs == null ? "null" :
                        outs.Length + " tensors") + " for " + want + " outputs");
                for (int i = 0; i < want; i++) Marshal.WriteIntPtr(outputs, i * IntPtr.Size, outs[i].Ptr);
                return IntPtr.Zero;
            }
            catch (ShapePolyException e)
            {
                return ErrorFor(e.Code, e.Message);
            }
            catch (Exception e)
            {
                return ErrorFor(ShapePolyCode.Internal, "the trace delegate threw " + e.GetType().FullName + ": " + e.Message);
            }
            finally
            {
                // Tensors kept past the trace now throw ObjectDisposedException.
                if (s != null) s.Dispose();
            }
        }

        /// <summary>Makes axis <paramref name="axis"/> of input <paramref name="input"/>
        /// symbolic in every later trace, with sizes in [min, max] (long.MaxValue: unbounded).</summary>
        public void MarkDynamic(string input, int axis, long min = 0, long max = long.MaxValue)
        {
            ShapePolyException.Check(NativeMethods.shp_function_mark_dynamic(Handle, Utf8.Encode(input), axis, min, max));
        }

        /// <summary>Keeps axis <paramref name="axis"/> of input <paramref name="input"/> static
        /// in every later trace: a new size is a new variant.</summary>
        public void MarkStatic(string input, int axis)
        {
            ShapePolyException.Check(NativeMethods.shp_function_mark_static(Handle, Utf8.Encode(input), axis));
        }

        /// <summary>torch._dynamo.mark_unbacked: axis <paramref name="axis"/> of input
        /// <paramref name="input"/> is symbolic in every later trace, sizes 0 and 1 included,
        /// with no hint: a comparison on it that cannot be decided is Inconclusive instead of a
        /// guard on the call's size, and it is never duck-sized with another axis.</summary>
        public void MarkUnbacked(string input, int axis)
        {
            ShapePolyException.Check(NativeMethods.shp_function_mark_unbacked(Handle, Utf8.Encode(input), axis));
        }

        /// <summary>torch._dynamo.maybe_mark_dynamic: axis <paramref name="axis"/> of input
        /// <paramref name="input"/> is symbolic in every later trace, but a trace delegate that
        /// specializes it (a guard pinning its size) is not an error, unlike
        /// <see cref="MarkDynamic"/>.</summary>
        public void MaybeMarkDynamic(string input, int axis)
        {
            ShapePolyException.Check(NativeMethods.shp_function_maybe_mark_dynamic(Handle, Utf8.Encode(input), axis));
        }

        /// <summary>Sets the stance (any time).</summary>
        public void SetStance(Stance stance)
        {
            ShapePolyException.Check(NativeMethods.shp_function_set_stance(Handle, (int)stance));
        }

        /// <summary>Calls the function with inputs given by name: runs the first variant whose
        /// guards hold, or traces a new one as the policy and the stance allow (a refused trace
        /// is GuardFailed with the reasons). Returns the outputs by name.</summary>
        public Dictionary<string, NdArray> Call(params (string Name, NdArray Array)[] inputs)
        {
            if (inputs == null) throw new ArgumentNullException("inputs");
            var names = new List<string>(inputs.Length);
            var arrays = new List<NdArray>(inputs.Length);
            foreach (var kv in inputs) { names.Add(kv.Name); arrays.Add(kv.Array); }
            return CallCore(names, arrays);
        }

        /// <summary>Call with the inputs in a dictionary.</summary>
        public Dictionary<string, NdArray> Call(IDictionary<string, NdArray> inputs)
        {
            if (inputs == null) throw new ArgumentNullException("inputs");
            var names = new List<string>(inputs.Count);
            var arrays = new List<NdArray>(inputs.Count);
            foreach (var kv in inputs) { names.Add(kv.Key); arrays.Add(kv.Value); }
            return CallCore(names, arrays);
        }

        private Dictionary<string, NdArray> CallCore(IList<string> names, IList<NdArray> arrays)
        {
            var outs = new IntPtr[outputNames.Length];
            try
            {
                Runtime.WithInputs(names, arrays, (ns, ins) =>
                    ShapePolyException.Check(NativeMethods.shp_function_call(Handle, ns, ins, Sizes.U(ins.Length), outs, Sizes.U(outs.Length))));
                var result = new Dictionary<string, NdArray>(outs.Length);
                for (int i = 0; i < outs.Length; i++) result.Add(outputNames[i], NdArray.CopyFrom(outs[i]));
                return result;
            }
            finally
            {
                foreach (var o in outs) NativeMethods.shp_array_destroy(o);
            }
        }

        /// <summary>Number of events logged.</summary>
        public int EventCount { get { return Sizes.I(NativeMethods.shp_function_event_count(Handle)); } }

        /// <summary>Event i (null if out of range), e.g. "trace 2 for call 2 (x: (8, 8)): variant
        /// 1: input 'x' axis 0: size 8 failed guard s0 == 4 (marked dynamic now)".</summary>
        public string EventText(int i)
        {
            if (i < 0) return null;
            return Utf8.Decode(NativeMethods.shp_function_event_text(Handle, Sizes.U(i)));
        }

        /// <summary>Every event so far: why each trace happened, why axes stayed static, each
        /// variant's guards and refused traces.</summary>
        public IReadOnlyList<string> Events
        {
            get
            {
                var r = new List<string>();
                for (int i = 0, n = EventCount; i < n; i++) r.Add(EventText(i));
                return r;
            }
        }

        /// <summary>Number of traces made (one per variant).</summary>
        public ulong TraceCount { get { return NativeMethods.shp_function_trace_count(Handle); } }
        /// <summary>Number of calls served by an existing variant.</summary>
        public ulong CacheHits { get { return NativeMethods.shp_function_cache_hits(Handle); } }
        /// <summary>Number of variants.</summary>
        public int VariantCount { get { return Sizes.I(NativeMethods.shp_function_variant_count(Handle)); } }

        /// <summary>The variants traced so far as one multi-variant program with their guards
        /// and coverage report; it runs without the delegate, in any language. Nothing traced
        /// yet is an InvalidArgument error.</summary>
        public Program Export()
        {
            IntPtr p;
            ShapePolyException.Check(NativeMethods.shp_function_export(Handle, out p));
            return new Program(new ProgramHandle(p));
        }
    }
}
